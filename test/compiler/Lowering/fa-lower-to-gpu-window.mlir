// fa-lower-to-gpu on a sliding window: fa.tile_mask's window(left, right)
// hides, besides the columns past Lk, the columns before diag - left and
// after diag + right, diag = r + (Lk - Lq) per row r; the kernel keeps
// fa.window for the manifest. The planted bugs hide the window's
// outermost column on one side (lo one higher / hi one lower).
// RUN: fa-opt %s --fa-tile="target=gfx906" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-tile="target=gfx906" --fa-promote --canonicalize --cse --fa-lower-to-gpu="test-plant-bug=window-left-off-by-one" --canonicalize --cse | FileCheck %s --check-prefix=LEFT
// RUN: fa-opt %s --fa-tile="target=gfx906" --fa-promote --canonicalize --cse --fa-lower-to-gpu="test-plant-bug=window-right-off-by-one" --canonicalize --cse | FileCheck %s --check-prefix=RIGHT
// Must not fire without a window: the branch tests Lk only, one comparison.
// RUN: sed -e 's/ window(100, 7)//' %s | fa-opt --fa-tile="target=gfx906" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s --check-prefix=PLAIN
// PLAIN-NOT: fa.window
// PLAIN: gpu.func @window_kernel(
// PLAIN: %[[LAST:[^ ]+]] = arith.addi %{{[^,]+}}, %c63 : index
// PLAIN-NEXT: %[[RAG:[^ ]+]] = arith.cmpi sge, %[[LAST]], %{{[^ ]+}} : index
// PLAIN-NEXT: scf.if %[[RAG]] -> (vector<16xf32>) {
// PLAIN: %[[PAST:[^ ]+]] = arith.cmpi sgt, %{{[^,]+}}, %{{[^ ]+}} : vector<16xindex>
// PLAIN-NEXT: arith.select %[[PAST]]

// CHECK: gpu.func @window_kernel(
// CHECK-SAME: fa.window = array<i64: 100, 7>
// CHECK-DAG: %[[LFT:[^ ]+]] = arith.constant dense<-100> : vector<16xindex>
// CHECK-DAG: %[[RGT:[^ ]+]] = arith.constant dense<7> : vector<16xindex>
// Only a block with an entry to hide is masked (a branch, the same in every
// thread): its last key (n0 + 63) past Lk or past the first row's diag +
// right, or its first key before the last row's diag - left (d0 + 63 -
// 100, d0 the first row's diagonal).
// CHECK: %[[LAST:[^ ]+]] = arith.addi %[[N0:[^,]+]], %c63 : index
// CHECK-NEXT: %[[RAG:[^ ]+]] = arith.cmpi sge, %[[LAST]], %[[LK:[^ ]+]] : index
// CHECK-NEXT: %[[SHIFT:[^ ]+]] = arith.subi %[[LK]], %{{[^ ]+}} : index
// CHECK-NEXT: %[[D0:[^ ]+]] = arith.addi %{{[^,]+}}, %[[SHIFT]] : index
// CHECK-NEXT: %[[R:[^ ]+]] = arith.addi %[[D0]], %c7 : index
// CHECK-NEXT: %[[PASTR:[^ ]+]] = arith.cmpi sgt, %[[LAST]], %[[R]] : index
// CHECK-NEXT: %[[N1:[^ ]+]] = arith.ori %[[RAG]], %[[PASTR]] : i1
// CHECK-NEXT: %[[L:[^ ]+]] = arith.addi %[[D0]], %c-37 : index
// CHECK-NEXT: %[[BEFOREL:[^ ]+]] = arith.cmpi slt, %[[N0]], %[[L]] : index
// CHECK-NEXT: %[[NEED:[^ ]+]] = arith.ori %[[N1]], %[[BEFOREL]] : i1
// CHECK-NEXT: %{{[^ ]+}} = scf.if %[[NEED]] -> (vector<16xf32>) {
// Inside: per entry, hi = min(Lk - 1, diag + right) and lo = diag - left,
// one comparison on each side.
// CHECK: %[[SHIFTV:[^ ]+]] = vector.broadcast %[[SHIFT]] : index to vector<16xindex>
// CHECK-NEXT: %[[DIAG:[^ ]+]] = arith.addi %{{[^,]+}}, %[[SHIFTV]] : vector<16xindex>
// CHECK-NEXT: %[[DR:[^ ]+]] = arith.addi %[[DIAG]], %[[RGT]] : vector<16xindex>
// CHECK-NEXT: %[[HI:[^ ]+]] = arith.minsi %{{[^,]+}}, %[[DR]] : vector<16xindex>
// CHECK-NEXT: %[[LO:[^ ]+]] = arith.addi %[[DIAG]], %[[LFT]] : vector<16xindex>
// CHECK-NEXT: %[[AFTER:[^ ]+]] = arith.cmpi sgt, %[[COLS:[^,]+]], %[[HI]] : vector<16xindex>
// CHECK-NEXT: %[[BEFORE:[^ ]+]] = arith.cmpi slt, %[[COLS]], %[[LO]] : vector<16xindex>
// CHECK-NEXT: %[[M:[^ ]+]] = arith.ori %[[AFTER]], %[[BEFORE]] : vector<16xi1>
// CHECK-NEXT: %[[X:[^ ]+]] = arith.select %[[M]], %{{[^,]+}}, %[[S:[^ ]+]] : vector<16xi1>, vector<16xf32>
// CHECK-NEXT: scf.yield %[[X]] : vector<16xf32>
// CHECK-NEXT: } else {
// CHECK-NEXT: scf.yield %[[S]] : vector<16xf32>
// The planted bugs move lo up by one (left) or hi down by one (right), in
// the branch's test too.
// LEFT-NOT: dense<-100>
// LEFT: arith.constant dense<-99> : vector<16xindex>
// LEFT: arith.addi %{{[^,]+}}, %c-36 : index
// RIGHT-NOT: dense<7>
// RIGHT: arith.constant dense<6> : vector<16xindex>
// RIGHT: arith.addi %{{[^,]+}}, %c6 : index
func.func @window(%q: tensor<1x8x?x64xf16>, %k: tensor<1x2x?x64xf16>, %v: tensor<1x2x?x64xf16>) -> tensor<1x8x?x64xf16> {
  %o = fa.attention %q, %k, %v window(100, 7) : tensor<1x8x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16> -> tensor<1x8x?x64xf16>
  return %o : tensor<1x8x?x64xf16>
}
