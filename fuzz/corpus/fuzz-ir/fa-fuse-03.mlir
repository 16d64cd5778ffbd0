// Grouped-query attention: 8 query heads share 2 key/value heads.
func.func @gqa(%q: tensor<1x8x128x64xf16>, %k: tensor<1x2x256x64xf16>, %v: tensor<1x2x256x64xf16>) -> tensor<1x8x128x64xf16> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x8x128x256xf32>
  %p = fa.softmax %s causal scale(0.125) : tensor<1x8x128x256xf32> -> tensor<1x8x128x256xf16>
  %o32 = fa.matmul %p, %v : tensor<1x8x128x256xf16>, tensor<1x2x256x64xf16> -> tensor<1x8x128x64xf32>
  %o = arith.truncf %o32 : tensor<1x8x128x64xf32> to tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}
