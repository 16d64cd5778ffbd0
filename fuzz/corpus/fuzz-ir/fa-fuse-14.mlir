// A dynamic key D would make an invalid fa.attention (D must be static).
func.func @dynamic_key_head_dim(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x128x?xf32>, %v: tensor<1x8x128x64xf32>) -> tensor<1x8x128x64xf32> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf32>, tensor<1x8x128x?xf32> -> tensor<1x8x128x128xf32>
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf32>
  %o = fa.matmul %p, %v : tensor<1x8x128x128xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return %o : tensor<1x8x128x64xf32>
}
