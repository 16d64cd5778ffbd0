// Fusing would drop S, which the function also returns.
func.func @scores_used_twice(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> (tensor<1x8x128x64xf16>, tensor<1x8x128x128xf32>) {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x128xf32>
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf16>
  %o32 = fa.matmul %p, %v : tensor<1x8x128x128xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf32>
  %o = arith.truncf %o32 : tensor<1x8x128x64xf32> to tensor<1x8x128x64xf16>
  return %o, %s : tensor<1x8x128x64xf16>, tensor<1x8x128x128xf32>
}
