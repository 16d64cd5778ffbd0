func.func @stage_not_fetched(%t: tensor<64x64xf16>) {
  %buf = fa.lds_buffer "k" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  fa.stage_tile %t to %buf : tensor<64x64xf16> to memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  return
}
