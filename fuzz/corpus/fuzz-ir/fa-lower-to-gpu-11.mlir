// A tensor from outside the grid has no per-thread fragment.
#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
!lds = memref<16x32xf16, strided<[32, 1]>, #gpu.address_space<workgroup>>
func.func @tensor_from_outside(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv, %t: tensor<16x32xf16>) {
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
    %c0 = arith.constant 0 : index
    fa.store_tile %t, %o[%b, %h, %c0] : tensor<16x32xf16>, !qkv
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
  return
}
