// LDS bandwidth microbenchmark (issue 20): ds_read_b128, lane l of each
// wave reading 16 bytes at l * stride (stride 16: contiguous; 128: a
// column of 32-dword rows; 132: rows padded to 33 dwords). Kernarg: u32
// trips at 0, u32 stride at 4. Each trip issues 8 reads (8 KiB per wave)
// before one s_waitcnt lgkmcnt(0), so that with 4 waves per SIMD the LDS,
// not its latency, is the limit. Bytes = waves * 8 * 1024 * trips.
// The LDS holds 64 rows of 132 bytes and 16 bytes of slack.
.include "common.inc"

KERNEL lds_read_b128
  s_load_dwordx2 s[4:5], s[0:1], 0x0  // s4 trips, s5 stride
  v_and_b32 v1, 63, v0
  s_waitcnt lgkmcnt(0)
  v_mul_lo_u32 v1, v1, s5
.Llds_read_b128_loop:
  ds_read_b128 v[4:7], v1
  ds_read_b128 v[8:11], v1
  ds_read_b128 v[12:15], v1
  ds_read_b128 v[16:19], v1
  ds_read_b128 v[20:23], v1
  ds_read_b128 v[24:27], v1
  ds_read_b128 v[28:31], v1
  ds_read_b128 v[32:35], v1
  s_waitcnt lgkmcnt(0)
  s_sub_u32 s4, s4, 1
  s_cmp_lg_u32 s4, 0
  s_cbranch_scc1 .Llds_read_b128_loop
  s_endpgm
KD lds_read_b128, 36, 8, 8464
