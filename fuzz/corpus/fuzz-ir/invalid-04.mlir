func.func @batch(%q: tensor<2x8x128x64xf16>, %k: tensor<3x8x128x64xf16>, %v: tensor<3x8x128x64xf16>) {
  %o = fa.attention %q, %k, %v : tensor<2x8x128x64xf16>, tensor<3x8x128x64xf16>, tensor<3x8x128x64xf16> -> tensor<2x8x128x64xf16>
  return
}
