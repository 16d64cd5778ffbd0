// Tile IR straight from fa-tile: its LDS tiles have no buffers yet.
#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @not_promoted(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv) {
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
    %c0 = arith.constant 0 : index
    %qt = fa.load_tile %q[%b, %h, %c0] : !qkv -> tensor<16x32xf16>
    %kt = fa.load_tile %k[%b, %h, %c0] : !qkv -> tensor<16x32xf16>
    %s = fa.tile_dot %qt, %kt transpose_rhs : tensor<16x32xf16>, tensor<16x32xf16> -> tensor<16x16xf32>
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
  return
}
