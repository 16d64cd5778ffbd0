// The dense kernel of the AOT launcher test (LauncherTest.cpp; fac
// --index-bits=64): f16, D=64, not causal, scale 0.2, no LSE output, GQA
// Hq=4 / Hkv=2 fixed at compile time.
func.func @attention(%q: tensor<?x4x?x64xf16>, %k: tensor<?x2x?x64xf16>, %v: tensor<?x2x?x64xf16>) -> tensor<?x4x?x64xf16> {
  %o = fa.attention %q, %k, %v scale(0.2) : tensor<?x4x?x64xf16>, tensor<?x2x?x64xf16>, tensor<?x2x?x64xf16> -> tensor<?x4x?x64xf16>
  return %o : tensor<?x4x?x64xf16>
}
