func.func @write_pairs(%t: tensor<64x64xf16>) {
  %v = fa.lds_buffer "v" : memref<32x64x2xf16, strided<[128, 2, 1]>, #gpu.address_space<workgroup>>
  fa.write_tile %t to %v : tensor<64x64xf16> to memref<32x64x2xf16, strided<[128, 2, 1]>, #gpu.address_space<workgroup>>
  return
}
