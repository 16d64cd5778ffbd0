// The pipeline fac runs (fa-fuse, fa-tile, fa-promote, fa-pad-lds,
// fa-lower-to-gpu): attention spelled as matmul -> softmax -> matmul becomes
// one fused kernel.
// Tile options reach fa-tile.
// K/V slot sharing reaches fa-tile, pair-rhs reaches fa-promote.

// Errors surface through the pipeline.

//--- unfused.mlir

// The softmax's causal mask and scale are the kernel's.
// gfx906's choice (fa-tile.mlir): 64x64 with K and V in one slot, so three
// LDS attributions; V is stored pair-interleaved.

// fa-pad-lds runs in the pipeline: it pads Q's rows by one dword (64 x 66
// halves) and records the largest padding in #fa.tile; each slot is one 1-D
// attribution.
// Without it: Q 64x64, K and V 32x64, P 64x32, unpadded.

// Separate K and V slots: four attributions, and the chooser falls back to
// 64x32 to keep two workgroups per CU.

// V row-major: no pairs to interleave.
func.func @attention(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> tensor<?x8x?x64xf16> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x?xf32>
  %p = fa.softmax %s causal scale(1.250000e-01) : tensor<?x8x?x?xf32> -> tensor<?x8x?x?xf16>
  %o32 = fa.matmul %p, %v : tensor<?x8x?x?xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf32>
  %o = arith.truncf %o32 : tensor<?x8x?x64xf32> to tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

//--- unknown-target.mlir

module {
  func.func @attention(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
    %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
    return %o : tensor<1x8x128x64xf16>
  }
}

//--- over-budget.mlir

func.func @attention(%q: tensor<1x8x256x128xf16>, %k: tensor<1x8x256x128xf16>, %v: tensor<1x8x256x128xf16>) -> tensor<1x8x256x128xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x8x256x128xf16>, tensor<1x8x256x128xf16>, tensor<1x8x256x128xf16> -> tensor<1x8x256x128xf16>
  return %o : tensor<1x8x256x128xf16>
}
