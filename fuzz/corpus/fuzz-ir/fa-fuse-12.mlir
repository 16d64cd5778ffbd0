// An f16 fa.attention yields f16; the program uses the f32 product itself.
func.func @f16_product_used_unrounded(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf32> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x128xf32>
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf16>
  %o = fa.matmul %p, %v : tensor<1x8x128x128xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf32>
  return %o : tensor<1x8x128x64xf32>
}
