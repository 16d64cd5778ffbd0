//===- fa-run.cpp - Load, run, validate and time an fa kernel -------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// fa-run is a thin main over fa::runtime and fa::validate (its argument
// parser is RunOptions.cpp, callable on its own): it opens a device, loads a
// code object with its manifest, runs the kernel on seeded random inputs (or
// a golden case), validates the output against the fp64 and naive
// references, and optionally times it.
//
// Exit status: 0 validation passed, 1 validation failed (including LDS races
// and barrier divergence), 2 usage, load or launch-argument errors, and
// "fa-run: internal error" for an exception (none escapes main).
//
//===----------------------------------------------------------------------===//

#include "RunOptions.h"
#include "fa/Runtime.h"
#include "fa/Validate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using namespace fa;

namespace {

using Options = RunOptions;

int fail(const std::string &message) {
  std::fprintf(stderr, "fa-run: error: %s\n", message.c_str());
  return 2;
}

std::string fmt(const char *format, double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), format, x);
  return buf;
}

/// JSON number; non-finite values become strings ("inf", "nan").
std::string num(double x) {
  if (std::isnan(x))
    return "\"nan\"";
  if (std::isinf(x))
    return x > 0 ? "\"inf\"" : "\"-inf\"";
  return fmt("%.9g", x);
}

std::string metricsJson(const OutputMetrics &m) {
  std::string s = "{\"max_abs_diff\": " + num(m.maxAbsDiff) +
                  ", \"mean_abs_diff\": " + num(m.meanAbsDiff) +
                  ", \"rmse\": " + num(m.rmse) +
                  ", \"cosine\": " + num(m.cosine) +
                  ", \"non_finite\": " + std::to_string(m.nonFinite);
  if (m.scaledCompared)
    s += ", \"max_scaled_diff\": " + num(m.maxScaledDiff) +
         ", \"worst_scaled_index\": " + std::to_string(m.worstScaled);
  if (m.lseCompared)
    s += ", \"lse_max_abs_diff\": " + num(m.lseMaxAbsDiff);
  if (m.paddingChecked)
    s += ", \"padding_writes\": " + std::to_string(m.paddingWrites);
  return s + "}";
}

std::string stridesText(const TensorStrides &t, const char *open,
                        const char *close) {
  return open + std::to_string(t.batch) + ", " + std::to_string(t.head) + ", " +
         std::to_string(t.row) + ", 1" + close;
}

std::string lseStridesText(const AttentionStrides &s, const char *open,
                           const char *close) {
  return open + std::to_string(s.lseBatch) + ", " + std::to_string(s.lseHead) +
         ", 1" + close;
}

/// {"q": {"layout": "bhld", "row_pad": 0, "strides": [b, h, l, 1]}, ...}
std::string layoutJson(const AttentionLayout &l, const AttentionStrides &s) {
  auto one = [](const char *name, const TensorPlacement &p,
                const TensorStrides &t) {
    return std::string("\"") + name + "\": {\"layout\": \"" +
           tensorLayoutName(p.order) +
           "\", \"row_pad\": " + std::to_string(p.rowPad) +
           ", \"strides\": " + stridesText(t, "[", "]") + "}";
  };
  return "{" + one("q", l.q, s.q) + ", " + one("k", l.k, s.k) + ", " +
         one("v", l.v, s.v) + ", " + one("o", l.o, s.o) +
         ", \"lse\": {\"pad\": " + std::to_string(l.lsePad) +
         ", \"strides\": " + lseStridesText(s, "[", "]") + "}}";
}

/// What a paged problem's table says: pages no sequence uses, pages more
/// than one sequence uses, the longest sequence (the kernel's Lk).
struct PagedSummary {
  int64_t unused = 0, shared = 0, longest = 0;
  std::string lengths; ///< "0,1,37"
  explicit PagedSummary(const PagedProblem &p) {
    std::vector<int> users(size_t(p.numPages), 0);
    for (int64_t b = 0; b < p.batch; ++b) {
      const int64_t len = p.cacheSeqlens[size_t(b)];
      longest = std::max(longest, len);
      lengths += (b ? "," : "") + std::to_string(len);
      for (int64_t j = 0; j < (len + p.pageSize - 1) / p.pageSize; ++j)
        ++users[size_t(p.blockTable[size_t(b * p.maxPages + j)])];
    }
    for (int n : users) {
      unused += n == 0;
      shared += n > 1;
    }
  }
};

std::string pagedJson(const Options &o, const PagedProblem &p) {
  PagedSummary s(p);
  return "{\"page_size\": " + std::to_string(p.pageSize) +
         ", \"num_pages\": " + std::to_string(p.numPages) +
         ", \"max_pages\": " + std::to_string(p.maxPages) +
         ", \"unused_pages\": " + std::to_string(s.unused) +
         ", \"shared_pages\": " + std::to_string(s.shared) +
         ", \"shuffled\": " + (o.paged->shufflePages ? "true" : "false") +
         ", \"cache_seqlens\": [" + s.lengths +
         "], \"lk\": " + std::to_string(s.longest) + "}";
}

/// "page size 16: 23 pages (3 unused, 2 shared), block_table 4 x 19,
/// shuffled; cache_seqlens 0,1,277,95; the kernel's Lk 277".
std::string pagedText(const Options &o, const PagedProblem &p) {
  PagedSummary s(p);
  return "page size " + std::to_string(p.pageSize) + ": " +
         std::to_string(p.numPages) + " pages (" + std::to_string(s.unused) +
         " unused, " + std::to_string(s.shared) + " shared), block_table " +
         std::to_string(p.batch) + " x " + std::to_string(p.maxPages) + ", " +
         (o.paged->shufflePages ? "shuffled" : "in order") +
         "; cache_seqlens " + s.lengths + "; the kernel's Lk " +
         std::to_string(s.longest);
}

/// A varlen problem's per-sequence lengths, "0,5,3".
std::string lengthsText(const std::vector<int32_t> &cu) {
  std::string out;
  for (size_t b = 0; b + 1 < cu.size(); ++b)
    out += (b ? "," : "") + std::to_string(cu[b + 1] - cu[b]);
  return out;
}

std::string varlenJson(const VarlenProblem &p) {
  return "{\"seqlens_q\": [" + lengthsText(p.cuSeqlensQ) +
         "], \"seqlens_k\": [" + lengthsText(p.cuSeqlensK) +
         "], \"total_q\": " + std::to_string(p.totalQ) +
         ", \"total_k\": " + std::to_string(p.totalK) +
         ", \"max_seqlen_q\": " + std::to_string(p.maxSeqlenQ) +
         ", \"max_seqlen_k\": " + std::to_string(p.maxSeqlenK) + "}";
}

/// "3 sequences: seqlens_q 0,1,40, seqlens_k 17,0,3; total_q 41, total_k
/// 20; max_seqlen_q 40, max_seqlen_k 70 (the kernel's Lq, Lk)".
std::string varlenText(const VarlenProblem &p) {
  return std::to_string(p.batch) + " sequences: seqlens_q " +
         lengthsText(p.cuSeqlensQ) + ", seqlens_k " +
         lengthsText(p.cuSeqlensK) + "; total_q " + std::to_string(p.totalQ) +
         ", total_k " + std::to_string(p.totalK) + "; max_seqlen_q " +
         std::to_string(p.maxSeqlenQ) + ", max_seqlen_k " +
         std::to_string(p.maxSeqlenK) + " (the kernel's Lq, Lk)";
}

/// A mixed batch: the query lengths and the cache. JSON: {"seqlens_q":
/// [...], "total_q": N, "max_seqlen_q": N, "cache": <pagedJson>}.
std::string mixedJson(const Options &o, const MixedProblem &p) {
  return "{\"seqlens_q\": [" + lengthsText(p.cuSeqlensQ) +
         "], \"total_q\": " + std::to_string(p.totalQ) +
         ", \"max_seqlen_q\": " + std::to_string(p.cache.seqQ) +
         ", \"cache\": " + pagedJson(o, p.cache) + "}";
}

/// "4 sequences: seqlens_q 0,1,3,7 (the last rows of cache_seqlens); total_q
/// 11; max_seqlen_q 8 (the kernel's Lq); page size 16: ...".
std::string mixedText(const Options &o, const MixedProblem &p) {
  return std::to_string(p.cache.batch) + " sequences: seqlens_q " +
         lengthsText(p.cuSeqlensQ) +
         " (the last rows of cache_seqlens); total_q " +
         std::to_string(p.totalQ) + "; max_seqlen_q " +
         std::to_string(p.cache.seqQ) + " (the kernel's Lq); " +
         pagedText(o, p.cache);
}

/// " window=[128, 0] softcap=30" as far as the kernel has them (FlashAttention
/// 2's window_size and softcap; -1 is an unbounded side), else nothing.
std::string windowText(const KernelInfo &k) {
  std::string out;
  if (k.hasWindow())
    out += " window=[" + std::to_string(k.windowLeft) + ", " +
           std::to_string(k.windowRight) + "]";
  if (k.softcap != 0) {
    char buf[64];
    std::snprintf(buf, sizeof buf, " softcap=%g", k.softcap);
    out += buf;
  }
  if (k.alibi)
    out += " alibi";
  if (k.sinks)
    out += " sinks";
  return out;
}

/// "0.5, 0.25, ..." of per-head values.
std::string headValuesText(const std::vector<float> &values) {
  std::string out;
  for (size_t h = 0; h < values.size(); ++h) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.6g", h ? ", " : "", double(values[h]));
    out += buf;
  }
  return out;
}

/// "[0.5, 0.25]" as JSON (float values print exactly enough to read back).
std::string headValuesJson(const std::vector<float> &values) {
  std::string out = "[";
  for (size_t h = 0; h < values.size(); ++h) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%s%.9g", h ? ", " : "", double(values[h]));
    out += buf;
  }
  return out + "]";
}

/// Where the slopes and sinks came from, for the output.
std::string alibiSource(const Options &o) {
  return o.alibi == "bloom" ? "bloom" : "drawn from the seed";
}
std::string sinksSource(const Options &o) {
  return o.sinkValue ? "--sinks" : "drawn from the seed";
}

void printJson(const Options &o, const Device &device, const KernelInfo &k,
               const ValidationReport *r, const BenchResult *bench,
               const Status &kernelError) {
  const AttentionShape &s = r ? r->problem.shape : o.shape;
  std::string out = "{\n";
  out += "  \"code_object\": " + jsonQuote(o.path) + ",\n";
  out += "  \"device\": " + jsonQuote(device.name()) + ",\n";
  out += "  \"kernel\": " + jsonQuote(k.name) + ",\n";
  out += "  \"dtype\": " + jsonQuote(dtypeName(k.dtype)) + ",\n";
  out += "  \"head_dim\": " + std::to_string(k.headDim) + ",\n";
  out += std::string("  \"causal\": ") + (k.causal ? "true" : "false") + ",\n";
  out += "  \"window_left\": " + std::to_string(k.windowLeft) +
         ",\n  \"window_right\": " + std::to_string(k.windowRight) + ",\n";
  out += "  \"softcap\": " + num(k.softcap) + ",\n";
  out += std::string("  \"alibi\": ") + (k.alibi ? "true" : "false") +
         ",\n  \"sinks\": " + (k.sinks ? "true" : "false") + ",\n";
  if (r && r->problem.hasAlibi())
    out += "  \"alibi_slopes\": " + headValuesJson(r->problem.alibiSlopes) +
           ",\n  \"alibi_source\": " + jsonQuote(alibiSource(o)) + ",\n";
  if (r && r->problem.hasSinks())
    out += "  \"sink_values\": " + headValuesJson(r->problem.sinks) +
           ",\n  \"sinks_source\": " + jsonQuote(sinksSource(o)) + ",\n";
  out += "  \"scale\": " + num(k.scale) + ",\n";
  out += "  \"shape\": {\"B\": " + std::to_string(s.batch) +
         ", \"Hq\": " + std::to_string(s.headsQ) +
         ", \"Hkv\": " + std::to_string(s.headsKv) +
         ", \"Lq\": " + std::to_string(s.seqQ) +
         ", \"Lk\": " + std::to_string(s.seqK) + "},\n";
  if (!o.golden.empty())
    out += "  \"golden\": " + jsonQuote(r ? r->golden : o.golden) + ",\n";
  else
    out += "  \"dist\": " + jsonQuote(distributionName(o.dist)) +
           ",\n  \"seed\": " + std::to_string(o.seed) + ",\n";
  if (r)
    out += "  \"layout\": " + layoutJson(r->layout, r->strides) + ",\n";
  if (r)
    out += "  \"reference\": " + jsonQuote(r->reference) + ",\n";
  if (r && k.splitKv)
    out += "  \"kv_splits\": " + std::to_string(r->kvSplits) + ",\n";
  if (r && r->paged)
    out += "  \"paged\": " + pagedJson(o, *r->paged) + ",\n";
  if (r && r->varlen)
    out += "  \"varlen\": " + varlenJson(*r->varlen) + ",\n";
  if (r && r->mixed)
    out += "  \"mixed\": " + mixedJson(o, *r->mixed) + ",\n";
  if (r && r->trace)
    out += "  \"trace\": " + traceJson(*r->trace) + ",\n";
  if (r) {
    out += "  \"metrics\": " + metricsJson(r->ours) + ",\n";
    out += "  \"naive_metrics\": " + metricsJson(r->naive) + ",\n";
    out += "  \"checks\": [";
    for (size_t i = 0; i < r->verdict.checks.size(); ++i) {
      const Check &c = r->verdict.checks[i];
      out += std::string(i ? ", " : "") + "{\"name\": " + jsonQuote(c.name) +
             ", \"pass\": " + (c.pass ? "true" : "false") +
             ", \"value\": " + num(c.value) + ", \"limit\": " + num(c.limit) +
             "}";
    }
    out += "],\n";
  } else {
    out += "  \"error\": " + jsonQuote(kernelError.toString()) + ",\n";
  }
  if (bench)
    out +=
        "  \"bench\": {\"repetitions\": " + std::to_string(bench->repetitions) +
        ", \"seconds_per_launch\": " + num(bench->meanSeconds) +
        ", \"min_seconds\": " + num(bench->minSeconds) +
        ", \"tflops\": " + num(bench->tflops) +
        ", \"host_emulator\": " + (bench->hostEmulator ? "true" : "false") +
        "},\n";
  bool pass = r && r->verdict.pass;
  out += std::string("  \"pass\": ") + (pass ? "true" : "false") + "\n}\n";
  std::fputs(out.c_str(), stdout);
}

/// The split count a split-KV launch used, and its combine kernel.
void printKvSplits(const Options &o, const KernelInfo &k, int64_t splits) {
  const std::string then =
      k.splitDirect && splits == 1
          ? "it writes O itself: kernel " + k.combine + " is not launched"
          : "then kernel " + k.combine + " combines them";
  std::printf("  kv splits %lld (%s; %s)\n", (long long)splits,
              o.kvSplits ? "--kv-splits" : "chosen by the runtime",
              then.c_str());
}

void printTable(const Options &o, const Device &device, const KernelInfo &k,
                const ValidationReport &r, const BenchResult *bench) {
  std::printf("fa-run %s\n", o.path.c_str());
  std::printf("  device    %s%s%s\n", device.name().c_str(),
              device.selectionLog().empty() ? "" : "  (auto: ",
              device.selectionLog().empty()
                  ? ""
                  : (device.selectionLog() + ")").c_str());
  std::printf("  kernel    %s: %s D=%lld causal=%s%s scale=%g lse=%s "
              "block_m=%lld threads=%lld\n",
              k.name.c_str(), dtypeName(k.dtype), (long long)k.headDim,
              k.causal ? "yes" : "no", windowText(k).c_str(), k.scale,
              k.hasLse ? "yes" : "no", (long long)k.blockM,
              (long long)k.threads);
  std::printf("  shape     %s%s\n", r.problem.shape.toString().c_str(),
              r.mixed    ? " (Lq: max_seqlen_q, Lk: the cache's capacity per "
                           "sequence)"
              : r.paged  ? " (Lk: the cache's capacity per sequence)"
              : r.varlen ? " (Lq, Lk: max_seqlen_q, max_seqlen_k)"
                         : "");
  if (r.paged)
    std::printf("  paged     %s\n", pagedText(o, *r.paged).c_str());
  if (r.varlen)
    std::printf("  varlen    %s\n", varlenText(*r.varlen).c_str());
  if (r.mixed)
    std::printf("  mixed     %s\n", mixedText(o, *r.mixed).c_str());
  if (r.problem.hasAlibi())
    std::printf("  alibi     slopes %s (%s)\n",
                headValuesText(r.problem.alibiSlopes).c_str(),
                alibiSource(o).c_str());
  if (r.problem.hasSinks())
    std::printf("  sinks     %s (%s)\n",
                headValuesText(r.problem.sinks).c_str(),
                sinksSource(o).c_str());
  if (k.splitKv)
    printKvSplits(o, k, r.kvSplits);
  std::printf("  layout    %s\n", r.layout.toString().c_str());
  std::printf("  strides   Q %s K %s V %s O %s LSE %s\n",
              stridesText(r.strides.q, "(", ")").c_str(),
              stridesText(r.strides.k, "(", ")").c_str(),
              stridesText(r.strides.v, "(", ")").c_str(),
              stridesText(r.strides.o, "(", ")").c_str(),
              lseStridesText(r.strides, "(", ")").c_str());
  if (r.golden.empty())
    std::printf("  inputs    %s, seed %llu; baseline: fp64 reference\n",
                distributionName(r.dist), (unsigned long long)r.seed);
  else
    std::printf("  inputs    golden case %s; baseline: its fp64 vectors\n",
                r.golden.c_str());
  std::printf("  reference %s%s\n", r.reference.c_str(),
              r.golden.empty() ? ""
                               : " (conditioning magnitudes and naive "
                                 "baseline)");
  std::printf("\n  %-18s %14s %14s\n", "metric", "kernel",
              (std::string("naive ") + dtypeName(k.dtype)).c_str());
  auto row = [](const char *name, double a, double b) {
    std::printf("  %-18s %14.6g %14.6g\n", name, a, b);
  };
  row("max_abs_diff", r.ours.maxAbsDiff, r.naive.maxAbsDiff);
  row("mean_abs_diff", r.ours.meanAbsDiff, r.naive.meanAbsDiff);
  row("rmse", r.ours.rmse, r.naive.rmse);
  row("max_scaled_diff", r.ours.maxScaledDiff, r.naive.maxScaledDiff);
  row("cosine", r.ours.cosine, r.naive.cosine);
  if (r.ours.lseCompared)
    row("lse_max_abs_diff", r.ours.lseMaxAbsDiff, r.naive.lseMaxAbsDiff);
  std::printf("\n");
  for (const Check &c : r.verdict.checks)
    std::printf("  %s  %s\n", c.pass ? "PASS" : "FAIL", c.text.c_str());
  if (r.trace)
    std::fputs(formatTrace(*r.trace).c_str(), stdout);
  if (bench)
    std::printf("\n  bench     %d launches: %.4f ms per launch (min %.4f ms), "
                "%.4g TFLOP/s%s\n",
                bench->repetitions, bench->meanSeconds * 1e3,
                bench->minSeconds * 1e3, bench->tflops,
                bench->hostEmulator
                    ? " (host emulator timing: not a performance figure)"
                    : "");
  std::printf("\n  result    %s\n", r.verdict.pass ? "PASS" : "FAIL");
}

bool isKernelFault(const Status &s) {
  return s.code() == ErrorCode::RaceDetected ||
         s.code() == ErrorCode::BarrierDivergence ||
         s.code() == ErrorCode::LaunchFailed;
}

/// fa-run after its arguments are parsed; returns the exit status.
/// Writes `text` to `path`; IoError "cannot write WHAT to 'PATH'".
Status writeText(const std::string &path, const std::string &text,
                 const char *what) {
  std::FILE *f = std::fopen(path.c_str(), "w");
  bool ok = f && std::fwrite(text.data(), 1, text.size(), f) == text.size();
  if (f && std::fclose(f) != 0)
    ok = false;
  if (!ok)
    return Status::error(ErrorCode::IoError, std::string("cannot write ") +
                                                 what + " to '" + path + "'");
  return Status::success();
}

/// --profile and --profile-json: the device's profile of the launch
/// validateKernel made (gfx906-sim only).
Status writeProfile(const Options &o, const Device &device) {
  std::string text = device.lastProfile();
  if (text.empty())
    return Status::error(ErrorCode::Unsupported,
                         "--profile: device '" + device.name() +
                             "' gives no execution profile (gfx906-sim does)");
  if (o.profile)
    std::fputs(text.c_str(), o.json ? stderr : stdout);
  if (!o.profileJson.empty())
    return writeText(o.profileJson, device.lastProfile(true), "the profile");
  return Status::success();
}

/// --estimate and --estimate-json: the device's MI50 timing estimate of the
/// launch (gfx906-sim only), with the problem's FLOPs.
Status writeEstimate(const Options &o, const Device &device,
                     const KernelInfo &info, const AttentionShape &shape,
                     const PagedProblem *paged,
                     const VarlenProblem *varlen = nullptr,
                     const MixedProblem *mixed = nullptr) {
  double flops = mixed    ? mixedAttentionFlops(*mixed)
                 : paged  ? pagedAttentionFlops(*paged)
                 : varlen ? varlenAttentionFlops(*varlen)
                          : attentionFlops(kernelProblem(info, shape));
  std::string text = device.lastEstimate(false, flops);
  if (text.empty())
    return Status::error(ErrorCode::Unsupported,
                         "--estimate: device '" + device.name() +
                             "' gives no timing estimate (gfx906-sim does)");
  if (o.estimate || o.estimateOnly)
    std::fputs(text.c_str(), o.json ? stderr : stdout);
  if (!o.estimateJson.empty())
    return writeText(o.estimateJson, device.lastEstimate(true, flops),
                     "the estimate");
  return Status::success();
}

/// --estimate-only: one launch of the sampled workgroups, no validation.
int estimateOnly(const Options &o, const Device &device, const Kernel &kernel) {
  if (!o.haveShape)
    return fail("--estimate-only needs --shape (a golden case is validated)");
  LaunchOptions lo;
  lo.estimate = true;
  lo.estimateOnly = true;
  lo.estimateSamples = o.estimateSamples;
  lo.estimateParams = o.estimateParams;
  lo.kvSplits = o.kvSplits;
  lo.checkGuards = false; // the unsampled workgroups' outputs are not written
  LaunchInfo launched;
  const PagedCacheOptions *paged = o.paged ? &*o.paged : nullptr;
  const VarlenOptions *varlen = o.varlen ? &*o.varlen : nullptr;
  if (Status s = launchOnInputs(kernel, o.shape, lo, &launched, paged, varlen);
      !s.ok())
    return fail(s.toString());
  if (kernel.info().splitKv && !o.json)
    printKvSplits(o, kernel.info(), launched.kvSplits);
  // The mixed, paged or varlen problem launchOnInputs made (seed 0), for
  // its FLOPs.
  std::optional<MixedProblem> batch;
  if (paged && varlen) {
    Expected<MixedProblem> made = mixedProblemFor(
        kernelProblem(kernel.info(), o.shape), *paged, *varlen, 0);
    if (!made)
      return fail(made.status().toString());
    batch = made.take();
  }
  std::optional<PagedProblem> problem;
  if (paged && !batch) {
    const KernelInfo &k = kernel.info();
    Expected<PagedProblem> made =
        pagedProblemFor(kernelProblem(k, o.shape), *paged, 0);
    if (!made)
      return fail(made.status().toString());
    problem = made.take();
  }
  // The varlen problem launchOnInputs made (seed 0), for its FLOPs.
  std::optional<VarlenProblem> sequences;
  if (varlen && !batch) {
    const KernelInfo &k = kernel.info();
    Expected<VarlenProblem> made =
        varlenProblemFor(kernelProblem(k, o.shape), *varlen, 0);
    if (!made)
      return fail(made.status().toString());
    sequences = made.take();
  }
  if (Status s = writeEstimate(
          o, device, kernel.info(), o.shape, problem ? &*problem : nullptr,
          sequences ? &*sequences : nullptr, batch ? &*batch : nullptr);
      !s.ok())
    return fail(s.toString());
  return 0;
}

int run(const Options &o) {
  // `auto` picks a device that runs the code object's target; a manifest
  // that cannot be read here is reported by Module::load below.
  std::string target;
  if (o.device == "auto")
    if (Expected<Manifest> manifest = Module::readManifest(o.path))
      target = manifest->target;
  Expected<Device> device = Device::open(o.device, target);
  if (!device)
    return fail(device.status().toString());
  Expected<Module> module = Module::load(*device, o.path);
  if (!module) {
    // With --device auto, say why no better device was picked.
    std::string why = device->selectionLog().empty()
                          ? ""
                          : " (auto: " + device->selectionLog() + ")";
    return fail(module.status().toString() + why);
  }
  Expected<Kernel> kernel = module->kernel(o.kernel);
  if (!kernel)
    return fail(kernel.status().toString());
  // --paged exactly for a paged kernel, --varlen for a varlen kernel (the
  // option given checked first: its error names it).
  Status pagedOk =
      checkPagedOptions(kernel->info(), o.paged ? &*o.paged : nullptr);
  Status varlenOk =
      checkVarlenOptions(kernel->info(), o.varlen ? &*o.varlen : nullptr);
  if (o.varlen && !varlenOk.ok())
    return fail(varlenOk.toString());
  if (!pagedOk.ok())
    return fail(pagedOk.toString());
  if (!varlenOk.ok())
    return fail(varlenOk.toString());
  // --alibi and --sinks only for a kernel that takes them.
  const KernelInfo &info = kernel->info();
  if (!o.alibi.empty() && !info.alibi)
    return fail("kernel '" + info.name +
                "' takes no ALiBi slopes (its manifest does not say "
                "\"alibi\": true): --alibi is for ALiBi kernels");
  if (o.sinks && !info.sinks)
    return fail("kernel '" + info.name +
                "' takes no attention sinks (its manifest does not say "
                "\"sinks\": true): --sinks is for sink kernels");

  if (o.estimateOnly)
    return estimateOnly(o, *device, *kernel);

  std::optional<GoldenCase> golden;
  if (!o.golden.empty()) {
    Expected<GoldenCase> loaded = loadGoldenCase(o.golden);
    if (!loaded)
      return fail(loaded.status().toString());
    golden.emplace(loaded.take());
  }

  ValidationOptions vo;
  vo.shape = o.shape;
  vo.dist = o.dist;
  vo.seed = o.seed;
  vo.launch.checkRaces = o.checkRaces;
  vo.launch.poisonLds = o.poisonLds;
  vo.launch.profile = o.profile || !o.profileJson.empty();
  vo.launch.estimate = o.estimate || !o.estimateJson.empty();
  vo.launch.estimateSamples = o.estimateSamples;
  vo.launch.estimateParams = o.estimateParams;
  vo.launch.kvSplits = o.kvSplits;
  vo.golden = golden ? &*golden : nullptr;
  vo.layout = o.layout;
  vo.reference = o.reference;
  vo.paged = o.paged;
  vo.varlen = o.varlen;
  vo.trace = o.traceRow;
  // Given slopes and sinks (else validation draws them from the seed).
  if (info.alibi && o.alibi == "bloom" && o.shape.headsQ >= 1)
    vo.alibiSlopes = bloomAlibiSlopes(o.shape.headsQ);
  if (info.sinks && o.sinkValue && o.shape.headsQ >= 1)
    vo.sinks.assign(size_t(o.shape.headsQ), float(*o.sinkValue));
  Expected<ValidationReport> report = validateKernel(*kernel, vo);
  if (!report) {
    if (!isKernelFault(report.status()))
      return fail(report.status().toString());
    // The kernel ran and misbehaved: a validation failure.
    if (o.json)
      printJson(o, *device, kernel->info(), nullptr, nullptr, report.status());
    std::fprintf(stderr, "fa-run: FAIL: %s\n",
                 report.status().toString().c_str());
    return 1;
  }

  std::optional<BenchResult> bench;
  if (o.bench > 0) {
    LaunchOptions lo;
    lo.poisonLds = o.poisonLds;
    lo.kvSplits = o.kvSplits;
    Expected<BenchResult> b = benchmarkKernel(
        *kernel, report->problem.shape, o.bench, lo,
        o.paged ? &*o.paged : nullptr, o.varlen ? &*o.varlen : nullptr);
    if (!b)
      return fail(b.status().toString());
    bench = *b;
  }

  if (o.json)
    printJson(o, *device, kernel->info(), &*report, bench ? &*bench : nullptr,
              Status::success());
  else
    printTable(o, *device, kernel->info(), *report, bench ? &*bench : nullptr);
  if (vo.launch.estimate)
    if (Status s =
            writeEstimate(o, *device, kernel->info(), report->problem.shape,
                          report->paged ? &*report->paged : nullptr,
                          report->varlen ? &*report->varlen : nullptr,
                          report->mixed ? &*report->mixed : nullptr);
        !s.ok())
      return fail(s.toString());
  if (vo.launch.profile) {
    if (Status s = writeProfile(o, *device); !s.ok())
      return fail(s.toString());
  }
  return report->verdict.pass ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  // Nothing escapes: an exception here (std::bad_alloc when memory runs out
  // after the runtime's checks said it would fit) is reported, not aborted.
  try {
    Expected<Options> options = parseRunOptions(argc, argv);
    if (!options)
      return fail(options.status().message());
    if (options->help) {
      std::fputs(runUsage(), stdout);
      return 0;
    }
    return run(*options);
  } catch (const std::bad_alloc &e) {
    std::fprintf(stderr, "fa-run: internal error: out of memory (%s)\n",
                 e.what());
  } catch (const std::exception &e) {
    std::fprintf(stderr, "fa-run: internal error: %s\n", e.what());
  } catch (...) {
    std::fprintf(stderr, "fa-run: internal error: unknown exception\n");
  }
  return 2;
}
