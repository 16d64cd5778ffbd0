// fa-fuzz: allow-bf16=1
module {
  func.func @attention(%arg0: tensor<?x8x?x64xbf16>, %arg1: tensor<?x2x?x64xbf16>, %arg2: tensor<?x2x?x64xbf16>) -> tensor<?x8x?x64xbf16> {
    %output = fa.attention %arg0, %arg1, %arg2 causal : tensor<?x8x?x64xbf16>, tensor<?x2x?x64xbf16>, tensor<?x2x?x64xbf16> -> tensor<?x8x?x64xbf16>
    return %output : tensor<?x8x?x64xbf16>
  }
}

