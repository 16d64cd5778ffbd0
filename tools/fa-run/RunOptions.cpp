//===- RunOptions.cpp - fa-run's command line -----------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements fa-run's argument parser. Numbers are decimal digits
// only (no sign, space or suffix) and are range-checked while they are read,
// so an out-of-range value is an error, never a wrapped one.
//
//===----------------------------------------------------------------------===//

#include "RunOptions.h"

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string_view>
#include <utility>
#include <vector>

using namespace fa;

static const char *usage =
    "usage: fa-run CODE_OBJECT [options]\n"
    "\n"
    "Loads CODE_OBJECT and its manifest CODE_OBJECT.json, runs the kernel and\n"
    "validates its output against an fp64 reference and a naive\n"
    "same-precision reference. dtype, head dimension, causal, sliding\n"
    "window, softcap, ALiBi, attention sinks and scale come from the\n"
    "manifest.\n"
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
    "  --device NAME           auto, host, hip[:N], cuda[:N], gfx906-sim\n"
    "                          (default auto)\n"
    "  --kernel NAME           kernel of the module (default: the first that\n"
    "                          is not a split-KV combine kernel)\n"
    "  --kv-splits N           split-KV kernels: split K/V into N parts (1 to\n"
    "                          1024; more than the K/V blocks leaves some\n"
    "                          empty), or 0 (default) to let the runtime\n"
    "                          choose about 2 workgroups per compute unit;\n"
    "                          the summary's `kv splits` line says which\n"
    "                          count ran\n"
    "  --reference auto|cpu|device\n"
    "                          where the fp64 and naive references run: the\n"
    "                          CPU, or a kernel compiled with NVRTC/hiprtc on\n"
    "                          the GPU; auto (default) uses the GPU for\n"
    "                          problems over 2e10 FLOPs (4*B*Hq*Lq*Lk*D)\n"
    "  --golden DIR            run a golden case (test/data/golden/<case>)\n"
    "                          instead of random inputs\n"
    "  --paged PAGE_SIZE       paged kernels (manifest \"paged\": true; a\n"
    "                          paged kernel needs it): K and V are caches of\n"
    "                          pages of PAGE_SIZE rows (>= 1; 16 to 256\n"
    "                          typical) read through a block table; the\n"
    "                          shape's Lk is each sequence's capacity, the\n"
    "                          kernel's Lk the longest sequence; cache rows\n"
    "                          no sequence reads are NaN\n"
    "  --cache-seqlens L0,L1,...\n"
    "                          with --paged: the B sequence lengths, each in\n"
    "                          [0, Lk]; default: drawn from the seed in\n"
    "                          [1, Lk], with a 0 and a 1 as B allows, none a\n"
    "                          whole number of pages\n"
    "  --shuffle-pages         with --paged: pages in a random order from the\n"
    "                          seed (the default)\n"
    "  --no-shuffle-pages      with --paged: pages in order\n"
    "  --share-pages           with --paged: prefix sharing, every sequence's\n"
    "                          first max(1, max_pages / 2) pages are the same\n"
    "  --varlen                varlen kernels (manifest \"varlen\": true; a\n"
    "                          varlen kernel needs it): B sequences packed\n"
    "                          into Q, O [total_q, Hq, D], K, V [total_k, "
    "Hkv,\n"
    "                          D], LSE [Hq, total_q], cut by cu_seqlens_q/k;\n"
    "                          the shape's Lq and Lk are max_seqlen_q and\n"
    "                          max_seqlen_k (the kernel's grid)\n"
    "  --seqlens-q L0,L1,...   with --varlen: the B query lengths, each in\n"
    "                          [0, Lq]; default: drawn from the seed in\n"
    "                          [0, Lq], with a 0 and a 1 as B allows\n"
    "  --seqlens-k L0,L1,...   with --varlen: the B key lengths, each in\n"
    "                          [0, Lk]; default: drawn from the seed in\n"
    "                          [0, Lk] apart from the query lengths, with a 0\n"
    "                          and a 1 as B allows\n"
    "  --paged PAGE_SIZE --varlen\n"
    "                          mixed prefill/decode kernels (manifest\n"
    "                          \"paged\" and \"varlen\"; such a kernel needs\n"
    "                          both): B sequences' queries packed into Q, O\n"
    "                          [total_q, Hq, D], LSE [Hq, total_q] by\n"
    "                          cu_seqlens_q, over K, V caches as with\n"
    "                          --paged; sequence b's queries are the last of\n"
    "                          its cache_seqlens[b] keys. The shape's Lq is\n"
    "                          the longest query chunk (max_seqlen_q), its Lk\n"
    "                          the longest history (the cache's capacity).\n"
    "                          --seqlens-q gives the query lengths and\n"
    "                          --cache-seqlens the key lengths (each key\n"
    "                          length at least its query length); default:\n"
    "                          drawn from the seed, decode rows (1) and\n"
    "                          prefill chunks up to Lq over histories up to\n"
    "                          Lk, with a sequence of no queries, one whose\n"
    "                          queries are all its keys and one whose keys\n"
    "                          fill whole pages as B allows. --shuffle-pages,\n"
    "                          --no-shuffle-pages, --share-pages and\n"
    "                          --kv-splits apply; --seqlens-k does not\n"
    "  --trace-row [B,H,]R     validation layer 2 (a kernel compiled with\n"
    "                          fac --trace): compare query row R's running\n"
    "                          max, sum and output after each K/V block with\n"
    "                          the fp64 reference's and name the first block\n"
    "                          that parts (batch B, query head H: default 0)\n"
    "  --alibi[=drawn|bloom]   ALiBi kernels (manifest \"alibi\": true): the\n"
    "                          slopes, drawn from the seed (default: BLOOM's\n"
    "                          2^(-8(h+1)/Hq) times a factor in [0.5, 2] per\n"
    "                          head) or bloom, the series itself; an ALiBi\n"
    "                          kernel gets drawn slopes without the option\n"
    "  --sinks[=VALUE]         attention-sink kernels (manifest \"sinks\":\n"
    "                          true): the per-head sink logits, drawn from\n"
    "                          the seed (default: uniform in [-4, 4], one\n"
    "                          head's dominating its rows) or VALUE for every\n"
    "                          head; a sink kernel gets drawn sinks without\n"
    "                          the option\n"
    "  --check-races           host: check LDS accesses for races\n"
    "  --poison-lds            host: fill LDS with NaN bytes, not zeros\n"
    "  --bench N               also time N launches after a warm-up\n"
    "  --json                  print one JSON object instead of a table\n"
    "  --profile               gfx906-sim: print the launch's execution\n"
    "                          profile (instruction classes, global bytes,\n"
    "                          LDS bank conflicts, occupancy; execution\n"
    "                          counts, not timing; to stderr with --json)\n"
    "  --profile-json FILE     gfx906-sim: write that profile as JSON\n"
    "  --estimate              gfx906-sim: print the MI50 timing model's\n"
    "                          ESTIMATE of the launch (time, TFLOP/s, the\n"
    "                          limiting unit, stalls; docs/mi50-timing-\n"
    "                          model.md), from a sample of its workgroups\n"
    "  --estimate-json FILE    gfx906-sim: write that estimate as JSON\n"
    "  --estimate-only         gfx906-sim: run only the sampled workgroups\n"
    "                          and estimate; no validation (a benchmark's\n"
    "                          mode; implies --estimate)\n"
    "  --estimate-samples N    grid x indices sampled (1-64, default 8)\n"
    "  --estimate-param K=V    change a timing-model parameter from its\n"
    "                          calibrated value (repeatable; the estimate\n"
    "                          prints them all)\n"
    "  --help                  show this text\n"
    "\n"
    "A problem whose sizes overflow 64 bits, or that needs more memory than\n"
    "the host has, is refused before anything is allocated.\n"
    "\n"
    "exit status: 0 pass, 1 validation failure, 2 usage, load or other error\n";

const char *fa::runUsage() { return usage; }

static Status usageError(const std::string &message) {
  return Status::error(ErrorCode::InvalidArgument, message);
}

/// The decimal integer `text` if it is one in [min, max], else why not,
/// naming `what` ("Lk '-1' is not a positive integer", "'99999999999999999999'
/// is larger than 9223372036854775807" when `what` is empty).
static std::optional<std::string> parseInteger(std::string_view text,
                                               int64_t min, int64_t max,
                                               int64_t &out,
                                               const std::string &what = "") {
  const std::string kind = min >= 1   ? "a positive integer"
                           : min == 0 ? "a non-negative integer"
                                      : "an integer";
  if (text.empty())
    return (what.empty() ? std::string("value") : what) +
           " is empty, expected " + kind;
  const std::string subject =
      (what.empty() ? "" : what + " ") + "'" + std::string(text) + "'";
  int64_t value = 0;
  for (char c : text) {
    if (c < '0' || c > '9')
      return subject + " is not " + kind;
    if (__builtin_mul_overflow(value, int64_t(10), &value) ||
        __builtin_add_overflow(value, int64_t(c - '0'), &value) || value > max)
      return subject + " is larger than " + std::to_string(max);
  }
  if (value < min)
    return subject + " is less than " + std::to_string(min);
  out = value;
  return std::nullopt;
}

/// "B,Hq,Hkv,Lq,Lk": five integers of at least 1; on error, why.
static std::optional<std::string> parseShape(const std::string &text,
                                             AttentionShape &shape) {
  static const char *const names[] = {"B", "Hq", "Hkv", "Lq", "Lk"};
  int64_t *fields[] = {&shape.batch, &shape.headsQ, &shape.headsKv, &shape.seqQ,
                       &shape.seqK};
  std::vector<std::string_view> parts;
  std::string_view rest = text;
  while (true) {
    size_t comma = rest.find(',');
    parts.push_back(rest.substr(0, comma));
    if (comma == std::string_view::npos)
      break;
    rest.remove_prefix(comma + 1);
  }
  if (parts.size() != 5)
    return "expected B,Hq,Hkv,Lq,Lk (five positive integers), got " +
           std::to_string(parts.size()) +
           (parts.size() == 1 ? " field" : " fields");
  for (int i = 0; i < 5; ++i)
    if (std::optional<std::string> why =
            parseInteger(parts[i], 1, INT64_MAX, *fields[i], names[i]))
      return why;
  return std::nullopt;
}

/// Splits "q=a,k=b" into (tensor, value) pairs, each tensor once; on error,
/// why.
static std::optional<std::string>
parseTensorList(const std::string &text,
                std::vector<std::pair<std::string, std::string>> &out) {
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    std::string item = text.substr(start, comma - start);
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      return "expected TENSOR=VALUE, got '" + item + "'";
    std::string name = item.substr(0, eq);
    if (name != "q" && name != "k" && name != "v" && name != "o")
      return "unknown tensor '" + name + "' (expected q, k, v or o" +
             (name == "lse" ? "; LSE has --lse-pad)" : ")");
    for (const auto &[seen, value] : out)
      if (seen == name)
        return "tensor '" + name + "' given twice";
    out.emplace_back(name, item.substr(eq + 1));
    if (comma == std::string::npos)
      return std::nullopt;
    start = comma + 1;
  }
}

/// Applies "--layout VALUE" to `layout`; on error, why.
static std::optional<std::string> parseLayoutOption(const std::string &text,
                                                    AttentionLayout &layout) {
  if (text.find('=') == std::string::npos) {
    std::optional<TensorLayout> order = parseTensorLayout(text);
    if (!order)
      return std::string("expected bhld or blhd");
    layout.q.order = layout.k.order = layout.v.order = layout.o.order = *order;
    return std::nullopt;
  }
  std::vector<std::pair<std::string, std::string>> items;
  if (std::optional<std::string> why = parseTensorList(text, items))
    return why;
  AttentionLayout updated = layout;
  for (const auto &[name, value] : items) {
    std::optional<TensorLayout> order = parseTensorLayout(value);
    if (!order)
      return "layout of " + name + " is '" + value + "', expected bhld or blhd";
    updated.find(name)->order = *order;
  }
  layout = updated;
  return std::nullopt;
}

/// Applies "--row-pad VALUE" to `layout`; on error, why.
static std::optional<std::string> parseRowPadOption(const std::string &text,
                                                    AttentionLayout &layout) {
  const std::string range =
      "an element count in [0, " + std::to_string(maxLayoutPad) + "]";
  int64_t n;
  if (text.find('=') == std::string::npos) {
    if (parseInteger(text, 0, maxLayoutPad, n))
      return "expected " + range;
    layout.q.rowPad = layout.k.rowPad = layout.v.rowPad = layout.o.rowPad = n;
    return std::nullopt;
  }
  std::vector<std::pair<std::string, std::string>> items;
  if (std::optional<std::string> why = parseTensorList(text, items))
    return why;
  AttentionLayout updated = layout;
  for (const auto &[name, value] : items) {
    if (parseInteger(value, 0, maxLayoutPad, n))
      return "padding of " + name + " is '" + value + "', expected " + range;
    updated.find(name)->rowPad = n;
  }
  layout = updated;
  return std::nullopt;
}

/// "L0,L1,...": lengths in [0, 2^31 - 1]; on error, why, naming the entry
/// as name[i].
static std::optional<std::string> parseLengths(const std::string &text,
                                               std::vector<int32_t> &out,
                                               const char *name) {
  size_t start = 0;
  while (true) {
    size_t comma = text.find(',', start);
    int64_t n;
    const std::string what =
        std::string(name) + "[" + std::to_string(out.size()) + "]";
    if (std::optional<std::string> why = parseInteger(
            std::string_view(text).substr(
                start, comma == std::string::npos ? comma : comma - start),
            0, INT32_MAX, n, what))
      return why;
    out.push_back(int32_t(n));
    if (comma == std::string::npos)
      return std::nullopt;
    start = comma + 1;
  }
}

Expected<RunOptions> fa::parseRunOptions(int argc, const char *const *argv) {
  RunOptions o;
  // The paging options, checked against --paged and the shape at the end.
  std::optional<int64_t> pageSize;
  std::optional<std::vector<int32_t>> seqlens;
  std::string seqlensText, pagingFlag;
  bool shufflePages = true, sharePages = false;
  // The varlen options, checked against --varlen and the shape at the end.
  bool varlen = false;
  std::optional<std::vector<int32_t>> seqlensQ, seqlensK;
  std::string seqlensQText, seqlensKText, varlenFlag;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i] ? argv[i] : "";
    // The option's value; false when it is the last argument.
    std::string v;
    auto value = [&] {
      if (i + 1 >= argc || !argv[i + 1])
        return false;
      v = argv[++i];
      return true;
    };
    auto bad = [&](const std::string &why) {
      return usageError("bad " + a + " '" + v + "': " + why);
    };
    const bool takesValue =
        a == "--shape" || a == "--dist" || a == "--seed" || a == "--layout" ||
        a == "--row-pad" || a == "--lse-pad" || a == "--bench" ||
        a == "--device" || a == "--reference" || a == "--kernel" ||
        a == "--golden" || a == "--profile-json" || a == "--estimate-json" ||
        a == "--estimate-samples" || a == "--estimate-param" ||
        a == "--kv-splits" || a == "--paged" || a == "--cache-seqlens" ||
        a == "--seqlens-q" || a == "--seqlens-k" || a == "--trace-row";
    if (takesValue && !value())
      return usageError(a + " needs a value");
    int64_t n;
    if (a == "--help" || a == "-h") {
      o.help = true;
      return o;
    } else if (a == "--json") {
      o.json = true;
    } else if (a == "--profile") {
      o.profile = true;
    } else if (a == "--profile-json") {
      o.profileJson = v;
    } else if (a == "--estimate") {
      o.estimate = true;
    } else if (a == "--estimate-json") {
      o.estimateJson = v;
    } else if (a == "--estimate-only") {
      o.estimateOnly = true;
    } else if (a == "--estimate-samples") {
      if (std::optional<std::string> why = parseInteger(v, 1, 64, n))
        return bad(*why);
      o.estimateSamples = unsigned(n);
    } else if (a == "--estimate-param") {
      o.estimateParams += (o.estimateParams.empty() ? "" : " ") + v;
    } else if (a == "--check-races") {
      o.checkRaces = true;
    } else if (a == "--poison-lds") {
      o.poisonLds = true;
    } else if (a == "--shape") {
      if (std::optional<std::string> why = parseShape(v, o.shape))
        return bad(*why);
      o.haveShape = true;
    } else if (a == "--dist") {
      std::optional<Distribution> d = parseDistribution(v);
      if (!d)
        return bad("expected normal or outliers");
      o.dist = *d;
    } else if (a == "--seed") {
      if (std::optional<std::string> why = parseInteger(v, 0, INT64_MAX, n))
        return bad(*why);
      o.seed = uint64_t(n);
    } else if (a == "--layout") {
      if (std::optional<std::string> why = parseLayoutOption(v, o.layout))
        return bad(*why);
    } else if (a == "--row-pad") {
      if (std::optional<std::string> why = parseRowPadOption(v, o.layout))
        return bad(*why);
    } else if (a == "--lse-pad") {
      if (parseInteger(v, 0, maxLayoutPad, n))
        return bad("expected an element count in [0, " +
                   std::to_string(maxLayoutPad) + "]");
      o.layout.lsePad = n;
    } else if (a == "--distinct-strides") {
      o.layout = AttentionLayout::distinct();
    } else if (a == "--bench") {
      if (parseInteger(v, 1, maxBenchRepetitions, n))
        return bad("expected a count in [1, " +
                   std::to_string(maxBenchRepetitions) + "]");
      o.bench = int(n);
    } else if (a == "--device") {
      o.device = v;
    } else if (a == "--reference") {
      std::optional<ReferenceKind> r = parseReferenceKind(v);
      if (!r)
        return bad("expected auto, cpu or device");
      o.reference = *r;
    } else if (a == "--kernel") {
      o.kernel = v;
    } else if (a == "--kv-splits") {
      if (parseInteger(v, 0, maxKvSplits, n))
        return bad("expected a split count in [1, " +
                   std::to_string(maxKvSplits) + "], or 0 for automatic");
      o.kvSplits = n;
    } else if (a == "--golden") {
      o.golden = v;
    } else if (a == "--paged") {
      if (parseInteger(v, 1, INT32_MAX, n))
        return bad("expected a page size in [1, 2147483647] (rows per page; "
                   "16 to 256 are typical)");
      pageSize = n;
    } else if (a == "--cache-seqlens") {
      std::vector<int32_t> lengths;
      if (std::optional<std::string> why =
              parseLengths(v, lengths, "cache_seqlens"))
        return bad(*why);
      seqlens = std::move(lengths);
      seqlensText = v;
      pagingFlag = a;
    } else if (a == "--shuffle-pages" || a == "--no-shuffle-pages") {
      shufflePages = a == "--shuffle-pages";
      pagingFlag = a;
    } else if (a == "--share-pages") {
      sharePages = true;
      pagingFlag = a;
    } else if (a == "--trace-row") {
      // R, or B,H,R.
      std::vector<std::string_view> parts;
      std::string_view rest = v;
      while (true) {
        size_t comma = rest.find(',');
        parts.push_back(rest.substr(0, comma));
        if (comma == std::string_view::npos)
          break;
        rest.remove_prefix(comma + 1);
      }
      if (parts.size() != 1 && parts.size() != 3)
        return bad("expected a query row R, or B,H,R (batch, query head, "
                   "row; default batch and head 0)");
      TraceRow t;
      int64_t *fields[] = {&t.batch, &t.head, &t.row};
      static const char *const names[] = {"batch", "head", "row"};
      for (size_t i = 0; i < parts.size(); ++i) {
        size_t f = parts.size() == 1 ? 2 : i;
        if (std::optional<std::string> why =
                parseInteger(parts[i], 0, INT64_MAX, *fields[f], names[f]))
          return bad(*why);
      }
      o.traceRow = t;
    } else if (a == "--alibi" || a.rfind("--alibi=", 0) == 0) {
      v = a == "--alibi" ? "drawn" : a.substr(8);
      if (v != "drawn" && v != "bloom")
        return usageError("bad --alibi '" + v +
                          "': expected drawn or bloom (--alibi alone: drawn)");
      o.alibi = v;
    } else if (a == "--sinks" || a.rfind("--sinks=", 0) == 0) {
      o.sinks = true;
      o.sinkValue.reset();
      if (a != "--sinks") {
        v = a.substr(8);
        char *end = nullptr;
        const double x = v.empty() ? 0 : std::strtod(v.c_str(), &end);
        if (v.empty() || !end || *end || !std::isfinite(x))
          return usageError("bad --sinks '" + v +
                            "': expected a finite number (the sink logit of "
                            "every head; --sinks alone: drawn)");
        o.sinkValue = x;
      }
    } else if (a == "--varlen") {
      varlen = true;
    } else if (a == "--seqlens-q" || a == "--seqlens-k") {
      std::vector<int32_t> lengths;
      if (std::optional<std::string> why = parseLengths(
              v, lengths, a == "--seqlens-q" ? "seqlens_q" : "seqlens_k"))
        return bad(*why);
      (a == "--seqlens-q" ? seqlensQ : seqlensK) = std::move(lengths);
      (a == "--seqlens-q" ? seqlensQText : seqlensKText) = v;
      varlenFlag = a;
    } else if (!a.empty() && a[0] == '-') {
      return usageError("unknown option '" + a + "' (see --help)");
    } else if (o.path.empty()) {
      if (a.empty())
        return usageError("empty code object path");
      o.path = a;
    } else {
      return usageError("more than one code object given ('" + o.path + "', '" +
                        a + "')");
    }
  }
  if (o.path.empty())
    return usageError("no code object given (see --help)");
  if (!o.haveShape && o.golden.empty())
    return usageError("--shape B,Hq,Hkv,Lq,Lk or --golden DIR is required");
  if (o.haveShape && !o.golden.empty())
    return usageError("--shape and --golden exclude each other (a golden "
                      "case has its own shape)");
  if (o.traceRow && o.haveShape) {
    const std::pair<const char *, std::pair<int64_t, int64_t>> where[] = {
        {"batch", {o.traceRow->batch, o.shape.batch}},
        {"head", {o.traceRow->head, o.shape.headsQ}},
        {"row", {o.traceRow->row, o.shape.seqQ}}};
    for (const auto &[name, w] : where)
      if (w.first >= w.second)
        return usageError("bad --trace-row: " + std::string(name) + " " +
                          std::to_string(w.first) + " is outside the shape (" +
                          name + "s 0 to " + std::to_string(w.second - 1) +
                          ")");
  }
  if (!o.golden.empty() && (!o.alibi.empty() || o.sinks))
    return usageError(std::string(o.sinks ? "--sinks" : "--alibi") +
                      " and --golden exclude each other (golden cases have "
                      "no ALiBi and no attention sinks)");
  if (!pageSize && !pagingFlag.empty())
    return usageError(pagingFlag + " needs --paged PAGE_SIZE");
  if (pageSize) {
    if (!o.golden.empty())
      return usageError("--paged and --golden exclude each other (a golden "
                        "case is a dense problem)");
    PagedCacheOptions paged;
    paged.pageSize = *pageSize;
    paged.shufflePages = shufflePages;
    paged.sharePages = sharePages;
    if (seqlens) {
      const std::string bad = "bad --cache-seqlens '" + seqlensText + "': ";
      if (int64_t(seqlens->size()) != o.shape.batch)
        return usageError(bad + std::to_string(seqlens->size()) +
                          (seqlens->size() == 1 ? " length" : " lengths") +
                          " for B = " + std::to_string(o.shape.batch) +
                          " sequences");
      for (size_t b = 0; b < seqlens->size(); ++b)
        if ((*seqlens)[b] > o.shape.seqK)
          return usageError(bad + "cache_seqlens[" + std::to_string(b) +
                            "] = " + std::to_string((*seqlens)[b]) +
                            " is above the cache's capacity Lk = " +
                            std::to_string(o.shape.seqK) + " (the shape's Lk)");
      paged.cacheSeqlens = std::move(*seqlens);
    }
    o.paged = std::move(paged);
  }
  if (!varlen && !varlenFlag.empty())
    return usageError(varlenFlag + " needs --varlen");
  if (varlen) {
    if (!o.golden.empty())
      return usageError("--varlen and --golden exclude each other (a golden "
                        "case is a dense problem)");
    // Both: a mixed prefill/decode batch, whose key lengths are the cache's.
    if (pageSize && seqlensK)
      return usageError("--seqlens-k is for varlen kernels: a mixed batch's "
                        "(--paged with --varlen) key lengths are "
                        "--cache-seqlens");
    if (pageSize && o.shape.seqQ > o.shape.seqK)
      return usageError(
          "a mixed batch (--paged with --varlen): the shape's Lq = " +
          std::to_string(o.shape.seqQ) +
          " (the longest query chunk) is above its Lk = " +
          std::to_string(o.shape.seqK) +
          " (the longest history): a sequence's queries are the last of its "
          "keys");
    VarlenOptions vl;
    const struct {
      const char *flag, *which;
      std::optional<std::vector<int32_t>> *given;
      const std::string *text;
      int64_t max;
      std::vector<int32_t> *out;
    } lists[] = {{"--seqlens-q", "q", &seqlensQ, &seqlensQText, o.shape.seqQ,
                  &vl.seqlensQ},
                 {"--seqlens-k", "k", &seqlensK, &seqlensKText, o.shape.seqK,
                  &vl.seqlensK}};
    for (const auto &l : lists) {
      if (!*l.given)
        continue;
      const std::vector<int32_t> &lengths = **l.given;
      const std::string bad =
          std::string("bad ") + l.flag + " '" + *l.text + "': ";
      if (int64_t(lengths.size()) != o.shape.batch)
        return usageError(bad + std::to_string(lengths.size()) +
                          (lengths.size() == 1 ? " length" : " lengths") +
                          " for B = " + std::to_string(o.shape.batch) +
                          " sequences");
      for (size_t b = 0; b < lengths.size(); ++b)
        if (lengths[b] > l.max)
          return usageError(
              bad + "seqlens_" + l.which + "[" + std::to_string(b) +
              "] = " + std::to_string(lengths[b]) + " is above max_seqlen_" +
              l.which + " = " + std::to_string(l.max) + " (the shape's L" +
              l.which + ")");
      *l.out = lengths;
    }
    if (pageSize && !vl.seqlensQ.empty() && !o.paged->cacheSeqlens.empty())
      for (size_t b = 0; b < vl.seqlensQ.size(); ++b)
        if (o.paged->cacheSeqlens[b] < vl.seqlensQ[b])
          return usageError(
              "bad --cache-seqlens '" + seqlensText + "': cache_seqlens[" +
              std::to_string(b) +
              "] = " + std::to_string(o.paged->cacheSeqlens[b]) +
              " is below seqlens_q[" + std::to_string(b) +
              "] = " + std::to_string(vl.seqlensQ[b]) +
              " (a mixed batch's queries are the last rows of their "
              "sequence)");
    o.varlen = std::move(vl);
  }
  return o;
}
