func.func @lds_bad_pairs() {
  %buf = fa.lds_buffer "v" : memref<32x64x2xf16, strided<[64, 2, 1]>, #gpu.address_space<workgroup>>
  return
}
