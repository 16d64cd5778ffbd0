func.func @store_tile_rank(%t: tensor<2x2x2xf16>, %m: memref<?x?x?x64xf16>, %i: index) {
  fa.store_tile %t, %m[%i, %i, %i] : tensor<2x2x2xf16>, memref<?x?x?x64xf16>
  return
}
