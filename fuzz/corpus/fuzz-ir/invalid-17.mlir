func.func @softmax_input(%s: tensor<1x8x128x128xf16>) {
  %p = fa.softmax %s : tensor<1x8x128x128xf16> -> tensor<1x8x128x128xf16>
  return
}
