func.func @softmax_scale(%s: tensor<1x8x128x128xf32>) {
  %p = fa.softmax %s scale(0.0) : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf16>
  return
}
