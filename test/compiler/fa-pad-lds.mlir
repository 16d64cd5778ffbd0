// RUN: split-file %s %t
// The padding is chosen by the bank-conflict analysis: one dword per row
// takes the K read of Q·Kᵀ from 16-way to conflict-free on both targets.
// RUN: fa-opt %t/d128.mlir --fa-tile="target=gfx906" --fa-pad-lds | FileCheck %s --check-prefix=GFX906
// RUN: fa-opt %t/d128.mlir --fa-tile="target=gfx906" --fa-pad-lds="remarks=true" -mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// RUN: fa-opt %t/d64.mlir --fa-tile="target=sm_90" --fa-pad-lds | FileCheck %s --check-prefix=SM90
// On gfx906 at D=64 the unpadded tiles fill exactly 32 KiB: any padding
// would leave one 256-thread workgroup per CU (1 wave per SIMD instead of 2),
// so the pass keeps the rows and says why.
// RUN: fa-opt %t/d64.mlir --fa-tile="target=gfx906" --fa-pad-lds="remarks=true" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=OCCUPANCY

// Where it must not fire: padding set by hand, a layout already
// conflict-free (D=40, BLOCK_N=40: every row 80 bytes), and IR without
// tile grids.
// RUN: fa-opt %t/explicit.mlir --fa-pad-lds="remarks=true" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=EXPLICIT
// RUN: fa-opt %t/d40.mlir --fa-tile="target=gfx906 block-m=64 block-n=40" --fa-pad-lds="remarks=true" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=D40
// RUN: fa-opt %t/d64.mlir --fa-pad-lds | FileCheck %s --check-prefix=UNTOUCHED
// A budget that cannot take the padding keeps the rows as they are: D=132,
// 64x64 needs 58880 bytes (64768 with the margin); one dword per row more
// would be 65894 of gfx906's 65536, so P's 8-way read stays.
// RUN: fa-opt %t/d132.mlir --fa-tile="target=gfx906 block-m=64 block-n=64" --fa-pad-lds="remarks=true" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=BUDGET

// GFX906: fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 64, waves = 4, wave_size = 64, stages = 1, lds_pad = 2>
// REMARK: remark: fa-pad-lds: gfx906 64 lanes per wave, thread grid 16x16: lds_pad=2, LDS 58368 bytes
// REMARK-NEXT: Q (Q·Kᵀ lhs, row pairs), 4 B per lane: degree 2 -> 1
// REMARK-NEXT: K (Q·Kᵀ rhs, row pairs per thread column), 4 B per lane: degree 16 -> 1
// REMARK-NEXT: P (P·V lhs, row pairs), 4 B per lane: degree 2 -> 1
// REMARK-NEXT: V (P·V rhs, down a column), 2 B per lane: degree 1 -> 1
// SM90: fa.tile = #fa.tile<target = "sm_90", {{.*}}lds_pad = 2>
// OCCUPANCY: remark: fa-pad-lds: gfx906 64 lanes per wave, thread grid 16x16: lds_pad=0 (padding would cut LDS occupancy from 2 to 1 waves per SIMD), LDS 32768 bytes
// OCCUPANCY: K (Q·Kᵀ rhs, row pairs per thread column), 4 B per lane: degree 16 -> 16
// OCCUPANCY: lds_pad = 0>
// EXPLICIT: remark: fa-pad-lds: lds_pad=4 was set explicitly; left as it is
// EXPLICIT: lds_pad = 4>
// D40: remark: fa-pad-lds: {{.*}}lds_pad=0 (no padding lowers the worst degree)
// D40: lds_pad = 0>
// UNTOUCHED-NOT: fa.tile
// UNTOUCHED: fa.attention
// BUDGET: lds_pad=0 (the LDS budget leaves no room for padding), LDS 58880 bytes
// BUDGET: P (P·V lhs, row pairs), 4 B per lane: degree 8 -> 8
// BUDGET: lds_pad = 0>

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
func.func @explicit(%q: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %o: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>) {
  %c1 = arith.constant 1 : index
  scf.forall (%mb, %h, %b) in (%c1, %c1, %c1) {
  } {fa.args = array<i64: 0, 0, 0, 1, -1>, fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 64, waves = 4, wave_size = 64, stages = 1, lds_pad = 4>, mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}
