// fa-lower-to-gpu on a mixed batch (varlen queries over a paged cache,
// kernel ABI version 4): the kernel takes version 3's paged words (block
// table, lengths, page size, table stride) and version 4's cu_seqlens_q;
// cu_seqlens_k is passed empty. Q's rows start at cu_seqlens_q[b] times
// its row stride; K's rows are read through the block table.
// RUN: fa-opt %s --fa-tile="target=gfx906" --fa-promote --canonicalize --cse --fa-lower-to-gpu --canonicalize --cse | FileCheck %s

// The launch: page size (K's dimension 1) and the table's row stride
// before cu_seqlens_q and an empty cu_seqlens_k.
// CHECK: %[[EMPTY:[^ ]+]] = memref.alloca() : memref<0xi32>
// CHECK: %[[NOCUK:[^ ]+]] = memref.cast %[[EMPTY]] : memref<0xi32> to memref<?xi32, strided<[1], offset: ?>>
// CHECK: gpu.launch_func  @fa_kernels::@mixed_kernel
// CHECK-SAME: : memref<?xi32, strided<[1], offset: ?>>, %{{[^ ]+}} : memref<?xi32, strided<[1], offset: ?>>, %{{[^ ]+}} : i64, %{{[^ ]+}} : i64, %{{[^ ]+}} : memref<?xi32, strided<[1], offset: ?>>, %[[NOCUK]] : memref<?xi32, strided<[1], offset: ?>>)
// CHECK: gpu.func @mixed_kernel(
// CHECK-SAME: %[[TABLE:arg27]]: memref<?xi32, strided<[1], offset: ?>>, %[[LENS:arg28]]: memref<?xi32, strided<[1], offset: ?>>, %arg29: i64, %arg30: i64, %[[CQ:arg31]]: memref<?xi32, strided<[1], offset: ?>>, %arg32: memref<?xi32, strided<[1], offset: ?>>)
// CHECK-SAME: fa.abi_version = 4 : i64
// CHECK-SAME: fa.paged
// CHECK-SAME: fa.varlen
// CHECK: memref.load %[[CQ]][%block_id_z]
// CHECK: memref.load %[[LENS]][%block_id_z]
// CHECK: memref.load %[[TABLE]][
// cu_seqlens_k is never read.
// CHECK-NOT: memref.load %arg32
// CHECK: gpu.return
func.func @mixed(%q: tensor<?x?x64xf16>, %k: tensor<?x?x?x64xf16>, %v: tensor<?x?x?x64xf16>, %t: tensor<?x?xi32>, %l: tensor<?xi32>, %cq: tensor<?xi32>) -> tensor<?x?x64xf16> {
  %o = fa.attention %q, %k, %v paged(%t, %l) varlen(%cq : tensor<?xi32>) causal : tensor<?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?x?x64xf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x?x64xf16>
  return %o : tensor<?x?x64xf16>
}

// Static sizes of a paged cache [num_pages, page_size, Hkv, D]: Hkv is its
// dimension 2 and Lk is known only at launch (not the page size).
// CHECK: gpu.func @mixed_static_kernel(
// CHECK-SAME: fa.static_sizes = array<i64: -1, 8, 2, -1, -1>
func.func @mixed_static(%q: tensor<?x8x64xf16>, %k: tensor<?x16x2x64xf16>, %v: tensor<?x16x2x64xf16>, %t: tensor<?x?xi32>, %l: tensor<?xi32>, %cq: tensor<?xi32>) -> tensor<?x8x64xf16> {
  %o = fa.attention %q, %k, %v paged(%t, %l) varlen(%cq : tensor<?xi32>) causal : tensor<?x8x64xf16>, tensor<?x16x2x64xf16>, tensor<?x16x2x64xf16>, tensor<?x?xi32>, tensor<?xi32> -> tensor<?x8x64xf16>
  return %o : tensor<?x8x64xf16>
}
