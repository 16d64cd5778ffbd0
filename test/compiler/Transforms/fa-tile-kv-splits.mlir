// fa-tile kv-splits=runtime (split-KV, flash-decoding) and gqa-pack=on:
// the split grid, its K/V range per split, the workspace, the combine grid.
// RUN: split-file %s %t
// RUN: fa-opt %t/decode.mlir --fa-tile="block-m=16 block-n=64 kv-splits=runtime" | FileCheck %s
// RUN: fa-opt %t/decode.mlir --fa-tile="block-m=16 block-n=64 kv-splits=runtime gqa-pack=on" | FileCheck %s --check-prefix=PACK
// RUN: fa-opt %t/decode.mlir --fa-tile="block-m=16 block-n=64 gqa-pack=on" | FileCheck %s --check-prefix=PACK-DENSE

// Without explicit tiles a split-KV kernel takes the target's decode tiles
// (TargetDesc::decodeBlockM/N/Waves); a dense kernel keeps the budget's.
// RUN: fa-opt %t/decode.mlir --fa-tile="target=gfx906 kv-splits=runtime gqa-pack=on" | FileCheck %s --check-prefix=DECODE-TILES
// RUN: fa-opt %t/decode.mlir --fa-tile="target=sm_90 kv-splits=runtime" | FileCheck %s --check-prefix=SM90-DECODE
// RUN: fa-opt %t/decode.mlir --fa-tile="target=sm_90 kv-splits=runtime" --fa-promote | FileCheck %s --check-prefix=SM90-DECODE-LDS
// RUN: fa-opt %t/decode.mlir --fa-tile="target=sm_90" --fa-promote | FileCheck %s --check-prefix=SM90-PREFILL-LDS
// RUN: fa-opt %t/decode.mlir --fa-tile="target=gfx906 kv-splits=runtime waves=2" | FileCheck %s --check-prefix=DECODE-WAVES
// RUN: fa-opt %t/decode.mlir --fa-tile="target=gfx906 gqa-pack=on" | FileCheck %s --check-prefix=PREFILL-TILES
// DECODE-TILES: fa.kv_splits = "runtime", {{.*}}block_m = 4, block_n = 32, waves = 1,
// sm_90: 4 x 32, one warp (each lane all four rows: thread grid 1 x 32),
// double-buffered, K and V in one slot, f16 tiles in shared memory (the
// H200's fastest decode build); prefill keeps f32 tiles there (widen=auto).
// SM90-DECODE: fa.kv_splits = "runtime", {{.*}}block_m = 4, block_n = 32, waves = 1, wave_size = 32, stages = 2, lds_pad = 0, kv_shared = true
// SM90-DECODE-LDS: fa.lds_buffer "k"{{.*}}xf16,
// SM90-PREFILL-LDS: fa.lds_buffer "k"{{.*}}xf32,
// Two waves: each keeps the decode tile's 32 keys, 64 in all.
// DECODE-WAVES: fa.kv_splits = "runtime", {{.*}}block_m = 4, block_n = 64, waves = 2,
// PREFILL-TILES: fa.gqa_packed, {{.*}}block_m = 64,

// The combine merges one split per trip where the loaded tiles would take
// more registers: 64 x 128 over 256 threads is 32 floats a thread, gfx906's
// third of 128 VGPRs 42. The combine has its own workgroup, about 4
// elements of the [BLOCK_M, D] tile a thread, up to 256 threads: sm_90's
// decode tile (4 x 32, one warp) gets a combine of 4 warps (4 x 128 over
// 128 threads), which merges 8 splits a trip (a third of 255 registers).
// RUN: fa-opt %t/decode.mlir --fa-tile="block-m=64 block-n=32 kv-splits=runtime" | FileCheck %s --check-prefix=ONE-PER-TRIP
// RUN: fa-opt %t/decode.mlir --fa-tile="target=sm_90 kv-splits=runtime" | FileCheck %s --check-prefix=SM90-COMBINE
// ONE-PER-TRIP: fa.split_direct
// ONE-PER-TRIP: %[[NS:[^ ]+]] = arith.divui
// ONE-PER-TRIP-NOT: arith.ceildivui %[[NS]]
// ONE-PER-TRIP: scf.for %{{[^ ]+}} = %{{[^ ]+}} to %[[NS]] step
// ONE-PER-TRIP-NOT: arith.cmpi ult
// ONE-PER-TRIP: fa.load_tile
// ONE-PER-TRIP: fa.load_tile
// ONE-PER-TRIP-NOT: fa.load_tile
// ONE-PER-TRIP: scf.yield
// ONE-PER-TRIP: fa.combine, {{.*}}block_m = 64, block_n = 32, waves = 4, wave_size = 64, stages = 1
// SM90-COMBINE: fa.split_direct, {{.*}}block_m = 4, block_n = 32, waves = 1, wave_size = 32
// SM90-COMBINE: %[[NS:[^ ]+]] = arith.divui
// SM90-COMBINE: fa.merge_splits
// SM90-COMBINE: } else {
// SM90-COMBINE: %[[TRIPS:[^ ]+]] = arith.ceildivui %[[NS]], %c8
// SM90-COMBINE: scf.for %{{[^ ]+}} = %{{[^ ]+}} to %[[TRIPS]] step
// SM90-COMBINE-COUNT-16: fa.load_tile
// SM90-COMBINE-NOT: fa.load_tile
// SM90-COMBINE: scf.yield
// SM90-COMBINE: fa.combine, {{.*}}block_m = 4, block_n = 32, waves = 4, wave_size = 32, stages = 1, lds_pad = 0>
// Where fa.merge_splits must not fire: tiles whose rows hold more than a
// unit of 4 columns per thread, sm_80 (TargetDesc::mergeSplits off) and
// merge-splits=off; merge-splits=on turns it on where the target has not.
// ONE-PER-TRIP-NOT: fa.merge_splits
// RUN: fa-opt %t/decode.mlir --fa-tile="target=sm_80 kv-splits=runtime" | FileCheck %s --check-prefix=NO-MERGE
// RUN: fa-opt %t/decode.mlir --fa-tile="target=gfx906 kv-splits=runtime gqa-pack=on merge-splits=off" | FileCheck %s --check-prefix=NO-MERGE
// RUN: fa-opt %t/decode.mlir --fa-tile="target=sm_90 kv-splits=runtime merge-splits=off" | FileCheck %s --check-prefix=NO-MERGE
// NO-MERGE: fa.combine
// NO-MERGE-NOT: fa.merge_splits
// RUN: fa-opt %t/decode.mlir --fa-tile="target=sm_80 kv-splits=runtime merge-splits=on" | FileCheck %s --check-prefix=ON-MERGE
// ON-MERGE: fa.split_direct
// ON-MERGE: fa.merge_splits
// ON-MERGE: fa.combine
// gfx906's decode combine: fa.merge_splits where the grid has fewer
// workgroups than CUs and the loop would take more than one trip (8
// splits), else the loop.
// RUN: fa-opt %t/decode.mlir --fa-tile="target=gfx906 kv-splits=runtime gqa-pack=on" | FileCheck %s --check-prefix=MERGE
// MERGE: fa.split_direct
// MERGE: %[[NS:[^ ]+]] = arith.divui
// MERGE: %[[MB:[^ ]+]] = arith.ceildivui
// MERGE: %[[G1:[^ ]+]] = arith.muli %[[MB]], %{{[^ ]+}} : index
// MERGE: %[[WG:[^ ]+]] = arith.muli %[[G1]], %{{[^ ]+}} : index
// MERGE: %[[FEW:[^ ]+]] = arith.cmpi ult, %[[WG]], %c60
// MERGE: %[[MANY:[^ ]+]] = arith.cmpi ugt, %[[NS]], %c8
// MERGE: %[[SPREAD:[^ ]+]] = arith.andi %[[MANY]], %[[FEW]]
// MERGE: scf.if %[[SPREAD]] {
// MERGE: fa.merge_splits %arg{{[0-9]+}}, %arg{{[0-9]+}}[{{.*}}] splits(%[[NS]], %{{[^ ]+}}) : {{.*}} -> tensor<4xf32>, tensor<4xf32>, tensor<4x128xf32>
// MERGE: fa.store_tile
// MERGE: } else {
// MERGE: scf.for
// MERGE: fa.store_tile
// MERGE: fa.combine

// Where it must not fire: the default (off) leaves the dense grid alone.
// RUN: fa-opt %t/decode.mlir --fa-tile="block-m=16 block-n=64" | FileCheck %s --check-prefix=OFF
// OFF-NOT: fa.kv_splits
// OFF-NOT: fa.combine
// OFF-NOT: group(
// OFF: fa.args = array<i64: 0, 1, 2, 3, 4>

// The causal K/V bound of a packed block: the position of its last row,
// or Lq - 1 where the block spans two query heads (the first head's last
// row needs more keys than the block's last row). The planted bug keeps
// the last row's position alone.
// RUN: fa-opt %t/decode.mlir --fa-tile="block-m=16 block-n=64 gqa-pack=on" | FileCheck %s --check-prefix=PACK-BOUND
// RUN: fa-opt %t/decode.mlir --fa-tile="block-m=16 block-n=64 gqa-pack=on test-plant-bug=packed-causal-last-row" | FileCheck %s --check-prefix=LAST-ROW
// PACK-BOUND: %[[LAST:[^ ]+]] = arith.subi %{{[^,]+}}, %c1
// PACK-BOUND: %[[FH:[^ ]+]] = arith.divui %{{[^,]+}}, %[[LQ:[^ ]+]] : index
// PACK-BOUND: %[[LH:[^ ]+]] = arith.divui %[[LAST]], %[[LQ]] : index
// PACK-BOUND: %[[ONE:[^ ]+]] = arith.cmpi eq, %[[FH]], %[[LH]] : index
// PACK-BOUND: %[[POS:[^ ]+]] = arith.remui %[[LAST]], %[[LQ]] : index
// PACK-BOUND: %[[LQ1:[^ ]+]] = arith.subi %[[LQ]], %c1
// PACK-BOUND: arith.select %[[ONE]], %[[POS]], %[[LQ1]] : index
// LAST-ROW: %[[POS:[^ ]+]] = arith.remui
// LAST-ROW-NOT: arith.select %{{[^,]+}}, %[[POS]]
// LAST-ROW: arith.addi %[[POS]], %c1

// Planted bugs (e2e/mutants.py runs them): each changes what this test pins.
// RUN: fa-opt %t/decode.mlir --fa-tile="block-m=16 block-n=64 kv-splits=runtime test-plant-bug=split-short" | FileCheck %s --check-prefix=SHORT
// RUN: fa-opt %t/decode.mlir --fa-tile="block-m=16 block-n=64 kv-splits=runtime test-plant-bug=split-overlap" | FileCheck %s --check-prefix=OVERLAP
// RUN: fa-opt %t/decode.mlir --fa-tile="block-m=16 block-n=64 kv-splits=runtime test-plant-bug=combine-no-rescale" | FileCheck %s --check-prefix=NO-RESCALE
// RUN: fa-opt %t/decode.mlir --fa-tile="block-m=16 block-n=64 kv-splits=runtime test-plant-bug=split-no-direct" | FileCheck %s --check-prefix=NO-DIRECT

// Bad values and shapes.
// RUN: fa-opt %t/bad-value.mlir --fa-tile="kv-splits=always" -verify-diagnostics
// RUN: fa-opt %t/bad-pack.mlir --fa-tile="gqa-pack=auto" -verify-diagnostics
// RUN: fa-opt %t/two.mlir --fa-tile="kv-splits=runtime" -verify-diagnostics
// RUN: not fa-opt %t/decode.mlir --fa-tile="kv-splits=runtime merge-splits=yes" 2>&1 | FileCheck %s --check-prefix=BAD-MERGE
// BAD-MERGE: error: merge-splits must be auto, on or off, got 'yes'

//--- decode.mlir
// The workspace follows the outputs: f32 [S*B, Hq, Lq, D] and [S*B, Hq, Lq].
// CHECK-LABEL: func.func @decode
// CHECK-SAME: %[[Q:[^:]+]]: memref<?x8x?x128xf16
// CHECK-SAME: %[[K:[^:]+]]: memref<?x2x?x128xf16
// CHECK-SAME: %[[O:[^:]+]]: memref<?x8x?x128xf16
// CHECK-SAME: %[[LSE:[^:]+]]: memref<?x8x?xf32
// CHECK-SAME: %[[WSO:[^:]+]]: memref<?x?x?x128xf32, strided<[?, ?, ?, 1], offset: ?>>,
// CHECK-SAME: %[[WSL:[^:]+]]: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>) {
// CHECK: %[[B:[^ ]+]] = memref.dim %[[Q]], %{{c0[_0-9]*}}
// CHECK: %[[NUM_M:[^ ]+]] = arith.ceildivui %{{[^,]+}}, %{{c16[_0-9]*}}
// S = the workspace's batches / B; grid x = Q blocks x S.
// CHECK: %[[WSB:[^ ]+]] = memref.dim %[[WSL]], %{{c0[_0-9]*}}
// CHECK: %[[S:[^ ]+]] = arith.divui %[[WSB]], %[[B]]
// CHECK: %[[GX:[^ ]+]] = arith.muli %[[NUM_M]], %[[S]]
// CHECK: scf.forall (%[[X:[^,]+]], %[[H:[^,]+]], %[[BI:[^)]+]]) in (%[[GX]], %{{[^,]+}}, %[[B]]) {
// CHECK: %[[MB:[^ ]+]] = arith.divui %[[X]], %[[S]]
// CHECK: %[[SI:[^ ]+]] = arith.remui %[[X]], %[[S]]
// CHECK: %[[NUM_N:[^ ]+]] = arith.ceildivui %{{[^,]+}}, %{{c64[_0-9]*}}
// Split s visits blocks [min(s*c, n), max(min(s*c + c, n), lo)), c = ceil(n/S).
// CHECK: %[[C:[^ ]+]] = arith.ceildivui %[[NUM_N]], %[[S]]
// CHECK: %[[START:[^ ]+]] = arith.muli %[[SI]], %[[C]]
// CHECK: %[[LO:[^ ]+]] = arith.minui %[[START]], %[[NUM_N]]
// CHECK: %[[START2:[^ ]+]] = arith.muli %[[SI]], %[[C]]
// CHECK: %[[END:[^ ]+]] = arith.addi %[[START2]], %[[C]]
// CHECK: %[[END2:[^ ]+]] = arith.minsi %[[END]], %[[NUM_N]]
// CHECK: %[[HI:[^ ]+]] = arith.maxsi %[[END2]], %[[LO]]
// CHECK: scf.for %{{[^ ]+}} = %[[LO]] to %[[HI]] step
// At S = 1 the split is the whole K/V range: it writes O (rounded) and LSE
// at batch b as a dense kernel does (the runtime launches no combine).
// CHECK: %[[ONE:[^ ]+]] = arith.cmpi eq, %[[S]], %c1
// CHECK: scf.if %[[ONE]] {
// CHECK: arith.truncf %{{.+}} : tensor<16x128xf32> to tensor<16x128xf16>
// CHECK: fa.store_tile %{{[^,]+}}, %[[O]][%[[BI]], %[[H]], %{{[^]]+}}] : tensor<16x128xf16>
// CHECK: fa.store_tile %{{[^,]+}}, %[[LSE]][%[[BI]], %[[H]], %{{[^]]+}}] : tensor<16xf32>
// CHECK: } else {
// Else the split's O (f32, not rounded) and LSE go to workspace batch s*B + b.
// CHECK: %[[SB:[^ ]+]] = arith.muli %[[SI]], %[[B]]
// CHECK: %[[AT:[^ ]+]] = arith.addi %[[SB]], %[[BI]]
// CHECK-NOT: arith.truncf
// CHECK: fa.store_tile %{{[^,]+}}, %[[WSO]][%[[AT]], %[[H]], %{{[^]]+}}] : tensor<16x128xf32>
// CHECK: fa.store_tile %{{[^,]+}}, %[[WSL]][%[[AT]], %[[H]], %{{[^]]+}}] : tensor<16xf32>
// CHECK: } {fa.args = array<i64: 0, 1, 2, 3, 4, 5, 6>, fa.causal, fa.kv_splits = "runtime", {{.*}}fa.split_direct
//
// The combine grid: (ceil(Lq / 16), Hq, B), online softmax over the splits;
// at S = 1 it does nothing. Each trip merges 4 splits (16 x 128 over 256
// threads: 8 floats a thread, 4 splits' loads within a third of gfx906's
// 128 VGPRs): their loads first, all in flight together, then one rescale.
// A split index past S - 1 loads split S - 1 again (min) with lse = -inf
// (weight 0); the max over the splits is maxnumf, O's sum fused
// multiply-adds.
// CHECK: scf.forall (%{{[^,]+}}, %[[CH:[^,]+]], %[[CB:[^)]+]]) in
// CHECK: %[[MANY:[^ ]+]] = arith.cmpi ne, %[[NS:[^,]+]], %c1
// CHECK-NEXT: scf.if %[[MANY]] {
// CHECK: %[[NEGINF:[^ ]+]] = arith.constant dense<0xFF800000> : tensor<16xf32>
// CHECK: %[[TRIPS:[^ ]+]] = arith.ceildivui %[[NS]], %c4
// CHECK: %[[LAST:[^ ]+]] = arith.subi %[[NS]], %c1
// CHECK: scf.for %[[TRIP:[^ ]+]] = %{{[^ ]+}} to %[[TRIPS]] step %{{[^ ]+}} iter_args(%[[MOLD:[^ ]+]] = %{{[^,]+}}, %[[LOLD:[^ ]+]] = %{{[^,]+}}, %[[ACC:[^ ]+]] = %{{[^)]+}})
// CHECK: %[[FIRST:[^ ]+]] = arith.muli %[[TRIP]], %c4
// CHECK: %[[S0:[^ ]+]] = arith.addi %[[FIRST]], %c0
// CHECK: %[[OK0:[^ ]+]] = arith.cmpi ult, %[[S0]], %[[NS]]
// CHECK: %[[SC0:[^ ]+]] = arith.minui %[[S0]], %[[LAST]]
// CHECK: %[[SB0:[^ ]+]] = arith.muli %[[SC0]], %{{[^ ]+}}
// CHECK: %[[AT0:[^ ]+]] = arith.addi %[[SB0]], %[[CB]]
// CHECK: %[[LSE0:[^ ]+]] = fa.load_tile %[[WSL]][%[[AT0]], %[[CH]], %{{[^]]+}}] : {{.*}} -> tensor<16xf32>
// CHECK: %[[L0:[^ ]+]] = arith.select %[[OK0]], %[[LSE0]], %[[NEGINF]]
// CHECK: %[[O0:[^ ]+]] = fa.load_tile %[[WSO]][%[[AT0]], %[[CH]], %{{[^]]+}}] : {{.*}} -> tensor<16x128xf32>
// CHECK: fa.load_tile %[[WSL]]
// CHECK: fa.load_tile %[[WSO]]
// CHECK: fa.load_tile %[[WSL]]
// CHECK: fa.load_tile %[[WSO]]
// CHECK: %[[S3:[^ ]+]] = arith.addi %[[FIRST]], %c3
// CHECK: %[[L3:[^ ]+]] = arith.select %{{[^,]+}}, %{{[^,]+}}, %[[NEGINF]]
// CHECK: %[[O3:[^ ]+]] = fa.load_tile %[[WSO]]
// CHECK-NOT: fa.load_tile
// CHECK: %[[M0:[^ ]+]] = arith.maxnumf %[[MOLD]], %[[L0]]
// CHECK: arith.maxnumf
// CHECK: arith.maxnumf
// CHECK: %[[MNEW:[^ ]+]] = arith.maxnumf %{{[^,]+}}, %[[L3]]
// CHECK: %[[MREF:[^ ]+]] = arith.select %{{[^,]+}}, %{{[^,]+}}, %[[MNEW]]
// alpha = exp(m_old - m), w = exp(lse_s - m) (as exp2 of log2(e) times).
// CHECK: %[[D1:[^ ]+]] = arith.subf %[[MOLD]], %[[MREF]]
// CHECK: %[[E1:[^ ]+]] = arith.mulf %[[D1]], %{{.+}}
// CHECK: %[[ALPHA:[^ ]+]] = math.exp2 %[[E1]]
// CHECK: %[[LS:[^ ]+]] = arith.mulf %[[LOLD]], %[[ALPHA]]
// CHECK: %[[AB:[^ ]+]] = fa.row_broadcast %[[ALPHA]]
// CHECK: %[[ACCS:[^ ]+]] = arith.mulf %[[ACC]], %[[AB]]
// CHECK: %[[D2:[^ ]+]] = arith.subf %[[L0]], %[[MREF]]
// CHECK: %[[E2:[^ ]+]] = arith.mulf %[[D2]], %{{.+}}
// CHECK: %[[W0:[^ ]+]] = math.exp2 %[[E2]]
// CHECK: %[[L1:[^ ]+]] = arith.addf %[[LS]], %[[W0]]
// CHECK: %[[WB0:[^ ]+]] = fa.row_broadcast %[[W0]]
// CHECK: math.fma %[[O0]], %[[WB0]], %[[ACCS]]
// CHECK: %[[D5:[^ ]+]] = arith.subf %[[L3]], %[[MREF]]
// CHECK: %[[W3:[^ ]+]] = math.exp2
// CHECK: %[[LNEW:[^ ]+]] = arith.addf %{{[^,]+}}, %[[W3]]
// CHECK: %[[WB3:[^ ]+]] = fa.row_broadcast %[[W3]]
// CHECK: %[[ACCNEW:[^ ]+]] = math.fma %[[O3]], %[[WB3]], %{{[^ ]+}}
// CHECK: scf.yield %[[MNEW]], %[[LNEW]], %[[ACCNEW]]
// CHECK: arith.truncf %{{.+}} : tensor<16x128xf32> to tensor<16x128xf16>
// CHECK: fa.store_tile %{{[^,]+}}, %[[O]][%[[CB]], %[[CH]], %{{[^]]+}}] : tensor<16x128xf16>
// CHECK: fa.store_tile %{{[^,]+}}, %[[LSE]][%[[CB]], %[[CH]], %{{[^]]+}}] : tensor<16xf32>
// CHECK: } {fa.args = array<i64: 0, 1, 2, 3, 4, 5, 6>, fa.causal, fa.combine,

// GQA packing: grid y over the 2 KV heads; the rows are the 4 query heads'
// Lq rows each (group = Hq / Hkv); the causal mask takes the position
// row mod Lq.
// PACK: %[[LQ:[^ ]+]] = memref.dim %{{[^,]+}}, %{{c2[_0-9]*}}
// PACK: %[[HKV:[^ ]+]] = memref.dim %{{[^,]+}}, %{{c1[_0-9]*}}
// PACK: %[[G:[^ ]+]] = arith.divui %{{[^,]+}}, %[[HKV]]
// PACK: %[[ROWS:[^ ]+]] = arith.muli %[[LQ]], %[[G]]
// PACK: scf.forall (%{{[^,]+}}, %[[KVH:[^,]+]], %[[BI:[^)]+]]) in (%{{[^,]+}}, %[[HKV]], %{{[^)]+}})
// PACK: fa.load_tile %{{[^[]+}}[%[[BI]], %[[KVH]], %[[M0:[0-9a-z_]+]]] group(%[[G]]) : {{.*}} -> tensor<16x128xf16>
// PACK: fa.load_tile %{{[^[]+}}[%[[BI]], %[[KVH]], %{{[^]]+}}] : {{.*}} -> tensor<64x128xf16>
// PACK: fa.tile_mask %{{[^ ]+}} rows(%[[M0]], %[[ROWS]]) cols(%{{[^)]+}}) period(%[[LQ]]) causal
// PACK: fa.store_tile %{{[^,]+}}, %{{[^[]+}}[%{{[^,]+}}, %[[KVH]], %[[M0]]] group(%[[G]]) : tensor<16x128xf32>
// PACK: } {fa.args = array<i64: 0, 1, 2, 3, 4, 5, 6>, fa.causal, fa.gqa_packed, fa.kv_splits = "runtime"
// The combine grid is not packed: one query head per grid y.
// PACK-NOT: group(
// PACK: fa.combine

// Packing without splitting: O and LSE stored packed.
// PACK-DENSE: fa.store_tile %{{[^,]+}}, %{{[^[]+}}[{{[^]]+}}] group(%{{[^)]+}}) : tensor<16x128xf16>
// PACK-DENSE: fa.store_tile %{{[^,]+}}, %{{[^[]+}}[{{[^]]+}}] group(%{{[^)]+}}) : tensor<16xf32>
// PACK-DENSE: fa.args = array<i64: 0, 1, 2, 3, 4>, fa.causal, fa.gqa_packed

// SHORT: scf.forall
// SHORT: %[[N:[^ ]+]] = arith.ceildivui %{{[^,]+}}, %{{c64[_0-9]*}} : index
// SHORT: %[[C:[^ ]+]] = arith.ceildivui %[[N]], %{{[^ ]+}} : index
// SHORT: %[[END:[^ ]+]] = arith.addi %{{[^,]+}}, %[[C]]
// SHORT: arith.subi %[[END]], %{{c1[_0-9]*}}
// OVERLAP: scf.forall
// OVERLAP: %[[N:[^ ]+]] = arith.ceildivui %{{[^,]+}}, %{{c64[_0-9]*}} : index
// OVERLAP: %[[C:[^ ]+]] = arith.ceildivui %[[N]], %{{[^ ]+}} : index
// OVERLAP: %[[START:[^ ]+]] = arith.muli %{{[^,]+}}, %[[C]]
// OVERLAP: %[[EARLY:[^ ]+]] = arith.subi %[[START]], %{{c1[_0-9]*}}
// OVERLAP: arith.maxsi %[[EARLY]], %{{c0[_0-9]*}}
// NO-RESCALE: fa.kv_splits = "runtime"
// NO-RESCALE: fa.load_tile %{{.*}} -> tensor<16xf32>
// NO-RESCALE-NOT: math.exp2
// NO-RESCALE: scf.yield
// NO-DIRECT: %[[NEVER:[^ ]+]] = arith.constant false
// NO-DIRECT-NEXT: scf.if %[[NEVER]] {
func.func @decode(%q: tensor<?x8x?x128xf16>, %k: tensor<?x2x?x128xf16>, %v: tensor<?x2x?x128xf16>) -> (tensor<?x8x?x128xf16>, tensor<?x8x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v causal : tensor<?x8x?x128xf16>, tensor<?x2x?x128xf16>, tensor<?x2x?x128xf16> -> tensor<?x8x?x128xf16>, tensor<?x8x?xf32>
  return %o, %lse : tensor<?x8x?x128xf16>, tensor<?x8x?xf32>
}

//--- bad-value.mlir
func.func @bad(%q: tensor<1x1x1x64xf16>, %k: tensor<1x1x8x64xf16>, %v: tensor<1x1x8x64xf16>) -> tensor<1x1x1x64xf16> {
  // expected-error @+1 {{kv-splits must be off, runtime or auto, got 'always'}}
  %o = fa.attention %q, %k, %v : tensor<1x1x1x64xf16>, tensor<1x1x8x64xf16>, tensor<1x1x8x64xf16> -> tensor<1x1x1x64xf16>
  return %o : tensor<1x1x1x64xf16>
}

//--- bad-pack.mlir
func.func @bad(%q: tensor<1x1x1x64xf16>, %k: tensor<1x1x8x64xf16>, %v: tensor<1x1x8x64xf16>) -> tensor<1x1x1x64xf16> {
  // expected-error @+1 {{gqa-pack must be off or on, got 'auto'}}
  %o = fa.attention %q, %k, %v : tensor<1x1x1x64xf16>, tensor<1x1x8x64xf16>, tensor<1x1x8x64xf16> -> tensor<1x1x1x64xf16>
  return %o : tensor<1x1x1x64xf16>
}

//--- two.mlir
func.func @two(%q: tensor<1x1x1x64xf16>, %k: tensor<1x1x8x64xf16>, %v: tensor<1x1x8x64xf16>, %q2: tensor<1x1x1x64xf16>, %k2: tensor<1x1x8x64xf16>, %v2: tensor<1x1x8x64xf16>) -> (tensor<1x1x1x64xf16>, tensor<1x1x1x64xf16>) {
  %o = fa.attention %q, %k, %v : tensor<1x1x1x64xf16>, tensor<1x1x8x64xf16>, tensor<1x1x8x64xf16> -> tensor<1x1x1x64xf16>
  // expected-error @+1 {{kv-splits=runtime takes one fa.attention per kernel function (the kernel ABI has one split-KV workspace), got 2}}
  %o2 = fa.attention %q2, %k2, %v2 : tensor<1x1x1x64xf16>, tensor<1x1x8x64xf16>, tensor<1x1x8x64xf16> -> tensor<1x1x1x64xf16>
  return %o, %o2 : tensor<1x1x1x64xf16>, tensor<1x1x1x64xf16>
}
