// fa-tile on a paged K/V cache (fa.attention paged): each sequence's length
// is read from cache_seqlens in the grid, K and V are read through the
// block table (fa.load_tile pages), the KV heads are the cache's dim 2.
// RUN: split-file %s %t
// RUN: fa-opt %t/paged.mlir --fa-tile="target=gfx906" | FileCheck %s
// RUN: fa-opt %t/paged.mlir --fa-tile="target=gfx906 kv-splits=runtime gqa-pack=on" | FileCheck %s --check-prefix=SPLIT
// RUN: fa-opt %t/paged.mlir --fa-tile="target=gfx906" --fa-promote --fa-double-buffer | FileCheck %s --check-prefix=FETCH
// Must not fire on a dense kernel: no pages, no length read.
// RUN: fa-opt %t/dense.mlir --fa-tile="target=gfx906" | FileCheck %s --check-prefix=DENSE
// DENSE-NOT: pages(
// DENSE-NOT: memref.load

//--- paged.mlir
// CHECK-LABEL: func.func @paged
// CHECK-SAME: (%[[Q:[^:]+]]: memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>, %[[K:[^:]+]]: memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>, %[[V:[^:]+]]: memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>, %[[T:[^:]+]]: memref<?x?xi32, strided<[?, 1], offset: ?>>, %[[L:[^:]+]]: memref<?xi32, strided<[1], offset: ?>>,
// The KV heads are the cache's dimension 2 ([num_pages, page_size, Hkv, D]).
// CHECK: %[[HKV:[^ ]+]] = memref.dim %[[K]], %{{c2[_0-9]*}}
// CHECK: scf.forall (%{{[^,]+}}, %{{[^,]+}}, %[[B:[^)]+]]) in
// The sequence's keys: cache_seqlens[b].
// CHECK: %[[LEN:[^ ]+]] = memref.load %[[L]][%[[B]]]
// CHECK: %[[LK:[^ ]+]] = arith.index_cast %[[LEN]] : i32 to index
// Causal: the diagonal of the sequence's own length.
// CHECK: arith.addi %{{[^,]+}}, %[[LK]]
// CHECK: fa.load_tile %[[K]][%[[B]], %{{[^,]+}}, %{{[^]]+}}] pages(%[[T]] : memref<?x?xi32, strided<[?, 1], offset: ?>>, %[[LK]])
// CHECK: fa.load_tile %[[V]][%[[B]], %{{[^,]+}}, %{{[^]]+}}] pages(%[[T]] : memref<?x?xi32, strided<[?, 1], offset: ?>>, %[[LK]])
// CHECK: fa.tile_mask %{{[^ ]+}} rows(%{{[^)]+}}) cols(%{{[^,]+}}, %[[LK]]) causal
// O and LSE follow the inputs; the 9 roles (no workspace: -1, -1).
// CHECK: fa.args = array<i64: 0, 1, 2, 5, 6, -1, -1, 3, 4>, fa.causal, fa.paged
//
// Split-KV: the combine grid takes the same 9 roles (one ABI).
// SPLIT: fa.args = array<i64: 0, 1, 2, 5, 6, 7, 8, 3, 4>, fa.causal, fa.gqa_packed, fa.kv_splits = "runtime", fa.paged
// SPLIT: fa.args = array<i64: 0, 1, 2, 5, 6, 7, 8, 3, 4>, fa.causal, fa.combine, fa.paged
//
// fa-promote and fa-double-buffer keep the paging on the fetches of K and
// V (the prologue's K, then V and the next K in the loop).
// FETCH-COUNT-3: fa.fetch_tile %{{[^[]+}}[{{[^]]+}}] pages(%{{[^:]+}} : memref<?x?xi32, strided<[?, 1], offset: ?>>, %{{[^)]+}}) for
// FETCH-NOT: fa.copy_tile %arg1
// FETCH-NOT: fa.copy_tile %arg2
func.func @paged(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>, %table: tensor<?x?xi32>, %lens: tensor<?xi32>) -> (tensor<?x?x?x128xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v paged(%table, %lens) causal : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x?x?x128xf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x128xf16>, tensor<?x?x?xf32>
}

//--- dense.mlir
func.func @dense(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v causal : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}
