// An LDS operand that is not one of the grid's fa.lds_buffer ops.
#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
!lds = memref<16x32xf16, strided<[32, 1]>, #gpu.address_space<workgroup>>
func.func @foreign_lds(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv, %w: !lds) {
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
    %c0 = arith.constant 0 : index
    %qb = fa.lds_buffer "q" : !lds
    fa.copy_tile %q[%b, %h, %c0] to %qb : !qkv to !lds
    gpu.barrier
    %s = fa.lds_dot %qb, %w transpose_rhs : !lds, !lds -> tensor<16x16xf32>
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
  return
}
