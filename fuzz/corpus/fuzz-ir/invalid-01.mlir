func.func @d_mismatch(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x128xf16>, %v: tensor<1x8x128x64xf16>) {
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x128xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return
}
