// RUN: split-file %s %t
// fa-promote makes LDS explicit: one buffer per tile with its layout in the
// memref type, a cooperative copy where the tile was loaded, P written from
// registers, fa.lds_dot over buffers, and the barriers a slot analysis
// finds necessary (and no others).
// RUN: fa-opt %t/d64.mlir --fa-tile="target=gfx906 block-m=64 block-n=64 kv-shared=off" --fa-promote | FileCheck %s --check-prefix=APART
// RUN: fa-opt %t/d64.mlir --fa-tile="target=gfx906 block-m=64 block-n=64 kv-shared=on" --fa-promote | FileCheck %s --check-prefix=SHARED
// RUN: fa-opt %t/d64.mlir --fa-tile="target=gfx906 block-m=64 block-n=64 kv-shared=off" --fa-promote="pair-rhs=false" | FileCheck %s --check-prefix=ROWS
// RUN: fa-opt %t/d64.mlir --fa-tile="target=gfx906 block-m=64 block-n=64 kv-shared=off" --fa-promote="remarks=true" -mlir-print-op-on-diagnostic=false 2>&1 >/dev/null | FileCheck %s --check-prefix=REMARK
// Only 16-bit types are stored in pairs (an f32 element is a word already).
// RUN: fa-opt %t/f32.mlir --fa-tile="target=gfx906 block-m=32 block-n=32 kv-shared=off" --fa-promote | FileCheck %s --check-prefix=F32
// Widened (the sm_90 default): 16-bit tiles kept as f32 in LDS, converted
// once by the copy; V then needs no pairs.
// RUN: fa-opt %t/d64.mlir --fa-tile="target=gfx906 block-m=64 block-n=64 kv-shared=off" --fa-promote="widen=on" | FileCheck %s --check-prefix=WIDEN
// RUN: fa-opt %t/d64.mlir --fa-tile="target=sm_90" --fa-promote | FileCheck %s --check-prefix=WIDEN-AUTO
// RUN: not fa-opt %t/d64.mlir --fa-tile="target=gfx906" --fa-promote="widen=yes" 2>&1 | FileCheck %s --check-prefix=WIDEN-BAD
// Where it must not fire: a grid with no tile in LDS, IR without grids.
// RUN: fa-opt %t/empty.mlir --fa-promote="remarks=true" -mlir-print-op-on-diagnostic=false 2>&1 | FileCheck %s --check-prefix=EMPTY
// RUN: fa-opt %t/d64.mlir --fa-promote | FileCheck %s --check-prefix=UNTOUCHED
// RUN: fa-opt %t/invalid.mlir -split-input-file --fa-promote -verify-diagnostics
// RUN: fa-opt %t/registers.mlir --fa-promote | FileCheck %s --check-prefix=REGISTERS

// Separate K and V slots: K's copy needs no barrier before it (every read of
// K happened before the P barrier), V's does (the last P·V read it).
// APART: scf.forall
// APART-NEXT: %[[Q:.+]] = fa.lds_buffer "q" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
// APART-NEXT: %[[K:.+]] = fa.lds_buffer "k" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
// APART-NEXT: %[[V:.+]] = fa.lds_buffer "v" : memref<32x64x2xf16, strided<[128, 2, 1]>, #gpu.address_space<workgroup>>
// APART-NEXT: %[[P:.+]] = fa.lds_buffer "p" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>
// APART: fa.copy_tile %arg0[{{.+}}] to %[[Q]]
// APART-NOT: gpu.barrier
// APART: scf.for
// APART-NOT: {{gpu.barrier|fa\.}}
// APART: fa.copy_tile %arg1[{{.+}}] to %[[K]]
// APART-NEXT: gpu.barrier
// APART-NEXT: fa.copy_tile %arg2[{{.+}}] to %[[V]]
// APART-NOT: gpu.barrier
// APART: fa.lds_dot %[[Q]], %[[K]] transpose_rhs
// APART-NOT: gpu.barrier
// APART: fa.write_tile %{{.+}} to %[[P]] : tensor<64x64xf16>
// APART-NEXT: gpu.barrier
// APART-NEXT: fa.lds_dot %[[P]], %[[V]], %{{.+}} : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>, memref<32x64x2xf16, strided<[128, 2, 1]>, #gpu.address_space<workgroup>>, tensor<64x64xf32> -> tensor<64x64xf32>
// APART-NOT: gpu.barrier
// APART: scf.yield
// APART-NOT: fa.load_tile
// APART-NOT: fa.tile_dot

// One K/V slot: V's copy moves down to just before P·V; two more barriers.
// SHARED: fa.lds_buffer "k" slot("kv") : memref<64x64xf16
// SHARED-NEXT: fa.lds_buffer "v" slot("kv") : memref<32x64x2xf16
// SHARED: scf.for
// SHARED-NOT: fa.
// SHARED: gpu.barrier
// SHARED-NEXT: fa.copy_tile %arg1
// SHARED-NEXT: gpu.barrier
// SHARED-NOT: gpu.barrier
// SHARED: fa.lds_dot {{.+}} transpose_rhs
// SHARED-NOT: gpu.barrier
// SHARED: math.exp2
// SHARED: gpu.barrier
// SHARED-NEXT: fa.copy_tile %arg2
// SHARED-NEXT: fa.write_tile
// SHARED-NEXT: gpu.barrier
// SHARED-NEXT: fa.lds_dot
// SHARED-NOT: gpu.barrier
// SHARED: scf.yield

// ROWS: fa.lds_buffer "v" : memref<64x64xf16, strided<[64, 1]>, #gpu.address_space<workgroup>>

// REMARK: remark: fa-promote: 3 loaded tiles in LDS, 2 barriers placed
// REMARK-NEXT: q: 64x64 f16, 8192 bytes
// REMARK-NEXT: k: 64x64 f16, 8192 bytes
// REMARK-NEXT: v: 64x64 f16 pair-interleaved, 8192 bytes
// REMARK-NEXT: p: 64x64 f16, 8192 bytes, written from registers

// F32: fa.lds_buffer "v" : memref<32x64xf32, strided<[64, 1]>, #gpu.address_space<workgroup>>

// WIDEN: %[[Q:.+]] = fa.lds_buffer "q" : memref<64x64xf32, strided<[64, 1]>, #gpu.address_space<workgroup>>
// WIDEN: fa.lds_buffer "v" : memref<64x64xf32, strided<[64, 1]>
// WIDEN: fa.lds_buffer "p" : memref<64x64xf32
// WIDEN: fa.copy_tile %arg0[{{.+}}] to %[[Q]] : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> to memref<64x64xf32
// WIDEN: fa.write_tile %{{.+}} : tensor<64x64xf16> to memref<64x64xf32
// WIDEN-AUTO: fa.lds_buffer "q" : memref<128x64xf32
// WIDEN-BAD: error: fa-promote: widen must be auto, on or off, got 'yes'

// EMPTY: remark: fa-promote: no tile lives in LDS; nothing to do

// UNTOUCHED-NOT: fa.lds_buffer
// UNTOUCHED: fa.attention

//--- d64.mlir
func.func @d64(%q: tensor<?x8x?x64xf16>, %k: tensor<?x8x?x64xf16>, %v: tensor<?x8x?x64xf16>) -> tensor<?x8x?x64xf16> {
  %o = fa.attention %q, %k, %v : tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16>, tensor<?x8x?x64xf16> -> tensor<?x8x?x64xf16>
  return %o : tensor<?x8x?x64xf16>
}

//--- f32.mlir
func.func @f32(%q: tensor<?x8x?x64xf32>, %k: tensor<?x8x?x64xf32>, %v: tensor<?x8x?x64xf32>) -> tensor<?x8x?x64xf32> {
  %o = fa.attention %q, %k, %v : tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32>, tensor<?x8x?x64xf32> -> tensor<?x8x?x64xf32>
  return %o : tensor<?x8x?x64xf32>
}

//--- empty.mlir
func.func @empty(%q: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>) {
  %c1 = arith.constant 1 : index
  scf.forall (%mb, %h, %b) in (%c1, %c1, %c1) {
  } {fa.args = array<i64: 0, 0, 0, 0, -1>, fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 64, waves = 4, wave_size = 64, stages = 1, lds_pad = 0>, mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

//--- registers.mlir
// A tile no product reads (split-KV's partial results) stays a register
// load: no buffer, no copy, no barrier.
// REGISTERS-LABEL: func.func @combine_like
// REGISTERS-NOT: fa.lds_buffer
// REGISTERS-NOT: fa.copy_tile
// REGISTERS: fa.load_tile
// REGISTERS-NOT: gpu.barrier
// REGISTERS: fa.store_tile
func.func @combine_like(%ws: memref<?x8x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>, %o: memref<?x8x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.forall (%mb, %h, %b) in (%c1, %c1, %c1) {
    %t = fa.load_tile %ws[%b, %h, %c0] : memref<?x8x?x64xf32, strided<[?, ?, ?, 1], offset: ?>> -> tensor<64x64xf32>
    fa.store_tile %t, %o[%b, %h, %c0] : tensor<64x64xf32>, memref<?x8x?x64xf32, strided<[?, ?, ?, 1], offset: ?>>
  } {fa.args = array<i64: 0, 0, 0, 1, -1>, fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 64, waves = 4, wave_size = 64, stages = 1, lds_pad = 0>, mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

//--- invalid.mlir
func.func @not_only_a_product(%q: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %o: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.forall (%mb, %h, %b) in (%c1, %c1, %c1) {
    // expected-error @+1 {{'fa.load_tile' op cannot be promoted to LDS: its tile is used by 'fa.store_tile', and LDS tiles are read only by fa.tile_dot}}
    %t = fa.load_tile %q[%b, %h, %c0] : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<64x64xf16>
    %s = fa.tile_dot %t, %t transpose_rhs : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    fa.store_tile %t, %o[%b, %h, %c0] : tensor<64x64xf16>, memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
  } {fa.args = array<i64: 0, 0, 0, 1, -1>, fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 64, waves = 4, wave_size = 64, stages = 1, lds_pad = 0>, mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

// -----

func.func @rhs_in_registers(%q: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %r = arith.constant dense<1.0> : tensor<64x64xf16>
  scf.forall (%mb, %h, %b) in (%c1, %c1, %c1) {
    %t = fa.load_tile %q[%b, %h, %c0] : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<64x64xf16>
    // expected-error @+1 {{'fa.tile_dot' op rhs must be a tile loaded with fa.load_tile}}
    %s = fa.tile_dot %t, %r transpose_rhs : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
  } {fa.args = array<i64: 0, 0, 0, 0, -1>, fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 64, waves = 4, wave_size = 64, stages = 1, lds_pad = 0>, mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}
