// fa-tile on a variable-length batch (fa.attention varlen): the packed
// [total, H, D] tensors become the kernel's [B, H, max_L, D] views, each
// sequence's first rows and lengths are read from cu_seqlens in the grid,
// every tile of the sequence carries seq(start, rows), a Q block past the
// sequence's rows visits no key, and the causal diagonal is the
// sequence's own.
// RUN: split-file %s %t
// RUN: fa-opt %t/varlen.mlir --fa-tile="target=gfx906" | FileCheck %s
// RUN: fa-opt %t/varlen.mlir --fa-tile="target=gfx906 kv-splits=runtime gqa-pack=on" | FileCheck %s --check-prefix=SPLIT
// RUN: fa-opt %t/varlen.mlir --fa-tile="target=gfx906" --fa-promote --fa-double-buffer | FileCheck %s --check-prefix=FETCH
// RUN: fa-opt %t/varlen.mlir --fa-tile="target=gfx906 test-plant-bug=cu-seqlens-off-by-one" | FileCheck %s --check-prefix=OFF-BY-ONE
// Must not fire on a dense kernel: no seq, no cu_seqlens read.
// RUN: fa-opt %t/dense.mlir --fa-tile="target=gfx906" | FileCheck %s --check-prefix=DENSE
// DENSE-NOT: seq(
// DENSE-NOT: memref.load
// DENSE-NOT: fa.varlen

//--- varlen.mlir
// CHECK-LABEL: func.func @varlen
// CHECK-SAME: (%[[Q:[^:]+]]: memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>, %[[K:[^:]+]]: memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>, %[[V:[^:]+]]: memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>, %[[CQ:[^:]+]]: memref<?xi32, strided<[1], offset: ?>>, %[[CK:[^:]+]]: memref<?xi32, strided<[1], offset: ?>>, %[[O:[^:]+]]: memref<?x?x?x128xf16, strided<[?, ?, ?, 1], offset: ?>>, %[[LSE:[^:]+]]: memref<?x?x?xf32, strided<[?, ?, 1], offset: ?>>)
// The grid runs over the longest sequence (the view's dim 2) and B.
// CHECK: %[[B:[^ ]+]] = memref.dim %[[Q]], %{{c0[_0-9]*}}
// CHECK: %[[MAXQ:[^ ]+]] = memref.dim %[[Q]], %{{c2[_0-9]*}}
// CHECK: %[[NM:[^ ]+]] = arith.ceildivui %[[MAXQ]], %{{c64[_0-9]*}}
// CHECK: scf.forall (%[[X:[^,]+]], %[[H:[^,]+]], %[[S:[^)]+]]) in (%[[NM]], %{{[^,]+}}, %[[B]])
// CHECK: %[[NEXT:[^ ]+]] = arith.addi %[[S]], %c1
// CHECK: %[[Q0I:[^ ]+]] = memref.load %[[CQ]][%[[S]]]
// CHECK: %[[Q0:[^ ]+]] = arith.index_cast %[[Q0I]] : i32 to index
// CHECK: %[[Q1I:[^ ]+]] = memref.load %[[CQ]][%[[NEXT]]]
// CHECK: %[[Q1:[^ ]+]] = arith.index_cast %[[Q1I]] : i32 to index
// CHECK: %[[LQ:[^ ]+]] = arith.subi %[[Q1]], %[[Q0]]
// CHECK: %[[K0I:[^ ]+]] = memref.load %[[CK]][%[[S]]]
// CHECK: %[[K0:[^ ]+]] = arith.index_cast %[[K0I]] : i32 to index
// CHECK: %[[K1I:[^ ]+]] = memref.load %[[CK]][%[[NEXT]]]
// CHECK: %[[K1:[^ ]+]] = arith.index_cast %[[K1I]] : i32 to index
// CHECK: %[[LK:[^ ]+]] = arith.subi %[[K1]], %[[K0]]
// CHECK: fa.load_tile %[[Q]][%[[S]], %[[H]], %[[M0:[0-9a-z_]+]]] seq(%[[Q0]], %[[LQ]])
// Causal: the diagonal of the sequence's own lengths.
// CHECK: %[[D1:[^ ]+]] = arith.subi %{{[^,]+}}, %[[LQ]]
// CHECK: arith.addi %[[D1]], %[[LK]]
// A Q block past the sequence's rows visits no key.
// CHECK: %[[LIVE:[^ ]+]] = arith.cmpi ult, %[[M0]], %[[LQ]]
// CHECK: arith.select %[[LIVE]], %{{[^,]+}}, %c0
// CHECK: fa.load_tile %[[K]][%[[S]], %{{[^,]+}}, %{{[^]]+}}] seq(%[[K0]], %[[LK]])
// CHECK: fa.load_tile %[[V]][%[[S]], %{{[^,]+}}, %{{[^]]+}}] seq(%[[K0]], %[[LK]])
// CHECK: fa.tile_mask %{{[^ ]+}} rows(%[[M0]], %[[LQ]]) cols(%{{[^,]+}}, %[[LK]]) causal
// CHECK: fa.store_tile %{{[^,]+}}, %[[O]][%[[S]], %[[H]], %[[M0]]] seq(%[[Q0]], %[[LQ]])
// CHECK: fa.store_tile %{{[^,]+}}, %[[LSE]][%[[S]], %[[H]], %[[M0]]] seq(%[[Q0]], %[[LQ]])
// 11 roles: no workspace, no block table nor lengths, then cu_seqlens.
// CHECK: fa.args = array<i64: 0, 1, 2, 5, 6, -1, -1, -1, -1, 3, 4>, fa.causal
// CHECK-SAME: fa.varlen
//
// Split-KV with packing: the split's workspace rows are dense, from row 0
// of batch s * B + b, and the packed rows' period is the sequence's Lq
// (at least 1); the combine grid reads them from row 0 and writes O and
// LSE at the sequence's rows; both take the same 11 roles (one ABI).
// SPLIT: %[[LQ:[^ ]+]] = arith.subi
// SPLIT: %[[LK:[^ ]+]] = arith.subi
// SPLIT: %[[PERIOD:[^ ]+]] = arith.maxui %[[LQ]], %c1
// SPLIT: fa.load_tile %arg0[{{[^]]+}}] group(%{{[^)]+}}) seq(%{{[^,]+}}, %[[LQ]])
// SPLIT: fa.tile_mask %{{[^ ]+}} rows(%{{[^)]+}}) cols(%{{[^,]+}}, %[[LK]]) period(%[[PERIOD]]) causal
// SPLIT: fa.store_tile %{{[^,]+}}, %arg7[{{[^]]+}}] group(%{{[^)]+}}) seq(%c0, %[[LQ]])
// SPLIT: fa.store_tile %{{[^,]+}}, %arg8[{{[^]]+}}] group(%{{[^)]+}}) seq(%c0, %[[LQ]])
// SPLIT: fa.args = array<i64: 0, 1, 2, 5, 6, 7, 8, -1, -1, 3, 4>, fa.causal, fa.gqa_packed, fa.kv_splits = "runtime"
// SPLIT-SAME: fa.varlen
// SPLIT: %[[CSTART:[^ ]+]] = arith.index_cast
// SPLIT: %[[CLQ:[^ ]+]] = arith.subi %{{[^,]+}}, %[[CSTART]]
// SPLIT: fa.load_tile %arg8[{{[^]]+}}] seq(%{{c0[_0-9]*}}, %[[CLQ]])
// SPLIT: fa.load_tile %arg7[{{[^]]+}}] seq(%{{c0[_0-9]*}}, %[[CLQ]])
// SPLIT: fa.store_tile %{{[^,]+}}, %arg5[{{[^]]+}}] seq(%[[CSTART]], %[[CLQ]])
// SPLIT: fa.store_tile %{{[^,]+}}, %arg6[{{[^]]+}}] seq(%[[CSTART]], %[[CLQ]])
// SPLIT: fa.args = array<i64: 0, 1, 2, 5, 6, 7, 8, -1, -1, 3, 4>, fa.causal, fa.combine
// SPLIT-SAME: fa.varlen
//
// fa-promote and fa-double-buffer keep the sequence on the copies and
// fetches of Q, K and V.
// FETCH: fa.copy_tile %arg0[{{[^]]+}}] seq(%{{[^)]+}}) to
// FETCH-COUNT-3: fa.fetch_tile %{{[^[]+}}[{{[^]]+}}] seq(%{{[^)]+}}) for
//
// The planted bug: the sequence's keys end one row early.
// OFF-BY-ONE: memref.load %arg4
// OFF-BY-ONE: memref.load %arg4
// OFF-BY-ONE: %[[LK:[^ ]+]] = arith.subi %{{[^,]+}}, %{{[^ ]+}} : index
// OFF-BY-ONE-NEXT: %[[SHORT:[^ ]+]] = arith.subi %[[LK]], %c1
// OFF-BY-ONE-NEXT: %[[CLAMPED:[^ ]+]] = arith.maxsi %[[SHORT]], %c0
// OFF-BY-ONE: fa.load_tile %arg1[{{[^]]+}}] seq(%{{[^,]+}}, %[[CLAMPED]])
func.func @varlen(%q: tensor<?x?x128xf16>, %k: tensor<?x?x128xf16>, %v: tensor<?x?x128xf16>, %cq: tensor<?xi32>, %ck: tensor<?xi32>) -> (tensor<?x?x128xf16>, tensor<?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v varlen(%cq, %ck : tensor<?xi32>, tensor<?xi32>) causal : tensor<?x?x128xf16>, tensor<?x?x128xf16>, tensor<?x?x128xf16> -> tensor<?x?x128xf16>, tensor<?x?xf32>
  return %o, %lse : tensor<?x?x128xf16>, tensor<?x?xf32>
}

//--- dense.mlir
func.func @dense(%q: tensor<?x?x?x128xf16>, %k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>) -> tensor<?x?x?x128xf16> {
  %o = fa.attention %q, %k, %v causal : tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16> -> tensor<?x?x?x128xf16>
  return %o : tensor<?x?x?x128xf16>
}
