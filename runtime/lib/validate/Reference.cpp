//===- Reference.cpp - CPU reference attention ----------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the fp64 reference (with the conditioning magnitude
// sum_j p_ij |v_jd| of each output element) and the naive same-precision
// references with one row routine templated on the arithmetic type
// (validate/AttentionCore.h, shared with the paged and variable-length
// references); the 16-bit naive variants additionally round P and the output
// to the element type.
//
//===----------------------------------------------------------------------===//

#include "fa/Reference.h"
#include "validate/AttentionCore.h"
#include "validate/Parallel.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>

using namespace fa;
using namespace fa::detail;

/// `count` as a size_t; SIZE_MAX when it overflowed (checkShape refuses such
/// problems, so only an unchecked problem sees it).
static size_t elementCount(std::optional<int64_t> count) {
  return count ? size_t(*count) : SIZE_MAX;
}

size_t AttentionProblem::qElements() const {
  return elementCount(
      checkedProduct({shape.batch, shape.headsQ, shape.seqQ, headDim}));
}

size_t AttentionProblem::kvElements() const {
  return elementCount(
      checkedProduct({shape.batch, shape.headsKv, shape.seqK, headDim}));
}

size_t AttentionProblem::lseElements() const {
  return elementCount(checkedProduct({shape.batch, shape.headsQ, shape.seqQ}));
}

Status fa::checkShape(const AttentionProblem &p) {
  const AttentionShape &s = p.shape;
  const std::string what = "invalid attention problem: " + s.toString() +
                           " D=" + std::to_string(p.headDim);
  if (s.batch < 1 || s.headsQ < 1 || s.headsKv < 1 || s.seqQ < 1 ||
      s.seqK < 1 || p.headDim < 1)
    return Status::error(ErrorCode::InvalidArgument,
                         what + " (all must be at least 1)");
  if (s.headsQ % s.headsKv != 0)
    return Status::error(
        ErrorCode::InvalidArgument,
        "invalid attention problem: Hq (" + std::to_string(s.headsQ) +
            ") is not a multiple of Hkv (" + std::to_string(s.headsKv) + ")");
  // Every tensor, in the widest element type anything stores it in (the
  // fp64 reference), must have a byte size that int64 holds.
  const std::pair<const char *, std::optional<int64_t>> tensors[] = {
      {"Q and O (B*Hq*Lq*D elements)",
       checkedProduct({s.batch, s.headsQ, s.seqQ, p.headDim, 8})},
      {"K and V (B*Hkv*Lk*D elements)",
       checkedProduct({s.batch, s.headsKv, s.seqK, p.headDim, 8})}};
  for (const auto &[name, bytes] : tensors)
    if (!bytes)
      return Status::error(ErrorCode::InvalidArgument,
                           what + ": the byte size of " + name +
                               " overflows 64 bits");
  if (Status st = checkWindowSoftcap("attention", p.windowLeft, p.windowRight,
                                     p.softcap);
      !st.ok())
    return st;
  return checkHeadParams("attention", s.headsQ, p.alibiSlopes, p.sinks);
}

Status fa::checkProblem(const AttentionProblem &p, const AttentionData &d) {
  if (Status s = checkShape(p); !s.ok())
    return s;
  if (d.q.size() != p.qElements() || d.k.size() != p.kvElements() ||
      d.v.size() != p.kvElements())
    return Status::error(ErrorCode::InvalidArgument,
                         "attention data has " + std::to_string(d.q.size()) +
                             "/" + std::to_string(d.k.size()) + "/" +
                             std::to_string(d.v.size()) +
                             " elements for Q/K/V, the problem needs " +
                             std::to_string(p.qElements()) + "/" +
                             std::to_string(p.kvElements()) + "/" +
                             std::to_string(p.kvElements()));
  return Status::success();
}

/// Computes all rows of one (batch, query head) in arithmetic type T: the
/// dense tensors' rows handed to the shared row routine (AttentionCore.h).
template <typename T>
static void attentionHead(const AttentionProblem &p, const AttentionData &d,
                          int64_t b, int64_t h, DType roundType,
                          AttentionResult<T> &out, std::vector<T> &scores) {
  const AttentionShape &s = p.shape;
  const int64_t D = p.headDim, Lq = s.seqQ, Lk = s.seqK;
  const int64_t hk = h / (s.headsQ / s.headsKv);
  HeadTask<T> t;
  t.lq = Lq;
  t.lk = Lk;
  t.headDim = D;
  t.causal = p.causal;
  t.windowLeft = p.windowLeft;
  t.windowRight = p.windowRight;
  t.scale = p.scale;
  t.softcap = p.softcap;
  if (p.hasAlibi())
    t.alibiSlope = p.alibiSlopes[size_t(h)];
  t.hasSink = p.hasSinks();
  if (t.hasSink)
    t.sink = p.sinks[size_t(h)];
  t.q = d.q.data() + ((b * s.headsQ + h) * Lq) * D;
  t.qStride = D;
  t.k.base = d.k.data() + ((b * s.headsKv + hk) * Lk) * D;
  t.k.rowStride = D;
  t.v.base = d.v.data() + ((b * s.headsKv + hk) * Lk) * D;
  t.v.rowStride = D;
  t.o = out.o.data() + ((b * s.headsQ + h) * Lq) * D;
  t.oStride = D;
  t.lse = out.lse.data() + (b * s.headsQ + h) * Lq;
  t.lseStride = 1;
  if (!out.magnitude.empty())
    t.magnitude = out.magnitude.data() + ((b * s.headsQ + h) * Lq) * D;
  attentionRows(t, roundType, scores);
}

template <typename T>
static AttentionResult<T> runReference(const AttentionProblem &p,
                                       const AttentionData &d, DType roundType,
                                       bool magnitude = false) {
  AttentionResult<T> out;
  if (!checkProblem(p, d).ok())
    return out;
  out.o.assign(p.qElements(), T(0));
  out.lse.assign(p.lseElements(), T(0));
  if (magnitude)
    out.magnitude.assign(p.qElements(), T(0));
  const int64_t heads = p.shape.headsQ;
  parallelFor(size_t(p.shape.batch * heads), [&](size_t bh) {
    std::vector<T> scores(size_t(p.shape.seqK));
    attentionHead<T>(p, d, int64_t(bh) / heads, int64_t(bh) % heads, roundType,
                     out, scores);
  });
  return out;
}

AttentionResult<double> fa::referenceAttentionF64(const AttentionProblem &p,
                                                  const AttentionData &d) {
  return runReference<double>(p, d, DType::F32, /*magnitude=*/true);
}

AttentionResult<float> fa::referenceAttentionF32(const AttentionProblem &p,
                                                 const AttentionData &d) {
  return runReference<float>(p, d, DType::F32);
}

AttentionResult<float> fa::naiveAttention(const AttentionProblem &p,
                                          DType dtype, const AttentionData &d) {
  return runReference<float>(p, d, dtype);
}
