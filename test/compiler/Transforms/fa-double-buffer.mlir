// RUN: split-file %s %t

// gfx906's default (K and V in one slot, stages=2 from fa-tile's budget):
// K of block n+1 is fetched during P·V of block n and carried to the next
// iteration; V of block n is fetched during Q·Kᵀ.
// RUN: fa-opt %t/attention.mlir --fa-tile="target=gfx906" --fa-promote --fa-double-buffer --canonicalize --cse | FileCheck %s --check-prefix=SHARED
// RUN: fa-opt %t/attention.mlir --fa-tile="target=gfx906" --fa-promote --fa-double-buffer="remarks=true" -mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// Separate K and V slots: V's copy sinks to P·V, so one tile is in flight at
// a time and the loop keeps two barriers.
// RUN: fa-opt %t/attention.mlir --fa-tile="target=gfx906 block-m=64 block-n=64 kv-shared=off" --fa-promote --fa-double-buffer --canonicalize --cse | FileCheck %s --check-prefix=APART
// in-block: K stays a copy, only V is fetched ahead; no iteration argument.
// RUN: fa-opt %t/attention.mlir --fa-tile="target=gfx906" --fa-promote --fa-double-buffer="ahead=in-block" --canonicalize --cse | FileCheck %s --check-prefix=INBLOCK
// Where it must not fire: stages=1, a grid without a K/V loop.
// RUN: fa-opt %t/attention.mlir --fa-tile="target=gfx906 stages=1" --fa-promote --fa-double-buffer="remarks=true" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=SINGLE
// RUN: fa-opt %t/no-loop.mlir --fa-double-buffer="remarks=true" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=NO-LOOP
// RUN: fa-opt %t/attention.mlir --fa-double-buffer | FileCheck %s --check-prefix=UNTOUCHED
// RUN: not fa-opt %t/attention.mlir --fa-tile="target=gfx906" --fa-promote --fa-double-buffer="ahead=far" 2>&1 | FileCheck %s --check-prefix=BAD-AHEAD
// The planted bug removes the barrier before the loop's first LDS store.
// RUN: fa-opt %t/attention.mlir --fa-tile="target=gfx906" --fa-promote --fa-double-buffer="test-plant-bug=pipeline-no-barrier" | FileCheck %s --check-prefix=PLANT
// RUN: not fa-opt %t/attention.mlir --fa-tile="target=gfx906" --fa-promote --fa-double-buffer="test-plant-bug=no-scale" 2>&1 | FileCheck %s --check-prefix=PLANT-OTHER

// Prologue: K of block 0, fetched before the loop and passed in.
// SHARED: %[[K:.+]] = fa.lds_buffer "k" slot("kv")
// SHARED: %[[V:.+]] = fa.lds_buffer "v" slot("kv")
// SHARED: %[[P:.+]] = fa.lds_buffer "p"
// SHARED: %[[K0:.+]] = fa.fetch_tile %{{.+}}[%{{.+}}, %{{.+}}, %c0] for %[[K]]
// SHARED: scf.for %[[IV:[^ ]+]] = %c0 to %[[N:[^ ]+]] step %c1 iter_args({{.*}}, %[[KN:[^ ]+]] = %[[K0]])
// Steady state: stage K (after the barrier that ends the last P·V), then,
// after the barrier that ends the staging, fetch V of this block and Q·Kᵀ
// (each fetch comes after the barrier that follows it: gfx906 drains loads
// at every s_barrier, so the loads overlap the products, not the wait)...
// SHARED-NEXT: %[[ROW:.+]] = arith.muli %[[IV]], %c64
// SHARED-NEXT: gpu.barrier
// SHARED-NEXT: fa.stage_tile %[[KN]] to %[[K]]
// SHARED-NEXT: gpu.barrier
// SHARED-NEXT: %[[VT:.+]] = fa.fetch_tile %{{.+}}[%{{.+}}, %{{.+}}, %[[ROW]]] for %[[V]]
// SHARED-NEXT: fa.lds_dot %{{.+}}, %[[K]] transpose_rhs
// ...then V into the slot once Q·Kᵀ is done with it, and K of block n+1;
// in the last iteration its row is Lk: nothing is loaded (the epilogue).
// SHARED: fa.write_tile %{{.+}} to %[[P]]
// SHARED-NEXT: gpu.barrier
// SHARED-NEXT: fa.stage_tile %[[VT]] to %[[V]]
// SHARED-NEXT: %[[NEXT:.+]] = arith.addi %[[IV]], %c1
// SHARED-NEXT: %[[MORE:.+]] = arith.cmpi slt, %[[NEXT]], %[[N]]
// SHARED-NEXT: %[[NROW:.+]] = arith.muli %[[NEXT]], %c64
// SHARED-NEXT: %[[SEL:.+]] = arith.select %[[MORE]], %[[NROW]], %{{.+}} : index
// SHARED-NEXT: gpu.barrier
// SHARED-NEXT: %[[K1:.+]] = fa.fetch_tile %{{.+}}[%{{.+}}, %{{.+}}, %[[SEL]]] for %[[K]]
// SHARED-NEXT: fa.lds_dot %[[P]], %[[V]]
// SHARED-NEXT: scf.yield %{{.+}}, %{{.+}}, %{{.+}}, %[[K1]]
// SHARED-NOT: gpu.barrier
// SHARED-NOT: fa.copy_tile %{{.+}} to %[[K]]
// SHARED: stages = 2

// REMARK: remark: fa-double-buffer: K/V loads of block n+1 overlap block n; 4 barriers placed
// REMARK-NEXT: register-staged, next-block: 2 fetch group(s) in the loop: k | v; in flight at most 8 registers per thread; the first group of block n+1 is fetched during block n (prologue fetch before the loop, the last iteration fetches nothing)

// APART: %[[K:.+]] = fa.lds_buffer "k" :
// APART: %[[V:.+]] = fa.lds_buffer "v" :
// APART: fa.fetch_tile %{{.+}} for %[[K]]
// APART: scf.for
// APART-NOT: gpu.barrier
// APART: fa.stage_tile %{{.+}} to %[[K]]
// APART-NEXT: gpu.barrier
// APART-NEXT: %[[VT:.+]] = fa.fetch_tile %{{.+}} for %[[V]]
// APART-NEXT: fa.lds_dot %{{.+}}, %[[K]] transpose_rhs
// APART-NOT: gpu.barrier
// APART: fa.write_tile
// APART-NEXT: fa.stage_tile %[[VT]] to %[[V]]
// APART: gpu.barrier
// APART-NEXT: fa.fetch_tile %{{.+}} for %[[K]]
// APART-NEXT: fa.lds_dot %{{.+}}, %[[V]]
// APART-NOT: gpu.barrier
// APART: scf.yield

// INBLOCK: %[[K:.+]] = fa.lds_buffer "k" slot("kv")
// INBLOCK: %[[V:.+]] = fa.lds_buffer "v" slot("kv")
// INBLOCK-NOT: fa.fetch_tile
// INBLOCK: scf.for %{{.+}} iter_args(%{{[^,]+}}, %{{[^,]+}}, %{{[^,]+}}) ->
// INBLOCK: gpu.barrier
// INBLOCK-NEXT: fa.copy_tile %{{.+}} to %[[K]]
// INBLOCK-NEXT: gpu.barrier
// INBLOCK-NEXT: %[[VT:.+]] = fa.fetch_tile %{{.+}} for %[[V]]
// INBLOCK-NEXT: fa.lds_dot %{{.+}}, %[[K]] transpose_rhs
// INBLOCK: fa.stage_tile %[[VT]] to %[[V]]
// INBLOCK-NOT: fa.fetch_tile
// INBLOCK: fa.lds_dot %{{.+}}, %[[V]]
// INBLOCK: fa.fetch_ahead = "in-block"

// SINGLE: remark: fa-double-buffer: #fa.tile has stages = 1; single-buffered
// SINGLE-NOT: fa.fetch_tile
// SINGLE-NOT: fa.stage_tile

// NO-LOOP: remark: fa-double-buffer: single-buffered: no scf.for copies tiles to LDS
// NO-LOOP: fa.copy_tile
// NO-LOOP: stages = 1,

// UNTOUCHED: fa.attention

// BAD-AHEAD: error: fa-double-buffer: ahead must be next-block or in-block, got 'far'

// PLANT: scf.for
// PLANT-NOT: gpu.barrier
// PLANT: fa.stage_tile
// PLANT: gpu.barrier
// PLANT-NEXT: fa.fetch_tile
// PLANT-NEXT: fa.lds_dot

// PLANT-OTHER: error: planted bug 'no-scale' is planted by fa-tile, not fa-double-buffer

//--- attention.mlir

func.func @attention(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> tensor<?x8x?x64xf16> {
  %o = fa.attention %q, %k, %v causal : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

//--- no-loop.mlir

// A grid that asks for two stages but copies nothing inside a loop.
func.func @no_loop(%q: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %c2 = arith.constant 2 : index
  scf.forall (%i) in (%c2) {
    %buf = fa.lds_buffer "q" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
    fa.copy_tile %q[%c0, %c0, %i] to %buf : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> to memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
  } {fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 64, waves = 4, wave_size = 64, stages = 2, lds_pad = 0>}
  return
}
