// Level 1b IR comes from fa-tile (explicit 64x32 tiles, so that the test does
// not depend on the budget model's choice) and fa-promote, cleaned up as the
// pipeline does; the canonicalizer after fa-lower-to-gpu hoists the kernel's
// constants so that they can be captured once.
// K and V in one LDS slot.

// fa-lower-to-gpu straight after fa-promote (constants still inside the grid).

// Hand-written Level 1b IR: each LDS buffer with its own row padding.

// Where the pass must not fire: no tile grid, no change; a remark only when
// asked for.

// Grids the pass cannot lower (tile IR that fa-promote has not seen
// included): each with the message that says why.

// Test-only planted bugs: each pass plants only its own.

//--- attention.mlir


// Host side: the grid becomes a launch of the kernel with the ABI's
// arguments (KernelAbi.h): five flat buffers, five sizes, fourteen strides.
// LSE is rank 3: two strides (batch, head).
// Grid (ceil(Lq / 64), Hq, B), 256 threads (4 waves of 64).

// The kernel: the ABI signature, one 1-D LDS buffer per storage slot,
// indexed linearly (Q: BM x D = 4096 halves, K and V: BN x D = 2048, P:
// BM x BN = 2048), the launch configuration and the compile-time facts the
// manifest needs.
// The thread's place in the 16x16 thread grid: row group TR, column TC.
//
// The Q block is copied once, before the KV loop: 16-byte vectors when the
// base and the strides are aligned, scalars otherwise; rows past Lq are zero.
// Row-major: element (r, c) at r * 64 + c.
// No barrier before the loop: the one after K's copy covers Q.
//
// The KV loop is versioned on the alignment of K and V: one copy of it with
// only vector copies, one with only scalar copies.
//
// K's copy first (nothing read K since the last iteration's barrier 1),
// then barrier 1: Q and K are in LDS before anyone reads them.
// V's copy after barrier 1, which also keeps it from overwriting V while
// the last iteration's P·V reads it. V is pair-interleaved: rows 2i and
// 2i+1 are loaded, interleaved and stored as one 32-byte vector.
//
// S = Q·Kᵀ: a loop over D in pairs (the shape of v_dot2_f32_f16), each pair
// one 32-bit LDS load (Q's row r, K's row c at row * 64 + kk), then two f32
// FMAs on the thread's 4x2 fragment.
// Row max: within the thread, then xor shuffles over the 16 lanes of a row
// (maxnum: the masked -inf never wins against a real score).
// alpha = exp2(m_old - m_new); P = exp2(S - m_new).
// Row sum, the same way.
// O is rescaled by alpha before P·V accumulates onto it.
// P goes to LDS (row r, column c at r * 32 + c): P·V needs columns that
// other threads computed.
//
// Barrier 2: all of P (and V) is in LDS before P·V reads it.
// P·V: pairs of P along its rows; pairs (kk, c), (kk+1, c) of V, adjacent
// in the interleaved layout at (kk / 2) * 128 + 2c + kk % 2.
// No barrier at the end of the iteration: the next K copy overwrites only
// what was read before barrier 2.
//
// The scalar version: the same two barriers around scalar copies (V two
// elements, one 32-bit word, at a time).
//
// Epilogue: O = acc / l and LSE, stored row by row, bounds-checked; no LDS.

// The same kernel for sm_90: waves of 32, so 8 waves make 256 threads and
// the shuffles are 32 wide.

func.func @causal_lse(%q: tensor<?x8x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> (tensor<?x8x?x64xf16>, tensor<?x8x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v causal scale(0.125) : tensor<?x8x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
  return %o, %lse : tensor<?x8x?x64xf16>, tensor<?x8x?xf32>
}

// Straight after fa-promote the grid's scalar constants are still inside
// it; they are cloned into the kernel like any other pure scalar op. The
// barriers are fa-promote's, copied: two per iteration, in each version of
// the KV loop.

// K and V in one slot: three attributions, K's and V's copies both land in
// the second, and fa-promote's four barriers per iteration come through:
// before K overwrites the slot (the last P·V read V there), after K's copy,
// before V overwrites K (after Q·Kᵀ), after V's copy and P's write.

//--- head-dim-36.mlir

// D = 36 halves: a row is 72 bytes, not a whole number of 16-byte vectors,
// so every copy takes the scalar path and there is no alignment test (nor
// a versioned KV loop). Q is 64x36 halves, K and V 32x36, P 64x32.
// Without an LSE result the host passes an empty LSE buffer.
func.func @head_dim_36(%q: tensor<1x4x100x36xf16>, %k: tensor<1x4x100x36xf16>, %v: tensor<1x4x100x36xf16>) -> tensor<1x4x100x36xf16> {
  %o = fa.attention %q, %k, %v : tensor<1x4x100x36xf16>, tensor<1x4x100x36xf16>, tensor<1x4x100x36xf16> -> tensor<1x4x100x36xf16>
  return %o : tensor<1x4x100x36xf16>
}

//--- lds-pad.mlir

// Level 1b IR, barriers included, with each buffer's layout in its type:
// Q rows of 32 halves padded to 34, K to 36, V pair-interleaved with pair
// rows of 2 x (32 + 2), P rows of 16 padded to 18 (#fa.tile's lds_pad only
// records the largest). Each slot is one 1-D attribution of rows x stride
// elements, indexed with its own stride.
// The host launches one workgroup of 64 threads.
// Q's vector copy: row r, columns c..c+7 at r * 34 + c. A row of 68 bytes
// keeps only 4-byte alignment.
// The barriers of the input, where the input has them, and no others.
// P at r * 18 + c.
// V's pair (kk, c), (kk+1, c) at (kk / 2) * 68 + 2c + kk % 2.
#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 4>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
!q = memref<16x32xf16, strided<[34, 1]>, #gpu.address_space<workgroup>>
!k = memref<16x32xf16, strided<[36, 1]>, #gpu.address_space<workgroup>>
!v = memref<8x32x2xf16, strided<[68, 2, 1]>, #gpu.address_space<workgroup>>
!p = memref<16x16xf16, strided<[18, 1]>, #gpu.address_space<workgroup>>
func.func @padded(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv) {
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
    %c0 = arith.constant 0 : index
    %qb = fa.lds_buffer "q" : !q
    %kb = fa.lds_buffer "k" : !k
    %vb = fa.lds_buffer "v" : !v
    %pb = fa.lds_buffer "p" : !p
    fa.copy_tile %q[%b, %h, %c0] to %qb : !qkv to !q
    fa.copy_tile %k[%b, %h, %c0] to %kb : !qkv to !k
    fa.copy_tile %v[%b, %h, %c0] to %vb : !qkv to !v
    gpu.barrier
    %s = fa.lds_dot %qb, %kb transpose_rhs : !q, !k -> tensor<16x16xf32>
    %p = arith.truncf %s : tensor<16x16xf32> to tensor<16x16xf16>
    fa.write_tile %p to %pb : tensor<16x16xf16> to !p
    gpu.barrier
    %acc = fa.lds_dot %pb, %vb : !p, !v -> tensor<16x32xf32>
    %out = arith.truncf %acc : tensor<16x32xf32> to tensor<16x32xf16>
    fa.store_tile %out, %o[%b, %h, %c0] : tensor<16x32xf16>, !qkv
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile, mapping = [#gpu.block<x>, #gpu.block<y>, #gpu.block<z>]}
  return
}

//--- no-grid.mlir

// A forall without #fa.tile is not a tile grid.
module {
  func.func @not_a_grid(%m: memref<4xf32>) {
    scf.forall (%i) in (4) {
      %c = arith.constant 1.0 : f32
      memref.store %c, %m[%i] : memref<4xf32>
    }
    return
  }
}

//--- invalid.mlir

#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @missing_args(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv) {
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
  } {fa.tile = #tile}
  return
}
