func.func @self_attention(%x: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  %o = fa.attention %x, %x, %x : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}
