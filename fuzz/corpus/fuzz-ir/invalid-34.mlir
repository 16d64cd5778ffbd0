func.func @fetch_wrong_shape(%src: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %i: index) {
  %buf = fa.lds_buffer "k" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  %t = fa.fetch_tile %src[%i, %i, %i] for %buf : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> for memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>> -> tensor<32x64xf16>
  return
}
