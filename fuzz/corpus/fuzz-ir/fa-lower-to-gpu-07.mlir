// 1024 threads over a 16x16 block: a row of 16 columns cannot spread over
// the 64 lanes each row would need.
!qkv = memref<1x1x16x32xf16, strided<[?, ?, ?, 1], offset: ?>>
func.func @unmappable(%q: !qkv, %k: !qkv, %v: !qkv, %o: !qkv) {
  scf.forall (%mb, %h, %b) in (1, 1, 1) {
  } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 16, wave_size = 64, stages = 1, lds_pad = 0>}
  return
}
