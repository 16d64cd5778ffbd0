// Buffers in one slot share one attribution, which has one element type.
#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
!lds = memref<16x32xf16, strided<[32, 1]>, #gpu.address_space<workgroup>>
func.func @slot_types(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv) {
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
    %kb = fa.lds_buffer "k" slot("kv") : !lds
    %vb = fa.lds_buffer "v" slot("kv") : memref<16x32xf32, strided<[32, 1]>, #gpu.address_space<workgroup>>
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
  return
}
