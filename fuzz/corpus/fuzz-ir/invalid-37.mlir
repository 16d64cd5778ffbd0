func.func @stage_other_buffer(%src: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %i: index) {
  %k = fa.lds_buffer "k" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  %v = fa.lds_buffer "v" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  %t = fa.fetch_tile %src[%i, %i, %i] for %k : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> for memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>> -> tensor<64x64xf16>
  fa.stage_tile %t to %v : tensor<64x64xf16> to memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  return
}
