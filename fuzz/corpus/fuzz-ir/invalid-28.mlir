func.func @tile_dot_rank(%a: tensor<32xf16>, %b: tensor<32x64xf16>) {
  %s = fa.tile_dot %a, %b : tensor<32xf16>, tensor<32x64xf16> -> tensor<32x64xf32>
  return
}
