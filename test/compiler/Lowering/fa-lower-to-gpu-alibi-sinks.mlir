// fa-lower-to-gpu with ALiBi slopes and sinks: the kernel takes the ABI's
// head words after its version's arguments (two flat f32 buffers: slopes,
// sinks; KernelAbi.h "Head parameters") and says fa.alibi / fa.sinks for
// the manifest; the launch passes the [Hq] vectors. fa.tile_mask's alibi
// subtracts slope_r * |r + (Lk - Lq) - c| from each entry (each thread's
// rows' slopes spread over their columns) before the -inf select. The
// planted bug measures the distance from the start, |r - c|.
// RUN: fa-opt %s --fa-tile="target=gfx906" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-tile="target=gfx906" --fa-promote --canonicalize --cse --fa-lower-to-gpu="test-plant-bug=alibi-wrong-end" --canonicalize --cse | FileCheck %s --check-prefix=WRONG-END
// Sinks alone: the head words still come in pairs (a null slopes buffer).
// RUN: sed -e 's/ alibi(%%slopes : tensor<8xf32>)//' %s | fa-opt --fa-tile="target=gfx906" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s --check-prefix=SINKS
// Must not fire without them: no head words, no bias in the mask.
// RUN: sed -e 's/ alibi(%%slopes : tensor<8xf32>) sinks(%%sinks : tensor<8xf32>)//' %s | fa-opt --fa-tile="target=gfx906" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s --check-prefix=PLAIN
// PLAIN: gpu.func @alibi_kernel(
// PLAIN-SAME: %arg23: i64) workgroup(
// PLAIN-NOT: fa.alibi
// PLAIN-NOT: fa.sinks
// PLAIN: scf.if %{{[^ ]+}} -> (vector<16xf32>)
// PLAIN: %[[PAST:[^ ]+]] = arith.cmpi sgt, %[[COLS:[^,]+]], %{{[^ ]+}} : vector<16xindex>
// PLAIN-NEXT: arith.select %[[PAST]]

// The launch passes the slopes and sinks as flat [Hq] views.
// CHECK: gpu.launch_func @fa_kernels::@alibi_kernel
// CHECK-SAME: %c0_i64 : i64, %{{[^ ]+}} : memref<?xf32, strided<[1], offset: ?>>, %{{[^ ]+}} : memref<?xf32, strided<[1], offset: ?>>)
// CHECK: gpu.func @alibi_kernel(
// CHECK-SAME: %arg23: i64, %arg24: memref<?xf32, strided<[1], offset: ?>>, %arg25: memref<?xf32, strided<[1], offset: ?>>) workgroup(
// CHECK-SAME: fa.abi_version = 1 : i64, fa.alibi,
// CHECK-SAME: fa.sinks,
// Each row's slope and sink: element h of the vector.
// CHECK: memref.load %arg24[
// CHECK: memref.load %arg25[
// ALiBi changes every entry: every block is masked, no branch.
// CHECK-NOT: scf.if %{{[^ ]+}} -> (vector<16xf32>)
// CHECK: %[[ROWS:[^ ]+]] = arith.addi %{{[^,]+}}, %{{[^ ]+}} : vector<16xindex>
// CHECK-NEXT: vector.broadcast
// CHECK-NEXT: %[[COLS:[^ ]+]] = arith.addi %{{[^,]+}}, %{{[^ ]+}} : vector<16xindex>
// CHECK-NEXT: %[[LKM1:[^ ]+]] = arith.subi %{{[^,]+}}, %c1 : index
// CHECK-NEXT: %[[LAST:[^ ]+]] = vector.broadcast %[[LKM1]] : index to vector<16xindex>
// CHECK: %[[DIAG:[^ ]+]] = arith.addi %[[ROWS]], %{{[^ ]+}} : vector<16xindex>
// CHECK-NEXT: %[[SLOPE:[^ ]+]] = vector.shuffle %{{[^,]+}}, %{{[^ ]+}} [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3] : vector<4xf32>, vector<4xf32>
// CHECK-NEXT: %[[DELTA:[^ ]+]] = arith.subi %[[DIAG]], %[[COLS]] : vector<16xindex>
// CHECK-NEXT: %[[NEG:[^ ]+]] = arith.subi %{{[^,]+}}, %[[DELTA]] : vector<16xindex>
// CHECK-NEXT: %[[DIST:[^ ]+]] = arith.maxsi %[[DELTA]], %[[NEG]] : vector<16xindex>
// CHECK-NEXT: %[[D64:[^ ]+]] = arith.index_cast %[[DIST]] : vector<16xindex> to vector<16xi64>
// CHECK-NEXT: %[[DF:[^ ]+]] = arith.sitofp %[[D64]] : vector<16xi64> to vector<16xf32>
// CHECK-NEXT: %[[BIAS:[^ ]+]] = arith.mulf %[[SLOPE]], %[[DF]] : vector<16xf32>
// CHECK-NEXT: %[[X:[^ ]+]] = arith.subf %{{[^,]+}}, %[[BIAS]] : vector<16xf32>
// CHECK-NEXT: %[[PAST:[^ ]+]] = arith.cmpi sgt, %[[COLS]], %[[LAST]] : vector<16xindex>
// CHECK-NEXT: arith.select %[[PAST]], %{{[^,]+}}, %[[X]]
// WRONG-END: %[[ROWS:[^ ]+]] = arith.addi %{{[^,]+}}, %{{[^ ]+}} : vector<16xindex>
// WRONG-END: %[[COLS:[^ ]+]] = arith.addi %{{[^,]+}}, %{{[^ ]+}} : vector<16xindex>
// WRONG-END: vector.shuffle
// WRONG-END-NEXT: arith.subi %[[ROWS]], %[[COLS]] : vector<16xindex>
// SINKS: gpu.func @alibi_kernel(
// SINKS-SAME: %arg24: memref<?xf32, strided<[1], offset: ?>>, %arg25: memref<?xf32, strided<[1], offset: ?>>) workgroup(
// SINKS-NOT: fa.alibi
// SINKS-SAME: fa.sinks
// SINKS-NOT: arith.sitofp
// SINKS: gpu.return
func.func @alibi(%q: tensor<1x8x?x64xf16>, %k: tensor<1x2x?x64xf16>, %v: tensor<1x2x?x64xf16>, %slopes: tensor<8xf32>, %sinks: tensor<8xf32>) -> tensor<1x8x?x64xf16> {
  %o = fa.attention %q, %k, %v alibi(%slopes : tensor<8xf32>) sinks(%sinks : tensor<8xf32>) : tensor<1x8x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16> -> tensor<1x8x?x64xf16>
  return %o : tensor<1x8x?x64xf16>
}
