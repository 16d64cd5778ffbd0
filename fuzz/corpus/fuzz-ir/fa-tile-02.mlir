// Two attentions in one kernel: one grid each, each storing its own output.
func.func @two_attentions(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> (tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>) {
  %o1 = fa.attention %q, %k, %v causal : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  %o2 = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o1, %o2 : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>
}
