//===- Kernel.cpp - Argument checking, packing and launch -----------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the one place where the runtime turns an attention
// call into the kernel ABI of KernelAbi.h: it checks sizes, strides and
// buffer extents against the manifest, packs the 44 words and computes the
// grid (ceil(R / block_m), Hg, B) x block (threads, 1, 1), where R, Hg are
// Lq, Hq, or Lq * Hq/Hkv, Hkv for a gqa_packed kernel. A split-KV kernel
// (ABI version 2) takes 11 words more, the workspace descriptors and S
// (SplitKv.cpp), has grid x ceil(R / block_m) * S, and is followed by its
// combine kernel on (ceil(Lq / its block_m), Hq, B) with the same words. A
// paged kernel (ABI version 3, split-KV or not) takes 12 words more, the
// block table and sequence length descriptors, the page size and the table's
// row stride; its K and V are caches [num_pages, page_size, Hkv, D], and its
// metadata is checked on the host first (PagedKv.cpp). A varlen kernel (ABI
// version 4, split-KV or not) takes 10 words more than version 3, the
// cu_seqlens_q and cu_seqlens_k descriptors (its words 55-66 null); its Q,
// O are packed [total_q, Hq, D], K, V [total_k, Hkv, D], LSE [Hq, total_q],
// its Lq and Lk are max_seqlen_q and max_seqlen_k, and its cu_seqlens are
// checked on the host first (Varlen.cpp). A mixed prefill/decode kernel
// (version 4, manifest paged and varlen) takes both: its Q, O and LSE are
// packed as a varlen kernel's, its K and V the caches of a paged one, words
// 55-71 are packed and cu_seqlens_k (72-76) is null; its cache is checked
// as a paged launch's and its cu_seqlens_q and queries per sequence
// (Lq_b <= cache_seqlens[b]) by checkMixedMetadata.
//
// Inputs (Q, K, V) may alias and broadcast (zero strides) freely. Outputs may
// not: O's and LSE's strides must map different elements to different
// addresses, and neither output buffer may be passed as another operand.
//
//===----------------------------------------------------------------------===//

#include "core/Backend.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <tuple>
#include <vector>

using namespace fa;
using namespace fa::detail;

static Status invalid(const std::string &message) {
  return Status::error(ErrorCode::InvalidArgument, message);
}

/// Bytes needed to hold a [n0, n1, n2, inner] view with strides (s0, s1, s2,
/// 1): one past the largest offset touched. Saturates to UINT64_MAX.
/// The largest element offset a kernel with 32-bit index arithmetic may
/// form into a tensor of `elementBytes`-byte elements: int32's maximum,
/// and that of uint32 in bytes (gfx906's kernels address global memory as
/// a base in SGPRs plus a 32-bit byte offset: LowerToRocdl.cpp's
/// useByteOffsets). 16-bit tensors reach the first, f32 and i32 ones the
/// second (2^30 - 1).
static int64_t indexLimit(size_t elementBytes) {
  return std::min<int64_t>(INT32_MAX, int64_t(UINT32_MAX / elementBytes));
}

static uint64_t extentBytes(int64_t n0, int64_t n1, int64_t n2, int64_t inner,
                            int64_t s0, int64_t s1, int64_t s2,
                            size_t elemBytes) {
  unsigned __int128 last = (unsigned __int128)(n0 - 1) * uint64_t(s0) +
                           (unsigned __int128)(n1 - 1) * uint64_t(s1) +
                           (unsigned __int128)(n2 - 1) * uint64_t(s2) +
                           uint64_t(inner);
  unsigned __int128 bytes = last * elemBytes;
  return bytes > UINT64_MAX ? UINT64_MAX : uint64_t(bytes);
}

namespace {
/// One dimension of a strided view.
struct Dim {
  const char *name = "";
  int64_t extent = 0;
  int64_t stride = 0;
};
} // namespace

/// Empty if no two elements of the view `dims` (innermost first) share an
/// address, else why they may. The test is the standard sufficient one: sorted
/// by stride, each dimension of extent > 1 must step over everything the
/// dimensions inside it span: stride_i >= 1 + sum_j stride_j * (n_j - 1).
static std::string overlapReason(std::initializer_list<Dim> dims) {
  // At most four dimensions; no allocation unless there is something to say
  // (this runs on every launch).
  std::array<Dim, 4> sorted;
  size_t n = 0;
  for (const Dim &d : dims)
    if (d.extent > 1 && n < sorted.size())
      sorted[n++] = d;
  std::stable_sort(
      sorted.begin(), sorted.begin() + n,
      [](const Dim &a, const Dim &b) { return a.stride < b.stride; });
  unsigned __int128 span = 0; // largest offset reached by the inner dims
  for (size_t i = 0; i < n; ++i) {
    const Dim &d = sorted[i];
    if ((unsigned __int128)d.stride < span + 1) {
      std::string inner;
      for (size_t j = 0; j < i; ++j)
        inner += (j ? ", " : "") + std::string(sorted[j].name);
      uint64_t need = uint64_t(span + 1);
      return "the " + std::string(d.name) + " stride " +
             std::to_string(d.stride) + " must be at least " +
             std::to_string(need) +
             (inner.empty() ? std::string() : " to step over " + inner);
    }
    span += (unsigned __int128)d.stride * uint64_t(d.extent - 1);
  }
  return "";
}

Expected<PackedLaunch> fa::packAttentionArgs(const KernelInfo &kernel,
                                             const AttentionArgs &args,
                                             const DeviceLimits &limits,
                                             const KernelInfo *combine,
                                             int64_t kvSplits,
                                             bool trustDeviceMetadata) {
  if (kernel.isCombine())
    return invalid("kernel '" + kernel.name +
                   "' is a combine kernel: it runs after its split kernel, "
                   "not on its own");
  if (kernel.splitKv && (!combine || !combine->isCombine()))
    return invalid("kernel '" + kernel.name +
                   "' is a split-KV kernel: its launch needs its combine "
                   "kernel '" +
                   kernel.combine + "'");
  if (!kernel.splitKv && combine)
    return invalid("kernel '" + kernel.name +
                   "' is not a split-KV kernel: it has no combine kernel");
  const uint32_t numWords = fa_kernel_abi_words(
      uint32_t(kernel.abiVersion), kernel.trace, kernel.hasHeadParams());
  const bool mixedKernel = kernel.paged && kernel.varlen;
  const int64_t version = kernel.varlen    ? 4
                          : kernel.paged   ? 3
                          : kernel.splitKv ? 2
                                           : 1;
  if (numWords == 0 || kernel.abiVersion != version)
    return invalid("kernel '" + kernel.name + "' has kernel ABI version " +
                   std::to_string(kernel.abiVersion) +
                   (mixedKernel      ? ", not 4 (mixed batches: paged and "
                                       "varlen)"
                    : kernel.paged   ? ", not 3 (paged K/V)"
                    : kernel.varlen  ? ", not 4 (variable-length batches)"
                    : kernel.splitKv ? ", not 2 (split-KV)"
                                     : ", not 1 (dense)"));
  if (args.trace && !kernel.trace)
    return invalid("kernel '" + kernel.name +
                   "' was compiled without --trace: it takes no trace "
                   "buffer (AttentionArgs::trace)");
  // The head parameters (KernelAbi.h, "Head parameters"), each exactly
  // when the manifest says so.
  for (const auto &[field, manifest, buffer, what] :
       {std::tuple<const char *, bool, const Buffer *, const char *>{
            "alibiSlopes", kernel.alibi, args.alibiSlopes, "alibi"},
        {"sinks", kernel.sinks, args.sinks, "sinks"}}) {
    const std::string operand =
        std::string(what) == "alibi" ? "alibi_slopes" : what;
    if (manifest && !buffer)
      return invalid("kernel '" + kernel.name + "' takes " + operand +
                     " (manifest " + what + "): pass AttentionArgs::" + field);
    if (!manifest && buffer)
      return invalid("kernel '" + kernel.name + "' takes no " + operand +
                     " (its manifest does not say " + what +
                     "): pass no AttentionArgs::" + field);
  }
  // A mixed kernel takes both (VarlenArgs: cu_seqlens_q over the cache).
  if (mixedKernel && (!args.paged || !args.varlen))
    return invalid("kernel '" + kernel.name +
                   "' takes a mixed prefill/decode batch (its manifest says "
                   "\"paged\" and \"varlen\"): its launch needs both "
                   "AttentionArgs::paged (the cache) and "
                   "AttentionArgs::varlen (cu_seqlens_q)");
  if (!mixedKernel && args.paged && args.varlen)
    return invalid("kernel '" + kernel.name +
                   "' does not take a mixed batch (AttentionArgs::paged and "
                   "::varlen together): that needs a kernel whose manifest "
                   "says both \"paged\" and \"varlen\"");
  if (mixedKernel &&
      (args.varlen->cuSeqlensK || args.varlen->hostCuSeqlensK.size != 0))
    return invalid("kernel '" + kernel.name +
                   "' takes a mixed batch, whose keys are cache_seqlens: it "
                   "takes no cu_seqlens_k (pass VarlenArgs::cuSeqlensK null "
                   "and hostCuSeqlensK empty)");
  if (kernel.paged && !args.paged)
    return invalid("kernel '" + kernel.name +
                   "' reads a paged K/V cache (ABI version 3): its launch "
                   "needs the block table, cache_seqlens and page size "
                   "(AttentionArgs::paged)");
  if (!kernel.paged && args.paged)
    return invalid("kernel '" + kernel.name +
                   "' reads a dense K/V (its manifest does not say \"paged\"): "
                   "it takes no block table (AttentionArgs::paged)");
  if (kernel.varlen && !args.varlen)
    return invalid("kernel '" + kernel.name +
                   "' takes a variable-length batch (ABI version 4): its "
                   "launch needs cu_seqlens_q, cu_seqlens_k, total_q and "
                   "total_k (AttentionArgs::varlen)");
  if (!kernel.varlen && args.varlen)
    return invalid("kernel '" + kernel.name +
                   "' takes a dense batch (its manifest does not say "
                   "\"varlen\"): it takes no cu_seqlens "
                   "(AttentionArgs::varlen)");
  const PagedKvArgs *pg = args.paged ? &*args.paged : nullptr;
  const VarlenArgs *vl = args.varlen ? &*args.varlen : nullptr;
  // A mixed batch: packed queries (vl) over a paged cache (pg).
  const bool mixed = pg && vl;
  const AttentionShape &sh = args.shape;
  const std::pair<const char *, int64_t> sizes[] = {{"B", sh.batch},
                                                    {"Hq", sh.headsQ},
                                                    {"Hkv", sh.headsKv},
                                                    {"Lq", sh.seqQ},
                                                    {"Lk", sh.seqK}};
  // A paged launch's Lk may be 0: every sequence empty; a varlen launch's
  // max_seqlen_k too: no sequence has keys.
  for (int i = 0; i < 5; ++i) {
    const int64_t least = (pg || vl) && i == 4 ? 0 : 1;
    if (sizes[i].second < least)
      return invalid(std::string("invalid shape: ") + sizes[i].first + " is " +
                     std::to_string(sizes[i].second) + ", must be at least " +
                     std::to_string(least));
  }
  // A paged launch's metadata, checked on the host before anything reads
  // it; its Lk is the longest sequence.
  // An enqueue without host copies trusts the device's: only what needs
  // no entry is checked.
  const bool pagedTrusted = pg && trustDeviceMetadata &&
                            pg->hostBlockTable.size == 0 &&
                            pg->hostCacheSeqlens.size == 0;
  if (pagedTrusted) {
    if (Status s = checkPagedKvMetadata(sh.batch, pg->pageSize, pg->maxPages,
                                        pg->numPages, pg->hostBlockTable,
                                        pg->hostCacheSeqlens,
                                        /*entries=*/false);
        !s.ok())
      return s;
    const std::optional<int64_t> rows = checkedMul(pg->maxPages, pg->pageSize);
    if (!rows || sh.seqK > *rows)
      return invalid("invalid shape: Lk is " + std::to_string(sh.seqK) +
                     ", more keys than max_pages * page_size = " +
                     std::to_string(pg->maxPages) + " * " +
                     std::to_string(pg->pageSize) +
                     " (a paged enqueue's Lk bounds cache_seqlens)");
  } else if (pg) {
    if (Status s = checkPagedKvMetadata(sh.batch, pg->pageSize, pg->maxPages,
                                        pg->numPages, pg->hostBlockTable,
                                        pg->hostCacheSeqlens);
        !s.ok())
      return s;
    int64_t longest = 0, which = 0;
    for (int64_t b = 0; b < sh.batch; ++b)
      if (pg->hostCacheSeqlens[size_t(b)] > longest) {
        longest = pg->hostCacheSeqlens[size_t(b)];
        which = b;
      }
    if (trustDeviceMetadata && sh.seqK < longest)
      return invalid("invalid shape: Lk is " + std::to_string(sh.seqK) +
                     ", but cache_seqlens[" + std::to_string(which) +
                     "] = " + std::to_string(longest) +
                     " (a paged enqueue's Lk bounds cache_seqlens)");
    if (!trustDeviceMetadata && sh.seqK != longest)
      return invalid("invalid shape: Lk is " + std::to_string(sh.seqK) +
                     ", but a paged launch's Lk is the longest sequence, "
                     "max(cache_seqlens) = " +
                     std::to_string(longest) +
                     (longest
                          ? " (cache_seqlens[" + std::to_string(which) + "])"
                          : std::string(" (every sequence is empty)")));
  }
  // A varlen launch's cu_seqlens, checked on the host before anything reads
  // them; its Lq and Lk are max_seqlen_q and max_seqlen_k.
  // A mixed batch's cu_seqlens_q, and each sequence's queries against its
  // keys where the host has both.
  if (mixed) {
    const bool trusted = trustDeviceMetadata && vl->hostCuSeqlensQ.size == 0;
    if (Status s = checkMixedMetadata(
            sh.batch, vl->totalQ, sh.seqQ, vl->hostCuSeqlensQ,
            pagedTrusted ? Int32Span() : pg->hostCacheSeqlens,
            /*entries=*/!trusted);
        !s.ok())
      return s;
  } else if (vl) {
    const bool trusted = trustDeviceMetadata &&
                         vl->hostCuSeqlensQ.size == 0 &&
                         vl->hostCuSeqlensK.size == 0;
    if (Status s = checkVarlenMetadata(
            sh.batch, vl->totalQ, vl->totalK, sh.seqQ, sh.seqK,
            vl->hostCuSeqlensQ, vl->hostCuSeqlensK, /*entries=*/!trusted);
        !s.ok())
      return s;
  }
  for (int i = 0; i < 5; ++i)
    if (kernel.staticSizes[i] >= 0 && sizes[i].second != kernel.staticSizes[i])
      return invalid(std::string("invalid shape: ") + sizes[i].first + " is " +
                     std::to_string(sizes[i].second) + ", but kernel '" +
                     kernel.name + "' was compiled for " + sizes[i].first +
                     "=" + std::to_string(kernel.staticSizes[i]));
  if (sh.headsQ % sh.headsKv != 0)
    return invalid("invalid shape: Hq (" + std::to_string(sh.headsQ) +
                   ") is not a multiple of Hkv (" + std::to_string(sh.headsKv) +
                   ")");

  AttentionStrides st = args.strides
                            ? *args.strides
                            : AttentionStrides::contiguous(sh, kernel.headDim);
  if (vl && !args.strides)
    st = varlenStrides(sh, kernel.headDim, vl->totalQ);
  if (pg && !args.strides)
    st.k = st.v = pagedCacheStrides(pg->pageSize, sh.headsKv, kernel.headDim);
  const std::pair<const char *, int64_t> strides[] = {
      {"q.batch", st.q.batch},    {"q.head", st.q.head},   {"q.row", st.q.row},
      {"k.batch", st.k.batch},    {"k.head", st.k.head},   {"k.row", st.k.row},
      {"v.batch", st.v.batch},    {"v.head", st.v.head},   {"v.row", st.v.row},
      {"o.batch", st.o.batch},    {"o.head", st.o.head},   {"o.row", st.o.row},
      {"lse.batch", st.lseBatch}, {"lse.head", st.lseHead}};
  for (const auto &[name, value] : strides)
    if (value < 0)
      return invalid(std::string("invalid stride ") + name + " = " +
                     std::to_string(value) + ": strides must be non-negative");
  // A varlen launch locates a sequence's rows through cu_seqlens: its
  // tensors are packed, one "batch" of total rows (a mixed batch's Q, O and
  // LSE; its K and V are caches, whose batch stride is the page's).
  if (vl)
    for (int i : {0, 3, 6, 9, 12})
      if ((!mixed || i == 0 || i == 9 || i == 12) && strides[i].second != 0)
        return invalid(std::string("invalid stride ") + strides[i].first +
                       " = " + std::to_string(strides[i].second) +
                       ": a varlen launch's batch strides are 0 (its "
                       "tensors are packed; cu_seqlens locate the "
                       "sequences)");

  // Outputs: no two elements at one address.
  int64_t d = kernel.headDim;
  // A varlen batch of no query rows has no output elements to overlap.
  const bool noOutput = vl && vl->totalQ == 0;
  std::string why = noOutput ? std::string()
                    : vl     ? overlapReason({{"D", d, 1},
                                              {"total_q", vl->totalQ, st.o.row},
                                              {"Hq", sh.headsQ, st.o.head}})
                             : overlapReason({{"D", d, 1},
                                              {"Lq", sh.seqQ, st.o.row},
                                              {"Hq", sh.headsQ, st.o.head},
                                              {"B", sh.batch, st.o.batch}});
  if (!why.empty() && vl)
    return invalid("strides of output O (" + std::to_string(st.o.head) + ", " +
                   std::to_string(st.o.row) +
                   ", 1) for packed [total_q=" + std::to_string(vl->totalQ) +
                   ", Hq=" + std::to_string(sh.headsQ) +
                   ", D=" + std::to_string(d) + "] overlap: " + why);
  if (!why.empty())
    return invalid("strides of output O (" + std::to_string(st.o.batch) + ", " +
                   std::to_string(st.o.head) + ", " + std::to_string(st.o.row) +
                   ", 1) for [B=" + std::to_string(sh.batch) +
                   ", Hq=" + std::to_string(sh.headsQ) +
                   ", Lq=" + std::to_string(sh.seqQ) +
                   ", D=" + std::to_string(d) + "] overlap: " + why);
  if (kernel.hasLse && vl) {
    why = noOutput ? std::string()
                   : overlapReason({{"total_q", vl->totalQ, 1},
                                    {"Hq", sh.headsQ, st.lseHead}});
    if (!why.empty())
      return invalid("strides of output LSE (" + std::to_string(st.lseHead) +
                     ", 1) for [Hq=" + std::to_string(sh.headsQ) +
                     ", total_q=" + std::to_string(vl->totalQ) +
                     "] overlap: " + why);
  } else if (kernel.hasLse) {
    why = overlapReason({{"Lq", sh.seqQ, 1},
                         {"Hq", sh.headsQ, st.lseHead},
                         {"B", sh.batch, st.lseBatch}});
    if (!why.empty())
      return invalid("strides of output LSE (" + std::to_string(st.lseBatch) +
                     ", " + std::to_string(st.lseHead) +
                     ", 1) for [B=" + std::to_string(sh.batch) +
                     ", Hq=" + std::to_string(sh.headsQ) +
                     ", Lq=" + std::to_string(sh.seqQ) + "] overlap: " + why);
  }

  // 32-bit index arithmetic: every element offset the kernel forms, up to
  // the last row of the last (partial) block, must fit in int32, and its
  // byte offset in uint32 (indexLimit).
  if (kernel.indexBits == 32) {
    const size_t eltBytes = dtypeBytes(kernel.dtype);
    int64_t block = std::max<int64_t>(kernel.blockM, kernel.blockN);
    auto rounded = [&](int64_t rows) {
      return (rows + block - 1) / block * block;
    };
    // A cache's rows are addressed within their page: the last row of the
    // last page is the farthest.
    auto kvOffset = [&](const TensorStrides &t) {
      return pg ? (pg->numPages - 1) * t.batch + (sh.headsKv - 1) * t.head +
                      (pg->pageSize - 1) * t.row + d
                : (sh.batch - 1) * t.batch + (sh.headsKv - 1) * t.head +
                      (rounded(sh.seqK) - 1) * t.row + d;
    };
    // A varlen sequence's tiles start at its first packed row: the last
    // sequence's last (partial) block reaches at most block - 1 rows past
    // the total.
    auto packedOffset = [&](int64_t total, int64_t heads,
                            const TensorStrides &t) {
      return (total + block - 2) * t.row + (heads - 1) * t.head + d;
    };
    // Q and O: the last query row; K and V: the last key row.
    auto queryOffset = [&](const TensorStrides &t) {
      return vl ? packedOffset(vl->totalQ, sh.headsQ, t)
                : (sh.batch - 1) * t.batch + (sh.headsQ - 1) * t.head +
                      (rounded(sh.seqQ) - 1) * t.row + d;
    };
    auto keyOffset = [&](const TensorStrides &t) {
      return vl && !pg ? packedOffset(vl->totalK, sh.headsKv, t)
                       : kvOffset(t);
    };
    const struct {
      const char *name;
      int64_t offset;
      size_t elementBytes;
    } largest[] = {
        {"Q", queryOffset(st.q), eltBytes},
        {"K", keyOffset(st.k), eltBytes},
        {"V", keyOffset(st.v), eltBytes},
        {"block_table", pg ? sh.batch * pg->maxPages : 0, sizeof(int32_t)},
        {"O", queryOffset(st.o), eltBytes},
        {"LSE",
         !kernel.hasLse ? 0
         : vl ? (sh.headsQ - 1) * st.lseHead + vl->totalQ + block - 1
              : (sh.batch - 1) * st.lseBatch + (sh.headsQ - 1) * st.lseHead +
                    rounded(sh.seqQ),
         sizeof(float)}};
    for (const auto &t : largest)
      if (t.offset > indexLimit(t.elementBytes))
        return invalid(std::string("kernel '") + kernel.name +
                       "' uses 32-bit index arithmetic (index_bits 32) but "
                       "the offsets into " +
                       t.name + " reach " + std::to_string(t.offset) +
                       " elements (limit " +
                       std::to_string(indexLimit(t.elementBytes)) +
                       "); compile it with fac --index-bits=64");
  }

  // Buffers: present, and large enough for shape x strides.
  size_t elem = dtypeBytes(kernel.dtype);
  struct Operand {
    const char *name;
    const Buffer *buffer;
    int64_t heads, rows;
    TensorStrides strides;
  } operands[] = {{"Q", args.q, sh.headsQ, sh.seqQ, st.q},
                  {"K", args.k, sh.headsKv, sh.seqK, st.k},
                  {"V", args.v, sh.headsKv, sh.seqK, st.v},
                  {"O", args.o, sh.headsQ, sh.seqQ, st.o}};
  PackedLaunch packed;
  uint64_t *w = packed.words.data();
  for (int i = 0; i < 4; ++i) {
    const Operand &op = operands[i];
    // K and V of a paged kernel: [num_pages, Hkv, page_size, D] in stride
    // terms (page, head, row within a page).
    const bool cache = pg && (i == 1 || i == 2);
    const int64_t outer = cache ? pg->numPages : vl ? 1 : sh.batch;
    // A varlen tensor: packed [total, H, D], rows through (head, row).
    const int64_t rows = cache ? pg->pageSize
                         : vl  ? (i == 1 || i == 2 ? vl->totalK : vl->totalQ)
                               : op.rows;
    uint64_t needed =
        rows == 0 ? 0
                  : extentBytes(outer, op.heads, rows, d, op.strides.batch,
                                op.strides.head, op.strides.row, elem);
    if (!op.buffer)
      return invalid(std::string("buffer ") + op.name + " is missing (needs " +
                     std::to_string(needed) + " bytes)");
    if (op.buffer->size() < needed)
      return invalid(
          std::string("buffer ") + op.name + " holds " +
          std::to_string(op.buffer->size()) + " bytes but " +
          (cache ? "the cache [num_pages=" + std::to_string(outer) +
                       ", page_size=" + std::to_string(rows) +
                       ", Hkv=" + std::to_string(op.heads)
           : vl ? std::string("packed [total_") +
                      (i == 1 || i == 2 ? "k=" : "q=") + std::to_string(rows) +
                      ", H=" + std::to_string(op.heads)
                : "[B=" + std::to_string(sh.batch) +
                      ", H=" + std::to_string(op.heads) +
                      ", L=" + std::to_string(op.rows)) +
          ", D=" + std::to_string(d) + "] of " + dtypeName(kernel.dtype) +
          " with strides (" + std::to_string(op.strides.batch) + ", " +
          std::to_string(op.strides.head) + ", " +
          std::to_string(op.strides.row) + ", 1) needs " +
          std::to_string(needed) + " bytes");
    uint64_t *desc = w + i * FA_ABI_WORDS_PER_BUFFER;
    desc[0] = op.buffer->address();
    desc[1] = op.buffer->address();
    desc[2] = 0;
    desc[3] = op.buffer->size() / elem;
    desc[4] = 1;
  }

  uint64_t *lse = w + FA_ABI_LSE;
  uint64_t lseNeeded =
      vl ? (vl->totalQ == 0 ? 0
                            : extentBytes(1, sh.headsQ, 1, vl->totalQ, 0,
                                          st.lseHead, 0, sizeof(float)))
         : extentBytes(sh.batch, sh.headsQ, 1, sh.seqQ, st.lseBatch, st.lseHead,
                       0, sizeof(float));
  if (kernel.hasLse && !args.lse)
    return invalid("kernel '" + kernel.name +
                   "' writes LSE: pass an LSE buffer (needs " +
                   std::to_string(lseNeeded) + " bytes)");
  if (!kernel.hasLse && args.lse)
    return invalid("kernel '" + kernel.name +
                   "' was compiled without an LSE output: pass no LSE buffer");
  if (args.lse) {
    if (args.lse->size() < lseNeeded && vl)
      return invalid("buffer LSE holds " + std::to_string(args.lse->size()) +
                     " bytes but [Hq=" + std::to_string(sh.headsQ) +
                     ", total_q=" + std::to_string(vl->totalQ) +
                     "] of f32 with strides (" + std::to_string(st.lseHead) +
                     ", 1) needs " + std::to_string(lseNeeded) + " bytes");
    if (args.lse->size() < lseNeeded)
      return invalid("buffer LSE holds " + std::to_string(args.lse->size()) +
                     " bytes but [B=" + std::to_string(sh.batch) +
                     ", Hq=" + std::to_string(sh.headsQ) +
                     ", Lq=" + std::to_string(sh.seqQ) +
                     "] of f32 with strides (" + std::to_string(st.lseBatch) +
                     ", " + std::to_string(st.lseHead) + ", 1) needs " +
                     std::to_string(lseNeeded) + " bytes");
    lse[0] = lse[1] = args.lse->address();
    lse[3] = args.lse->size() / sizeof(float);
  } else {
    lse[0] = lse[1] = 0;
    lse[3] = 0;
  }
  lse[2] = 0;
  lse[4] = 1;

  // A paged launch's metadata: int32 [B, max_pages] and [B] (max_pages is
  // the table's row stride).
  if (pg) {
    const struct {
      const char *name;
      const Buffer *buffer;
      int64_t entries;
      std::string dims;
      int firstWord;
    } metadata[] = {{"block_table", pg->blockTable, sh.batch * pg->maxPages,
                     "[B=" + std::to_string(sh.batch) +
                         ", max_pages=" + std::to_string(pg->maxPages) + "]",
                     FA_ABI_BLOCK_TABLE},
                    {"cache_seqlens", pg->cacheSeqlens, sh.batch,
                     "[B=" + std::to_string(sh.batch) + "]",
                     FA_ABI_CACHE_SEQLENS}};
    for (const auto &m : metadata) {
      const uint64_t needed = uint64_t(m.entries) > UINT64_MAX / sizeof(int32_t)
                                  ? UINT64_MAX
                                  : uint64_t(m.entries) * sizeof(int32_t);
      if (!m.buffer)
        return invalid(std::string("buffer ") + m.name + " is missing (needs " +
                       std::to_string(needed) + " bytes)");
      if (m.buffer->size() < needed)
        return invalid(std::string("buffer ") + m.name + " holds " +
                       std::to_string(m.buffer->size()) + " bytes but " +
                       m.dims + " of i32 needs " + std::to_string(needed) +
                       " bytes");
      uint64_t *desc = w + m.firstWord;
      desc[0] = desc[1] = m.buffer->address();
      desc[2] = 0;
      desc[3] = m.buffer->size() / sizeof(int32_t);
      if (kernel.indexBits == 32)
        desc[3] = std::min<uint64_t>(desc[3], uint64_t(INT32_MAX));
      desc[4] = 1;
    }
    w[FA_ABI_PAGE_SIZE] = uint64_t(pg->pageSize);
    w[FA_ABI_BLOCK_TABLE_STRIDE] = uint64_t(pg->maxPages);
  }

  // A varlen launch: null block table and lengths (pointer, offset and size
  // 0, stride 1; page size and table stride 0), then cu_seqlens_q and
  // cu_seqlens_k, int32 [B+1] each. A mixed launch: the paged words above,
  // cu_seqlens_q, and a null cu_seqlens_k (the kernel never reads it).
  if (vl) {
    if (!mixed) {
      w[FA_ABI_BLOCK_TABLE + 4] = w[FA_ABI_CACHE_SEQLENS + 4] = 1;
      w[FA_ABI_PAGE_SIZE] = w[FA_ABI_BLOCK_TABLE_STRIDE] = 0;
    } else {
      w[FA_ABI_CU_SEQLENS_K + 4] = 1;
    }
    const std::pair<const char *, const Buffer *> metadata[] = {
        {"cu_seqlens_q", vl->cuSeqlensQ}, {"cu_seqlens_k", vl->cuSeqlensK}};
    const int firstWord[] = {FA_ABI_CU_SEQLENS_Q, FA_ABI_CU_SEQLENS_K};
    const uint64_t needed = uint64_t(sh.batch + 1) * sizeof(int32_t);
    for (int m = 0; m < (mixed ? 1 : 2); ++m) {
      const auto &[name, buffer] = metadata[m];
      if (!buffer)
        return invalid(std::string("buffer ") + name + " is missing (needs " +
                       std::to_string(needed) + " bytes)");
      if (buffer->size() < needed)
        return invalid(std::string("buffer ") + name + " holds " +
                       std::to_string(buffer->size()) +
                       " bytes but [B+1=" + std::to_string(sh.batch + 1) +
                       "] of i32 needs " + std::to_string(needed) + " bytes");
      uint64_t *desc = w + firstWord[m];
      desc[0] = desc[1] = buffer->address();
      desc[2] = 0;
      desc[3] = buffer->size() / sizeof(int32_t);
      if (kernel.indexBits == 32)
        desc[3] = std::min<uint64_t>(desc[3], uint64_t(INT32_MAX));
      desc[4] = 1;
    }
  }

  // Outputs share memory with no other operand.
  const std::pair<const char *, const Buffer *> all[] = {
      {"Q", args.q},
      {"K", args.k},
      {"V", args.v},
      {"O", args.o},
      {"LSE", args.lse},
      {"block_table", pg ? pg->blockTable : nullptr},
      {"cache_seqlens", pg ? pg->cacheSeqlens : nullptr},
      {"cu_seqlens_q", vl ? vl->cuSeqlensQ : nullptr},
      {"cu_seqlens_k", vl ? vl->cuSeqlensK : nullptr}};
  // Each output against the operands before it, then the metadata.
  for (int out = 3; out < 5; ++out)
    for (int other : {0, 1, 2, 3, 5, 6, 7, 8})
      if ((other < out || other > 4) && all[out].second &&
          all[out].second == all[other].second)
        return invalid(std::string("buffer ") + all[out].first +
                       " is also passed as " + all[other].first +
                       ": an output must not share memory with another "
                       "operand");

  // The head words (KernelAbi.h, "Head parameters"): alibi_slopes and
  // sinks, f32 [Hq] each, a null descriptor for the one the kernel lacks.
  if (kernel.hasHeadParams()) {
    uint64_t *head = w + fa_abi_num_words(uint32_t(kernel.abiVersion));
    const uint64_t needed = uint64_t(sh.headsQ) * sizeof(float);
    for (const auto &[name, buffer, offset] :
         {std::tuple<const char *, const Buffer *, int>{
              "alibi_slopes", args.alibiSlopes, FA_ABI_ALIBI},
          {"sinks", args.sinks, FA_ABI_SINKS}}) {
      uint64_t *desc = head + offset;
      desc[4] = 1;
      if (!buffer)
        continue;
      if (buffer->size() < needed)
        return invalid(std::string("buffer ") + name + " holds " +
                       std::to_string(buffer->size()) +
                       " bytes but [Hq=" + std::to_string(sh.headsQ) +
                       "] of f32 needs " + std::to_string(needed) + " bytes");
      for (const auto &[output, out] :
           {std::pair<const char *, const Buffer *>{"O", args.o},
            {"LSE", args.lse}})
        if (out == buffer)
          return invalid(std::string("buffer ") + output +
                         " is also passed as " + name +
                         ": an output must not share memory with another "
                         "operand");
      desc[0] = desc[1] = buffer->address();
      desc[3] = buffer->size() / sizeof(float);
      if (kernel.indexBits == 32)
        desc[3] = std::min<uint64_t>(desc[3], uint64_t(INT32_MAX));
    }
  }

  // The trace words (KernelAbi.h, "Trace"): a null descriptor and row -1
  // when the launch asks for no trace.
  if (kernel.trace) {
    uint64_t *desc = w + fa_abi_num_words(uint32_t(kernel.abiVersion));
    uint64_t *row = desc + FA_ABI_TRACE_ROW;
    desc[4] = 1;
    row[0] = row[1] = row[2] = uint64_t(int64_t(-1));
    if (const TraceArgs *t = args.trace ? &*args.trace : nullptr) {
      const std::pair<const char *, std::pair<int64_t, int64_t>> where[] = {
          {"batch", {t->batch, sh.batch}},
          {"head", {t->head, sh.headsQ}},
          {"row", {t->row, sh.seqQ}}};
      for (const auto &[name, v] : where)
        if (v.first < 0 || v.first >= v.second)
          return invalid(std::string("traced ") + name + " " +
                         std::to_string(v.first) + " is outside [0, " +
                         std::to_string(v.second) + ")");
      const uint64_t needed =
          uint64_t(traceElements(kernel, sh)) * sizeof(float);
      if (!t->buffer)
        return invalid("buffer trace is missing (needs " +
                       std::to_string(needed) + " bytes)");
      if (t->buffer->size() < needed)
        return invalid(
            "buffer trace holds " + std::to_string(t->buffer->size()) +
            " bytes but " +
            std::to_string((sh.seqK + kernel.blockN - 1) / kernel.blockN) +
            " K/V blocks of 2 + D=" + std::to_string(d) + " f32 need " +
            std::to_string(needed) + " bytes");
      for (const Buffer *other :
           {args.q, args.k, args.v, static_cast<const Buffer *>(args.o),
            static_cast<const Buffer *>(args.lse)})
        if (other == t->buffer)
          return invalid("buffer trace is also passed as another operand: "
                         "an output must not share memory with another "
                         "operand");
      desc[0] = desc[1] = t->buffer->address();
      desc[3] = t->buffer->size() / sizeof(float);
      if (kernel.indexBits == 32)
        desc[3] = std::min<uint64_t>(desc[3], uint64_t(INT32_MAX));
      row[0] = uint64_t(t->batch);
      row[1] = uint64_t(t->head);
      row[2] = uint64_t(t->row);
    }
  }

  uint64_t *sizesOut = w + FA_ABI_SIZES;
  for (int i = 0; i < FA_ABI_NUM_SIZES; ++i)
    sizesOut[i] = uint64_t(sizes[i].second);
  uint64_t *stridesOut = w + FA_ABI_STRIDES;
  for (int i = 0; i < FA_ABI_NUM_STRIDES; ++i)
    stridesOut[i] = uint64_t(strides[i].second);

  // The descriptors' size words are 32-bit parameters there too.
  if (kernel.indexBits == 32)
    for (int i = 0; i < FA_ABI_NUM_BUFFERS; ++i) {
      uint64_t &size = w[i * FA_ABI_WORDS_PER_BUFFER + 3];
      size = std::min<uint64_t>(size, uint64_t(INT32_MAX));
    }

  // Split-KV: S and the workspace (bound later), whose offsets must fit the
  // index width too.
  Expected<KvSplitPlan> plan = planKvSplits(kernel, sh, limits, kvSplits);
  if (!plan)
    return plan.takeStatus();
  packed.numWords = numWords;
  packed.split = *plan;
  const int64_t S = plan->kvSplits;
  // A paged or varlen kernel that is not split-KV, and a split kernel that
  // writes O itself at S = 1: null workspace descriptors, S = 1.
  const bool combined = kernel.splitKv && !(kernel.splitDirect && S == 1);
  if (!combined && (pg || vl || kernel.splitKv)) {
    w[FA_ABI_WS_O + 4] = w[FA_ABI_WS_LSE + 4] = 1;
    w[FA_ABI_SPLITS] = 1;
  }
  if (kernel.splitKv) {
    w[FA_ABI_SPLITS] = uint64_t(S);
    if (kernel.indexBits == 32) {
      uint64_t wsO = plan->workspaceOBytes / sizeof(float);
      if (wsO > uint64_t(indexLimit(sizeof(float))))
        return invalid("kernel '" + kernel.name +
                       "' uses 32-bit index arithmetic (index_bits 32) but "
                       "its workspace O of " +
                       std::to_string(S) + " splits holds " +
                       std::to_string(wsO) + " elements (limit " +
                       std::to_string(indexLimit(sizeof(float))) +
                       "); use fewer splits or compile it with fac "
                       "--index-bits=64");
    }
  }

  const int64_t rows =
      kernel.gqaPacked ? sh.seqQ * (sh.headsQ / sh.headsKv) : sh.seqQ;
  const int64_t tiles = (rows + kernel.blockM - 1) / kernel.blockM;
  struct Launch {
    const KernelInfo *kernel = nullptr;
    int64_t grid[3] = {0, 0, 0};
    LaunchGeometry *out = nullptr;
  };
  std::array<Launch, 2> launches = {
      Launch{&kernel,
             {tiles * S, kernel.gqaPacked ? sh.headsKv : sh.headsQ, sh.batch},
             &packed.geometry},
      Launch{}};
  size_t numLaunches = 1;
  if (combined) {
    packed.combineGeometry.emplace();
    launches[numLaunches++] = {
        combine,
        {(sh.seqQ + combine->blockM - 1) / combine->blockM, sh.headsQ,
         sh.batch},
        &*packed.combineGeometry};
  }
  for (size_t li = 0; li < numLaunches; ++li) {
    const Launch &l = launches[li];
    const int64_t *grid = l.grid;
    for (int i = 0; i < 3; ++i)
      if (grid[i] > int64_t(limits.maxGrid[i]))
        return invalid(
            std::string(l.kernel == combine
                            ? "combine kernel '" + combine->name + "': "
                            : "") +
            "grid (" + std::to_string(grid[0]) + ", " +
            std::to_string(grid[1]) + ", " + std::to_string(grid[2]) +
            ") exceeds the device's limit (" +
            std::to_string(limits.maxGrid[0]) + ", " +
            std::to_string(limits.maxGrid[1]) + ", " +
            std::to_string(limits.maxGrid[2]) + ")" +
            (kernel.splitKv && l.kernel == &kernel
                 ? " (" + std::to_string(tiles) + " Q tiles x " +
                       std::to_string(S) + " K/V splits)"
                 : std::string()));
    for (int i = 0; i < 3; ++i)
      l.out->grid[i] = uint32_t(grid[i]);
    l.out->periodX = l.kernel == &kernel && kernel.splitKv ? uint32_t(S) : 1;
    l.out->block[0] = uint32_t(l.kernel->threads);
    l.out->ldsBytes = uint64_t(l.kernel->ldsBytes);
  }
  return packed;
}

int64_t fa::traceElements(const KernelInfo &kernel,
                          const AttentionShape &shape) {
  const int64_t blocks = (shape.seqK + kernel.blockN - 1) / kernel.blockN;
  return blocks * (FA_ABI_TRACE_STATS + kernel.headDim);
}

const KernelInfo &Kernel::info() const {
  return state->manifest.kernels[index];
}

const Manifest &Kernel::manifest() const { return state->manifest; }

Device Kernel::device() const { return Device(state->backend); }

namespace {
/// What launch() and enqueue() share: the checks before packing, in the
/// context of the kernel, its target and its device.
struct KernelCall {
  const detail::ModuleState &state;
  size_t index;
  const KernelInfo &k;
  const KernelInfo *combine = nullptr;
  int combineIndex = -1;

  Status withContext(Status s, const KernelInfo &kernel) const {
    return std::move(s)
        .withKernel(kernel.name)
        .withTarget(state.manifest.target)
        .withDevice(state.backend->name());
  }

  /// The combine-kernel refusal and the buffers' devices; then the words.
  Expected<PackedLaunch> pack(const AttentionArgs &args, int64_t kvSplits,
                              bool trustDeviceMetadata) {
    const std::vector<KernelInfo> &kernels = state.manifest.kernels;
    if (k.isCombine()) {
      const KernelInfo *owner = nullptr;
      for (const KernelInfo &other : kernels)
        if (!owner && other.splitKv && other.combine == k.name)
          owner = &other;
      return withContext(
          invalid(owner ? "kernel '" + k.name +
                              "' is the combine kernel of split-KV kernel '" +
                              owner->name + "': launch '" + owner->name +
                              "', which runs both"
                        : "kernel '" + k.name +
                              "' is a combine kernel, which runs after its "
                              "split kernel, and no kernel of this module "
                              "names it"),
          k);
    }
    for (const auto &[name, buffer] : operands(args))
      if (buffer && !sameBackend(*buffer))
        return withContext(invalid(std::string("buffer ") + name +
                                   " was not allocated on device '" +
                                   state.backend->name() + "'"),
                           k);
    combineIndex = state.combineIndex[index];
    combine = combineIndex >= 0 ? &kernels[size_t(combineIndex)] : nullptr;
    Expected<PackedLaunch> packed =
        packAttentionArgs(k, args, state.backend->limits(), combine, kvSplits,
                          trustDeviceMetadata);
    if (!packed)
      return withContext(packed.takeStatus(), k);
    return packed;
  }

  bool sameBackend(const Buffer &buffer) const {
    return detail::backendOf(buffer) == state.backend;
  }

  using Operand = std::pair<const char *, const Buffer *>;
  static std::array<Operand, 12> operands(const AttentionArgs &args) {
    return {{{"Q", args.q},
             {"K", args.k},
             {"V", args.v},
             {"O", args.o},
             {"LSE", args.lse},
             {"block_table", args.paged ? args.paged->blockTable : nullptr},
             {"cache_seqlens", args.paged ? args.paged->cacheSeqlens : nullptr},
             {"cu_seqlens_q", args.varlen ? args.varlen->cuSeqlensQ : nullptr},
             {"cu_seqlens_k", args.varlen ? args.varlen->cuSeqlensK : nullptr},
             {"trace", args.trace ? args.trace->buffer : nullptr},
             {"alibi_slopes", args.alibiSlopes},
             {"sinks", args.sinks}}};
  }
};
} // namespace

Status Kernel::launch(const AttentionArgs &args, const LaunchOptions &options,
                      LaunchInfo *launched) const {
  KernelCall call{*state, index, info()};
  const KernelInfo &k = call.k;
  Expected<PackedLaunch> packed =
      call.pack(args, options.kvSplits, /*trustDeviceMetadata=*/false);
  if (!packed)
    return packed.takeStatus();
  const KernelInfo *combine = call.combine;
  const int combineIndex = call.combineIndex;
  auto withContext = [&](Status s, const KernelInfo &kernel) {
    return call.withContext(std::move(s), kernel);
  };
  const auto buffers = KernelCall::operands(args);

  const size_t elem = dtypeBytes(k.dtype);
  auto checkGuards = [&]() -> Status {
    if (options.checkGuards)
      for (const auto &[name, buffer] : buffers)
        if (buffer && buffer->guardBytes())
          if (Status g = buffer->checkGuards(
                  name, std::string(name) == "LSE" ||
                                std::string(name) == "trace" ||
                                std::string(name) == "alibi_slopes" ||
                                std::string(name) == "sinks"
                            ? sizeof(float)
                        : std::string(name).find('_') != std::string::npos
                            ? sizeof(int32_t)
                            : elem);
              !g.ok())
            return withContext(std::move(g), k);
    return Status::success();
  };
  if (launched) {
    *launched = LaunchInfo();
    launched->kvSplits = packed->split.kvSplits;
    launched->geometry = packed->geometry;
    launched->combineGeometry = packed->combineGeometry;
  }
  if (!packed->combineGeometry) {
    Status s = state->code->launch(index, packed->geometry,
                                   packed->words.data(), options, {0, 1}, {});
    if (!s.ok())
      return withContext(std::move(s), k);
    return checkGuards();
  }

  // Split-KV: the split kernel, then the combine kernel, over a workspace
  // this launch holds alone.
  WorkspacePool &pool = *state->workspaces[index];
  Expected<WorkspacePool::Workspace> ws = pool.take(
      device(), packed->split.workspaceOBytes, packed->split.workspaceLseBytes);
  if (!ws)
    return withContext(ws.takeStatus(), k);
  if (launched)
    launched->workspaceAllocated = ws->fresh;
  if (Status s = bindWorkspace(*packed, k, ws->o, ws->lse); !s.ok())
    return withContext(std::move(s), k);
  Status s = state->code->launch(index, packed->geometry, packed->words.data(),
                                 options, {0, 2}, {});
  if (!s.ok())
    s = withContext(std::move(s), k);
  else if (Status c = state->code->launch(
               size_t(combineIndex), *packed->combineGeometry,
               packed->words.data(), options, {1, 2}, {});
           !c.ok())
    s = withContext(std::move(c), *combine);
  // A workspace whose guard zones a kernel overwrote is not reused: the
  // next launch would report this one's write.
  bool intact = true;
  if (options.checkGuards)
    for (const auto &[name, buffer] :
         {std::pair<const char *, const Buffer *>{"workspace O", &ws->o},
          {"workspace LSE", &ws->lse}})
      if (Status g = buffer->checkGuards(name, sizeof(float)); !g.ok()) {
        intact = false;
        if (s.ok())
          s = withContext(std::move(g), k);
      }
  if (intact)
    pool.give(ws.take());
  if (!s.ok())
    return s;
  return checkGuards();
}

Status Kernel::enqueue(const AttentionArgs &args, void *stream,
                       const Buffer *workspace, const LaunchOptions &options,
                       LaunchInfo *launched) const {
  KernelCall call{*state, index, info()};
  const KernelInfo &k = call.k;
  // Without a workspace a kernel that writes O itself at S = 1 runs there.
  const int64_t kvSplits =
      !workspace && options.kvSplits == 0 && k.splitDirect ? 1
                                                           : options.kvSplits;
  Expected<PackedLaunch> packed =
      call.pack(args, kvSplits, /*trustDeviceMetadata=*/true);
  if (!packed)
    return packed.takeStatus();
  if (Status s = state->backend->checkStream(stream); !s.ok())
    return call.withContext(std::move(s), k);
  const bool combined = packed->combineGeometry.has_value();
  if (combined) {
    const uint64_t needed = workspaceBytes(packed->split);
    if (!workspace)
      return call.withContext(
          invalid("kernel '" + k.name + "' is a split-KV kernel: its " +
                  std::to_string(packed->split.kvSplits) +
                  " K/V splits need a workspace of " + std::to_string(needed) +
                  " bytes (Kernel::workspaceSize, fa_module_workspace_size)"),
          k);
    if (!call.sameBackend(*workspace))
      return call.withContext(invalid("the workspace was not allocated on "
                                      "device '" +
                                      state->backend->name() + "'"),
                              k);
    for (const auto &[name, buffer] : KernelCall::operands(args))
      if (buffer == workspace)
        return call.withContext(
            invalid(std::string("the workspace is also passed as ") + name +
                    ": the split kernel writes it"),
            k);
    if (Status s = bindWorkspace(*packed, k, *workspace); !s.ok())
      return call.withContext(std::move(s), k);
  }
  if (launched) {
    *launched = LaunchInfo();
    launched->kvSplits = packed->split.kvSplits;
    launched->geometry = packed->geometry;
    launched->combineGeometry = packed->combineGeometry;
  }
  LaunchOptions noGuards = options;
  noGuards.checkGuards = false;
  const LaunchQueue queue{stream, /*wait=*/false};
  const unsigned steps = combined ? 2 : 1;
  if (Status s = state->code->launch(index, packed->geometry,
                                     packed->words.data(), noGuards,
                                     {0, steps}, queue);
      !s.ok())
    return call.withContext(std::move(s), k);
  if (combined)
    if (Status s = state->code->launch(size_t(call.combineIndex),
                                       *packed->combineGeometry,
                                       packed->words.data(), noGuards, {1, 2},
                                       queue);
        !s.ok())
      return call.withContext(std::move(s), *call.combine);
  return Status::success();
}

Expected<uint64_t> Kernel::workspaceSize(const AttentionShape &shape,
                                         int64_t kvSplits) const {
  const KernelInfo &k = info();
  KernelCall call{*state, index, k};
  if (!k.splitKv) {
    if (kvSplits != 0 && kvSplits != 1)
      return call.withContext(
          invalid("kernel '" + k.name +
                  "' is not a split-KV kernel: it takes 0 or 1 K/V splits, "
                  "not " +
                  std::to_string(kvSplits)),
          k);
    return uint64_t(0);
  }
  Expected<KvSplitPlan> plan =
      planKvSplits(k, shape, state->backend->limits(), kvSplits);
  if (!plan)
    return call.withContext(plan.takeStatus(), k);
  return workspaceBytes(*plan);
}

Status Kernel::checkMetadata(const AttentionArgs &args) const {
  const KernelInfo &k = info();
  KernelCall call{*state, index, k};
  const AttentionShape &sh = args.shape;
  auto kind = [](bool paged, bool varlen) {
    return paged && varlen ? "a mixed prefill/decode batch"
           : paged         ? "a paged K/V cache"
           : varlen        ? "a variable-length batch"
                           : "a dense batch";
  };
  if (k.paged != bool(args.paged) || k.varlen != bool(args.varlen))
    return call.withContext(invalid("kernel '" + k.name + "' takes " +
                                    kind(k.paged, k.varlen) +
                                    ", the arguments describe " +
                                    kind(bool(args.paged), bool(args.varlen))),
                            k);
  // Reads `entries` int32 of `buffer` (the device copy).
  auto read = [&](const char *name, const Buffer *buffer, int64_t entries,
                  std::vector<int32_t> &out) -> Status {
    if (!buffer)
      return invalid(std::string("buffer ") + name + " is missing");
    if (entries < 0 || uint64_t(entries) > buffer->size() / sizeof(int32_t))
      return invalid(std::string("buffer ") + name + " holds " +
                     std::to_string(buffer->size()) + " bytes, not " +
                     std::to_string(entries) + " int32 entries");
    out.resize(size_t(entries));
    if (Status s = state->backend->synchronize(); !s.ok())
      return s;
    return buffer->copyToHost(out.data(), out.size() * sizeof(int32_t));
  };
  Status s = Status::success();
  if (args.paged) {
    const PagedKvArgs &pg = *args.paged;
    std::vector<int32_t> table, lengths;
    std::optional<int64_t> entries = checkedMul(sh.batch, pg.maxPages);
    s = checkPagedKvMetadata(sh.batch, pg.pageSize, pg.maxPages, pg.numPages,
                             {}, {}, /*entries=*/false);
    if (s.ok() && !entries)
      s = invalid("block_table is too large");
    if (s.ok())
      s = read("block_table", pg.blockTable, *entries, table);
    if (s.ok())
      s = read("cache_seqlens", pg.cacheSeqlens, sh.batch, lengths);
    if (s.ok())
      s = checkPagedKvMetadata(sh.batch, pg.pageSize, pg.maxPages,
                               pg.numPages, Int32Span(table),
                               Int32Span(lengths));
    for (int64_t b = 0; s.ok() && b < sh.batch; ++b)
      if (lengths[size_t(b)] > sh.seqK)
        s = invalid("cache_seqlens[" + std::to_string(b) + "] = " +
                    std::to_string(lengths[size_t(b)]) + " is more than Lk = " +
                    std::to_string(sh.seqK) +
                    ", the bound the launch passes");
    // A mixed batch: cu_seqlens_q, and each sequence's queries against its
    // keys.
    std::vector<int32_t> cuQ;
    if (s.ok() && args.varlen) {
      const VarlenArgs &vl = *args.varlen;
      s = checkMixedMetadata(sh.batch, vl.totalQ, sh.seqQ, {}, {},
                             /*entries=*/false);
      if (s.ok())
        s = read("cu_seqlens_q", vl.cuSeqlensQ, sh.batch + 1, cuQ);
      if (s.ok())
        s = checkMixedMetadata(sh.batch, vl.totalQ, sh.seqQ, Int32Span(cuQ),
                               Int32Span(lengths));
    }
  } else if (args.varlen) {
    const VarlenArgs &vl = *args.varlen;
    std::vector<int32_t> cuQ, cuK;
    s = checkVarlenMetadata(sh.batch, vl.totalQ, vl.totalK, sh.seqQ, sh.seqK,
                            {}, {}, /*entries=*/false);
    if (s.ok())
      s = read("cu_seqlens_q", vl.cuSeqlensQ, sh.batch + 1, cuQ);
    if (s.ok())
      s = read("cu_seqlens_k", vl.cuSeqlensK, sh.batch + 1, cuK);
    if (s.ok())
      s = checkVarlenMetadata(sh.batch, vl.totalQ, vl.totalK, sh.seqQ,
                              sh.seqK, Int32Span(cuQ), Int32Span(cuK));
  }
  if (!s.ok())
    return call.withContext(std::move(s), k);
  return Status::success();
}
