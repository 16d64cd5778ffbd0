// RUN: split-file %s %t

// Level 1b IR comes from fa-tile (explicit 64x32 tiles, so that the test does
// not depend on the budget model's choice) and fa-promote, cleaned up as the
// pipeline does; the canonicalizer after fa-lower-to-gpu hoists the kernel's
// constants so that they can be captured once.
// RUN: fa-opt %t/attention.mlir --fa-tile="target=gfx906 block-m=64 block-n=32" --fa-promote --canonicalize --cse --fa-lower-to-gpu=share-rows=off --canonicalize --cse | FileCheck %s
// RUN: fa-opt %t/attention.mlir --fa-tile="target=sm_90 block-m=64 block-n=32" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s --check-prefix=SM90
// RUN: fa-opt %t/attention.mlir --fa-tile="target=gfx906 block-m=64 block-n=32" --fa-promote --canonicalize --cse --fa-lower-to-gpu="share-rows=off test-plant-bug=mask-skips-diagonal" --canonicalize --cse | FileCheck %s --check-prefix=SKIPDIAG
// RUN: fa-opt %t/head-dim-36.mlir --fa-tile="target=gfx906 block-m=64 block-n=32" --fa-promote --canonicalize --cse --fa-lower-to-gpu=share-rows=off --canonicalize --cse | FileCheck %s --check-prefix=D36
// K and V in one LDS slot.
// RUN: fa-opt %t/attention.mlir --fa-tile="target=gfx906 block-m=64 block-n=32 kv-shared=on" --fa-promote --canonicalize --cse --fa-lower-to-gpu=share-rows=off --canonicalize --cse | FileCheck %s --check-prefix=KVSLOT

// fa-lower-to-gpu straight after fa-promote (constants still inside the grid).
// RUN: fa-opt %t/attention.mlir --fa-tile="target=gfx906 block-m=64 block-n=32" --fa-promote --fa-lower-to-gpu=share-rows=off | FileCheck %s --check-prefix=RAW
// Register-staged fetches (fa-double-buffer) get a version without row
// guards for blocks whose rows all exist; sm_90's cp.async staging keeps
// its per-row byte counts (no such version).
// RUN: fa-opt %t/attention.mlir --fa-tile="target=gfx906 block-m=64 block-n=32" --fa-promote --fa-double-buffer --canonicalize --cse --fa-lower-to-gpu=share-rows=off --canonicalize --cse | FileCheck %s --check-prefix=FULLBLOCK
// RUN: fa-opt %t/attention.mlir --fa-tile="target=sm_90 block-m=64 block-n=32 stages=2" --fa-promote --fa-double-buffer --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s --check-prefix=STAGED

// A branch of stores (the split kernel's direct write at S = 1): an scf.if
// on the same condition, each side's stores lowered inside it.
// RUN: fa-opt %t/branch.mlir --fa-lower-to-gpu | FileCheck %s --check-prefix=BRANCH

// Hand-written Level 1b IR: each LDS buffer with its own row padding.
// RUN: fa-opt %t/lds-pad.mlir --fa-lower-to-gpu=share-rows=off --canonicalize --cse | FileCheck %s --check-prefix=PAD

// Where the pass must not fire: no tile grid, no change; a remark only when
// asked for.
// RUN: fa-opt %t/no-grid.mlir --fa-lower-to-gpu > %t/no-grid.out
// RUN: fa-opt %t/no-grid.mlir | diff - %t/no-grid.out
// RUN: fa-opt %t/no-grid.mlir --fa-lower-to-gpu="remarks=true" 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: fa-opt %t/no-grid.mlir --fa-lower-to-gpu 2>&1 >/dev/null | FileCheck %s --check-prefix=QUIET --allow-empty
// REMARK: no-grid.mlir:3:1: remark: fa-lower-to-gpu: no tile grid to lower
// QUIET-NOT: remark

// Grids the pass cannot lower (tile IR that fa-promote has not seen
// included): each with the message that says why.
// RUN: fa-opt %t/invalid.mlir -split-input-file --fa-lower-to-gpu -verify-diagnostics

// Test-only planted bugs: each pass plants only its own.
// RUN: not fa-opt %t/lds-pad.mlir --fa-lower-to-gpu="test-plant-bug=gqa-modulo" 2>&1 | FileCheck %s --check-prefix=PLANT-OTHER-PASS
// PLANT-OTHER-PASS: error: planted bug 'gqa-modulo' is planted by fa-tile, not fa-lower-to-gpu

//--- attention.mlir
// K of block n+1 (8 halves a thread): rows n0+32 .. n0+63 all below Lk
// take the loads without a guard; the rest (the ragged last block) the
// guarded ones, 0 where a row is missing.
// FULLBLOCK: scf.for %{{.+}} iter_args
// V's fetch first (two rows a unit), the same way:
// FULLBLOCK: arith.cmpi sle
// FULLBLOCK-NEXT: scf.if %{{[^ ]+}} -> (vector<16xf16>) {
// FULLBLOCK: %[[END:[^ ]+]] = arith.addi %{{[^,]+}}, %c32 : index
// FULLBLOCK-NEXT: %[[ALL:[^ ]+]] = arith.cmpi sle, %[[END]], %{{[^ ]+}} : index
// FULLBLOCK-NEXT: scf.if %[[ALL]] -> (vector<8xf16>) {
// FULLBLOCK-NOT: scf.if
// FULLBLOCK-NOT: arith.cmpi
// FULLBLOCK: vector.load %{{[^[]+}}[%{{[^]]+}}] {alignment = 16 : i64} : memref<?xf16, strided<[1], offset: ?>>, vector<8xf16>
// FULLBLOCK-NEXT: scf.yield
// FULLBLOCK-NEXT: } else {
// FULLBLOCK-NOT: vector.load
// FULLBLOCK: arith.cmpi slt
// FULLBLOCK: scf.if %{{[^ ]+}} -> (vector<8xf16>) {
// FULLBLOCK-NEXT: vector.load
// STAGED: nvgpu.device_async_copy
// STAGED-NOT: arith.cmpi sle

// CHECK: module attributes {gpu.container_module}

// Host side: the grid becomes a launch of the kernel with the ABI's
// arguments (KernelAbi.h): five flat buffers, five sizes, fourteen strides.
// CHECK-LABEL: func.func @causal_lse
// CHECK-SAME: (%[[Q:[^:]+]]: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>,
// CHECK-SAME: %[[LSE:[^:]+]]: memref<?x8x?xf32, strided<[?, ?, 1], offset: ?>>) {
// CHECK-NOT: scf.forall
// CHECK-DAG: %[[C1:.+]] = arith.constant 1 : index
// CHECK-DAG: %[[C8:.+]] = arith.constant 8 : index
// CHECK-DAG: %[[C256:.+]] = arith.constant 256 : index
// CHECK-DAG: %[[HQ:.+]] = arith.constant 8 : i64
// CHECK-DAG: %[[HKV:.+]] = arith.constant 2 : i64
// CHECK: %[[BATCH:[^ ]+]] = memref.dim %[[Q]], %{{c0[_0-9]*}}
// CHECK: %[[NUM_M:[^ ]+]] = arith.ceildivui
// CHECK: %{{[^,]+}}, %[[QOFF:[^,]+]], %{{[^,]+}}, %[[QSTR:[^:]+]]:4 = memref.extract_strided_metadata %[[Q]]
// CHECK: %[[QFLAT:[^ ]+]] = memref.reinterpret_cast %{{[^ ]+}} to offset: [%[[QOFF]]], sizes: [%{{[^]]+}}], strides: [1] : {{.*}} to memref<?xf16, strided<[1], offset: ?>>
// CHECK: %[[QSB:[^ ]+]] = arith.index_cast %[[QSTR]]#0 : index to i64
// CHECK: %[[QSH:[^ ]+]] = arith.index_cast %[[QSTR]]#1 : index to i64
// CHECK: %[[QSL:[^ ]+]] = arith.index_cast %[[QSTR]]#2 : index to i64
// LSE is rank 3: two strides (batch, head).
// CHECK: %{{[^,]+}}, %[[LOFF:[^,]+]], %{{[^,]+}}, %[[LSTR:[^:]+]]:3 = memref.extract_strided_metadata %[[LSE]]
// CHECK: %[[LFLAT:[^ ]+]] = memref.reinterpret_cast %{{[^ ]+}} to offset: [%[[LOFF]]], sizes: [%{{[^]]+}}], strides: [1] : {{.*}} to memref<?xf32, strided<[1], offset: ?>>
// CHECK: %[[LSB:[^ ]+]] = arith.index_cast %[[LSTR]]#0 : index to i64
// CHECK: %[[LSH:[^ ]+]] = arith.index_cast %[[LSTR]]#1 : index to i64
// CHECK: %[[B64:[^ ]+]] = arith.index_cast %[[BATCH]] : index to i64
// Grid (ceil(Lq / 64), Hq, B), 256 threads (4 waves of 64).
// CHECK: gpu.launch_func @fa_kernels::@causal_lse_kernel blocks in (%[[NUM_M]], %[[C8]], %[[BATCH]]) threads in (%[[C256]], %[[C1]], %[[C1]])
// CHECK-SAME: args(%[[QFLAT]] : memref<?xf16, strided<[1], offset: ?>>, {{(%[^ ]+ : memref<\?xf16, strided<\[1\], offset: \?>>, ){3}%}}[[LFLAT]] : memref<?xf32, strided<[1], offset: ?>>,
// CHECK-SAME: %[[B64]] : i64, %[[HQ]] : i64, %[[HKV]] : i64, %{{[^ ]+}} : i64, %{{[^ ]+}} : i64,
// CHECK-SAME: %[[QSB]] : i64, %[[QSH]] : i64, %[[QSL]] : i64, {{(%[^ ]+ : i64, ){9}%}}[[LSB]] : i64, %[[LSH]] : i64)
// CHECK-NEXT: return

// The kernel: the ABI signature, one 1-D LDS buffer per storage slot,
// indexed linearly (Q: BM x D = 4096 halves, K and V: BN x D = 2048, P:
// BM x BN = 2048), the launch configuration and the compile-time facts the
// manifest needs.
// CHECK: gpu.module @fa_kernels {
// CHECK-LABEL: gpu.func @causal_lse_kernel
// CHECK-SAME: (%[[QBUF:[^:]+]]: memref<?xf16, strided<[1], offset: ?>>, %[[KBUF:[^:]+]]: memref<?xf16, strided<[1], offset: ?>>, %[[VBUF:[^:]+]]: memref<?xf16, strided<[1], offset: ?>>, %[[OBUF:[^:]+]]: memref<?xf16, strided<[1], offset: ?>>, %[[LSEBUF:[^:]+]]: memref<?xf32, strided<[1], offset: ?>>,
// CHECK-SAME: {{(%[^:]+: i64, ){18}%[^:]+}}: i64)
// CHECK-SAME: workgroup(%[[QLDS:[^ ]+]] : memref<4096xf16, #gpu.address_space<workgroup>>, %[[KLDS:[^ ]+]] : memref<2048xf16, #gpu.address_space<workgroup>>, %[[VLDS:[^ ]+]] : memref<2048xf16, #gpu.address_space<workgroup>>, %[[PLDS:[^ ]+]] : memref<2048xf16, #gpu.address_space<workgroup>>)
// CHECK-SAME: kernel attributes {fa.abi_version = 1 : i64, fa.causal, fa.has_lse = true, fa.head_dim = 64 : i64, fa.lds_buffers = [{{.*}}], fa.scale = 1.250000e-01 : f32, fa.static_sizes = array<i64: -1, 8, 2, -1, -1>,
// CHECK-SAME: fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 32, waves = 4, wave_size = 64, stages = 1, lds_pad = 0>, known_block_size = array<i32: 256, 1, 1>} {
// CHECK-DAG: %[[C0:.+]] = arith.constant 0 : index
// CHECK-DAG: %[[C2:.+]] = arith.constant 2 : index
// CHECK-DAG: %[[C16:.+]] = arith.constant 16 : index
// CHECK-DAG: %[[C32:.+]] = arith.constant 32 : index
// CHECK-DAG: %[[C64:.+]] = arith.constant 64 : index
// CHECK-DAG: %[[C128:.+]] = arith.constant 128 : index
// CHECK-DAG: %[[WAVE:.+]] = arith.constant 64 : i32
// CHECK-DAG: %[[X8:.+]] = arith.constant 8 : i32
// CHECK-DAG: %[[X4:.+]] = arith.constant 4 : i32
// CHECK-DAG: %[[X2:.+]] = arith.constant 2 : i32
// CHECK-DAG: %[[X1:.+]] = arith.constant 1 : i32
// The thread's place in the 16x16 thread grid: row group TR, column TC.
// CHECK: %[[TID:[^ ]+]] = gpu.thread_id x
// CHECK-NEXT: %[[TR:[^ ]+]] = arith.divui %[[TID]], %[[C16]] : index
// CHECK-NEXT: %[[TC:[^ ]+]] = arith.remui %[[TID]], %[[C16]] : index
//
// The Q block is copied once, before the KV loop: 16-byte vectors when the
// base and the strides are aligned, scalars otherwise; rows past Lq are zero.
// Row-major: element (r, c) at r * 64 + c.
// CHECK: %[[ALIGNED:[^ ]+]] = arith.andi %{{.+}}, %{{.+}} : i1
// CHECK-NEXT: scf.if %[[ALIGNED]] {
// CHECK: scf.if %{{.+}} -> (vector<8xf16>) {
// CHECK-NEXT: vector.load %[[QBUF]][%{{.+}}]{{.*}} : memref<?xf16, strided<[1], offset: ?>>, vector<8xf16>
// CHECK: %[[QROW:[^ ]+]] = arith.muli %{{.+}}, %[[C64]] : index
// CHECK-NEXT: %[[QAT:[^ ]+]] = arith.addi %[[QROW]], %{{.+}} : index
// CHECK-NEXT: vector.store %{{.+}}, %[[QLDS]][%[[QAT]]] {alignment = 16 : i64} : memref<4096xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK: } else {
// CHECK-NEXT: scf.for
// CHECK: scf.if %{{.+}} -> (f16) {
// CHECK-NEXT: memref.load %[[QBUF]][%{{.+}}] : memref<?xf16, strided<[1], offset: ?>>
// CHECK: memref.store %{{.+}}, %[[QLDS]][%{{.+}}] : memref<4096xf16, #gpu.address_space<workgroup>>
// No barrier before the loop: the one after K's copy covers Q.
// CHECK-NOT: gpu.barrier
//
// The KV loop is versioned on the alignment of K and V: one copy of it with
// only vector copies, one with only scalar copies.
// CHECK: %[[KV:[^ :]+]]:3 = scf.if %{{.+}} -> (vector<4xf32>, vector<4xf32>, vector<16xf32>) {
// CHECK-NEXT: scf.for %{{.+}} = %[[C0]] to %{{.+}} step %{{.+}} iter_args(%[[M_OLD:[^ ]+]] = %{{[^,]+}}, %[[L_OLD:[^ ]+]] = %{{[^,]+}}, %[[ACC:[^ ]+]] = %{{[^)]+}}) -> (vector<4xf32>, vector<4xf32>, vector<16xf32>) {
//
// K's copy first (nothing read K since the last iteration's barrier 1),
// then barrier 1: Q and K are in LDS before anyone reads them.
// CHECK-NOT: gpu.barrier
// CHECK: vector.load %[[KBUF]]
// CHECK: vector.store %{{.+}}, %[[KLDS]][%{{.+}}] {alignment = 16 : i64} : memref<2048xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// CHECK-NEXT: gpu.barrier
// V's copy after barrier 1, which also keeps it from overwriting V while
// the last iteration's P·V reads it. V is pair-interleaved: rows 2i and
// 2i+1 are loaded, interleaved and stored as one 32-byte vector.
// CHECK: %[[V0:[^ ]+]] = scf.if %{{.+}} -> (vector<8xf16>) {
// CHECK-NEXT: vector.load %[[VBUF]]
// CHECK: %[[V1:[^ ]+]] = scf.if %{{.+}} -> (vector<8xf16>) {
// CHECK-NEXT: vector.load %[[VBUF]]
// CHECK: %[[V01:[^ ]+]] = vector.interleave %[[V0]], %[[V1]] : vector<8xf16> -> vector<16xf16>
// CHECK: vector.store %[[V01]], %[[VLDS]][%{{.+}}] {alignment = 16 : i64} : memref<2048xf16, #gpu.address_space<workgroup>>, vector<16xf16>
// CHECK-NOT: gpu.barrier
//
// S = Q·Kᵀ: a loop over D in pairs (the shape of v_dot2_f32_f16), each pair
// one 32-bit LDS load (Q's row r, K's row c at row * 64 + kk), then two f32
// FMAs on the thread's 4x2 fragment.
// CHECK: %[[S:[^ ]+]] = scf.for %[[KK:[^ ]+]] = %[[C0]] to %[[C64]] step %[[C2]] iter_args(%{{.+}}) -> (vector<8xf32>) {
// CHECK-NEXT: %[[QR0:[^ ]+]] = arith.muli %[[TR]], %{{.+}} : index
// CHECK-NEXT: %[[QAT0:[^ ]+]] = arith.addi %[[QR0]], %[[KK]] : index
// CHECK-NEXT: vector.load %[[QLDS]][%[[QAT0]]] {alignment = 4 : i64} : memref<4096xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK: %[[KR0:[^ ]+]] = arith.muli %[[TC]], %[[C64]] : index
// CHECK-NEXT: %[[KAT0:[^ ]+]] = arith.addi %[[KR0]], %[[KK]] : index
// CHECK-NEXT: vector.load %[[KLDS]][%[[KAT0]]] {alignment = 4 : i64} : memref<2048xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK: math.fma %{{.+}}, %{{.+}}, %{{.+}} : vector<8xf32>
// CHECK: math.fma %{{.+}}, %{{.+}}, %{{.+}} : vector<8xf32>
// CHECK-NEXT: scf.yield %{{.+}} : vector<8xf32>
// CHECK-NEXT: }
// CHECK-NOT: gpu.barrier
// The causal mask only where the block (keys n0 .. n0 + 31) has a key past
// Lk or right of its first row's diagonal m0 + (Lk - Lq): a branch the same
// in every thread; inside, one comparison per entry against
// min(Lk - 1, r + Lk - Lq). The planted bug takes the last row's diagonal
// (m0 + 63 + Lk - Lq): the diagonal blocks go unmasked. The mask acts on
// the raw scores (the scale is folded into P's exponent below).
// CHECK-NOT: arith.mulf
// CHECK: %[[LASTK:[^ ]+]] = arith.addi %{{[^,]+}}, %c31 : index
// CHECK-NEXT: %[[RAG:[^ ]+]] = arith.cmpi sge, %[[LASTK]], %[[LK:[^ ]+]] : index
// CHECK-NEXT: %[[SHIFT:[^ ]+]] = arith.subi %[[LK]], %{{[^ ]+}} : index
// CHECK-NEXT: %[[DIAG0:[^ ]+]] = arith.addi %{{[^,]+}}, %[[SHIFT]] : index
// CHECK-NEXT: %[[PASTD:[^ ]+]] = arith.cmpi sgt, %[[LASTK]], %[[DIAG0]] : index
// CHECK-NEXT: %[[NEED:[^ ]+]] = arith.ori %[[RAG]], %[[PASTD]] : i1
// CHECK-NEXT: %[[MASKED:[^ ]+]] = scf.if %[[NEED]] -> (vector<8xf32>) {
// CHECK: %[[HI:[^ ]+]] = arith.minsi %{{[^,]+}}, %{{[^ ]+}} : vector<8xindex>
// CHECK-NEXT: %[[HIDE:[^ ]+]] = arith.cmpi sgt, %{{[^,]+}}, %[[HI]] : vector<8xindex>
// CHECK-NEXT: %[[SEL:[^ ]+]] = arith.select %[[HIDE]], %{{[^,]+}}, %[[S]] : vector<8xi1>, vector<8xf32>
// CHECK-NEXT: scf.yield %[[SEL]] : vector<8xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[S]] : vector<8xf32>
// CHECK-NEXT: }
// SKIPDIAG: %[[LASTK:[^ ]+]] = arith.addi %{{[^,]+}}, %c31 : index
// SKIPDIAG-NEXT: arith.cmpi sge, %[[LASTK]]
// SKIPDIAG-NEXT: %[[SHIFT:[^ ]+]] = arith.subi
// SKIPDIAG-NEXT: %[[DIAG0:[^ ]+]] = arith.addi %{{[^,]+}}, %[[SHIFT]] : index
// SKIPDIAG-NEXT: %[[DIAGL:[^ ]+]] = arith.addi %[[DIAG0]], %c63 : index
// SKIPDIAG-NEXT: arith.cmpi sgt, %[[LASTK]], %[[DIAGL]] : index
// Row max: within the thread, then xor shuffles over the 16 lanes of a row
// (maxnum: the masked -inf never wins against a real score), xor 1 first:
// after the steps below k the value is the same on each aligned group of k
// lanes, which fa.row_xor says (gfx906 reads the partner group by DPP).
// CHECK: vector.reduction <maxnumf>, %{{.+}} : vector<2xf32> into f32
// CHECK-NEXT: %[[SH:[^,]+]], %{{.+}} = gpu.shuffle xor %{{.+}}, %[[X1]], %[[WAVE]] {fa.row_xor} : f32
// CHECK-NEXT: arith.maxnumf %{{.+}}, %[[SH]] : f32
// CHECK-NEXT: gpu.shuffle xor %{{.+}}, %[[X2]], %[[WAVE]] {fa.row_xor} : f32
// CHECK-NEXT: arith.maxnumf
// CHECK-NEXT: gpu.shuffle xor %{{.+}}, %[[X4]], %[[WAVE]] {fa.row_xor} : f32
// CHECK-NEXT: arith.maxnumf
// CHECK-NEXT: gpu.shuffle xor %{{.+}}, %[[X8]], %[[WAVE]] {fa.row_xor} : f32
// CHECK-NEXT: arith.maxnumf
// CHECK-NOT: gpu.barrier
// alpha = exp2(m_old - m_new); P = exp2(fma(S, scale·log2(e), -m_new)).
// CHECK: %[[DM:[^ ]+]] = arith.subf %[[M_OLD]], %{{.+}} : vector<4xf32>
// CHECK-NEXT: %[[ALPHA:[^ ]+]] = math.exp2 %[[DM]] : vector<4xf32>
// CHECK: %[[T:[^ ]+]] = math.fma %[[MASKED]], %{{.+}}, %{{.+}} : vector<8xf32>
// CHECK-NEXT: %[[P:[^ ]+]] = math.exp2 %[[T]] : vector<8xf32>
// Row sum: within the thread only (fa.row_reduce add partial): l is
// carried in parts and summed across the row's lanes after the loop.
// CHECK: vector.reduction <add>, %{{.+}} : vector<2xf32> into f32
// CHECK-NOT: gpu.shuffle
// O is rescaled by alpha before P·V accumulates onto it.
// CHECK: %[[ALPHA_B:[^ ]+]] = vector.shuffle %[[ALPHA]], %[[ALPHA]] [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3]
// CHECK-NEXT: %[[RESCALED:[^ ]+]] = arith.mulf %[[ACC]], %[[ALPHA_B]] : vector<16xf32>
// P goes to LDS (row r, column c at r * 32 + c): P·V needs columns that
// other threads computed.
// CHECK: %[[P16:[^ ]+]] = arith.truncf %[[P]] : vector<8xf32> to vector<8xf16>
// CHECK: %[[PR0:[^ ]+]] = arith.muli %[[TR]], %[[C128]] : index
// CHECK-NEXT: %[[PAT0:[^ ]+]] = arith.addi %[[PR0]], %[[TC]] : index
// CHECK-NEXT: memref.store %{{.+}}, %[[PLDS]][%[[PAT0]]] : memref<2048xf16, #gpu.address_space<workgroup>>
// CHECK-NOT: gpu.barrier
// CHECK-NOT: scf.for
//
// Barrier 2: all of P (and V) is in LDS before P·V reads it.
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK-NOT: memref.store %{{.+}}, %[[PLDS]][
// P·V: pairs of P along its rows; pairs (kk, c), (kk+1, c) of V, adjacent
// in the interleaved layout at (kk / 2) * 128 + 2c + kk % 2.
// CHECK: %[[PV:[^ ]+]] = scf.for %[[KK2:[^ ]+]] = %[[C0]] to %[[C32]] step %[[C2]] iter_args(%{{.+}} = %[[RESCALED]]) -> (vector<16xf32>) {
// CHECK-NEXT: %[[PAT1:[^ ]+]] = arith.addi %[[PR0]], %[[KK2]] : index
// CHECK-NEXT: vector.load %[[PLDS]][%[[PAT1]]] {alignment = 4 : i64} : memref<2048xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK: %[[VPAIR:[^ ]+]] = arith.divui %[[KK2]], %[[C2]] : index
// CHECK-NEXT: %[[VODD:[^ ]+]] = arith.remui %[[KK2]], %[[C2]] : index
// CHECK-NEXT: %[[VROW:[^ ]+]] = arith.muli %[[VPAIR]], %[[C128]] : index
// CHECK-NEXT: %[[VCOL:[^ ]+]] = arith.muli %[[TC]], %[[C2]] : index
// CHECK-NEXT: %[[VBASE:[^ ]+]] = arith.addi %[[VROW]], %[[VCOL]] : index
// CHECK-NEXT: %[[VAT:[^ ]+]] = arith.addi %[[VBASE]], %[[VODD]] : index
// CHECK-NEXT: vector.load %[[VLDS]][%[[VAT]]] {alignment = 4 : i64} : memref<2048xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK: math.fma %{{.+}}, %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK: math.fma %{{.+}}, %{{.+}}, %{{.+}} : vector<16xf32>
// CHECK-NEXT: scf.yield %{{.+}} : vector<16xf32>
// CHECK-NEXT: }
// No barrier at the end of the iteration: the next K copy overwrites only
// what was read before barrier 2.
// CHECK-NEXT: scf.yield %{{.+}}, %{{.+}}, %[[PV]] : vector<4xf32>, vector<4xf32>, vector<16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield
//
// The scalar version: the same two barriers around scalar copies (V two
// elements, one 32-bit word, at a time).
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.for
// CHECK-NOT: gpu.barrier
// CHECK: memref.load %[[KBUF]]
// CHECK: memref.store %{{.+}}, %[[KLDS]][%{{.+}}] : memref<2048xf16, #gpu.address_space<workgroup>>
// CHECK-NEXT: }
// CHECK-NEXT: gpu.barrier
// CHECK: memref.load %[[VBUF]]
// CHECK: memref.load %[[VBUF]]
// CHECK: %[[VW:[^ ]+]] = vector.from_elements %{{.+}}, %{{.+}} : vector<2xf16>
// CHECK: vector.store %[[VW]], %[[VLDS]][%{{.+}}] {alignment = 4 : i64} : memref<2048xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK-NOT: gpu.barrier
// CHECK: memref.store %{{.+}}, %[[PLDS]]
// CHECK-NOT: gpu.barrier
// CHECK-NOT: scf.for
// CHECK: gpu.barrier
// CHECK-NOT: gpu.barrier
// CHECK: scf.yield %{{.+}}, %{{.+}}, %{{.+}} : vector<4xf32>, vector<4xf32>, vector<16xf32>
// CHECK-NEXT: }
// CHECK-NEXT: scf.yield
// CHECK-NEXT: }
//
// Epilogue: l's parts summed over each row's 16 lanes (fa.row_combine);
// O = acc / l and LSE, stored row by row, bounds-checked; no LDS.
// CHECK-NOT: gpu.barrier
// CHECK-NOT: address_space<workgroup>
// CHECK: vector.extract %[[KV]]#1[0] : f32 from vector<4xf32>
// CHECK-NEXT: gpu.shuffle xor %{{.+}}, %[[X1]], %[[WAVE]] {fa.row_xor} : f32
// CHECK-NEXT: arith.addf
// CHECK-NEXT: gpu.shuffle xor %{{.+}}, %[[X2]], %[[WAVE]] {fa.row_xor} : f32
// CHECK: %[[L:[^ ]+]] = vector.from_elements %{{.+}} : vector<4xf32>
// CHECK: %[[O16:[^ ]+]] = arith.truncf %{{.+}} : vector<16xf32> to vector<16xf16>
// CHECK: scf.if
// CHECK: memref.store %{{.+}}, %[[OBUF]][%{{.+}}] : memref<?xf16, strided<[1], offset: ?>>
// CHECK: math.log2 %[[L]] : vector<4xf32>
// CHECK: scf.if
// CHECK: memref.store %{{.+}}, %[[LSEBUF]][%{{.+}}] : memref<?xf32, strided<[1], offset: ?>>
// CHECK-NOT: gpu.barrier
// CHECK: gpu.return

// The same kernel for sm_90: waves of 32, so 8 waves make 256 threads and
// the shuffles are 32 wide.
// SM90-LABEL: gpu.func @causal_lse_kernel
// SM90-SAME: fa.tile = #fa.tile<target = "sm_90", block_m = 64, block_n = 32, waves = 8, wave_size = 32, stages = 1, lds_pad = 0>, known_block_size = array<i32: 256, 1, 1>}
// SM90-DAG: %[[WAVE:.+]] = arith.constant 32 : i32
// SM90-DAG: %[[X8:.+]] = arith.constant 8 : i32
// SM90: gpu.shuffle xor %{{.+}}, %[[X8]], %[[WAVE]] {fa.row_xor} : f32
// SM90-NOT: arith.constant 64 : i32
// SM90: gpu.return

func.func @causal_lse(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> (tensor<?x8x?x64xf16>, tensor<?x8x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v causal scale(0.125) : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
  return %o, %lse : tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
}

// Straight after fa-promote the grid's scalar constants are still inside
// it; they are cloned into the kernel like any other pure scalar op. The
// barriers are fa-promote's, copied: two per iteration, in each version of
// the KV loop.
// RAW-LABEL: gpu.func @causal_lse_kernel
// RAW-COUNT-4: gpu.barrier
// RAW-NOT: gpu.barrier
// RAW: gpu.return

// K and V in one slot: three attributions, K's and V's copies both land in
// the second, and fa-promote's four barriers per iteration come through:
// before K overwrites the slot (the last P·V read V there), after K's copy,
// before V overwrites K (after Q·Kᵀ), after V's copy and P's write.
// KVSLOT-LABEL: gpu.func @causal_lse_kernel
// KVSLOT-SAME: workgroup(%[[QLDS:[^ ]+]] : memref<4096xf16, #gpu.address_space<workgroup>>, %[[KVLDS:[^ ]+]] : memref<2048xf16, #gpu.address_space<workgroup>>, %[[PLDS:[^ ]+]] : memref<2048xf16, #gpu.address_space<workgroup>>)
// The buffers in the kernel's LDS (KernelInfo.h: fa.lds_buffers), K and V
// in attribution 1; without fa-pad-lds no accesses are recorded.
// KVSLOT-SAME: fa.lds_buffers = [{attribution = 0 : i64, cols = 64 : i64, element_bytes = 2 : i64, name = "q", pad = 0 : i64, pairs = false, rows = 64 : i64, slot = "q"}, {attribution = 1 : i64, cols = 64 : i64, element_bytes = 2 : i64, name = "k", pad = 0 : i64, pairs = false, rows = 32 : i64, slot = "kv"}, {attribution = 1 : i64, cols = 64 : i64, element_bytes = 2 : i64, name = "v", pad = 0 : i64, pairs = true, rows = 32 : i64, slot = "kv"}, {attribution = 2 : i64, cols = 32 : i64, element_bytes = 2 : i64, name = "p", pad = 0 : i64, pairs = false, rows = 64 : i64, slot = "p"}]
// KVSLOT-SAME: kv_shared = true
// KVSLOT: scf.if %{{.+}} -> (vector<4xf32>, vector<4xf32>, vector<16xf32>) {
// KVSLOT-NEXT: scf.for
// KVSLOT-NEXT: arith.muli
// KVSLOT-NEXT: gpu.barrier
// KVSLOT-NOT: gpu.barrier
// KVSLOT: vector.store %{{.+}}, %[[KVLDS]][%{{.+}}] {{.*}} vector<8xf16>
// KVSLOT-NEXT: gpu.barrier
// KVSLOT-NOT: gpu.barrier
// KVSLOT: vector.load %[[KVLDS]][%{{.+}}] {{.*}} vector<2xf16>
// KVSLOT-NOT: gpu.barrier
// KVSLOT: arith.truncf %{{.+}} : vector<8xf32> to vector<8xf16>
// KVSLOT-NEXT: gpu.barrier
// KVSLOT-NOT: gpu.barrier
// KVSLOT: vector.store %{{.+}}, %[[KVLDS]][%{{.+}}] {{.*}} vector<16xf16>
// KVSLOT-NOT: gpu.barrier
// KVSLOT: memref.store %{{.+}}, %[[PLDS]]
// KVSLOT-NOT: vector.load
// KVSLOT: gpu.barrier
// KVSLOT-NOT: gpu.barrier
// KVSLOT: vector.load %[[PLDS]]
// KVSLOT: vector.load %[[KVLDS]]
// KVSLOT-NOT: gpu.barrier
// KVSLOT: } else {

//--- head-dim-36.mlir

// D = 36 halves: a row is 72 bytes, not a whole number of 16-byte vectors,
// so every copy takes the scalar path and there is no alignment test (nor
// a versioned KV loop). Q is 64x36 halves, K and V 32x36, P 64x32.
// Without an LSE result the host passes an empty LSE buffer.
// D36-LABEL: func.func @head_dim_36
// D36: %[[EMPTY:[^ ]+]] = memref.alloca() : memref<0xf32>
// D36: %[[NO_LSE:[^ ]+]] = memref.cast %[[EMPTY]] : memref<0xf32> to memref<?xf32, strided<[1], offset: ?>>
// D36: gpu.launch_func @fa_kernels::@head_dim_36_kernel
// D36-SAME: %[[NO_LSE]] : memref<?xf32, strided<[1], offset: ?>>
// D36-LABEL: gpu.func @head_dim_36_kernel
// D36-SAME: workgroup(%{{[^ ]+}} : memref<2304xf16, #gpu.address_space<workgroup>>, %{{[^ ]+}} : memref<1152xf16, #gpu.address_space<workgroup>>, %{{[^ ]+}} : memref<1152xf16, #gpu.address_space<workgroup>>, %{{[^ ]+}} : memref<2048xf16, #gpu.address_space<workgroup>>)
// D36-SAME: fa.has_lse = false, fa.head_dim = 36 : i64
// D36-NOT: memref.extract_aligned_pointer_as_index
// D36-NOT: vector.load {{.*}}vector<8xf16>
// D36-NOT: vector.store {{.*}}vector<8xf16>
// D36-NOT: scf.if {{.*}} -> (vector<4xf32>
// D36: scf.for {{.*}} -> (vector<1xf32>, vector<1xf32>, vector<9xf32>)
// D36-COUNT-2: gpu.barrier
// D36-NOT: gpu.barrier
// D36: gpu.return
func.func @head_dim_36(%q: tensor<1x4x100x36xf16>, %k: tensor<1x4x100x36xf16>, %v: tensor<1x4x100x36xf16>) -> tensor<1x4x100x36xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x4x100x36xf16>, tensor<1x4x100x36xf16>, tensor<1x4x100x36xf16> -> tensor<1x4x100x36xf16>
  return %o : tensor<1x4x100x36xf16>
}

//--- lds-pad.mlir

// Level 1b IR, barriers included, with each buffer's layout in its type:
// Q rows of 32 halves padded to 34, K to 36, V pair-interleaved with pair
// rows of 2 x (32 + 2), P rows of 16 padded to 18 (#fa.tile's lds_pad only
// records the largest). Each slot is one 1-D attribution of rows x stride
// elements, indexed with its own stride.
// The host launches one workgroup of 64 threads.
// PAD-LABEL: func.func @padded
// PAD: gpu.launch_func @fa_kernels::@padded_kernel blocks in (%{{c1[_0-9]*}}, %{{c1[_0-9]*}}, %{{c1[_0-9]*}}) threads in (%{{c64[_0-9]*}}, %{{c1[_0-9]*}}, %{{c1[_0-9]*}})
// PAD-LABEL: gpu.func @padded_kernel
// PAD-SAME: workgroup(%[[QLDS:[^ ]+]] : memref<544xf16, #gpu.address_space<workgroup>>, %[[KLDS:[^ ]+]] : memref<576xf16, #gpu.address_space<workgroup>>, %[[VLDS:[^ ]+]] : memref<544xf16, #gpu.address_space<workgroup>>, %[[PLDS:[^ ]+]] : memref<288xf16, #gpu.address_space<workgroup>>)
// PAD-SAME: fa.tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 4>, known_block_size = array<i32: 64, 1, 1>
// PAD-DAG: %[[C34:.+]] = arith.constant 34 : index
// PAD-DAG: %[[C36:.+]] = arith.constant 36 : index
// PAD-DAG: %[[C68:.+]] = arith.constant 68 : index
// PAD-DAG: %[[C18:.+]] = arith.constant 18 : index
// Q's vector copy: row r, columns c..c+7 at r * 34 + c. A row of 68 bytes
// keeps only 4-byte alignment.
// PAD: %[[QROW:[^ ]+]] = arith.muli %{{.+}}, %[[C34]] : index
// PAD-NEXT: %[[QAT:[^ ]+]] = arith.addi %[[QROW]], %{{.+}} : index
// PAD-NEXT: vector.store %{{.+}}, %[[QLDS]][%[[QAT]]] {alignment = 4 : i64} : memref<544xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// PAD: %[[KROW:[^ ]+]] = arith.muli %{{.+}}, %[[C36]] : index
// PAD-NEXT: %[[KAT:[^ ]+]] = arith.addi %[[KROW]], %{{.+}} : index
// PAD-NEXT: vector.store %{{.+}}, %[[KLDS]][%[[KAT]]] {alignment = 8 : i64} : memref<576xf16, #gpu.address_space<workgroup>>, vector<8xf16>
// PAD: vector.store %{{.+}}, %[[VLDS]][%{{.+}}] {alignment = 8 : i64} : memref<544xf16, #gpu.address_space<workgroup>>, vector<16xf16>
// The barriers of the input, where the input has them, and no others.
// PAD-NOT: gpu.barrier
// PAD: } else {
// PAD-NOT: gpu.barrier
// PAD: vector.store %{{.+}}, %[[VLDS]][%{{.+}}] {alignment = 4 : i64} : memref<544xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// PAD: }
// PAD-NEXT: }
// PAD-NEXT: gpu.barrier
// PAD-NOT: gpu.barrier
// PAD: vector.load %[[QLDS]][%{{.+}}] {alignment = 4 : i64} : memref<544xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// PAD: vector.load %[[KLDS]][%{{.+}}] {alignment = 4 : i64} : memref<576xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// PAD-NOT: gpu.barrier
// P at r * 18 + c.
// PAD: %[[PROW:[^ ]+]] = arith.muli %{{.+}}, %[[C18]] : index
// PAD-NEXT: %[[PAT:[^ ]+]] = arith.addi %[[PROW]], %{{.+}} : index
// PAD-NEXT: memref.store %{{.+}}, %[[PLDS]][%[[PAT]]] : memref<288xf16, #gpu.address_space<workgroup>>
// PAD-NOT: gpu.barrier
// PAD-NOT: scf.for
// PAD: gpu.barrier
// PAD-NOT: gpu.barrier
// V's pair (kk, c), (kk+1, c) at (kk / 2) * 68 + 2c + kk % 2.
// PAD: scf.for %[[KK:[^ ]+]] = %{{.+}} -> (vector<{{[0-9]+}}xf32>) {
// PAD: vector.load %[[PLDS]][%{{.+}}] {alignment = 4 : i64} : memref<288xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// PAD: %[[VPAIR:[^ ]+]] = arith.divui %[[KK]], %{{.+}} : index
// PAD-NEXT: %[[VODD:[^ ]+]] = arith.remui %[[KK]], %{{.+}} : index
// PAD-NEXT: %[[VROW:[^ ]+]] = arith.muli %[[VPAIR]], %[[C68]] : index
// PAD: vector.load %[[VLDS]][%{{.+}}] {alignment = 4 : i64} : memref<544xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// PAD-NOT: gpu.barrier
// PAD: gpu.return
#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 4>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
!q = memref<16x32xf16, strided<[34, 1]>, #gpu.address_space<workgroup>>
!k = memref<16x32xf16, strided<[36, 1]>, #gpu.address_space<workgroup>>
!v = memref<8x32x2xf16, strided<[68, 2, 1]>, #gpu.address_space<workgroup>>
!p = memref<16x16xf16, strided<[18, 1]>, #gpu.address_space<workgroup>>
func.func @padded(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv) {
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
    %c0 = arith.constant 0 : index
    %qb = fa.lds_buffer "q" : !q
    %kb = fa.lds_buffer "k" : !k
    %vb = fa.lds_buffer "v" : !v
    %pb = fa.lds_buffer "p" : !p
    fa.copy_tile %q[%b, %h, %c0] to %qb : !qkv to !q
    fa.copy_tile %k[%b, %h, %c0] to %kb : !qkv to !k
    fa.copy_tile %v[%b, %h, %c0] to %vb : !qkv to !v
    gpu.barrier
    %s = fa.lds_dot %qb, %kb transpose_rhs : !q, !k -> tensor<16x16xf32>
    %p = arith.truncf %s : tensor<16x16xf32> to tensor<16x16xf16>
    fa.write_tile %p to %pb : tensor<16x16xf16> to !p
    gpu.barrier
    %acc = fa.lds_dot %pb, %vb : !p, !v -> tensor<16x32xf32>
    %out = arith.truncf %acc : tensor<16x32xf32> to tensor<16x32xf16>
    fa.store_tile %out, %o[%b, %h, %c0] : tensor<16x32xf16>, !qkv
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile, mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

//--- no-grid.mlir

// A forall without #fa.tile is not a tile grid.
module {
  func.func @not_a_grid(%m: memref<4xf32>) {
    scf.forall (%i) in (4) {
      %c = arith.constant 1.0 : f32
      memref.store %c, %m[%i] : memref<4xf32>
    }
    return
  }
}

//--- branch.mlir
// BRANCH-LABEL: gpu.func @branch_kernel
// BRANCH: %[[FIRST:[^ ]+]] = arith.cmpi eq, %block_id_y, %{{[^ ]+}} : index
// BRANCH-NEXT: scf.if %[[FIRST]] {
// BRANCH: memref.store %{{[^,]+}}, %arg3[
// BRANCH: } else {
// BRANCH: memref.store %{{[^,]+}}, %arg3[
// BRANCH: gpu.return
#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @branch(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv) {
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
    %c0 = arith.constant 0 : index
    %c8 = arith.constant 8 : index
    %x = fa.load_tile %q[%b, %h, %c0] : !qkv -> tensor<16x32xf16>
    %first = arith.cmpi eq, %h, %c0 : index
    scf.if %first {
      fa.store_tile %x, %o[%b, %h, %c0] : tensor<16x32xf16>, !qkv
    } else {
      fa.store_tile %x, %o[%b, %h, %c8] : tensor<16x32xf16>, !qkv
    }
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
  return
}

//--- invalid.mlir

#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @missing_args(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv) {
  // expected-error @+1 {{'scf.forall' op is not an fa tile grid (missing fa.tile or fa.args)}}
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
  } {fa.tile = #tile}
  return
}

// -----

!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @unknown_target(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv) {
  // expected-error @+1 {{'scf.forall' op unknown target 'gfx1234'; known targets: gfx906, sm_90, sm_80, host}}
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #fa.tile<target = "gfx1234", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>}
  return
}

// -----

#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @rank(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv) {
  // expected-error @+1 {{'scf.forall' op is not an fa tile grid (expected 3 induction variables, got 2)}}
  scf.forall (%mb, %h) in (1, 1) {
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
  return
}

// -----

#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
gpu.module @m {
  gpu.func @not_a_func() {
    // expected-error @+1 {{'scf.forall' op is not an fa tile grid (not inside a func.func)}}
    scf.forall (%mb, %h, %b) in (1, 1, 1) {
    } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
    gpu.return
  }
}

// -----

#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @args_out_of_range(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv) {
  // expected-error @+1 {{'scf.forall' op is not an fa tile grid (fa.args[3] = 7 is not an argument of the function)}}
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
  } {fa.args = array<i64: 0, 1, 2, 7, -1>, fa.tile = #tile}
  return
}

// -----

#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @args_not_memref(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv, %n: index) {
  // expected-error @+1 {{'scf.forall' op is not an fa tile grid (fa.args[4] must be a rank-3 memref)}}
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
  } {fa.args = array<i64: 0, 1, 2, 3, 4>, fa.tile = #tile}
  return
}

// -----

#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x?xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @dynamic_head_dim(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv) {
  // expected-error @+1 {{'scf.forall' op is not an fa tile grid (fa.args[0] must have a static head dimension)}}
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
  return
}

// -----

// 1024 threads over a 16x16 block: a row of 16 columns cannot spread over
// the 64 lanes each row would need.
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @unmappable(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv) {
  // expected-error @+1 {{'scf.forall' op tile config cannot be mapped to 1024 threads}}
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 16, wave_size = 64, stages = 1, lds_pad = 0>}
  return
}

// -----

// Tile IR straight from fa-tile: its LDS tiles have no buffers yet.
#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @not_promoted(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv) {
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'fa.load_tile' op is a tile in LDS without an explicit buffer: run fa-promote before fa-lower-to-gpu}}
    %qt = fa.load_tile %q[%b, %h, %c0] : !qkv -> tensor<16x32xf16>
    %kt = fa.load_tile %k[%b, %h, %c0] : !qkv -> tensor<16x32xf16>
    %s = fa.tile_dot %qt, %kt transpose_rhs : tensor<16x32xf16>, tensor<16x32xf16> -> tensor<16x16xf32>
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
  return
}

// -----

// An LDS operand that is not one of the grid's fa.lds_buffer ops.
#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
!lds = memref<16x32xf16, strided<[32, 1]>, #gpu.address_space<workgroup>>
func.func @foreign_lds(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv, %w: !lds) {
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
    %c0 = arith.constant 0 : index
    %qb = fa.lds_buffer "q" : !lds
    fa.copy_tile %q[%b, %h, %c0] to %qb : !qkv to !lds
    gpu.barrier
    // expected-error @+1 {{'fa.lds_dot' op cannot lower: operand #1 is not an fa.lds_buffer of this grid}}
    %s = fa.lds_dot %qb, %w transpose_rhs : !lds, !lds -> tensor<16x16xf32>
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
  return
}

// -----

// Buffers in one slot share one attribution, which has one element type.
#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
!lds = memref<16x32xf16, strided<[32, 1]>, #gpu.address_space<workgroup>>
func.func @slot_types(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv) {
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
    %kb = fa.lds_buffer "k" slot("kv") : !lds
    // expected-error @+1 {{'fa.lds_buffer' op shares slot 'kv' with a buffer of another element type}}
    %vb = fa.lds_buffer "v" slot("kv") : memref<16x32xf32, strided<[32, 1]>, #gpu.address_space<workgroup>>
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
  return
}

// -----

// A branch that yields a value: the lowering takes branches of stores only
// (a split kernel's direct write at S = 1, the combine's nothing-to-do).
#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @if_with_results(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv, %t: tensor<16x32xf16>) {
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
    %c0 = arith.constant 0 : index
    %x = fa.load_tile %q[%b, %h, %c0] : !qkv -> tensor<16x32xf16>
    %first = arith.cmpi eq, %h, %c0 : index
    // expected-error @+1 {{'scf.if' op cannot lower: an scf.if with results in tile IR}}
    %y = scf.if %first -> (tensor<16x32xf16>) {
      scf.yield %x : tensor<16x32xf16>
    } else {
      scf.yield %x : tensor<16x32xf16>
    }
    fa.store_tile %y, %o[%b, %h, %c0] : tensor<16x32xf16>, !qkv
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
  return
}

// -----

// A tensor from outside the grid has no per-thread fragment.
#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
!lds = memref<16x32xf16, strided<[32, 1]>, #gpu.address_space<workgroup>>
func.func @tensor_from_outside(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv, %t: tensor<16x32xf16>) {
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
    %c0 = arith.constant 0 : index
    // expected-error @+1 {{'fa.store_tile' op cannot lower: tensor value has no per-thread fragment}}
    fa.store_tile %t, %o[%b, %h, %c0] : tensor<16x32xf16>, !qkv
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
  return
}

// -----

#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
!lds = memref<16x32xf16, strided<[32, 1]>, #gpu.address_space<workgroup>>
func.func @row_from_memory(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv, %rows: memref<1xindex>) {
  %c0 = arith.constant 0 : index
  %r = memref.load %rows[%c0] : memref<1xindex>
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
    %qb = fa.lds_buffer "q" : !lds
    // expected-error @+1 {{'fa.copy_tile' op cannot lower: cannot recompute 'memref.load' inside the kernel}}
    fa.copy_tile %q[%b, %h, %r] to %qb : !qkv to !lds
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
  return
}

// -----

#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
!lds = memref<16x32xf16, strided<[32, 1]>, #gpu.address_space<workgroup>>
func.func @row_from_argument(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv, %r: index) {
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
    %qb = fa.lds_buffer "q" : !lds
    // expected-error @+1 {{'fa.copy_tile' op cannot lower: a block argument from outside the grid cannot be passed to the kernel}}
    fa.copy_tile %q[%b, %h, %r] to %qb : !qkv to !lds
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
  return
}

// -----

#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
!lds = memref<16x32xf16, strided<[32, 1]>, #gpu.address_space<workgroup>>
func.func @dim_of_other_buffer(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv, %x: memref<?xf32>) {
  %c0 = arith.constant 0 : index
  %n = memref.dim %x, %c0 : memref<?xf32>
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
    %qb = fa.lds_buffer "q" : !lds
    // expected-error @+1 {{'fa.copy_tile' op cannot lower: memref.dim of a value that is not a kernel buffer}}
    fa.copy_tile %q[%b, %h, %n] to %qb : !qkv to !lds
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
  return
}

// -----

#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
!lds = memref<16x32xf16, strided<[32, 1]>, #gpu.address_space<workgroup>>
func.func @not_a_kernel_buffer(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv, %x: !qkv) {
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
    %c0 = arith.constant 0 : index
    %xb = fa.lds_buffer "x" : !lds
    // expected-error @+1 {{'fa.copy_tile' op cannot lower: operand #0 is not one of the kernel's buffers (fa.args)}}
    fa.copy_tile %x[%b, %h, %c0] to %xb : !qkv to !lds
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
  return
}

// -----

#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @unsupported_op(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv) {
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
    // expected-error @+1 {{'tensor.empty' op is not supported in tile IR by fa-lower-to-gpu}}
    %e = tensor.empty() : tensor<16x32xf16>
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
  return
}
