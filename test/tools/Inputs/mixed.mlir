module {
  func.func @mixed(%q: tensor<?x8x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %table: tensor<?x?xi32>, %lens: tensor<?xi32>, %cq: tensor<?xi32>) -> (tensor<?x8x64xf16>, tensor<8x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v paged(%table, %lens) varlen(%cq : tensor<?xi32>) causal : tensor<?x8x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x8x64xf16>, tensor<8x?xf32>
    return %o, %lse : tensor<?x8x64xf16>, tensor<8x?xf32>
  }
}
