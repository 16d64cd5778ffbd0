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

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <optional>

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

double fa::attentionFlops(const AttentionProblem &p) {
  const AttentionShape &s = p.shape;
  double flops = 4.0 * double(s.batch) * double(s.headsQ) * double(s.seqQ) *
                 double(s.seqK) * double(p.headDim);
  return p.causal ? flops / 2 : flops;
}

namespace {
/// Moves a contiguous [batch, heads, rows, d] tensor to and from a strided
/// device layout (strides batch, head, row, 1).
struct Placement {
  int64_t batch = 0, heads = 0, rows = 0, d = 0;
  TensorStrides strides;
  size_t elem = 0;

  /// Bytes of the device buffer: batch x the batch stride (so padding after
  /// the last row is there too), at least one past the last element.
  size_t deviceBytes() const {
    int64_t last = (batch - 1) * strides.batch + (heads - 1) * strides.head +
                   (rows - 1) * strides.row + d;
    return size_t(std::max(last, batch * strides.batch)) * elem;
  }
  template <typename F> void forEachRow(F f) const {
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t l = 0; l < rows; ++l)
          f(((b * heads + h) * rows + l) * d,
            b * strides.batch + h * strides.head + l * strides.row);
  }
  /// The device bytes; what no element covers is `fill`.
  std::vector<uint8_t> scatter(const std::vector<uint8_t> &dense,
                               uint8_t fill = 0) const {
    std::vector<uint8_t> out(deviceBytes(), fill);
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
  /// Elements of `strided` outside the tensor that are no longer all `fill`
  /// bytes.
  size_t countChangedPadding(const std::vector<uint8_t> &strided,
                             uint8_t fill) const {
    std::vector<bool> covered(strided.size() / elem, false);
    forEachRow([&](int64_t, int64_t at) {
      for (int64_t c = 0; c < d; ++c)
        covered[size_t(at + c)] = true;
    });
    size_t changed = 0;
    for (size_t i = 0; i < covered.size(); ++i) {
      if (covered[i])
        continue;
      for (size_t byte = 0; byte < elem; ++byte)
        if (strided[i * elem + byte] != fill) {
          ++changed;
          break;
        }
    }
    return changed;
  }
};

/// What the output buffers hold before the launch: all-ones bytes, a NaN in
/// f32, f16 and bf16, so an element the kernel does not write fails, and
/// padding it writes is seen.
constexpr uint8_t outputFill = 0xff;

/// Device buffers for one problem, filled from `data`.
struct DeviceTensors {
  std::optional<Buffer> q, k, v, o, lse;
  AttentionStrides strides;
  Placement qPlace, kPlace, vPlace, oPlace, lsePlace;

  Status create(const Device &device, const KernelInfo &kernel,
                const AttentionProblem &p, const AttentionData &data,
                const AttentionLayout &layout) {
    const AttentionShape &sh = p.shape;
    size_t elem = dtypeBytes(kernel.dtype);
    strides = AttentionStrides::fromLayout(sh, p.headDim, layout);
    qPlace = {sh.batch, sh.headsQ, sh.seqQ, p.headDim, strides.q, elem};
    kPlace = {sh.batch, sh.headsKv, sh.seqK, p.headDim, strides.k, elem};
    vPlace = {sh.batch, sh.headsKv, sh.seqK, p.headDim, strides.v, elem};
    oPlace = {sh.batch, sh.headsQ, sh.seqQ, p.headDim, strides.o, elem};
    // LSE as a [B, Hq, 1, Lq] tensor: one "row" of Lq values per head.
    lsePlace = {sh.batch,
                sh.headsQ,
                1,
                sh.seqQ,
                {strides.lseBatch, strides.lseHead, 0},
                sizeof(float)};
    auto upload = [&](std::optional<Buffer> &slot,
                      const std::vector<uint8_t> &bytes) -> Status {
      Expected<Buffer> b = device.allocate(bytes.size());
      if (!b)
        return b.takeStatus();
      slot.emplace(b.take());
      return slot->copyFromHost(bytes.data(), bytes.size());
    };
    auto input = [&](std::optional<Buffer> &slot,
                     const std::vector<float> &values,
                     const Placement &place) -> Status {
      return upload(slot, place.scatter(encodeElements(kernel.dtype, values)));
    };
    auto output = [&](std::optional<Buffer> &slot,
                      const Placement &place) -> Status {
      return upload(slot,
                    std::vector<uint8_t>(place.deviceBytes(), outputFill));
    };
    Status s;
    if (!(s = input(q, data.q, qPlace)).ok() ||
        !(s = input(k, data.k, kPlace)).ok() ||
        !(s = input(v, data.v, vPlace)).ok() || !(s = output(o, oPlace)).ok())
      return s;
    if (kernel.hasLse)
      return output(lse, lsePlace);
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

  /// Reads `buffer` back through `place`: the tensor in contiguous order,
  /// and how many padding elements changed.
  static Status read(const Buffer &buffer, const Placement &place,
                     std::vector<uint8_t> &dense, size_t &paddingWrites) {
    std::vector<uint8_t> bytes(buffer.size());
    if (Status s = buffer.copyToHost(bytes.data(), bytes.size()); !s.ok())
      return s;
    dense = place.gather(bytes);
    paddingWrites = place.countChangedPadding(bytes, outputFill);
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

  if (Status s = checkLayout(opts.layout); !s.ok())
    return s;
  DeviceTensors t;
  if (Status s = t.create(device, info, r.problem, *data, opts.layout); !s.ok())
    return s;
  r.layout = opts.layout;
  r.strides = t.strides;
  // The device reference reads the kernel's input buffers, so it runs
  // before the kernel could overwrite them.
  std::optional<DeviceReferenceResult> onDevice;
  if (useDeviceReference(opts.reference, device, r.problem)) {
    Expected<DeviceReferenceResult> d = deviceReferenceAttention(
        device, r.problem, info.dtype, *t.q, *t.k, *t.v, t.strides);
    if (!d)
      return d.takeStatus();
    onDevice.emplace(d.take());
  }
  r.reference = onDevice ? onDevice->description : "fp64 CPU";
  if (Status s = kernel.launch(t.args(r.problem.shape), opts.launch); !s.ok())
    return s;
  if (Status s = device.synchronize(); !s.ok())
    return s;
  std::vector<uint8_t> oBytes, lseBytes;
  size_t oPadding = 0, lsePadding = 0;
  if (Status s = DeviceTensors::read(*t.o, t.oPlace, oBytes, oPadding); !s.ok())
    return s;
  std::vector<float> out =
      decodeElements(info.dtype, oBytes.data(), r.problem.qElements());
  std::vector<float> lse;
  if (t.lse) {
    if (Status s =
            DeviceTensors::read(*t.lse, t.lsePlace, lseBytes, lsePadding);
        !s.ok())
      return s;
    lse = decodeElements(DType::F32, lseBytes.data(), r.problem.lseElements());
  }

  // Baseline: the golden vectors, else our fp64 reference. The conditioning
  // magnitudes come from the fp64 reference in both cases.
  AttentionResult<double> ref = onDevice
                                    ? std::move(onDevice->exact)
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
  r.criteria = defaultCriteria(info.dtype, r.dist, maxAbs(data->v), maxLse,
                               r.problem.shape.seqK);
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
  if (Status s = t.create(device, info, p, data, AttentionLayout()); !s.ok())
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
