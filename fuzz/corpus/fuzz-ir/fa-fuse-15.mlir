// K and V with different head counts each divide Q's, so both matmuls verify,
// but fa.attention reads one KV head for both.
func.func @key_value_heads_differ(%q: tensor<1x8x128x64xf32>, %k: tensor<1x2x128x64xf32>, %v: tensor<1x4x128x64xf32>) -> tensor<1x8x128x64xf32> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf32>, tensor<1x2x128x64xf32> -> tensor<1x8x128x128xf32>
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf32>
  %o = fa.matmul %p, %v : tensor<1x8x128x128xf32>, tensor<1x4x128x64xf32> -> tensor<1x8x128x64xf32>
  return %o : tensor<1x8x128x64xf32>
}
