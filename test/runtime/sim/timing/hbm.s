// HBM bandwidth microbenchmarks (issue 20). Workgroups of 256 lanes; each
// workgroup streams its own chunk of trips * 16 KiB: per trip, four
// global_load_dwordx4 of 4 KiB each (lane l at 16 * l + 4096 * k) from an
// SGPR base that then advances by 16 KiB.
//   hbm_read: kernarg u64 src at 0, u32 trips at 8. Bytes read = 16 KiB *
//     trips per workgroup.
//   hbm_copy: kernarg u64 src at 0, u64 dst at 8, u32 trips at 16; the
//     four loads, s_waitcnt vmcnt(0), four global_store_dwordx4 of the
//     same data to dst. Bytes read = bytes written = 16 KiB * trips.
.include "common.inc"

// v1..v4: lane l's offsets 16 * l + 4096 * k of one 16 KiB trip.
.macro LANE_OFFSETS
  v_lshlrev_b32 v1, 4, v0            // 16 * lane
  v_add_u32 v2, 0x1000, v1
  v_add_u32 v3, 0x2000, v1
  v_add_u32 v4, 0x3000, v1
.endm

// s6 trips of four global_load_dwordx4 from s[4:5], which advances by
// 16 KiB per trip.
.macro READ_TRIPS
1:
  global_load_dwordx4 v[8:11], v1, s[4:5]
  global_load_dwordx4 v[12:15], v2, s[4:5]
  global_load_dwordx4 v[16:19], v3, s[4:5]
  global_load_dwordx4 v[20:23], v4, s[4:5]
  s_add_u32 s4, s4, 0x4000
  s_addc_u32 s5, s5, 0
  s_sub_u32 s6, s6, 1
  s_cmp_lg_u32 s6, 0
  s_waitcnt vmcnt(0)
  s_cbranch_scc1 1b
.endm

// hbm_read's body after the lane index in v0 (the variants below scale
// it first): the offsets, this workgroup's chunk, the trips.
.macro READ_CHUNK
  LANE_OFFSETS
  s_waitcnt lgkmcnt(0)
  s_lshl_b32 s7, s6, 14              // chunk = trips * 16 KiB
  s_mul_i32 s7, s7, s2               // this workgroup's chunk
  s_add_u32 s4, s4, s7
  s_addc_u32 s5, s5, 0
  READ_TRIPS
  s_endpgm
.endm

KERNEL hbm_read
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_load_dword s6, s[0:1], 0x8
  READ_CHUNK
KD hbm_read, 24, 8, 0

KERNEL hbm_copy
  s_load_dwordx4 s[4:7], s[0:1], 0x0 // src, dst
  s_load_dword s8, s[0:1], 0x10
  LANE_OFFSETS
  s_waitcnt lgkmcnt(0)
  s_lshl_b32 s9, s8, 14
  s_mul_i32 s9, s9, s2
  s_add_u32 s4, s4, s9
  s_addc_u32 s5, s5, 0
  s_add_u32 s6, s6, s9
  s_addc_u32 s7, s7, 0
.Lhbm_copy_loop:
  global_load_dwordx4 v[8:11], v1, s[4:5]
  global_load_dwordx4 v[12:15], v2, s[4:5]
  global_load_dwordx4 v[16:19], v3, s[4:5]
  global_load_dwordx4 v[20:23], v4, s[4:5]
  s_waitcnt vmcnt(0)
  global_store_dwordx4 v1, v[8:11], s[6:7]
  global_store_dwordx4 v2, v[12:15], s[6:7]
  global_store_dwordx4 v3, v[16:19], s[6:7]
  global_store_dwordx4 v4, v[20:23], s[6:7]
  s_add_u32 s4, s4, 0x4000
  s_addc_u32 s5, s5, 0
  s_add_u32 s6, s6, 0x4000
  s_addc_u32 s7, s7, 0
  s_sub_u32 s8, s8, 1
  s_cmp_lg_u32 s8, 0
  s_cbranch_scc1 .Lhbm_copy_loop
  s_waitcnt vmcnt(0)
  s_endpgm
KD hbm_copy, 24, 16, 0

// hbm_read_shared: hbm_read without the per-workgroup chunk: every
// workgroup streams the same trips * 16 KiB from src (v2's L2 model: all
// but the first reader of each line hit). Kernarg as hbm_read's.
KERNEL hbm_read_shared
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_load_dword s6, s[0:1], 0x8
  LANE_OFFSETS
  s_waitcnt lgkmcnt(0)
  READ_TRIPS
  s_endpgm
KD hbm_read_shared, 24, 8, 0

// hbm_read_quad: hbm_read with four lanes on each 16 bytes (lane l at
// 16 * (l / 4) + 4096 * k): every global_load_dwordx4 touches 4 lines of
// 64 bytes for its 64 lanes x 16 bytes (v2's `global_lines`). Kernarg as
// hbm_read's; the same chunks.
KERNEL hbm_read_quad
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_load_dword s6, s[0:1], 0x8
  v_lshrrev_b32 v0, 2, v0            // lane / 4
  READ_CHUNK
KD hbm_read_quad, 24, 8, 0

// hbm_read_spread: hbm_read with lanes 64 bytes apart (lane l at 64 * l +
// 4096 * k): every global_load_dwordx4 touches 64 lines for its 64 lanes x
// 16 bytes. Kernarg as hbm_read's; a workgroup reads up to 28 KiB - 16
// past its chunk's trip base.
KERNEL hbm_read_spread
  s_load_dwordx2 s[4:5], s[0:1], 0x0
  s_load_dword s6, s[0:1], 0x8
  v_lshlrev_b32 v0, 2, v0            // 4 * lane
  READ_CHUNK
KD hbm_read_spread, 24, 8, 0
