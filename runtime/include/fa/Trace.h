//===- Trace.h - Validation layer 2: per-block online-softmax state -*- C++
//-*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Layer 2 of the seed's three-layer validation: a kernel compiled with
// `fac --trace` writes, for one traced query row, its online-softmax state
// after every K/V block (KernelAbi.h, "Trace"): the running max m_j, the
// running sum l_j and the unnormalised running output acc_j. This header
// recomputes that state in fp64 over the same K/V block partition (the
// manifest's block_n; causal, sliding window, softcap and GQA aware; the
// blocks the row's Q block visits) and names the first block where the
// kernel's state parts from it, so that a wrong output is traced to the
// block, and the quantity, where it went wrong (docs/validation.md, "Layer
// 2: per-block statistics").
//
// Units: the kernel keeps m in log2 units of the scaled logits (m' =
// scale * log2(e) * max q.k); compareTrace converts it to the reference's
// natural units (m = m' * ln 2). l_j = sum of exp(s - m_j) is the same in
// both. The output is compared as acc_j / l_j, the running normalised
// output, against the reference's sum_k p_k v_k / l_j.
//
// Library: fa::validate (libfa_validate.so, over fa::runtime).
//
//===----------------------------------------------------------------------===//

#ifndef FA_TRACE_H
#define FA_TRACE_H

#include "fa/Reference.h"
#include "fa/Status.h"

#include <string>
#include <vector>

namespace fa {

/// The traced query row: batch, query head, row.
struct TraceRow {
  int64_t batch = 0, head = 0, row = 0;
};

/// One K/V block of a traced row: the kernel's state after the block
/// against the reference's, and whether they agree.
struct TraceBlock {
  int64_t block = 0;
  /// Keys [firstKey, endKey) of the block, and how many keys the row has
  /// seen up to endKey (causal: up to its diagonal; with a window, from its
  /// left edge).
  int64_t firstKey = 0, endKey = 0, visibleKeys = 0;
  /// The row's Q block visits this block (so the kernel writes it: with a
  /// window the visited blocks start at the one holding the left edge of
  /// the Q block's first row), and
  /// the kernel wrote it (its trace entry is not NaN).
  bool visited = false, written = false;
  /// The kernel's m (natural units), l, and the reference's.
  double m = 0, l = 0, refM = 0, refL = 0;
  /// The reference's running max grew in this block (from a finite value).
  bool maxRises = false;
  /// |m - refM| and its tolerance; |l - refL| / refL and its tolerance;
  /// max over d of |o_d - refO_d| / max(A_d, floor) and its tolerance.
  double mDiff = 0, mTol = 0, lRelDiff = 0, lTol = 0, oScaled = 0, oTol = 0;
  /// Which output element is the worst (o_d, refO_d).
  int64_t oWorst = 0;
  double o = 0, refO = 0;
  bool mOk = true, lOk = true, oOk = true;
  bool ok() const { return visited == written && mOk && lOk && oOk; }
};

struct TraceReport {
  TraceRow row;
  int64_t blockM = 0, blockN = 0;
  /// ceil(Lk / block_n) blocks.
  std::vector<TraceBlock> blocks;
  /// The first block that does not agree, or -1.
  int64_t firstMismatch = -1;
  bool pass() const { return firstMismatch < 0; }
  /// What parts at the first mismatch ("l, o", "not written", ...); empty
  /// when every block agrees.
  std::string mismatch;
};

/// Compares the trace a kernel wrote (`trace`: f32 [ceil(Lk / blockN), 2 +
/// D], unwritten entries NaN) for `row` of `problem` with the fp64
/// reference's running state over the blocks of `blockN` keys that the
/// row's Q block (of `blockM` rows) visits. Tolerances (docs/validation.md):
/// m within (D + 4) * 2^-23 * max_k (|scale| sum_d |q_d k_d| + softcap) +
/// 2^-22 |m| (the fp32 dot products' error bound, and the tanh's of a
/// softcap), l within 2 * that + (visible keys + 4) *
/// 2^-23 relative (exp2 and the fp32 sum), the running output within
/// `scaledThreshold` * max(A, floor) (the output criterion of Metrics.h; A =
/// sum_k p_k |v_kd| / l, floor = max|V| 2^-13). InvalidArgument for a row
/// outside the shape, a block size below 1 or a trace of the wrong size.
Expected<TraceReport> compareTrace(const AttentionProblem &problem,
                                   const AttentionData &data, int64_t blockM,
                                   int64_t blockN, const TraceRow &row,
                                   const std::vector<float> &trace,
                                   double scaledThreshold);

/// The report as a table, one line per block, and a last line naming the
/// first block that parts (or saying that every block matches).
std::string formatTrace(const TraceReport &report);

/// The report as a JSON object (no trailing newline).
std::string traceJson(const TraceReport &report);

} // namespace fa

#endif // FA_TRACE_H
