func.func @stage_loop_mixed(%src: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %i: index, %other: tensor<64x64xf16>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %k = fa.lds_buffer "k" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  %t = fa.fetch_tile %src[%i, %i, %i] for %k : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> for memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>> -> tensor<64x64xf16>
  %r = scf.for %j = %c0 to %i step %c1 iter_args(%a = %t) -> (tensor<64x64xf16>) {
    fa.stage_tile %a to %k : tensor<64x64xf16> to memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
    scf.yield %other : tensor<64x64xf16>
  }
  return
}
