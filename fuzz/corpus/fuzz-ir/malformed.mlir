// A malformed file: file:line:col: error and a non-zero exit, no crash.
func.func @broken(%q: tensor<1x8x128x64xf16>) {
  %o = fa.attention %q, %q : tensor<1x8x128x64xf16>
  return
}
