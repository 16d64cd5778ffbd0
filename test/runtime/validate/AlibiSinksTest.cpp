//===- AlibiSinksTest.cpp - ALiBi and attention sinks in the runtime ------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Issue 32 on the runtime side: FlashAttention 2's ALiBi and gpt-oss's
// attention sinks in the CPU references (dense, paged, varlen), the seeded
// slopes and sinks, the head-parameter words of the kernel ABI (packing,
// word counts, the kernarg layout), the argument errors, the host code
// object's word count, and the validation of the host fixture kernels that
// have them (and of their planted bugs). The expected values are worked by
// hand or computed here from the definition, key by key, never from the
// references' own output.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "fa/KernelAbi.h"
#include "fa/Validate.h"
#include "fa/fa_runtime.h"
#include "gpu/Vendor.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace fa;

namespace alibi_sinks_test {
namespace {

constexpr double kNegInf = -std::numeric_limits<double>::infinity();

AttentionData headData(std::vector<float> q, std::vector<float> k,
                       std::vector<float> v) {
  return {std::move(q), std::move(k), std::move(v)};
}

AttentionProblem headProblem(AttentionShape shape, int64_t d, bool causal,
                             std::vector<float> slopes,
                             std::vector<float> sinks) {
  AttentionProblem p{shape, d, causal, 1.0};
  p.alibiSlopes = std::move(slopes);
  p.sinks = std::move(sinks);
  return p;
}

//===----------------------------------------------------------------------===//
// The references, by hand
//===----------------------------------------------------------------------===//

// D = 1 and q = 0: every raw score is 0, so a score is the ALiBi bias alone,
// -slope * distance, and the weights are exp(-slope * distance).
// Lq = 2, Lk = 4 (queries at the end): row 0 is aligned with key 2, row 1
// with key 3, so the distances |i + Lk - Lq - j| are row 0: 2 1 0 1 and
// row 1: 3 2 1 0. Measured from the start (|i - j|) they would be 0 1 2 3
// and 1 0 1 2.
TEST(AlibiSinksReferenceTest, AlibiDistanceFromTheEndByHand) {
  const double slope = 0.5;
  const double v[4] = {1, 2, 4, 8};
  const int distances[2][4] = {{2, 1, 0, 1}, {3, 2, 1, 0}};
  for (bool causal : {false, true}) {
    AttentionProblem p =
        headProblem({1, 1, 1, 2, 4}, 1, causal, {float(slope)}, {});
    AttentionData in = headData({0, 0}, {1, 1, 1, 1}, {1, 2, 4, 8});
    AttentionResult<double> r = referenceAttentionF64(p, in);
    AttentionResult<float> f = referenceAttentionF32(p, in);
    AttentionResult<float> h = naiveAttention(p, DType::F16, in);
    ASSERT_EQ(r.o.size(), 2u);
    for (int i = 0; i < 2; ++i) {
      // Causal: row 0 sees keys 0..2, row 1 all four.
      const int keys = causal ? 3 + i : 4;
      double z = 0, o = 0;
      for (int j = 0; j < keys; ++j) {
        const double w = std::exp(-slope * distances[i][j]);
        z += w;
        o += w * v[j];
      }
      EXPECT_NEAR(r.o[i], o / z, 1e-12) << "causal " << causal << " row " << i;
      EXPECT_NEAR(r.lse[i], std::log(z), 1e-12) << "row " << i;
      EXPECT_NEAR(r.magnitude[i], o / z, 1e-12) << "row " << i; // V >= 0
      EXPECT_NEAR(f.o[i], o / z, 1e-5) << "row " << i;
      EXPECT_NEAR(f.lse[i], std::log(z), 1e-6) << "row " << i;
      EXPECT_NEAR(h.o[i], o / z, 2e-2) << "row " << i;
    }
  }
}

// Per query head its own slope; with GQA two query heads share a KV head
// but not a slope. Lq = Lk = 2, D = 1, q = 0: row 0 sees distances 0, 1
// (not causal), row 1 distances 1, 0.
TEST(AlibiSinksReferenceTest, AlibiSlopePerGqaHeadByHand) {
  const float slopes[4] = {0.25f, 1.0f, 2.0f, 0.0f};
  AttentionProblem p =
      headProblem({1, 4, 2, 2, 2}, 1, false,
                  {slopes[0], slopes[1], slopes[2], slopes[3]}, {});
  // KV head 0: V = 1, 3; KV head 1: V = 10, 30.
  AttentionData in =
      headData(std::vector<float>(8, 0.f), {1, 1, 1, 1}, {1, 3, 10, 30});
  AttentionResult<double> r = referenceAttentionF64(p, in);
  ASSERT_EQ(r.o.size(), 8u);
  for (int h = 0; h < 4; ++h) {
    const double v0 = h < 2 ? 1 : 10, v1 = h < 2 ? 3 : 30;
    const double w = std::exp(-double(slopes[h])); // the key at distance 1
    EXPECT_NEAR(r.o[size_t(2 * h)], (v0 + w * v1) / (1 + w), 1e-12) << h;
    EXPECT_NEAR(r.o[size_t(2 * h + 1)], (w * v0 + v1) / (1 + w), 1e-12) << h;
    EXPECT_NEAR(r.lse[size_t(2 * h)], std::log(1 + w), 1e-12) << h;
  }
}

// A sink joins the denominator once and the output never: with scores 0,
// a row that sees n keys has Z = n + e^sink, O = sum v / Z, LSE = log Z.
// Causal with Lq = 4 > Lk = 2: rows 0 and 1 see no key (O = 0, LSE = the
// sink, not -inf), row 2 key 0, row 3 keys 0 and 1.
TEST(AlibiSinksReferenceTest, SinkWithFullyMaskedRowsByHand) {
  const double sink = 1.5;
  AttentionProblem p = headProblem({1, 1, 1, 4, 2}, 1, true, {}, {1.5f});
  AttentionData in = headData({0, 0, 0, 0}, {1, 1}, {3, 5});
  AttentionResult<double> r = referenceAttentionF64(p, in);
  AttentionResult<float> f = referenceAttentionF32(p, in);
  AttentionResult<float> b = naiveAttention(p, DType::BF16, in);
  const double z2 = 1 + std::exp(sink), z3 = 2 + std::exp(sink);
  const double o[4] = {0, 0, 3 / z2, 8 / z3};
  const double lse[4] = {sink, sink, std::log(z2), std::log(z3)};
  for (int i = 0; i < 4; ++i) {
    EXPECT_NEAR(r.o[i], o[i], 1e-12) << "row " << i;
    EXPECT_NEAR(r.lse[i], lse[i], 1e-12) << "row " << i;
    EXPECT_NEAR(f.o[i], o[i], 1e-6) << "row " << i;
    EXPECT_NEAR(f.lse[i], lse[i], 1e-6) << "row " << i;
    EXPECT_NEAR(b.o[i], o[i], 2e-2) << "row " << i;
    EXPECT_NEAR(b.lse[i], lse[i], 1e-6) << "row " << i;
  }
  EXPECT_EQ(r.o[0], 0);
  EXPECT_EQ(r.lse[0], sink); // exactly the sink
  EXPECT_EQ(f.lse[1], float(sink));
  // Without the sink the masked rows' LSE is -inf, as before.
  p.sinks.clear();
  AttentionResult<double> none = referenceAttentionF64(p, in);
  EXPECT_EQ(none.lse[0], kNegInf);
  EXPECT_NEAR(none.lse[3], std::log(2.0), 1e-12);
}

// GQA: four query heads over two KV heads, each query head its own sink.
// Lq = 1, Lk = 2, scores 0: Z_h = 2 + e^sink_h, O_h = (v0 + v1) / Z_h.
TEST(AlibiSinksReferenceTest, SinkPerGqaHeadByHand) {
  const float sinks[4] = {-1.0f, 0.0f, 2.0f, 5.0f};
  AttentionProblem p = headProblem({1, 4, 2, 1, 2}, 1, false, {},
                                   {sinks[0], sinks[1], sinks[2], sinks[3]});
  AttentionData in = headData({0, 0, 0, 0}, {1, 1, 1, 1}, {1, 3, 10, 30});
  AttentionResult<double> r = referenceAttentionF64(p, in);
  ASSERT_EQ(r.o.size(), 4u);
  for (int h = 0; h < 4; ++h) {
    const double z = 2 + std::exp(double(sinks[h]));
    const double sum = h < 2 ? 4 : 40;
    EXPECT_NEAR(r.o[size_t(h)], sum / z, 1e-12) << "head " << h;
    EXPECT_NEAR(r.lse[size_t(h)], std::log(z), 1e-12) << "head " << h;
    EXPECT_NEAR(r.magnitude[size_t(h)], sum / z, 1e-12) << "head " << h;
  }
}

// A sink that dominates: O shrinks by the sink's share, LSE is about the
// sink (log(e^30 + 3) = 30 + log1p(3 e^-30)).
TEST(AlibiSinksReferenceTest, DominantSinkByHand) {
  AttentionProblem p = headProblem({1, 1, 1, 1, 3}, 1, false, {}, {30.0f});
  AttentionResult<double> r =
      referenceAttentionF64(p, headData({0}, {1, 1, 1}, {1, 2, 3}));
  const double z = 3 + std::exp(30.0);
  EXPECT_NEAR(r.o[0], 6 / z, 1e-25);
  EXPECT_NEAR(r.lse[0], 30 + std::log1p(3 * std::exp(-30.0)), 1e-12);
}

/// The rule of the issue, key by key: FlashAttention 2's mask, the softcap,
/// ALiBi's bias from the end, the sink once in the denominator.
void expectMatchesDefinition(const AttentionProblem &p, const AttentionData &in,
                             const AttentionResult<double> &r,
                             const std::string &what, int &emptyRows) {
  const AttentionShape &sh = p.shape;
  const int64_t lq = sh.seqQ, lk = sh.seqK, D = p.headDim;
  for (int64_t h = 0; h < sh.headsQ; ++h) {
    const int64_t hk = h / (sh.headsQ / sh.headsKv);
    const double slope = p.hasAlibi() ? p.alibiSlopes[size_t(h)] : 0;
    for (int64_t i = 0; i < lq; ++i) {
      const float *q = &in.q[size_t((h * lq + i) * D)];
      std::vector<double> s;
      std::vector<int64_t> keys;
      for (int64_t j = 0; j < lk; ++j) {
        const int64_t shift = lk - lq;
        const bool visible =
            (p.windowLeft < 0 || j >= i + shift - p.windowLeft) &&
            (p.windowRight < 0 || j <= i + shift + p.windowRight) &&
            (!p.causal || j <= i + shift);
        if (!visible)
          continue;
        double dot = 0;
        for (int64_t c = 0; c < D; ++c)
          dot += double(q[c]) * double(in.k[size_t((hk * lk + j) * D + c)]);
        double x = p.scale * dot;
        if (p.softcap > 0)
          x = p.softcap * std::tanh(x / p.softcap);
        x -= slope * std::fabs(double(i + shift - j));
        s.push_back(x);
        keys.push_back(j);
      }
      double m = p.hasSinks() ? double(p.sinks[size_t(h)]) : kNegInf;
      for (double x : s)
        m = std::max(m, x);
      const size_t row = size_t(h * lq + i);
      if (s.empty()) {
        ++emptyRows;
        EXPECT_EQ(r.lse[row], p.hasSinks() ? p.sinks[size_t(h)] : kNegInf)
            << what << " head " << h << " row " << i;
        for (int64_t c = 0; c < D; ++c)
          EXPECT_EQ(r.o[row * D + size_t(c)], 0) << what;
        continue;
      }
      double z = p.hasSinks() ? std::exp(p.sinks[size_t(h)] - m) : 0;
      std::vector<double> o(size_t(D), 0);
      for (size_t n = 0; n < s.size(); ++n) {
        const double e = std::exp(s[n] - m);
        z += e;
        for (int64_t c = 0; c < D; ++c)
          o[size_t(c)] += e * in.v[size_t((hk * lk + keys[n]) * D + c)];
      }
      EXPECT_NEAR(r.lse[row], m + std::log(z), 1e-11)
          << what << " head " << h << " row " << i;
      for (int64_t c = 0; c < D; ++c)
        EXPECT_NEAR(r.o[row * D + size_t(c)], o[size_t(c)] / z, 1e-11)
            << what << " head " << h << " row " << i;
    }
  }
}

// Random problems against the definition: ALiBi and sinks alone and
// together, with the window, causal and the softcap, Lq below, equal to and
// above Lk, GQA.
TEST(AlibiSinksReferenceTest, AgreesWithTheDefinitionKeyByKey) {
  int cases = 0, emptyRows = 0;
  const std::pair<int64_t, int64_t> lengths[] = {
      {5, 5}, {3, 9}, {9, 3}, {1, 7}, {12, 12}};
  for (auto [lq, lk] : lengths)
    for (int features = 1; features < 4; ++features)
      for (bool causal : {false, true})
        for (int64_t left : {-1, 2})
          for (double softcap : {0.0, 1.5}) {
            AttentionProblem p{{1, 4, 2, lq, lk}, 4, causal, 0.6};
            p.windowLeft = left;
            p.softcap = softcap;
            if (features & 1)
              p.alibiSlopes = drawAlibiSlopes(4, uint64_t(cases));
            if (features & 2)
              p.sinks = drawSinks(4, lk, uint64_t(cases));
            AttentionData in =
                generateInputs(p, DType::F32, Distribution::Normal, cases++);
            const std::string what =
                "Lq " + std::to_string(lq) + " Lk " + std::to_string(lk) +
                " alibi " + std::to_string(features & 1) + " sinks " +
                std::to_string(features >> 1) + " causal " +
                std::to_string(causal) + " left " + std::to_string(left) +
                " softcap " + std::to_string(softcap);
            expectMatchesDefinition(p, in, referenceAttentionF64(p, in), what,
                                    emptyRows);
          }
  EXPECT_GT(emptyRows, 0);
}

TEST(AlibiSinksReferenceTest, ChecksTheHeadParameters) {
  auto message = [](const AttentionProblem &p) {
    Status s = checkShape(p);
    return s.ok() ? std::string("ok") : s.message();
  };
  AttentionProblem p =
      headProblem({1, 2, 1, 4, 4}, 8, false, {0.5f, 0.25f}, {1.0f, -1.0f});
  EXPECT_EQ(message(p), "ok");
  p.alibiSlopes = {0.5f};
  EXPECT_EQ(message(p), "invalid attention problem: alibi_slopes has 1 "
                        "values, Hq = 2 (one per query head)");
  p.alibiSlopes = {0.5f, std::nanf("")};
  EXPECT_EQ(message(p), "invalid attention problem: alibi_slopes[1] = nan "
                        "(finite values)");
  p.alibiSlopes.clear();
  p.sinks = {1, 2, 3};
  EXPECT_EQ(message(p), "invalid attention problem: sinks has 3 values, Hq = "
                        "2 (one per query head)");
  p.sinks = {-std::numeric_limits<float>::infinity(), 0};
  EXPECT_EQ(message(p),
            "invalid attention problem: sinks[0] = -inf (finite values)");
  // The references give nothing for a problem the check refuses.
  EXPECT_TRUE(referenceAttentionF64(
                  p, generateInputs(p, DType::F32, Distribution::Normal, 0))
                  .o.empty());

  VarlenProblem v = VarlenProblem::fromLengths(2, 1, 8, {3}, {4}, false, 0.5);
  v.sinks = {1};
  EXPECT_EQ(checkVarlenProblem(v).message(),
            "invalid varlen problem: sinks has 1 values, Hq = 2 (one per "
            "query head)");
  PagedGeneratorOptions o;
  o.headsQ = 2;
  o.headsKv = 1;
  o.alibiSlopes = {1, 2, 3};
  Expected<PagedProblem> paged = generatePagedProblem(o, 1);
  ASSERT_FALSE(paged.ok());
  EXPECT_EQ(paged.status().message(),
            "invalid paged problem: alibi_slopes has 3 values, Hq = 2 (one "
            "per query head)");
}

//===----------------------------------------------------------------------===//
// Paged and varlen carry them
//===----------------------------------------------------------------------===//

// A varlen batch whose sequences have their own lengths: each sequence's
// rows equal the dense reference of that sequence (the distance is from
// the sequence's own end), and a sequence with no keys has O = 0 and LSE =
// each head's sink.
TEST(AlibiSinksPagedVarlenTest, VarlenSequencesAndEmptyOnes) {
  AttentionProblem like{{3, 4, 2, 9, 13}, 8, true, 0.4};
  like.alibiSlopes = drawAlibiSlopes(4, 3);
  like.sinks = drawSinks(4, 13, 3);
  VarlenOptions vo;
  vo.seqlensQ = {5, 9, 3};
  vo.seqlensK = {13, 0, 7};
  Expected<VarlenProblem> made = varlenProblemFor(like, vo, 7);
  FA_ASSERT_OK(made);
  const VarlenProblem &p = *made;
  EXPECT_EQ(p.alibiSlopes, like.alibiSlopes);
  EXPECT_EQ(p.sinks, like.sinks);
  AttentionData in =
      generateVarlenInputs(p, DType::F32, Distribution::Normal, 7);
  AttentionResult<double> r = referenceVarlenAttentionF64(p, in);
  Expected<std::vector<DenseSequence>> seqs = gatherVarlenSequences(p, in);
  FA_ASSERT_OK(seqs);
  ASSERT_EQ(seqs->size(), 3u);
  const int64_t Hq = 4, D = 8;
  for (size_t b = 0; b < 3; ++b) {
    const int64_t q0 = p.cuSeqlensQ[b], lq = p.cuSeqlensQ[b + 1] - q0;
    const DenseSequence &seq = (*seqs)[b];
    EXPECT_EQ(seq.problem.sinks, like.sinks);
    AttentionResult<double> dense;
    if (!seq.data.q.empty()) {
      int emptyRows = 0;
      dense = referenceAttentionF64(seq.problem, seq.data);
      expectMatchesDefinition(seq.problem, seq.data, dense,
                              "sequence " + std::to_string(b), emptyRows);
    }
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t i = 0; i < lq; ++i) {
        const double lse = r.lse[size_t(h * p.totalQ + q0 + i)];
        if (seq.data.q.empty()) { // no keys
          EXPECT_EQ(lse, like.sinks[size_t(h)]) << b << " " << h << " " << i;
          for (int64_t c = 0; c < D; ++c)
            EXPECT_EQ(r.o[size_t(((q0 + i) * Hq + h) * D + c)], 0);
          continue;
        }
        EXPECT_EQ(lse, dense.lse[size_t(h * lq + i)]) << b << " " << h;
        for (int64_t c = 0; c < D; ++c)
          EXPECT_EQ(r.o[size_t(((q0 + i) * Hq + h) * D + c)],
                    dense.o[size_t((h * lq + i) * D + c)]);
      }
  }
}

// A paged problem made from a dense one keeps its slopes and sinks; a
// sequence of one page gives the dense reference's bits.
TEST(AlibiSinksPagedVarlenTest, PagedCarriesThem) {
  AttentionProblem dense{{1, 2, 1, 5, 40}, 8, false, 0.3};
  dense.alibiSlopes = bloomAlibiSlopes(2);
  dense.sinks = {0.5f, 3.0f};
  PagedCacheOptions po;
  po.pageSize = 16;
  po.cacheSeqlens = {40};
  Expected<PagedProblem> paged = pagedProblemFor(dense, po, 2);
  FA_ASSERT_OK(paged);
  EXPECT_EQ(paged->alibiSlopes, dense.alibiSlopes);
  EXPECT_EQ(paged->sinks, dense.sinks);
  AttentionData in =
      generatePagedInputs(*paged, DType::F32, Distribution::Normal, 2);
  Expected<std::vector<DenseSequence>> seqs = gatherPagedSequences(*paged, in);
  FA_ASSERT_OK(seqs);
  AttentionResult<double> want =
      referenceAttentionF64((*seqs)[0].problem, (*seqs)[0].data);
  AttentionResult<double> got = referencePagedAttentionF64(*paged, in);
  ASSERT_EQ(want.o.size(), got.o.size());
  for (size_t i = 0; i < want.o.size(); ++i)
    ASSERT_EQ(want.o[i], got.o[i]) << i;
  for (size_t i = 0; i < want.lse.size(); ++i)
    ASSERT_EQ(want.lse[i], got.lse[i]) << i;
}

//===----------------------------------------------------------------------===//
// Seeded slopes and sinks
//===----------------------------------------------------------------------===//

TEST(AlibiSinksInputsTest, SlopesAndSinks) {
  // BLOOM's series for 8 heads: 2^-1 .. 2^-8, exactly.
  std::vector<float> bloom = bloomAlibiSlopes(8);
  ASSERT_EQ(bloom.size(), 8u);
  for (int h = 0; h < 8; ++h)
    EXPECT_EQ(bloom[size_t(h)], std::ldexp(1.0f, -(h + 1))) << h;
  EXPECT_EQ(bloomAlibiSlopes(4)[0], 0.25f); // 2^(-8/4)
  // Drawn: the series times a factor in [0.5, 2], reproducible, not the
  // series itself.
  std::vector<float> drawn = drawAlibiSlopes(8, 11);
  EXPECT_EQ(drawn, drawAlibiSlopes(8, 11));
  EXPECT_NE(drawn, drawAlibiSlopes(8, 12));
  int away = 0;
  for (int h = 0; h < 8; ++h) {
    const double factor = double(drawn[size_t(h)]) / bloom[size_t(h)];
    EXPECT_GE(factor, 0.5 - 1e-6) << h;
    EXPECT_LE(factor, 2.0 + 1e-6) << h;
    away += std::fabs(factor - 1) > 1e-3;
  }
  EXPECT_GT(away, 0);
  // Sinks: uniform in [-4, 4] but for one dominating head, at least
  // log(Lk) + 4.
  for (uint64_t seed = 0; seed < 20; ++seed) {
    std::vector<float> sinks = drawSinks(6, 1000, seed);
    ASSERT_EQ(sinks.size(), 6u);
    int dominant = 0;
    for (float s : sinks) {
      if (s >= std::log(1000.0) + 4 - 1e-4 && s <= std::log(1000.0) + 6 + 1e-4)
        ++dominant;
      else
        EXPECT_TRUE(s >= -4 && s <= 4) << s;
    }
    EXPECT_EQ(dominant, 1) << seed;
  }
  EXPECT_EQ(drawSinks(1, 50, 3).size(), 1u);
  EXPECT_LE(std::fabs(drawSinks(1, 50, 3)[0]), 4);
  // The inputs drawn from a seed do not move when the problem has slopes
  // and sinks.
  AttentionProblem plain{{1, 2, 1, 3, 5}, 4, false, 0.5};
  AttentionProblem headed = plain;
  headed.alibiSlopes = drawAlibiSlopes(2, 9);
  headed.sinks = drawSinks(2, 5, 9);
  EXPECT_EQ(generateInputs(plain, DType::F16, Distribution::Normal, 9).q,
            generateInputs(headed, DType::F16, Distribution::Normal, 9).q);
}

//===----------------------------------------------------------------------===//
// The ABI: word counts, packing, argument errors
//===----------------------------------------------------------------------===//

TEST(AlibiSinksAbiTest, WordCounts) {
  EXPECT_EQ(fa_kernel_abi_words(1, 0, 1), 54u);
  EXPECT_EQ(fa_kernel_abi_words(2, 0, 1), 65u);
  EXPECT_EQ(fa_kernel_abi_words(3, 0, 1), 77u);
  EXPECT_EQ(fa_kernel_abi_words(4, 0, 1), 87u);
  EXPECT_EQ(fa_kernel_abi_words(4, 0, 0), 77u);
  EXPECT_EQ(fa_kernel_abi_words(1, 1, 0), 52u);
  EXPECT_EQ(fa_kernel_abi_words(1, 1, 1), 0u); // no trace with head words
  EXPECT_EQ(fa_kernel_abi_words(5, 0, 1), 0u);
  EXPECT_EQ(fa_kernel_num_words(1, 1), 52u);
  EXPECT_EQ(int(FA_ABI_MAX_WORDS), 87);
  // The kernarg segment: two more descriptors after the version's words,
  // 32 bytes each with 32-bit index arithmetic (two 8-byte pointers, three
  // 4-byte integers, padded), 40 with 64-bit words... i.e. 10 words.
  uint64_t words[FA_ABI_MAX_WORDS] = {};
  for (size_t i = 0; i < FA_ABI_MAX_WORDS; ++i)
    words[i] = 1000 + i;
  EXPECT_EQ(detail::packKernargSegment(words, 87, 64).size(), 87u * 8);
  // Version 4 with 32-bit indices is 524 bytes (its last descriptor 28);
  // then 4 bytes of padding, slopes' 28 bytes, 4 of padding, sinks' 28.
  const std::vector<uint8_t> narrow = detail::packKernargSegment(words, 87, 32);
  EXPECT_EQ(narrow.size(), 524u + 4 + 28 + 4 + 28);
  uint64_t pointer;
  uint32_t size;
  std::memcpy(&pointer, &narrow[528], 8);
  EXPECT_EQ(pointer, 1077u); // slopes' allocated pointer, word 77
  std::memcpy(&size, &narrow[528 + 20], 4);
  EXPECT_EQ(size, 1080u); // slopes' size, word 80
  std::memcpy(&pointer, &narrow[560 + 8], 8);
  EXPECT_EQ(pointer, 1083u); // sinks' aligned pointer, word 83
  for (int i = 77; i < 87; ++i)
    EXPECT_EQ(detail::isDescriptorIndexWord(size_t(i)), (i - 77) % 5 >= 2) << i;
}

/// A dense kernel description with head parameters, for packAttentionArgs.
KernelInfo headKernel(bool alibi, bool sinks) {
  KernelInfo k;
  k.name = "heads";
  k.abiVersion = 1;
  k.dtype = DType::F32;
  k.headDim = 4;
  k.scale = 0.5;
  k.hasLse = false;
  k.blockM = 4;
  k.blockN = 4;
  k.threads = 4;
  k.waveSize = 4;
  k.alibi = alibi;
  k.sinks = sinks;
  return k;
}

TEST(AlibiSinksAbiTest, PacksTheHeadWords) {
  Device device = test::hostDevice();
  const AttentionShape shape{1, 4, 2, 3, 5};
  auto buffer = [&](size_t bytes) {
    Expected<Buffer> b = device.allocate(bytes);
    EXPECT_TRUE(b.ok());
    return b.take();
  };
  Buffer q = buffer(4 * 4 * 3 * 4), k = buffer(4 * 2 * 5 * 4),
         v = buffer(4 * 2 * 5 * 4), o = buffer(4 * 4 * 3 * 4);
  Buffer slopes = buffer(4 * 4), sinks = buffer(4 * 4), shortOne = buffer(12);
  AttentionArgs args;
  args.q = &q;
  args.k = &k;
  args.v = &v;
  args.o = &o;
  args.shape = shape;
  auto pack = [&](const KernelInfo &kernel, const AttentionArgs &a) {
    return packAttentionArgs(kernel, a, device.limits());
  };
  auto error = [&](const KernelInfo &kernel, const AttentionArgs &a) {
    Expected<PackedLaunch> p = pack(kernel, a);
    return p.ok() ? std::string("ok") : p.status().message();
  };

  // Both: 54 words, the two descriptors at 44 and 49.
  args.alibiSlopes = &slopes;
  args.sinks = &sinks;
  Expected<PackedLaunch> both = pack(headKernel(true, true), args);
  FA_ASSERT_OK(both);
  EXPECT_EQ(both->numWords, 54u);
  const uint64_t *w = both->words.data();
  EXPECT_EQ(w[44], slopes.address());
  EXPECT_EQ(w[45], slopes.address());
  EXPECT_EQ(w[46], 0u);
  EXPECT_EQ(w[47], 4u);
  EXPECT_EQ(w[48], 1u);
  EXPECT_EQ(w[49], sinks.address());
  EXPECT_EQ(w[50], sinks.address());
  EXPECT_EQ(w[52], 4u);
  EXPECT_EQ(w[53], 1u);

  // Sinks alone: a null slopes descriptor (pointers, offset, size 0, stride
  // 1).
  args.alibiSlopes = nullptr;
  Expected<PackedLaunch> sinksOnly = pack(headKernel(false, true), args);
  FA_ASSERT_OK(sinksOnly);
  EXPECT_EQ(sinksOnly->numWords, 54u);
  const uint64_t *s = sinksOnly->words.data();
  EXPECT_EQ(s[44], 0u);
  EXPECT_EQ(s[45], 0u);
  EXPECT_EQ(s[47], 0u);
  EXPECT_EQ(s[48], 1u);
  EXPECT_EQ(s[50], sinks.address());

  // A kernel without them: 44 words, as before.
  args.sinks = nullptr;
  Expected<PackedLaunch> plain = pack(headKernel(false, false), args);
  FA_ASSERT_OK(plain);
  EXPECT_EQ(plain->numWords, 44u);

  // The argument errors.
  EXPECT_EQ(error(headKernel(true, false), args),
            "kernel 'heads' takes alibi_slopes (manifest alibi): pass "
            "AttentionArgs::alibiSlopes");
  EXPECT_EQ(error(headKernel(true, true), AttentionArgs(args)),
            "kernel 'heads' takes alibi_slopes (manifest alibi): pass "
            "AttentionArgs::alibiSlopes");
  args.alibiSlopes = &slopes;
  EXPECT_EQ(error(headKernel(true, true), args),
            "kernel 'heads' takes sinks (manifest sinks): pass "
            "AttentionArgs::sinks");
  EXPECT_EQ(error(headKernel(false, false), args),
            "kernel 'heads' takes no alibi_slopes (its manifest does not say "
            "alibi): pass no AttentionArgs::alibiSlopes");
  args.alibiSlopes = nullptr;
  args.sinks = &sinks;
  EXPECT_EQ(error(headKernel(true, false), args),
            "kernel 'heads' takes alibi_slopes (manifest alibi): pass "
            "AttentionArgs::alibiSlopes");
  args.alibiSlopes = &slopes;
  EXPECT_EQ(error(headKernel(true, false), args),
            "kernel 'heads' takes no sinks (its manifest does not say sinks): "
            "pass no AttentionArgs::sinks");
  args.sinks = &shortOne;
  EXPECT_EQ(error(headKernel(true, true), args),
            "buffer sinks holds 12 bytes but [Hq=4] of f32 needs 16 bytes");
  args.sinks = &sinks;
  args.alibiSlopes = &shortOne;
  EXPECT_EQ(error(headKernel(true, true), args),
            "buffer alibi_slopes holds 12 bytes but [Hq=4] of f32 needs 16 "
            "bytes");
  // An output is no head parameter.
  args.alibiSlopes = &o;
  EXPECT_EQ(error(headKernel(true, true), args),
            "buffer O is also passed as alibi_slopes: an output must not "
            "share memory with another operand");
}

// Split-KV (version 2) and varlen (version 4) kernels: the head words
// follow the version's words, 55 and 77, and leave S and cu_seqlens alone.
TEST(AlibiSinksAbiTest, PacksAfterSplitAndVarlenWords) {
  Device device = test::hostDevice();
  auto buffer = [&](size_t bytes) {
    Expected<Buffer> b = device.allocate(bytes);
    EXPECT_TRUE(b.ok());
    return b.take();
  };
  const AttentionShape shape{1, 2, 1, 8, 40};
  const int64_t D = 64;
  Buffer q = buffer(2 * 8 * D * 4), kv = buffer(40 * D * 4),
         o = buffer(2 * 8 * D * 4), lse = buffer(2 * 8 * 4);
  Buffer slopes = buffer(8), sinks = buffer(8);
  AttentionArgs args;
  args.q = &q;
  args.k = args.v = &kv;
  args.o = &o;
  args.lse = &lse;
  args.shape = shape;
  args.alibiSlopes = &slopes;
  args.sinks = &sinks;

  Manifest split = test::fixtureManifest("split_f32");
  ASSERT_EQ(split.kernels.size(), 2u);
  for (KernelInfo &k : split.kernels)
    k.alibi = k.sinks = true;
  Expected<PackedLaunch> packed = packAttentionArgs(
      split.kernels[0], args, device.limits(), &split.kernels[1], 3);
  FA_ASSERT_OK(packed);
  EXPECT_EQ(packed->numWords, 65u);
  EXPECT_EQ(packed->words[FA_ABI_SPLITS], 3u);
  EXPECT_EQ(packed->words[55], slopes.address());
  EXPECT_EQ(packed->words[57], 0u);
  EXPECT_EQ(packed->words[58], 2u);
  EXPECT_EQ(packed->words[60], sinks.address());
  EXPECT_EQ(packed->words[64], 1u);

  Manifest varlen = test::fixtureManifest("varlen_f32");
  varlen.kernels[0].sinks = true;
  args.alibiSlopes = nullptr;
  const std::vector<int32_t> cuQ = {0, 8}, cuK = {0, 40};
  Buffer cuQBuffer = buffer(8), cuKBuffer = buffer(8);
  VarlenArgs vl;
  vl.cuSeqlensQ = &cuQBuffer;
  vl.cuSeqlensK = &cuKBuffer;
  vl.totalQ = 8;
  vl.totalK = 40;
  vl.hostCuSeqlensQ = cuQ;
  vl.hostCuSeqlensK = cuK;
  args.varlen = vl;
  packed = packAttentionArgs(varlen.kernels[0], args, device.limits());
  FA_ASSERT_OK(packed);
  EXPECT_EQ(packed->numWords, 87u);
  EXPECT_EQ(packed->words[FA_ABI_CU_SEQLENS_Q], cuQBuffer.address());
  EXPECT_EQ(packed->words[FA_ABI_CU_SEQLENS_K], cuKBuffer.address());
  EXPECT_EQ(packed->words[77], 0u); // no slopes: a null descriptor
  EXPECT_EQ(packed->words[81], 1u);
  EXPECT_EQ(packed->words[82], sinks.address());
  EXPECT_EQ(packed->words[85], 2u);
}

//===----------------------------------------------------------------------===//
// Kernels with them: the host fixtures
//===----------------------------------------------------------------------===//

// A code object whose word count (fa_host_info::num_words) disagrees with
// the manifest's alibi and sinks does not load.
TEST(AlibiSinksKernelTest, HostInfoCountsTheHeadWords) {
  test::ScratchDir dir;
  Manifest plain = test::fixtureManifest("attn_f32");
  plain.kernels[0].alibi = true;
  std::string path = test::writeCodeObject(
      dir, "claims_alibi.so", test::readBytes(test::fixturePath("attn_f32")),
      plain);
  Expected<Module> m = Module::load(test::hostDevice(), path);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find(
                "the manifest says alibi true and sinks false, the code "
                "object says 44 argument words (no head parameters)"),
            std::string::npos)
      << m.status().message();

  Manifest headed = test::fixtureManifest("attn_f32_sinks");
  headed.kernels[0].sinks = false;
  path = test::writeCodeObject(
      dir, "hides_sinks.so",
      test::readBytes(test::fixturePath("attn_f32_sinks")), headed);
  m = Module::load(test::hostDevice(), path);
  ASSERT_FALSE(m.ok());
  EXPECT_NE(m.status().message().find(
                "the manifest says alibi false and sinks false, the code "
                "object says 54 argument words (head parameters)"),
            std::string::npos)
      << m.status().message();
}

ValidationReport validateOk(const Kernel &kernel, ValidationOptions o) {
  Expected<ValidationReport> r = validateKernel(kernel, o);
  EXPECT_TRUE(r.ok()) << r.status().message();
  return r.ok() ? r.take() : ValidationReport();
}

// The correct fixtures pass on problems where the distance from the end
// matters (Lq < Lk), with GQA, drawn and given values.
TEST(AlibiSinksKernelTest, CorrectKernelsPass) {
  const std::pair<const char *, AttentionShape> cases[] = {
      {"attn_f32_alibi", {2, 4, 2, 37, 70}},
      {"attn_f32_sinks", {2, 4, 2, 37, 70}},
      {"attn_f32_sinks", {1, 2, 1, 20, 20}},
      {"attn_f16_causal_alibi_sinks", {1, 4, 1, 40, 33}},
      {"attn_f16_causal_alibi_sinks", {2, 2, 2, 17, 64}}};
  for (const auto &[name, shape] : cases) {
    Kernel kernel = test::loadKernel(name);
    ValidationOptions o;
    o.shape = shape;
    o.seed = 5;
    ValidationReport r = validateOk(kernel, o);
    EXPECT_TRUE(r.verdict.pass) << name << "\n" << test::failures(r);
    EXPECT_EQ(r.problem.hasAlibi(), kernel.info().alibi) << name;
    EXPECT_EQ(r.problem.hasSinks(), kernel.info().sinks) << name;
  }
  // Given values: BLOOM's slopes, a constant sink (the kernel reads what
  // validation passes).
  ValidationOptions o;
  o.shape = {1, 4, 2, 20, 40};
  o.alibiSlopes = bloomAlibiSlopes(4);
  o.sinks = {2.5f, 2.5f, 2.5f, 2.5f};
  ValidationReport r =
      validateOk(test::loadKernel("attn_f16_causal_alibi_sinks"), o);
  EXPECT_TRUE(r.verdict.pass) << test::failures(r);
  EXPECT_EQ(r.problem.alibiSlopes, bloomAlibiSlopes(4));
  EXPECT_EQ(r.problem.sinks, o.sinks);
}

// The planted bugs: ALiBi measured from the start, the sink once per K/V
// block, the sink left out of LSE. Each fails validation.
TEST(AlibiSinksKernelTest, PlantedBugsFail) {
  const std::pair<const char *, const char *> bugs[] = {
      {"attn_bug_alibi_from_start", "output"},
      {"attn_bug_sink_per_block", "output"},
      {"attn_bug_sink_not_in_lse", "lse"}};
  for (const auto &[name, check] : bugs) {
    ValidationOptions o;
    o.shape = {1, 2, 1, 20, 70}; // Lq < Lk, five K/V blocks
    Expected<ValidationReport> r = validateKernel(test::loadKernel(name), o);
    FA_ASSERT_OK(r);
    EXPECT_FALSE(r->verdict.pass) << name;
    // "output": a check of O (not LSE's, not the padding's) fails.
    bool named = false;
    for (const Check &c : r->verdict.checks)
      named |= !c.pass && (std::string(check) == "lse"
                               ? c.name == "lse"
                               : c.name != "lse" && c.name != "padding");
    EXPECT_TRUE(named) << name << ": no failed '" << check << "' check\n"
                       << test::failures(*r);
  }
}

TEST(AlibiSinksKernelTest, ArgumentErrors) {
  auto message = [](const Kernel &kernel, const ValidationOptions &o) {
    Expected<ValidationReport> r = validateKernel(kernel, o);
    return r.ok() ? std::string("ok") : r.status().message();
  };
  ValidationOptions o;
  o.shape = {1, 2, 1, 8, 8};
  o.alibiSlopes = {0.5f, 0.25f};
  EXPECT_EQ(message(test::loadKernel("attn_f32"), o),
            "kernel 'attn_f32' takes no ALiBi slopes (its manifest does not "
            "say \"alibi\": true)");
  o.alibiSlopes.clear();
  o.sinks = {1};
  EXPECT_EQ(message(test::loadKernel("attn_f32_sinks"), o),
            "1 attention sinks for kernel 'attn_f32_sinks', the problem has "
            "Hq = 2 query heads");
  // A launch without the buffer names it.
  Kernel kernel = test::loadKernel("attn_f32_alibi");
  Device device = test::hostDevice();
  Expected<Buffer> q = device.allocate(2 * 8 * 64 * 4),
                   kv = device.allocate(8 * 64 * 4),
                   out = device.allocate(2 * 8 * 64 * 4),
                   lse = device.allocate(2 * 8 * 4);
  FA_ASSERT_OK(q);
  FA_ASSERT_OK(kv);
  FA_ASSERT_OK(out);
  FA_ASSERT_OK(lse);
  AttentionArgs args;
  args.q = &*q;
  args.k = args.v = &*kv;
  args.o = &*out;
  args.lse = &*lse;
  args.shape = {1, 2, 1, 8, 8};
  Status s = kernel.launch(args);
  EXPECT_NE(s.message().find("kernel 'attn_f32_alibi' takes alibi_slopes "
                             "(manifest alibi): pass "
                             "AttentionArgs::alibiSlopes"),
            std::string::npos)
      << s.message();
  // The golden cases have neither.
  Expected<GoldenCase> golden =
      loadGoldenCase(test::goldenPath(test::goldenCases()[0]));
  FA_ASSERT_OK(golden);
  Status g = checkGoldenMatchesKernel(*golden, kernel.info());
  EXPECT_NE(g.message().find("golden cases have no ALiBi"), std::string::npos)
      << g.message();
}

// From C: fa_module_launch_heads and fa_module_enqueue_heads pass the sinks,
// the launch calls without head parameters are refused. Q = 0, so every
// score is 0: Lk = 4 keys with V rows 1, 2, 3, 4 and sink 1 give O = 10 /
// (4 + e) and LSE = log(4 + e).
TEST(AlibiSinksKernelTest, LaunchesFromC) {
  fa_device *d = nullptr;
  ASSERT_EQ(fa_device_open("host", &d), FA_OK);
  fa_module *m = nullptr;
  ASSERT_EQ(fa_module_load(d, test::fixturePath("attn_f32_sinks").c_str(), &m),
            FA_OK)
      << fa_last_error();
  enum { Lk = 4, D = 64 };
  std::vector<float> q(D, 0.f), k(Lk * D, 1.f), v(Lk * D);
  for (int j = 0; j < Lk; ++j)
    std::fill(v.begin() + j * D, v.begin() + (j + 1) * D, float(j + 1));
  const float sink = 1.f;
  fa_buffer *b[6] = {};
  const std::vector<float> *values[6] = {&q, &k, &v, nullptr, nullptr, nullptr};
  const size_t bytes[6] = {D * 4, Lk * D * 4, Lk * D * 4, D * 4, 4, 4};
  for (int i = 0; i < 6; ++i) {
    ASSERT_EQ(fa_buffer_alloc(d, bytes[i], &b[i]), FA_OK);
    if (values[i])
      ASSERT_EQ(fa_buffer_write(b[i], 0, values[i]->data(), bytes[i]), FA_OK);
  }
  ASSERT_EQ(fa_buffer_write(b[5], 0, &sink, 4), FA_OK);
  fa_attention_args args = {};
  args.q = b[0];
  args.k = b[1];
  args.v = b[2];
  args.o = b[3];
  args.lse = b[4];
  args.batch = args.heads_q = args.heads_kv = 1;
  args.seq_q = 1;
  args.seq_k = Lk;
  EXPECT_NE(fa_module_launch(m, nullptr, &args), FA_OK);
  EXPECT_NE(std::string(fa_last_error())
                .find("kernel 'attn_f32_sinks' takes sinks (manifest sinks): "
                      "pass AttentionArgs::sinks"),
            std::string::npos)
      << fa_last_error();
  fa_head_params heads = {};
  heads.sinks = b[5];
  for (int enqueue = 0; enqueue < 2; ++enqueue) {
    fa_status rc = enqueue ? fa_module_enqueue_heads(m, nullptr, &args, nullptr,
                                                     nullptr, &heads, nullptr)
                           : fa_module_launch_heads(m, nullptr, &args, nullptr,
                                                    nullptr, &heads, nullptr);
    ASSERT_EQ(rc, FA_OK) << fa_last_error();
    std::vector<float> o(D);
    float lse = 0;
    ASSERT_EQ(fa_buffer_read(b[3], 0, o.data(), D * 4), FA_OK);
    ASSERT_EQ(fa_buffer_read(b[4], 0, &lse, 4), FA_OK);
    const double z = 4 + std::exp(1.0);
    for (int c = 0; c < D; ++c)
      EXPECT_NEAR(o[size_t(c)], 10 / z, 1e-6) << c;
    EXPECT_NEAR(lse, std::log(z), 1e-6);
  }
  // Slopes to a kernel without ALiBi.
  heads.alibi_slopes = b[5];
  EXPECT_NE(fa_module_launch_heads(m, nullptr, &args, nullptr, nullptr, &heads,
                                   nullptr),
            FA_OK);
  EXPECT_NE(std::string(fa_last_error()).find("takes no alibi_slopes"),
            std::string::npos)
      << fa_last_error();
  for (fa_buffer *x : b)
    fa_buffer_free(x);
  fa_module_unload(m);
  fa_device_close(d);
}

// Layer 2 does not trace them.
TEST(AlibiSinksKernelTest, TraceRefusesThem) {
  AttentionProblem p{{1, 1, 1, 4, 4}, 4, false, 0.5};
  p.sinks = {1};
  AttentionData in = generateInputs(p, DType::F32, Distribution::Normal, 0);
  Expected<TraceReport> t = compareTrace(p, in, 4, 4, TraceRow{0, 0, 0},
                                         std::vector<float>(6, 0.f), 1.0);
  ASSERT_FALSE(t.ok());
  EXPECT_EQ(t.status().message(),
            "trace: the per-block statistics of ALiBi and attention sinks are "
            "not traced (fac --trace refuses them)");
}

} // namespace
} // namespace alibi_sinks_test
