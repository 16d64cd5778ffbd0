// fa-pad-lds works on the memory level (fa-promote): each LDS buffer gets
// the padding its own accesses need, chosen by the bank-conflict analysis
// (BankConflicts.h, docs/bank-conflicts.md), as its memref row stride.
// With separate K and V slots at D=64 the unpadded buffers fill exactly
// 32 KiB: any padding would leave one 256-thread workgroup per CU (1 wave
// per SIMD instead of 2), so the pass keeps the rows and says why.

// Where it must not fire: padding set by hand, a layout already
// conflict-free (D=40, BLOCK_N=40: every row 80 bytes), a grid without
// buffers (fa-promote not run), IR without tile grids, and a budget that
// cannot take the padding.

// sm_90 keeps 16-bit tiles as f32 in LDS (fa-promote widen=auto): the
// f32 pair reads of K need one row of padding, V (down a column) none.

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
