func.func @load_tile_type(%m: memref<?x?x?x64xf16>, %i: index) {
  %t = fa.load_tile %m[%i, %i, %i] : memref<?x?x?x64xf16> -> tensor<32x64xf32>
  return
}
