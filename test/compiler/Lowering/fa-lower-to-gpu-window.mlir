// fa-lower-to-gpu on a sliding window: fa.tile_mask's window(left, right)
// hides, besides the columns past Lk, the columns before diag - left and
// after diag + right, diag = r + (Lk - Lq) per row r; the kernel keeps
// fa.window for the manifest. The planted bugs hide the window's
// outermost column on one side (sle / sge).
// RUN: fa-opt %s --fa-tile="target=gfx906" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s
// RUN: fa-opt %s --fa-tile="target=gfx906" --fa-promote --canonicalize --cse --fa-lower-to-gpu="test-plant-bug=window-left-off-by-one" --canonicalize --cse | FileCheck %s --check-prefix=LEFT
// RUN: fa-opt %s --fa-tile="target=gfx906" --fa-promote --canonicalize --cse --fa-lower-to-gpu="test-plant-bug=window-right-off-by-one" --canonicalize --cse | FileCheck %s --check-prefix=RIGHT
// Must not fire without a window: one comparison (past Lk), no window.
// RUN: sed -e 's/ window(100, 7)//' %s | fa-opt --fa-tile="target=gfx906" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s --check-prefix=PLAIN
// PLAIN-NOT: fa.window
// PLAIN: %[[PAST:[^ ]+]] = arith.cmpi sge, %[[COLS:[^,]+]], %{{[^ ]+}} : vector<16xindex>
// PLAIN-NEXT: arith.select %[[PAST]]

// CHECK: gpu.func @window_kernel(
// CHECK-SAME: fa.window = array<i64: 100, 7>
// CHECK: %[[PAST:[^ ]+]] = arith.cmpi sge, %[[COLS:[^,]+]], %{{[^ ]+}} : vector<16xindex>
// CHECK: %[[DIAG:[^ ]+]] = arith.addi %{{[^,]+}}, %{{[^ ]+}} : vector<16xindex>
// CHECK-NEXT: %[[LO:[^ ]+]] = arith.subi %[[DIAG]], %{{[^ ]+}} : vector<16xindex>
// CHECK-NEXT: %[[BEFORE:[^ ]+]] = arith.cmpi slt, %[[COLS]], %[[LO]]
// CHECK-NEXT: %[[M1:[^ ]+]] = arith.ori %[[PAST]], %[[BEFORE]]
// CHECK-NEXT: %[[HI:[^ ]+]] = arith.addi %[[DIAG]], %{{[^ ]+}} : vector<16xindex>
// CHECK-NEXT: %[[AFTER:[^ ]+]] = arith.cmpi sgt, %[[COLS]], %[[HI]]
// CHECK-NEXT: %[[M2:[^ ]+]] = arith.ori %[[M1]], %[[AFTER]]
// CHECK-NEXT: arith.select %[[M2]]
// LEFT: arith.cmpi sle, %{{[^,]+}}, %{{[^ ]+}} : vector<16xindex>
// LEFT-NOT: arith.cmpi slt, %{{[^,]+}}, %{{[^ ]+}} : vector<16xindex>
// RIGHT: arith.cmpi sge, %{{[^,]+}}, %{{[^ ]+}} : vector<16xindex>
// RIGHT: arith.cmpi slt, %{{[^,]+}}, %{{[^ ]+}} : vector<16xindex>
// RIGHT: arith.cmpi sge, %{{[^,]+}}, %{{[^ ]+}} : vector<16xindex>
// RIGHT-NOT: arith.cmpi sgt, %{{[^,]+}}, %{{[^ ]+}} : vector<16xindex>
func.func @window(%q: tensor<1x8x?x64xf16>, %k: tensor<1x2x?x64xf16>, %v: tensor<1x2x?x64xf16>) -> tensor<1x8x?x64xf16> {
  %o = fa.attention %q, %k, %v window(100, 7) : tensor<1x8x?x64xf16>, tensor<1x2x?x64xf16>, tensor<1x2x?x64xf16> -> tensor<1x8x?x64xf16>
  return %o : tensor<1x8x?x64xf16>
}
