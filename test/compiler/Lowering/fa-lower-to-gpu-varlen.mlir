// fa-lower-to-gpu on a variable-length batch (kernel ABI version 4): the
// kernel takes the 67 words of version 3 (a varlen kernel gets an empty
// workspace, S = 1, no block table nor lengths, page size and stride 0),
// then cu_seqlens_q and cu_seqlens_k (i32); sequence b's rows start at
// cu_seqlens[b] times the buffer's row stride, and its lengths bound them.
// RUN: fa-opt %s --fa-tile="target=gfx906" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-tile="target=gfx906" --fa-promote --canonicalize --cse --fa-lower-to-gpu="test-plant-bug=seq-start-ignored" --canonicalize --cse | FileCheck %s --check-prefix=IGNORED

// CHECK: gpu.func @varlen_kernel(
// CHECK-SAME: %arg26: i64, %arg27: memref<?xi32, strided<[1], offset: ?>>, %arg28: memref<?xi32, strided<[1], offset: ?>>, %arg29: i64, %arg30: i64, %[[CQ:[^:]+]]: memref<?xi32, strided<[1], offset: ?>>, %[[CK:[^:]+]]: memref<?xi32, strided<[1], offset: ?>>)
// CHECK-SAME: fa.abi_version = 4 : i64
// CHECK-SAME: fa.varlen
// Hq / Hkv from the size words, not from the (absent) page size.
// CHECK-DAG: %[[HQ:[^ ]+]] = arith.index_cast %arg6 : i64 to index
// CHECK-DAG: %[[HKV:[^ ]+]] = arith.index_cast %arg7 : i64 to index
// Q's row stride is the 3rd of the 14 stride words (argument 12), K's the
// 6th (argument 15).
// CHECK-DAG: %[[QROW:[^ ]+]] = arith.index_cast %arg12 : i64 to index
// CHECK-DAG: %[[KROW:[^ ]+]] = arith.index_cast %arg15 : i64 to index
// CHECK: arith.divui %[[HQ]], %[[HKV]] : index
// CHECK: %[[NEXT:[^ ]+]] = arith.addi %block_id_z, %c1
// CHECK: %[[Q0I:[^ ]+]] = memref.load %[[CQ]][%block_id_z]
// CHECK: %[[Q0:[^ ]+]] = arith.index_cast %[[Q0I]] : i32 to index
// CHECK: %[[Q1I:[^ ]+]] = memref.load %[[CQ]][%[[NEXT]]]
// CHECK: %[[Q1:[^ ]+]] = arith.index_cast %[[Q1I]] : i32 to index
// CHECK: %[[LQ:[^ ]+]] = arith.subi %[[Q1]], %[[Q0]]
// CHECK: %[[K0I:[^ ]+]] = memref.load %[[CK]][%block_id_z]
// CHECK: %[[K0:[^ ]+]] = arith.index_cast %[[K0I]] : i32 to index
// The Q block's base moves to the sequence's first row...
// CHECK: %[[QOFF:[^ ]+]] = arith.muli %[[Q0]], %[[QROW]] : index
// CHECK: %[[QBASE:[^ ]+]] = arith.addi %{{[^,]+}}, %[[QOFF]] : index
// ... and its rows exist below the sequence's length.
// CHECK: arith.cmpi slt, %{{[^,]+}}, %[[LQ]] : index
// CHECK: arith.addi %[[QBASE]], %{{[^ ]+}} : index
// K's rows likewise, from cu_seqlens_k[b].
// CHECK: arith.muli %[[K0]], %[[KROW]] : index
//
// The planted bug leaves the sequence's start out of every address.
// IGNORED: gpu.func @varlen_kernel(
// IGNORED: %[[Q0I:[^ ]+]] = memref.load %arg31
// IGNORED: %[[Q0:[^ ]+]] = arith.index_cast %[[Q0I]] : i32 to index
// IGNORED-NOT: arith.muli %[[Q0]],
// IGNORED: gpu.return
func.func @varlen(%q: tensor<?x?x64xf16>, %k: tensor<?x?x64xf16>, %v: tensor<?x?x64xf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> tensor<?x?x64xf16> {
  %o = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) : tensor<?x?x64xf16>, tensor<?x?x64xf16>, tensor<?x?x64xf16> -> tensor<?x?x64xf16>
  return %o : tensor<?x?x64xf16>
}
