//===- PagedVarlen.cpp - Paged KV cache and variable-length batches -------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements PagedVarlen.h: the host-side checks of the metadata,
// the seeded generators (validate/Sampler.h), the references (each
// (sequence, head) through the dense reference's row routine,
// validate/AttentionCore.h, with its rows located through the block table or
// cu_seqlens), and the gathering into per-sequence dense problems, which
// locates the rows with loops of its own so that it checks the references'
// addressing rather than repeating it.
//
//===----------------------------------------------------------------------===//

#include "fa/PagedVarlen.h"
#include "fa/Module.h"
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

/// `count` as a size_t; SIZE_MAX when it overflowed.
static size_t elementCount(std::optional<int64_t> count) {
  return count && *count >= 0 ? size_t(*count) : SIZE_MAX;
}

/// ceil(length / pageSize) for length >= 0, pageSize >= 1.
static int64_t pagesFor(int64_t length, int64_t pageSize) {
  return length / pageSize + (length % pageSize != 0);
}

//===----------------------------------------------------------------------===//
// Problems and their checks
//===----------------------------------------------------------------------===//

size_t PagedProblem::qElements() const {
  return elementCount(checkedProduct({batch, headsQ, seqQ, headDim}));
}

size_t PagedProblem::cacheElements() const {
  return elementCount(checkedProduct({numPages, pageSize, headsKv, headDim}));
}

size_t PagedProblem::lseElements() const {
  return elementCount(checkedProduct({batch, headsQ, seqQ}));
}

size_t VarlenProblem::qElements() const {
  return elementCount(checkedProduct({totalQ, headsQ, headDim}));
}

size_t VarlenProblem::kvElements() const {
  return elementCount(checkedProduct({totalK, headsKv, headDim}));
}

size_t VarlenProblem::lseElements() const {
  return elementCount(checkedProduct({headsQ, totalQ}));
}

VarlenProblem VarlenProblem::fromLengths(int64_t headsQ, int64_t headsKv,
                                         int64_t headDim,
                                         const std::vector<int32_t> &lengthsQ,
                                         const std::vector<int32_t> &lengthsK,
                                         bool causal, double scale) {
  VarlenProblem p;
  p.batch = int64_t(lengthsQ.size());
  p.headsQ = headsQ;
  p.headsKv = headsKv;
  p.headDim = headDim;
  p.causal = causal;
  p.scale = scale;
  auto prefix = [](const std::vector<int32_t> &lengths,
                   std::vector<int32_t> &cu, int64_t &total, int64_t &max) {
    cu.assign(1, 0);
    total = 0;
    max = 0;
    for (int32_t len : lengths) {
      total += len;
      max = std::max<int64_t>(max, len);
      cu.push_back(int32_t(
          std::clamp<int64_t>(total, std::numeric_limits<int32_t>::min(),
                              std::numeric_limits<int32_t>::max())));
    }
  };
  prefix(lengthsQ, p.cuSeqlensQ, p.totalQ, p.maxSeqlenQ);
  prefix(lengthsK, p.cuSeqlensK, p.totalK, p.maxSeqlenK);
  return p;
}

/// Hq a multiple of Hkv; the message names the problem kind.
static Status checkHeads(const char *kind, int64_t headsQ, int64_t headsKv) {
  if (headsQ % headsKv != 0)
    return invalid(std::string("invalid ") + kind + " problem: Hq (" +
                   str(headsQ) + ") is not a multiple of Hkv (" + str(headsKv) +
                   ")");
  return Status::success();
}

/// Each tensor's size in bytes as fp64 fits in int64.
static Status checkBytes(
    const char *kind,
    std::initializer_list<std::pair<const char *, std::optional<int64_t>>>
        tensors) {
  for (const auto &[name, bytes] : tensors)
    if (!bytes)
      return invalid(std::string("invalid ") + kind +
                     " problem: the byte size of " + name +
                     " overflows 64 bits");
  return Status::success();
}

Status fa::checkPagedProblem(const PagedProblem &p) {
  if (p.batch < 1 || p.headsQ < 1 || p.headsKv < 1 || p.seqQ < 1 ||
      p.headDim < 1 || p.numPages < 1 || p.maxPages < 1)
    return invalid(
        "invalid paged problem: B=" + str(p.batch) + " Hq=" + str(p.headsQ) +
        " Hkv=" + str(p.headsKv) + " Lq=" + str(p.seqQ) +
        " D=" + str(p.headDim) + " num_pages=" + str(p.numPages) +
        " max_pages=" + str(p.maxPages) + " (all must be at least 1)");
  if (Status s = checkHeads("paged", p.headsQ, p.headsKv); !s.ok())
    return s;
  if (Status s =
          checkWindowSoftcap("paged", p.windowLeft, p.windowRight, p.softcap);
      !s.ok())
    return s;
  if (Status s = checkHeadParams("paged", p.headsQ, p.alibiSlopes, p.sinks);
      !s.ok())
    return s;
  if (p.pageSize < 1) // the runtime's message
    return checkPagedKvMetadata(p.batch, p.pageSize, p.maxPages, p.numPages,
                                p.blockTable, p.cacheSeqlens);
  if (Status s = checkBytes(
          "paged",
          {{"Q and O (B*Hq*Lq*D elements)",
            checkedProduct({p.batch, p.headsQ, p.seqQ, p.headDim, 8})},
           {"the K and V caches (num_pages*page_size*Hkv*D elements)",
            checkedProduct({p.numPages, p.pageSize, p.headsKv, p.headDim, 8})},
           {"block_table (B*max_pages entries)",
            checkedProduct({p.batch, p.maxPages, 8})}});
      !s.ok())
    return s;
  // The metadata: the runtime's checks, which Kernel::launch runs too.
  return checkPagedKvMetadata(p.batch, p.pageSize, p.maxPages, p.numPages,
                              p.blockTable, p.cacheSeqlens);
}

Status fa::checkPagedData(const PagedProblem &p, const AttentionData &d) {
  if (Status s = checkPagedProblem(p); !s.ok())
    return s;
  if (d.q.size() != p.qElements() || d.k.size() != p.cacheElements() ||
      d.v.size() != p.cacheElements())
    return invalid("paged data has " + std::to_string(d.q.size()) + "/" +
                   std::to_string(d.k.size()) + "/" +
                   std::to_string(d.v.size()) +
                   " elements for Q/K cache/V cache, the problem needs " +
                   std::to_string(p.qElements()) + "/" +
                   std::to_string(p.cacheElements()) + "/" +
                   std::to_string(p.cacheElements()));
  return Status::success();
}

Status fa::checkVarlenProblem(const VarlenProblem &p) {
  if (p.batch < 1 || p.headsQ < 1 || p.headsKv < 1 || p.headDim < 1)
    return invalid("invalid varlen problem: B=" + str(p.batch) +
                   " Hq=" + str(p.headsQ) + " Hkv=" + str(p.headsKv) +
                   " D=" + str(p.headDim) + " (all must be at least 1)");
  if (Status s = checkHeads("varlen", p.headsQ, p.headsKv); !s.ok())
    return s;
  if (Status s =
          checkWindowSoftcap("varlen", p.windowLeft, p.windowRight, p.softcap);
      !s.ok())
    return s;
  if (Status s = checkHeadParams("varlen", p.headsQ, p.alibiSlopes, p.sinks);
      !s.ok())
    return s;
  if (Status s = checkBytes(
          "varlen", {{"Q and O (total_q*Hq*D elements)",
                      checkedProduct({p.totalQ, p.headsQ, p.headDim, 8})},
                     {"K and V (total_k*Hkv*D elements)",
                      checkedProduct({p.totalK, p.headsKv, p.headDim, 8})}});
      !s.ok())
    return s;
  // The metadata: the runtime's checks, which Kernel::launch runs too.
  return checkVarlenMetadata(p.batch, p.totalQ, p.totalK, p.maxSeqlenQ,
                             p.maxSeqlenK, p.cuSeqlensQ, p.cuSeqlensK);
}

Status fa::checkVarlenData(const VarlenProblem &p, const AttentionData &d) {
  if (Status s = checkVarlenProblem(p); !s.ok())
    return s;
  if (d.q.size() != p.qElements() || d.k.size() != p.kvElements() ||
      d.v.size() != p.kvElements())
    return invalid(
        "varlen data has " + std::to_string(d.q.size()) + "/" +
        std::to_string(d.k.size()) + "/" + std::to_string(d.v.size()) +
        " elements for Q/K/V, the problem needs " +
        std::to_string(p.qElements()) + "/" + std::to_string(p.kvElements()) +
        "/" + std::to_string(p.kvElements()));
  return Status::success();
}

//===----------------------------------------------------------------------===//
// Generators
//===----------------------------------------------------------------------===//

static double defaultScale(double scale, int64_t headDim) {
  return scale != 0 || headDim < 1 ? scale : 1.0 / std::sqrt(double(headDim));
}

Expected<PagedProblem> fa::generatePagedProblem(const PagedGeneratorOptions &o,
                                                uint64_t seed) {
  const std::string what = "paged generator: ";
  const bool given = !o.seqlens.empty();
  if (!given && (o.minSeqlenK < 0 || o.minSeqlenK > o.maxSeqlenK ||
                 o.maxSeqlenK > std::numeric_limits<int32_t>::max()))
    return invalid(what + "[" + str(o.minSeqlenK) + ", " + str(o.maxSeqlenK) +
                   "] is not a range of int32 lengths");
  if (o.sharedPrefixPages < 0 || o.unusedPages < 0 || o.maxPages < 0)
    return invalid(what + "shared_prefix_pages = " + str(o.sharedPrefixPages) +
                   ", unused_pages = " + str(o.unusedPages) + ", max_pages = " +
                   str(o.maxPages) + " must not be negative");
  if (o.batch < 1 || o.batch > (int64_t(1) << 24))
    return invalid(what + "B = " + str(o.batch) + " is not in [1, 2^24]");
  if (given && int64_t(o.seqlens.size()) != o.batch)
    return invalid(what + str(int64_t(o.seqlens.size())) +
                   " lengths given for B = " + str(o.batch));
  for (size_t b = 0; b < o.seqlens.size(); ++b)
    if (o.seqlens[b] < 0)
      return invalid("cache_seqlens[" + str(int64_t(b)) +
                     "] = " + str(o.seqlens[b]) + " is negative");
  // Checked here as well as by checkPagedProblem: the drawing needs it.
  if (o.pageSize < 1)
    return checkPagedKvMetadata(1, o.pageSize, 1, 1, {}, {});
  const int64_t ps = o.pageSize;
  // Page size 1 leaves no page partly filled.
  const bool partial = o.partialLastPage && ps > 1 && !given;
  if (partial && o.minSeqlenK == o.maxSeqlenK && o.minSeqlenK > 0 &&
      o.minSeqlenK % ps == 0)
    return invalid(what + "no length in [" + str(o.minSeqlenK) + ", " +
                   str(o.maxSeqlenK) + "] leaves the last page of " + str(ps) +
                   " partly filled");

  Sampler sampler(seed);
  PagedProblem p;
  p.batch = o.batch;
  p.headsQ = o.headsQ;
  p.headsKv = o.headsKv;
  p.seqQ = o.seqQ;
  p.headDim = o.headDim;
  p.pageSize = ps;
  p.causal = o.causal;
  p.scale = defaultScale(o.scale, o.headDim);
  p.windowLeft = o.windowLeft;
  p.windowRight = o.windowRight;
  p.softcap = o.softcap;
  p.alibiSlopes = o.alibiSlopes;
  p.sinks = o.sinks;

  // Lengths: given, or drawn (then the edge lengths put in).
  if (given) {
    p.cacheSeqlens = o.seqlens;
  } else {
    for (int64_t b = 0; b < o.batch; ++b) {
      int64_t length = sampler.integer(o.minSeqlenK, o.maxSeqlenK);
      if (partial && length > 0 && length % ps == 0)
        length = length - 1 >= std::max<int64_t>(o.minSeqlenK, 1) ? length - 1
                                                                  : length + 1;
      p.cacheSeqlens.push_back(int32_t(length));
    }
    if (o.edgeLengths && o.batch > 1) {
      std::vector<int64_t> where(size_t(o.batch));
      for (int64_t b = 0; b < o.batch; ++b)
        where[size_t(b)] = b;
      sampler.shuffle(where);
      // An empty sequence, the longest one (its last page partly filled),
      // a single key; at least one drawn length stays.
      int64_t longest = o.maxSeqlenK;
      if (partial && longest % ps == 0 && longest - 1 >= o.minSeqlenK)
        longest -= 1;
      const int64_t edges[] = {0, longest, 1};
      for (size_t e = 0; e < 3 && int64_t(e) + 1 < o.batch; ++e)
        p.cacheSeqlens[size_t(where[e])] = int32_t(edges[e]);
    }
  }
  std::vector<int64_t> pages(size_t(o.batch));
  int64_t mostPages = 0;
  for (int64_t b = 0; b < o.batch; ++b) {
    pages[size_t(b)] = pagesFor(p.cacheSeqlens[size_t(b)], ps);
    mostPages = std::max(mostPages, pages[size_t(b)]);
  }

  // Pages: shared prefix pages, then each sequence's own, all drawn in
  // order from a permutation of the cache's pages (random, or the identity
  // without shufflePages); the pages left over are the unused ones.
  const int64_t shared = std::min(o.sharedPrefixPages, mostPages);
  int64_t used = shared;
  for (int64_t n : pages)
    used += n - std::min(shared, n);
  p.numPages = std::max<int64_t>(1, used + o.unusedPages);
  if (p.numPages > (int64_t(1) << 28))
    return invalid(what + str(p.numPages) + " pages are above 2^28");
  p.maxPages = o.maxPages ? o.maxPages : std::max<int64_t>(1, mostPages);
  std::vector<int32_t> order(size_t(p.numPages));
  for (int64_t i = 0; i < p.numPages; ++i)
    order[size_t(i)] = int32_t(i);
  if (o.shufflePages)
    sampler.shuffle(order);
  size_t next = size_t(shared);
  if (auto entries = checkedProduct({p.batch, p.maxPages});
      !entries || *entries > (int64_t(1) << 28))
    return invalid(what + "block_table of B * max_pages = " + str(p.batch) +
                   " * " + str(p.maxPages) + " entries is above 2^28");
  for (int64_t b = 0; b < o.batch; ++b)
    next += size_t(
        std::max<int64_t>(0, std::min(pages[size_t(b)], p.maxPages) - shared));
  const int32_t pad =
      o.padWithUnusedPage && next < order.size() ? order[next] : o.padEntry;
  next = size_t(shared);
  p.blockTable.assign(size_t(p.batch * p.maxPages), pad);
  for (int64_t b = 0; b < o.batch; ++b)
    for (int64_t j = 0; j < std::min(pages[size_t(b)], p.maxPages); ++j)
      p.blockTable[size_t(b * p.maxPages + j)] =
          j < shared ? order[size_t(j)] : order[next++];

  if (Status s = checkPagedProblem(p); !s.ok())
    return s;
  return p;
}

Expected<PagedProblem> fa::pagedProblemFor(const AttentionProblem &dense,
                                           const PagedCacheOptions &o,
                                           uint64_t seed) {
  const AttentionShape &sh = dense.shape;
  const int64_t capacity = sh.seqK;
  if (o.pageSize < 1)
    return checkPagedKvMetadata(1, o.pageSize, 1, 1, {}, {});
  if (capacity < 1 || capacity > std::numeric_limits<int32_t>::max())
    return invalid("the cache capacity Lk = " + str(capacity) +
                   " is not in [1, 2147483647] (cache_seqlens are int32)");
  if (!o.cacheSeqlens.empty() && int64_t(o.cacheSeqlens.size()) != sh.batch)
    return invalid("cache_seqlens has " + str(int64_t(o.cacheSeqlens.size())) +
                   " lengths, B = " + str(sh.batch));
  for (size_t b = 0; b < o.cacheSeqlens.size(); ++b)
    if (o.cacheSeqlens[b] > capacity)
      return invalid("cache_seqlens[" + str(int64_t(b)) +
                     "] = " + str(o.cacheSeqlens[b]) +
                     " is above the cache's capacity Lk = " + str(capacity));
  PagedGeneratorOptions g;
  g.batch = sh.batch;
  g.headsQ = sh.headsQ;
  g.headsKv = sh.headsKv;
  g.seqQ = sh.seqQ;
  g.headDim = dense.headDim;
  g.pageSize = o.pageSize;
  g.seqlens = o.cacheSeqlens;
  g.minSeqlenK = 1;
  g.maxSeqlenK = capacity;
  g.edgeLengths = true;
  g.maxPages = pagesFor(capacity, o.pageSize);
  g.sharedPrefixPages = o.sharePages ? std::max<int64_t>(1, g.maxPages / 2) : 0;
  g.unusedPages = o.unusedPages;
  g.shufflePages = o.shufflePages;
  g.padWithUnusedPage = true;
  g.causal = dense.causal;
  g.scale = dense.scale;
  g.windowLeft = dense.windowLeft;
  g.windowRight = dense.windowRight;
  g.softcap = dense.softcap;
  g.alibiSlopes = dense.alibiSlopes;
  g.sinks = dense.sinks;
  return generatePagedProblem(g, seed);
}

Expected<VarlenProblem>
fa::generateVarlenProblem(const VarlenGeneratorOptions &o, uint64_t seed) {
  const std::string what = "varlen generator: ";
  const int64_t int32Max = std::numeric_limits<int32_t>::max();
  if (o.maxSeqlenQ < 0 || o.maxSeqlenK < 0 || o.maxSeqlenQ > int32Max ||
      o.maxSeqlenK > int32Max)
    return invalid(what + "max_seqlen_q = " + str(o.maxSeqlenQ) +
                   ", max_seqlen_k = " + str(o.maxSeqlenK) +
                   " are not lengths in [0, 2147483647]");
  if (o.batch < 1 || o.batch > (int64_t(1) << 24))
    return invalid(what + "B = " + str(o.batch) + " is not in [1, 2^24]");
  if (o.edgeLengths && (o.maxSeqlenQ < 1 || o.maxSeqlenK < 1))
    return invalid(what + "the edge lengths need max_seqlen_q and "
                          "max_seqlen_k of at least 1");
  Sampler sampler(seed);
  std::vector<int32_t> lq(size_t(o.batch)), lk(size_t(o.batch));
  for (int64_t b = 0; b < o.batch; ++b) {
    lq[size_t(b)] = int32_t(sampler.integer(0, o.maxSeqlenQ));
    lk[size_t(b)] = o.sameLengths ? lq[size_t(b)]
                                  : int32_t(sampler.integer(0, o.maxSeqlenK));
  }
  if (o.edgeLengths) {
    std::vector<int64_t> where(size_t(o.batch));
    for (int64_t b = 0; b < o.batch; ++b)
      where[size_t(b)] = b;
    sampler.shuffle(where);
    // (Lq, Lk); -2: the drawn length as it is; -1: the drawn length, at
    // least 1.
    std::vector<std::pair<int32_t, int32_t>> edges;
    if (o.sameLengths)
      edges = {{0, 0}, {1, 1}};
    else
      edges = {{0, -2}, {-1, 0}, {1, -1}, {-1, 1}};
    for (size_t e = 0; e < edges.size() && e < where.size(); ++e) {
      const size_t b = size_t(where[e]);
      auto [q, k] = edges[e];
      lq[b] = q >= 0 ? q : q == -1 ? std::max<int32_t>(1, lq[b]) : lq[b];
      lk[b] = k >= 0 ? k : k == -1 ? std::max<int32_t>(1, lk[b]) : lk[b];
    }
  }
  VarlenProblem p =
      VarlenProblem::fromLengths(o.headsQ, o.headsKv, o.headDim, lq, lk,
                                 o.causal, defaultScale(o.scale, o.headDim));
  p.windowLeft = o.windowLeft;
  p.windowRight = o.windowRight;
  p.softcap = o.softcap;
  p.alibiSlopes = o.alibiSlopes;
  p.sinks = o.sinks;
  if (Status s = checkVarlenProblem(p); !s.ok())
    return s;
  return p;
}

Expected<VarlenProblem> fa::varlenProblemFor(const AttentionProblem &dense,
                                             const VarlenOptions &o,
                                             uint64_t seed) {
  const AttentionShape &sh = dense.shape;
  const int64_t int32Max = std::numeric_limits<int32_t>::max();
  const std::pair<const char *, int64_t> bounds[] = {{"q", sh.seqQ},
                                                     {"k", sh.seqK}};
  for (const auto &[which, bound] : bounds)
    if (bound < 1 || bound > int32Max)
      return invalid("max_seqlen_" + std::string(which) + " = " + str(bound) +
                     " (the shape's L" + which +
                     ") is not in [1, 2147483647] (cu_seqlens are int32)");
  const std::vector<int32_t> *given[] = {&o.seqlensQ, &o.seqlensK};
  for (int i = 0; i < 2; ++i) {
    const std::vector<int32_t> &l = *given[i];
    const std::string name = std::string("seqlens_") + bounds[i].first;
    if (!l.empty() && int64_t(l.size()) != sh.batch)
      return invalid(name + " has " + str(int64_t(l.size())) +
                     " lengths, B = " + str(sh.batch));
    for (size_t b = 0; b < l.size(); ++b) {
      const std::string entry =
          name + "[" + str(int64_t(b)) + "] = " + str(l[b]);
      if (l[b] < 0)
        return invalid(entry + " is negative");
      if (l[b] > bounds[i].second)
        return invalid(entry + " is above max_seqlen_" + bounds[i].first +
                       " = " + str(bounds[i].second) + " (the shape's L" +
                       bounds[i].first + ")");
    }
  }
  // Drawn lists: both drawn (with the edge lengths) and the given ones put
  // in their place.
  VarlenGeneratorOptions g;
  g.batch = sh.batch;
  g.headsQ = sh.headsQ;
  g.headsKv = sh.headsKv;
  g.headDim = dense.headDim;
  g.maxSeqlenQ = sh.seqQ;
  g.maxSeqlenK = sh.seqK;
  g.edgeLengths = true;
  g.causal = dense.causal;
  g.scale = dense.scale;
  g.windowLeft = dense.windowLeft;
  g.windowRight = dense.windowRight;
  g.softcap = dense.softcap;
  g.alibiSlopes = dense.alibiSlopes;
  g.sinks = dense.sinks;
  Expected<VarlenProblem> drawn = generateVarlenProblem(g, seed);
  if (!drawn)
    return drawn.takeStatus();
  std::vector<int32_t> lengths[2];
  for (int i = 0; i < 2; ++i) {
    const std::vector<int32_t> &cu = i ? drawn->cuSeqlensK : drawn->cuSeqlensQ;
    if (!given[i]->empty()) {
      lengths[i] = *given[i];
      continue;
    }
    for (int64_t b = 0; b < sh.batch; ++b)
      lengths[i].push_back(cu[size_t(b + 1)] - cu[size_t(b)]);
  }
  VarlenProblem p = VarlenProblem::fromLengths(
      sh.headsQ, sh.headsKv, dense.headDim, lengths[0], lengths[1],
      dense.causal, drawn->scale);
  p.windowLeft = dense.windowLeft;
  p.windowRight = dense.windowRight;
  p.softcap = dense.softcap;
  p.alibiSlopes = dense.alibiSlopes;
  p.sinks = dense.sinks;
  // The shape's lengths are the bounds (the kernel's grid), whatever the
  // longest sequence.
  p.maxSeqlenQ = sh.seqQ;
  p.maxSeqlenK = sh.seqK;
  for (int i = 0; i < 2; ++i)
    if ((i ? p.totalK : p.totalQ) > int32Max)
      return invalid(std::string("the ") + (i ? "keys" : "queries") +
                     " of the sequences add up to " +
                     str(i ? p.totalK : p.totalQ) +
                     ", above 2147483647 (cu_seqlens are int32)");
  if (Status s = checkVarlenProblem(p); !s.ok())
    return s;
  return p;
}

AttentionData fa::generatePagedInputs(const PagedProblem &p, DType dtype,
                                      Distribution dist, uint64_t seed) {
  AttentionData d;
  if (!checkPagedProblem(p).ok())
    return d;
  Sampler sampler(seed);
  fillValues(d.q, p.qElements(), dtype, dist, sampler);
  fillValues(d.k, p.cacheElements(), dtype, dist, sampler);
  fillValues(d.v, p.cacheElements(), dtype, dist, sampler);
  return d;
}

AttentionData fa::generateVarlenInputs(const VarlenProblem &p, DType dtype,
                                       Distribution dist, uint64_t seed) {
  AttentionData d;
  if (!checkVarlenProblem(p).ok())
    return d;
  Sampler sampler(seed);
  fillValues(d.q, p.qElements(), dtype, dist, sampler);
  fillValues(d.k, p.kvElements(), dtype, dist, sampler);
  fillValues(d.v, p.kvElements(), dtype, dist, sampler);
  return d;
}

/// poisonUnreadCacheRows of the caches `d.k`, `d.v` of `p` (checked).
static int64_t poisonCache(const PagedProblem &p, AttentionData &d) {
  // Per page, how many of its rows some sequence reads.
  std::vector<int64_t> read(size_t(p.numPages), 0);
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t length = p.cacheSeqlens[size_t(b)];
    for (int64_t j = 0; j < pagesFor(length, p.pageSize); ++j) {
      int64_t &rows = read[size_t(p.blockTable[size_t(b * p.maxPages + j)])];
      rows = std::max(rows, std::min(p.pageSize, length - j * p.pageSize));
    }
  }
  const int64_t rowElements = p.headsKv * p.headDim;
  const float nan = std::numeric_limits<float>::quiet_NaN();
  int64_t poisoned = 0;
  for (int64_t page = 0; page < p.numPages; ++page)
    for (int64_t row = read[size_t(page)]; row < p.pageSize; ++row) {
      const int64_t at = (page * p.pageSize + row) * rowElements;
      std::fill_n(d.k.begin() + at, rowElements, nan);
      std::fill_n(d.v.begin() + at, rowElements, nan);
      ++poisoned;
    }
  return poisoned;
}

Expected<int64_t> fa::poisonUnreadCacheRows(const PagedProblem &p,
                                            AttentionData &d) {
  if (Status s = checkPagedData(p, d); !s.ok())
    return s;
  return poisonCache(p, d);
}

Expected<int64_t> fa::poisonUnreadCacheRows(const MixedProblem &p,
                                            AttentionData &d) {
  if (Status s = checkMixedData(p, d); !s.ok())
    return s;
  return poisonCache(p.cache, d);
}

//===----------------------------------------------------------------------===//
// References
//===----------------------------------------------------------------------===//

template <typename T>
static AttentionResult<T> runPaged(const PagedProblem &p,
                                   const AttentionData &d, DType roundType,
                                   bool magnitude) {
  AttentionResult<T> out;
  if (!checkPagedData(p, d).ok())
    return out;
  out.o.assign(p.qElements(), T(0));
  out.lse.assign(p.lseElements(), T(0));
  if (magnitude)
    out.magnitude.assign(p.qElements(), T(0));
  const int64_t Hq = p.headsQ, Hkv = p.headsKv, D = p.headDim, Lq = p.seqQ;
  // A cache row is [Hkv, D]; a page is page_size rows.
  const int64_t rowStride = Hkv * D, pageStride = p.pageSize * rowStride;
  parallelFor(size_t(p.batch * Hq), [&](size_t bh) {
    const int64_t b = int64_t(bh) / Hq, h = int64_t(bh) % Hq;
    const int64_t hk = h / (Hq / Hkv);
    HeadTask<T> t;
    t.lq = Lq;
    t.lk = p.cacheSeqlens[size_t(b)];
    t.headDim = D;
    t.causal = p.causal;
    t.windowLeft = p.windowLeft;
    t.windowRight = p.windowRight;
    t.scale = p.scale;
    t.softcap = p.softcap;
    if (!p.alibiSlopes.empty())
      t.alibiSlope = p.alibiSlopes[size_t(h)];
    t.hasSink = !p.sinks.empty();
    if (t.hasSink)
      t.sink = p.sinks[size_t(h)];
    t.q = d.q.data() + ((b * Hq + h) * Lq) * D;
    t.qStride = D;
    const int32_t *pages = p.blockTable.data() + b * p.maxPages;
    t.k =
        KeyRows{d.k.data() + hk * D, rowStride, pages, p.pageSize, pageStride};
    t.v =
        KeyRows{d.v.data() + hk * D, rowStride, pages, p.pageSize, pageStride};
    t.o = out.o.data() + ((b * Hq + h) * Lq) * D;
    t.oStride = D;
    t.lse = out.lse.data() + (b * Hq + h) * Lq;
    t.lseStride = 1;
    if (magnitude)
      t.magnitude = out.magnitude.data() + ((b * Hq + h) * Lq) * D;
    std::vector<T> scores(size_t(t.lk));
    attentionRows(t, roundType, scores);
  });
  return out;
}

template <typename T>
static AttentionResult<T> runVarlen(const VarlenProblem &p,
                                    const AttentionData &d, DType roundType,
                                    bool magnitude) {
  AttentionResult<T> out;
  if (!checkVarlenData(p, d).ok())
    return out;
  out.o.assign(p.qElements(), T(0));
  out.lse.assign(p.lseElements(), T(0));
  if (magnitude)
    out.magnitude.assign(p.qElements(), T(0));
  const int64_t Hq = p.headsQ, Hkv = p.headsKv, D = p.headDim;
  parallelFor(size_t(p.batch * Hq), [&](size_t bh) {
    const int64_t b = int64_t(bh) / Hq, h = int64_t(bh) % Hq;
    const int64_t hk = h / (Hq / Hkv);
    const int64_t q0 = p.cuSeqlensQ[size_t(b)], k0 = p.cuSeqlensK[size_t(b)];
    HeadTask<T> t;
    t.lq = p.cuSeqlensQ[size_t(b + 1)] - q0;
    t.lk = p.cuSeqlensK[size_t(b + 1)] - k0;
    t.headDim = D;
    t.causal = p.causal;
    t.windowLeft = p.windowLeft;
    t.windowRight = p.windowRight;
    t.scale = p.scale;
    t.softcap = p.softcap;
    if (!p.alibiSlopes.empty())
      t.alibiSlope = p.alibiSlopes[size_t(h)];
    t.hasSink = !p.sinks.empty();
    if (t.hasSink)
      t.sink = p.sinks[size_t(h)];
    // Packed rows: a Q / O row is [Hq, D], a K / V row [Hkv, D].
    t.q = d.q.data() + (q0 * Hq + h) * D;
    t.qStride = Hq * D;
    t.k = KeyRows{d.k.data() + (k0 * Hkv + hk) * D, Hkv * D};
    t.v = KeyRows{d.v.data() + (k0 * Hkv + hk) * D, Hkv * D};
    t.o = out.o.data() + (q0 * Hq + h) * D;
    t.oStride = Hq * D;
    // LSE [Hq, total_q].
    t.lse = out.lse.data() + h * p.totalQ + q0;
    t.lseStride = 1;
    if (magnitude)
      t.magnitude = out.magnitude.data() + (q0 * Hq + h) * D;
    std::vector<T> scores(size_t(t.lk));
    attentionRows(t, roundType, scores);
  });
  return out;
}

AttentionResult<double> fa::referencePagedAttentionF64(const PagedProblem &p,
                                                       const AttentionData &d) {
  return runPaged<double>(p, d, DType::F32, /*magnitude=*/true);
}

AttentionResult<float> fa::naivePagedAttention(const PagedProblem &p,
                                               DType dtype,
                                               const AttentionData &d) {
  return runPaged<float>(p, d, dtype, /*magnitude=*/false);
}

AttentionResult<double>
fa::referenceVarlenAttentionF64(const VarlenProblem &p,
                                const AttentionData &d) {
  return runVarlen<double>(p, d, DType::F32, /*magnitude=*/true);
}

AttentionResult<float> fa::naiveVarlenAttention(const VarlenProblem &p,
                                                DType dtype,
                                                const AttentionData &d) {
  return runVarlen<float>(p, d, dtype, /*magnitude=*/false);
}

//===----------------------------------------------------------------------===//
// Per-sequence dense problems
//===----------------------------------------------------------------------===//

/// A dense B = 1 problem of these lengths with the mask and scores of
/// `like` (a paged or varlen problem); its data sized for it, or empty when
/// a length is 0.
template <typename Problem>
static DenseSequence denseSequence(const Problem &like, int64_t lq,
                                   int64_t lk) {
  DenseSequence s;
  s.problem.shape = AttentionShape{1, like.headsQ, like.headsKv, lq, lk};
  s.problem.headDim = like.headDim;
  s.problem.causal = like.causal;
  s.problem.scale = like.scale;
  s.problem.windowLeft = like.windowLeft;
  s.problem.windowRight = like.windowRight;
  s.problem.softcap = like.softcap;
  s.problem.alibiSlopes = like.alibiSlopes;
  s.problem.sinks = like.sinks;
  const int64_t Hq = like.headsQ, Hkv = like.headsKv, D = like.headDim;
  if (lq > 0 && lk > 0) {
    s.data.q.resize(size_t(Hq * lq * D));
    s.data.k.resize(size_t(Hkv * lk * D));
    s.data.v.resize(size_t(Hkv * lk * D));
  }
  return s;
}

Expected<std::vector<DenseSequence>>
fa::gatherPagedSequences(const PagedProblem &p, const AttentionData &d) {
  if (Status s = checkPagedData(p, d); !s.ok())
    return s;
  const int64_t Hq = p.headsQ, Hkv = p.headsKv, D = p.headDim, Lq = p.seqQ;
  std::vector<DenseSequence> out;
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t lk = p.cacheSeqlens[size_t(b)];
    DenseSequence s = denseSequence(p, Lq, lk);
    if (!s.data.q.empty()) {
      // Q [B, Hq, Lq, D]: sequence b is one contiguous block.
      std::copy_n(d.q.begin() + b * Hq * Lq * D, Hq * Lq * D, s.data.q.begin());
      for (int64_t j = 0; j < lk; ++j) {
        const int64_t page =
            p.blockTable[size_t(b * p.maxPages + j / p.pageSize)];
        const int64_t slot = j % p.pageSize;
        for (int64_t hk = 0; hk < Hkv; ++hk) {
          // Cache [num_pages, page_size, Hkv, D] -> dense [1, Hkv, Lk, D].
          const size_t from =
              size_t(((page * p.pageSize + slot) * Hkv + hk) * D);
          const size_t to = size_t((hk * lk + j) * D);
          std::copy_n(d.k.begin() + from, D, s.data.k.begin() + to);
          std::copy_n(d.v.begin() + from, D, s.data.v.begin() + to);
        }
      }
    }
    out.push_back(std::move(s));
  }
  return out;
}

Expected<std::vector<DenseSequence>>
fa::gatherVarlenSequences(const VarlenProblem &p, const AttentionData &d) {
  if (Status s = checkVarlenData(p, d); !s.ok())
    return s;
  const int64_t Hq = p.headsQ, Hkv = p.headsKv, D = p.headDim;
  std::vector<DenseSequence> out;
  for (int64_t b = 0; b < p.batch; ++b) {
    const int64_t q0 = p.cuSeqlensQ[size_t(b)], k0 = p.cuSeqlensK[size_t(b)];
    const int64_t lq = p.cuSeqlensQ[size_t(b + 1)] - q0;
    const int64_t lk = p.cuSeqlensK[size_t(b + 1)] - k0;
    DenseSequence s = denseSequence(p, lq, lk);
    if (!s.data.q.empty()) {
      // Packed [total, H, D] -> dense [1, H, L, D].
      for (int64_t i = 0; i < lq; ++i)
        for (int64_t h = 0; h < Hq; ++h)
          std::copy_n(d.q.begin() + ((q0 + i) * Hq + h) * D, D,
                      s.data.q.begin() + (h * lq + i) * D);
      for (int64_t j = 0; j < lk; ++j)
        for (int64_t hk = 0; hk < Hkv; ++hk) {
          const int64_t from = ((k0 + j) * Hkv + hk) * D;
          const int64_t to = (hk * lk + j) * D;
          std::copy_n(d.k.begin() + from, D, s.data.k.begin() + to);
          std::copy_n(d.v.begin() + from, D, s.data.v.begin() + to);
        }
    }
    out.push_back(std::move(s));
  }
  return out;
}
