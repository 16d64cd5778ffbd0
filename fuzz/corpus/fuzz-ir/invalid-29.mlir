func.func @tile_dot_acc(%a: tensor<32x64xf16>, %b: tensor<64x64xf16>, %c: tensor<32x32xf32>) {
  %s = fa.tile_dot %a, %b, %c : tensor<32x64xf16>, tensor<64x64xf16>, tensor<32x32xf32> -> tensor<32x64xf32>
  return
}
