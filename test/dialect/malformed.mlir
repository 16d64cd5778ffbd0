// A malformed file: file:line:col: error and a non-zero exit, no crash.
// RUN: not fa-opt %s 2>&1 | FileCheck %s
// CHECK: malformed.mlir:[[@LINE+2]]:{{[0-9]+}}: error:
func.func @broken(%q: tensor<1x8x128x64xf16>) {
  %o = fa.attention %q, %q : tensor<1x8x128x64xf16>
  return
}
