func.func @matmul_zero_heads(%a: tensor<1x8x128x64xf16>, %b: tensor<1x0x128x64xf16>) -> tensor<1x8x128x128xf32> {
  %s = fa.matmul %a, %b transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x0x128x64xf16> -> tensor<1x8x128x128xf32>
  return %s : tensor<1x8x128x128xf32>
}
