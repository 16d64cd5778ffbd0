// VALU throughput and latency microbenchmarks (issue 20): v_dot2_f32_f16
// on 1, 2 and 4 independent accumulation chains per wave, v_pk_fma_f16 on
// 4. Each kernel reads its trip count from the kernarg segment (u32 at 0)
// and runs a counted s_ loop whose body is 64 VALU instructions, so that
// the loop's 3 scalar instructions and its branch are a small part.
// Every lane of every wave executes: MACs = waves * 64 * 2 * 64 * trips.
.include "common.inc"

// One dependent chain: each v_dot2 waits for the previous one's result.
KERNEL dot2_chain1
  s_load_dword s4, s[0:1], 0x0
  v_mov_b32 v1, 0x3c003c00          // (1.0, 1.0) in f16
  v_mov_b32 v2, 0
  s_waitcnt lgkmcnt(0)
.Ldot2_chain1_loop:
  .rept 64
  v_dot2_f32_f16 v2, v1, v1, v2
  .endr
  s_sub_u32 s4, s4, 1
  s_cmp_lg_u32 s4, 0
  s_cbranch_scc1 .Ldot2_chain1_loop
  s_endpgm
KD dot2_chain1, 8, 8, 0

// Two independent chains (v2, v3), interleaved.
KERNEL dot2_chain2
  s_load_dword s4, s[0:1], 0x0
  v_mov_b32 v1, 0x3c003c00
  v_mov_b32 v2, 0
  v_mov_b32 v3, 0
  s_waitcnt lgkmcnt(0)
.Ldot2_chain2_loop:
  .rept 32
  v_dot2_f32_f16 v2, v1, v1, v2
  v_dot2_f32_f16 v3, v1, v1, v3
  .endr
  s_sub_u32 s4, s4, 1
  s_cmp_lg_u32 s4, 0
  s_cbranch_scc1 .Ldot2_chain2_loop
  s_endpgm
KD dot2_chain2, 8, 8, 0

// Four independent chains (v2..v5), interleaved.
KERNEL dot2_chain4
  s_load_dword s4, s[0:1], 0x0
  v_mov_b32 v1, 0x3c003c00
  v_mov_b32 v2, 0
  v_mov_b32 v3, 0
  v_mov_b32 v4, 0
  v_mov_b32 v5, 0
  s_waitcnt lgkmcnt(0)
.Ldot2_chain4_loop:
  .rept 16
  v_dot2_f32_f16 v2, v1, v1, v2
  v_dot2_f32_f16 v3, v1, v1, v3
  v_dot2_f32_f16 v4, v1, v1, v4
  v_dot2_f32_f16 v5, v1, v1, v5
  .endr
  s_sub_u32 s4, s4, 1
  s_cmp_lg_u32 s4, 0
  s_cbranch_scc1 .Ldot2_chain4_loop
  s_endpgm
KD dot2_chain4, 8, 8, 0

// v_pk_fma_f16, four independent chains: 2 f16 FMAs per lane each.
KERNEL pk_fma_chain4
  s_load_dword s4, s[0:1], 0x0
  v_mov_b32 v1, 0x3c003c00
  v_mov_b32 v2, 0
  v_mov_b32 v3, 0
  v_mov_b32 v4, 0
  v_mov_b32 v5, 0
  s_waitcnt lgkmcnt(0)
.Lpk_fma_chain4_loop:
  .rept 16
  v_pk_fma_f16 v2, v1, v1, v2
  v_pk_fma_f16 v3, v1, v1, v3
  v_pk_fma_f16 v4, v1, v1, v4
  v_pk_fma_f16 v5, v1, v1, v5
  .endr
  s_sub_u32 s4, s4, 1
  s_cmp_lg_u32 s4, 0
  s_cbranch_scc1 .Lpk_fma_chain4_loop
  s_endpgm
KD pk_fma_chain4, 8, 8, 0
