func.func @returns_other(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>, %x: tensor<4xf32>) -> (tensor<1x8x128x64xf16>, tensor<4xf32>) {
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf16>
  return %o, %x : tensor<1x8x128x64xf16>, tensor<4xf32>
}
