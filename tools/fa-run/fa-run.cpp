//===- fa-run.cpp - Load, run, validate and time an fa kernel -------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// fa-run is a thin main over the runtime library: it opens a device, loads a
// code object with its manifest, runs the kernel on seeded random inputs (or
// a golden case), validates the output against the fp64 and naive
// references, and optionally times it.
//
// Exit status: 0 validation passed, 1 validation failed (including LDS races
// and barrier divergence), 2 usage, load or launch-argument errors.
//
//===----------------------------------------------------------------------===//

#include "fa/Runtime.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <utility>
#include <vector>

using namespace fa;

namespace {

const char *usage =
    "usage: fa-run CODE_OBJECT [options]\n"
    "\n"
    "Loads CODE_OBJECT and its manifest CODE_OBJECT.json, runs the kernel and\n"
    "validates its output against an fp64 reference and a naive\n"
    "same-precision reference. dtype, head dimension, causal and scale come\n"
    "from the manifest.\n"
    "\n"
    "options:\n"
    "  --shape B,Hq,Hkv,Lq,Lk  problem sizes (required unless --golden)\n"
    "  --dist normal|outliers  input distribution (default normal);\n"
    "                          outliers = N(0,1) + N(0,100)*Bernoulli(0.001)\n"
    "  --seed N                input seed (default 0)\n"
    "  --layout bhld|blhd      memory order of Q, K, V and O (default bhld)\n"
    "  --layout T=L[,T=L...]   per tensor: T is q, k, v or o, L bhld or blhd\n"
    "  --row-pad N             N unused elements after each row of D of Q, K,\n"
    "                          V and O (non-contiguous strides; default 0)\n"
    "  --row-pad T=N[,T=N...]  per tensor (q, k, v, o), N in [0, 4096]\n"
    "  --lse-pad N             N unused elements after each head's Lq LSE\n"
    "                          values (LSE head stride Lq+N; default 0)\n"
    "  --distinct-strides      different strides for every tensor: q=bhld\n"
    "                          pad 1, k=blhd pad 2, v=bhld pad 3, o=blhd pad\n"
    "                          5, LSE pad 7; layout options apply in order,\n"
    "                          so later ones change single tensors\n"
    "  --device NAME           auto, host, hip[:N], cuda[:N] (default auto)\n"
    "  --kernel NAME           kernel of the module (default: the first)\n"
    "  --reference auto|cpu|device\n"
    "                          where the fp64 and naive references run: the\n"
    "                          CPU, or a kernel compiled with NVRTC/hiprtc on\n"
    "                          the GPU; auto (default) uses the GPU for\n"
    "                          problems over 2e10 FLOPs (4*B*Hq*Lq*Lk*D)\n"
    "  --golden DIR            run a golden case (test/data/golden/<case>)\n"
    "                          instead of random inputs\n"
    "  --check-races           host: check LDS accesses for races\n"
    "  --poison-lds            host: fill LDS with NaN bytes, not zeros\n"
    "  --bench N               also time N launches after a warm-up\n"
    "  --json                  print one JSON object instead of a table\n"
    "  --help                  show this text\n"
    "\n"
    "exit status: 0 pass, 1 validation failure, 2 usage or load error\n";

struct Options {
  std::string path;
  std::string device = "auto";
  std::string kernel;
  std::string golden;
  bool haveShape = false;
  AttentionShape shape;
  Distribution dist = Distribution::Normal;
  uint64_t seed = 0;
  bool checkRaces = false;
  bool poisonLds = false;
  AttentionLayout layout;
  int bench = 0;
  bool json = false;
  ReferenceKind reference = ReferenceKind::Auto;
};

int fail(const std::string &message) {
  std::fprintf(stderr, "fa-run: error: %s\n", message.c_str());
  return 2;
}

bool parseInt(const std::string &text, int64_t min, int64_t &out) {
  if (text.empty() || text[0] == '-' || text[0] == '+')
    return false;
  errno = 0;
  char *end;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (errno || *end || v < min)
    return false;
  out = v;
  return true;
}

bool parseShape(const std::string &text, AttentionShape &shape) {
  int64_t *fields[] = {&shape.batch, &shape.headsQ, &shape.headsKv, &shape.seqQ,
                       &shape.seqK};
  size_t start = 0;
  for (int i = 0; i < 5; ++i) {
    size_t comma = text.find(',', start);
    if ((i < 4) != (comma != std::string::npos))
      return false;
    std::string part = text.substr(start, comma - start);
    if (!parseInt(part, 1, *fields[i]))
      return false;
    start = comma + 1;
  }
  return true;
}

/// Splits "q=a,k=b" into (tensor, value) pairs, each tensor once; on error
/// returns false with `why` set.
bool parseTensorList(const std::string &text,
                     std::vector<std::pair<std::string, std::string>> &out,
                     std::string &why) {
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma - start);
    size_t eq = item.find('=');
    if (eq == std::string::npos) {
      why = "expected TENSOR=VALUE, got '" + item + "'";
      return false;
    }
    std::string name = item.substr(0, eq);
    if (name != "q" && name != "k" && name != "v" && name != "o") {
      why = "unknown tensor '" + name + "' (expected q, k, v or o" +
            (name == "lse" ? "; LSE has --lse-pad)" : ")");
      return false;
    }
    for (const auto &[seen, value] : out)
      if (seen == name) {
        why = "tensor '" + name + "' given twice";
        return false;
      }
    out.emplace_back(name, item.substr(eq + 1));
    if (comma == std::string::npos)
      return true;
    start = comma + 1;
  }
}

/// Applies "--layout VALUE" to `layout`.
bool parseLayoutOption(const std::string &text, AttentionLayout &layout,
                       std::string &why) {
  if (text.find('=') == std::string::npos) {
    std::optional<TensorLayout> order = parseTensorLayout(text);
    if (!order) {
      why = "expected bhld or blhd";
      return false;
    }
    layout.q.order = layout.k.order = layout.v.order = layout.o.order = *order;
    return true;
  }
  std::vector<std::pair<std::string, std::string>> items;
  if (!parseTensorList(text, items, why))
    return false;
  AttentionLayout updated = layout;
  for (const auto &[name, value] : items) {
    std::optional<TensorLayout> order = parseTensorLayout(value);
    if (!order) {
      why = "layout of " + name + " is '" + value + "', expected bhld or blhd";
      return false;
    }
    updated.find(name)->order = *order;
  }
  layout = updated;
  return true;
}

/// Applies "--row-pad VALUE" to `layout`.
bool parseRowPadOption(const std::string &text, AttentionLayout &layout,
                       std::string &why) {
  const std::string range =
      "an element count in [0, " + std::to_string(maxLayoutPad) + "]";
  int64_t n;
  if (text.find('=') == std::string::npos) {
    if (!parseInt(text, 0, n) || n > maxLayoutPad) {
      why = "expected " + range;
      return false;
    }
    layout.q.rowPad = layout.k.rowPad = layout.v.rowPad = layout.o.rowPad = n;
    return true;
  }
  std::vector<std::pair<std::string, std::string>> items;
  if (!parseTensorList(text, items, why))
    return false;
  AttentionLayout updated = layout;
  for (const auto &[name, value] : items) {
    if (!parseInt(value, 0, n) || n > maxLayoutPad) {
      why = "padding of " + name + " is '" + value + "', expected " + range;
      return false;
    }
    updated.find(name)->rowPad = n;
  }
  layout = updated;
  return true;
}

/// Parses argv into `o`; returns -1 to go on, else the exit status.
int parseArgs(int argc, char **argv, Options &o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto value = [&](std::string &out) {
      if (i + 1 >= argc)
        return false;
      out = argv[++i];
      return true;
    };
    std::string v;
    int64_t n;
    if (a == "--help" || a == "-h") {
      std::fputs(usage, stdout);
      return 0;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--check-races") {
      o.checkRaces = true;
    } else if (a == "--poison-lds") {
      o.poisonLds = true;
    } else if (a == "--shape") {
      if (!value(v) || !parseShape(v, o.shape))
        return fail("bad --shape '" + v +
                    "': expected B,Hq,Hkv,Lq,Lk (five positive integers)");
      o.haveShape = true;
    } else if (a == "--dist") {
      std::optional<Distribution> d;
      if (!value(v) || !(d = parseDistribution(v)))
        return fail("bad --dist '" + v + "': expected normal or outliers");
      o.dist = *d;
    } else if (a == "--seed") {
      if (!value(v) || !parseInt(v, 0, n))
        return fail("bad --seed '" + v + "': expected a non-negative integer");
      o.seed = uint64_t(n);
    } else if (a == "--layout" || a == "--row-pad") {
      std::string why = "needs a value";
      bool ok =
          value(v) && (a == "--layout" ? parseLayoutOption(v, o.layout, why)
                                       : parseRowPadOption(v, o.layout, why));
      if (!ok)
        return fail("bad " + a + " '" + v + "': " + why);
    } else if (a == "--lse-pad") {
      if (!value(v) || !parseInt(v, 0, n) || n > maxLayoutPad)
        return fail("bad --lse-pad '" + v +
                    "': expected an element count in [0, " +
                    std::to_string(maxLayoutPad) + "]");
      o.layout.lsePad = n;
    } else if (a == "--distinct-strides") {
      o.layout = AttentionLayout::distinct();
    } else if (a == "--bench") {
      if (!value(v) || !parseInt(v, 1, n) || n > 1000000)
        return fail("bad --bench '" + v + "': expected a count >= 1");
      o.bench = int(n);
    } else if (a == "--device") {
      if (!value(o.device))
        return fail("--device needs a value");
    } else if (a == "--reference") {
      std::optional<ReferenceKind> r;
      if (!value(v) || !(r = parseReferenceKind(v)))
        return fail("bad --reference '" + v +
                    "': expected auto, cpu or device");
      o.reference = *r;
    } else if (a == "--kernel") {
      if (!value(o.kernel))
        return fail("--kernel needs a value");
    } else if (a == "--golden") {
      if (!value(o.golden))
        return fail("--golden needs a folder");
    } else if (!a.empty() && a[0] == '-') {
      return fail("unknown option '" + a + "' (see --help)");
    } else if (o.path.empty()) {
      o.path = a;
    } else {
      return fail("more than one code object given ('" + o.path + "', '" + a +
                  "')");
    }
  }
  if (o.path.empty())
    return fail("no code object given (see --help)");
  if (!o.haveShape && o.golden.empty())
    return fail("--shape B,Hq,Hkv,Lq,Lk or --golden DIR is required");
  if (o.haveShape && !o.golden.empty())
    return fail("--shape and --golden exclude each other (a golden case has "
                "its own shape)");
  return -1;
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

void printTable(const Options &o, const Device &device, const KernelInfo &k,
                const ValidationReport &r, const BenchResult *bench) {
  std::printf("fa-run %s\n", o.path.c_str());
  std::printf("  device    %s%s%s\n", device.name().c_str(),
              device.selectionLog().empty() ? "" : "  (auto: ",
              device.selectionLog().empty()
                  ? ""
                  : (device.selectionLog() + ")").c_str());
  std::printf("  kernel    %s: %s D=%lld causal=%s scale=%g lse=%s "
              "block_m=%lld threads=%lld\n",
              k.name.c_str(), dtypeName(k.dtype), (long long)k.headDim,
              k.causal ? "yes" : "no", k.scale, k.hasLse ? "yes" : "no",
              (long long)k.blockM, (long long)k.threads);
  std::printf("  shape     %s\n", r.problem.shape.toString().c_str());
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

} // namespace

int main(int argc, char **argv) {
  Options o;
  if (int rc = parseArgs(argc, argv, o); rc >= 0)
    return rc;

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
  vo.golden = golden ? &*golden : nullptr;
  vo.layout = o.layout;
  vo.reference = o.reference;
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
    Expected<BenchResult> b =
        benchmarkKernel(*kernel, report->problem.shape, o.bench, lo);
    if (!b)
      return fail(b.status().toString());
    bench = *b;
  }

  if (o.json)
    printJson(o, *device, kernel->info(), &*report, bench ? &*bench : nullptr,
              Status::success());
  else
    printTable(o, *device, kernel->info(), *report, bench ? &*bench : nullptr);
  return report->verdict.pass ? 0 : 1;
}
