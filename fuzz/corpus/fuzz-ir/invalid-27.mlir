func.func @tile_dot_result(%a: tensor<32x64xf16>, %b: tensor<32x64xf16>) {
  %s = fa.tile_dot %a, %b transpose_rhs : tensor<32x64xf16>, tensor<32x64xf16> -> tensor<32x32xf16>
  return
}
