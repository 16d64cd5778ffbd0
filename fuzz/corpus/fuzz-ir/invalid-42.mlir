func.func @zero_head_dim(%q: tensor<1x8x16x0xf16>, %k: tensor<1x8x16x0xf16>, %v: tensor<1x8x16x0xf16>) -> tensor<1x8x16x0xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x8x16x0xf16>, tensor<1x8x16x0xf16>, tensor<1x8x16x0xf16> -> tensor<1x8x16x0xf16>
  return %o : tensor<1x8x16x0xf16>
}
