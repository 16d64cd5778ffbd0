//===- WindowTest.cpp - Sliding window and softcap in the validation ------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Issue 32 on the runtime side: FlashAttention 2's sliding window and logit
// softcap in the CPU references (dense, paged, varlen), the FLOP counts, the
// golden-case check, layer 2's trace comparison and the validation of the
// host fixture kernels that have them. The expected values are worked by
// hand or computed here by a brute-force rule written from the definition
// (key j visible to row i iff each bound holds), not from the runtime's
// range arithmetic.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "fa/KernelAbi.h"
#include "fa/Validate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace fa;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

AttentionData data(std::vector<float> q, std::vector<float> k,
                   std::vector<float> v) {
  return {std::move(q), std::move(k), std::move(v)};
}

AttentionProblem windowed(AttentionShape shape, int64_t d, bool causal,
                          double scale, int64_t left, int64_t right,
                          double softcap = 0) {
  AttentionProblem p{shape, d, causal, scale};
  p.windowLeft = left;
  p.windowRight = right;
  p.softcap = softcap;
  return p;
}

/// The rule of the issue, key by key.
bool visible(int64_t i, int64_t j, int64_t lq, int64_t lk, bool causal,
             int64_t left, int64_t right) {
  const int64_t shift = lk - lq;
  return (left < 0 || j >= i + shift - left) &&
         (right < 0 || j <= i + shift + right) && (!causal || j <= i + shift);
}

//===----------------------------------------------------------------------===//
// The references, by hand
//===----------------------------------------------------------------------===//

// D = 1, Lq = Lk = 4, q = k = 1 and scale 1: every score is 1, so a row's
// output is the mean of the V values it sees and its LSE is 1 + log(count).
// V = 1, 2, 4, 8.
struct ByHand {
  std::vector<double> o;
  std::vector<int> count; ///< 0: the row sees no key
};

void expectRows(const AttentionProblem &p, const AttentionData &in,
                const ByHand &want, const char *what) {
  AttentionResult<double> r = referenceAttentionF64(p, in);
  AttentionResult<float> f = referenceAttentionF32(p, in);
  AttentionResult<float> h = naiveAttention(p, DType::F16, in);
  ASSERT_EQ(r.o.size(), want.o.size()) << what;
  for (size_t i = 0; i < want.o.size(); ++i) {
    EXPECT_NEAR(r.o[i], want.o[i], 1e-12) << what << " row " << i;
    EXPECT_NEAR(f.o[i], want.o[i], 1e-5) << what << " row " << i;
    EXPECT_NEAR(h.o[i], want.o[i], 1e-2) << what << " row " << i;
    // V >= 0 here: the magnitude is the output itself.
    EXPECT_NEAR(r.magnitude[i], want.o[i], 1e-12) << what << " row " << i;
    if (want.count[i] == 0) {
      EXPECT_EQ(r.lse[i], -kInf) << what << " row " << i;
      EXPECT_EQ(f.lse[i], -float(kInf)) << what << " row " << i;
      EXPECT_EQ(h.lse[i], -float(kInf)) << what << " row " << i;
      continue;
    }
    const double lse = 1 + std::log(double(want.count[i]));
    EXPECT_NEAR(r.lse[i], lse, 1e-12) << what << " row " << i;
    EXPECT_NEAR(f.lse[i], lse, 1e-5) << what << " row " << i;
  }
}

TEST(WindowReferenceTest, LeftOnlyByHand) {
  // window_left 1: row i sees keys i - 1 .. 3.
  expectRows(windowed({1, 1, 1, 4, 4}, 1, false, 1.0, 1, -1),
             data({1, 1, 1, 1}, {1, 1, 1, 1}, {1, 2, 4, 8}),
             {{15 / 4.0, 15 / 4.0, 14 / 3.0, 6}, {4, 4, 3, 2}}, "left 1");
  // window_left 0: each row from its diagonal on.
  expectRows(windowed({1, 1, 1, 4, 4}, 1, false, 1.0, 0, -1),
             data({1, 1, 1, 1}, {1, 1, 1, 1}, {1, 2, 4, 8}),
             {{15 / 4.0, 14 / 3.0, 6, 8}, {4, 3, 2, 1}}, "left 0");
}

TEST(WindowReferenceTest, RightOnlyByHand) {
  // window_right 1: row i sees keys 0 .. i + 1.
  expectRows(windowed({1, 1, 1, 4, 4}, 1, false, 1.0, -1, 1),
             data({1, 1, 1, 1}, {1, 1, 1, 1}, {1, 2, 4, 8}),
             {{1.5, 7 / 3.0, 15 / 4.0, 15 / 4.0}, {2, 3, 4, 4}}, "right 1");
}

TEST(WindowReferenceTest, WindowAndCausalByHand) {
  // window [1, 2] and causal: causal's right bound 0 is the tighter, so row
  // i sees keys i - 1 .. i.
  expectRows(windowed({1, 1, 1, 4, 4}, 1, true, 1.0, 1, 2),
             data({1, 1, 1, 1}, {1, 1, 1, 1}, {1, 2, 4, 8}),
             {{1, 1.5, 3, 6}, {1, 2, 2, 2}}, "causal, window [1, 2]");
  // The window alone, two-sided: row i sees i - 1 .. i + 2.
  expectRows(windowed({1, 1, 1, 4, 4}, 1, false, 1.0, 1, 2),
             data({1, 1, 1, 1}, {1, 1, 1, 1}, {1, 2, 4, 8}),
             {{7 / 3.0, 15 / 4.0, 14 / 3.0, 6}, {3, 4, 3, 2}}, "window [1, 2]");
}

TEST(WindowReferenceTest, RowsThatSeeNoKeyByHand) {
  // Lq = 4, Lk = 2 (shift -2), causal, window_left 0: row i sees key i - 2
  // only, so rows 0 and 1 none.
  expectRows(windowed({1, 1, 1, 4, 2}, 1, true, 1.0, 0, -1),
             data({1, 1, 1, 1}, {1, 1}, {1, 2}), {{0, 0, 1, 2}, {0, 0, 1, 1}},
             "Lq > Lk, causal, left 0");
  // Not causal, window_right 0 (the same bound as causal's): rows 0 and 1
  // none, row 2 key 0, row 3 keys 0 and 1.
  expectRows(windowed({1, 1, 1, 4, 2}, 1, false, 1.0, -1, 0),
             data({1, 1, 1, 1}, {1, 1}, {1, 2}), {{0, 0, 1, 1.5}, {0, 0, 1, 2}},
             "Lq > Lk, right 0");
  // Lq = 2, Lk = 6 (shift 4), window [1, 0]: row 0 sees keys 3, 4 and row 1
  // keys 4, 5; V = 1, 2, 4, 8, 16, 32.
  expectRows(windowed({1, 1, 1, 2, 6}, 1, false, 1.0, 1, 0),
             data({1, 1}, {1, 1, 1, 1, 1, 1}, {1, 2, 4, 8, 16, 32}),
             {{12, 24}, {2, 2}}, "Lq < Lk, window [1, 0]");
}

// Two keys, raw scores 0 and 3: softcap 1 makes them 0 and tanh(3), softcap
// 2 makes them 0 and 2 tanh(1.5). The cap applies to the scaled score
// (scale 0.5, k = 6 gives the same raw score 3).
TEST(WindowReferenceTest, SoftcapByHand) {
  for (double softcap : {1.0, 2.0}) {
    const double capped = softcap * std::tanh(3 / softcap);
    const double p0 = 1 / (1 + std::exp(capped));
    const double o = 10 * p0 + 20 * (1 - p0);
    const double lse = std::log(1 + std::exp(capped));
    AttentionProblem p =
        windowed({1, 1, 1, 1, 2}, 1, false, 0.5, -1, -1, softcap);
    AttentionData in = data({1}, {0, 6}, {10, 20});
    AttentionResult<double> r = referenceAttentionF64(p, in);
    EXPECT_NEAR(r.o[0], o, 1e-12) << softcap;
    EXPECT_NEAR(r.lse[0], lse, 1e-12) << softcap;
    AttentionResult<float> f = referenceAttentionF32(p, in);
    EXPECT_NEAR(f.o[0], o, 1e-5) << softcap;
    EXPECT_NEAR(f.lse[0], lse, 1e-6) << softcap;
    AttentionResult<float> b = naiveAttention(p, DType::BF16, in);
    EXPECT_NEAR(b.o[0], o, 0.25) << softcap; // P and O rounded to bf16
    EXPECT_NEAR(b.lse[0], lse, 1e-6) << softcap;
  }
  // Softcap 1 and a window: the capped scores of the visible keys only.
  // Row 0 of Lq = 1, Lk = 3 with window_left 1 sees keys 1 and 2.
  AttentionProblem p = windowed({1, 1, 1, 1, 3}, 1, false, 1.0, 1, -1, 1.0);
  AttentionResult<double> r =
      referenceAttentionF64(p, data({1}, {50, 0, 3}, {99, 10, 20}));
  const double p0 = 1 / (1 + std::exp(std::tanh(3.0)));
  EXPECT_NEAR(r.o[0], 10 * p0 + 20 * (1 - p0), 1e-12);
  EXPECT_NEAR(r.lse[0], std::log(1 + std::exp(std::tanh(3.0))), 1e-12);
}

// Random problems against the rule applied key by key: every window shape
// on both sides of the diagonal, with and without causal and softcap, Lq
// below, equal to and above Lk.
TEST(WindowReferenceTest, AgreesWithTheRuleKeyByKey) {
  int cases = 0, emptyRows = 0, partialRows = 0;
  const std::pair<int64_t, int64_t> lengths[] = {{5, 5}, {3, 9}, {9, 3},
                                                 {1, 7}, {7, 1}, {12, 12}};
  for (auto [lq, lk] : lengths)
    for (int64_t left : {-1, 0, 1, 3, 20})
      for (int64_t right : {-1, 0, 2, 20})
        for (bool causal : {false, true})
          for (double softcap : {0.0, 1.5}) {
            const int64_t D = 4;
            AttentionProblem p = windowed({1, 2, 1, lq, lk}, D, causal, 0.6,
                                          left, right, softcap);
            AttentionData in =
                generateInputs(p, DType::F32, Distribution::Normal, cases++);
            AttentionResult<double> r = referenceAttentionF64(p, in);
            AttentionResult<float> f = referenceAttentionF32(p, in);
            const std::string what =
                "Lq " + std::to_string(lq) + " Lk " + std::to_string(lk) +
                " window [" + std::to_string(left) + ", " +
                std::to_string(right) + "] causal " + std::to_string(causal) +
                " softcap " + std::to_string(softcap);
            for (int64_t h = 0; h < 2; ++h)
              for (int64_t i = 0; i < lq; ++i) {
                const float *q = &in.q[size_t((h * lq + i) * D)];
                std::vector<double> s(size_t(lk), -kInf);
                double m = -kInf;
                int seen = 0;
                for (int64_t j = 0; j < lk; ++j) {
                  if (!visible(i, j, lq, lk, causal, left, right))
                    continue;
                  double dot = 0;
                  for (int64_t c = 0; c < D; ++c)
                    dot += double(q[c]) * double(in.k[size_t(j * D + c)]);
                  double x = 0.6 * dot;
                  if (softcap > 0)
                    x = softcap * std::tanh(x / softcap);
                  s[size_t(j)] = x;
                  m = std::max(m, x);
                  ++seen;
                }
                const size_t row = size_t(h * lq + i);
                if (seen == 0) {
                  ++emptyRows;
                  EXPECT_EQ(r.lse[row], -kInf) << what << " row " << i;
                  EXPECT_EQ(f.lse[row], -float(kInf)) << what << " row " << i;
                  for (int64_t c = 0; c < D; ++c)
                    EXPECT_EQ(r.o[row * D + size_t(c)], 0) << what;
                  continue;
                }
                partialRows += seen < lk;
                double l = 0;
                std::vector<double> o(size_t(D), 0), a(size_t(D), 0);
                for (int64_t j = 0; j < lk; ++j) {
                  if (s[size_t(j)] == -kInf)
                    continue;
                  double e = std::exp(s[size_t(j)] - m);
                  l += e;
                  for (int64_t c = 0; c < D; ++c) {
                    double v = in.v[size_t(j * D + c)];
                    o[size_t(c)] += e * v;
                    a[size_t(c)] += e * std::fabs(v);
                  }
                }
                EXPECT_NEAR(r.lse[row], m + std::log(l), 1e-12)
                    << what << " row " << i;
                EXPECT_NEAR(f.lse[row], m + std::log(l), 1e-5)
                    << what << " row " << i;
                for (int64_t c = 0; c < D; ++c) {
                  const size_t x = row * D + size_t(c);
                  EXPECT_NEAR(r.o[x], o[size_t(c)] / l, 1e-12)
                      << what << " row " << i;
                  EXPECT_NEAR(r.magnitude[x], a[size_t(c)] / l, 1e-12)
                      << what << " row " << i;
                  EXPECT_NEAR(f.o[x], o[size_t(c)] / l,
                              1e-5 * (1 + a[size_t(c)] / l))
                      << what << " row " << i;
                }
              }
          }
  EXPECT_GT(emptyRows, 0);
  EXPECT_GT(partialRows, 0);
}

TEST(WindowReferenceTest, ChecksTheWindowAndSoftcap) {
  auto message = [](const AttentionProblem &p) {
    Status s = checkShape(p);
    return s.ok() ? std::string("ok") : s.message();
  };
  EXPECT_EQ(message(windowed({1, 1, 1, 4, 4}, 8, false, 1, -1, -1)), "ok");
  EXPECT_EQ(message(windowed({1, 1, 1, 4, 4}, 8, false, 1, 0, 0, 30)), "ok");
  EXPECT_EQ(message(windowed({1, 1, 1, 4, 4}, 8, false, 1, -2, -1)),
            "invalid attention problem: window_left = -2 (at least -1; -1: "
            "unbounded)");
  EXPECT_EQ(message(windowed({1, 1, 1, 4, 4}, 8, false, 1, 3, -7)),
            "invalid attention problem: window_right = -7 (at least -1; -1: "
            "unbounded)");
  EXPECT_EQ(message(windowed({1, 1, 1, 4, 4}, 8, false, 1, -1, -1, -0.5)),
            "invalid attention problem: softcap = -0.5 (a finite number of at "
            "least 0; 0: none)");
  EXPECT_EQ(message(windowed({1, 1, 1, 4, 4}, 8, false, 1, -1, -1, kInf)),
            "invalid attention problem: softcap = inf (a finite number of at "
            "least 0; 0: none)");
  // The references give nothing for a problem the check refuses.
  AttentionProblem bad = windowed({1, 1, 1, 1, 1}, 1, false, 1, -3, -1);
  EXPECT_TRUE(referenceAttentionF64(bad, data({1}, {1}, {1})).o.empty());

  VarlenProblem v = VarlenProblem::fromLengths(2, 1, 8, {3}, {4}, false, 0.5);
  v.windowRight = -2;
  EXPECT_EQ(checkVarlenProblem(v).message(),
            "invalid varlen problem: window_right = -2 (at least -1; -1: "
            "unbounded)");
  v.windowRight = -1;
  v.softcap = std::nan("");
  EXPECT_EQ(checkVarlenProblem(v).message(),
            "invalid varlen problem: softcap = nan (a finite number of at "
            "least 0; 0: none)");
  PagedGeneratorOptions o;
  o.windowLeft = -4;
  Expected<PagedProblem> paged = generatePagedProblem(o, 1);
  ASSERT_FALSE(paged.ok());
  EXPECT_EQ(paged.status().message(),
            "invalid paged problem: window_left = -4 (at least -1; -1: "
            "unbounded)");
}

//===----------------------------------------------------------------------===//
// Paged and varlen under a window
//===----------------------------------------------------------------------===//

/// Bit-identical results (the paged and varlen references share the dense
/// one's row routine).
template <typename T>
void expectSameBits(const std::vector<T> &a, const std::vector<T> &b,
                    const std::string &what) {
  ASSERT_EQ(a.size(), b.size()) << what;
  for (size_t i = 0; i < a.size(); ++i)
    ASSERT_EQ(std::memcmp(&a[i], &b[i], sizeof(T)), 0)
        << what << " " << i << ": " << a[i] << " vs " << b[i];
}

// One dense windowed, capped problem as a paged cache (its K/V in shuffled
// pages) and as a varlen batch of one: the same results bit for bit, from
// the validation's own construction of the problems (pagedProblemFor,
// varlenProblemFor carry the window and the softcap).
TEST(WindowPagedVarlenTest, OneSequenceThreeWays) {
  for (bool causal : {false, true}) {
    AttentionProblem dense = windowed({1, 4, 2, 37, 150}, 16, causal, 0.3, 20,
                                      causal ? -1 : 9, causal ? 0.0 : 2.5);
    AttentionData dd =
        generateInputs(dense, DType::F32, Distribution::Outliers, 5);
    AttentionResult<double> want = referenceAttentionF64(dense, dd);
    AttentionResult<float> wantNaive = naiveAttention(dense, DType::F16, dd);
    const std::string what = causal ? "causal" : "two-sided";

    PagedCacheOptions po;
    po.pageSize = 16;
    po.cacheSeqlens = {150};
    po.unusedPages = 2;
    Expected<PagedProblem> p = pagedProblemFor(dense, po, 3);
    FA_ASSERT_OK(p);
    EXPECT_EQ(p->windowLeft, dense.windowLeft);
    EXPECT_EQ(p->windowRight, dense.windowRight);
    EXPECT_EQ(p->softcap, dense.softcap);
    // K and V into the pages the table names: cache row (page, slot) holds
    // dense key j = table position * 16 + slot.
    AttentionData pd =
        generatePagedInputs(*p, DType::F32, Distribution::Normal, 1);
    pd.q = dd.q;
    const int64_t Hkv = 2, D = 16;
    for (int64_t j = 0; j < 150; ++j) {
      const int64_t page = p->blockTable[size_t(j / 16)];
      for (int64_t hk = 0; hk < Hkv; ++hk)
        for (int64_t c = 0; c < D; ++c) {
          const size_t to = size_t(((page * 16 + j % 16) * Hkv + hk) * D + c);
          const size_t from = size_t((hk * 150 + j) * D + c);
          pd.k[to] = dd.k[from];
          pd.v[to] = dd.v[from];
        }
    }
    AttentionResult<double> paged = referencePagedAttentionF64(*p, pd);
    expectSameBits(paged.o, want.o, what + " paged O");
    expectSameBits(paged.lse, want.lse, what + " paged LSE");
    expectSameBits(paged.magnitude, want.magnitude, what + " paged A");
    expectSameBits(naivePagedAttention(*p, DType::F16, pd).o, wantNaive.o,
                   what + " paged naive O");

    VarlenOptions vo;
    vo.seqlensQ = {37};
    vo.seqlensK = {150};
    Expected<VarlenProblem> v = varlenProblemFor(dense, vo, 3);
    FA_ASSERT_OK(v);
    EXPECT_EQ(v->windowLeft, dense.windowLeft);
    EXPECT_EQ(v->windowRight, dense.windowRight);
    EXPECT_EQ(v->softcap, dense.softcap);
    // Packed [total, H, D] from dense [1, H, L, D].
    AttentionData vd;
    vd.q.resize(dd.q.size());
    vd.k.resize(dd.k.size());
    vd.v.resize(dd.v.size());
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t i = 0; i < 37; ++i)
        std::copy_n(&dd.q[size_t((h * 37 + i) * D)], D,
                    &vd.q[size_t((i * 4 + h) * D)]);
    for (int64_t hk = 0; hk < Hkv; ++hk)
      for (int64_t j = 0; j < 150; ++j) {
        std::copy_n(&dd.k[size_t((hk * 150 + j) * D)], D,
                    &vd.k[size_t((j * Hkv + hk) * D)]);
        std::copy_n(&dd.v[size_t((hk * 150 + j) * D)], D,
                    &vd.v[size_t((j * Hkv + hk) * D)]);
      }
    AttentionResult<double> varlen = referenceVarlenAttentionF64(*v, vd);
    AttentionResult<double> unpacked;
    unpacked.o.resize(want.o.size());
    unpacked.lse.resize(want.lse.size());
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t i = 0; i < 37; ++i) {
        std::copy_n(&varlen.o[size_t((i * 4 + h) * D)], D,
                    &unpacked.o[size_t((h * 37 + i) * D)]);
        unpacked.lse[size_t(h * 37 + i)] = varlen.lse[size_t(h * 37 + i)];
      }
    expectSameBits(unpacked.o, want.o, what + " varlen O");
    expectSameBits(unpacked.lse, want.lse, what + " varlen LSE");
  }
}

// Random paged and varlen batches under a window: each sequence equals the
// dense reference of the gathered sequence, whose window is the problem's
// (gatherPagedSequences / gatherVarlenSequences carry it).
TEST(WindowPagedVarlenTest, SequencesEqualTheirDenseReferences) {
  int rowsWithoutKeys = 0;
  for (int c = 0; c < 4; ++c) {
    const bool causal = c % 2;
    PagedGeneratorOptions o;
    o.batch = 3;
    o.headsQ = 4;
    o.headsKv = 2;
    o.headDim = 8;
    o.seqQ = 20;
    o.pageSize = 16;
    o.maxSeqlenK = 90;
    o.causal = causal;
    o.windowLeft = c < 2 ? 6 : -1;
    o.windowRight = causal ? -1 : 2;
    o.softcap = c == 3 ? 1.5 : 0;
    Expected<PagedProblem> p = generatePagedProblem(o, uint64_t(40 + c));
    FA_ASSERT_OK(p);
    AttentionData d =
        generatePagedInputs(*p, DType::F16, Distribution::Outliers, 7);
    FA_ASSERT_OK(poisonUnreadCacheRows(*p, d));
    AttentionResult<double> r = referencePagedAttentionF64(*p, d);
    Expected<std::vector<DenseSequence>> seqs = gatherPagedSequences(*p, d);
    FA_ASSERT_OK(seqs);
    for (int64_t b = 0; b < p->batch; ++b) {
      const DenseSequence &s = (*seqs)[size_t(b)];
      EXPECT_EQ(s.problem.windowLeft, o.windowLeft);
      EXPECT_EQ(s.problem.windowRight, o.windowRight);
      EXPECT_EQ(s.problem.softcap, o.softcap);
      if (s.data.q.empty())
        continue;
      AttentionResult<double> dr = referenceAttentionF64(s.problem, s.data);
      const size_t rows = size_t(4 * 20);
      std::vector<double> o1(r.o.begin() + b * rows * 8,
                             r.o.begin() + (b + 1) * rows * 8),
          l1(r.lse.begin() + b * rows, r.lse.begin() + (b + 1) * rows);
      expectSameBits(o1, dr.o, "paged case " + std::to_string(c));
      expectSameBits(l1, dr.lse, "paged case " + std::to_string(c));
      rowsWithoutKeys += int(std::count(l1.begin(), l1.end(), -kInf));
    }

    VarlenGeneratorOptions vo;
    vo.batch = 5;
    vo.headsQ = 4;
    vo.headsKv = 2;
    vo.headDim = 8;
    vo.causal = causal;
    vo.windowLeft = o.windowLeft;
    vo.windowRight = o.windowRight;
    vo.softcap = o.softcap;
    Expected<VarlenProblem> v = generateVarlenProblem(vo, uint64_t(50 + c));
    FA_ASSERT_OK(v);
    AttentionData vd =
        generateVarlenInputs(*v, DType::F16, Distribution::Outliers, 9);
    AttentionResult<double> vr = referenceVarlenAttentionF64(*v, vd);
    Expected<std::vector<DenseSequence>> vs = gatherVarlenSequences(*v, vd);
    FA_ASSERT_OK(vs);
    for (int64_t b = 0; b < v->batch; ++b) {
      const DenseSequence &s = (*vs)[size_t(b)];
      EXPECT_EQ(s.problem.windowLeft, vo.windowLeft);
      if (s.data.q.empty())
        continue;
      AttentionResult<double> dr = referenceAttentionF64(s.problem, s.data);
      const int64_t q0 = v->cuSeqlensQ[size_t(b)], lq = s.problem.shape.seqQ;
      for (int64_t h = 0; h < 4; ++h)
        for (int64_t i = 0; i < lq; ++i) {
          const double got = vr.lse[size_t(h * v->totalQ + q0 + i)],
                       want = dr.lse[size_t(h * lq + i)];
          ASSERT_EQ(std::memcmp(&got, &want, 8), 0)
              << "varlen case " << c << " sequence " << b << " row " << i;
          rowsWithoutKeys += want == -kInf;
          for (int64_t x = 0; x < 8; ++x)
            ASSERT_EQ(vr.o[size_t(((q0 + i) * 4 + h) * 8 + x)],
                      dr.o[size_t((h * lq + i) * 8 + x)])
                << "varlen case " << c << " sequence " << b;
        }
    }
  }
  EXPECT_GT(rowsWithoutKeys, 0);
}

//===----------------------------------------------------------------------===//
// FLOPs
//===----------------------------------------------------------------------===//

TEST(WindowFlopsTest, CountsTheVisiblePairs) {
  // The rows of the hand-worked cases: window_left 1 sees 4 + 4 + 3 + 2
  // keys; causal with window [1, 2] 1 + 2 + 2 + 2.
  AttentionProblem p = windowed({2, 3, 1, 4, 4}, 64, false, 0.1, 1, -1);
  EXPECT_EQ(attentionFlops(p), 4.0 * 2 * 3 * 64 * 13);
  p = windowed({2, 3, 1, 4, 4}, 64, true, 0.1, 1, 2);
  EXPECT_EQ(attentionFlops(p), 4.0 * 2 * 3 * 64 * 7);
  // window_right 1 alone: 2 + 3 + 4 + 4.
  p = windowed({2, 3, 1, 4, 4}, 64, false, 0.1, -1, 1);
  EXPECT_EQ(attentionFlops(p), 4.0 * 2 * 3 * 64 * 13);
  // A window wider than the sequence changes nothing (but the count is
  // exact, not halved, with causal).
  p = windowed({1, 1, 1, 4, 4}, 8, true, 0.1, 100, -1);
  EXPECT_EQ(attentionFlops(p), 4.0 * 8 * (1 + 2 + 3 + 4));
  p = windowed({1, 1, 1, 4, 4}, 8, false, 0.1, 100, 100);
  EXPECT_EQ(attentionFlops(p), 4.0 * 8 * 16);

  // Paged, Lq = 4, causal, window_left 1: a sequence of 4 keys sees 1 + 2 +
  // 2 + 2, one of 2 keys (shift -2) 0 + 0 + 1 + 2, one of 0 none.
  PagedProblem paged;
  paged.headsQ = 3;
  paged.headDim = 64;
  paged.seqQ = 4;
  paged.causal = true;
  paged.windowLeft = 1;
  paged.cacheSeqlens = {4, 2, 0};
  EXPECT_EQ(pagedAttentionFlops(paged), 4.0 * 3 * 64 * (7 + 3));

  // Varlen, window [1, 0] (not causal): (Lq 4, Lk 4) sees 1 + 2 + 2 + 2;
  // (Lq 2, Lk 6, shift 4) sees keys 3..4 and 4..5; (Lq 3, Lk 0) none.
  VarlenProblem v =
      VarlenProblem::fromLengths(3, 1, 64, {4, 2, 3}, {4, 6, 0}, false, 0.1);
  v.windowLeft = 1;
  v.windowRight = 0;
  EXPECT_EQ(varlenAttentionFlops(v), 4.0 * 3 * 64 * (7 + 4));
}

//===----------------------------------------------------------------------===//
// Golden cases and the kernel's problem
//===----------------------------------------------------------------------===//

TEST(WindowGoldenTest, AWindowedKernelMatchesNoGoldenCase) {
  Expected<GoldenCase> g = loadGoldenCase(test::goldenPath("f32_d64_gqa_l100"));
  FA_ASSERT_OK(g);
  KernelInfo k = test::fixtureManifest("attn_f32").kernels[0];
  FA_ASSERT_OK(checkGoldenMatchesKernel(*g, k));
  k.windowLeft = 7;
  Status s = checkGoldenMatchesKernel(*g, k);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message(),
            "golden case 'f32_d64_gqa_l100' (dtype f32, D=64, causal=false, "
            "scale=0.125, window=[-1, -1], softcap=0) does not match kernel "
            "'attn_f32' (dtype f32, D=64, causal=false, scale=0.125, "
            "window=[7, -1], softcap=0): golden cases have no sliding window "
            "and no softcap (validate with --shape)");
  k.windowLeft = -1;
  k.softcap = 30;
  s = checkGoldenMatchesKernel(*g, k);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(s.message().find("window=[-1, -1], softcap=30): golden cases"),
            std::string::npos)
      << s.message();
}

TEST(WindowGoldenTest, KernelProblemCarriesTheWindow) {
  KernelInfo k;
  k.headDim = 96;
  k.causal = true;
  k.scale = 0.25;
  k.windowLeft = 3;
  k.windowRight = 5;
  k.softcap = 7.5;
  AttentionProblem p = kernelProblem(k, {2, 4, 1, 9, 11});
  EXPECT_EQ(p.shape.seqK, 11);
  EXPECT_EQ(p.headDim, 96);
  EXPECT_TRUE(p.causal);
  EXPECT_EQ(p.scale, 0.25);
  EXPECT_EQ(p.windowLeft, 3);
  EXPECT_EQ(p.windowRight, 5);
  EXPECT_EQ(p.softcap, 7.5);
}

//===----------------------------------------------------------------------===//
// Validation of the host fixture kernels with a window or softcap
//===----------------------------------------------------------------------===//

ValidationReport validate(const std::string &fixture, AttentionShape shape,
                          Distribution dist = Distribution::Normal) {
  Expected<Module> m =
      Module::load(test::hostDevice(), test::fixturePath(fixture));
  EXPECT_TRUE(m.ok()) << m.status().toString();
  if (!m)
    return {};
  ValidationOptions o;
  o.shape = shape;
  o.dist = dist;
  o.layout = AttentionLayout::distinct();
  Expected<ValidationReport> r = validateKernel(m->kernel().take(), o);
  EXPECT_TRUE(r.ok()) << r.status().toString();
  return r ? r.take() : ValidationReport();
}

TEST(WindowValidateTest, FixtureKernelsPassAndPlantedBugsFail) {
  ValidationReport r = validate("attn_f32_window", {2, 4, 2, 40, 50});
  EXPECT_TRUE(r.verdict.pass);
  EXPECT_EQ(r.problem.windowLeft, 7);
  EXPECT_EQ(r.problem.windowRight, 3);
  r = validate("attn_f16_causal_window", {1, 2, 1, 60, 33},
               Distribution::Outliers);
  EXPECT_TRUE(r.verdict.pass);
  EXPECT_EQ(r.problem.windowLeft, 20);
  EXPECT_TRUE(r.problem.causal);
  r = validate("attn_f32_softcap", {1, 4, 2, 33, 70});
  EXPECT_TRUE(r.verdict.pass);
  EXPECT_EQ(r.problem.softcap, 1.5);
  // The window's left edge one key early; the softcap left out.
  EXPECT_FALSE(
      validate("attn_bug_window_left", {1, 2, 1, 40, 50}).verdict.pass);
  EXPECT_FALSE(validate("attn_bug_no_softcap", {1, 2, 1, 40, 50}).verdict.pass);
}

//===----------------------------------------------------------------------===//
// Layer 2: the blocks a windowed Q block visits
//===----------------------------------------------------------------------===//

/// The trace a correct kernel writes for `row`: its online-softmax state
/// (m in log2 units, l, the unnormalised output) after each K/V block of
/// [firstBlock, endBlock), in float, over the keys the row sees; NaN in the
/// other blocks.
std::vector<float> kernelTrace(const AttentionProblem &p,
                               const AttentionData &in, int64_t blockN,
                               int64_t row, int64_t firstBlock,
                               int64_t endBlock) {
  const int64_t lq = p.shape.seqQ, lk = p.shape.seqK, D = p.headDim;
  const int64_t blocks = (lk + blockN - 1) / blockN;
  const int64_t stride = FA_ABI_TRACE_STATS + D;
  std::vector<float> trace(size_t(blocks * stride),
                           std::numeric_limits<float>::quiet_NaN());
  float m = -float(kInf), l = 0;
  std::vector<float> acc(size_t(D), 0);
  for (int64_t b = firstBlock; b < endBlock; ++b) {
    for (int64_t j = b * blockN; j < std::min(lk, (b + 1) * blockN); ++j) {
      if (!visible(row, j, lq, lk, p.causal, p.windowLeft, p.windowRight))
        continue;
      float dot = 0;
      for (int64_t c = 0; c < D; ++c)
        dot += in.q[size_t(row * D + c)] * in.k[size_t(j * D + c)];
      float s = dot * float(p.scale);
      if (p.softcap > 0)
        s = float(p.softcap) * std::tanh(s / float(p.softcap));
      const float mNew = std::max(m, s);
      const float alpha = m == -float(kInf) ? 0.f : std::exp(m - mNew);
      const float e = std::exp(s - mNew);
      l = alpha * l + e;
      for (int64_t c = 0; c < D; ++c)
        acc[size_t(c)] = alpha * acc[size_t(c)] + e * in.v[size_t(j * D + c)];
      m = mNew;
    }
    float *e = &trace[size_t(b * stride)];
    e[0] = m / float(std::log(2.0));
    e[1] = l;
    for (int64_t c = 0; c < D; ++c)
      e[FA_ABI_TRACE_STATS + c] = acc[size_t(c)];
  }
  return trace;
}

struct TraceCase {
  bool causal;
  int64_t left, right;
  double softcap;
  int64_t lq, lk, row;
};

TEST(WindowTraceTest, VisitsTheBlocksOfTheWindow) {
  const int64_t blockM = 16, blockN = 8, D = 8;
  const TraceCase cases[] = {
      // m0 = 16, shift 10: first = 16 + 10 - 7 = 19 (block 2), end =
      // 31 + 10 + 3 + 1 = 45 (blocks up to 5); row 20 sees keys 23..33.
      {false, 7, 3, 0, 40, 50, 20},
      // The same with a softcap.
      {false, 7, 3, 1.5, 40, 50, 20},
      // Causal and window_left 12, Lq > Lk (shift -9): m0 = 32, first =
      // 32 - 9 - 12 = 11 (block 1), end = 47 - 9 + 1 = 39 (blocks up to 4).
      {true, 12, -1, 0, 45, 36, 40},
      // Causal, window [12, 5]: the right bound is causal's.
      {true, 12, 5, 0, 45, 36, 40},
      // window_right only: first 0, end = 15 + 10 + 2 + 1 = 28 (blocks up
      // to 3).
      {false, -1, 2, 0, 40, 50, 3},
      // A Q block none of whose rows sees a key (Lq > Lk, causal): no block.
      {true, 4, -1, 0, 60, 20, 5},
      // The last Q block, past Lq: its last row is m0 + block_m - 1 all the
      // same (as the kernel's loop bound): m0 = 32, end = 47 + 10 + 3 + 1
      // clamped to 50 (blocks up to 6), first = 32 + 10 - 7 = 35 (block 4).
      {false, 7, 3, 0, 40, 50, 39},
  };
  for (const TraceCase &c : cases) {
    AttentionProblem p = windowed({1, 1, 1, c.lq, c.lk}, D, c.causal, 0.35,
                                  c.left, c.right, c.softcap);
    AttentionData in = generateInputs(p, DType::F32, Distribution::Normal, 11);
    // The rule for the Q block's blocks, written out.
    const int64_t shift = c.lk - c.lq, m0 = c.row / blockM * blockM;
    const int64_t lastRow = m0 + blockM - 1;
    const int64_t first =
        c.left >= 0 ? std::max<int64_t>(0, m0 + shift - c.left) : 0;
    int64_t right = c.right;
    if (c.causal && (right < 0 || right > 0))
      right = 0;
    const int64_t end =
        right >= 0 ? std::min(c.lk, lastRow + shift + right + 1) : c.lk;
    const int64_t firstBlock = end > first ? first / blockN : 0,
                  endBlock = end > first ? (end + blockN - 1) / blockN : 0;
    const std::string what =
        "window [" + std::to_string(c.left) + ", " + std::to_string(c.right) +
        "] causal " + std::to_string(c.causal) + " softcap " +
        std::to_string(c.softcap) + " row " + std::to_string(c.row);
    std::vector<float> trace =
        kernelTrace(p, in, blockN, c.row, firstBlock, endBlock);
    Expected<TraceReport> r =
        compareTrace(p, in, blockM, blockN, {0, 0, c.row}, trace, 1e-3);
    FA_ASSERT_OK(r);
    EXPECT_TRUE(r->pass()) << what << "\n" << formatTrace(*r);
    ASSERT_EQ(r->blocks.size(), size_t((c.lk + blockN - 1) / blockN));
    int64_t seen = 0;
    for (const TraceBlock &t : r->blocks) {
      EXPECT_EQ(t.visited, t.block >= firstBlock && t.block < endBlock)
          << what << " block " << t.block;
      for (int64_t j = t.firstKey; j < t.endKey; ++j)
        seen += visible(c.row, j, c.lq, c.lk, c.causal, c.left, c.right);
      EXPECT_EQ(t.visibleKeys, seen) << what << " block " << t.block;
    }
    // The final state is the reference's row: its LSE.
    AttentionResult<double> ref = referenceAttentionF64(p, in);
    if (!r->blocks.empty() && endBlock > 0) {
      const TraceBlock &t = r->blocks[size_t(r->blocks.size() - 1)];
      EXPECT_NEAR(t.refM + std::log(t.refL), ref.lse[size_t(c.row)], 1e-12)
          << what;
    }
    // A kernel that starts at block 0 (ignoring the window's left edge)
    // writes blocks the Q block does not visit.
    if (firstBlock > 0) {
      std::vector<float> early = kernelTrace(p, in, blockN, c.row, 0, endBlock);
      Expected<TraceReport> bad =
          compareTrace(p, in, blockM, blockN, {0, 0, c.row}, early, 1e-3);
      FA_ASSERT_OK(bad);
      EXPECT_FALSE(bad->pass()) << what;
      EXPECT_EQ(bad->firstMismatch, 0) << what;
      EXPECT_EQ(bad->mismatch, "written: the kernel visits a block past the "
                               "row's Q block's range")
          << what;
    }
  }
}

} // namespace
