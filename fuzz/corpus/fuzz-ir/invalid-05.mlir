func.func @mixed(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf16>) {
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return
}
