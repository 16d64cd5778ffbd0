// fa-tile with a sliding window and softcap (fa.attention window(l, r)
// softcap(c)): the K/V loop starts at the first block the Q block's first
// row sees (m0 + Lk - Lq - left, floored to a block) and ends at the
// causal diagonal or the window's right side; the scores are capped
// (c·tanh(x/c) through exp2) before the mask, which carries the window;
// the grid says both for the manifest.
// RUN: split-file %s %t
// RUN: fa-opt %t/window.mlir --fa-tile="target=gfx906" | FileCheck %s
// RUN: fa-opt %t/window.mlir --fa-tile="target=gfx906 kv-splits=runtime" | FileCheck %s --check-prefix=SPLIT
// RUN: fa-opt %t/right.mlir --fa-tile="target=gfx906" | FileCheck %s --check-prefix=RIGHT
// RUN: fa-opt %t/window.mlir --fa-tile="target=gfx906 test-plant-bug=window-skips-block" | FileCheck %s --check-prefix=SKIPS
// RUN: fa-opt %t/window.mlir --fa-tile="target=gfx906 test-plant-bug=softcap-after-max" | FileCheck %s --check-prefix=AFTER-MAX
// Must not fire without a window or softcap: no first block, no cap.
// RUN: fa-opt %t/plain.mlir --fa-tile="target=gfx906" | FileCheck %s --check-prefix=PLAIN
// PLAIN-NOT: window(
// PLAIN-NOT: fa.window
// PLAIN-NOT: fa.softcap
// PLAIN: scf.for %{{[^ ]+}} = %c0 to
// PLAIN-NOT: arith.divf
// PLAIN: fa.tile_mask %{{[^ ]+}} rows(%{{[^)]+}}) cols(%{{[^)]+}}) causal :

//--- window.mlir
// CHECK-LABEL: func.func @window
// CHECK: %[[LQ:[^ ]+]] = memref.dim %arg0, %c2
// CHECK: %[[LK:[^ ]+]] = memref.dim %arg1, %c2
// CHECK: scf.forall
// CHECK: %[[M0:[^ ]+]] = arith.muli %arg4, %c64
// The end: the causal diagonal of the block's last row.
// CHECK: %[[END:[^ ]+]] = arith.minsi %{{[^,]+}}, %[[LK]]
// CHECK: %[[N:[^ ]+]] = arith.ceildivui %[[END]], %c64
// The first block: max(0, m0 + Lk - Lq - 100) / BLOCK_N, at most n.
// CHECK: %[[C100:[^ ]+]] = arith.constant 100 : index
// CHECK: %[[A:[^ ]+]] = arith.addi %[[LQ]], %[[C100]]
// CHECK: %[[B:[^ ]+]] = arith.addi %[[M0]], %[[LK]]
// CHECK: %[[FROM:[^ ]+]] = arith.subi %[[B]], %[[A]]
// CHECK: %[[FROM0:[^ ]+]] = arith.maxsi %[[FROM]], %c0
// CHECK: %[[FIRST:[^ ]+]] = arith.divui %[[FROM0]], %c64
// CHECK: %[[LO:[^ ]+]] = arith.minui %[[FIRST]], %[[N]]
// Softcap 30 at scale 1/8: t = s·2·log2(e)/(8·30), then 30·log2(e)·tanh.
// CHECK: %[[TS:[^ ]+]] = arith.constant dense<0.0120224589> : tensor<64x64xf32>
// CHECK: %[[CO:[^ ]+]] = arith.constant dense<43.2808495> : tensor<64x64xf32>
// CHECK: scf.for %{{[^ ]+}} = %[[LO]] to %[[N]] step
// CHECK: %[[S:[^ ]+]] = fa.tile_dot
// CHECK: %[[T:[^ ]+]] = arith.mulf %[[S]], %[[TS]]
// CHECK: %[[E:[^ ]+]] = math.exp2 %[[T]]
// CHECK: %[[E1:[^ ]+]] = arith.addf %[[E]],
// CHECK: %[[F:[^ ]+]] = arith.divf %{{[^,]+}}, %[[E1]]
// CHECK: %[[TH:[^ ]+]] = arith.subf %{{[^,]+}}, %[[F]]
// CHECK: %[[CAP:[^ ]+]] = arith.mulf %[[TH]], %[[CO]]
// CHECK: %[[MASKED:[^ ]+]] = fa.tile_mask %[[CAP]] rows(%[[M0]], %[[LQ]]) cols(%{{[^,]+}}, %[[LK]]) causal window(100, -1)
// CHECK: fa.row_reduce  max %[[MASKED]]
// The capped scores are already in log2 units: the scale is not folded
// into the exponent (no fused multiply-add), P = exp2(s - m).
// CHECK-NOT: math.fma
// CHECK: arith.subf %[[MASKED]],
// CHECK-NOT: math.fma
// CHECK: scf.yield
// CHECK: fa.causal, fa.scale = 1.250000e-01 : f32, fa.softcap = 3.000000e+01 : f32
// CHECK-SAME: fa.window = array<i64: 100, -1>
// Split-KV divides the window's blocks [first, n) among the splits.
// SPLIT: %[[FIRST:[^ ]+]] = arith.minui %{{[^,]+}}, %[[N:[^ ]+]] : index
// SPLIT: %[[BLOCKS:[^ ]+]] = arith.subi %[[N]], %[[FIRST]]
// SPLIT: %[[PER:[^ ]+]] = arith.ceildivui %[[BLOCKS]], %{{[^ ]+}}
// SPLIT: %[[OFF:[^ ]+]] = arith.muli %{{[^,]+}}, %[[PER]]
// SPLIT: arith.addi %[[FIRST]], %[[OFF]]
// The planted bug rounds the first block up.
// SKIPS: %c100 = arith.constant 100 : index
// SKIPS: %[[FROM:[^ ]+]] = arith.maxsi %{{[^,]+}}, %c0
// SKIPS-NEXT: %c64{{[_0-9]*}} = arith.constant 64 : index
// SKIPS-NEXT: arith.ceildivui %[[FROM]]
// The planted bug takes the row max over the uncapped scores.
// AFTER-MAX: %[[CAPPED:[^ ]+]] = fa.tile_mask %{{[^ ]+}} rows
// AFTER-MAX: %[[RAW:[^ ]+]] = arith.mulf %{{[^,]+}}, %{{[^ ]+}} : tensor<64x64xf32>
// AFTER-MAX: %[[UNCAPPED:[^ ]+]] = fa.tile_mask %[[RAW]]
// AFTER-MAX: fa.row_reduce  max %[[UNCAPPED]]
func.func @window(%q: tensor<1x8x?x64xf16>, %k: tensor<1x2x?x64xf16>, %v: tensor<1x2x?x64xf16>) -> tensor<1x8x?x64xf16> {
  %o = fa.attention %q, %k, %v causal window(100, -1) softcap(30.0) : tensor<1x8x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16> -> tensor<1x8x?x64xf16>
  return %o : tensor<1x8x?x64xf16>
}

//--- right.mlir
// Not causal, the window's right side: the end is the last row's
// diagonal + 3; no left side, so the loop starts at 0.
// RIGHT: %[[LAST:[^ ]+]] = arith.subi %{{[^,]+}}, %dim
// RIGHT-NEXT: %[[DIAG:[^ ]+]] = arith.addi %[[LAST]], %dim
// RIGHT-NEXT: %[[C3:[^ ]+]] = arith.constant 3 : index
// RIGHT-NEXT: %[[R:[^ ]+]] = arith.addi %[[DIAG]], %[[C3]]
// RIGHT: arith.maxsi %[[R]], %c0
// RIGHT: scf.for %{{[^ ]+}} = %c0 to
// RIGHT: fa.tile_mask %{{[^ ]+}} rows(%{{[^)]+}}) cols(%{{[^)]+}}) window(-1, 3)
func.func @right(%q: tensor<1x8x?x64xf32>, %k: tensor<1x8x?x64xf32>, %v: tensor<1x8x?x64xf32>) -> tensor<1x8x?x64xf32> {
  %o = fa.attention %q, %k, %v window(-1, 3) : tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32>, tensor<1x8x?x64xf32> -> tensor<1x8x?x64xf32>
  return %o : tensor<1x8x?x64xf32>
}

//--- plain.mlir
func.func @plain(%q: tensor<1x8x?x64xf16>, %k: tensor<1x2x?x64xf16>, %v: tensor<1x2x?x64xf16>) -> tensor<1x8x?x64xf16> {
  %o = fa.attention %q, %k, %v causal : tensor<1x8x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16> -> tensor<1x8x?x64xf16>
  return %o : tensor<1x8x?x64xf16>
}
