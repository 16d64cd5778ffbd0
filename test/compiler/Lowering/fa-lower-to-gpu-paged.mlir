// fa-lower-to-gpu on a paged K/V cache (kernel ABI version 3): the kernel
// takes the 55 words of version 2 (an unsplit paged kernel gets an empty
// workspace and S = 1), then the block table and the lengths (i32), the
// page size and the table's row stride; each K/V row's address goes
// through the table: page = table[b * stride + n / page_size], row
// n mod page_size of that page.
// RUN: fa-opt %s --fa-tile="target=gfx906" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-tile="target=gfx906" --fa-promote --canonicalize --cse --fa-lower-to-gpu="test-plant-bug=page-index-off-by-one" --canonicalize --cse | FileCheck %s --check-prefix=OFF-BY-ONE
// RUN: fa-opt %s --fa-tile="target=gfx906" --fa-promote --canonicalize --cse --fa-lower-to-gpu="test-plant-bug=page-offset-wrong-stride" --canonicalize --cse | FileCheck %s --check-prefix=WRONG-STRIDE

// CHECK: gpu.func @paged_kernel(
// CHECK-SAME: {{(%[^:]+: i64, ){18}%[^:]+}}: i64, %{{[^:]+}}: memref<?xf32, strided<[1], offset: ?>>, %{{[^:]+}}: memref<?xf32, strided<[1], offset: ?>>, %{{[^:]+}}: i64, %[[TABLE:[^:]+]]: memref<?xi32, strided<[1], offset: ?>>, %[[LENS:[^:]+]]: memref<?xi32, strided<[1], offset: ?>>, %[[PS:[^:]+]]: i64, %[[TS:[^:]+]]: i64)
// CHECK-SAME: fa.abi_version = 3 : i64
// CHECK-SAME: fa.paged
// CHECK-DAG: %[[PSI:[^ ]+]] = arith.index_cast %[[PS]] : i64 to index
// CHECK-DAG: %[[TSI:[^ ]+]] = arith.index_cast %[[TS]] : i64 to index
// K's row stride is the 6th of the 14 stride words (argument 15).
// CHECK-DAG: %[[KROW:[^ ]+]] = arith.index_cast %arg15 : i64 to index
// The sequence's length, cache_seqlens[b].
// CHECK: memref.load %[[LENS]][%{{[^]]+}}] : memref<?xi32
// A K/V row: its page from the table (read only for rows that exist),
// then the row within the page.
// CHECK: %[[SLOT:[^ ]+]] = arith.divui %{{[^,]+}}, %[[PSI]] : index
// CHECK: %[[ROWAT:[^ ]+]] = arith.muli %{{[^,]+}}, %[[TSI]] : index
// CHECK: %[[AT:[^ ]+]] = arith.addi %[[ROWAT]], %[[SLOT]] : index
// CHECK: memref.load %[[TABLE]][%[[AT]]] : memref<?xi32
// CHECK: %[[WITHIN:[^ ]+]] = arith.remui %{{[^,]+}}, %[[PSI]] : index
// CHECK: arith.muli %[[WITHIN]], %[[KROW]] : index
//
// OFF-BY-ONE: gpu.func @paged_kernel({{.*}}%[[PS:[^:]+]]: i64, %{{[^:]+}}: i64)
// OFF-BY-ONE: %[[PSI:[^ ]+]] = arith.index_cast %[[PS]] : i64 to index
// OFF-BY-ONE: %[[SLOT:[^ ]+]] = arith.divui %{{[^,]+}}, %[[PSI]] : index
// OFF-BY-ONE-NEXT: arith.addi %[[SLOT]], %c1 : index
// The row within the page by the head stride: the clean kernel multiplies it
// by the row stride (K's third stride word, arg 12 of the 14).
// WRONG-STRIDE: gpu.func @paged_kernel({{.*}}%[[PS:[^:]+]]: i64, %{{[^:]+}}: i64)
// WRONG-STRIDE-DAG: %[[PSI:[^ ]+]] = arith.index_cast %[[PS]] : i64 to index
// WRONG-STRIDE-DAG: %[[KHEAD:[^ ]+]] = arith.index_cast %arg14 : i64 to index
// WRONG-STRIDE: %[[WITHIN:[^ ]+]] = arith.remui %{{[^,]+}}, %[[PSI]] : index
// WRONG-STRIDE: arith.muli %[[WITHIN]], %[[KHEAD]] : index
func.func @paged(%q: tensor<?x?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %table: tensor<?x?xi32>, %lens: tensor<?xi32>) -> tensor<?x?x?x64xf16> {
  %o = fa.attention %q, %k, %v paged(%table, %lens) : tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x?x?x64xf16>
  return %o : tensor<?x?x?x64xf16>
}
