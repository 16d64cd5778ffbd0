// Static head counts and head dimensions of 0 (they used to divide by zero
// in the verifier).
func.func @zero_heads(%q: tensor<1x0x16x64xf16>, %k: tensor<1x0x16x64xf16>, %v: tensor<1x0x16x64xf16>) -> tensor<1x0x16x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x0x16x64xf16>, tensor<1x0x16x64xf16>, tensor<1x0x16x64xf16> -> tensor<1x0x16x64xf16>
  return %o : tensor<1x0x16x64xf16>
}
