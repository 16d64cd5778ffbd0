func.func @copy_narrowing(%src: memref<?x8x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>, %i: index) {
  %buf = fa.lds_buffer "k" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  fa.copy_tile %src[%i, %i, %i] to %buf : memref<?x8x?x64xf32, strided<[?, ?, ?, 1], offset: ?>> to memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  return
}
