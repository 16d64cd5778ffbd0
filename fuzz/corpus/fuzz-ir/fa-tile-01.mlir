// Not causal, f32, default scale 1/sqrt(32); Lq and Lk are not multiples of
// the blocks.
// The KV loop visits every block: ceildiv(Lk, BN).
// 1/sqrt(32) * log2(e)
// f32 P feeds the product as it is.
func.func @f32_not_causal(%q: tensor<2x4x100x32xf32>, %k: tensor<2x4x300x32xf32>, %v: tensor<2x4x300x32xf32>) -> tensor<2x4x100x32xf32> {
  %o = fa.attention %q, %k, %v : tensor<2x4x100x32xf32>, tensor<2x4x300x32xf32>, tensor<2x4x300x32xf32> -> tensor<2x4x100x32xf32>
  return %o : tensor<2x4x100x32xf32>
}
