func.func @softmax_shape(%s: tensor<1x8x128x128xf32>) {
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x64xf16>
  return
}
