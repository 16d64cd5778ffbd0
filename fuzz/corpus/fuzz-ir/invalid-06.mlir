func.func @dynamic_d(%q: tensor<1x8x128x?xf16>, %k: tensor<1x8x128x?xf16>, %v: tensor<1x8x128x?xf16>) {
  %o = fa.attention %q, %k, %v : tensor<1x8x128x?xf16>, tensor<1x8x128x?xf16>, tensor<1x8x128x?xf16> -> tensor<1x8x128x?xf16>
  return
}
