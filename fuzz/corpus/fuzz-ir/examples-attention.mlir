module {
  func.func @attention(%arg0: tensor<?x8x?x64xf16>, %arg1: tensor<?x2x?x64xf16>, %arg2: tensor<?x2x?x64xf16>) -> tensor<?x8x?x64xf16> {
    %output = fa.attention %arg0, %arg1, %arg2 causal : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>
    return %output : tensor<?x8x?x64xf16>
  }
}
