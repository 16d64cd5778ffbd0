func.func @lds_not_workgroup() {
  %buf = fa.lds_buffer "k" : memref<64x64xf16>
  return
}
