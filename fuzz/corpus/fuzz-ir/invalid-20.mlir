func.func @load_tile_rank(%m: memref<?x?x64xf16>, %i: index) {
  %t = fa.load_tile %m[%i, %i, %i] : memref<?x?x64xf16> -> tensor<32x64xf16>
  return
}
