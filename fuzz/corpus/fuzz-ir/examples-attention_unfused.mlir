module {
  func.func @attention(%arg0: tensor<?x8x?x64xf16>, %arg1: tensor<?x2x?x64xf16>, %arg2: tensor<?x2x?x64xf16>) -> tensor<?x8x?x64xf16> {
    %0 = fa.matmul %arg0, %arg1 transpose_rhs : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x?xf32>
    %1 = fa.softmax %0 causal scale(1.250000e-01) : tensor<?x8x?x?xf32> -> tensor<?x8x?x?xf16>
    %2 = fa.matmul %1, %arg2 : tensor<?x8x?x?xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf32>
    %3 = arith.truncf %2 : tensor<?x8x?x64xf32> to tensor<?x8x?x64xf16>
    return %3 : tensor<?x8x?x64xf16>
  }
}
