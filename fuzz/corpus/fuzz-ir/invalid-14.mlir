func.func @matmul_types(%a: tensor<1x8x128x64xf16>, %b: tensor<1x8x128x64xf32>) {
  %s = fa.matmul %a, %b transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf32> -> tensor<1x8x128x128xf32>
  return
}
