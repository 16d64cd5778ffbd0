// Without `remarks`, declined chains are left alone silently.

//===----------------------------------------------------------------------===//
// Chains that fuse
//===----------------------------------------------------------------------===//

// f16: the f32 product rounded by arith.truncf is what the program uses; the
// truncf's result is replaced, and causal and scale are carried over.
func.func @f16_truncf(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64xf16>, %v: tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16> -> tensor<2x8x128x128xf32>
  %p = fa.softmax %s causal scale(0.125) : tensor<2x8x128x128xf32> -> tensor<2x8x128x128xf16>
  %o32 = fa.matmul %p, %v : tensor<2x8x128x128xf16>, tensor<2x8x128x64xf16> -> tensor<2x8x128x64xf32>
  %o = arith.truncf %o32 : tensor<2x8x128x64xf32> to tensor<2x8x128x64xf16>
  return %o : tensor<2x8x128x64xf16>
}
