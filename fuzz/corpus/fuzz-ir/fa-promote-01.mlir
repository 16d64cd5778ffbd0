func.func @rhs_in_registers(%q: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = arith.constant dense<1.0> : tensor<64x64xf16>
  scf.forall (%mb, %h, %b) in (%c1, %c1, %c1) {
    %t = fa.load_tile %q[%b, %h, %c0] : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<64x64xf16>
    %s = fa.tile_dot %t, %r transpose_rhs : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  } {fa.args = array<i64: 0, 0, 0, 0, -1>, fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 64, waves = 4, wave_size = 64, stages = 1, lds_pad = 0>, mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}
