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

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>

using namespace fa;

Status fa::checkGoldenMatchesKernel(const GoldenCase &g, const KernelInfo &k) {
  const AttentionProblem &p = g.problem;
  bool scaleMatches =
      std::fabs(p.scale - k.scale) <= 1e-6 * std::max(p.scale, k.scale);
  if (g.dtype == k.dtype && p.headDim == k.headDim && p.causal == k.causal &&
      scaleMatches)
    return Status::success();
  char buf[512];
  std::snprintf(buf, sizeof(buf),
                "golden case '%s' (dtype %s, D=%lld, causal=%s, scale=%.9g) "
                "does not match kernel '%s' (dtype %s, D=%lld, causal=%s, "
                "scale=%.9g)",
                g.name.c_str(), dtypeName(g.dtype), (long long)p.headDim,
                p.causal ? "true" : "false", p.scale, k.name.c_str(),
                dtypeName(k.dtype), (long long)k.headDim,
                k.causal ? "true" : "false", k.scale);
  return Status::error(ErrorCode::InvalidArgument, buf).withKernel(k.name);
}

double fa::attentionFlops(const AttentionProblem &p) {
  const AttentionShape &s = p.shape;
  double flops = 4.0 * double(s.batch) * double(s.headsQ) * double(s.seqQ) *
                 double(s.seqK) * double(p.headDim);
  return p.causal ? flops / 2 : flops;
}

namespace {
/// Moves a contiguous BHLD tensor to and from a strided device layout.
struct Placement {
  int64_t batch, heads, rows, d;
  TensorStrides strides;
  size_t elem;

  size_t deviceBytes() const { return size_t(batch * strides.batch) * elem; }
  template <typename F> void forEachRow(F f) const {
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t l = 0; l < rows; ++l)
          f(((b * heads + h) * rows + l) * d,
            b * strides.batch + h * strides.head + l * strides.row);
  }
  std::vector<uint8_t> scatter(const std::vector<uint8_t> &dense) const {
    std::vector<uint8_t> out(deviceBytes(), 0);
    forEachRow([&](int64_t from, int64_t to) {
      std::memcpy(&out[to * elem], &dense[from * elem], d * elem);
    });
    return out;
  }
  std::vector<uint8_t> gather(const std::vector<uint8_t> &strided) const {
    std::vector<uint8_t> out(size_t(batch * heads * rows * d) * elem);
    forEachRow([&](int64_t to, int64_t from) {
      std::memcpy(&out[to * elem], &strided[from * elem], d * elem);
    });
    return out;
  }
};

/// Device buffers for one problem, filled from `data`.
struct DeviceTensors {
  std::optional<Buffer> q, k, v, o, lse;
  AttentionStrides strides;
  Placement qPlace{}, kPlace{};

  Status create(const Device &device, const KernelInfo &kernel,
                const AttentionProblem &p, const AttentionData &data,
                TensorLayout layout, int64_t rowPad) {
    const AttentionShape &sh = p.shape;
    size_t elem = dtypeBytes(kernel.dtype);
    strides = AttentionStrides::strided(sh, p.headDim, layout, rowPad);
    qPlace = {sh.batch, sh.headsQ, sh.seqQ, p.headDim, strides.q, elem};
    kPlace = {sh.batch, sh.headsKv, sh.seqK, p.headDim, strides.k, elem};
    auto upload = [&](std::optional<Buffer> &slot,
                      const std::vector<float> &values,
                      const Placement &place) -> Status {
      std::vector<uint8_t> bytes =
          place.scatter(encodeElements(kernel.dtype, values));
      Expected<Buffer> b = device.allocate(bytes.size());
      if (!b)
        return b.takeStatus();
      slot.emplace(b.take());
      return slot->copyFromHost(bytes.data(), bytes.size());
    };
    auto empty = [&](std::optional<Buffer> &slot, size_t bytes) -> Status {
      Expected<Buffer> b = device.allocate(bytes);
      if (!b)
        return b.takeStatus();
      slot.emplace(b.take());
      return Status::success();
    };
    Status s;
    if (!(s = upload(q, data.q, qPlace)).ok() ||
        !(s = upload(k, data.k, kPlace)).ok() ||
        !(s = upload(v, data.v, kPlace)).ok() ||
        !(s = empty(o, qPlace.deviceBytes())).ok())
      return s;
    if (kernel.hasLse)
      return empty(lse, p.lseElements() * sizeof(float));
    return Status::success();
  }

  AttentionArgs args(const AttentionShape &shape) {
    AttentionArgs a;
    a.q = &*q;
    a.k = &*k;
    a.v = &*v;
    a.o = &*o;
    a.lse = lse ? &*lse : nullptr;
    a.shape = shape;
    a.strides = strides;
    return a;
  }

  /// The output, back in contiguous BHLD order.
  Status readOutput(std::vector<uint8_t> &dense) const {
    std::vector<uint8_t> bytes(o->size());
    if (Status s = o->copyToHost(bytes.data(), bytes.size()); !s.ok())
      return s;
    dense = qPlace.gather(bytes);
    return Status::success();
  }
};
} // namespace

static double maxAbs(const std::vector<float> &values) {
  double m = 0;
  for (float x : values)
    m = std::max(m, double(std::fabs(x)));
  return m;
}

static std::vector<double> toDouble(const std::vector<float> &v) {
  return std::vector<double>(v.begin(), v.end());
}

Expected<ValidationReport> fa::validateKernel(const Kernel &kernel,
                                              const ValidationOptions &opts) {
  const KernelInfo &info = kernel.info();
  Device device = kernel.device();
  ValidationReport r;
  r.kernel = info.name;
  r.device = device.name();
  r.dtype = info.dtype;

  AttentionData generated;
  const AttentionData *data;
  if (opts.golden) {
    if (Status s = checkGoldenMatchesKernel(*opts.golden, info); !s.ok())
      return s;
    r.problem = opts.golden->problem;
    r.dist = opts.golden->dist;
    r.seed = opts.golden->seed;
    r.golden = opts.golden->name;
    data = &opts.golden->inputs;
  } else {
    r.problem.shape = opts.shape;
    r.problem.headDim = info.headDim;
    r.problem.causal = info.causal;
    r.problem.scale = info.scale;
    r.dist = opts.dist;
    r.seed = opts.seed;
    if (Status s = checkShape(r.problem); !s.ok())
      return s;
    generated = generateInputs(r.problem, info.dtype, opts.dist, opts.seed);
    data = &generated;
  }
  if (Status s = checkProblem(r.problem, *data); !s.ok())
    return s;

  DeviceTensors t;
  if (opts.rowPad < 0)
    return Status::error(ErrorCode::InvalidArgument,
                         "row padding must be non-negative, got " +
                             std::to_string(opts.rowPad));
  if (Status s =
          t.create(device, info, r.problem, *data, opts.layout, opts.rowPad);
      !s.ok())
    return s;
  if (Status s = kernel.launch(t.args(r.problem.shape), opts.launch); !s.ok())
    return s;
  if (Status s = device.synchronize(); !s.ok())
    return s;
  std::vector<uint8_t> oBytes;
  if (Status s = t.readOutput(oBytes); !s.ok())
    return s;
  std::vector<float> out =
      decodeElements(info.dtype, oBytes.data(), r.problem.qElements());
  std::vector<float> lse;
  if (t.lse) {
    lse.resize(r.problem.lseElements());
    if (Status s = t.lse->copyToHost(lse.data(), lse.size() * sizeof(float));
        !s.ok())
      return s;
  }

  // Baseline: the golden vectors, else our fp64 reference.
  std::vector<double> baseO, baseLse;
  if (opts.golden) {
    baseO = toDouble(opts.golden->oRef);
    baseLse = toDouble(opts.golden->lseRef);
  } else {
    AttentionResult<double> ref = referenceAttentionF64(r.problem, *data);
    baseO = std::move(ref.o);
    baseLse = std::move(ref.lse);
  }
  AttentionResult<float> naive = naiveAttention(r.problem, info.dtype, *data);
  r.ours = compareOutputs(out, baseO);
  r.naive = compareOutputs(naive.o, baseO);
  if (info.hasLse) {
    compareLse(r.ours, lse, baseLse);
    compareLse(r.naive, naive.lse, baseLse);
  }
  double maxLse = 0;
  for (double x : baseLse)
    if (std::isfinite(x))
      maxLse = std::max(maxLse, std::fabs(x));
  r.criteria = defaultCriteria(info.dtype, r.dist, maxAbs(data->v), maxLse);
  r.verdict = judge(r.ours, r.naive, r.criteria);
  return r;
}

Expected<BenchResult> fa::benchmarkKernel(const Kernel &kernel,
                                          const AttentionShape &shape,
                                          int repetitions,
                                          const LaunchOptions &options) {
  if (repetitions < 1)
    return Status::error(ErrorCode::InvalidArgument,
                         "benchmark needs at least 1 repetition, got " +
                             std::to_string(repetitions));
  const KernelInfo &info = kernel.info();
  Device device = kernel.device();
  AttentionProblem p{shape, info.headDim, info.causal, info.scale};
  if (Status s = checkShape(p); !s.ok())
    return s;
  AttentionData data = generateInputs(p, info.dtype, Distribution::Normal, 0);
  DeviceTensors t;
  if (Status s = t.create(device, info, p, data, TensorLayout::Bhld, 0);
      !s.ok())
    return s;
  AttentionArgs args = t.args(shape);
  if (Status s = kernel.launch(args, options); !s.ok()) // warm-up
    return s;
  BenchResult r;
  r.repetitions = repetitions;
  r.hostEmulator = device.isHostEmulator();
  r.flops = attentionFlops(p);
  double total = 0;
  r.minSeconds = INFINITY;
  for (int i = 0; i < repetitions; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (Status s = kernel.launch(args, options); !s.ok())
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
