// Dynamic S and P let the result's query length disagree with Q's statically:
// fusing would make an fa.attention that does not verify.
func.func @result_does_not_match_query(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>) -> tensor<1x8x64x64xf32> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x?x?xf32>
  %p = fa.softmax %s : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf32>
  %o = fa.matmul %p, %v : tensor<1x8x?x?xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x64x64xf32>
  return %o : tensor<1x8x64x64xf32>
}
