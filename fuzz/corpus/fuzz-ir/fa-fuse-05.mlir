// Two independent chains in one function: both fuse, each keeps its own
// operands and attributes.
func.func @two_chains(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>,
                      %q2: tensor<1x2x64x16xf32>, %k2: tensor<1x2x64x16xf32>, %v2: tensor<1x2x64x16xf32>)
    -> (tensor<1x8x128x64xf16>, tensor<1x2x64x16xf32>) {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x128xf32>
  %p = fa.softmax %s causal scale(0.125) : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf16>
  %o32 = fa.matmul %p, %v : tensor<1x8x128x128xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf32>
  %o = arith.truncf %o32 : tensor<1x8x128x64xf32> to tensor<1x8x128x64xf16>
  %s2 = fa.matmul %q2, %k2 transpose_rhs : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x64xf32>
  %p2 = fa.softmax %s2 scale(0.25) : tensor<1x2x64x64xf32> -> tensor<1x2x64x64xf32>
  %o2 = fa.matmul %p2, %v2 : tensor<1x2x64x64xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return %o, %o2 : tensor<1x8x128x64xf16>, tensor<1x2x64x16xf32>
}

//===----------------------------------------------------------------------===//
// Chains that must not fuse: the IR is left as it was, with a remark
//===----------------------------------------------------------------------===//
