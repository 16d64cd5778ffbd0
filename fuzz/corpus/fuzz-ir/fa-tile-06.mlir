// K and V from one tensor: the kernel ABI has a buffer per role, so a caller
// passing separate K and V buffers would read the wrong one.
func.func @same_key_value(%q: tensor<1x8x128x64xf16>, %kv: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  %o = fa.attention %q, %kv, %kv : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}
