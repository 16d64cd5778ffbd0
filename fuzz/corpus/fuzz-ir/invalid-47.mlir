func.func @lds_dot_mismatch() {
  %a = fa.lds_buffer "q" : memref<64x32xf16, strided<[32, 1]>, #gpu.address_space<workgroup>>
  %b = fa.lds_buffer "k" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  %s = fa.lds_dot %a, %b transpose_rhs : memref<64x32xf16, strided<[32, 1]>, #gpu.address_space<workgroup>>, memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>> -> tensor<64x64xf32>
  return
}
