//===- Validate.h - Run a kernel and judge its output -----------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The validation flow shared by fa-run, the embedding example and the tests:
// make inputs (seeded random, or a golden case), run the kernel, compare its
// output and LSE with the fp64 reference (or the golden vectors), compare the
// naive same-precision reference with the same baseline, and judge with the
// criteria of Metrics.h. Each tensor may have its own layout (strides); the
// output is read back through O's strides, LSE through LSE's, and padding in
// the output buffers must stay untouched. Also a simple timing loop.
//
// The umbrella of fa::validate too: it includes every header of the library
// (DeviceReference.h, Golden.h, Inputs.h, Metrics.h, PagedVarlen.h,
// Reference.h, Trace.h) and fa/Module.h.
//
// Library: fa::validate (libfa_validate.so, over fa::runtime).
//
//===----------------------------------------------------------------------===//

#ifndef FA_VALIDATE_H
#define FA_VALIDATE_H

#include "fa/DeviceReference.h"
#include "fa/Golden.h"
#include "fa/Inputs.h"
#include "fa/Metrics.h"
#include "fa/Module.h"
#include "fa/PagedVarlen.h"
#include "fa/Reference.h"
#include "fa/Trace.h"

#include <optional>

namespace fa {

struct ValidationOptions {
  /// Sizes of the random problem; ignored when `golden` is set.
  AttentionShape shape;
  Distribution dist = Distribution::Normal;
  uint64_t seed = 0;
  LaunchOptions launch;
  /// Run this golden case instead of random inputs (must match the kernel).
  const GoldenCase *golden = nullptr;
  /// Memory layout of each of Q, K, V, O and LSE on the device (default:
  /// all contiguous). O and LSE are read back through their own strides;
  /// their buffers start out filled with NaN bytes, and padding the kernel
  /// overwrites fails the "padding" check.
  AttentionLayout layout;
  /// Where the fp64 and naive references are computed: `Auto` uses the
  /// device reference (DeviceReference.h) on a GPU for problems above
  /// deviceReferenceMinFlops, else the CPU; `Device` fails on the host
  /// emulator.
  ReferenceKind reference = ReferenceKind::Auto;
  /// Required for a paged kernel (manifest `paged`), refused for any other:
  /// how its K/V cache is laid out (pagedProblemFor, from `seed`); the
  /// shape's Lk is each sequence's capacity, the launch's Lk the longest
  /// sequence. K and V are the caches [num_pages, page_size, Hkv, D] with
  /// the row padding of `layout` (their orders do not apply); the cache
  /// rows no sequence reads are NaN (poisonUnreadCacheRows), and the
  /// references are the paged ones (on a GPU, the dense device reference of
  /// each gathered sequence).
  std::optional<PagedCacheOptions> paged;
  /// Required for a varlen kernel (manifest `varlen`), refused for any
  /// other: how its batch is cut into sequences (varlenProblemFor, from
  /// `seed`); the shape's Lq and Lk are max_seqlen_q and max_seqlen_k, B the
  /// number of sequences. Q, O are packed [total_q, Hq, D], K, V [total_k,
  /// Hkv, D] with the row padding of `layout` (their orders do not apply),
  /// LSE [Hq, total_q] with its padding; the references are the varlen ones
  /// (on a GPU, the dense device reference of each gathered sequence).
  std::optional<VarlenOptions> varlen;
  /// Both `paged` and `varlen`, exactly for a mixed kernel (manifest paged
  /// and varlen; fa-run --paged PAGE_SIZE --varlen): the batch
  /// mixedProblemFor makes from `seed`, varlen->seqlensQ the query lengths,
  /// paged->cacheSeqlens the key lengths (varlen->seqlensK refused); the
  /// shape's Lq is max_seqlen_q, its Lk the cache's capacity per sequence.
  /// Q, O and LSE are packed as a varlen kernel's, K and V the caches as a
  /// paged kernel's (unread rows NaN); the references are the mixed ones
  /// (on a GPU, the dense device reference of each gathered sequence).
  /// Validation layer 2 (a kernel compiled with `fac --trace`, refused for
  /// any other): the query row whose running max, sum and output the
  /// kernel writes after each K/V block, compared with the fp64
  /// reference's (fa/Trace.h; ValidationReport::trace).
  std::optional<TraceRow> trace;
  /// The ALiBi slopes and attention sinks (Hq values each) of a kernel
  /// whose manifest says `alibi` / `sinks`; empty, they are drawn from
  /// `seed` (drawAlibiSlopes, drawSinks). Given for a kernel without the
  /// feature: InvalidArgument.
  std::vector<float> alibiSlopes, sinks;
};

struct ValidationReport {
  std::string kernel;
  std::string device;
  DType dtype = DType::F32;
  AttentionProblem problem;
  Distribution dist = Distribution::Normal;
  uint64_t seed = 0;
  /// Name of the golden case, empty for random inputs.
  std::string golden;
  /// Where the references were computed: "fp64 CPU" or "fp64 on device
  /// (NVRTC sm_90)"; the naive reference was computed there too.
  std::string reference;
  /// The layout used and the strides passed to the kernel.
  AttentionLayout layout;
  AttentionStrides strides;
  /// Kernel output vs the baseline (fp64 reference or golden vectors).
  OutputMetrics ours;
  /// Naive same-precision reference vs the same baseline.
  OutputMetrics naive;
  Criteria criteria;
  Verdict verdict;
  /// The K/V splits the launch used (LaunchInfo::kvSplits; 1 for a dense
  /// kernel).
  int64_t kvSplits = 1;
  /// A paged kernel: the problem it ran (page size, pages, block table,
  /// cache_seqlens); problem.shape.seqK is the capacity per sequence.
  std::optional<PagedProblem> paged;
  /// A varlen kernel: the problem it ran (cu_seqlens, totals, maxima).
  std::optional<VarlenProblem> varlen;
  /// A mixed kernel: the batch it ran (cu_seqlens_q, totals, and the cache:
  /// page size, pages, block table, cache_seqlens); paged and varlen are
  /// then empty.
  std::optional<MixedProblem> mixed;
  /// With ValidationOptions::trace: the per-block comparison (layer 2). A
  /// trace that parts from the reference fails the validation
  /// (verdict.pass false, check "trace").
  std::optional<TraceReport> trace;
};

/// The largest row or LSE padding validateKernel accepts, in elements.
constexpr int64_t maxLayoutPad = 4096;

/// InvalidArgument unless every padding of `layout` is in [0, maxLayoutPad].
Status checkLayout(const AttentionLayout &layout);

/// Bytes that validating one problem allocates.
struct ValidationMemory {
  /// The device buffers: Q, K, V, O and LSE as laid out (with padding).
  uint64_t deviceBytes = 0;
  /// Host: the inputs (floats) and the staging copy of the largest tensor.
  uint64_t inputBytes = 0;
  /// Host: the outputs read back, and the references' results (the fp64
  /// reference with its magnitudes, the naive one) and row scratch.
  uint64_t referenceBytes = 0;
};

/// What validateKernel allocates for `problem` (already checkShape'd) with
/// `layout` (already checkLayout'd) in `dtype`, and with `paged` for its
/// caches, block table and lengths in place of dense K and V (with
/// `varlen`, its packed tensors and cu_seqlens; with `mixed`, its packed
/// queries, caches and metadata);
/// InvalidArgument naming the tensor when a size overflows 64 bits.
Expected<ValidationMemory> validationMemory(
    const AttentionProblem &problem, DType dtype, bool hasLse,
    const AttentionLayout &layout, const PagedProblem *paged = nullptr,
    const VarlenProblem *varlen = nullptr, const MixedProblem *mixed = nullptr);

/// Bytes of memory the host has available: MemAvailable of /proc/meminfo,
/// else physical memory (sysconf); 0 when neither is known.
uint64_t hostMemoryAvailable();

/// OutOfMemory unless `hostBytes` of host memory and `deviceBytes` of
/// `device` memory fit, naming the bytes needed and available: on the host
/// emulator both come from host memory; a GPU's own memory is left to its
/// allocator, which fails cleanly. Checked before allocating anything large.
Status checkMemory(const Device &device, const AttentionProblem &problem,
                   uint64_t hostBytes, uint64_t deviceBytes);

/// Fails with InvalidArgument naming both sides unless the golden case has
/// the kernel's dtype, head dimension, causal flag, window, softcap and
/// scale (a golden case has no window, softcap, ALiBi or sinks, so a kernel
/// with any of them matches none).
Status checkGoldenMatchesKernel(const GoldenCase &golden,
                                const KernelInfo &kernel);

/// The problem `kernel` computes on `shape`: its head dimension, causal
/// flag, window, softcap and scale.
AttentionProblem kernelProblem(const KernelInfo &kernel,
                               const AttentionShape &shape);

/// Gives `problem` the head parameters `kernel` takes: for a kernel with
/// `alibi` the slopes `alibiSlopes`, or drawn from `seed` when empty
/// (drawAlibiSlopes); for a kernel with `sinks` likewise (drawSinks).
/// InvalidArgument naming the kernel for values given to a kernel without
/// the feature, or a count other than Hq.
Status setHeadParams(const KernelInfo &kernel, AttentionProblem &problem,
                     const std::vector<float> &alibiSlopes,
                     const std::vector<float> &sinks, uint64_t seed);

/// Runs `kernel` once on its device and validates the result. An error means
/// the kernel could not be run or validated (bad arguments, a problem whose
/// sizes overflow or that needs more memory than there is, launch failure,
/// race, divergence); a failed validation is a report with verdict.pass false.
Expected<ValidationReport> validateKernel(const Kernel &kernel,
                                          const ValidationOptions &options);

/// InvalidArgument unless `paged` is given exactly for a paged kernel (a
/// mixed kernel is one; naming fa-run's --paged).
Status checkPagedOptions(const KernelInfo &kernel,
                         const PagedCacheOptions *paged);

/// InvalidArgument unless `varlen` is given exactly for a varlen kernel (a
/// mixed kernel is one; naming fa-run's --varlen).
Status checkVarlenOptions(const KernelInfo &kernel,
                          const VarlenOptions *varlen);

/// FLOPs of one varlen attention: 4·Hq·D times the (query, key) pairs each
/// sequence sees within its own lengths (all Lq_b·Lk_b, or those the causal
/// mask and the window leave, exactly).
double varlenAttentionFlops(const VarlenProblem &problem);

/// FLOPs of one mixed batch: 4·Hq·D times the (query, key) pairs each
/// sequence's Lq_b queries see of its cache_seqlens[b] keys (exactly, with
/// the causal mask and the window).
double mixedAttentionFlops(const MixedProblem &problem);

/// FLOPs of one attention: 4·B·Hq·Lq·Lk·D, halved when causal (the usual
/// convention); with a window, 4·B·Hq·D times the (query, key) pairs the
/// window (and the causal mask) leave, exactly.
double attentionFlops(const AttentionProblem &problem);

/// FLOPs of one paged attention: 4·Hq·D times the (query, key) pairs each
/// sequence's rows see (all Lq·len_b, or those the causal mask and the
/// window leave, exactly).
double pagedAttentionFlops(const PagedProblem &problem);

struct BenchResult {
  int repetitions = 0;
  double meanSeconds = 0;
  double minSeconds = 0;
  double flops = 0;
  /// flops / meanSeconds / 1e12.
  double tflops = 0;
  /// Timed on the host emulator: not a performance figure.
  bool hostEmulator = false;
};

/// One launch on N(0,1) inputs (seed 0) of `shape`; nothing is checked
/// beyond the launch's own status (a timing estimate's launch). `launched`,
/// if given, receives what ran (Kernel::launch). A paged kernel needs
/// `paged` (its cache from seed 0, unpoisoned; the shape's Lk is the
/// capacity). A varlen kernel needs `varlen` (its sequences from seed 0;
/// the shape's Lq and Lk are the maxima). A mixed kernel needs both (its
/// batch from seed 0, as validateKernel's).
Status launchOnInputs(const Kernel &kernel, const AttentionShape &shape,
                      const LaunchOptions &options = {},
                      LaunchInfo *launched = nullptr,
                      const PagedCacheOptions *paged = nullptr,
                      const VarlenOptions *varlen = nullptr);

/// One warm-up launch, then `repetitions` timed launches (each followed by a
/// device synchronize) on N(0,1) inputs; `paged` and `varlen` as for
/// launchOnInputs.
Expected<BenchResult> benchmarkKernel(const Kernel &kernel,
                                      const AttentionShape &shape,
                                      int repetitions,
                                      const LaunchOptions &options = {},
                                      const PagedCacheOptions *paged = nullptr,
                                      const VarlenOptions *varlen = nullptr);

} // namespace fa

#endif // FA_VALIDATE_H
