func.func @tile_mask(%s: tensor<32x64xf16>, %i: index) {
  %m = fa.tile_mask %s rows(%i, %i) cols(%i, %i) : tensor<32x64xf16>
  return
}
