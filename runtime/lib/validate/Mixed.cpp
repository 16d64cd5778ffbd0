//===- Mixed.cpp - Mixed prefill/decode batches ---------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the mixed batches of PagedVarlen.h (packed queries
// cut by cu_seqlens_q over a paged K/V cache, vLLM v1's layout): the host
// checks (the paged problem's, then the runtime's checkMixedMetadata), the
// seeded generator (lengths drawn here, the cache laid out by
// generatePagedProblem; PagedVarlen.cpp poisons its unread rows), the
// references (each (sequence, head) through the dense reference's row routine,
// validate/AttentionCore.h, with Lq = Lq_b and Lk = cache_seqlens[b], so the
// queries are the last rows of their sequence), and the gathering into
// per-sequence dense problems.
//
//===----------------------------------------------------------------------===//

#include "fa/Module.h"
#include "fa/PagedVarlen.h"
#include "validate/AttentionCore.h"
#include "validate/Parallel.h"
#include "validate/Sampler.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <utility>

using namespace fa;
using namespace fa::detail;

static std::string str(int64_t v) { return std::to_string(v); }

static Status invalid(std::string message) {
  return Status::error(ErrorCode::InvalidArgument, std::move(message));
}

static size_t elementCount(std::optional<int64_t> count) {
  return count && *count >= 0 ? size_t(*count) : SIZE_MAX;
}

static constexpr int64_t int32Max = std::numeric_limits<int32_t>::max();

//===----------------------------------------------------------------------===//
// The problem and its checks
//===----------------------------------------------------------------------===//

MixedProblem MixedProblem::fromLengths(PagedProblem cache,
                                       const std::vector<int32_t> &lengthsQ) {
  MixedProblem p;
  p.cache = std::move(cache);
  p.cuSeqlensQ.assign(1, 0);
  int64_t longest = 1;
  for (int32_t length : lengthsQ) {
    p.totalQ += length;
    longest = std::max<int64_t>(longest, length);
    p.cuSeqlensQ.push_back(
        int32_t(std::clamp<int64_t>(p.totalQ, INT32_MIN, int32Max)));
  }
  p.cache.seqQ = longest;
  return p;
}

size_t MixedProblem::qElements() const {
  return elementCount(checkedProduct({totalQ, cache.headsQ, cache.headDim}));
}

size_t MixedProblem::lseElements() const {
  return elementCount(checkedProduct({cache.headsQ, totalQ}));
}

Status fa::checkMixedProblem(const MixedProblem &p) {
  if (Status s = checkPagedProblem(p.cache); !s.ok())
    return s;
  if (!checkedProduct({p.totalQ, p.cache.headsQ, p.cache.headDim, 8}))
    return invalid("invalid mixed problem: the byte size of Q and O "
                   "(total_q*Hq*D elements) overflows 64 bits");
  // The runtime's checks of the queries, which Kernel::launch runs too.
  return checkMixedMetadata(p.cache.batch, p.totalQ, p.cache.seqQ, p.cuSeqlensQ,
                            p.cache.cacheSeqlens);
}

Status fa::checkMixedData(const MixedProblem &p, const AttentionData &d) {
  if (Status s = checkMixedProblem(p); !s.ok())
    return s;
  const size_t cache = p.cache.cacheElements();
  if (d.q.size() != p.qElements() || d.k.size() != cache || d.v.size() != cache)
    return invalid("mixed data has " + std::to_string(d.q.size()) + "/" +
                   std::to_string(d.k.size()) + "/" +
                   std::to_string(d.v.size()) +
                   " elements for Q/K cache/V cache, the problem needs " +
                   std::to_string(p.qElements()) + "/" + std::to_string(cache) +
                   "/" + std::to_string(cache));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Generators
//===----------------------------------------------------------------------===//

Expected<MixedProblem> fa::generateMixedProblem(const MixedGeneratorOptions &o,
                                                uint64_t seed) {
  const std::string what = "mixed generator: ";
  if (o.maxSeqlenQ < 1 || o.maxSeqlenQ > o.maxSeqlenK ||
      o.maxSeqlenK > int32Max)
    return invalid(what + "max_seqlen_q = " + str(o.maxSeqlenQ) +
                   ", max_seqlen_k = " + str(o.maxSeqlenK) +
                   " must satisfy 1 <= max_seqlen_q <= max_seqlen_k <= "
                   "2147483647");
  if (o.batch < 1 || o.batch > (int64_t(1) << 24))
    return invalid(what + "B = " + str(o.batch) + " is not in [1, 2^24]");
  if (o.pageSize < 1)
    return checkPagedKvMetadata(1, o.pageSize, 1, 1, {}, {});
  const std::pair<const char *, const std::vector<int32_t> *> given[] = {
      {"seqlens_q", &o.seqlensQ}, {"cache_seqlens", &o.seqlensK}};
  for (const auto &[name, lengths] : given)
    if (!lengths->empty() && int64_t(lengths->size()) != o.batch)
      return invalid(what + std::string(name) + " has " +
                     str(int64_t(lengths->size())) +
                     " lengths, B = " + str(o.batch));
  const size_t B = size_t(o.batch);
  Sampler sampler(seed);
  std::vector<int32_t> lq(B), lk(B);
  // Queries: a decode row or a prefill chunk; keys: the chunk and a history
  // before it.
  for (size_t b = 0; b < B; ++b) {
    const int64_t mostQ = o.seqlensK.empty()
                              ? o.maxSeqlenQ
                              : std::min<int64_t>(o.maxSeqlenQ, o.seqlensK[b]);
    const bool decode = sampler.uniform() < 0.5;
    lq[b] =
        int32_t(o.seqlensQ.empty()
                    ? (decode ? std::min<int64_t>(1, mostQ)
                              : sampler.integer(std::min<int64_t>(1, mostQ),
                                                std::max<int64_t>(0, mostQ)))
                    : o.seqlensQ[b]);
    lk[b] =
        int32_t(o.seqlensK.empty()
                    ? sampler.integer(std::min<int64_t>(lq[b], o.maxSeqlenK),
                                      o.maxSeqlenK)
                    : o.seqlensK[b]);
  }
  if (o.edgeLengths && o.seqlensQ.empty() && o.seqlensK.empty()) {
    std::vector<int64_t> where(B);
    for (size_t b = 0; b < B; ++b)
      where[b] = int64_t(b);
    sampler.shuffle(where);
    const int64_t ps = o.pageSize;
    for (size_t e = 0; e < 4 && e < B; ++e) {
      const size_t b = size_t(where[e]);
      if (e == 0) { // no queries
        lq[b] = 0;
      } else if (e == 1) { // a whole prompt: Lq == Lk, a chunk
        lq[b] = int32_t(
            sampler.integer(std::min<int64_t>(2, o.maxSeqlenQ), o.maxSeqlenQ));
        lk[b] = lq[b];
      } else if (e == 2) { // keys filling whole pages
        const int64_t whole = o.maxSeqlenK / ps * ps;
        if (whole >= std::max<int64_t>(1, lq[b]))
          lk[b] = int32_t(whole);
      } else { // a decode row over the longest history
        lq[b] = 1;
        lk[b] = int32_t(o.maxSeqlenK);
      }
    }
  }
  for (size_t b = 0; b < B; ++b) {
    const std::string at = "[" + str(int64_t(b)) + "] = ";
    if (lq[b] < 0 || lq[b] > o.maxSeqlenQ)
      return invalid(what + "seqlens_q" + at + str(lq[b]) +
                     " is not in [0, max_seqlen_q = " + str(o.maxSeqlenQ) +
                     "]");
    if (lk[b] < 0 || lk[b] > o.maxSeqlenK)
      return invalid(what + "cache_seqlens" + at + str(lk[b]) +
                     " is not in [0, max_seqlen_k = " + str(o.maxSeqlenK) +
                     "]");
  }

  PagedGeneratorOptions g;
  g.batch = o.batch;
  g.headsQ = o.headsQ;
  g.headsKv = o.headsKv;
  g.headDim = o.headDim;
  g.pageSize = o.pageSize;
  g.seqlens = lk;
  g.maxPages = (o.maxSeqlenK + o.pageSize - 1) / o.pageSize;
  g.maxPages = std::max<int64_t>(1, g.maxPages);
  g.sharedPrefixPages = o.sharedPrefixPages;
  g.unusedPages = o.unusedPages;
  g.padWithUnusedPage = true;
  g.shufflePages = o.shufflePages;
  g.causal = o.causal;
  g.scale = o.scale;
  g.windowLeft = o.windowLeft;
  g.windowRight = o.windowRight;
  g.softcap = o.softcap;
  g.alibiSlopes = o.alibiSlopes;
  g.sinks = o.sinks;
  Expected<PagedProblem> cache =
      generatePagedProblem(g, sampler.integer(0, int32Max));
  if (!cache)
    return cache.takeStatus();
  MixedProblem p = MixedProblem::fromLengths(cache.take(), lq);
  // The grid's bound, whatever the longest chunk drawn.
  p.cache.seqQ = o.maxSeqlenQ;
  if (p.totalQ > int32Max)
    return invalid(what + "the queries of the sequences add up to " +
                   str(p.totalQ) + ", above 2147483647 (cu_seqlens are int32)");
  if (Status s = checkMixedProblem(p); !s.ok())
    return s;
  return p;
}

Expected<MixedProblem> fa::mixedProblemFor(const AttentionProblem &dense,
                                           const PagedCacheOptions &cache,
                                           const VarlenOptions &varlen,
                                           uint64_t seed) {
  const AttentionShape &sh = dense.shape;
  if (!varlen.seqlensK.empty())
    return invalid("a mixed batch's key lengths are cache_seqlens (fa-run "
                   "--cache-seqlens), not seqlens_k (--seqlens-k is for "
                   "varlen kernels)");
  if (sh.seqQ < 1 || sh.seqK > int32Max || sh.seqQ > sh.seqK)
    return invalid("a mixed batch's longest query chunk Lq = " + str(sh.seqQ) +
                   " and longest history Lk = " + str(sh.seqK) +
                   " must satisfy 1 <= Lq <= Lk <= 2147483647 (a "
                   "sequence's queries are the last of its keys)");
  const std::pair<const char *, const std::vector<int32_t> *> given[] = {
      {"seqlens_q", &varlen.seqlensQ}, {"cache_seqlens", &cache.cacheSeqlens}};
  const int64_t bound[] = {sh.seqQ, sh.seqK};
  const char *boundName[] = {"max_seqlen_q = ", "the cache's capacity Lk = "};
  const char *shapeName[] = {" (the shape's Lq)", " (the shape's Lk)"};
  for (int i = 0; i < 2; ++i) {
    const auto &[name, lengths] = given[i];
    if (!lengths->empty() && int64_t(lengths->size()) != sh.batch)
      return invalid(std::string(name) + " has " +
                     str(int64_t(lengths->size())) +
                     " lengths, B = " + str(sh.batch));
    for (size_t b = 0; b < lengths->size(); ++b) {
      const std::string entry = std::string(name) + "[" + str(int64_t(b)) +
                                "] = " + str((*lengths)[b]);
      if ((*lengths)[b] < 0)
        return invalid(entry + " is negative");
      if ((*lengths)[b] > bound[i])
        return invalid(entry + " is above " + boundName[i] + str(bound[i]) +
                       shapeName[i]);
    }
  }
  if (!varlen.seqlensQ.empty() && !cache.cacheSeqlens.empty())
    for (size_t b = 0; b < varlen.seqlensQ.size(); ++b)
      if (cache.cacheSeqlens[b] < varlen.seqlensQ[b])
        return invalid("cache_seqlens[" + str(int64_t(b)) + "] = " +
                       str(cache.cacheSeqlens[b]) + " is below seqlens_q[" +
                       str(int64_t(b)) + "] = " + str(varlen.seqlensQ[b]) +
                       ": a mixed batch's queries are the last rows of their "
                       "sequence");
  MixedGeneratorOptions g;
  g.batch = sh.batch;
  g.headsQ = sh.headsQ;
  g.headsKv = sh.headsKv;
  g.headDim = dense.headDim;
  g.pageSize = cache.pageSize;
  g.maxSeqlenQ = sh.seqQ;
  g.maxSeqlenK = sh.seqK;
  g.seqlensQ = varlen.seqlensQ;
  g.seqlensK = cache.cacheSeqlens;
  g.edgeLengths = true;
  g.sharedPrefixPages =
      cache.sharePages
          ? std::max<int64_t>(1, (sh.seqK + cache.pageSize - 1) /
                                     std::max<int64_t>(1, cache.pageSize) / 2)
          : 0;
  g.unusedPages = cache.unusedPages;
  g.shufflePages = cache.shufflePages;
  g.causal = dense.causal;
  g.scale = dense.scale;
  g.windowLeft = dense.windowLeft;
  g.windowRight = dense.windowRight;
  g.softcap = dense.softcap;
  g.alibiSlopes = dense.alibiSlopes;
  g.sinks = dense.sinks;
  return generateMixedProblem(g, seed);
}

AttentionData fa::generateMixedInputs(const MixedProblem &p, DType dtype,
                                      Distribution dist, uint64_t seed) {
  AttentionData d;
  if (!checkMixedProblem(p).ok())
    return d;
  Sampler sampler(seed);
  fillValues(d.q, p.qElements(), dtype, dist, sampler);
  fillValues(d.k, p.cache.cacheElements(), dtype, dist, sampler);
  fillValues(d.v, p.cache.cacheElements(), dtype, dist, sampler);
  return d;
}

//===----------------------------------------------------------------------===//
// References
//===----------------------------------------------------------------------===//

template <typename T>
static AttentionResult<T> runMixed(const MixedProblem &p,
                                   const AttentionData &d, DType roundType,
                                   bool magnitude) {
  AttentionResult<T> out;
  if (!checkMixedData(p, d).ok())
    return out;
  out.o.assign(p.qElements(), T(0));
  out.lse.assign(p.lseElements(), T(0));
  if (magnitude)
    out.magnitude.assign(p.qElements(), T(0));
  const PagedProblem &c = p.cache;
  const int64_t Hq = c.headsQ, Hkv = c.headsKv, D = c.headDim;
  const int64_t rowStride = Hkv * D, pageStride = c.pageSize * rowStride;
  parallelFor(size_t(c.batch * Hq), [&](size_t bh) {
    const int64_t b = int64_t(bh) / Hq, h = int64_t(bh) % Hq;
    const int64_t hk = h / (Hq / Hkv);
    const int64_t q0 = p.cuSeqlensQ[size_t(b)];
    HeadTask<T> t;
    // The queries are the last Lq_b rows of the sequence's Lk_b: the row
    // routine's bottom-right alignment (shift Lk_b - Lq_b).
    t.lq = p.queries(b);
    t.lk = c.cacheSeqlens[size_t(b)];
    t.headDim = D;
    t.causal = c.causal;
    t.windowLeft = c.windowLeft;
    t.windowRight = c.windowRight;
    t.scale = c.scale;
    t.softcap = c.softcap;
    if (!c.alibiSlopes.empty())
      t.alibiSlope = c.alibiSlopes[size_t(h)];
    t.hasSink = !c.sinks.empty();
    if (t.hasSink)
      t.sink = c.sinks[size_t(h)];
    // Packed Q / O rows [Hq, D]; cache rows through the block table.
    t.q = d.q.data() + (q0 * Hq + h) * D;
    t.qStride = Hq * D;
    const int32_t *pages = c.blockTable.data() + b * c.maxPages;
    t.k =
        KeyRows{d.k.data() + hk * D, rowStride, pages, c.pageSize, pageStride};
    t.v =
        KeyRows{d.v.data() + hk * D, rowStride, pages, c.pageSize, pageStride};
    t.o = out.o.data() + (q0 * Hq + h) * D;
    t.oStride = Hq * D;
    t.lse = out.lse.data() + h * p.totalQ + q0; // [Hq, total_q]
    t.lseStride = 1;
    if (magnitude)
      t.magnitude = out.magnitude.data() + (q0 * Hq + h) * D;
    std::vector<T> scores(size_t(t.lk));
    attentionRows(t, roundType, scores);
  });
  return out;
}

AttentionResult<double> fa::referenceMixedAttentionF64(const MixedProblem &p,
                                                       const AttentionData &d) {
  return runMixed<double>(p, d, DType::F32, /*magnitude=*/true);
}

AttentionResult<float> fa::naiveMixedAttention(const MixedProblem &p,
                                               DType dtype,
                                               const AttentionData &d) {
  return runMixed<float>(p, d, dtype, /*magnitude=*/false);
}

//===----------------------------------------------------------------------===//
// Per-sequence dense problems
//===----------------------------------------------------------------------===//

Expected<std::vector<DenseSequence>>
fa::gatherMixedSequences(const MixedProblem &p, const AttentionData &d) {
  if (Status s = checkMixedData(p, d); !s.ok())
    return s;
  const PagedProblem &c = p.cache;
  const int64_t Hq = c.headsQ, Hkv = c.headsKv, D = c.headDim;
  std::vector<DenseSequence> out;
  for (int64_t b = 0; b < c.batch; ++b) {
    const int64_t q0 = p.cuSeqlensQ[size_t(b)], lq = p.queries(b);
    const int64_t lk = c.cacheSeqlens[size_t(b)];
    DenseSequence s;
    s.problem.shape = AttentionShape{1, Hq, Hkv, lq, lk};
    s.problem.headDim = D;
    s.problem.causal = c.causal;
    s.problem.scale = c.scale;
    s.problem.windowLeft = c.windowLeft;
    s.problem.windowRight = c.windowRight;
    s.problem.softcap = c.softcap;
    s.problem.alibiSlopes = c.alibiSlopes;
    s.problem.sinks = c.sinks;
    if (lq > 0 && lk > 0) {
      s.data.q.resize(size_t(Hq * lq * D));
      s.data.k.resize(size_t(Hkv * lk * D));
      s.data.v.resize(size_t(Hkv * lk * D));
      // Packed [total_q, Hq, D] -> dense [1, Hq, Lq_b, D].
      for (int64_t i = 0; i < lq; ++i)
        for (int64_t h = 0; h < Hq; ++h)
          std::copy_n(d.q.begin() + ((q0 + i) * Hq + h) * D, D,
                      s.data.q.begin() + (h * lq + i) * D);
      // Cache [num_pages, page_size, Hkv, D] -> dense [1, Hkv, Lk_b, D].
      for (int64_t j = 0; j < lk; ++j) {
        const int64_t page =
            c.blockTable[size_t(b * c.maxPages + j / c.pageSize)];
        for (int64_t hk = 0; hk < Hkv; ++hk) {
          const int64_t from =
              ((page * c.pageSize + j % c.pageSize) * Hkv + hk) * D;
          const int64_t to = (hk * lk + j) * D;
          std::copy_n(d.k.begin() + from, D, s.data.k.begin() + to);
          std::copy_n(d.v.begin() + from, D, s.data.v.begin() + to);
        }
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}
