//===- PagedVarlen.h - Paged KV caches, variable-length batches -*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Validation of the two inference layouts of issue 21, FlashAttention 2 /
// vLLM's conventions:
//
// Paged KV cache (flash_attn_with_kvcache): the K and V caches are
// [num_pages, page_size, Hkv, D]; block_table [B, max_pages] holds int32
// page indices, cache_seqlens [B] the int32 key count of each sequence. Key j
// of sequence b is row j % page_size of page block_table[b][j / page_size].
// Q and O are dense [B, Hq, Lq, D], LSE [B, Hq, Lq]. Pages may be in any
// order and shared between sequences (prefix sharing); the entries of a row
// of block_table past the pages its sequence needs are never read.
//
// Variable-length batches (flash_attn_varlen_func): cu_seqlens_q [B+1] and
// cu_seqlens_k [B+1] (int32, starting at 0, non-decreasing) cut packed Q
// [total_q, Hq, D] and K, V [total_k, Hkv, D] into sequences: sequence b is
// rows cu_seqlens_q[b] .. cu_seqlens_q[b+1]-1 of Q (and O) and rows
// cu_seqlens_k[b] .. cu_seqlens_k[b+1]-1 of K and V. O is packed
// [total_q, Hq, D], LSE [Hq, total_q] (FlashAttention 2's varlen layout).
// max_seqlen_q / max_seqlen_k bound the lengths (the kernel's grid).
//
// Mixed prefill/decode batches (vLLM v1; flash_attn_varlen_func with
// block_table and seqused_k): packed Q and O [total_q, Hq, D] and LSE [Hq,
// total_q] cut by cu_seqlens_q as a varlen batch's, over the K and V
// caches of a paged problem; sequence b has cache_seqlens[b] keys, and its
// Lq_b = cu_seqlens_q[b+1] - cu_seqlens_q[b] queries (Lq_b <=
// cache_seqlens[b]) are the LAST rows of the sequence: a decode row (Lq_b =
// 1) or a chunk of a prompt whose earlier part is in the cache.
//
// Within each sequence everything is the dense reference's (Reference.h):
// causal masking bottom-right within the sequence's own lengths (query i
// sees key j iff j <= i + Lk_b - Lq_b), the sliding window aligned the same
// way (shift = Lk_b - Lq_b), the softcap, ALiBi (distance |i + Lk_b - Lq_b
// - j|) and the sinks, query head h reads KV head
// h / (Hq / Hkv), a row that sees no key (Lk_b = 0, causal with
// Lq_b > Lk_b, or a window that leaves none) has O = 0 and LSE = -inf
// (the sink, with sinks), and
// a sequence with Lq_b = 0 gives nothing. The references compute each
// (sequence, head) with the dense reference's row routine, so a sequence's
// result is bit-identical to the dense reference of that sequence gathered
// into dense tensors (gatherPagedSequences, gatherVarlenSequences).
//
// The host checks (checkPagedProblem, checkVarlenProblem, checkMixedProblem)
// validate all the
// host-visible metadata before anything is launched; a kernel trusts it, as
// FlashAttention's do (runtime/README.md, "Paged KV cache and
// variable-length batches").
//
// Element data uses AttentionData (Reference.h) with the layouts above: for
// a paged problem q is [B, Hq, Lq, D] and k, v are the caches; for a varlen
// problem q is [total_q, Hq, D] and k, v are [total_k, Hkv, D]; for a mixed
// problem q is [total_q, Hq, D] and k, v are the caches. Results are
// AttentionResult with o (and magnitude) in Q's layout and lse as above.
//
// Library: fa::validate (libfa_validate.so, over fa::runtime).
//
//===----------------------------------------------------------------------===//

#ifndef FA_PAGEDVARLEN_H
#define FA_PAGEDVARLEN_H

#include "fa/Inputs.h"
#include "fa/Reference.h"

#include <cstdint>
#include <vector>

namespace fa {

/// An attention over a paged KV cache: everything besides the element data.
struct PagedProblem {
  int64_t batch = 1;   ///< B
  int64_t headsQ = 1;  ///< Hq
  int64_t headsKv = 1; ///< Hkv
  int64_t seqQ = 1;    ///< Lq, the same for every sequence
  int64_t headDim = 0; ///< D
  int64_t numPages = 0;
  int64_t pageSize = 0;
  int64_t maxPages = 0; ///< block_table's columns
  bool causal = false;
  double scale = 0;
  /// The sliding window's bounds (-1: unbounded) and the softcap (0: none),
  /// as AttentionProblem's.
  int64_t windowLeft = -1, windowRight = -1;
  double softcap = 0;
  /// ALiBi slopes and sinks, Hq each or empty (AttentionProblem's).
  std::vector<float> alibiSlopes, sinks;
  std::vector<int32_t> blockTable;   ///< [B, max_pages], row-major
  std::vector<int32_t> cacheSeqlens; ///< [B]

  // Element counts; SIZE_MAX when one overflows (checkPagedProblem refuses
  // that).
  size_t qElements() const;     ///< B*Hq*Lq*D (also O)
  size_t cacheElements() const; ///< num_pages*page_size*Hkv*D (each of K, V)
  size_t lseElements() const;   ///< B*Hq*Lq
};

/// A variable-length batch: everything besides the element data.
struct VarlenProblem {
  int64_t batch = 1;   ///< B
  int64_t headsQ = 1;  ///< Hq
  int64_t headsKv = 1; ///< Hkv
  int64_t headDim = 0; ///< D
  int64_t totalQ = 0;  ///< rows of packed Q and O
  int64_t totalK = 0;  ///< rows of packed K and V
  int64_t maxSeqlenQ = 0;
  int64_t maxSeqlenK = 0;
  bool causal = false;
  double scale = 0;
  /// The sliding window's bounds (-1: unbounded) and the softcap (0: none),
  /// as AttentionProblem's.
  int64_t windowLeft = -1, windowRight = -1;
  double softcap = 0;
  /// ALiBi slopes and sinks, Hq each or empty (AttentionProblem's).
  std::vector<float> alibiSlopes, sinks;
  std::vector<int32_t> cuSeqlensQ; ///< [B+1]
  std::vector<int32_t> cuSeqlensK; ///< [B+1]

  /// The problem of these per-sequence lengths (B = their count, which must
  /// agree): cu_seqlens are their prefix sums, total_q/total_k their sums,
  /// max_seqlen_q/max_seqlen_k their maxima. Lengths are not checked here
  /// (checkVarlenProblem does); a sum past int32 saturates.
  static VarlenProblem fromLengths(int64_t headsQ, int64_t headsKv,
                                   int64_t headDim,
                                   const std::vector<int32_t> &lengthsQ,
                                   const std::vector<int32_t> &lengthsK,
                                   bool causal, double scale);

  // Element counts; SIZE_MAX when one overflows (checkVarlenProblem refuses
  // that).
  size_t qElements() const;   ///< total_q*Hq*D (also O)
  size_t kvElements() const;  ///< total_k*Hkv*D (each of K, V)
  size_t lseElements() const; ///< Hq*total_q
};

/// A mixed prefill/decode batch: packed queries over a paged cache.
struct MixedProblem {
  /// The cache and everything but the queries' layout: B, Hq, Hkv, D, the
  /// pages, block_table, cache_seqlens (each sequence's keys), the mask and
  /// scores. cache.seqQ is max_seqlen_q (at least every Lq_b, at least 1):
  /// the kernel's grid.
  PagedProblem cache;
  std::vector<int32_t> cuSeqlensQ; ///< [B+1]
  int64_t totalQ = 0;              ///< rows of packed Q and O

  /// The problem of query lengths `lengthsQ` (B = cache.batch of them) over
  /// `cache`: cu_seqlens_q their prefix sums (saturating at int32), total_q
  /// their sum, cache.seqQ their maximum (at least 1). Not checked here
  /// (checkMixedProblem does).
  static MixedProblem fromLengths(PagedProblem cache,
                                  const std::vector<int32_t> &lengthsQ);

  /// Lq_b, the queries of sequence b.
  int64_t queries(int64_t b) const {
    return int64_t(cuSeqlensQ[size_t(b + 1)]) - cuSeqlensQ[size_t(b)];
  }

  // Element counts; SIZE_MAX when one overflows (checkMixedProblem refuses
  // that).
  size_t qElements() const;   ///< total_q*Hq*D (also O)
  size_t lseElements() const; ///< Hq*total_q
};

// --- Host-side checks --------------------------------------------------------
// Each returns InvalidArgument naming the first bad entry, in this order:
// sizes, page size / array lengths, then sequence by sequence.

/// B, Hq, Hkv, Lq, D, num_pages, max_pages at least 1; Hq a multiple of Hkv;
/// page_size at least 1 (16 to 256 are typical); every tensor's fp64 byte
/// size fits in int64; the window bounds at least -1 and the softcap finite
/// and at least 0; then the metadata as the runtime checks it before a
/// paged launch (checkPagedKvMetadata, fa/Module.h, with the same
/// messages): block_table of B * max_pages and cache_seqlens of B entries;
/// each cache_seqlens[b] non-negative and served by the table's max_pages
/// pages; each entry block_table[b][p] a sequence uses (p <
/// ceil(cache_seqlens[b] / page_size)) in [0, num_pages).
Status checkPagedProblem(const PagedProblem &problem);

/// checkPagedProblem, and the data has the sizes the problem implies.
Status checkPagedData(const PagedProblem &problem, const AttentionData &data);

/// B, Hq, Hkv, D at least 1; Hq a multiple of Hkv; every tensor's fp64
/// byte size fits in int64; the window bounds and the softcap as
/// checkPagedProblem's; then the metadata as the runtime checks it
/// before a varlen launch (checkVarlenMetadata, fa/Module.h, with the same
/// messages): cu_seqlens_q and cu_seqlens_k of B + 1 entries, starting at
/// 0, non-decreasing, ending at total_q / total_k; max_seqlen_q /
/// max_seqlen_k at least every sequence's length.
Status checkVarlenProblem(const VarlenProblem &problem);

/// checkVarlenProblem, and the data has the sizes the problem implies.
Status checkVarlenData(const VarlenProblem &problem, const AttentionData &data);

/// checkPagedProblem of the cache (its Lq being max_seqlen_q), total_q*Hq*D
/// fitting in int64 as fp64 bytes, then the runtime's checks of the
/// queries before a mixed launch (checkMixedMetadata, fa/Module.h, with the
/// same messages): cu_seqlens_q of B + 1 entries, from 0, non-decreasing,
/// ending at total_q, no sequence above max_seqlen_q; each sequence's
/// queries at most its keys ("sequence 1 has 3 queries but only 2 keys: a
/// mixed batch's queries are the last rows of their sequence ...").
Status checkMixedProblem(const MixedProblem &problem);

/// checkMixedProblem, and the data has the sizes the problem implies (q
/// packed [total_q, Hq, D], k and v the caches).
Status checkMixedData(const MixedProblem &problem, const AttentionData &data);

// --- Seeded generators -------------------------------------------------------

struct PagedGeneratorOptions {
  int64_t batch = 2, headsQ = 8, headsKv = 2, seqQ = 1, headDim = 64;
  int64_t pageSize = 16;
  /// The lengths (B of them, non-negative), taken as they are; empty: drawn.
  std::vector<int32_t> seqlens;
  /// Drawn lengths: cache_seqlens[b] is uniform in [minSeqlenK, maxSeqlenK].
  int64_t minSeqlenK = 0, maxSeqlenK = 300;
  /// Drawn lengths: every nonzero length leaves its last page partly filled
  /// (a drawn multiple of page_size moves by one within the bounds; with
  /// page size 1 no page is partly filled).
  bool partialLastPage = true;
  /// Drawn lengths: at random positions, as B allows leaving one drawn
  /// length, a length of 0, then the longest (maxSeqlenK, less one when
  /// partialLastPage needs it), then 1 (B = 2: a 0; B = 3: a 0 and the
  /// longest; B >= 4: all three).
  bool edgeLengths = false;
  /// The first this many pages of every sequence (of those it uses) are the
  /// same pages: a shared prompt prefix.
  int64_t sharedPrefixPages = 0;
  /// Pages of the cache no sequence uses (freed pages), mixed in.
  int64_t unusedPages = 3;
  /// block_table's columns; 0: the most pages a sequence uses (at least 1).
  int64_t maxPages = 0;
  /// What the entries past a sequence's pages hold (never read).
  int32_t padEntry = -1;
  /// Instead of padEntry, an unused page (poisonUnreadCacheRows makes it
  /// NaN), where there is one: a kernel reading past its pages reads NaN
  /// on every device rather than memory outside the caches.
  bool padWithUnusedPage = false;
  /// Pages in a random order; false: in order (shared prefix, then each
  /// sequence's own, then the unused ones).
  bool shufflePages = true;
  bool causal = false;
  /// 0: 1 / sqrt(D).
  double scale = 0;
  /// Taken as they are (AttentionProblem's).
  int64_t windowLeft = -1, windowRight = -1;
  double softcap = 0;
  /// ALiBi slopes and sinks, Hq each or empty (AttentionProblem's).
  std::vector<float> alibiSlopes, sinks;
};

/// A random paged problem: the lengths as the options say, and a block
/// table whose pages are a random permutation of the cache's pages (shared
/// prefix pages first, then each sequence's own, in shuffled order).
/// InvalidArgument for options no valid problem has (the checks'
/// messages, or a length range with no partly filled last page).
Expected<PagedProblem> generatePagedProblem(const PagedGeneratorOptions &opts,
                                            uint64_t seed);

/// How validation lays out the K/V cache of a paged kernel (fa-run
/// --paged, --cache-seqlens, --no-shuffle-pages, --share-pages).
struct PagedCacheOptions {
  /// Rows per page (>= 1).
  int64_t pageSize = 16;
  /// The B lengths, each at most the capacity; empty: drawn from the seed in
  /// [1, capacity], with a 0, the capacity and a 1 as B allows
  /// (edgeLengths), never a whole number of pages (partialLastPage, page
  /// size above 1).
  std::vector<int32_t> cacheSeqlens;
  /// Pages in a random order (from the seed); false: in order.
  bool shufflePages = true;
  /// Prefix sharing: every sequence's first max(1, max_pages / 2) pages (of
  /// those it uses) are the same pages.
  bool sharePages = false;
  /// Pages no sequence uses, mixed in (poisoned; the table's unused entries
  /// name one).
  int64_t unusedPages = 3;
};

/// The paged problem validation gives a paged kernel for the dense sizes
/// of `problem` (B, Hq, Hkv, Lq, D, causal, scale, window, softcap): its Lk
/// is the cache's capacity per sequence, so block_table has max_pages =
/// ceil(Lk / page_size) columns, and each length is at most Lk.
/// InvalidArgument for a capacity outside [1, 2^31 - 1], lengths of the
/// wrong count or past the capacity ("cache_seqlens[2] = 500 is above the
/// cache's capacity Lk = 300"), or the checks' messages.
Expected<PagedProblem> pagedProblemFor(const AttentionProblem &problem,
                                       const PagedCacheOptions &options,
                                       uint64_t seed);

struct VarlenGeneratorOptions {
  int64_t batch = 6, headsQ = 8, headsKv = 2, headDim = 64;
  /// Lengths are uniform in [0, maxSeqlenQ] and [0, maxSeqlenK].
  int64_t maxSeqlenQ = 70, maxSeqlenK = 90;
  /// Lq_b = Lk_b (self-attention prefill); otherwise drawn independently.
  bool sameLengths = false;
  /// Put in the edge cases, at random positions (as many as B allows, in
  /// this order): Lq = 0 (gives nothing); Lk = 0 with Lq > 0 (rows that see
  /// no key); Lq = 1 (decode) with Lk > 0; Lk = 1 with Lq > 0. With
  /// sameLengths: a length of 0 and one of 1. Needs maxSeqlenQ and
  /// maxSeqlenK of at least 1.
  bool edgeLengths = true;
  bool causal = false;
  /// 0: 1 / sqrt(D).
  double scale = 0;
  /// Taken as they are (AttentionProblem's).
  int64_t windowLeft = -1, windowRight = -1;
  double softcap = 0;
  /// ALiBi slopes and sinks, Hq each or empty (AttentionProblem's).
  std::vector<float> alibiSlopes, sinks;
};

/// A random variable-length batch (VarlenProblem::fromLengths of the drawn
/// lengths). InvalidArgument for options no valid problem has.
Expected<VarlenProblem>
generateVarlenProblem(const VarlenGeneratorOptions &opts, uint64_t seed);

/// How validation cuts a varlen kernel's batch into sequences (fa-run
/// --varlen, --seqlens-q, --seqlens-k).
struct VarlenOptions {
  /// The B query lengths, each in [0, max_seqlen_q]; empty: drawn.
  std::vector<int32_t> seqlensQ;
  /// The B key lengths, each in [0, max_seqlen_k]; empty: drawn.
  std::vector<int32_t> seqlensK;
};

/// The varlen problem validation gives a varlen kernel for the dense sizes
/// of `problem` (B sequences, Hq, Hkv, D, causal, scale, window, softcap):
/// the shape's Lq and Lk are max_seqlen_q and max_seqlen_k (the kernel's
/// grid, kept even when no sequence is that long), and the lengths are
/// given or drawn from
/// `seed` (generateVarlenProblem: uniform in [0, max], Lq_b and Lk_b drawn
/// apart, with Lq = 0, Lk = 0, Lq = 1 and Lk = 1 put in as B allows).
/// InvalidArgument for a maximum outside [1, 2^31 - 1], a list of the
/// wrong count ("seqlens_q has 3 lengths, B = 4"), a negative length or one
/// above its maximum ("seqlens_k[1] = 500 is above max_seqlen_k = 300 (the
/// shape's Lk)"), totals past int32, or the checks' messages.
Expected<VarlenProblem> varlenProblemFor(const AttentionProblem &problem,
                                         const VarlenOptions &options,
                                         uint64_t seed);

struct MixedGeneratorOptions {
  int64_t batch = 6, headsQ = 8, headsKv = 2, headDim = 64;
  int64_t pageSize = 16;
  /// Drawn query lengths: about half the sequences a decode row (1), the
  /// others a prefill chunk uniform in [1, maxSeqlenQ]. Drawn key lengths:
  /// uniform in [Lq_b, maxSeqlenK] (the history and the chunk itself).
  /// maxSeqlenQ is also max_seqlen_q (the grid's bound) and block_table has
  /// ceil(maxSeqlenK / page_size) columns. 1 <= maxSeqlenQ <= maxSeqlenK.
  int64_t maxSeqlenQ = 40, maxSeqlenK = 200;
  /// Given lengths (B each, taken as they are, each at most its maximum);
  /// empty: drawn (a query length at most its given key length; a key length
  /// at least its given query length).
  std::vector<int32_t> seqlensQ, seqlensK;
  /// Drawn lengths: at random positions, as many as B allows, in this
  /// order: a sequence of no queries (its keys drawn); one whose queries are
  /// all its keys (Lq == Lk, a whole prompt of 2 to maxSeqlenQ rows where
  /// maxSeqlenQ allows); one whose key length is a
  /// whole number of pages (the largest in [Lq_b, maxSeqlenK], where there
  /// is one); a decode row over the longest history (1, maxSeqlenK).
  bool edgeLengths = true;
  /// As PagedGeneratorOptions' (an unused page pads the table).
  int64_t sharedPrefixPages = 0;
  int64_t unusedPages = 3;
  bool shufflePages = true;
  bool causal = false;
  /// 0: 1 / sqrt(D).
  double scale = 0;
  int64_t windowLeft = -1, windowRight = -1;
  double softcap = 0;
  std::vector<float> alibiSlopes, sinks;
};

/// A random mixed batch: lengths as the options say, the cache as
/// generatePagedProblem lays it out (shuffled and shared pages, unused
/// pages, table entries past a sequence's pages naming an unused one).
/// InvalidArgument for options no valid problem has.
Expected<MixedProblem> generateMixedProblem(const MixedGeneratorOptions &opts,
                                            uint64_t seed);

/// The mixed problem validation gives a mixed kernel (fa-run --paged
/// PAGE_SIZE --varlen) for the dense sizes of `problem` (B, Hq, Hkv, D,
/// causal, scale, window, softcap, ALiBi, sinks): the shape's Lq is
/// max_seqlen_q (the longest query chunk; the grid's bound, kept even when
/// no sequence is that long) and its Lk the longest history (the cache's
/// capacity per sequence: block_table has ceil(Lk / page_size) columns).
/// The query lengths are varlen.seqlensQ and the key lengths
/// cache.cacheSeqlens, each given or drawn from `seed`
/// (generateMixedProblem, with the edge lengths); the pages as `cache`
/// says. InvalidArgument for varlen.seqlensK (a mixed batch's keys are
/// cache_seqlens), a maximum outside [1, 2^31 - 1] or Lq > Lk, a list of
/// the wrong count, a negative length or one above its maximum
/// ("seqlens_q[1] = 50 is above max_seqlen_q = 40 (the shape's Lq)"), a
/// key length below its query length ("cache_seqlens[0] = 2 is below
/// seqlens_q[0] = 3: ..."), or the checks' messages.
Expected<MixedProblem> mixedProblemFor(const AttentionProblem &problem,
                                       const PagedCacheOptions &cache,
                                       const VarlenOptions &varlen,
                                       uint64_t seed);

/// Q (packed), then the K cache, then the V cache, drawn as
/// generatePagedInputs draws them. Empty when the problem's check fails.
AttentionData generateMixedInputs(const MixedProblem &problem, DType dtype,
                                  Distribution dist, uint64_t seed);

/// Q, then the K cache, then the V cache (paged) / Q, K, V (varlen), drawn
/// from one generator seeded with `seed` with generateInputs' distributions,
/// rounded to `dtype`. Empty when the problem's check fails.
AttentionData generatePagedInputs(const PagedProblem &problem, DType dtype,
                                  Distribution dist, uint64_t seed);
AttentionData generateVarlenInputs(const VarlenProblem &problem, DType dtype,
                                   Distribution dist, uint64_t seed);

/// Sets every cache row no sequence reads (pages no table entry in use
/// names, and the rows of each page past the longest length that reads it)
/// to NaN in K and V, so that a kernel reading one, even to multiply it by a
/// masked P of 0, gives NaN. Returns the number of [Hkv, D] rows set, or the
/// data check's error. The mixed form poisons a mixed problem's cache.
Expected<int64_t> poisonUnreadCacheRows(const PagedProblem &problem,
                                        AttentionData &data);
Expected<int64_t> poisonUnreadCacheRows(const MixedProblem &problem,
                                        AttentionData &data);

// --- References --------------------------------------------------------------
// As Reference.h's: empty results when the data check fails.

/// The fp64 reference of a paged problem: o, magnitude [B, Hq, Lq, D],
/// lse [B, Hq, Lq].
AttentionResult<double> referencePagedAttentionF64(const PagedProblem &problem,
                                                   const AttentionData &data);
/// The naive same-precision reference of `dtype` (naiveAttention's).
AttentionResult<float> naivePagedAttention(const PagedProblem &problem,
                                           DType dtype,
                                           const AttentionData &data);

/// The fp64 reference of a varlen problem: o, magnitude [total_q, Hq, D],
/// lse [Hq, total_q].
AttentionResult<double>
referenceVarlenAttentionF64(const VarlenProblem &problem,
                            const AttentionData &data);
AttentionResult<float> naiveVarlenAttention(const VarlenProblem &problem,
                                            DType dtype,
                                            const AttentionData &data);

/// The fp64 reference of a mixed problem: o, magnitude [total_q, Hq, D],
/// lse [Hq, total_q] (sequence b's queries as the last Lq_b of its
/// cache_seqlens[b] keys).
AttentionResult<double> referenceMixedAttentionF64(const MixedProblem &problem,
                                                   const AttentionData &data);
AttentionResult<float> naiveMixedAttention(const MixedProblem &problem,
                                           DType dtype,
                                           const AttentionData &data);

// --- Per-sequence dense problems ---------------------------------------------

/// One sequence as a dense problem: B = 1, Hq, Hkv, Lq_b, Lk_b, D, and its
/// rows of Q, K, V copied into contiguous [1, H, L, D] tensors. A sequence
/// with Lq_b = 0 or Lk_b = 0 has no dense counterpart (the dense problem
/// needs lengths of at least 1): its problem has that zero length and its
/// data is empty; its rows (if any) are O = 0, LSE = -inf by definition.
struct DenseSequence {
  AttentionProblem problem;
  AttentionData data;
};

/// The sequences of a paged problem, each with its keys gathered page by
/// page from the caches.
Expected<std::vector<DenseSequence>>
gatherPagedSequences(const PagedProblem &problem, const AttentionData &data);

/// The sequences of a varlen problem, each cut out of the packed tensors.
Expected<std::vector<DenseSequence>>
gatherVarlenSequences(const VarlenProblem &problem, const AttentionData &data);

/// The sequences of a mixed problem: Lq_b queries cut out of packed Q, the
/// cache_seqlens[b] keys gathered page by page (Lq = Lq_b, Lk =
/// cache_seqlens[b]: the dense bottom-right alignment puts the queries at
/// the end).
Expected<std::vector<DenseSequence>>
gatherMixedSequences(const MixedProblem &problem, const AttentionData &data);

} // namespace fa

#endif // FA_PAGEDVARLEN_H
