// fa-promote makes LDS explicit: one buffer per tile with its layout in the
// memref type, a cooperative copy where the tile was loaded, P written from
// registers, fa.lds_dot over buffers, and the barriers a slot analysis
// finds necessary (and no others).
// Only 16-bit types are stored in pairs (an f32 element is a word already).
// Widened (the sm_90 default): 16-bit tiles kept as f32 in LDS, converted
// once by the copy; V then needs no pairs.
// Where it must not fire: a grid with no tile in LDS, IR without grids.

// Separate K and V slots: K's copy needs no barrier before it (every read of
// K happened before the P barrier), V's does (the last P·V read it).

// One K/V slot: V's copy moves down to just before P·V; two more barriers.







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

//--- invalid.mlir
func.func @not_a_product(%q: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>, %o: memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  scf.forall (%mb, %h, %b) in (%c1, %c1, %c1) {
    %t = fa.load_tile %q[%b, %h, %c0] : memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<64x64xf16>
    fa.store_tile %t, %o[%b, %h, %c0] : tensor<64x64xf16>, memref<?x8x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
  } {fa.args = array<i64: 0, 0, 0, 1, -1>, fa.tile = #fa.tile<target = "gfx906", block_m = 64, block_n = 64, waves = 4, wave_size = 64, stages = 1, lds_pad = 0>, mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}
