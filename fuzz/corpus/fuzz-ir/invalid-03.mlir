func.func @heads(%q: tensor<1x6x128x64xf16>, %k: tensor<1x4x128x64xf16>, %v: tensor<1x4x128x64xf16>) {
  %o = fa.attention %q, %k, %v : tensor<1x6x128x64xf16>, tensor<1x4x128x64xf16>, tensor<1x4x128x64xf16> -> tensor<1x6x128x64xf16>
  return
}
