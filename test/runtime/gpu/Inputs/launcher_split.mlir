// The split-KV kernel of the AOT launcher test (LauncherTest.cpp; fac
// --kv-splits=runtime --gqa-pack=on): f16, D=32, causal, with an LSE
// output, any sizes. D=32 makes a split's f32 O part 128 bytes a row, so
// that the workspace's LSE part is where the 256-byte rounding puts it.
func.func @attention(%q: tensor<?x?x?x32xf16>, %k: tensor<?x?x?x32xf16>, %v: tensor<?x?x?x32xf16>) -> (tensor<?x?x?x32xf16>, tensor<?x?x?xf32>) {
  %o, %lse = fa.attention %q, %k, %v causal : tensor<?x?x?x32xf16>, tensor<?x?x?x32xf16>, tensor<?x?x?x32xf16> -> tensor<?x?x?x32xf16>, tensor<?x?x?xf32>
  return %o, %lse : tensor<?x?x?x32xf16>, tensor<?x?x?xf32>
}
