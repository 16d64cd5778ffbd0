// gfx906's default (K and V in one slot, stages=2 from fa-tile's budget):
// K of block n+1 is fetched during P·V of block n and carried to the next
// iteration; V of block n is fetched during Q·Kᵀ.
// Separate K and V slots: V's copy sinks to P·V, so one tile is in flight at
// a time and the loop keeps two barriers.
// in-block: K stays a copy, only V is fetched ahead; no iteration argument.
// Where it must not fire: stages=1, a grid without a K/V loop.
// The planted bug removes the barrier before the loop's first LDS store.

// Prologue: K of block 0, fetched before the loop and passed in.
// Steady state: stage K (after the barrier that ends the last P·V), fetch
// V of this block, Q·Kᵀ after a barrier...
// ...then V into the slot once Q·Kᵀ is done with it, and K of block n+1;
// in the last iteration its row is Lk: nothing is loaded (the epilogue).










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
