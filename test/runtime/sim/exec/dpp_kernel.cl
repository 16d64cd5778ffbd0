// The DPP kernel of fa-sim.dpp-llvm-kernel (dpp_kernel.sh builds it for
// gfx906 with LLVM 22's clang; DppKernel.cpp runs it on gfx906-sim): the
// cross-lane patterns fa's compiler and LLVM's own lowering use, through
// llvm.amdgcn.update.dpp, so that LLVM's DPP combiner folds what it can
// into the arithmetic (v_add_f32_dpp, v_max_f32_dpp, v_add_u32_dpp with
// bound_ctrl or the tied old value) and the rest stays v_mov_b32_dpp. One
// wave per workgroup, every lane active; 10 results per lane:
//   0 row sum by row_ror:8, 4, 2, 1 (f32)
//   1 row max by row_ror:8, 4, 2, 1 (f32)
//   2 inclusive prefix sum over the wave (row_shr:1, 2, 4, 8 with bank
//     masks, row_bcast:15 row_mask 0xa, row_bcast:31 row_mask 0xc; u32)
//   3 quad_perm:[1,0,3,2] written to banks 0 and 2 only, old = -x
//   4 wave_shr:1 with old 0 (the exclusive scan's first step)
//   5 row_mirror, 6 row_half_mirror
//   7 row_shl:3 with bound_ctrl (0 past the row's end), plus x
//   8 row_ror:5 (the reductions above cannot tell the direction)
//   9 x minus row_ror:3 with bound_ctrl (the DPP value as src1 of a
//     subtraction: the combiner commutes it to v_subrev_u32_dpp)
#define DPP(old, v, ctrl, rm, bm, bc)                                          \
  __builtin_amdgcn_update_dpp((old), (v), (ctrl), (rm), (bm), (bc))
#define FDPP(old, v, ctrl)                                                     \
  __builtin_bit_cast(float, DPP(__builtin_bit_cast(int, (old)),                \
                                __builtin_bit_cast(int, (v)), (ctrl), 0xf,     \
                                0xf, false))

__kernel void dpp_kernel(__global int *out, __global const int *in) {
  unsigned g =
      __builtin_amdgcn_workgroup_id_x() * 64 + __builtin_amdgcn_workitem_id_x();
  int x = in[g];
  float f = (float)x;

  float sum = f;
  sum += FDPP(0.0f, sum, 0x128);
  sum += FDPP(0.0f, sum, 0x124);
  sum += FDPP(0.0f, sum, 0x122);
  sum += FDPP(0.0f, sum, 0x121);

  float mx = f;
  mx = __builtin_fmaxf(mx, FDPP(mx, mx, 0x128));
  mx = __builtin_fmaxf(mx, FDPP(mx, mx, 0x124));
  mx = __builtin_fmaxf(mx, FDPP(mx, mx, 0x122));
  mx = __builtin_fmaxf(mx, FDPP(mx, mx, 0x121));

  int scan = x;
  scan += DPP(0, scan, 0x111, 0xf, 0xf, false);
  scan += DPP(0, scan, 0x112, 0xf, 0xf, false);
  scan += DPP(0, scan, 0x114, 0xf, 0xe, false);
  scan += DPP(0, scan, 0x118, 0xf, 0xc, false);
  scan += DPP(0, scan, 0x142, 0xa, 0xf, false);
  scan += DPP(0, scan, 0x143, 0xc, 0xf, false);

  __global int *o = out + 10 * g;
  o[0] = __builtin_bit_cast(int, sum);
  o[1] = __builtin_bit_cast(int, mx);
  o[2] = scan;
  o[3] = DPP(-x, x, 0xb1, 0xf, 0x5, false);
  o[4] = DPP(0, x, 0x138, 0xf, 0xf, false);
  o[5] = DPP(0, x, 0x140, 0xf, 0xf, false);
  o[6] = DPP(0, x, 0x141, 0xf, 0xf, false);
  o[7] = DPP(0, x, 0x103, 0xf, 0xf, true) + x;
  o[8] = DPP(0, x, 0x125, 0xf, 0xf, false);
  o[9] = x - DPP(0, x, 0x123, 0xf, 0xf, true);
}
