// fa.attention rounds P to Q's type; a chain that keeps P in f32 for f16 Q
// computes something else. (This is also how mixed Q/V types show up: the
// matmul verifier ties V's type to P's.)
func.func @p_not_rounded_to_query_type(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf32>) -> tensor<1x8x128x64xf32> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x128xf32>
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf32>
  %o = fa.matmul %p, %v : tensor<1x8x128x128xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return %o : tensor<1x8x128x64xf32>
}
