//===- Validate.cpp - Run a kernel and judge its output -------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements kernel validation and the timing loop on top of the
// public Device/Module/Kernel API, exactly as an application would use it.
//
//===----------------------------------------------------------------------===//

#include "fa/Validate.h"
#include "fa/Half.h"
#include "validate/AttentionCore.h"
#include "validate/DeviceTensors.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>
#include <thread>
#include <tuple>
#include <unistd.h>

using namespace fa;
using fa::detail::DeviceTensors;
using fa::detail::Placement;

Status fa::checkGoldenMatchesKernel(const GoldenCase &g, const KernelInfo &k) {
  const AttentionProblem &p = g.problem;
  bool scaleMatches =
      std::fabs(p.scale - k.scale) <= 1e-6 * std::max(p.scale, k.scale);
  // Golden cases have neither window nor softcap; the fields are compared
  // all the same, so that a case that had them would be held to them.
  bool maskMatches = p.windowLeft == k.windowLeft &&
                     p.windowRight == k.windowRight && p.softcap == k.softcap;
  if (k.hasHeadParams())
    return Status::error(ErrorCode::InvalidArgument,
                         "golden case '" + g.name +
                             "' does not match kernel '" + k.name +
                             "': golden cases have no " +
                             (k.alibi ? "ALiBi" : "attention sinks") +
                             " (validate with --shape)")
        .withKernel(k.name);
  if (g.dtype == k.dtype && p.headDim == k.headDim && p.causal == k.causal &&
      scaleMatches && maskMatches)
    return Status::success();
  // The window and softcap are named only where either side has them, so
  // the message of a plain mismatch reads as it always did.
  const bool named =
      p.hasWindow() || k.hasWindow() || p.softcap != 0 || k.softcap != 0;
  auto extra = [&](int64_t left, int64_t right, double softcap) {
    char text[128] = "";
    if (named)
      std::snprintf(text, sizeof(text), ", window=[%lld, %lld], softcap=%.9g",
                    (long long)left, (long long)right, softcap);
    return std::string(text);
  };
  char buf[768];
  std::snprintf(buf, sizeof(buf),
                "golden case '%s' (dtype %s, D=%lld, causal=%s, scale=%.9g%s) "
                "does not match kernel '%s' (dtype %s, D=%lld, causal=%s, "
                "scale=%.9g%s)%s",
                g.name.c_str(), dtypeName(g.dtype), (long long)p.headDim,
                p.causal ? "true" : "false", p.scale,
                extra(p.windowLeft, p.windowRight, p.softcap).c_str(),
                k.name.c_str(), dtypeName(k.dtype), (long long)k.headDim,
                k.causal ? "true" : "false", k.scale,
                extra(k.windowLeft, k.windowRight, k.softcap).c_str(),
                maskMatches ? ""
                            : ": golden cases have no sliding window and no "
                              "softcap (validate with --shape)");
  return Status::error(ErrorCode::InvalidArgument, buf).withKernel(k.name);
}

AttentionProblem fa::kernelProblem(const KernelInfo &k,
                                   const AttentionShape &shape) {
  AttentionProblem p;
  p.shape = shape;
  p.headDim = k.headDim;
  p.causal = k.causal;
  p.scale = k.scale;
  p.windowLeft = k.windowLeft;
  p.windowRight = k.windowRight;
  p.softcap = k.softcap;
  return p;
}

Status fa::setHeadParams(const KernelInfo &k, AttentionProblem &p,
                         const std::vector<float> &alibiSlopes,
                         const std::vector<float> &sinks, uint64_t seed) {
  const int64_t heads = p.shape.headsQ;
  for (const auto &[name, feature, given] :
       {std::tuple<const char *, bool, const std::vector<float> *>{
            "alibi", k.alibi, &alibiSlopes},
        {"sinks", k.sinks, &sinks}}) {
    const std::string what =
        std::string(name) == "alibi" ? "ALiBi slopes" : "attention sinks";
    if (!feature && !given->empty())
      return Status::error(ErrorCode::InvalidArgument,
                           "kernel '" + k.name + "' takes no " + what +
                               " (its manifest does not say \"" + name +
                               "\": true)")
          .withKernel(k.name);
    if (feature && !given->empty() && int64_t(given->size()) != heads)
      return Status::error(ErrorCode::InvalidArgument,
                           std::to_string(given->size()) + " " + what +
                               " for kernel '" + k.name +
                               "', the problem has Hq = " +
                               std::to_string(heads) + " query heads")
          .withKernel(k.name);
  }
  p.alibiSlopes.clear();
  p.sinks.clear();
  if (k.alibi)
    p.alibiSlopes =
        alibiSlopes.empty() ? drawAlibiSlopes(heads, seed) : alibiSlopes;
  if (k.sinks)
    p.sinks = sinks.empty() ? drawSinks(heads, p.shape.seqK, seed) : sinks;
  return Status::success();
}

Status fa::checkLayout(const AttentionLayout &layout) {
  const std::pair<const char *, int64_t> pads[] = {{"Q", layout.q.rowPad},
                                                   {"K", layout.k.rowPad},
                                                   {"V", layout.v.rowPad},
                                                   {"O", layout.o.rowPad},
                                                   {"LSE", layout.lsePad}};
  for (const auto &[name, pad] : pads)
    if (pad < 0 || pad > maxLayoutPad)
      return Status::error(ErrorCode::InvalidArgument,
                           std::string("padding of ") + name + " is " +
                               std::to_string(pad) + ", must be in [0, " +
                               std::to_string(maxLayoutPad) + "]");
  return Status::success();
}

/// The (query, key) pairs a sequence of lq queries and lk keys sees: all,
/// or those the causal mask and the window leave (visibleKeys, the
/// references' rule), row by row.
static double visiblePairs(int64_t lq, int64_t lk, bool causal,
                           int64_t windowLeft, int64_t windowRight) {
  if (!causal && windowLeft < 0 && windowRight < 0)
    return double(lq) * double(lk);
  double pairs = 0;
  for (int64_t i = 0; i < lq; ++i)
    pairs +=
        double(detail::visibleKeys(i, lq, lk, causal, windowLeft, windowRight)
                   .count());
  return pairs;
}

double fa::attentionFlops(const AttentionProblem &p) {
  const AttentionShape &s = p.shape;
  if (p.hasWindow())
    return 4.0 * double(s.batch) * double(s.headsQ) * double(p.headDim) *
           visiblePairs(s.seqQ, s.seqK, p.causal, p.windowLeft, p.windowRight);
  double flops = 4.0 * double(s.batch) * double(s.headsQ) * double(s.seqQ) *
                 double(s.seqK) * double(p.headDim);
  return p.causal ? flops / 2 : flops;
}

/// Bytes that `place` spans, or nothing on overflow.
static std::optional<int64_t> spanBytes(const Placement &place) {
  std::optional<int64_t> span = place.span();
  return span ? checkedMul(*span, int64_t(place.elem)) : std::nullopt;
}

Expected<ValidationMemory>
fa::validationMemory(const AttentionProblem &p, DType dtype, bool hasLse,
                     const AttentionLayout &layout, const PagedProblem *paged,
                     const VarlenProblem *varlen, const MixedProblem *mixed) {
  auto overflow = [&](const std::string &what) {
    return Status::error(ErrorCode::InvalidArgument,
                         "invalid attention problem: " + p.shape.toString() +
                             " D=" + std::to_string(p.headDim) + " with " +
                             layout.toString() + ": " + what +
                             " overflows 64 bits");
  };
  if (Status s = checkShape(p); !s.ok())
    return s;
  if (paged)
    if (Status s = checkPagedProblem(*paged); !s.ok())
      return s;
  if (varlen)
    if (Status s = checkVarlenProblem(*varlen); !s.ok())
      return s;
  if (mixed) {
    if (Status s = checkMixedProblem(*mixed); !s.ok())
      return s;
    paged = &mixed->cache;
  }
  // checkShape (checkPagedProblem: the caches; checkVarlenProblem: the
  // packed tensors) bounds each element count by INT64_MAX / 8.
  const int64_t q = int64_t(mixed    ? mixed->qElements()
                            : varlen ? varlen->qElements()
                                     : p.qElements()),
                kv = int64_t(paged    ? paged->cacheElements()
                             : varlen ? varlen->kvElements()
                                      : p.kvElements()),
                lse = int64_t(mixed    ? mixed->lseElements()
                              : varlen ? varlen->lseElements()
                                       : p.lseElements());
  const int64_t elem = int64_t(dtypeBytes(dtype));
  DeviceTensors t;
  t.place(p, dtype, layout, mixed ? nullptr : paged, varlen, mixed);
  const std::pair<const char *, const Placement *> tensors[] = {
      {"Q", &t.qPlace},
      {"K", &t.kPlace},
      {"V", &t.vPlace},
      {"O", &t.oPlace},
      {"LSE", hasLse ? &t.lsePlace : nullptr}};
  // Buffers are rounded up to 256 bytes (the host allocator's alignment)
  // and have a guard zone at each end.
  int64_t device = 0, staging = 0, lseBytes = 0;
  for (const auto &[name, place] : tensors) {
    if (!place)
      continue;
    std::optional<int64_t> bytes = spanBytes(*place);
    std::optional<int64_t> sum =
        bytes ? checkedSum({device, *bytes, 256,
                            2 * int64_t(Buffer::kDefaultGuardBytes)})
              : std::nullopt;
    if (!sum)
      return overflow(std::string("the device buffer of ") + name);
    device = *sum;
    if (place == &t.lsePlace) {
      lseBytes = *bytes;
      continue;
    }
    // A tensor goes up as its dense encoding plus the device-layout copy.
    int64_t dense =
        int64_t(place == &t.qPlace || place == &t.oPlace ? q : kv) * elem;
    std::optional<int64_t> copy = checkedAdd(dense, *bytes);
    if (!copy)
      return overflow(std::string("the staging copy of ") + name);
    staging = std::max(staging, *copy);
  }
  // A paged problem's block table and lengths (int32), on the device and
  // on the host; checkPagedProblem bounds the table by INT64_MAX / 8 bytes.
  int64_t metadata = 0;
  if (paged) {
    metadata =
        4 * int64_t(paged->blockTable.size() + paged->cacheSeqlens.size());
    std::optional<int64_t> sum = checkedSum(
        {device, metadata, 512, 4 * int64_t(Buffer::kDefaultGuardBytes)});
    if (!sum)
      return overflow("the device buffers of block_table and cache_seqlens");
    device = *sum;
  }
  // A varlen problem's cu_seqlens_q and cu_seqlens_k (int32, B + 1 each; a
  // mixed problem's cu_seqlens_q).
  if (varlen || mixed) {
    metadata = 4 * int64_t(mixed ? mixed->cuSeqlensQ.size()
                                 : varlen->cuSeqlensQ.size() +
                                       varlen->cuSeqlensK.size());
    std::optional<int64_t> sum = checkedSum(
        {device, metadata, 512, 4 * int64_t(Buffer::kDefaultGuardBytes)});
    if (!sum)
      return overflow("the device buffers of cu_seqlens_q and cu_seqlens_k");
    device = *sum;
  }
  // Every term below is at most 8 x an element count or a device buffer,
  // each bounded above; the sums are checked.
  const int64_t oBytes = *spanBytes(t.oPlace);
  const int64_t threads =
      std::max<int64_t>(1, std::thread::hardware_concurrency());
  std::optional<int64_t> inputs =
      checkedSum({4 * q, 4 * kv, 4 * kv, staging, metadata});
  std::optional<int64_t> rowScratch =
      checkedProduct({threads, p.shape.seqK, 8});
  std::optional<int64_t> references =
      rowScratch
          ? checkedSum({oBytes, elem * q, oBytes / 8, 4 * q, // O read back
                        lseBytes, 4 * lse, 4 * lse,          // LSE read back
                        8 * q, 8 * q, 8 * lse,               // fp64 reference
                        4 * q, 4 * lse,                      // naive reference
                        *rowScratch})
          : std::nullopt;
  if (!inputs || !references)
    return overflow("the host memory");
  ValidationMemory m;
  m.deviceBytes = uint64_t(device);
  m.inputBytes = uint64_t(*inputs);
  m.referenceBytes = uint64_t(*references);
  return m;
}

uint64_t fa::hostMemoryAvailable() {
  if (FILE *f = std::fopen("/proc/meminfo", "r")) {
    char line[256];
    unsigned long long kib = 0;
    bool found = false;
    while (!found && std::fgets(line, sizeof(line), f))
      found = std::sscanf(line, "MemAvailable: %llu kB", &kib) == 1;
    std::fclose(f);
    if (found && kib <= UINT64_MAX / 1024)
      return uint64_t(kib) * 1024;
  }
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && pageSize > 0 &&
      uint64_t(pages) <= UINT64_MAX / uint64_t(pageSize))
    return uint64_t(pages) * uint64_t(pageSize);
  return 0;
}

Status fa::checkMemory(const Device &device, const AttentionProblem &p,
                       uint64_t hostBytes, uint64_t deviceBytes) {
  const uint64_t available = hostMemoryAvailable();
  const bool shared = device.isHostEmulator();
  const uint64_t needed =
      shared ? (hostBytes > UINT64_MAX - deviceBytes ? UINT64_MAX
                                                     : hostBytes + deviceBytes)
             : hostBytes;
  if (available == 0 || needed <= available)
    return Status::success();
  std::string detail = shared
                           ? " (device buffers " + std::to_string(deviceBytes) +
                                 " + inputs, copies and CPU references " +
                                 std::to_string(hostBytes) + ")"
                           : " (inputs, copies and CPU references)";
  return Status::error(ErrorCode::OutOfMemory,
                       "attention problem " + p.shape.toString() +
                           " D=" + std::to_string(p.headDim) + " needs " +
                           std::to_string(needed) + " bytes of host memory" +
                           detail + ", the host has " +
                           std::to_string(available) + " bytes available")
      .withDevice(device.name());
}

static double maxAbs(const std::vector<float> &values) {
  double m = 0;
  for (float x : values)
    m = std::max(m, double(std::fabs(x)));
  return m;
}

static std::vector<double> toDouble(const std::vector<float> &v) {
  return std::vector<double>(v.begin(), v.end());
}

/// Device bytes of the split-KV workspace a launch of `kernel` on `shape`
/// allocates (0 for a dense kernel); the split count's errors come first.
static Expected<uint64_t> splitWorkspaceBytes(const Kernel &kernel,
                                         const AttentionShape &shape,
                                         const LaunchOptions &options) {
  Expected<KvSplitPlan> plan = planKvSplits(
      kernel.info(), shape, kernel.device().limits(), options.kvSplits);
  if (!plan)
    return plan.takeStatus();
  return plan->workspaceOBytes + plan->workspaceLseBytes;
}

Status fa::checkPagedOptions(const KernelInfo &kernel,
                             const PagedCacheOptions *paged) {
  if (kernel.varlen && !kernel.paged && paged)
    return Status::error(ErrorCode::InvalidArgument,
                         "kernel '" + kernel.name +
                             "' takes a variable-length batch (its manifest "
                             "says \"varlen\": true), not a paged K/V cache "
                             "(fa-run --paged is for paged kernels)")
        .withKernel(kernel.name);
  if (kernel.paged && !paged)
    return Status::error(
               ErrorCode::InvalidArgument,
               "kernel '" + kernel.name +
                   "' reads a paged K/V cache (its manifest says "
                   "\"paged\": true): its inputs need a page size "
                   "(fa-run --paged PAGE_SIZE" +
                   (kernel.varlen ? " --varlen, a mixed batch)" : ")"))
        .withKernel(kernel.name);
  if (!kernel.paged && paged)
    return Status::error(ErrorCode::InvalidArgument,
                         "kernel '" + kernel.name +
                             "' reads a dense K/V (its manifest does not say "
                             "\"paged\"): it takes no paged cache (fa-run "
                             "--paged is for paged kernels)")
        .withKernel(kernel.name);
  return Status::success();
}

Status fa::checkVarlenOptions(const KernelInfo &kernel,
                              const VarlenOptions *varlen) {
  if (kernel.varlen && !varlen)
    return Status::error(ErrorCode::InvalidArgument,
                         "kernel '" + kernel.name +
                             "' takes a variable-length batch (its manifest "
                             "says \"varlen\": true): its inputs need "
                             "sequence lengths (fa-run --varlen" +
                             (kernel.paged ? " with --paged PAGE_SIZE, a "
                                             "mixed batch)"
                                           : ")"))
        .withKernel(kernel.name);
  if (!kernel.varlen && varlen)
    return Status::error(ErrorCode::InvalidArgument,
                         "kernel '" + kernel.name +
                             "' takes a dense batch (its manifest does not "
                             "say \"varlen\"): it takes no sequence lengths "
                             "(fa-run --varlen is for varlen kernels)")
        .withKernel(kernel.name);
  return Status::success();
}

double fa::varlenAttentionFlops(const VarlenProblem &p) {
  double pairs = 0; // per query head
  for (int64_t b = 0; b + 1 < int64_t(p.cuSeqlensQ.size()) &&
                      b + 1 < int64_t(p.cuSeqlensK.size());
       ++b)
    pairs += visiblePairs(p.cuSeqlensQ[size_t(b + 1)] - p.cuSeqlensQ[size_t(b)],
                          p.cuSeqlensK[size_t(b + 1)] - p.cuSeqlensK[size_t(b)],
                          p.causal, p.windowLeft, p.windowRight);
  return 4.0 * double(p.headsQ) * double(p.headDim) * pairs;
}

/// A paged problem's dense counterpart for the FLOP count: Lk its longest
/// sequence (at least 1).
static AttentionProblem longestDense(const AttentionProblem &p,
                                     const PagedProblem &paged) {
  AttentionProblem dense = p;
  dense.shape.seqK =
      std::max<int64_t>(1, DeviceTensors::longestSequence(paged));
  return dense;
}

double fa::mixedAttentionFlops(const MixedProblem &p) {
  const PagedProblem &c = p.cache;
  double pairs = 0; // per query head
  for (int64_t b = 0; b < c.batch && b + 1 < int64_t(p.cuSeqlensQ.size()) &&
                      b < int64_t(c.cacheSeqlens.size());
       ++b)
    pairs += visiblePairs(p.queries(b), c.cacheSeqlens[size_t(b)], c.causal,
                          c.windowLeft, c.windowRight);
  return 4.0 * double(c.headsQ) * double(c.headDim) * pairs;
}

double fa::pagedAttentionFlops(const PagedProblem &p) {
  double pairs = 0; // (query, key) pairs seen, per query head
  for (int32_t len : p.cacheSeqlens)
    pairs += visiblePairs(p.seqQ, len, p.causal, p.windowLeft, p.windowRight);
  return 4.0 * double(p.headsQ) * double(p.headDim) * pairs;
}

Expected<ValidationReport> fa::validateKernel(const Kernel &kernel,
                                              const ValidationOptions &opts) {
  const KernelInfo &info = kernel.info();
  Device device = kernel.device();
  ValidationReport r;
  r.kernel = info.name;
  r.device = device.name();
  r.dtype = info.dtype;
  const PagedCacheOptions *pagedOptions = opts.paged ? &*opts.paged : nullptr;
  const VarlenOptions *varlenOptions = opts.varlen ? &*opts.varlen : nullptr;
  if (Status s = checkPagedOptions(info, pagedOptions); !s.ok())
    return s;
  if (Status s = checkVarlenOptions(info, varlenOptions); !s.ok())
    return s;
  if ((pagedOptions || varlenOptions) && opts.golden)
    return Status::error(ErrorCode::InvalidArgument,
                         "golden case '" + opts.golden->name +
                             "' is a dense problem: kernel '" + info.name +
                             (pagedOptions && varlenOptions
                                  ? "' takes a mixed prefill/decode batch"
                              : pagedOptions
                                  ? "' reads a paged K/V cache"
                                  : "' takes a variable-length batch"))
        .withKernel(info.name);

  AttentionData generated;
  const AttentionData *data = nullptr;
  if (opts.golden) {
    if (Status s = checkGoldenMatchesKernel(*opts.golden, info); !s.ok())
      return s;
    r.problem = opts.golden->problem;
    r.dist = opts.golden->dist;
    r.seed = opts.golden->seed;
    r.golden = opts.golden->name;
    data = &opts.golden->inputs;
  } else {
    r.problem = kernelProblem(info, opts.shape);
    r.dist = opts.dist;
    r.seed = opts.seed;
  }
  if (Status s = checkShape(r.problem); !s.ok())
    return s;
  // The head parameters a kernel takes, given or drawn (a golden case's
  // kernel has none: checkGoldenMatchesKernel).
  if (!opts.golden)
    if (Status s = setHeadParams(info, r.problem, opts.alibiSlopes, opts.sinks,
                                 opts.seed);
        !s.ok())
      return s;
  if (Status s = checkLayout(opts.layout); !s.ok())
    return s;
  // A paged kernel: the table and lengths for these sizes (the shape's Lk is
  // each sequence's capacity), its K and V the caches in the row padding of
  // the layout; the launch's Lk is the longest sequence.
  const PagedProblem *paged = nullptr;
  AttentionShape launchShape = r.problem.shape;
  // A mixed kernel: the query and key lengths for these sizes (the shape's
  // Lq is max_seqlen_q, its Lk the cache's capacity), Q, O and LSE packed
  // and K, V the caches; the launch's Lk is the longest sequence.
  const MixedProblem *mixed = nullptr;
  if (pagedOptions && varlenOptions) {
    Expected<MixedProblem> made =
        mixedProblemFor(r.problem, *pagedOptions, *varlenOptions, opts.seed);
    if (!made)
      return made.takeStatus();
    r.mixed = made.take();
    mixed = &*r.mixed;
    launchShape.seqK = DeviceTensors::longestSequence(mixed->cache);
  } else if (pagedOptions) {
    Expected<PagedProblem> made =
        pagedProblemFor(r.problem, *pagedOptions, opts.seed);
    if (!made)
      return made.takeStatus();
    r.paged = made.take();
    paged = &*r.paged;
    launchShape.seqK = DeviceTensors::longestSequence(*paged);
  }
  // A varlen kernel: the sequences for these sizes (the shape's Lq and Lk
  // are max_seqlen_q and max_seqlen_k, the launch's too), its tensors
  // packed in the row padding of the layout.
  const VarlenProblem *varlen = nullptr;
  if (varlenOptions && !mixed) {
    Expected<VarlenProblem> made =
        varlenProblemFor(r.problem, *varlenOptions, opts.seed);
    if (!made)
      return made.takeStatus();
    r.varlen = made.take();
    varlen = &*r.varlen;
  }
  // Sizes are checked for overflow, and the memory needed against what there
  // is, before anything large is allocated.
  Expected<ValidationMemory> memory = validationMemory(
      r.problem, info.dtype, info.hasLse, opts.layout, paged, varlen, mixed);
  if (!memory)
    return memory.takeStatus();
  Expected<uint64_t> workspace =
      splitWorkspaceBytes(kernel, launchShape, opts.launch);
  if (!workspace)
    return workspace.takeStatus();
  if (Status s = checkMemory(device, r.problem,
                             memory->inputBytes + memory->referenceBytes,
                             memory->deviceBytes + *workspace);
      !s.ok())
    return s;
  if (mixed) {
    // Every cache row no sequence reads is NaN: reading one fails.
    generated = generateMixedInputs(*mixed, info.dtype, opts.dist, opts.seed);
    Expected<int64_t> poisoned = poisonUnreadCacheRows(*mixed, generated);
    if (!poisoned)
      return poisoned.takeStatus();
    data = &generated;
  } else if (paged) {
    // Every cache row no sequence reads is NaN: reading one fails.
    generated = generatePagedInputs(*paged, info.dtype, opts.dist, opts.seed);
    Expected<int64_t> poisoned = poisonUnreadCacheRows(*paged, generated);
    if (!poisoned)
      return poisoned.takeStatus();
    data = &generated;
  } else if (varlen) {
    generated = generateVarlenInputs(*varlen, info.dtype, opts.dist, opts.seed);
    data = &generated;
  } else if (!opts.golden) {
    generated = generateInputs(r.problem, info.dtype, opts.dist, opts.seed);
    data = &generated;
  }
  if (Status s = mixed    ? checkMixedData(*mixed, *data)
                 : paged  ? checkPagedData(*paged, *data)
                 : varlen ? checkVarlenData(*varlen, *data)
                          : checkProblem(r.problem, *data);
      !s.ok())
    return s;

  DeviceTensors t;
  if (Status s = t.create(device, info, r.problem, *data, opts.layout, paged,
                          varlen, mixed);
      !s.ok())
    return s;
  r.layout = opts.layout;
  if (paged || mixed) // the caches' order
    r.layout.k.order = r.layout.v.order = TensorLayout::Blhd;
  if (mixed) // packed rows [total_q, Hq, D]
    r.layout.q.order = r.layout.o.order = TensorLayout::Blhd;
  if (varlen) // packed rows [total, H, D]
    r.layout.q.order = r.layout.k.order = r.layout.v.order = r.layout.o.order =
        TensorLayout::Blhd;
  r.strides = t.strides;
  // The device reference reads the kernel's input buffers, so it runs
  // before the kernel could overwrite them; a paged problem's sequences go
  // up gathered, one dense problem each.
  std::optional<DeviceReferenceResult> onDevice;
  if (useDeviceReference(opts.reference, device,
                         mixed   ? longestDense(r.problem, mixed->cache)
                         : paged ? longestDense(r.problem, *paged)
                                 : r.problem)) {
    Expected<DeviceReferenceResult> d =
        mixed ? deviceMixedReferenceAttention(device, *mixed, info.dtype, *data)
        : paged
            ? devicePagedReferenceAttention(device, *paged, info.dtype, *data)
        : varlen
            ? deviceVarlenReferenceAttention(device, *varlen, info.dtype, *data)
            : deviceReferenceAttention(device, r.problem, info.dtype, *t.q,
                                       *t.k, *t.v, t.strides);
    if (!d)
      return d.takeStatus();
    onDevice.emplace(d.take());
  }
  r.reference = onDevice ? onDevice->description : "fp64 CPU";
  // Layer 2: a trace buffer of NaN (unwritten blocks stay NaN).
  std::optional<Buffer> traceBuffer;
  AttentionArgs args = t.args(launchShape);
  if (opts.trace) {
    if (!info.trace)
      return Status::error(ErrorCode::InvalidArgument,
                           "kernel '" + info.name +
                               "' was compiled without --trace: it writes "
                               "no per-block statistics (fac --trace)")
          .withKernel(info.name);
    const size_t elements = size_t(traceElements(info, launchShape));
    std::vector<float> nan(elements, std::numeric_limits<float>::quiet_NaN());
    Expected<Buffer> b = device.allocate(nan.size() * sizeof(float));
    if (!b)
      return b.takeStatus();
    traceBuffer.emplace(b.take());
    if (Status s = traceBuffer->copyFromHost(nan.data(), nan.size() * 4);
        !s.ok())
      return s;
    args.trace = TraceArgs{&*traceBuffer, opts.trace->batch, opts.trace->head,
                           opts.trace->row};
  }
  LaunchInfo launched;
  if (Status s = kernel.launch(args, opts.launch, &launched); !s.ok())
    return s;
  r.kvSplits = launched.kvSplits;
  if (Status s = device.synchronize(); !s.ok())
    return s;
  std::vector<uint8_t> oBytes, lseBytes;
  size_t oPadding = 0, lsePadding = 0;
  if (Status s = DeviceTensors::read(*t.o, t.oPlace, oBytes, oPadding); !s.ok())
    return s;
  const size_t qElements = mixed    ? mixed->qElements()
                           : varlen ? varlen->qElements()
                                    : r.problem.qElements();
  const size_t lseElements = mixed    ? mixed->lseElements()
                             : varlen ? varlen->lseElements()
                                      : r.problem.lseElements();
  std::vector<float> out = decodeElements(info.dtype, oBytes.data(), qElements);
  std::vector<float> lse;
  if (t.lse) {
    if (Status s =
            DeviceTensors::read(*t.lse, t.lsePlace, lseBytes, lsePadding);
        !s.ok())
      return s;
    lse = decodeElements(DType::F32, lseBytes.data(), lseElements);
  }

  // Baseline: the golden vectors, else our fp64 reference. The conditioning
  // magnitudes come from the fp64 reference in both cases.
  AttentionResult<double> ref =
      onDevice ? std::move(onDevice->exact)
      : mixed  ? referenceMixedAttentionF64(*mixed, *data)
      : paged  ? referencePagedAttentionF64(*paged, *data)
      : varlen ? referenceVarlenAttentionF64(*varlen, *data)
               : referenceAttentionF64(r.problem, *data);
  std::vector<double> baseO, baseLse;
  if (opts.golden) {
    baseO = toDouble(opts.golden->oRef);
    baseLse = toDouble(opts.golden->lseRef);
  } else {
    baseO = std::move(ref.o);
    baseLse = std::move(ref.lse);
  }
  AttentionResult<float> naive =
      onDevice ? std::move(onDevice->naive)
      : mixed  ? naiveMixedAttention(*mixed, info.dtype, *data)
      : paged  ? naivePagedAttention(*paged, info.dtype, *data)
      : varlen ? naiveVarlenAttention(*varlen, info.dtype, *data)
               : naiveAttention(r.problem, info.dtype, *data);
  r.ours = compareOutputs(out, baseO);
  r.naive = compareOutputs(naive.o, baseO);
  double floor = magnitudeFloor(maxAbs(data->v));
  compareScaled(r.ours, out, baseO, ref.magnitude, floor);
  compareScaled(r.naive, naive.o, baseO, ref.magnitude, floor);
  if (info.hasLse) {
    compareLse(r.ours, lse, baseLse);
    compareLse(r.naive, naive.lse, baseLse);
  }
  r.ours.paddingChecked = true;
  r.ours.paddingWrites = oPadding + lsePadding;
  double maxLse = 0;
  for (double x : baseLse)
    if (std::isfinite(x))
      maxLse = std::max(maxLse, std::fabs(x));
  // maxAbs skips the NaN of a paged cache's unread rows.
  r.criteria = defaultCriteria(info.dtype, r.dist, maxAbs(data->v), maxLse,
                               std::max<int64_t>(1, launchShape.seqK));
  r.verdict = judge(r.ours, r.naive, r.criteria);
  if (traceBuffer) {
    std::vector<float> written(traceBuffer->size() / sizeof(float));
    if (Status s = traceBuffer->copyToHost(written.data(), traceBuffer->size());
        !s.ok())
      return s;
    Expected<TraceReport> trace =
        compareTrace(r.problem, *data, info.blockM, info.blockN, *opts.trace,
                     written, r.criteria.maxScaled);
    if (!trace)
      return trace.takeStatus();
    r.trace = trace.take();
    Check c;
    c.name = "trace";
    c.pass = r.trace->pass();
    c.value = double(r.trace->firstMismatch);
    c.limit = -1;
    c.text = c.pass ? "trace: every K/V block's m, l and o match"
                    : "trace: block " + std::to_string(r.trace->firstMismatch) +
                          " parts (" + r.trace->mismatch + ")";
    r.verdict.checks.push_back(c);
    r.verdict.pass = r.verdict.pass && c.pass;
  }
  return r;
}

namespace {
/// The inputs of a benchmark or estimate launch, on the kernel's device.
struct LaunchInputs {
  AttentionProblem problem;
  /// A paged kernel's table and lengths (the tensors point at it).
  std::optional<PagedProblem> paged;
  /// A varlen kernel's sequences (the tensors point at them).
  std::optional<VarlenProblem> varlen;
  /// A mixed kernel's batch (the tensors point at it).
  std::optional<MixedProblem> mixed;
  DeviceTensors tensors;
  AttentionShape launchShape;
};
} // namespace

static Status makeLaunchInputs(const Kernel &kernel,
                               const AttentionShape &shape,
                               const LaunchOptions &options,
                               const PagedCacheOptions *pagedOptions,
                               const VarlenOptions *varlenOptions,
                               LaunchInputs &in) {
  const KernelInfo &info = kernel.info();
  Device device = kernel.device();
  if (Status s = checkPagedOptions(info, pagedOptions); !s.ok())
    return s;
  if (Status s = checkVarlenOptions(info, varlenOptions); !s.ok())
    return s;
  in.problem = kernelProblem(info, shape);
  if (Status s = checkShape(in.problem); !s.ok())
    return s;
  if (Status s = setHeadParams(info, in.problem, {}, {}, 0); !s.ok())
    return s;
  const AttentionProblem &p = in.problem;
  in.launchShape = shape;
  if (pagedOptions && varlenOptions) {
    Expected<MixedProblem> made =
        mixedProblemFor(p, *pagedOptions, *varlenOptions, 0);
    if (!made)
      return made.takeStatus();
    in.mixed = made.take();
    in.launchShape.seqK = DeviceTensors::longestSequence(in.mixed->cache);
  } else if (pagedOptions) {
    Expected<PagedProblem> made = pagedProblemFor(p, *pagedOptions, 0);
    if (!made)
      return made.takeStatus();
    in.paged = made.take();
    in.launchShape.seqK = DeviceTensors::longestSequence(*in.paged);
  }
  if (varlenOptions && !in.mixed) {
    Expected<VarlenProblem> made = varlenProblemFor(p, *varlenOptions, 0);
    if (!made)
      return made.takeStatus();
    in.varlen = made.take();
  }
  const PagedProblem *paged = in.paged ? &*in.paged : nullptr;
  const VarlenProblem *varlen = in.varlen ? &*in.varlen : nullptr;
  const MixedProblem *mixed = in.mixed ? &*in.mixed : nullptr;
  Expected<ValidationMemory> memory = validationMemory(
      p, info.dtype, info.hasLse, AttentionLayout(), paged, varlen, mixed);
  if (!memory)
    return memory.takeStatus();
  Expected<uint64_t> workspace =
      splitWorkspaceBytes(kernel, in.launchShape, options);
  if (!workspace)
    return workspace.takeStatus();
  if (Status s = checkMemory(device, p, memory->inputBytes,
                             memory->deviceBytes + *workspace);
      !s.ok())
    return s;
  AttentionData data =
      mixed   ? generateMixedInputs(*mixed, info.dtype, Distribution::Normal, 0)
      : paged ? generatePagedInputs(*paged, info.dtype, Distribution::Normal, 0)
      : varlen
          ? generateVarlenInputs(*varlen, info.dtype, Distribution::Normal, 0)
          : generateInputs(p, info.dtype, Distribution::Normal, 0);
  return in.tensors.create(device, info, p, data, AttentionLayout(), paged,
                           varlen, mixed);
}

Status fa::launchOnInputs(const Kernel &kernel, const AttentionShape &shape,
                          const LaunchOptions &options, LaunchInfo *launched,
                          const PagedCacheOptions *paged,
                          const VarlenOptions *varlen) {
  LaunchInputs in;
  if (Status s = makeLaunchInputs(kernel, shape, options, paged, varlen, in);
      !s.ok())
    return s;
  if (Status s =
          kernel.launch(in.tensors.args(in.launchShape), options, launched);
      !s.ok())
    return s;
  return kernel.device().synchronize();
}

Expected<BenchResult> fa::benchmarkKernel(const Kernel &kernel,
                                          const AttentionShape &shape,
                                          int repetitions,
                                          const LaunchOptions &options,
                                          const PagedCacheOptions *paged,
                                          const VarlenOptions *varlen) {
  if (repetitions < 1)
    return Status::error(ErrorCode::InvalidArgument,
                         "benchmark needs at least 1 repetition, got " +
                             std::to_string(repetitions));
  Device device = kernel.device();
  LaunchInputs in;
  if (Status s = makeLaunchInputs(kernel, shape, options, paged, varlen, in);
      !s.ok())
    return s;
  const AttentionProblem &p = in.problem;
  AttentionArgs args = in.tensors.args(in.launchShape);
  if (Status s = kernel.launch(args, options); !s.ok()) // warm-up
    return s;
  BenchResult r;
  r.repetitions = repetitions;
  r.hostEmulator = device.isHostEmulator();
  r.flops = in.mixed    ? mixedAttentionFlops(*in.mixed)
            : in.paged  ? pagedAttentionFlops(*in.paged)
            : in.varlen ? varlenAttentionFlops(*in.varlen)
                        : attentionFlops(p);
  double total = 0;
  r.minSeconds = INFINITY;
  // The warm-up checked the guard zones; the timed launches do not copy
  // them back.
  LaunchOptions timed = options;
  timed.checkGuards = false;
  for (int i = 0; i < repetitions; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (Status s = kernel.launch(args, timed); !s.ok())
      return s;
    if (Status s = device.synchronize(); !s.ok())
      return s;
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    total += seconds;
    r.minSeconds = std::min(r.minSeconds, seconds);
  }
  r.meanSeconds = total / repetitions;
  r.tflops = r.flops / r.meanSeconds / 1e12;
  return r;
}
