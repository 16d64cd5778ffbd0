//===- Reference.h - CPU reference attention --------------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Reference forward attention on the CPU, for validating kernels. There are
// two, both computed the textbook way (scores, row max, exp, sum, normalize,
// P·V) from the dtype-rounded inputs:
//   - the fp64 reference: every operation in double; the baseline every
//     metric is measured against. It also returns each output element's
//     conditioning magnitude A_id = sum_j p_ij |v_jd|;
//   - the "naive same-precision" reference: what a plain implementation in
//     the kernel's element type produces (FlashAttention's test baseline);
//     for f32 that is the same computation in float (referenceAttentionF32).
// There is no third, fp32 baseline: an f32 kernel is compared with the fp64
// reference, and the float computation is only its naive baseline.
// Conventions (fixed by test/data/golden/README.md): causal masking is
// bottom-right aligned (query i sees key j iff j <= i + Lk - Lq); query head h
// reads KV head h / (Hq / Hkv); a row with no visible key has output 0 and
// LSE -inf; LSE is the natural-log log-sum-exp of the scaled scores.
// The sliding window and the softcap are FlashAttention 2's: with
// shift = Lk - Lq, query i sees key j iff (windowLeft < 0 or
// j >= i + shift - windowLeft) and (windowRight < 0 or
// j <= i + shift + windowRight) and (not causal or j <= i + shift), so a
// row sees a contiguous range of keys; with softcap > 0 each scaled score
// s becomes softcap * tanh(s / softcap) before the mask and the softmax (LSE
// is over the capped scores). Golden cases have neither.
// ALiBi and attention sinks are FlashAttention 2's (and gpt-oss's): with
// alibiSlopes, query head h's score of key j in row i becomes
// s_ij - alibiSlopes[h] * |i + shift - j| (after the softcap, before the
// masks); with sinks, each row's softmax denominator is
// Z_i = sum over visible j of exp(s_ij) + exp(sinks[h]), O_i =
// sum_j exp(s_ij) v_j / Z_i and LSE_i = log Z_i (the sink contributes no
// value), so a row that sees no key has O = 0 and LSE = sinks[h]. Golden
// cases have neither.
// All tensors here are contiguous [B, H, L, D]; work is split over (b, h)
// across hardware threads.
//
// Library: fa::validate (libfa_validate.so, over fa::runtime).
//
//===----------------------------------------------------------------------===//

#ifndef FA_REFERENCE_H
#define FA_REFERENCE_H

#include "fa/AttentionShape.h"
#include "fa/DType.h"
#include "fa/Status.h"

#include <vector>

namespace fa {

/// Everything that determines an attention's result besides its inputs.
struct AttentionProblem {
  AttentionShape shape;
  int64_t headDim = 0;
  bool causal = false;
  double scale = 0;
  /// The sliding window's bounds, -1 = unbounded (KernelInfo's).
  int64_t windowLeft = -1, windowRight = -1;
  /// 0: no softcap.
  double softcap = 0;
  /// Per query head (Hq entries each), or empty for none: the ALiBi slopes
  /// and the attention sinks' logits (natural units), as the kernel gets
  /// them (f32).
  std::vector<float> alibiSlopes;
  std::vector<float> sinks;

  bool hasWindow() const { return windowLeft >= 0 || windowRight >= 0; }
  bool hasAlibi() const { return !alibiSlopes.empty(); }
  bool hasSinks() const { return !sinks.empty(); }

  // Element counts; SIZE_MAX when one overflows (checkShape refuses that).
  size_t qElements() const;   ///< B*Hq*Lq*D (also O)
  size_t kvElements() const;  ///< B*Hkv*Lk*D (each of K, V)
  size_t lseElements() const; ///< B*Hq*Lq
};

/// Q, K, V as floats holding values exactly representable in the kernel's
/// dtype (already rounded).
struct AttentionData {
  std::vector<float> q, k, v;
};

template <typename T> struct AttentionResult {
  std::vector<T> o;   ///< [B, Hq, Lq, D]
  std::vector<T> lse; ///< [B, Hq, Lq]
  /// [B, Hq, Lq, D]: A_id = sum_j p_ij |v_jd|, the scale of the rounding
  /// error of output element (i, d) (0 for rows with no visible key). Only
  /// the fp64 reference fills it; empty otherwise.
  std::vector<T> magnitude;
};

/// InvalidArgument unless all sizes and D are positive, Hkv divides Hq,
/// each tensor's size in bytes as fp64 fits in int64 (so element counts and
/// byte sizes computed from a checked problem cannot overflow), the window
/// bounds are at least -1, the softcap is finite and at least 0, and
/// alibiSlopes and sinks are empty or Hq finite values each.
Status checkShape(const AttentionProblem &problem);

/// checkShape, and the data has the sizes the problem implies.
Status checkProblem(const AttentionProblem &problem, const AttentionData &data);

/// The fp64 reference: every operation in double; fills `magnitude`.
AttentionResult<double> referenceAttentionF64(const AttentionProblem &problem,
                                              const AttentionData &data);

/// The same computation in float (dot products accumulated in float): the
/// naive same-precision reference of f32 kernels.
AttentionResult<float> referenceAttentionF32(const AttentionProblem &problem,
                                             const AttentionData &data);

/// The naive same-precision reference for `dtype`. For f32 it is
/// referenceAttentionF32. For f16/bf16: scores in fp32 from the 16-bit inputs,
/// softmax in fp32, P rounded to `dtype` before P·V, P·V accumulated in fp32,
/// output rounded to `dtype`; LSE in fp32.
AttentionResult<float> naiveAttention(const AttentionProblem &problem,
                                      DType dtype, const AttentionData &data);

} // namespace fa

#endif // FA_REFERENCE_H
