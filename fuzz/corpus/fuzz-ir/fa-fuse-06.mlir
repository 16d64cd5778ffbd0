// A lone matmul is not a candidate: no remark, nothing changes.
func.func @lone_matmul(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>) -> tensor<1x8x128x128xf32> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x128xf32>
  return %s : tensor<1x8x128x128xf32>
}
