// fa-fuzz: stages=1
module {
  func.func @attention(%arg0: tensor<?x8x?x64xf32>, %arg1: tensor<?x2x?x64xf32>, %arg2: tensor<?x2x?x64xf32>) -> tensor<?x8x?x64xf32> {
    %output = fa.attention %arg0, %arg1, %arg2 causal : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32> -> tensor<?x8x?x64xf32>
    return %output : tensor<?x8x?x64xf32>
  }
}

