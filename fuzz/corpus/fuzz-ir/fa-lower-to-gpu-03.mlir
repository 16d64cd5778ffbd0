#tile = #fa.tile<target = "gfx906", block_m = 16, block_n = 16, waves = 1, wave_size = 64, stages = 1, lds_pad = 0>
gpu.module @m {
  gpu.func @not_a_func() {
    scf.forall (%mb, %h, %b) in (1, 1, 1) {
    } {fa.args = array<i64: 0, 1, 2, 3, -1>, fa.tile = #tile}
    gpu.return
  }
}
