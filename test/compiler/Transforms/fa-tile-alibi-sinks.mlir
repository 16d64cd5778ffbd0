// fa-tile with ALiBi slopes and attention sinks (fa.attention alibi(%s)
// sinks(%s)): each row's slope and sink are read from the [Hq] vectors
// like the Q block's rows (fa.load_tile of a rank-1 memref), taken to log2
// units; the sink starts the online softmax once (m = sink·log2(e), l = 1);
// the mask op gets the slopes; the grid names both arguments for the ABI's
// head words (fa.head_params). A split-KV kernel leaves the sink to its
// combine kernel, whose merge starts from it (in natural-log units).
// RUN: split-file %s %t
// RUN: fa-opt %t/heads.mlir --fa-tile="target=gfx906" | FileCheck %s
// RUN: fa-opt %t/heads.mlir --fa-tile="target=gfx906 kv-splits=runtime" | FileCheck %s --check-prefix=SPLIT
// RUN: fa-opt %t/heads.mlir --fa-tile="target=gfx906 test-plant-bug=sink-per-block" | FileCheck %s --check-prefix=PER-BLOCK
// RUN: fa-opt %t/sinks-only.mlir --fa-tile="target=gfx906" | FileCheck %s --check-prefix=SINKS
// RUN: not fa-opt %t/heads.mlir --fa-tile="target=gfx906 trace=true" 2>&1 | FileCheck %s --check-prefix=TRACE
// RUN: not fa-opt %t/two.mlir --fa-tile="target=gfx906" 2>&1 | FileCheck %s --check-prefix=TWO
// Must not fire without them: no per-head loads, no head words, m starts
// at -inf and l at 0.
// RUN: sed -e 's/ alibi(%%slopes : tensor<8xf32>) sinks(%%sinks : tensor<8xf32>)//' %t/heads.mlir | fa-opt --fa-tile="target=gfx906" | FileCheck %s --check-prefix=PLAIN
// PLAIN-NOT: fa.head_params
// PLAIN-NOT: alibi(
// PLAIN: %[[NEGINF:[^ ]+]] = arith.constant dense<0xFF800000> : tensor<64xf32>
// PLAIN-NEXT: %[[ZERO:[^ ]+]] = arith.constant dense<0.000000e+00> : tensor<64xf32>
// PLAIN: scf.for {{.*}} iter_args(%{{[^ ]+}} = %[[NEGINF]], %{{[^ ]+}} = %[[ZERO]],

//--- heads.mlir
// CHECK-LABEL: func.func @heads
// CHECK-SAME: %[[SLOPE_ARG:[^:]+]]: memref<8xf32, strided<[1], offset: ?>>, %[[SINK_ARG:[^:]+]]: memref<8xf32, strided<[1], offset: ?>>
// CHECK: scf.forall (%[[X:[^,]+]], %[[H:[^,]+]], %[[B:[^)]+]])
// CHECK: %[[M0:[^ ]+]] = arith.muli %[[X]], %c64
// CHECK: %[[SLOPE:[^ ]+]] = fa.load_tile %[[SLOPE_ARG]][%[[B]], %[[H]], %[[M0]]] : memref<8xf32, strided<[1], offset: ?>> -> tensor<64xf32>
// CHECK: %[[SINK:[^ ]+]] = fa.load_tile %[[SINK_ARG]][%[[B]], %[[H]], %[[M0]]] : memref<8xf32, strided<[1], offset: ?>> -> tensor<64xf32>
// CHECK: %[[LOG2E:[^ ]+]] = arith.constant dense<1.44269502> : tensor<64xf32>
// m starts at the sink; l's parts not at 1 (the sink's 1 joins after the
// loop).
// CHECK: %[[M:[^ ]+]] = arith.mulf %[[SINK]], %[[LOG2E]]
// CHECK-NOT: dense<1.000000e+00>
// CHECK: %[[S2:[^ ]+]] = arith.mulf %[[SLOPE]], %{{[^ ]+}} : tensor<64xf32>
// CHECK-NOT: dense<1.000000e+00>
// CHECK: %[[LOOP:[^:]+]]:3 = scf.for {{.*}} iter_args(%{{[^ ]+}} = %[[M]], %{{[^ ]+}} = %{{[^,]+}},
// ALiBi adds to the scaled scores: the scale stays a multiply before the
// mask, not folded into the exponent (no fused multiply-add).
// CHECK: %[[SC:[^ ]+]] = arith.mulf %{{[^ ]+}}, %{{[^ ]+}} : tensor<64x64xf32>
// CHECK: fa.tile_mask %[[SC]] rows(%[[M0]], %{{[^)]+}}) cols(%{{[^)]+}}) causal alibi(%[[S2]] : tensor<64xf32>)
// CHECK: fa.row_reduce  max
// CHECK-NOT: math.fma
// CHECK-NOT: math.exp2
// CHECK: math.exp2
// CHECK-NOT: math.exp2
// CHECK: math.exp2
// CHECK-NOT: math.exp2
// CHECK: scf.yield
// After the loop l = the parts' sum + the sink's 1 rescaled to the final
// m: exp2(sink - m).
// CHECK: %[[L:[^ ]+]] = fa.row_combine %[[LOOP]]#1
// CHECK-NEXT: %[[DS:[^ ]+]] = arith.subf %[[M]], %[[LOOP]]#0 : tensor<64xf32>
// CHECK-NEXT: %[[ES:[^ ]+]] = math.exp2 %[[DS]]
// CHECK-NEXT: arith.addf %[[L]], %[[ES]]
// CHECK: fa.head_params = array<i64: 3, 4>
// The split kernel: slopes, no sink in its loop; at S = 1 (it writes O
// itself) the sink joins after the loop: m' = max(m, sink), l' = l·2^(m -
// m') + 2^(sink - m'), acc' = acc·2^(m - m'). At S > 1 the combine kernel
// starts from the sink (natural-log units, as the splits' LSE) with L = 1.
// SPLIT: fa.load_tile %arg3
// SPLIT-NOT: fa.load_tile %arg4
// SPLIT: %[[RES:[^:]+]]:3 = scf.for
// SPLIT-NOT: fa.load_tile %arg4
// SPLIT: %[[LSUM:[^ ]+]] = fa.row_combine %[[RES]]#1
// SPLIT: scf.if %{{[^ ]+}} {
// SPLIT: %[[SINK1:[^ ]+]] = fa.load_tile %arg4
// SPLIT: %[[SINK2:[^ ]+]] = arith.mulf %[[SINK1]], %{{[^ ]+}}
// SPLIT: %[[MX:[^ ]+]] = arith.maximumf %[[RES]]#0, %[[SINK2]]
// SPLIT: %[[REF:[^ ]+]] = arith.select %{{[^,]+}}, %{{[^,]+}}, %[[MX]]
// SPLIT: %[[D1:[^ ]+]] = arith.subf %[[RES]]#0, %[[REF]]
// SPLIT: %[[ALPHA:[^ ]+]] = math.exp2 %[[D1]]
// SPLIT: %[[D2:[^ ]+]] = arith.subf %[[SINK2]], %[[REF]]
// SPLIT: %[[ES:[^ ]+]] = math.exp2 %[[D2]]
// SPLIT: %[[LA:[^ ]+]] = arith.mulf %[[LSUM]], %[[ALPHA]]
// SPLIT: arith.addf %[[LA]], %[[ES]]
// SPLIT: %[[AB:[^ ]+]] = fa.row_broadcast %[[ALPHA]]
// SPLIT: arith.mulf %[[RES]]#2, %[[AB]]
// SPLIT: fa.store_tile %{{[^,]+}}, %arg5
// SPLIT: } else {
// SPLIT-NOT: fa.load_tile %arg4
// SPLIT: fa.kv_splits = "runtime"
// The combine with fa.merge_splits (few workgroups, many splits): the sink
// once after the merge, M' = max(M, sink).
// SPLIT: %[[MM:[^ ,]+]], %{{[^ ,]+}}, %{{[^ ]+}} = fa.merge_splits %arg6, %arg7
// SPLIT: %[[MSINK:[^ ]+]] = fa.load_tile %arg4[{{.*}}] : memref<8xf32, strided<[1], offset: ?>> -> tensor<[[R:[0-9]+]]xf32>
// SPLIT-NEXT: arith.maximumf %[[MM]], %[[MSINK]]
// The loop (else): the sink starts it.
// SPLIT: } else {
// SPLIT: %[[SINK:[^ ]+]] = fa.load_tile %arg4[{{.*}}] : memref<8xf32, strided<[1], offset: ?>> -> tensor<[[R]]xf32>
// SPLIT: %[[ONE:[^ ]+]] = arith.constant dense<1.000000e+00> : tensor<[[R]]xf32>
// SPLIT: scf.for {{.*}} iter_args(%{{[^ ]+}} = %[[SINK]], %{{[^ ]+}} = %[[ONE]],
// SPLIT: fa.combine
// SPLIT-SAME: fa.head_params = array<i64: 3, 4>
// The planted bug adds the sink's exp2(sink - m) to l in every block (l
// summed across the row every block there, starting from the sink's 1).
// PER-BLOCK: %[[ONE:[^ ]+]] = arith.constant dense<1.000000e+00> : tensor<64xf32>
// PER-BLOCK: scf.for {{.*}} iter_args(%{{[^ ]+}} = %{{[^ ]+}}, %{{[^ ]+}} = %[[ONE]],
// PER-BLOCK: fa.row_reduce  add %{{[^ ]+}} : tensor<64x64xf32>
// PER-BLOCK: %[[L:[^ ]+]] = arith.addf %{{[^,]+}}, %{{[^ ]+}} : tensor<64xf32>
// PER-BLOCK: %[[D:[^ ]+]] = arith.subf %[[M:[^,]+]], %{{[^ ]+}} : tensor<64xf32>
// PER-BLOCK-NEXT: %[[E:[^ ]+]] = math.exp2 %[[D]]
// PER-BLOCK-NEXT: arith.addf %[[L]], %[[E]]
// TRACE: trace=true does not take ALiBi or sinks yet
func.func @heads(%q: tensor<1x8x?x64xf16>, %k: tensor<1x2x?x64xf16>, %v: tensor<1x2x?x64xf16>, %slopes: tensor<8xf32>, %sinks: tensor<8xf32>) -> tensor<1x8x?x64xf16> {
  %o = fa.attention %q, %k, %v causal alibi(%slopes : tensor<8xf32>) sinks(%sinks : tensor<8xf32>) : tensor<1x8x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16> -> tensor<1x8x?x64xf16>
  return %o : tensor<1x8x?x64xf16>
}

//--- sinks-only.mlir
// Sinks alone: the mask has no alibi; the head words name -1 for it.
// SINKS-NOT: alibi(
// SINKS: fa.head_params = array<i64: -1, 3>
func.func @sinks(%q: tensor<1x8x?x64xf16>, %k: tensor<1x2x?x64xf16>, %v: tensor<1x2x?x64xf16>, %sinks: tensor<8xf32>) -> tensor<1x8x?x64xf16> {
  %o = fa.attention %q, %k, %v sinks(%sinks : tensor<8xf32>) : tensor<1x8x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16> -> tensor<1x8x?x64xf16>
  return %o : tensor<1x8x?x64xf16>
}

//--- two.mlir
// TWO: alibi and sinks take one fa.attention per kernel function
func.func @two(%q: tensor<1x8x?x64xf16>, %k: tensor<1x2x?x64xf16>, %v: tensor<1x2x?x64xf16>, %q2: tensor<1x8x?x64xf16>, %k2: tensor<1x2x?x64xf16>, %v2: tensor<1x2x?x64xf16>, %sinks: tensor<8xf32>) -> (tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>) {
  %o = fa.attention %q, %k, %v sinks(%sinks : tensor<8xf32>) : tensor<1x8x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16> -> tensor<1x8x?x64xf16>
  %o2 = fa.attention %q2, %k2, %v2 : tensor<1x8x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16> -> tensor<1x8x?x64xf16>
  return %o, %o2 : tensor<1x8x?x64xf16>, tensor<1x8x?x64xf16>
}
