//===- ReferenceOnSim.cpp - The fp64 device reference on gfx906-sim -------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// fa-sim-reference REFERENCE.hsaco DTYPE D: runs the fp64 device reference
// kernel (runtime/lib/validate/DeviceReference.cpp's source, built for
// gfx906 by clang from HIP, FA_NAIVE=0) on gfx906-sim through the public
// RawKernel, with the parameters fa::deviceReferenceAttention passes, and
// compares O, LSE and the magnitudes with the CPU fp64 reference. A second
// gfx906 binary from another front end (HIP, ROCm's device libraries): f64
// arithmetic, exp and log in software, the v5 hidden arguments. Two
// problems: causal, and causal with a window, ALiBi and sinks on rows that
// see no key. Exit 0 when they agree to 1e-12 relative.
//
//===----------------------------------------------------------------------===//

#include "fa/Half.h"
#include "fa/Inputs.h"
#include "fa/Reference.h"
#include "fa/Runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>

using namespace fa;

static int fail(const std::string &why) {
  std::fprintf(stderr, "fa-sim-reference: %s\n", why.c_str());
  return 1;
}

/// Runs the reference on `p` and compares it with the CPU's; false (having
/// said why) when they differ or the run fails.
static bool runOne(const Device &device, const RawKernel &kernel, DType dtype,
                   const AttentionProblem &p, const char *what) {
  AttentionData data = generateInputs(p, dtype, Distribution::Outliers, 3);
  auto upload = [&](const void *bytes, size_t size) -> Expected<Buffer> {
    Expected<Buffer> b = device.allocate(std::max<size_t>(size, 1));
    if (b)
      if (Status s = b->copyFromHost(bytes, size); !s.ok())
        return s;
    return b;
  };
  auto uploadElements = [&](const std::vector<float> &values) {
    std::vector<uint8_t> enc = encodeElements(dtype, values);
    return upload(enc.data(), enc.size());
  };
  Expected<Buffer> q = uploadElements(data.q), k = uploadElements(data.k),
                   v = uploadElements(data.v);
  // The slopes and sinks, f32 [Hq] (null pointers where the problem has
  // none), as fa::deviceReferenceAttention passes them.
  Expected<Buffer> slopes =
      upload(p.alibiSlopes.data(), p.alibiSlopes.size() * sizeof(float));
  Expected<Buffer> sinks =
      upload(p.sinks.data(), p.sinks.size() * sizeof(float));
  Expected<Buffer> o = device.allocate(p.qElements() * 8);
  Expected<Buffer> lse = device.allocate(p.lseElements() * 8);
  Expected<Buffer> mag = device.allocate(p.qElements() * 8);
  for (auto *b : {&q, &k, &v, &o, &lse, &mag, &slopes, &sinks})
    if (!*b)
      return fail(b->status().toString()) == 0;
  const AttentionShape &s = p.shape;
  const int64_t D = p.headDim;
  uint64_t scaleBits, softcapBits;
  std::memcpy(&scaleBits, &p.scale, 8);
  std::memcpy(&softcapBits, &p.softcap, 8);
  // fa::deviceReferenceAttention's parameters: contiguous [B, H, L, D].
  std::vector<uint64_t> params = {q->address(),
                                  k->address(),
                                  v->address(),
                                  o->address(),
                                  lse->address(),
                                  mag->address(),
                                  uint64_t(s.batch),
                                  uint64_t(s.headsQ),
                                  uint64_t(s.headsKv),
                                  uint64_t(s.seqQ),
                                  uint64_t(s.seqK),
                                  uint64_t(p.causal ? 1 : 0),
                                  uint64_t(s.headsQ * s.seqQ * D),
                                  uint64_t(s.seqQ * D),
                                  uint64_t(D),
                                  uint64_t(s.headsKv * s.seqK * D),
                                  uint64_t(s.seqK * D),
                                  uint64_t(D),
                                  uint64_t(s.headsKv * s.seqK * D),
                                  uint64_t(s.seqK * D),
                                  uint64_t(D),
                                  scaleBits,
                                  uint64_t(p.windowLeft),
                                  uint64_t(p.windowRight),
                                  softcapBits,
                                  p.hasAlibi() ? slopes->address() : 0,
                                  p.hasSinks() ? sinks->address() : 0};
  LaunchGeometry g;
  g.grid[0] = uint32_t((s.seqQ + 127) / 128);
  g.grid[1] = uint32_t(s.headsQ);
  g.grid[2] = uint32_t(s.batch);
  g.block[0] = 128;
  if (Status st = kernel.launch(g, params.data(), params.size()); !st.ok())
    return fail(st.toString()) == 0;

  AttentionResult<double> want = referenceAttentionF64(p, data);
  std::vector<double> gotO(p.qElements()), gotLse(p.lseElements()),
      gotMag(p.qElements());
  if (!o->copyToHost(gotO.data(), gotO.size() * 8).ok() ||
      !lse->copyToHost(gotLse.data(), gotLse.size() * 8).ok() ||
      !mag->copyToHost(gotMag.data(), gotMag.size() * 8).ok())
    return fail("cannot read the results back") == 0;
  double worst = 0;
  auto compare = [&](const std::vector<double> &a, const std::vector<double> &b,
                     const char *name) {
    for (size_t i = 0; i < a.size(); ++i) {
      if (std::isinf(a[i]) && a[i] == b[i])
        continue;
      double err = std::fabs(a[i] - b[i]) / std::max(1.0, std::fabs(b[i]));
      if (!(err <= 1e-12)) {
        std::fprintf(stderr, "%s: %s[%zu]: gfx906-sim %.17g, CPU %.17g\n", what,
                     name, i, a[i], b[i]);
        return false;
      }
      worst = std::max(worst, err);
    }
    return true;
  };
  bool ok = compare(gotO, want.o, "O") && compare(gotLse, want.lse, "LSE") &&
            compare(gotMag, want.magnitude, "magnitude");
  std::printf("fp64 device reference (%s, D=%lld, %s) on gfx906-sim vs the "
              "CPU: %s, max relative difference %.3g\n",
              dtypeName(dtype), (long long)D, what, ok ? "agree" : "DIFFER",
              worst);
  return ok;
}

int main(int argc, char **argv) {
  if (argc != 4)
    return fail("usage: fa-sim-reference REFERENCE.hsaco DTYPE(0 f32, 1 f16) "
                "D");
  std::ifstream f(argv[1], std::ios::binary);
  std::vector<uint8_t> bytes(std::istreambuf_iterator<char>(f), {});
  DType dtype = std::atoi(argv[2]) == 0 ? DType::F32 : DType::F16;
  AttentionProblem p;
  p.shape = {2, 4, 2, 70, 90};
  p.headDim = std::atoi(argv[3]);
  p.causal = true;
  p.scale = 1.0 / std::sqrt(double(p.headDim));

  Expected<Device> device = Device::open("gfx906-sim");
  if (!device)
    return fail(device.status().toString());
  Expected<RawKernel> kernel =
      RawKernel::load(*device, bytes, "hsaco", "fa_reference_attention", 128);
  if (!kernel)
    return fail(kernel.status().toString());
  bool ok = runOne(*device, *kernel, dtype, p, "causal");
  // ALiBi and sinks (issue 32): Lq > Lk, so that causal leaves the first
  // rows no key (LSE = the sink), and a window.
  AttentionProblem headed = p;
  headed.shape = {2, 4, 2, 90, 70};
  headed.windowLeft = 25;
  headed.alibiSlopes = drawAlibiSlopes(4, 3);
  headed.sinks = drawSinks(4, 70, 3);
  ok =
      runOne(*device, *kernel, dtype, headed, "causal, window, alibi, sinks") &&
      ok;
  return ok ? 0 : 1;
}
