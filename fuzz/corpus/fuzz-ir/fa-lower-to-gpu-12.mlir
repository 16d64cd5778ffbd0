#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
!lds = memref<16x32xf16, strided<[32, 1]>, #gpu.address_space<workgroup>>
func.func @row_from_memory(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv, %rows: memref<1xindex>) {
  %c0 = arith.constant 0 : index
  %r = memref.load %rows[%c0] : memref<1xindex>
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
    %qb = fa.lds_buffer "q" : !lds
    fa.copy_tile %q[%b, %h, %r] to %qb : !qkv to !lds
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
  return
}
