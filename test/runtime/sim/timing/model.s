// Kernels for the hand-worked model tests (Timing.h's rules, not published
// figures): straight-line code on one workgroup, no loops.
.include "common.inc"

// 1024 independent v_add_f32 (four destinations in turn, one source).
KERNEL add_indep
  .rept 256
  v_add_f32 v2, v1, v1
  v_add_f32 v3, v1, v1
  v_add_f32 v4, v1, v1
  v_add_f32 v5, v1, v1
  .endr
  s_endpgm
KD add_indep, 8, 8, 0

// 256 v_mul_lo_u32 with no dependence (a quarter-rate op on GCN).
KERNEL mul_lo_indep
  .rept 64
  v_mul_lo_u32 v2, v1, v1
  v_mul_lo_u32 v3, v1, v1
  v_mul_lo_u32 v4, v1, v1
  v_mul_lo_u32 v5, v1, v1
  .endr
  s_endpgm
KD mul_lo_indep, 8, 8, 0

// 256 v_dot2_f32_f16 on one dependent chain.
KERNEL dot2_dep
  .rept 256
  v_dot2_f32_f16 v2, v1, v1, v2
  .endr
  s_endpgm
KD dot2_dep, 8, 8, 0

// 256 v_dot2_f32_f16 on four independent chains.
KERNEL dot2_indep
  .rept 64
  v_dot2_f32_f16 v2, v1, v1, v2
  v_dot2_f32_f16 v3, v1, v1, v3
  v_dot2_f32_f16 v4, v1, v1, v4
  v_dot2_f32_f16 v5, v1, v1, v5
  .endr
  s_endpgm
KD dot2_indep, 8, 8, 0

// Two waves (128 lanes): wave 0 runs 64 v_add_f32, then 512; wave 1 512,
// then 64. With a barrier between the parts each wave waits for the other:
// about 4 * (512 + 512) cycles; without, 4 * (512 + 64).
.macro SKEW name, barrier
KERNEL \name
  v_readfirstlane_b32 s4, v0
  s_lshr_b32 s4, s4, 6
  s_cmp_eq_u32 s4, 0
  s_cbranch_scc0 .L\name\()_wave1
  .rept 64
  v_add_f32 v2, v1, v1
  .endr
  .if \barrier
  s_barrier
  .endif
  .rept 512
  v_add_f32 v2, v1, v1
  .endr
  s_endpgm
.L\name\()_wave1:
  .rept 512
  v_add_f32 v2, v1, v1
  .endr
  .if \barrier
  s_barrier
  .endif
  .rept 64
  v_add_f32 v2, v1, v1
  .endr
  s_endpgm
KD \name, 8, 8, 0
.endm
SKEW skew_barrier, 1
SKEW skew_no_barrier, 0

// One ds_read_b32 (lane l at 4 * l), then 64 v_add_f32; lds_wait waits for
// the read before the adds (the LDS latency exposed), lds_nowait after them
// (hidden).
KERNEL lds_wait
  v_lshlrev_b32 v1, 2, v0
  ds_read_b32 v2, v1
  s_waitcnt lgkmcnt(0)
  .rept 64
  v_add_f32 v3, v1, v1
  .endr
  s_endpgm
KD lds_wait, 8, 8, 256

KERNEL lds_nowait
  v_lshlrev_b32 v1, 2, v0
  ds_read_b32 v2, v1
  .rept 64
  v_add_f32 v3, v1, v1
  .endr
  s_waitcnt lgkmcnt(0)
  s_endpgm
KD lds_nowait, 8, 8, 256

// The same with one global_load_dword (kernarg: u64 src at 0) and 256
// v_add_f32, more than the global latency.
KERNEL global_wait
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
  global_load_dword v2, v1, s[4:5]
  s_waitcnt vmcnt(0)
  .rept 256
  v_add_f32 v3, v1, v1
  .endr
  s_endpgm
KD global_wait, 8, 8, 0

KERNEL global_nowait
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  v_lshlrev_b32 v1, 2, v0
  s_waitcnt lgkmcnt(0)
  global_load_dword v2, v1, s[4:5]
  .rept 256
  v_add_f32 v3, v1, v1
  .endr
  s_waitcnt vmcnt(0)
  s_endpgm
KD global_nowait, 8, 8, 0

// scratch_probe: one private-segment load, waited for. Never launched: the
// tests build its instruction stream by hand (v2's scratch rule depends on
// the launch's scratch footprint, which the descriptor's private segment
// size sets).
KERNEL scratch_probe
  buffer_load_dword v1, off, s[0:3], 0
  s_waitcnt vmcnt(0)
  s_endpgm
KD scratch_probe, 8, 8, 0
