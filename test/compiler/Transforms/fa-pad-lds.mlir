// RUN: split-file %s %t
// fa-pad-lds works on the memory level (fa-promote): each LDS buffer gets
// the padding its own accesses need, chosen by the bank-conflict analysis
// (BankConflicts.h, docs/bank-conflicts.md), as its memref row stride.
// Paddings in multiples of two elements (unit-bytes=0: pair reads stay
// aligned): the smallest with the lowest worst degree.
// RUN: fa-opt %t/d128.mlir --fa-tile="target=gfx906" --fa-promote --fa-pad-lds="unit-bytes=0" | FileCheck %s --check-prefix=GFX906
// RUN: fa-opt %t/d128.mlir --fa-tile="target=gfx906" --fa-promote --fa-pad-lds="remarks=true unit-bytes=0" -mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// gfx906's own unit (TargetDesc::ldsPadBytes, the default): 16 bytes, so
// that a padded row stays aligned for ds_read_b128. K's best there is pad
// 8 at degree 2 for the 4-byte reads the pass models (1 at pad 2); the
// backend reads four consecutive pairs at once instead.
// RUN: fa-opt %t/d128.mlir --fa-tile="target=gfx906" --fa-promote --fa-pad-lds="remarks=true" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=ALIGNED
// RUN: fa-opt %t/d64.mlir --fa-tile="target=sm_90" --fa-promote --fa-pad-lds | FileCheck %s --check-prefix=SM90
// With separate K and V slots at D=64 the unpadded buffers fill exactly
// 32 KiB: any padding would leave one 256-thread workgroup per CU (1 wave
// per SIMD instead of 2), so the pass keeps the rows and says why.
// RUN: fa-opt %t/d64.mlir --fa-tile="target=gfx906 block-m=64 block-n=64 kv-shared=off" --fa-promote --fa-pad-lds="remarks=true" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=OCCUPANCY
// Analysis only (apply=false, fac --pad-lds=false): the degrees of the
// layout as it is, reported and recorded on the grid; no buffer changes.
// RUN: fa-opt %t/d128.mlir --fa-tile="target=gfx906" --fa-promote --fa-pad-lds="apply=false remarks=true" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=ANALYSIS

// Where it must not fire: padding set by hand, a layout already
// conflict-free (D=40, BLOCK_N=40: every row 80 bytes), a grid without
// buffers (fa-promote not run), IR without tile grids, and a budget that
// cannot take the padding.
// RUN: fa-opt %t/explicit.mlir --fa-pad-lds="remarks=true" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=EXPLICIT
// RUN: fa-opt %t/d40.mlir --fa-tile="target=gfx906 block-m=64 block-n=40" --fa-promote --fa-pad-lds="remarks=true" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=D40
// RUN: fa-opt %t/d64.mlir --fa-tile="target=gfx906" --fa-pad-lds="remarks=true" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=NOBUF
// RUN: fa-opt %t/d64.mlir --fa-pad-lds | FileCheck %s --check-prefix=UNTOUCHED
// RUN: fa-opt %t/budget.mlir --fa-pad-lds="remarks=true unit-bytes=0" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=BUDGET

// GFX906: fa.lds_buffer "q" : memref<64x128xf16, strided<[130, 1]>, #gpu.address_space<workgroup>>
// GFX906-NEXT: fa.lds_buffer "k" slot("kv") : memref<32x128xf16, strided<[130, 1]>, #gpu.address_space<workgroup>>
// GFX906-NEXT: fa.lds_buffer "v" slot("kv") : memref<16x128x2xf16, strided<[256, 2, 1]>, #gpu.address_space<workgroup>>
// GFX906-NEXT: fa.lds_buffer "p" : memref<64x32xf16, strided<[36, 1]>, #gpu.address_space<workgroup>>
// Every access's lane pattern (lane l: i = l / q, j = l % q; row, column
// = rowI i + rowJ j, colI i + colJ j: [q, rowI, rowJ, colI, colJ]) and its
// degrees, recorded on the grid for fac --report (KernelInfo.h).
// GFX906: fa.lds_accesses = {k = [{bytes = 16 : i64, degree = 1 : i64, lanes = array<i64: 16, 1, 0, 0, 8>, unpadded = 1 : i64, what = "copy from global memory (16 B per lane)", write = true}, {bytes = 4 : i64, degree = 1 : i64, lanes = array<i64: 16, 0, 1, 0, 0>, unpadded = 16 : i64, what = "rhs of a product (transposed), row pairs per thread column", write = false}], p = [
// GFX906: fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 32, waves = 4, wave_size = 64, stages = 2, lds_pad = 4, kv_shared = true>
// ANALYSIS: remark: fa-pad-lds: gfx906 64 lanes per wave, thread grid 16x16, analysis only (apply=false): no padding
// ANALYSIS: k: pad 0
// ANALYSIS-NEXT: copy from global memory (16 B per lane), 16 B per lane: degree 1 -> 1
// ANALYSIS-NEXT: rhs of a product (transposed), row pairs per thread column, 4 B per lane: degree 16 -> 16
// ANALYSIS: fa.lds_buffer "q" : memref<64x128xf16, strided<[128, 1]>, #gpu.address_space<workgroup>>
// ANALYSIS-NEXT: fa.lds_buffer "k" slot("kv") : memref<32x128xf16, strided<[128, 1]>, #gpu.address_space<workgroup>>
// ANALYSIS: fa.lds_accesses = {k = [{bytes = 16 : i64, degree = 1 : i64, lanes = array<i64: 16, 1, 0, 0, 8>, unpadded = 1 : i64, what = "copy from global memory (16 B per lane)", write = true}, {bytes = 4 : i64, degree = 16 : i64, lanes = array<i64: 16, 0, 1, 0, 0>, unpadded = 16 : i64,
// ANALYSIS-SAME: lds_pad = 0
// REMARK: remark: fa-pad-lds: gfx906 64 lanes per wave, thread grid 16x16, LDS 28672 -> 29568 bytes (2 waves per SIMD by LDS)
// REMARK-NEXT: q: pad 2
// REMARK-NEXT: copy from global memory (16 B per lane), 16 B per lane: degree 1 -> 1
// REMARK-NEXT: lhs of a product, row pairs (one per thread row), 4 B per lane: degree 2 -> 1
// REMARK-NEXT: k: pad 2
// REMARK-NEXT: copy from global memory (16 B per lane), 16 B per lane: degree 1 -> 1
// REMARK-NEXT: rhs of a product (transposed), row pairs per thread column, 4 B per lane: degree 16 -> 1
// REMARK-NEXT: v: pad 0 (pair-interleaved)
// REMARK-NEXT: copy from global memory (two rows interleaved, 16 B stores), 16 B per lane: degree 2 -> 2
// REMARK-NEXT: rhs of a product, key pairs (one word per column), 4 B per lane: degree 1 -> 1
// REMARK-NEXT: p: pad 4
// REMARK-NEXT: write of a register tile (element per lane), 2 B per lane: degree 2 -> 1
// REMARK-NEXT: lhs of a product, row pairs (one per thread row), 4 B per lane: degree 2 -> 1
// ALIGNED: remark: fa-pad-lds: gfx906 64 lanes per wave, thread grid 16x16, LDS 28672 -> 31232 bytes (2 waves per SIMD by LDS)
// ALIGNED-NEXT: q: pad 8
// ALIGNED: k: pad 8
// ALIGNED-NEXT: copy from global memory (16 B per lane), 16 B per lane: degree 1 -> 1
// ALIGNED-NEXT: rhs of a product (transposed), row pairs per thread column, 4 B per lane: degree 16 -> 2
// ALIGNED: p: pad 8
// ALIGNED: fa.lds_buffer "q" : memref<64x128xf16, strided<[136, 1]>, #gpu.address_space<workgroup>>
// ALIGNED-NEXT: fa.lds_buffer "k" slot("kv") : memref<32x128xf16, strided<[136, 1]>, #gpu.address_space<workgroup>>
// ALIGNED: lds_pad = 8, kv_shared = true>
// sm_90 keeps 16-bit tiles as f32 in LDS (fa-promote widen=auto): the
// f32 pair reads of K need one row of padding, V (down a column) none.
// SM90: fa.lds_buffer "q" : memref<128x64xf32, strided<[64, 1]>
// SM90-NEXT: fa.lds_buffer "k" : memref<64x64xf32, strided<[66, 1]>
// SM90-NEXT: fa.lds_buffer "v" : memref<64x64xf32, strided<[64, 1]>
// SM90-NEXT: fa.lds_buffer "p" : memref<128x64xf32, strided<[66, 1]>
// SM90: fa.tile = #fa.tile<target = "sm_90", {{.*}}lds_pad = 2>
// OCCUPANCY: remark: fa-pad-lds: gfx906 64 lanes per wave, thread grid 16x16, LDS 32768 -> 32768 bytes (2 waves per SIMD by LDS); not padded: k (would cut LDS occupancy to 1 waves per SIMD), q (would cut LDS occupancy to 1 waves per SIMD), p (would cut LDS occupancy to 1 waves per SIMD)
// OCCUPANCY: rhs of a product (transposed), row pairs per thread column, 4 B per lane: degree 16 -> 16
// OCCUPANCY: fa.lds_buffer "k" : memref<64x64xf16, strided<[64, 1]>
// OCCUPANCY: lds_pad = 0>
// EXPLICIT: remark: fa-pad-lds: lds_pad=4 was set explicitly; left as it is
// EXPLICIT: fa.lds_buffer "k" : memref<64x64xf16, strided<[68, 1]>
// EXPLICIT: lds_pad = 4>
// D40: remark: fa-pad-lds: gfx906 64 lanes per wave, thread grid 32x8, LDS 16640 -> 16640 bytes (3 waves per SIMD by LDS)
// D40-NOT: degree {{[2-9]}} -> 1
// D40: lds_pad = 0>
// NOBUF: remark: fa-pad-lds: no LDS buffers (run fa-promote first); nothing to pad
// UNTOUCHED-NOT: fa.tile
// UNTOUCHED: fa.attention
// BUDGET: LDS 59136 -> 59392 bytes (1 waves per SIMD by LDS); not padded: q (the LDS budget leaves no room)
// BUDGET: lhs of a product, row pairs (one per thread row), 4 B per lane: degree 2 -> 2
// BUDGET: rhs of a product (transposed), row pairs per thread column, 4 B per lane: degree 16 -> 1
// BUDGET: fa.lds_buffer "q" : memref<64x64xf16, strided<[64, 1]>
// BUDGET: fa.lds_buffer "k" : memref<64x64xf16, strided<[66, 1]>

//--- d64.mlir
func.func @d64(%q: tensor<?x8x?x64xf16>, %k: tensor<?x8x?x64xf16>, %v: tensor<?x8x?x64xf16>) -> tensor<?x8x?x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16> -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

//--- d128.mlir
func.func @d128(%q: tensor<?x8x?x128xf16>, %k: tensor<?x8x?x128xf16>, %v: tensor<?x8x?x128xf16>) -> tensor<?x8x?x128xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16>, tensor<?x8x?x128xf16> -> tensor<?x8x?x128xf16>
  return %o : tensor<?x8x?x128xf16>
}

//--- d132.mlir
func.func @d132(%q: tensor<?x8x?x132xf16>, %k: tensor<?x8x?x132xf16>, %v: tensor<?x8x?x132xf16>) -> tensor<?x8x?x132xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x8x?x132xf16>, tensor<?x8x?x132xf16>, tensor<?x8x?x132xf16> -> tensor<?x8x?x132xf16>
  return %o : tensor<?x8x?x132xf16>
}

//--- d40.mlir
func.func @d40(%q: tensor<?x8x?x40xf16>, %k: tensor<?x8x?x40xf16>, %v: tensor<?x8x?x40xf16>) -> tensor<?x8x?x40xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x8x?x40xf16>, tensor<?x8x?x40xf16>, tensor<?x8x?x40xf16> -> tensor<?x8x?x40xf16>
  return %o : tensor<?x8x?x40xf16>
}

//--- explicit.mlir
func.func @explicit(%q: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.forall (%mb, %h, %b) in (%c1, %c1, %c1) {
    %qb = fa.lds_buffer "q" : memref<64x64xf16, strided<[68, 1]>, #gpu.address_space<workgroup>>
    %kb = fa.lds_buffer "k" : memref<64x64xf16, strided<[68, 1]>, #gpu.address_space<workgroup>>
    fa.copy_tile %q[%b, %h, %c0] to %qb : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> to memref<64x64xf16, strided<[68, 1]>, #gpu.address_space<workgroup>>
    fa.copy_tile %q[%b, %h, %c0] to %kb : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> to memref<64x64xf16, strided<[68, 1]>, #gpu.address_space<workgroup>>
    gpu.barrier
    %s = fa.lds_dot %qb, %kb transpose_rhs : memref<64x64xf16, strided<[68, 1]>, #gpu.address_space<workgroup>>, memref<64x64xf16, strided<[68, 1]>, #gpu.address_space<workgroup>> -> tensor<64x64xf32>
  } {fa.args = array<i64: 0, 0, 0, 0, -1>, fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 64, waves = 4, wave_size = 64, stages = 1, lds_pad = 4>, mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

//--- budget.mlir
// A 42 KiB buffer "big" leaves room within the 10% margin of 64 KiB for
// the padding that matters most (K's 16-way read) but not for Q's.
func.func @budget(%q: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.forall (%mb, %h, %b) in (%c1, %c1, %c1) {
    %big = fa.lds_buffer "big" : memref<167x128xf16, strided<[128, 1]>, #gpu.address_space<workgroup>>
    %qb = fa.lds_buffer "q" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
    %kb = fa.lds_buffer "k" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
    fa.copy_tile %q[%b, %h, %c0] to %qb : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> to memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
    fa.copy_tile %q[%b, %h, %c0] to %kb : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> to memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
    gpu.barrier
    %s = fa.lds_dot %qb, %kb transpose_rhs : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>, memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>> -> tensor<64x64xf32>
  } {fa.args = array<i64: 0, 0, 0, 0, -1>, fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 64, waves = 4, wave_size = 64, stages = 1, lds_pad = 0>, mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}
