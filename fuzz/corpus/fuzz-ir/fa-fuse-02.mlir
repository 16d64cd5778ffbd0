// fa.softmax's scale defaults to 1 but fa.attention's to 1/sqrt(D): the fused
// op must spell scale(1.0) out.
func.func @softmax_without_scale(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x128xf32>
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf16>
  %o32 = fa.matmul %p, %v : tensor<1x8x128x128xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf32>
  %o = arith.truncf %o32 : tensor<1x8x128x64xf32> to tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}
