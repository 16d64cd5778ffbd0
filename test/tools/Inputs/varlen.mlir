module {
  func.func @varlen(%q: tensor<?x8x64xf16>, %k: tensor<?x2x64xf16>, %v: tensor<?x2x64xf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<?x8x64xf16>, tensor<8x?xf32>) {
    %o, %lse = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) causal : tensor<?x8x64xf16>, tensor<?x2x64xf16>, tensor<?x2x64xf16> -> tensor<?x8x64xf16>, tensor<8x?xf32>
    return %o, %lse : tensor<?x8x64xf16>, tensor<8x?xf32>
  }
}
