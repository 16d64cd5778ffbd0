// fa-lower-to-gpu share-rows (KernelLowering::ldsDot): where the 16 lanes
// of a thread row (TC = 16) need the same lhs rows of P·V (P), each lane
// reads a sixteenth of them and a rolled loop of 16 steps (four per trip)
// passes them one lane down the row (gpu.shuffle idx marked
// fa.row_rotate = 1; DPP row_ror on gfx906, test/compiler/Targets/Gfx906).
// Q·Kᵀ never rotates: a thread there has BLOCK_N / 16 columns, so a
// rotation would serve that few MACs; every lane reads Q's pairs (an LDS
// broadcast). auto is off on every target; fac turns it on for gfx906
// where the backend spills without it (test/tools/fac-gfx906-share-rows).
// RUN: split-file %s %t
// RUN: fa-opt %t/f16.mlir --fa-tile="target=gfx906 block-m=64 block-n=64" --fa-promote --canonicalize --cse --fa-lower-to-gpu="share-rows=on" --canonicalize --cse | FileCheck %s
// RUN: fa-opt %t/f16.mlir --fa-tile="target=host block-m=64 block-n=64" --fa-promote --canonicalize --cse --fa-lower-to-gpu="share-rows=on" --canonicalize --cse | FileCheck %s
// RUN: fa-opt %t/f16.mlir --fa-tile="target=sm_90 block-m=64 block-n=32" --fa-promote="widen=off" --canonicalize --cse --fa-lower-to-gpu="share-rows=on" --canonicalize --cse | FileCheck %s --check-prefix=SM90-ON

// Where it must not fire: turned off; every target's default (auto: off);
// a thread grid whose rows are not 16 lanes (4x32); f32 tiles (a pair is
// 64 bits).
// RUN: fa-opt %t/f16.mlir --fa-tile="target=gfx906 block-m=64 block-n=64" --fa-promote --canonicalize --cse --fa-lower-to-gpu="share-rows=off" --canonicalize --cse | FileCheck %s --check-prefix=NONE
// RUN: fa-opt %t/f16.mlir --fa-tile="target=gfx906 block-m=64 block-n=64" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s --check-prefix=NONE
// RUN: fa-opt %t/f16.mlir --fa-tile="target=host block-m=64 block-n=64" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s --check-prefix=NONE
// RUN: fa-opt %t/f16.mlir --fa-tile="target=sm_90 block-m=64 block-n=32" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s --check-prefix=NONE
// RUN: fa-opt %t/f16.mlir --fa-tile="target=gfx906 block-m=16 block-n=128 waves=2" --fa-promote --canonicalize --cse --fa-lower-to-gpu="share-rows=on" --canonicalize --cse | FileCheck %s --check-prefix=NONE
// RUN: fa-opt %t/f32.mlir --fa-tile="target=gfx906 block-m=64 block-n=32" --fa-promote --canonicalize --cse --fa-lower-to-gpu="share-rows=on" --canonicalize --cse | FileCheck %s --check-prefix=NONE

// A value that is not auto, on or off.
// RUN: not fa-opt %t/f16.mlir --fa-tile="target=gfx906" --fa-promote --fa-lower-to-gpu="share-rows=maybe" 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: fa-lower-to-gpu: share-rows must be auto, on or off, got 'maybe'

// Q·Kᵀ: the plain loop over D = 64 in pairs, each lane loading its 4 Q
// pairs and 4 K pairs per step; no rotation.
// CHECK:      scf.for %{{.*}} = %c0 to %c64 step %c2 iter_args(%{{.*}} = %{{.*}}) -> (vector<16xf32>)
// CHECK-COUNT-8: vector.load %{{.*}} : memref<{{.*}}xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK-NOT:  fa.row_rotate
// CHECK:      scf.yield
// P·V: the rotation source, in-row lane (tc + 1) mod 16 of the same
// 16-lane row.
// CHECK:      %[[LANE:.*]] = arith.remui %thread_id_x, %c64
// CHECK:      %[[ROW:.*]] = arith.subi %[[LANE]], %[[TC:.*]] : index
// CHECK:      %[[UP:.*]] = arith.addi %[[TC]], %c1
// CHECK:      %[[UPR:.*]] = arith.andi %[[UP]], %c15
// CHECK:      %[[SRC:.*]] = arith.addi %[[ROW]], %[[UPR]]
// CHECK:      %[[SRC32:.*]] = arith.index_cast %[[SRC]] : index to i32
// 16 steps as a bound the backend cannot fold: 16 + min(Lq, 0).
// CHECK:      %[[MIN:.*]] = arith.minsi %{{.*}}, %c0 : index
// CHECK:      %[[STEPS:.*]] = arith.addi %[[MIN]], %c16 : index
// The 64 keys in chunks of 32 (16 pairs); each lane loads its own pair of
// each of its 4 P rows, then 16 steps, four per trip: a step's products,
// then its 4 rotations.
// CHECK:      scf.for %{{.*}} = %c0 to %c64 step %c32 iter_args(%{{.*}} = %{{.*}}) -> (vector<16xf32>)
// CHECK-COUNT-4: vector.load %{{.*}} : memref<{{.*}}xf16, #gpu.address_space<workgroup>>, vector<2xf16>
// CHECK:      scf.for %{{.*}} = %c0 to %[[STEPS]] step %c4 iter_args({{.*}}) -> (vector<16xf32>, i32, i32, i32, i32)
// CHECK-COUNT-2: math.fma
// CHECK-COUNT-4: gpu.shuffle  idx %{{.*}}, %[[SRC32]], %c64_i32 {fa.row_rotate = 1 : i32} : i32
// CHECK-COUNT-2: math.fma
// CHECK-COUNT-4: gpu.shuffle  idx %{{.*}}, %[[SRC32]], %c64_i32 {fa.row_rotate = 1 : i32} : i32
// CHECK-COUNT-2: math.fma
// CHECK-COUNT-4: gpu.shuffle  idx %{{.*}}, %[[SRC32]], %c64_i32 {fa.row_rotate = 1 : i32} : i32
// CHECK-COUNT-2: math.fma
// CHECK-COUNT-4: gpu.shuffle  idx %{{.*}}, %[[SRC32]], %c64_i32 {fa.row_rotate = 1 : i32} : i32
// CHECK:        scf.yield

// sm_90 when asked, its 16-bit tiles kept 16-bit in shared memory (it
// widens them to f32 by default, where a pair is 64 bits): warps of 32
// lanes, two 16-lane rows each.
// SM90-ON: gpu.shuffle  idx %{{.*}}, %{{.*}}, %c32_i32 {fa.row_rotate = 1 : i32} : i32

// NONE-NOT: fa.row_rotate

//--- f16.mlir
func.func @causal_lse(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> (tensor<?x8x?x64xf16>, tensor<?x8x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v causal scale(0.125) : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
  return %o, %lse : tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
}

//--- f32.mlir
func.func @f32(%q: tensor<?x8x?x64xf32>, %k: tensor<?x2x?x64xf32>, %v: tensor<?x2x?x64xf32>) -> tensor<?x8x?x64xf32> {
  %o = fa.attention %q, %k, %v : tensor<?x8x?x64xf32>, tensor<?x2x?x64xf32>, tensor<?x2x?x64xf32> -> tensor<?x8x?x64xf32>
  return %o : tensor<?x8x?x64xf32>
}
