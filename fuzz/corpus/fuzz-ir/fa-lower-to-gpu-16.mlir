#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @unsupported_op(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv) {
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
    %e = tensor.empty() : tensor<16x32xf16>
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
  return
}
