// f32: no truncf; the second matmul's result is replaced.
func.func @f32_no_truncf(%q: tensor<1x4x96x32xf32>, %k: tensor<1x4x80x32xf32>, %v: tensor<1x4x80x32xf32>) -> tensor<1x4x96x32xf32> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x4x96x32xf32>, tensor<1x4x80x32xf32> -> tensor<1x4x96x80xf32>
  %p = fa.softmax %s scale(0.5) : tensor<1x4x96x80xf32> -> tensor<1x4x96x80xf32>
  %o = fa.matmul %p, %v : tensor<1x4x96x80xf32>, tensor<1x4x80x32xf32> -> tensor<1x4x96x32xf32>
  return %o : tensor<1x4x96x32xf32>
}
