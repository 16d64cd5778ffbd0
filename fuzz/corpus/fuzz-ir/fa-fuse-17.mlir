func.func @softmax_of_an_argument(%s: tensor<1x8x128x128xf32>, %v: tensor<1x8x128x64xf32>) -> tensor<1x8x128x64xf32> {
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf32>
  %o = fa.matmul %p, %v : tensor<1x8x128x128xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return %o : tensor<1x8x128x64xf32>
}
