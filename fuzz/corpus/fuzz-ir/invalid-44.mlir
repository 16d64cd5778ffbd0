func.func @lds_stride_too_short() {
  %buf = fa.lds_buffer "k" : memref<64x64xf16, strided<[32, 1]>, #gpu.address_space<workgroup>>
  return
}
