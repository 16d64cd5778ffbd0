func.func @lds_dot_pairs_lhs() {
  %a = fa.lds_buffer "v" : memref<32x64x2xf16, strided<[128, 2, 1]>, #gpu.address_space<workgroup>>
  %b = fa.lds_buffer "k" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  %s = fa.lds_dot %a, %b transpose_rhs : memref<32x64x2xf16, strided<[128, 2, 1]>, #gpu.address_space<workgroup>>, memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>> -> tensor<64x64xf32>
  return
}
