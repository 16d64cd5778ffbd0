// RUN: fa-opt %s -split-input-file --fa-fuse="remarks=true" -verify-diagnostics | FileCheck %s
// Without `remarks`, declined chains are left alone silently.
// RUN: fa-opt %s -split-input-file --fa-fuse 2>&1 >/dev/null | FileCheck %s --check-prefix=QUIET
// QUIET-NOT: remark: not fused

//===----------------------------------------------------------------------===//
// Chains that fuse
//===----------------------------------------------------------------------===//

// f16: the f32 product rounded by arith.truncf is what the program uses; the
// truncf's result is replaced, and causal and scale are carried over.
// CHECK-LABEL: func.func @f16_truncf
// CHECK-SAME: (%[[Q:[^:]+]]: {{[^,]+}}, %[[K:[^:]+]]: {{[^,]+}}, %[[V:[^:]+]]:
// CHECK-NOT: fa.matmul
// CHECK-NOT: fa.softmax
// CHECK: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] causal scale(1.250000e-01) : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16> -> tensor<2x8x128x64xf16>
// CHECK-NOT: arith.truncf
// CHECK-NEXT: return %[[O]] : tensor<2x8x128x64xf16>
func.func @f16_truncf(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64xf16>, %v: tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16> -> tensor<2x8x128x128xf32>
  %p = fa.softmax %s causal scale(0.125) : tensor<2x8x128x128xf32> -> tensor<2x8x128x128xf16>
  %o32 = fa.matmul %p, %v : tensor<2x8x128x128xf16>, tensor<2x8x128x64xf16> -> tensor<2x8x128x64xf32>
  %o = arith.truncf %o32 : tensor<2x8x128x64xf32> to tensor<2x8x128x64xf16>
  return %o : tensor<2x8x128x64xf16>
}

// -----

// The softmax's sliding window and softcap are carried over too (issue 32).
// CHECK-LABEL: func.func @window_softcap
// CHECK: fa.attention %{{[^,]+}}, %{{[^,]+}}, %{{[^ ]+}} causal scale(1.250000e-01) window(64, -1) softcap(5.000000e+01) :
func.func @window_softcap(%q: tensor<2x8x128x64xf16>, %k: tensor<2x8x128x64xf16>, %v: tensor<2x8x128x64xf16>) -> tensor<2x8x128x64xf16> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<2x8x128x64xf16>, tensor<2x8x128x64xf16> -> tensor<2x8x128x128xf32>
  %p = fa.softmax %s causal scale(0.125) window(64, -1) softcap(50.0) : tensor<2x8x128x128xf32> -> tensor<2x8x128x128xf16>
  %o32 = fa.matmul %p, %v : tensor<2x8x128x128xf16>, tensor<2x8x128x64xf16> -> tensor<2x8x128x64xf32>
  %o = arith.truncf %o32 : tensor<2x8x128x64xf32> to tensor<2x8x128x64xf16>
  return %o : tensor<2x8x128x64xf16>
}

// -----

// f32: no truncf; the second matmul's result is replaced.
// CHECK-LABEL: func.func @f32_no_truncf
// CHECK-SAME: (%[[Q:[^:]+]]: {{[^,]+}}, %[[K:[^:]+]]: {{[^,]+}}, %[[V:[^:]+]]:
// CHECK-NEXT: %[[O:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] scale(5.000000e-01) : tensor<1x4x96x32xf32>, tensor<1x4x80x32xf32>, tensor<1x4x80x32xf32> -> tensor<1x4x96x32xf32>
// CHECK-NEXT: return %[[O]] : tensor<1x4x96x32xf32>
func.func @f32_no_truncf(%q: tensor<1x4x96x32xf32>, %k: tensor<1x4x80x32xf32>, %v: tensor<1x4x80x32xf32>) -> tensor<1x4x96x32xf32> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x4x96x32xf32>, tensor<1x4x80x32xf32> -> tensor<1x4x96x80xf32>
  %p = fa.softmax %s scale(0.5) : tensor<1x4x96x80xf32> -> tensor<1x4x96x80xf32>
  %o = fa.matmul %p, %v : tensor<1x4x96x80xf32>, tensor<1x4x80x32xf32> -> tensor<1x4x96x32xf32>
  return %o : tensor<1x4x96x32xf32>
}

// -----

// fa.softmax's scale defaults to 1 but fa.attention's to 1/sqrt(D): the fused
// op must spell scale(1.0) out.
// CHECK-LABEL: func.func @softmax_without_scale
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} scale(1.000000e+00) : tensor<1x8x128x64xf16>
func.func @softmax_without_scale(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x128xf32>
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf16>
  %o32 = fa.matmul %p, %v : tensor<1x8x128x128xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf32>
  %o = arith.truncf %o32 : tensor<1x8x128x64xf32> to tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

// Grouped-query attention: 8 query heads share 2 key/value heads.
// CHECK-LABEL: func.func @gqa
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} causal scale(1.250000e-01) : tensor<1x8x128x64xf16>, tensor<1x2x256x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x8x128x64xf16>
func.func @gqa(%q: tensor<1x8x128x64xf16>, %k: tensor<1x2x256x64xf16>, %v: tensor<1x2x256x64xf16>) -> tensor<1x8x128x64xf16> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x2x256x64xf16> -> tensor<1x8x128x256xf32>
  %p = fa.softmax %s causal scale(0.125) : tensor<1x8x128x256xf32> -> tensor<1x8x128x256xf16>
  %o32 = fa.matmul %p, %v : tensor<1x8x128x256xf16>, tensor<1x2x256x64xf16> -> tensor<1x8x128x64xf32>
  %o = arith.truncf %o32 : tensor<1x8x128x64xf32> to tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

// Dynamic batch, heads and sequence lengths (D stays static).
// CHECK-LABEL: func.func @dynamic
// CHECK: fa.attention %{{.+}}, %{{.+}}, %{{.+}} scale(1.250000e-01) : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xbf16>
func.func @dynamic(%q: tensor<?x?x?x64xbf16>, %k: tensor<?x?x?x64xbf16>, %v: tensor<?x?x?x64xbf16>) -> tensor<?x?x?x64xbf16> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<?x?x?x64xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x?xf32>
  %p = fa.softmax %s scale(0.125) : tensor<?x?x?x?xf32> -> tensor<?x?x?x?xbf16>
  %o32 = fa.matmul %p, %v : tensor<?x?x?x?xbf16>, tensor<?x?x?x64xbf16> -> tensor<?x?x?x64xf32>
  %o = arith.truncf %o32 : tensor<?x?x?x64xf32> to tensor<?x?x?x64xbf16>
  return %o : tensor<?x?x?x64xbf16>
}

// -----

// Two independent chains in one function: both fuse, each keeps its own
// operands and attributes.
// CHECK-LABEL: func.func @two_chains
// CHECK-SAME: (%[[Q:[^:]+]]: {{[^,]+}}, %[[K:[^:]+]]: {{[^,]+}}, %[[V:[^:]+]]: {{[^,]+}}, %[[Q2:[^:]+]]: {{[^,]+}}, %[[K2:[^:]+]]: {{[^,]+}}, %[[V2:[^:]+]]:
// CHECK-NOT: fa.matmul
// CHECK: %[[O1:.+]] = fa.attention %[[Q]], %[[K]], %[[V]] causal scale(1.250000e-01) : {{.*}} -> tensor<1x8x128x64xf16>
// CHECK-NOT: fa.matmul
// CHECK: %[[O2:.+]] = fa.attention %[[Q2]], %[[K2]], %[[V2]] scale(2.500000e-01) : {{.*}} -> tensor<1x2x64x16xf32>
// CHECK-NOT: fa.matmul
// CHECK: return %[[O1]], %[[O2]]
func.func @two_chains(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>,
                      %q2: tensor<1x2x64x16xf32>, %k2: tensor<1x2x64x16xf32>, %v2: tensor<1x2x64x16xf32>)
    -> (tensor<1x8x128x64xf16>, tensor<1x2x64x16xf32>) {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x128xf32>
  %p = fa.softmax %s causal scale(0.125) : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf16>
  %o32 = fa.matmul %p, %v : tensor<1x8x128x128xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf32>
  %o = arith.truncf %o32 : tensor<1x8x128x64xf32> to tensor<1x8x128x64xf16>
  %s2 = fa.matmul %q2, %k2 transpose_rhs : tensor<1x2x64x16xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x64xf32>
  %p2 = fa.softmax %s2 scale(0.25) : tensor<1x2x64x64xf32> -> tensor<1x2x64x64xf32>
  %o2 = fa.matmul %p2, %v2 : tensor<1x2x64x64xf32>, tensor<1x2x64x16xf32> -> tensor<1x2x64x16xf32>
  return %o, %o2 : tensor<1x8x128x64xf16>, tensor<1x2x64x16xf32>
}

//===----------------------------------------------------------------------===//
// Chains that must not fuse: the IR is left as it was, with a remark
//===----------------------------------------------------------------------===//

// -----

// A lone matmul is not a candidate: no remark, nothing changes.
// CHECK-LABEL: func.func @lone_matmul
// CHECK-NEXT: fa.matmul
// CHECK-NEXT: return
func.func @lone_matmul(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>) -> tensor<1x8x128x128xf32> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x128xf32>
  return %s : tensor<1x8x128x128xf32>
}

// -----

// Fusing would drop S, which the function also returns.
// CHECK-LABEL: func.func @scores_used_twice
// CHECK: %[[S:.+]] = fa.matmul {{.*}} transpose_rhs
// CHECK: fa.softmax %[[S]]
// CHECK: fa.matmul
// CHECK: arith.truncf
// CHECK-NOT: fa.attention
// CHECK: return {{.*}}, %[[S]]
func.func @scores_used_twice(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> (tensor<1x8x128x64xf16>, tensor<1x8x128x128xf32>) {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x128xf32>
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf16>
  // expected-remark @+1 {{not fused: scores S have another use}}
  %o32 = fa.matmul %p, %v : tensor<1x8x128x128xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf32>
  %o = arith.truncf %o32 : tensor<1x8x128x64xf32> to tensor<1x8x128x64xf16>
  return %o, %s : tensor<1x8x128x64xf16>, tensor<1x8x128x128xf32>
}

// -----

// CHECK-LABEL: func.func @probabilities_used_twice
// CHECK: fa.matmul {{.*}} transpose_rhs
// CHECK: %[[P:.+]] = fa.softmax
// CHECK: fa.matmul %[[P]]
// CHECK-NOT: fa.attention
// CHECK: return {{.*}}, %[[P]]
func.func @probabilities_used_twice(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> (tensor<1x8x128x64xf16>, tensor<1x8x128x128xf16>) {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x128xf32>
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf16>
  // expected-remark @+1 {{not fused: probabilities P have another use}}
  %o32 = fa.matmul %p, %v : tensor<1x8x128x128xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf32>
  %o = arith.truncf %o32 : tensor<1x8x128x64xf32> to tensor<1x8x128x64xf16>
  return %o, %p : tensor<1x8x128x64xf16>, tensor<1x8x128x128xf16>
}

// -----

// Q·K with K already transposed is not the Q·Kᵀ of attention.
// CHECK-LABEL: func.func @first_matmul_not_transposed
// CHECK: fa.matmul %{{.+}}, %{{.+}} : tensor<1x8x128x64xf16>, tensor<1x8x64x128xf16>
// CHECK: fa.softmax
// CHECK: fa.matmul
// CHECK-NOT: fa.attention
func.func @first_matmul_not_transposed(%q: tensor<1x8x128x64xf16>, %kt: tensor<1x8x64x128xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf16> {
  %s = fa.matmul %q, %kt : tensor<1x8x128x64xf16>, tensor<1x8x64x128xf16> -> tensor<1x8x128x128xf32>
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf16>
  // expected-remark @+1 {{not fused: first matmul does not transpose its rhs (Q·Kᵀ expected)}}
  %o32 = fa.matmul %p, %v : tensor<1x8x128x128xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf32>
  %o = arith.truncf %o32 : tensor<1x8x128x64xf32> to tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

// CHECK-LABEL: func.func @second_matmul_transposed
// CHECK: fa.matmul {{.*}} transpose_rhs
// CHECK: fa.softmax
// CHECK: fa.matmul %{{.+}}, %{{.+}} transpose_rhs : tensor<1x8x128x128xf16>, tensor<1x8x64x128xf16>
// CHECK-NOT: fa.attention
func.func @second_matmul_transposed(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %vt: tensor<1x8x64x128xf16>) -> tensor<1x8x128x64xf16> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x128xf32>
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf16>
  // expected-remark @+1 {{not fused: second matmul transposes its rhs (P·V expected)}}
  %o32 = fa.matmul %p, %vt transpose_rhs : tensor<1x8x128x128xf16>, tensor<1x8x64x128xf16> -> tensor<1x8x128x64xf32>
  %o = arith.truncf %o32 : tensor<1x8x128x64xf32> to tensor<1x8x128x64xf16>
  return %o : tensor<1x8x128x64xf16>
}

// -----

// fa.attention rounds P to Q's type; a chain that keeps P in f32 for f16 Q
// computes something else. (This is also how mixed Q/V types show up: the
// matmul verifier ties V's type to P's.)
// CHECK-LABEL: func.func @p_not_rounded_to_query_type
// CHECK: fa.matmul {{.*}} transpose_rhs
// CHECK: fa.softmax %{{.+}} : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf32>
// CHECK: fa.matmul
// CHECK-NOT: fa.attention
func.func @p_not_rounded_to_query_type(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf32>) -> tensor<1x8x128x64xf32> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x128xf32>
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf32>
  // expected-remark @+1 {{not fused: P is rounded to f32, not the query's f16}}
  %o = fa.matmul %p, %v : tensor<1x8x128x128xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return %o : tensor<1x8x128x64xf32>
}

// -----

// An f16 fa.attention yields f16; the program uses the f32 product itself.
// CHECK-LABEL: func.func @f16_product_used_unrounded
// CHECK: fa.matmul {{.*}} transpose_rhs
// CHECK: fa.softmax
// CHECK: %[[O:.+]] = fa.matmul
// CHECK-NOT: fa.attention
// CHECK: return %[[O]] : tensor<1x8x128x64xf32>
func.func @f16_product_used_unrounded(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x64xf16>) -> tensor<1x8x128x64xf32> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x128xf32>
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf16>
  // expected-remark @+1 {{not fused: the f32 product is used unrounded; fa.attention yields the query's element type}}
  %o = fa.matmul %p, %v : tensor<1x8x128x128xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x64xf32>
  return %o : tensor<1x8x128x64xf32>
}

// -----

// fa.attention has one head dimension D for Q, K and V.
// CHECK-LABEL: func.func @value_head_dim_differs
// CHECK: fa.matmul {{.*}} transpose_rhs
// CHECK: fa.softmax
// CHECK: fa.matmul {{.*}} -> tensor<1x8x128x32xf32>
// CHECK-NOT: fa.attention
func.func @value_head_dim_differs(%q: tensor<1x8x128x64xf16>, %k: tensor<1x8x128x64xf16>, %v: tensor<1x8x128x32xf16>) -> tensor<1x8x128x32xf16> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x128xf32>
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf16>
  // expected-remark @+1 {{not fused: head dimensions differ or are dynamic: query D=64, key D=64, value D=32}}
  %o32 = fa.matmul %p, %v : tensor<1x8x128x128xf16>, tensor<1x8x128x32xf16> -> tensor<1x8x128x32xf32>
  %o = arith.truncf %o32 : tensor<1x8x128x32xf32> to tensor<1x8x128x32xf16>
  return %o : tensor<1x8x128x32xf16>
}

// -----

// A dynamic key D would make an invalid fa.attention (D must be static).
// CHECK-LABEL: func.func @dynamic_key_head_dim
// CHECK: fa.matmul
// CHECK-NOT: fa.attention
func.func @dynamic_key_head_dim(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x128x?xf32>, %v: tensor<1x8x128x64xf32>) -> tensor<1x8x128x64xf32> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf32>, tensor<1x8x128x?xf32> -> tensor<1x8x128x128xf32>
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf32>
  // expected-remark @+1 {{not fused: head dimensions differ or are dynamic: query D=64, key D=?, value D=64}}
  %o = fa.matmul %p, %v : tensor<1x8x128x128xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return %o : tensor<1x8x128x64xf32>
}

// -----

// K and V with different head counts each divide Q's, so both matmuls verify,
// but fa.attention reads one KV head for both.
// CHECK-LABEL: func.func @key_value_heads_differ
// CHECK: fa.matmul
// CHECK-NOT: fa.attention
func.func @key_value_heads_differ(%q: tensor<1x8x128x64xf32>, %k: tensor<1x2x128x64xf32>, %v: tensor<1x4x128x64xf32>) -> tensor<1x8x128x64xf32> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf32>, tensor<1x2x128x64xf32> -> tensor<1x8x128x128xf32>
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf32>
  // expected-remark @+1 {{not fused: key and value shapes differ: key is 'tensor<1x2x128x64xf32>', value is 'tensor<1x4x128x64xf32>'}}
  %o = fa.matmul %p, %v : tensor<1x8x128x128xf32>, tensor<1x4x128x64xf32> -> tensor<1x8x128x64xf32>
  return %o : tensor<1x8x128x64xf32>
}

// -----

// Dynamic S and P let the result's query length disagree with Q's statically:
// fusing would make an fa.attention that does not verify.
// CHECK-LABEL: func.func @result_does_not_match_query
// CHECK: fa.matmul
// CHECK-NOT: fa.attention
func.func @result_does_not_match_query(%q: tensor<1x8x128x64xf32>, %k: tensor<1x8x128x64xf32>, %v: tensor<1x8x128x64xf32>) -> tensor<1x8x64x64xf32> {
  %s = fa.matmul %q, %k transpose_rhs : tensor<1x8x128x64xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x?x?xf32>
  %p = fa.softmax %s : tensor<1x8x?x?xf32> -> tensor<1x8x?x?xf32>
  // expected-remark @+1 {{not fused: result 'tensor<1x8x64x64xf32>' does not match the query 'tensor<1x8x128x64xf32>'}}
  %o = fa.matmul %p, %v : tensor<1x8x?x?xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x64x64xf32>
  return %o : tensor<1x8x64x64xf32>
}

// -----

// CHECK-LABEL: func.func @softmax_of_an_argument
// CHECK: fa.softmax
// CHECK: fa.matmul
// CHECK-NOT: fa.attention
func.func @softmax_of_an_argument(%s: tensor<1x8x128x128xf32>, %v: tensor<1x8x128x64xf32>) -> tensor<1x8x128x64xf32> {
  %p = fa.softmax %s : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf32>
  // expected-remark @+1 {{not fused: softmax input is not an fa.matmul}}
  %o = fa.matmul %p, %v : tensor<1x8x128x128xf32>, tensor<1x8x128x64xf32> -> tensor<1x8x128x64xf32>
  return %o : tensor<1x8x128x64xf32>
}
