// fa-lower-to-gpu on a split-KV combine grid: each thread's columns of the
// [rows, D] tiles are contiguous (tc * CC + j, not tc + j * TC), and a
// row's columns load under one branch on the row's bound, so that the
// backend merges them into wide loads (gfx906: global_load_dwordx4).
// The split kernel keeps the strided columns its products and row
// reductions are built on.
// RUN: fa-opt %s --fa-tile="target=sm_90 kv-splits=runtime" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-tile="target=sm_90 kv-splits=runtime" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s --check-prefix=SPLIT
// RUN: fac %s --target=gfx906 --kv-splits=runtime --gqa-pack=on --block-m=4 --block-n=32 --waves=1 --emit=asm -o - | FileCheck %s --check-prefix=ISA
// RUN: fac %s --target=gfx906 --kv-splits=runtime --gqa-pack=on --block-m=4 --block-n=32 --waves=1 --emit=asm -o %t.s
// RUN: FileCheck %s --check-prefix=GUARD < %t.s
// RUN: sed -n '/^decode_kernel1:/,/s_endpgm/p' %t.s | grep -c s_and_saveexec | FileCheck %s --check-prefix=GUARDS
// RUN: fa-opt %s --fa-tile="target=host kv-splits=runtime gqa-pack=on" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s --check-prefix=MERGE

// fa.merge_splits lowered (host, gfx906's dataflow): 128 threads walk the
// splits in groups, each storing its m, l and 4 outputs (6 fields x 128
// f32 of workgroup memory), a barrier, then each thread merges the groups'
// states of its rows from there.
// MERGE: gpu.func @decode_kernel1({{.*}} workgroup(%[[WS:[^ ]+]] : memref<768xf32, #gpu.address_space<workgroup>>)
// MERGE: %[[W:[^:]+]]:8 = scf.for {{.*}} -> (f32, f32, f32, f32, f32, f32, index, index)
// MERGE: math.exp2
// MERGE: memref.store %[[W]]#0, %[[WS]][%thread_id_x]
// MERGE-COUNT-5: memref.store %[[W]]#{{[1-5]}}, %[[WS]]
// MERGE-NEXT: gpu.barrier
// MERGE: memref.load %[[WS]]
// MERGE: gpu.return

// The combine kernel: 4 x 128 over 128 threads (thread grid 4 x 32), 4
// columns a thread, starting at tc * 4: the loop over the splits (sm_90
// has fa.merge_splits' branch before it, for the grids smaller than the
// chip).
// CHECK: gpu.func @decode_kernel1({{.*}}fa.combine
// CHECK: %[[TC:[^ ]+]] = arith.remui %thread_id_x, %c32
// CHECK: scf.for {{.*}} -> (vector<1xf32>, vector<1xf32>, vector<4xf32>)
// (The thread's 4 adjacent columns in one vector load.)
// CHECK: %[[C0:[^ ]+]] = arith.muli %[[TC]], %c4
// CHECK: %[[O0:[^ ]+]] = arith.addi %[[ROW:[^,]+]], %[[C0]]
// CHECK: scf.if %{{[^ ]+}} -> (f32, f32, f32, f32) {
// CHECK-NEXT: %[[V:[^ ]+]] = vector.load %[[WSO:arg[0-9]+]][%[[O0]]] {{.*}} vector<4xf32>
// CHECK-NEXT: vector.extract %[[V]][0]
// CHECK-NEXT: vector.extract %[[V]][1]
// CHECK-NEXT: vector.extract %[[V]][2]
// CHECK-NEXT: vector.extract %[[V]][3]
// CHECK-NEXT: scf.yield
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[Z:cst[_0-9]*]], %[[Z]], %[[Z]], %[[Z]]
// O's stores of the row at the same contiguous columns.
// CHECK: memref.store %{{[^,]+}}, %{{arg[0-9]+}}[%{{[^]]+}}] : memref<?xf16
// CHECK: gpu.return

// Where it must not fire: the split kernel (4 x 32 over one warp, thread
// grid 1 x 32) keeps its columns at tc + j * 32 (up to tc + 96); the
// combine's start at tc * 4 and go no further than + 3.
// SPLIT: gpu.func @decode_kernel(
// SPLIT: %[[TC:[^ ]+]] = arith.remui %thread_id_x, %c32
// SPLIT: arith.addi %[[TC]], %c96 : index
// SPLIT: gpu.return
// SPLIT: gpu.func @decode_kernel1(
// SPLIT-NOT: %c96
// SPLIT: gpu.return

// gfx906: the combine's loads of O_s are 16 bytes wide; its max over the
// splits has no NaN test (maxnumf: v_max3_f32 / v_max_f32 alone, where
// maximumf added v_cmp_o_f32 and v_cndmask_b32 a split) and O's sum is
// fused (v_fmac_f32).
// ISA-LABEL: decode_kernel1:
// ISA-NOT: v_cmp_o_f32
// ISA: global_load_dwordx4
// ISA-NOT: v_cmp_o_f32
// ISA: v_fmac_f32
// ISA-NOT: v_cmp_o_f32
// ISA: s_endpgm

// gfx906: the loop's trip loads 16 (8 splits' LSE and O_s) under one guard
// of the rows' bound (fa-merge-guards; one s_and_saveexec /
// s_cbranch_execz per load before: 18 in the loop's path, then 3 with O's
// and LSE's stores), each addressed as an SGPR base plus a 32-bit offset
// (LowerToRocdl's useByteOffsets). The fa.merge_splits path follows (few
// workgroups, more splits than a trip): each of its trip's 4 splits loads
// its LSE and O_s under one guard, then the states meet in LDS. 10 guards
// in the kernel: 3 + 4 loads + one per phase-2 row and per store.
// GUARDS: {{^}}10{{$}}
// GUARD-LABEL: decode_kernel1:
// GUARD: s_and_saveexec_b64
// GUARD-NEXT: s_cbranch_execz
// GUARD-NOT: s_and_saveexec
// GUARD-COUNT-16: global_load_{{dword|dwordx4}} v{{[][0-9:]+}}, v{{[0-9]+}}, s[{{[0-9]+:[0-9]+}}]
// GUARD-NOT: global_load
// GUARD: global_store_short
// GUARD-NOT: global_load
// GUARD: s_and_saveexec_b64
// GUARD-NOT: global_load
// GUARD: s_and_saveexec_b64
// GUARD-NOT: s_and_saveexec_b64
// GUARD: global_load_dword v
// GUARD-NOT: s_and_saveexec_b64
// GUARD: global_load_dwordx4
// GUARD: s_and_saveexec_b64
// GUARD-NOT: s_and_saveexec_b64
// GUARD: global_load_dword v
// GUARD-NOT: s_and_saveexec_b64
// GUARD: global_load_dwordx4
// GUARD: s_and_saveexec_b64
// GUARD-NOT: s_and_saveexec_b64
// GUARD: global_load_dword v
// GUARD-NOT: s_and_saveexec_b64
// GUARD: global_load_dwordx4
// GUARD: s_and_saveexec_b64
// GUARD-NOT: s_and_saveexec_b64
// GUARD: global_load_dword v
// GUARD-NOT: s_and_saveexec_b64
// GUARD: global_load_dwordx4
// GUARD-NOT: global_load
// GUARD: ds_write
// GUARD: s_barrier
// GUARD-NOT: global_load
// GUARD: s_endpgm
func.func @decode(%q: tensor<?x8x?x128xf16>, %k: tensor<?x2x?x128xf16>, %v: tensor<?x2x?x128xf16>) -> (tensor<?x8x?x128xf16>, tensor<?x8x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v causal : tensor<?x8x?x128xf16>, tensor<?x2x?x128xf16>, tensor<?x2x?x128xf16> -> tensor<?x8x?x128xf16>, tensor<?x8x?xf32>
  return %o, %lse : tensor<?x8x?x128xf16>, tensor<?x8x?xf32>
}
