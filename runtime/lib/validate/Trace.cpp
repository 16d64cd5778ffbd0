//===- Trace.cpp - Validation layer 2: per-block online-softmax state ----===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements compareTrace (fa/Trace.h): the fp64 running max,
// sum and output of one query row over the kernel's K/V block partition,
// compared block by block with what the kernel wrote.
//
//===----------------------------------------------------------------------===//

#include "fa/Trace.h"

#include "fa/KernelAbi.h"
#include "fa/Metrics.h"
#include "validate/AttentionCore.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

using namespace fa;
using fa::detail::KeyRange;

static const double inf = std::numeric_limits<double>::infinity();

static Status invalid(const std::string &what) {
  return Status::error(ErrorCode::InvalidArgument, what);
}

Expected<TraceReport>
fa::compareTrace(const AttentionProblem &problem, const AttentionData &data,
                 int64_t blockM, int64_t blockN, const TraceRow &row,
                 const std::vector<float> &trace, double scaledThreshold) {
  if (Status s = checkProblem(problem, data); !s.ok())
    return s;
  if (problem.hasAlibi() || problem.hasSinks())
    return invalid("trace: the per-block statistics of ALiBi and attention "
                   "sinks are not traced (fac --trace refuses them)");
  const AttentionShape &sh = problem.shape;
  const int64_t d = problem.headDim;
  if (blockM < 1 || blockN < 1)
    return invalid("trace: block_m and block_n must be at least 1, got " +
                   std::to_string(blockM) + " and " + std::to_string(blockN));
  const std::pair<const char *, std::pair<int64_t, int64_t>> where[] = {
      {"batch", {row.batch, sh.batch}},
      {"head", {row.head, sh.headsQ}},
      {"row", {row.row, sh.seqQ}}};
  for (const auto &[name, v] : where)
    if (v.first < 0 || v.first >= v.second)
      return invalid(std::string("traced ") + name + " " +
                     std::to_string(v.first) + " is outside [0, " +
                     std::to_string(v.second) + ")");
  const int64_t numBlocks = (sh.seqK + blockN - 1) / blockN;
  const int64_t stride = FA_ABI_TRACE_STATS + d;
  if (int64_t(trace.size()) != numBlocks * stride)
    return invalid("trace holds " + std::to_string(trace.size()) + " floats, " +
                   std::to_string(numBlocks) +
                   " K/V blocks of 2 + D=" + std::to_string(d) + " need " +
                   std::to_string(numBlocks * stride));

  TraceReport r;
  r.row = row;
  r.blockM = blockM;
  r.blockN = blockN;
  // The blocks the row's Q block visits (fa-tile's loop bounds): those
  // holding a key that the block's first row sees after the window's left
  // edge, up to those its last row sees (the diagonal when causal, else the
  // window's right edge, else all). The last row is m0 + block_m - 1 even
  // past Lq, as the tile loop's bound. None when the range is empty.
  const int64_t m0 = row.row / blockM * blockM;
  const KeyRange first =
      detail::visibleKeys(m0, sh.seqQ, sh.seqK, problem.causal,
                          problem.windowLeft, problem.windowRight);
  const KeyRange last =
      detail::visibleKeys(m0 + blockM - 1, sh.seqQ, sh.seqK, problem.causal,
                          problem.windowLeft, problem.windowRight);
  const int64_t kvBegin = first.lo, kvEnd = std::max<int64_t>(last.hi, 0);
  const int64_t firstBlock = kvBegin / blockN,
                endBlock = kvEnd > kvBegin ? (kvEnd + blockN - 1) / blockN : 0;
  // The row's own visible keys.
  const KeyRange keys =
      detail::visibleKeys(row.row, sh.seqQ, sh.seqK, problem.causal,
                          problem.windowLeft, problem.windowRight);
  const int64_t rowBegin = keys.lo, rowEnd = std::max(keys.hi, keys.lo);

  const int64_t group = sh.headsQ / sh.headsKv;
  const float *q = data.q.data() +
                   ((row.batch * sh.headsQ + row.head) * sh.seqQ + row.row) * d;
  const int64_t kvHead = row.head / group;
  const float *k =
      data.k.data() + (row.batch * sh.headsKv + kvHead) * sh.seqK * d;
  const float *v =
      data.v.data() + (row.batch * sh.headsKv + kvHead) * sh.seqK * d;
  double maxV = 0;
  for (float x : data.v)
    if (std::isfinite(x))
      maxV = std::max(maxV, double(std::fabs(x)));
  const double floor = magnitudeFloor(maxV);

  // Scores of the row's visible keys in fp64 (capped as the references
  // cap them), and their magnitudes scale * sum |q_d k_d| (the fp32 dot
  // product's error scale; the cap's slope is at most 1, and its own
  // rounding is of the order of softcap * u, so softcap is added).
  std::vector<double> s(static_cast<size_t>(rowEnd)),
      mag(static_cast<size_t>(rowEnd));
  for (int64_t j = rowBegin; j < rowEnd; ++j) {
    double dot = 0, abs = 0;
    for (int64_t c = 0; c < d; ++c) {
      dot += double(q[c]) * double(k[j * d + c]);
      abs += std::fabs(double(q[c]) * double(k[j * d + c]));
    }
    s[size_t(j)] = detail::capScore(problem.scale * dot, problem.softcap);
    mag[size_t(j)] = std::fabs(problem.scale) * abs + problem.softcap;
  }

  const double u = std::ldexp(1.0, -23);
  double prevM = -inf, magMax = 0;
  std::vector<double> num(static_cast<size_t>(d)),
      absNum(static_cast<size_t>(d));
  for (int64_t b = 0; b < numBlocks; ++b) {
    TraceBlock t;
    t.block = b;
    t.firstKey = b * blockN;
    t.endKey = std::min(t.firstKey + blockN, sh.seqK);
    const int64_t seen = std::min(t.endKey, rowEnd);
    t.visibleKeys = std::max<int64_t>(seen - rowBegin, 0);
    t.visited = b >= firstBlock && b < endBlock;
    // The reference state after block b: keys [rowBegin, seen).
    double m = -inf;
    for (int64_t j = rowBegin; j < seen; ++j) {
      m = std::max(m, s[size_t(j)]);
      magMax = std::max(magMax, mag[size_t(j)]);
    }
    double l = 0;
    std::fill(num.begin(), num.end(), 0.0);
    std::fill(absNum.begin(), absNum.end(), 0.0);
    for (int64_t j = rowBegin; j < seen; ++j) {
      double p = std::exp(s[size_t(j)] - m);
      l += p;
      for (int64_t c = 0; c < d; ++c) {
        num[size_t(c)] += p * double(v[j * d + c]);
        absNum[size_t(c)] += p * std::fabs(double(v[j * d + c]));
      }
    }
    t.refM = m;
    t.refL = l;
    t.maxRises = std::isfinite(prevM) && m > prevM;
    prevM = m;
    t.mTol = std::isfinite(m)
                 ? double(d + 4) * u * magMax + 2 * u * std::fabs(m)
                 : 0;
    t.lTol = 2 * t.mTol + double(t.visibleKeys + 4) * u;
    t.oTol = scaledThreshold;

    const float *e = trace.data() + b * stride;
    t.written = !std::isnan(e[0]) || !std::isnan(e[1]);
    if (t.written) {
      t.m = double(e[0]) * std::log(2.0); // log2 units -> natural
      t.l = double(e[1]);
      t.mDiff = std::isinf(t.m) && std::isinf(m) && (t.m < 0) == (m < 0)
                    ? 0
                    : std::fabs(t.m - m);
      if (std::isnan(t.mDiff))
        t.mDiff = inf;
      t.lRelDiff = l == 0 ? (t.l == 0 ? 0 : inf) : std::fabs(t.l - l) / l;
      if (std::isnan(t.lRelDiff))
        t.lRelDiff = inf;
      for (int64_t c = 0; c < d; ++c) {
        double acc = double(e[FA_ABI_TRACE_STATS + c]);
        double o = t.l == 0 ? 0 : acc / t.l;
        if (std::isnan(acc))
          o = std::numeric_limits<double>::quiet_NaN();
        double ref = l == 0 ? 0 : num[size_t(c)] / l;
        double a = l == 0 ? 0 : absNum[size_t(c)] / l;
        double scaled = std::fabs(o - ref) / std::max(a, floor);
        if (std::isnan(scaled))
          scaled = inf;
        if (c == 0 || scaled > t.oScaled) {
          t.oScaled = scaled;
          t.oWorst = c;
          t.o = o;
          t.refO = ref;
        }
      }
      t.mOk = t.mDiff <= t.mTol;
      t.lOk = t.lRelDiff <= t.lTol;
      t.oOk = t.oScaled <= t.oTol;
    }
    if (!t.ok() && r.firstMismatch < 0) {
      r.firstMismatch = b;
      if (t.visited && !t.written)
        r.mismatch = "not written: the kernel did not fold this block in";
      else if (!t.visited && t.written)
        r.mismatch = "written: the kernel visits a block past the row's "
                     "Q block's range";
      else {
        for (auto [ok, name] : {std::pair<bool, const char *>{t.mOk, "m"},
                                {t.lOk, "l"},
                                {t.oOk, "o"}})
          if (!ok)
            r.mismatch += (r.mismatch.empty() ? "" : ", ") + std::string(name);
      }
    }
    r.blocks.push_back(t);
  }
  return r;
}

static std::string number(double x, const char *format = "%.6g") {
  if (std::isinf(x))
    return x < 0 ? "-inf" : "inf";
  if (std::isnan(x))
    return "nan";
  char buf[64];
  std::snprintf(buf, sizeof buf, format, x);
  return buf;
}

std::string fa::formatTrace(const TraceReport &r) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line,
                "\nlayer 2: running max m, sum l and output o of row (b=%lld, "
                "h=%lld, r=%lld) after each K/V block of %lld keys\n"
                "  (m in natural units: the kernel's log2 m times ln 2; "
                "o = acc / l; ^: the reference max rises)\n",
                (long long)r.row.batch, (long long)r.row.head,
                (long long)r.row.row, (long long)r.blockN);
  out += line;
  std::snprintf(line, sizeof line,
                "  %5s %-13s %5s  %-13s %-19s %-13s %-19s %-19s %s\n", "block",
                "keys", "seen", "m ref", "|dm| / tol", "l ref", "|dl|/l / tol",
                "o scaled / tol", "");
  out += line;
  for (const TraceBlock &t : r.blocks) {
    std::string keys =
        "[" + std::to_string(t.firstKey) + "," + std::to_string(t.endKey) + ")";
    std::string status = t.ok()                    ? "ok"
                         : t.visited && !t.written ? "NOT WRITTEN"
                         : !t.visited && t.written ? "WRITTEN, NOT VISITED"
                                                   : "PARTS";
    if (!t.visited && !t.written) {
      std::snprintf(line, sizeof line,
                    "  %5lld %-13s %5lld  (not visited by the row's Q block)\n",
                    (long long)t.block, keys.c_str(), (long long)t.visibleKeys);
      out += line;
      continue;
    }
    auto pair = [](double a, double b) {
      return number(a, "%.2e") + " / " + number(b, "%.1e");
    };
    std::string m = number(t.refM, "%.6f") + (t.maxRises ? " ^" : "");
    std::snprintf(line, sizeof line,
                  "  %5lld %-13s %5lld  %-13s %-19s %-13s %-19s %-19s %s\n",
                  (long long)t.block, keys.c_str(), (long long)t.visibleKeys,
                  m.c_str(), t.written ? pair(t.mDiff, t.mTol).c_str() : "-",
                  number(t.refL, "%.6g").c_str(),
                  t.written ? pair(t.lRelDiff, t.lTol).c_str() : "-",
                  t.written ? pair(t.oScaled, t.oTol).c_str() : "-",
                  status.c_str());
    out += line;
  }
  if (r.pass()) {
    out += "  layer 2: every block matches\n";
  } else {
    const TraceBlock &t = r.blocks[size_t(r.firstMismatch)];
    std::snprintf(line, sizeof line,
                  "  layer 2: first block that parts: %lld (keys [%lld,%lld)): "
                  "%s\n",
                  (long long)t.block, (long long)t.firstKey,
                  (long long)t.endKey, r.mismatch.c_str());
    out += line;
    if (t.written && !t.oOk) {
      std::snprintf(line, sizeof line,
                    "    worst output d=%lld: kernel %s, reference %s\n",
                    (long long)t.oWorst, number(t.o).c_str(),
                    number(t.refO).c_str());
      out += line;
    }
    if (t.written && !t.lOk) {
      std::snprintf(line, sizeof line, "    l: kernel %s, reference %s\n",
                    number(t.l, "%.9g").c_str(),
                    number(t.refL, "%.9g").c_str());
      out += line;
    }
    if (t.written && !t.mOk) {
      std::snprintf(line, sizeof line, "    m: kernel %s, reference %s\n",
                    number(t.m, "%.9g").c_str(),
                    number(t.refM, "%.9g").c_str());
      out += line;
    }
  }
  return out;
}

static std::string jsonNumber(double x) {
  if (!std::isfinite(x))
    return std::isnan(x) ? "null" : x < 0 ? "\"-inf\"" : "\"inf\"";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.9g", x);
  return buf;
}

std::string fa::traceJson(const TraceReport &r) {
  std::string out = "{\"row\": [" + std::to_string(r.row.batch) + ", " +
                    std::to_string(r.row.head) + ", " +
                    std::to_string(r.row.row) +
                    "], \"block_n\": " + std::to_string(r.blockN) +
                    ", \"pass\": " + (r.pass() ? "true" : "false") +
                    ", \"first_mismatch\": " + std::to_string(r.firstMismatch) +
                    ", \"mismatch\": \"" + r.mismatch + "\", \"blocks\": [";
  for (size_t i = 0; i < r.blocks.size(); ++i) {
    const TraceBlock &t = r.blocks[i];
    out +=
        std::string(i ? ", " : "") + "{\"block\": " + std::to_string(t.block) +
        ", \"visited\": " + (t.visited ? "true" : "false") +
        ", \"written\": " + (t.written ? "true" : "false") +
        ", \"ok\": " + (t.ok() ? "true" : "false") +
        ", \"m\": " + jsonNumber(t.m) + ", \"m_ref\": " + jsonNumber(t.refM) +
        ", \"l\": " + jsonNumber(t.l) + ", \"l_ref\": " + jsonNumber(t.refL) +
        ", \"o_scaled\": " + jsonNumber(t.oScaled) + "}";
  }
  return out + "]}";
}
