func.func @tile_dot_types(%a: tensor<32x64xf16>, %b: tensor<32x64xf32>) {
  %s = fa.tile_dot %a, %b transpose_rhs : tensor<32x64xf16>, tensor<32x64xf32> -> tensor<32x32xf32>
  return
}
