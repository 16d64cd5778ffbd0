// The loop nest, with explicit tiles so that it does not depend on the
// target's choice (BLOCK_M=64, BLOCK_N=32).

// Automatic choice from the LDS budget model, and the `report` table.

// bf16: refused where it is only emulated, unless allowed; native on sm_90.

// Functions that are not kernels of the expected shape.

// Options that cannot work: each with the message that says why.
// On sm_90 the estimate does not bind: ptxas judges (fac reports its spills).
// Test-only planted bugs (compiler/PlantedBugs.h; e2e/mutants.py runs them).

// Stages: 0 (auto), 1 or 2. Auto double-buffers unless the registers that
// hold block n+1 would cost occupancy (a remark says so); a forced stages=2
// that does not fit is an error.

//--- loops.mlir

// Causal GQA (8 query heads over 2 KV heads), f16, with the LSE result.
// Tensors become strided memrefs; O and LSE become trailing output
// arguments and the function returns nothing.
//
// The grid is outermost: one workgroup per (Q block, head, batch).
// The Q block is loaded once, before the KV loop, with the query head.
// Causal: the KV loop ends at the diagonal, min(max(m0 + BM - Lq + Lk, 0), Lk).
// scale * log2(e) = 0.125 * 1.4426950408889634, folded once.
// K and V blocks stream inside the loop, from KV head h / (Hq / Hkv).
// Ragged edges and the causal mask.
// alpha = exp2(m_old - m_ref)
// O is rescaled by alpha BEFORE P·V is accumulated onto it.
// Epilogue: O = acc / l, stored with the query head; LSE = ln2 * (m + log2 l).
func.func @causal_gqa_lse(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> (tensor<?x8x?x64xf16>, tensor<?x8x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v causal scale(0.125) : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
  return %o, %lse : tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
}
