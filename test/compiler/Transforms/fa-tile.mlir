// RUN: split-file %s %t

// The loop nest, with explicit tiles so that it does not depend on the
// target's choice (BLOCK_M=64, BLOCK_N=32).
// RUN: fa-opt %t/loops.mlir -split-input-file --fa-tile="block-m=64 block-n=32" | FileCheck %s

// Automatic choice from the LDS budget model, and the `report` table.
// RUN: fa-opt %t/choice.mlir --fa-tile="target=gfx906 report=true" 2>/dev/null | FileCheck %s --check-prefix=GFX906
// RUN: fa-opt %t/choice.mlir --fa-tile="target=gfx906 report=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=GFX906-REPORT
// RUN: fa-opt %t/choice.mlir --fa-tile="target=gfx906 report=true kv-shared=off" 2>/dev/null | FileCheck %s --check-prefix=GFX906-OFF
// RUN: fa-opt %t/choice.mlir --fa-tile="target=gfx906 report=true kv-shared=off" 2>&1 >/dev/null | FileCheck %s --check-prefix=GFX906-OFF-REPORT
// RUN: fa-opt %t/choice.mlir --fa-tile="target=gfx906 kv-shared=on" | FileCheck %s --check-prefix=GFX906-ON
// RUN: fa-opt %t/choice.mlir --fa-tile="target=gfx906 block-m=64 block-n=64" | FileCheck %s --check-prefix=EXPLICIT-64
// RUN: fa-opt %t/choice.mlir --fa-tile="target=gfx906 block-m=64 block-n=64 kv-shared=off" | FileCheck %s --check-prefix=EXPLICIT-OFF
// RUN: fa-opt %t/choice.mlir --fa-tile="target=gfx906 block-m=64 block-n=32 kv-shared=on" | FileCheck %s --check-prefix=EXPLICIT-ON
// RUN: fa-opt %t/choice.mlir --fa-tile="target=sm_90 report=true" 2>/dev/null | FileCheck %s --check-prefix=SM90
// RUN: fa-opt %t/choice.mlir --fa-tile="target=sm_90 report=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=SM90-REPORT

// D=256 on gfx906 (and its host emulation): a thread of the 32x16 tile has
// one S column (1.5 LDS dwords per v_dot2 in Q·Kᵀ), so the chooser ranks
// tiles with two or more columns first, then occupancy: 64x32 at 1 wave
// per SIMD (4x2 of S per thread). sm_90 (the register estimate does not
// bind) keeps its own choice. Explicit 64x32 with kv-shared=auto shares
// the K/V slot because apart it does not fit; explicit 32x32 fits apart
// and stays apart.
// RUN: fa-opt %t/d256.mlir --fa-tile="target=gfx906 report=true" 2>&1 | FileCheck %s --check-prefix=D256
// RUN: fa-opt %t/d256.mlir --fa-tile="target=host" | FileCheck %s --check-prefix=D256-HOST
// RUN: fa-opt %t/d256.mlir --fa-tile="target=gfx906 block-m=64 block-n=32" | FileCheck %s --check-prefix=D256-EXPLICIT
// RUN: fa-opt %t/d256.mlir --fa-tile="target=gfx906 block-m=32 block-n=32" | FileCheck %s --check-prefix=D256-APART
// RUN: fa-opt %t/d256.mlir --fa-tile="target=sm_90" | FileCheck %s --check-prefix=D256-SM90
// D256: remark: tile config for gfx906: D=256 f16 BLOCK_M=64 BLOCK_N=32 waves=4 (256 threads) stages=2 (register-staged) lds_pad=0 (K and V share one LDS slot)
// D256-NEXT: thread grid 16x16, per thread 4x2 of S and 4x16 of O
// D256: fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 32, waves = 4, wave_size = 64, stages = 2, lds_pad = 0, kv_shared = true>
// D256-HOST: fa.tile = #fa.tile<target = "host", block_m = 64, block_n = 32, {{.*}}, kv_shared = true>
// D256-EXPLICIT: fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 32, {{.*}}, kv_shared = true>
// D256-APART: fa.tile = #fa.tile<target = "gfx906", block_m = 32, block_n = 32, waves = 4, wave_size = 64, stages = {{[12]}}, lds_pad = 0>
// D256-SM90: fa.tile = #fa.tile<target = "sm_90", block_m = 64, block_n = 64, waves = 8, wave_size = 32, stages = 1, lds_pad = 0, kv_shared = true>

// bf16: refused where it is only emulated, unless allowed; native on sm_90.
// RUN: fa-opt %t/bf16-gfx906.mlir --fa-tile -verify-diagnostics
// RUN: fa-opt %t/bf16.mlir --fa-tile="allow-bf16=true" | FileCheck %s --check-prefix=BF16
// RUN: fa-opt %t/bf16.mlir --fa-tile="target=sm_90" | FileCheck %s --check-prefix=BF16

// Functions that are not kernels of the expected shape.
// RUN: fa-opt %t/kernel-shape.mlir -split-input-file --fa-tile -verify-diagnostics

// Options that cannot work: each with the message that says why.
// RUN: fa-opt %t/over-budget.mlir --fa-tile="block-m=128 block-n=128" -verify-diagnostics
// RUN: fa-opt %t/no-fit.mlir --fa-tile -verify-diagnostics
// RUN: fa-opt %t/too-many-threads.mlir --fa-tile="block-m=64 block-n=64 waves=32" -verify-diagnostics
// RUN: fa-opt %t/not-divisible.mlir --fa-tile="block-m=24 block-n=24" -verify-diagnostics
// An odd D: no thread grid of 256 threads splits 59 columns, so the tiles
// are 64 wide (the memrefs stay 59); an even D is left as it is.
// RUN: fa-opt %t/padded-d.mlir --fa-tile 2>&1 | FileCheck %s --check-prefix=PADDED
// RUN: fa-opt %t/padded-d.mlir --fa-tile="block-m=64 block-n=16 waves=1" 2>&1 | FileCheck %s --check-prefix=PADDED-ONE-WAVE
// RUN: fa-opt %t/padded-d.mlir --fa-tile="block-m=24 block-n=24" -verify-diagnostics -split-input-file
// RUN: fa-opt %t/padded-half.mlir --fa-tile 2>&1 | FileCheck %s --check-prefix=PADDED-HALF
// RUN: fa-opt %t/padded-half.mlir --fa-tile="block-m=24 block-n=24" -verify-diagnostics
// RUN: fa-opt %t/registers.mlir --fa-tile="target=gfx906 block-m=128 block-n=32 waves=1" -verify-diagnostics
// On sm_90 the estimate does not bind: ptxas judges (fac reports its spills).
// RUN: fa-opt %t/registers-sm90.mlir --fa-tile="target=sm_90 block-m=128 block-n=32 waves=1" | FileCheck %s --check-prefix=SM90-REGS
// SM90-REGS: fa.tile = #fa.tile<target = "sm_90", block_m = 128, block_n = 32, waves = 1,
// Test-only planted bugs (compiler/Testing/PlantedBugs.h; e2e/mutants.py runs them).
// RUN: fa-opt %t/choice.mlir --fa-tile="test-plant-bug=gqa-modulo" | FileCheck %s --check-prefix=PLANT-GQA
// RUN: fa-opt %t/choice.mlir --fa-tile | FileCheck %s --check-prefix=NO-PLANT
// RUN: not fa-opt %t/choice.mlir --fa-tile="test-plant-bug=nonsense" 2>&1 | FileCheck %s --check-prefix=PLANT-UNKNOWN
// RUN: not fa-opt %t/choice.mlir --fa-tile="test-plant-bug=swap-kv-strides" 2>&1 | FileCheck %s --check-prefix=PLANT-OTHER-PASS
// PLANT-GQA: scf.forall (%{{.*}}, %[[H:.*]], %{{.*}}) in
// PLANT-GQA: arith.remui %[[H]], %{{.*}} : index
// NO-PLANT: scf.forall (%{{.*}}, %[[H:.*]], %{{.*}}) in
// NO-PLANT-NOT: arith.remui
// NO-PLANT: arith.divui %[[H]], %{{.*}} : index
// PLANT-UNKNOWN: error: unknown planted bug 'nonsense'; known: causal-bound-key, causal-bound-block, gqa-modulo, rescale-after, no-scale, l-no-rescale, combine-no-rescale, combine-tail-weighed, split-short, split-overlap, split-no-direct, cu-seqlens-off-by-one, packed-causal-last-row, window-skips-block, softcap-after-max, folded-max-unscaled, sink-per-block, mixed-query-at-start, no-ragged-mask, mask-skips-diagonal, swap-kv-strides, o-with-q-strides, lse-strides-ignored
// PLANT-OTHER-PASS: error: planted bug 'swap-kv-strides' is planted by fa-lower-to-gpu, not fa-tile

// Stages: 0 (auto), 1 or 2. Auto double-buffers unless the registers that
// hold block n+1 would cost occupancy (a remark says so); a forced stages=2
// that does not fit is an error.
// RUN: fa-opt %t/stages.mlir --fa-tile="stages=3" -verify-diagnostics
// RUN: fa-opt %t/stages-auto.mlir --fa-tile="target=gfx906 block-m=32 block-n=64 waves=2 kv-shared=off" -verify-diagnostics | FileCheck %s --check-prefix=STAGES-AUTO
// RUN: fa-opt %t/stages-forced.mlir --fa-tile="target=gfx906 block-m=64 block-n=64 waves=2 kv-shared=off stages=2" -verify-diagnostics
// RUN: fa-opt %t/stages-forced.mlir --fa-tile="target=gfx906 block-m=64 block-n=64 waves=2 kv-shared=off stages=1" | FileCheck %s --check-prefix=STAGES-FORCED-ONE
// STAGES-FORCED-ONE: stages = 1,
// RUN: fa-opt %t/choice.mlir --fa-tile="target=gfx906 stages=1" | FileCheck %s --check-prefix=STAGES-ONE
// STAGES-AUTO: stages = 1,
// STAGES-ONE: block_m = 64, block_n = 64, waves = 4, wave_size = 64, stages = 1, lds_pad = 0, kv_shared = true
// STAGES-ONE: block_m = 64, block_n = 32, waves = 4, wave_size = 64, stages = 1, lds_pad = 0, kv_shared = true
// RUN: fa-opt %t/negative.mlir --fa-tile="block-m=-64" -verify-diagnostics
// RUN: fa-opt %t/huge.mlir --fa-tile="block-m=4611686018427387904" -verify-diagnostics
// RUN: fa-opt %t/kv-shared.mlir --fa-tile="kv-shared=yes" -verify-diagnostics
// RUN: fa-opt %t/unknown-target.mlir --fa-tile="target=gfx1234" -verify-diagnostics

//--- loops.mlir

// Causal GQA (8 query heads over 2 KV heads), f16, with the LSE result.
// CHECK-LABEL: func.func @causal_gqa_lse
// Tensors become strided memrefs; O and LSE become trailing output
// arguments and the function returns nothing.
// CHECK-SAME: (%[[Q:[^:]+]]: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>,
// CHECK-SAME: %[[K:[^:]+]]: memref<?x2x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>,
// CHECK-SAME: %[[V:[^:]+]]: memref<?x2x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>,
// CHECK-SAME: %[[O:[^:]+]]: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>,
// CHECK-SAME: %[[LSE:[^:]+]]: memref<?x8x?xf32, strided<[?, ?, 1], offset: ?>>) {
// CHECK: %[[BATCH:[^ ]+]] = memref.dim %[[Q]], %{{c0[_0-9]*}}
// CHECK: %[[HQ:[^ ]+]] = memref.dim %[[Q]], %{{c1[_0-9]*}}
// CHECK: %[[LQ:[^ ]+]] = memref.dim %[[Q]], %{{c2[_0-9]*}}
// CHECK: %[[HKV:[^ ]+]] = memref.dim %[[K]], %{{c1[_0-9]*}}
// CHECK: %[[LK:[^ ]+]] = memref.dim %[[K]], %{{c2[_0-9]*}}
// CHECK: %[[GROUP:[^ ]+]] = arith.divui %[[HQ]], %[[HKV]]
// CHECK: %[[NUM_M:[^ ]+]] = arith.ceildivui %[[LQ]], %{{c64[_0-9]*}}
//
// The grid is outermost: one workgroup per (Q block, head, batch).
// CHECK: scf.forall (%[[MB:[^,]+]], %[[H:[^,]+]], %[[B:[^)]+]]) in (%[[NUM_M]], %[[HQ]], %[[BATCH]]) {
// CHECK: %[[M0:[^ ]+]] = arith.muli %[[MB]], %{{c64[_0-9]*}}
// CHECK: %[[HK:[^ ]+]] = arith.divui %[[H]], %[[GROUP]]
// The Q block is loaded once, before the KV loop, with the query head.
// CHECK: %[[QT:[^ ]+]] = fa.load_tile %[[Q]][%[[B]], %[[H]], %[[M0]]] : {{.*}} -> tensor<64x64xf16>
// CHECK-NOT: fa.load_tile
// Causal: the KV loop ends at the diagonal, min(max(m0 + BM - Lq + Lk, 0), Lk).
// CHECK: %[[E0:[^ ]+]] = arith.addi %[[M0]], %{{c64[_0-9]*}}
// CHECK: %[[E1:[^ ]+]] = arith.subi %[[E0]], %[[LQ]]
// CHECK: %[[E2:[^ ]+]] = arith.addi %[[E1]], %[[LK]]
// CHECK: %[[E3:[^ ]+]] = arith.maxsi %[[E2]], %{{c0[_0-9]*}}
// CHECK: %[[KV_END:[^ ]+]] = arith.minsi %[[E3]], %[[LK]]
// CHECK: %[[NUM_N:[^ ]+]] = arith.ceildivui %[[KV_END]], %{{c32[_0-9]*}}
// scale * log2(e) = 0.125 * 1.4426950408889634, folded once: for the
// scores and for their row max.
// CHECK: %[[SCALE:[^ ]+]] = arith.constant dense<0.180336878> : tensor<64x32xf32>
// CHECK: %[[ROW_SCALE:[^ ]+]] = arith.constant dense<0.180336878> : tensor<64xf32>
// CHECK-NOT: fa.load_tile
// CHECK: %[[LOOP:[^ :]+]]:3 = scf.for %[[N:[^ ]+]] = %{{[^ ]+}} to %[[NUM_N]] step %{{[^ ]+}} iter_args(%[[M_OLD:[^ ]+]] = %{{[^ ]+}}, %[[L_OLD:[^ ]+]] = %{{[^ ]+}}, %[[ACC:[^ ]+]] = %{{[^ ]+}})
// K and V blocks stream inside the loop, from KV head h / (Hq / Hkv).
// CHECK: %[[N0:[^ ]+]] = arith.muli %[[N]], %{{c32[_0-9]*}}
// CHECK: %[[KT:[^ ]+]] = fa.load_tile %[[K]][%[[B]], %[[HK]], %[[N0]]] : {{.*}} -> tensor<32x64xf16>
// CHECK: %[[VT:[^ ]+]] = fa.load_tile %[[V]][%[[B]], %[[HK]], %[[N0]]] : {{.*}} -> tensor<32x64xf16>
// CHECK: %[[S:[^ ]+]] = fa.tile_dot %[[QT]], %[[KT]] transpose_rhs : tensor<64x64xf16>, tensor<32x64xf16> -> tensor<64x32xf32>
// Ragged edges and the causal mask, on the raw scores (the scale folds
// into the exponent: no multiply per score).
// CHECK-NOT: arith.mulf
// CHECK: %[[SM:[^ ]+]] = fa.tile_mask %[[S]] rows(%[[M0]], %[[LQ]]) cols(%[[N0]], %[[LK]]) causal : tensor<64x32xf32>
// The row max of the raw scores, scaled: the max of the scaled ones.
// CHECK: %[[RMAX:[^ ]+]] = fa.row_reduce max %[[SM]]
// CHECK: %[[RMAX2:[^ ]+]] = arith.mulf %[[RMAX]], %[[ROW_SCALE]] : tensor<64xf32>
// CHECK: %[[M_NEW:[^ ]+]] = arith.maxnumf %[[M_OLD]], %[[RMAX2]] : tensor<64xf32>
// CHECK: %[[M_REF:[^ ]+]] = arith.select %{{.+}}, %{{.+}}, %[[M_NEW]]
// alpha = exp2(m_old - m_ref)
// CHECK: %[[DM:[^ ]+]] = arith.subf %[[M_OLD]], %[[M_REF]]
// CHECK: %[[ALPHA:[^ ]+]] = math.exp2 %[[DM]] : tensor<64xf32>
// P = exp2(fma(s, scale * log2(e), -m_ref))
// CHECK: %[[NEG:[^ ]+]] = arith.negf %[[M_REF]] : tensor<64xf32>
// CHECK: %[[NEG_B:[^ ]+]] = fa.row_broadcast %[[NEG]] : tensor<64xf32> -> tensor<64x32xf32>
// CHECK: %[[T:[^ ]+]] = math.fma %[[SM]], %[[SCALE]], %[[NEG_B]] : tensor<64x32xf32>
// CHECK: %[[P:[^ ]+]] = math.exp2 %[[T]] : tensor<64x32xf32>
// l = alpha * l + rowsum(P), the sum left in each thread's part (partial):
// summed across the row's threads after the loop, not every block.
// CHECK: %[[ROWSUM:[^ ]+]] = fa.row_reduce add %[[P]] partial : tensor<64x32xf32> -> tensor<64xf32>
// CHECK: %[[L_SCALED:[^ ]+]] = arith.mulf %[[ALPHA]], %[[L_OLD]] : tensor<64xf32>
// CHECK: %[[L_NEW:[^ ]+]] = arith.addf %[[L_SCALED]], %[[ROWSUM]] : tensor<64xf32>
// CHECK-NOT: fa.row_combine
// O is rescaled by alpha BEFORE P·V is accumulated onto it.
// CHECK: %[[ALPHA_B:[^ ]+]] = fa.row_broadcast %[[ALPHA]] : tensor<64xf32> -> tensor<64x64xf32>
// CHECK: %[[RESCALED:[^ ]+]] = arith.mulf %[[ACC]], %[[ALPHA_B]] : tensor<64x64xf32>
// CHECK: %[[P16:[^ ]+]] = arith.truncf %[[P]] : tensor<64x32xf32> to tensor<64x32xf16>
// CHECK: %[[ACC_NEW:[^ ]+]] = fa.tile_dot %[[P16]], %[[VT]], %[[RESCALED]] : tensor<64x32xf16>, tensor<32x64xf16>, tensor<64x64xf32> -> tensor<64x64xf32>
// CHECK: scf.yield %[[M_NEW]], %[[L_NEW]], %[[ACC_NEW]]
// CHECK-NEXT: }
// Epilogue: l's parts summed; O = acc / l, stored with the query head;
// LSE = ln2 * (m + log2 l).
// CHECK: %[[L:[^ ]+]] = fa.row_combine %[[LOOP]]#1 : tensor<64xf32> -> tensor<64xf32>
// CHECK: fa.store_tile %{{.+}}, %[[O]][%[[B]], %[[H]], %[[M0]]] : tensor<64x64xf16>
// CHECK: %[[LOG_L:[^ ]+]] = math.log2 %[[L]] : tensor<64xf32>
// CHECK: %[[LN2:[^ ]+]] = arith.constant dense<0.693147182> : tensor<64xf32>
// CHECK: %[[LSE2:[^ ]+]] = arith.addf %[[LOOP]]#0, %[[LOG_L]]
// CHECK: arith.mulf %[[LSE2]], %[[LN2]]
// CHECK: fa.store_tile %{{.+}}, %[[LSE]][%[[B]], %[[H]], %[[M0]]] : tensor<64xf32>, memref<?x8x?xf32, strided<[?, ?, 1], offset: ?>>
// CHECK-NEXT: } {{.*}}fa.causal, fa.scale = 1.250000e-01 : f32, fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 32, waves = 4, wave_size = 64, stages = 2, lds_pad = 0>, mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
// CHECK-NEXT: return{{$}}
func.func @causal_gqa_lse(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> (tensor<?x8x?x64xf16>, tensor<?x8x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v causal scale(0.125) : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
  return %o, %lse : tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
}

// -----

// Not causal, f32, default scale 1/sqrt(32); Lq and Lk are not multiples of
// the blocks.
// CHECK-LABEL: func.func @f32_not_causal
// CHECK-SAME: (%[[Q:[^:]+]]: memref<2x4x100x32xf32, strided<[?, ?, ?, 1], offset: ?>>,
// CHECK-SAME: %[[K:[^:]+]]: memref<2x4x300x32xf32, strided<[?, ?, ?, 1], offset: ?>>,
// CHECK-SAME: %[[V:[^:]+]]: memref<2x4x300x32xf32, strided<[?, ?, ?, 1], offset: ?>>,
// CHECK-SAME: %[[O:[^:]+]]: memref<2x4x100x32xf32, strided<[?, ?, ?, 1], offset: ?>>) {
// CHECK: %[[LQ:[^ ]+]] = memref.dim %[[Q]], %{{c2[_0-9]*}}
// CHECK: %[[LK:[^ ]+]] = memref.dim %[[K]], %{{c2[_0-9]*}}
// CHECK: scf.forall
// CHECK: %[[M0:[^ ]+]] = arith.muli
// CHECK-NOT: arith.minsi
// The KV loop visits every block: ceildiv(Lk, BN).
// CHECK: %[[NUM_N:[^ ]+]] = arith.ceildivui %[[LK]], %{{c32[_0-9]*}}
// 1/sqrt(32) * log2(e)
// CHECK: %[[SCALE:[^ ]+]] = arith.constant dense<0.255034864> : tensor<64x32xf32>
// CHECK: scf.for %[[N:[^ ]+]] = %{{[^ ]+}} to %[[NUM_N]] step
// CHECK: %[[N0:[^ ]+]] = arith.muli %[[N]]
// CHECK: fa.tile_mask %{{.+}} rows(%[[M0]], %[[LQ]]) cols(%[[N0]], %[[LK]]) : tensor<64x32xf32>
// CHECK: math.fma %{{.+}}, %[[SCALE]], %{{.+}} : tensor<64x32xf32>
// f32 P feeds the product as it is.
// CHECK-NOT: arith.truncf
// CHECK: fa.tile_dot %{{.+}}, %{{.+}}, %{{.+}} : tensor<64x32xf32>, tensor<32x32xf32>, tensor<64x32xf32> -> tensor<64x32xf32>
// CHECK-NOT: arith.truncf
// CHECK: fa.store_tile %{{.+}}, %[[O]]{{.*}} : tensor<64x32xf32>
// CHECK-NOT: math.log2
// CHECK-NEXT: } {{.*}}fa.scale = 0.176776692 : f32, fa.tile = #fa.tile<
// CHECK-NEXT: return{{$}}
func.func @f32_not_causal(%q: tensor<2x4x100x32xf32>, %k: tensor<2x4x300x32xf32>, %v: tensor<2x4x300x32xf32>) -> tensor<2x4x100x32xf32> {
  %o = fa.attention %q, %k, %v : tensor<2x4x100x32xf32>, tensor<2x4x300x32xf32>, tensor<2x4x300x32xf32> -> tensor<2x4x100x32xf32>
  return %o : tensor<2x4x100x32xf32>
}

// -----

// Two attentions in one kernel: one grid each, each storing its own output.
// CHECK-LABEL: func.func @two_attentions
// CHECK-SAME: %[[O1:[^:]+]]: memref<1x8x128x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %[[O2:[^:]+]]: memref<1x8x128x64xf16, strided<[?, ?, ?, 1], offset: ?>>) {
// CHECK: scf.forall
// CHECK: fa.store_tile %{{.+}}, %[[O1]]
// CHECK: } {{.*}}fa.causal
// CHECK: scf.forall
// CHECK: fa.store_tile %{{.+}}, %[[O2]]
// CHECK: } {{.*}}fa.scale = 1.250000e-01
func.func @two_attentions(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> (tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>) {
  %o1 = fa.attention %q, %k, %v causal : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  %o2 = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o1, %o2 : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>
}

// -----

// A function without fa.attention is not a kernel: left untouched.
// CHECK-LABEL: func.func @no_attention(%{{[^:]+}}: tensor<4xf32>) -> tensor<4xf32> {
// CHECK-NEXT: return %{{.+}} : tensor<4xf32>
func.func @no_attention(%x: tensor<4xf32>) -> tensor<4xf32> {
  return %x : tensor<4xf32>
}

//--- choice.mlir

// gfx906 aims for 2 waves per SIMD, counting the LDS each workgroup takes
// (a CU's 64 KiB shared by its workgroups) as well as the registers. At D=64,
// 64x64 with separate K and V slots plus the padding reserved for fa-pad-lds
// (33792 bytes) leaves room for one workgroup per CU; with K and V in one
// slot (25344) two fit, so the chooser shares the slot. At D=128 the largest
// tile that reaches 2 waves is 64x32 with K and V shared.
// GFX906-LABEL: func.func @d64
// GFX906: fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 64, waves = 4, wave_size = 64, stages = 2, lds_pad = 0, kv_shared = true>
// GFX906-LABEL: func.func @d128
// GFX906: fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 32, waves = 4, wave_size = 64, stages = 2, lds_pad = 0, kv_shared = true>

// GFX906-REPORT: remark: tile config for gfx906: D=64 f16 BLOCK_M=64 BLOCK_N=64 waves=4 (256 threads) stages=2 (register-staged) lds_pad=0 (K and V share one LDS slot)
// GFX906-REPORT-NEXT: thread grid 16x16, per thread 4x4 of S and 4x4 of O
// GFX906-REPORT-NEXT: Q block LDS 8192
// GFX906-REPORT-NEXT: K/V block (one slot) LDS 8192
// GFX906-REPORT-NEXT: S block (f32) registers 16384
// GFX906-REPORT-NEXT: P block LDS 8192
// GFX906-REPORT-NEXT: O block (f32) registers 16384
// GFX906-REPORT-NEXT: statistics m, l (f32) registers 512
// GFX906-REPORT-NEXT: padding LDS 0
// GFX906-REPORT-NEXT: K or V block n+1 registers 8192
// GFX906-REPORT-NEXT: LDS total 24576 (+10% margin = 27034 of 65536)
// GFX906-REPORT-NEXT: registers per thread (estimate): 112 (8 hold block n+1: register-staged) of 256 -> 2 waves per SIMD (estimate)
// GFX906-REPORT-NEXT: LDS allows 2 waves per SIMD (2 workgroups per CU)
// GFX906-REPORT: remark: tile config for gfx906: D=128 f16 BLOCK_M=64 BLOCK_N=32 waves=4 (256 threads) stages=2 (register-staged) lds_pad=0 (K and V share one LDS slot)
// GFX906-REPORT-NEXT: thread grid 16x16, per thread 4x2 of S and 4x8 of O
// GFX906-REPORT-NEXT: Q block LDS 16384
// GFX906-REPORT-NEXT: K/V block (one slot) LDS 8192
// GFX906-REPORT-NEXT: S block (f32) registers 8192
// GFX906-REPORT-NEXT: P block LDS 4096
// GFX906-REPORT: LDS total 28672 (+10% margin = 31540 of 65536)
// GFX906-REPORT-NEXT: registers per thread (estimate): 124 (8 hold block n+1: register-staged) of 256 -> 2 waves per SIMD (estimate)
// GFX906-REPORT-NEXT: LDS allows 2 waves per SIMD (2 workgroups per CU)

// kv-shared=off: the largest tiles with separate K and V slots that still
// reach 2 waves per SIMD.
// GFX906-OFF-LABEL: func.func @d64
// GFX906-OFF: fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 32, waves = 4, wave_size = 64, stages = 2, lds_pad = 0>
// GFX906-OFF-LABEL: func.func @d128
// GFX906-OFF: fa.tile = #fa.tile<target = "gfx906", block_m = 32, block_n = 32, waves = 4, wave_size = 64, stages = 2, lds_pad = 0>
// GFX906-OFF-REPORT: remark: tile config for gfx906: D=64 f16 BLOCK_M=64 BLOCK_N=32 waves=4 (256 threads) stages=2 (register-staged) lds_pad=0{{$}}
// GFX906-OFF-REPORT-NEXT: thread grid
// GFX906-OFF-REPORT-NEXT: Q block LDS 8192
// GFX906-OFF-REPORT-NEXT: K block LDS 4096
// GFX906-OFF-REPORT-NEXT: V block LDS 4096
// GFX906-OFF-REPORT: LDS total 20480 (+10% margin = 22528 of 65536)
// GFX906-OFF-REPORT-NEXT: registers per thread (estimate): 88 (4 hold block n+1: register-staged) of 256 -> 2 waves per SIMD (estimate)
// GFX906-OFF-REPORT-NEXT: LDS allows 3 waves per SIMD (3 workgroups per CU)
// GFX906-OFF-REPORT: remark: tile config for gfx906: D=128 f16 BLOCK_M=32 BLOCK_N=32 waves=4 (256 threads) stages=2 (register-staged) lds_pad=0{{$}}
// GFX906-OFF-REPORT: LDS total 26624 (+10% margin = 29287 of 65536)
// GFX906-OFF-REPORT-NEXT: registers per thread (estimate): 72 (8 hold block n+1: register-staged) of 256 -> 3 waves per SIMD (estimate)
// GFX906-OFF-REPORT-NEXT: LDS allows 2 waves per SIMD (2 workgroups per CU)

// kv-shared=on at D=64 is what auto chose; explicit tiles with kv-shared=auto
// share K and V only when that is what lets LDS reach the occupancy goal:
// 64x64 at D=64 (1 workgroup per CU apart, 2 shared) does, 64x32 (3
// workgroups per CU apart, the `loops` case above) does not.
// GFX906-ON-LABEL: func.func @d64
// GFX906-ON: fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 64, {{.*}}, kv_shared = true>
// GFX906-ON-LABEL: func.func @d128
// GFX906-ON: fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 32, {{.*}}, kv_shared = true>
// EXPLICIT-64-LABEL: func.func @d64
// EXPLICIT-64: fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 64, waves = 4, wave_size = 64, stages = 2, lds_pad = 0, kv_shared = true>
// EXPLICIT-OFF-LABEL: func.func @d64
// EXPLICIT-OFF: fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 64, waves = 4, wave_size = 64, stages = 2, lds_pad = 0>
// EXPLICIT-ON-LABEL: func.func @d64
// EXPLICIT-ON: fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 32, waves = 4, wave_size = 64, stages = 2, lds_pad = 0, kv_shared = true>

// sm_90 does not count LDS towards occupancy and its goal is 1 wave; the
// chooser caps the blocks at 128x64 (the best measured on the H200, run 7),
// the register estimate does not bind there (ptxas decides), K and V keep
// their own slots, and 16-bit tiles are budgeted as f32 (kept widened in
// LDS).
// SM90-LABEL: func.func @d64
// SM90: fa.tile = #fa.tile<target = "sm_90", block_m = 128, block_n = 64, waves = 8, wave_size = 32, stages = 1, lds_pad = 0>
// SM90-LABEL: func.func @d128
// SM90: fa.tile = #fa.tile<target = "sm_90", block_m = 128, block_n = 64, waves = 8, wave_size = 32, stages = 1, lds_pad = 0>

// SM90-REPORT: remark: tile config for sm_90: D=64 f16 BLOCK_M=128 BLOCK_N=64 waves=8 (256 threads) stages=1 (the target's default: stages=2 measured no faster) lds_pad=0{{$}}
// SM90-REPORT-NEXT: thread grid 16x16, per thread 8x4 of S and 8x4 of O
// SM90-REPORT-NEXT: Q block LDS 32768
// SM90-REPORT: LDS total 98304 (+10% margin = 108135 of 232448)
// SM90-REPORT-NEXT: registers per thread (estimate): 192 of 255 -> 1 waves per SIMD (estimate); not binding here, ptxas decides
// SM90-REPORT-NEXT: 16-bit tiles are kept as f32 in LDS (fa-promote widen=auto)
// SM90-REPORT-NOT: LDS allows
// SM90-REPORT: remark: tile config for sm_90: D=128 f16 BLOCK_M=128 BLOCK_N=64 waves=8 (256 threads) stages=1 (the target's default: stages=2 measured no faster) lds_pad=0{{$}}
// SM90-REPORT-NEXT: thread grid 16x16, per thread 8x4 of S and 8x8 of O
// SM90-REPORT-NEXT: Q block LDS 65536
// SM90-REPORT-NEXT: K block LDS 32768
// SM90-REPORT-NEXT: V block LDS 32768
// SM90-REPORT-NEXT: S block (f32) registers 32768
// SM90-REPORT-NEXT: P block LDS 32768
// SM90-REPORT-NEXT: O block (f32) registers 65536
// SM90-REPORT: LDS total 163840 (+10% margin = 180224 of 232448)
// SM90-REPORT-NEXT: registers per thread (estimate): 256 of 255 -> 0 waves per SIMD (estimate); not binding here, ptxas decides
// SM90-REPORT-NOT: LDS allows


func.func @d64(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}

func.func @d128(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}

//--- d256.mlir
func.func @d256(%q: tensor<?x?x?x256xf16>, %k: tensor<?x?x?x256xf16>, %v: tensor<?x?x?x256xf16>) -> tensor<?x?x?x256xf16> {
  %o = fa.attention %q, %k, %v causal : tensor<?x?x?x256xf16>, tensor<?x?x?x256xf16>, tensor<?x?x?x256xf16> -> tensor<?x?x?x256xf16>
  return %o : tensor<?x?x?x256xf16>
}

//--- bf16-gfx906.mlir

func.func @bf16(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) -> tensor<1x8x128x64xbf16> {
  // expected-error @+1 {{'fa.attention' op bf16 is software-emulated on gfx906 (no native bf16 arithmetic): slow and lossy; use f16, or pass allow-bf16 to accept it}}
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return %o : tensor<1x8x128x64xbf16>
}

//--- bf16.mlir

// BF16-LABEL: func.func @bf16
// BF16: fa.load_tile {{.*}} -> tensor<{{[0-9]+}}x64xbf16>
// BF16: scf.for
// BF16: arith.truncf %{{.+}} : tensor<{{[0-9x]+}}xf32> to tensor<{{[0-9x]+}}xbf16>
// BF16: fa.store_tile %{{.+}} : tensor<{{[0-9]+}}x64xbf16>
// BF16: fa.tile = #fa.tile<
func.func @bf16(%q: tensor<1x8x128x64xbf16>, %k: tensor<1x8x128x64xbf16>, %v: tensor<1x8x128x64xbf16>) -> tensor<1x8x128x64xbf16> {
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16>, tensor<1x8x128x64xbf16> -> tensor<1x8x128x64xbf16>
  return %o : tensor<1x8x128x64xbf16>
}

//--- kernel-shape.mlir

func.func @nested(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  %r = scf.execute_region -> tensor<1x8x128x64xf16> {
    // expected-error @+1 {{'fa.attention' op must be at the top level of its function}}
    %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
    scf.yield %o : tensor<1x8x128x64xf16>
  }
  return %r : tensor<1x8x128x64xf16>
}

// -----

func.func @computed_operand(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  %q2 = arith.addf %q, %q : tensor<1x8x128x64xf16>
  // expected-error @+1 {{'fa.attention' op operand #0 must be an argument of the kernel function}}
  %o = fa.attention %q2, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @argument_used_elsewhere(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{'fa.attention' op kernel argument #2 has a use other than fa.attention}}
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  %unused = arith.negf %v : tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

// K and V from one tensor: the kernel ABI has a buffer per role, so a caller
// passing separate K and V buffers would read the wrong one.
func.func @same_key_value(%q: tensor<1x8x128x64xf16>, %kv: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{'fa.attention' op operands #1 (key) and #2 (value) are the same kernel argument; the kernel ABI has one buffer per role: pass them as separate arguments}}
  %o = fa.attention %q, %kv, %kv : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @self_attention(%x: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{'fa.attention' op operands #0 (query) and #1 (key) are the same kernel argument}}
  %o = fa.attention %x, %x, %x : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

func.func @result_used(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{'fa.attention' op results may only be returned by the kernel function}}
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  %o2 = arith.negf %o : tensor<1x8x128x64xf16>
  return %o2 : tensor<1x8x128x64xf16>
}

// -----

func.func @returns_other(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>, %x: tensor<4xf32>) -> (tensor<1x8x128x64xf16>, tensor<4xf32>) {
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  // expected-error @+1 {{'func.return' op a kernel function may only return fa.attention results}}
  return %o, %x : tensor<1x8x128x64xf16>, tensor<4xf32>
}

// -----

func.func @returns_twice(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> (tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>) {
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  // expected-error @+1 {{'func.return' op returns the same value twice}}
  return %o, %o : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>
}

// -----

func.func @output_not_returned(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128xf32> {
  // expected-error @+1 {{'fa.attention' op output is not returned}}
  %o, %lse = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>, tensor<1x8x128xf32>
  return %lse : tensor<1x8x128xf32>
}

//--- over-budget.mlir

// The seed's example: 128x128 blocks at D=128 need twice gfx906's LDS.
func.func @over_budget(%q: tensor<1x8x1024x128xf16>, %k: tensor<1x8x1024x128xf16>, %v: tensor<1x8x1024x128xf16>) -> tensor<1x8x1024x128xf16> {
  // expected-error @+1 {{'fa.attention' op BLOCK_M=128 BLOCK_N=128 with D=128 f16 needs 131072 bytes of LDS (144180 with the 10% margin), gfx906 has 65536}}
  %o = fa.attention %q, %k, %v : tensor<1x8x1024x128xf16>, tensor<1x8x1024x128xf16>, tensor<1x8x1024x128xf16> -> tensor<1x8x1024x128xf16>
  return %o : tensor<1x8x1024x128xf16>
}

//--- no-fit.mlir

// Even 16x16 blocks of f32 at D=512 overflow 64 KiB (Q, K and V: 96 KiB).
func.func @no_fit(%q: tensor<1x1x64x512xf32>, %k: tensor<1x1x64x512xf32>, %v: tensor<1x1x64x512xf32>) -> tensor<1x1x64x512xf32> {
  // expected-error @+1 {{'fa.attention' op no tile configuration for D=512 f32 fits gfx906 (65536 bytes of LDS, 256 registers per thread)}}
  %o = fa.attention %q, %k, %v : tensor<1x1x64x512xf32>, tensor<1x1x64x512xf32>, tensor<1x1x64x512xf32> -> tensor<1x1x64x512xf32>
  return %o : tensor<1x1x64x512xf32>
}

//--- too-many-threads.mlir

func.func @too_many_threads(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{'fa.attention' op BLOCK_M=64 BLOCK_N=64 D=64 cannot be split over 2048 threads (32 waves of 64, at most 1024 threads)}}
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

//--- not-divisible.mlir

// 24 rows do not divide over 256 threads in whole rows of lanes.
func.func @not_divisible(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{'fa.attention' op BLOCK_M=24 BLOCK_N=24 D=64 cannot be split over 256 threads (4 waves of 64, at most 1024 threads)}}
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

//--- registers.mlir

// One wave for a 128x32 tile: fits gfx906's LDS, not its registers.
func.func @registers(%q: tensor<1x8x1024x64xf16>, %k: tensor<1x8x1024x64xf16>, %v: tensor<1x8x1024x64xf16>) -> tensor<1x8x1024x64xf16> {
  // expected-error @+1 {{'fa.attention' op BLOCK_M=128 BLOCK_N=32 with D=64 needs about 456 registers per thread (estimate), gfx906 has 256; shrink BLOCK_M before accepting spills}}
  %o = fa.attention %q, %k, %v : tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16> -> tensor<1x8x1024x64xf16>
  return %o : tensor<1x8x1024x64xf16>
}

//--- registers-sm90.mlir

func.func @registers(%q: tensor<1x8x1024x64xf16>, %k: tensor<1x8x1024x64xf16>, %v: tensor<1x8x1024x64xf16>) -> tensor<1x8x1024x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16>, tensor<1x8x1024x64xf16> -> tensor<1x8x1024x64xf16>
  return %o : tensor<1x8x1024x64xf16>
}

//--- stages.mlir

func.func @stages(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{'fa.attention' op stages must be 0 (auto), 1 or 2, got 3}}
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

//--- stages-auto.mlir

// f32 at D=64, 32x64 over 128 threads: single-buffered about 104 registers
// (2 waves per SIMD); the 32 that would hold K or V of block n+1 make it
// 136 (1 wave).
func.func @stages_auto(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>) -> tensor<1x8x128x64xf32> {
  // expected-remark @+1 {{fa-tile: single-buffered: the 32 registers per thread that hold K/V block n+1 would lower the occupancy (estimate 136 registers)}}
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return %o : tensor<1x8x128x64xf32>
}

//--- stages-forced.mlir

// f16 at D=128, 64x64 over 128 threads: 256 registers single-buffered (the
// most a gfx906 lane has), 288 with K or V of block n+1.
func.func @stages_forced(%q: tensor<1x8x128x128xf16>, %k: tensor<1x8x128x128xf16>, %v: tensor<1x8x128x128xf16>) -> tensor<1x8x128x128xf16> {
  // expected-error @+1 {{'fa.attention' op BLOCK_M=64 BLOCK_N=64 with D=128 needs about 288 registers per thread (estimate, 32 of them for double buffering), gfx906 has 256; use stages=1 or shrink BLOCK_M}}
  %o = fa.attention %q, %k, %v : tensor<1x8x128x128xf16>, tensor<1x8x128x128xf16>, tensor<1x8x128x128xf16> -> tensor<1x8x128x128xf16>
  return %o : tensor<1x8x128x128xf16>
}

//--- huge.mlir

// Used to overflow the budget's arithmetic ("LDS total -9223372036854760192").
func.func @huge(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{'fa.attention' op tile sizes must be at most 1024 rows (block-m, block-n) and 64 waves, got block-m=4611686018427387904 block-n=0 waves=0}}
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

//--- negative.mlir

func.func @negative(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{'fa.attention' op tile sizes must be positive, got block-m=-64 block-n=0 waves=0}}
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

//--- kv-shared.mlir

func.func @kv_shared(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  // expected-error @+1 {{'fa.attention' op kv-shared must be auto, on or off, got 'yes'}}
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

//--- unknown-target.mlir

// expected-error @+1 {{unknown target 'gfx1234'; known targets: gfx906, sm_90, sm_80, host}}
module {
  func.func @unknown_target(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
    %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
    return %o : tensor<1x8x128x64xf16>
  }
}

//--- padded-d.mlir

// PADDED: remark: fa-tile: D=59 padded to 64 in LDS and registers: no thread grid of 256 threads that fits the budget splits D=59; the 5 columns past D are zero and never stored
// PADDED-LABEL: func.func @odd
// PADDED: fa.load_tile %{{.*}} : memref<1x4x100x59xf16, {{.*}}> -> tensor<{{[0-9]+}}x64xf16>
// PADDED: fa.load_tile %{{.*}} : memref<1x4x100x59xf16, {{.*}}> -> tensor<{{[0-9]+}}x64xf16>
// PADDED: fa.tile_dot {{.*}} -> tensor<{{[0-9]+}}x64xf32>
// PADDED: fa.store_tile %{{.*}} : tensor<{{[0-9]+}}x64xf16>, memref<1x4x100x59xf16
// PADDED-NOT: padded
// PADDED-LABEL: func.func @even
// PADDED: fa.store_tile %{{.*}} : tensor<{{[0-9]+}}x58xf16>, memref<1x4x100x58xf16
// One wave of 64 threads splits 59 columns over single lanes (tc = 1):
// nothing to pad.
// PADDED-ONE-WAVE-NOT: padded
// PADDED-ONE-WAVE: fa.store_tile %{{.*}} : tensor<64x59xf16>, memref<1x4x100x59xf16
func.func @odd(%q: tensor<1x4x100x59xf16>, %k: tensor<1x4x100x59xf16>, %v: tensor<1x4x100x59xf16>) -> tensor<1x4x100x59xf16> {
  // expected-error @+1 {{'fa.attention' op BLOCK_M=24 BLOCK_N=24 D=59 cannot be split over 256 threads (4 waves of 64, at most 1024 threads)}}
  %o = fa.attention %q, %k, %v : tensor<1x4x100x59xf16>, tensor<1x4x100x59xf16>, tensor<1x4x100x59xf16> -> tensor<1x4x100x59xf16>
  return %o : tensor<1x4x100x59xf16>
}

// -----

func.func @even(%q: tensor<1x4x100x58xf16>, %k: tensor<1x4x100x58xf16>, %v: tensor<1x4x100x58xf16>) -> tensor<1x4x100x58xf16> {
  // expected-error @+1 {{'fa.attention' op BLOCK_M=24 BLOCK_N=24 D=58 cannot be split over 256 threads (4 waves of 64, at most 1024 threads)}}
  %o = fa.attention %q, %k, %v : tensor<1x4x100x58xf16>, tensor<1x4x100x58xf16>, tensor<1x4x100x58xf16> -> tensor<1x4x100x58xf16>
  return %o : tensor<1x4x100x58xf16>
}


//--- padded-half.mlir

// An even D with an odd half splits over two lanes per row only: at D=190
// that is 95 columns of O per thread, over the register budget; 192 fits.
// PADDED-HALF: remark: fa-tile: D=190 padded to 192 in LDS and registers
// PADDED-HALF: fa.store_tile %{{.*}} : tensor<{{[0-9]+}}x192xf16>, memref<1x4x100x190xf16
func.func @odd_half(%q: tensor<1x4x100x190xf16>, %k: tensor<1x4x100x190xf16>, %v: tensor<1x4x100x190xf16>) -> tensor<1x4x100x190xf16> {
  // expected-error @+1 {{'fa.attention' op BLOCK_M=24 BLOCK_N=24 D=190 cannot be split over 256 threads (4 waves of 64, at most 1024 threads)}}
  %o = fa.attention %q, %k, %v : tensor<1x4x100x190xf16>, tensor<1x4x100x190xf16>, tensor<1x4x100x190xf16> -> tensor<1x4x100x190xf16>
  return %o : tensor<1x4x100x190xf16>
}
