func.func @row_broadcast(%s: tensor<32xf32>) {
  %r = fa.row_broadcast %s : tensor<32xf32> -> tensor<64x64xf32>
  return
}
