// fa-tile on a mixed batch (fa.attention paged + varlen(cu_seqlens_q)):
// packed [total_q, Hq, D] queries over a paged K/V cache. Q, O and the
// LSE become the kernel's [B, H, max_L] views and carry seq(start, rows)
// from cu_seqlens_q; K and V stay the cache, read through pages(table,
// keys) with the sequence's keys from the cache lengths; the causal
// diagonal is the sequence's own (its queries are its last rows).
// RUN: split-file %s %t
// RUN: fa-opt %t/mixed.mlir --fa-tile="target=gfx906" | FileCheck %s
// RUN: fa-opt %t/mixed.mlir --fa-tile="target=gfx906 kv-splits=runtime gqa-pack=on" | FileCheck %s --check-prefix=SPLIT
// RUN: fa-opt %t/mixed.mlir --fa-tile="target=gfx906 test-plant-bug=mixed-query-at-start" | FileCheck %s --check-prefix=AT-START
// The planted bug must not fire where there is no mixed batch: a paged or
// a varlen kernel alone keeps the sequence's Lk as the mask's columns.
// RUN: fa-opt %t/paged.mlir --fa-tile="target=gfx906 test-plant-bug=mixed-query-at-start" | FileCheck %s --check-prefix=PAGED
// PAGED: %[[LK:[^ ]+]] = arith.index_cast %{{[^ ]+}} : i32 to index
// PAGED: fa.tile_mask %{{[^ ]+}} rows(%{{[^)]+}}) cols(%{{[^,]+}}, %[[LK]]) causal

//--- mixed.mlir
// CHECK-LABEL: func.func @mixed
// CHECK-SAME: (%[[Q:[^:]+]]: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %[[K:[^:]+]]: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %[[V:[^:]+]]: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %[[T:[^:]+]]: memref<?x?xi32, strided<[?, 1], offset: ?>>, %[[L:[^:]+]]: memref<?xi32, strided<[1], offset: ?>>, %[[CQ:[^:]+]]: memref<?xi32, strided<[1], offset: ?>>, %[[O:[^:]+]]: memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %[[LSE:[^:]+]]: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>)
// The KV heads are the cache's dimension 2.
// CHECK: memref.dim %[[K]], %{{c2[_0-9]*}}
// CHECK: scf.forall (%[[X:[^,]+]], %[[H:[^,]+]], %[[S:[^)]+]]) in
// CHECK: %[[NEXT:[^ ]+]] = arith.addi %[[S]], %c1
// CHECK: %[[Q0I:[^ ]+]] = memref.load %[[CQ]][%[[S]]]
// CHECK: %[[Q0:[^ ]+]] = arith.index_cast %[[Q0I]] : i32 to index
// CHECK: %[[Q1I:[^ ]+]] = memref.load %[[CQ]][%[[NEXT]]]
// CHECK: %[[Q1:[^ ]+]] = arith.index_cast %[[Q1I]] : i32 to index
// CHECK: %[[LQ:[^ ]+]] = arith.subi %[[Q1]], %[[Q0]]
// CHECK: fa.load_tile %[[Q]][%[[S]], %[[H]], %[[M0:[0-9a-z_]+]]] seq(%[[Q0]], %[[LQ]])
// The keys: the cache lengths' entry, not a cu_seqlens_k.
// CHECK: %[[LKI:[^ ]+]] = memref.load %[[L]][%[[S]]]
// CHECK: %[[LK:[^ ]+]] = arith.index_cast %[[LKI]] : i32 to index
// Causal: the diagonal m0 + bm - Lq + Lk of the sequence's own lengths.
// CHECK: %[[D1:[^ ]+]] = arith.subi %{{[^,]+}}, %[[LQ]]
// CHECK: arith.addi %[[D1]], %[[LK]]
// A Q block past the sequence's rows visits no key.
// CHECK: %[[LIVE:[^ ]+]] = arith.cmpi ult, %[[M0]], %[[LQ]]
// CHECK: arith.select %[[LIVE]], %{{[^,]+}}, %c0
// CHECK: fa.load_tile %[[K]][%[[S]], %{{[^,]+}}, %{{[^]]+}}] pages(%[[T]] : {{.+}}, %[[LK]])
// CHECK-NOT: seq(
// CHECK: fa.load_tile %[[V]][%[[S]], %{{[^,]+}}, %{{[^]]+}}] pages(%[[T]] : {{.+}}, %[[LK]])
// CHECK: fa.tile_mask %{{[^ ]+}} rows(%[[M0]], %[[LQ]]) cols(%{{[^,]+}}, %[[LK]]) causal
// CHECK: fa.store_tile %{{[^,]+}}, %[[O]][%[[S]], %[[H]], %[[M0]]] seq(%[[Q0]], %[[LQ]])
// CHECK: fa.store_tile %{{[^,]+}}, %[[LSE]][%[[S]], %[[H]], %[[M0]]] seq(%[[Q0]], %[[LQ]])
// 11 roles: no workspace, the block table and lengths, cu_seqlens_q, no
// cu_seqlens_k.
// CHECK: fa.args = array<i64: 0, 1, 2, 6, 7, -1, -1, 3, 4, 5, -1>, fa.causal, fa.paged
// CHECK-SAME: fa.varlen
//
// Split-KV with packing: both grids take the same 11 roles (one ABI); the
// combine grid writes O and LSE at the sequence's rows.
// SPLIT: fa.load_tile %arg0[{{[^]]+}}] group(%{{[^)]+}}) seq(%{{[^,]+}}, %[[LQ:[^)]+]])
// SPLIT: fa.load_tile %arg1[{{[^]]+}}] pages(%arg3 : {{[^)]+}})
// SPLIT: fa.args = array<i64: 0, 1, 2, 6, 7, 8, 9, 3, 4, 5, -1>, fa.causal, fa.gqa_packed, fa.kv_splits = "runtime", fa.paged
// SPLIT-SAME: fa.varlen
// SPLIT: fa.store_tile %{{[^,]+}}, %arg6[{{[^]]+}}] seq(%{{[^)]+}})
// SPLIT: fa.args = array<i64: 0, 1, 2, 6, 7, 8, 9, 3, 4, 5, -1>, fa.causal, fa.combine, fa.paged
// SPLIT-SAME: fa.varlen
//
// The planted bug masks with the sequence's Lq as its keys: the diagonal
// at the query's row, as if the queries were the sequence's first rows.
// AT-START: %[[LQ:[^ ]+]] = arith.subi %{{[^,]+}}, %{{[^ ]+}} : index
// AT-START: fa.tile_mask %{{[^ ]+}} rows(%{{[^,]+}}, %[[LQ]]) cols(%{{[^,]+}}, %[[LQ]]) causal
func.func @mixed(%q: tensor<?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %t: tensor<?x?xi32>, %l: tensor<?xi32>, %cq: tensor<?xi32>) -> (tensor<?x?x64xf16>, tensor<?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v paged(%t, %l) varlen(%cq : tensor<?xi32>) causal : tensor<?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x?x64xf16>, tensor<?x?xf32>
  return %o, %lse : tensor<?x?x64xf16>, tensor<?x?xf32>
}

//--- paged.mlir
func.func @paged(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %t: tensor<?x?xi32>, %l: tensor<?xi32>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v paged(%t, %l) causal : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
