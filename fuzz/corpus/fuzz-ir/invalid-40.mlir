func.func @zero_kv_heads(%q: tensor<1x8x16x64xf16>, %k: tensor<1x0x16x64xf16>, %v: tensor<1x0x16x64xf16>) -> tensor<1x8x16x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x8x16x64xf16>, tensor<1x0x16x64xf16>, tensor<1x0x16x64xf16> -> tensor<1x8x16x64xf16>
  return %o : tensor<1x8x16x64xf16>
}
