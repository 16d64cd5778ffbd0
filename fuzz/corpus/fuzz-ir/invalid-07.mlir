func.func @int_type(%q: tensor<1x8x128x64xi8>, %k: tensor<1x8x128x64xi8>, %v: tensor<1x8x128x64xi8>) {
  %o = fa.attention %q, %k, %v : tensor<1x8x128x64xi8>, tensor<1x8x128x64xi8>, tensor<1x8x128x64xi8> -> tensor<1x8x128x64xi8>
  return
}
