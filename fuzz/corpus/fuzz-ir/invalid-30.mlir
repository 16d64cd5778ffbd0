func.func @row_reduce(%s: tensor<32x64xf32>) {
  %r = fa.row_reduce max %s : tensor<32x64xf32> -> tensor<64xf32>
  return
}
