//===- main.cpp - Embedding the fa runtime in an application --------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// What an application embedding fa::runtime does: read the manifest of the
// code object named on the command line, open a device that runs its
// target, load it, hand fa its own tensors (Device::wrap), and enqueue
// attention on its stream over its workspace with no synchronisation until
// it wants the result (Kernel::enqueue), as an engine's decode loop does. It links fa::runtime alone (no fa::validate), so the check of the
// result is a few lines of its own: an fp64 softmax(Q K^T * scale) V on the
// CPU, compared within a tolerance for the kernel's element type. Exit
// status 0 if it matches, 1 if not, 2 on errors.
//
//===----------------------------------------------------------------------===//

#include "fa/Runtime.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <optional>
#include <vector>

namespace {

/// Deterministic inputs in [-1, 1) (a 64-bit LCG), rounded to `dtype` by
/// the encoding; `values` gets what the kernel will read.
std::vector<uint8_t> makeInput(fa::DType dtype, size_t count, uint64_t seed,
                               std::vector<float> &values) {
  values.resize(count);
  for (float &v : values) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    v = float(double(seed >> 11) / double(1ull << 53) * 2.0 - 1.0);
  }
  std::vector<uint8_t> bytes = fa::encodeElements(dtype, values);
  values = fa::decodeElements(dtype, bytes.data(), count);
  return bytes;
}

/// O and LSE of one attention in fp64, contiguous BHLD (LSE: BHL); a row
/// that sees no key (causal, Lq > Lk) has O = 0 and LSE = -inf.
void referenceAttention(const fa::AttentionShape &s, int64_t d, bool causal,
                        double scale, const std::vector<float> &q,
                        const std::vector<float> &k,
                        const std::vector<float> &v, std::vector<double> &o,
                        std::vector<double> &lse) {
  o.assign(size_t(s.batch * s.headsQ * s.seqQ * d), 0.0);
  lse.assign(size_t(s.batch * s.headsQ * s.seqQ),
             -std::numeric_limits<double>::infinity());
  std::vector<double> p(size_t(s.seqK));
  for (int64_t b = 0; b < s.batch; ++b)
    for (int64_t h = 0; h < s.headsQ; ++h) {
      int64_t hk = h / (s.headsQ / s.headsKv);
      for (int64_t i = 0; i < s.seqQ; ++i) {
        // Bottom-right aligned causal mask: key j is visible to query i if
        // j <= i + Lk - Lq.
        int64_t visible =
            causal ? std::min(s.seqK, i + s.seqK - s.seqQ + 1) : s.seqK;
        if (visible <= 0)
          continue;
        const float *qi = &q[size_t(((b * s.headsQ + h) * s.seqQ + i) * d)];
        double max = -std::numeric_limits<double>::infinity();
        for (int64_t j = 0; j < visible; ++j) {
          const float *kj = &k[size_t(((b * s.headsKv + hk) * s.seqK + j) * d)];
          double dot = 0;
          for (int64_t c = 0; c < d; ++c)
            dot += double(qi[c]) * double(kj[c]);
          p[size_t(j)] = dot * scale;
          max = std::max(max, p[size_t(j)]);
        }
        double sum = 0;
        for (int64_t j = 0; j < visible; ++j)
          sum += p[size_t(j)] = std::exp(p[size_t(j)] - max);
        size_t row = size_t((b * s.headsQ + h) * s.seqQ + i);
        for (int64_t j = 0; j < visible; ++j) {
          const float *vj = &v[size_t(((b * s.headsKv + hk) * s.seqK + j) * d)];
          for (int64_t c = 0; c < d; ++c)
            o[row * size_t(d) + size_t(c)] += p[size_t(j)] / sum * vj[c];
        }
        lse[row] = max + std::log(sum);
      }
    }
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: embed CODE_OBJECT\n");
    return 2;
  }
  auto die = [](const fa::Status &s) {
    std::fprintf(stderr, "embed: error: %s\n", s.toString().c_str());
    return 2;
  };
  // A device that runs the code object's target: a GPU for gfx* / sm_*,
  // the host emulator for a host code object.
  fa::Expected<fa::Manifest> manifest = fa::Module::readManifest(argv[1]);
  if (!manifest)
    return die(manifest.status());
  fa::Expected<fa::Device> device = fa::Device::open("auto", manifest->target);
  if (!device)
    return die(device.status());
  fa::Expected<fa::Module> module = fa::Module::load(*device, argv[1]);
  if (!module)
    return die(module.status());
  fa::Expected<fa::Kernel> kernel = module->kernel();
  if (!kernel)
    return die(kernel.status());
  const fa::KernelInfo &info = kernel->info();

  // B=1, Hq=2, Hkv=1, Lq=24, Lk=40: GQA and Lq != Lk in one small call.
  fa::AttentionShape shape = {1, 2, 1, 24, 40};
  const int64_t d = info.headDim;
  const size_t nQ = size_t(shape.batch * shape.headsQ * shape.seqQ * d);
  const size_t nKv = size_t(shape.batch * shape.headsKv * shape.seqK * d);
  const size_t nLse = size_t(shape.batch * shape.headsQ * shape.seqQ);
  std::vector<float> qv, kv, vv;
  std::vector<uint8_t> qBytes = makeInput(info.dtype, nQ, 1, qv);
  std::vector<uint8_t> kBytes = makeInput(info.dtype, nKv, 2, kv);
  std::vector<uint8_t> vBytes = makeInput(info.dtype, nKv, 3, vv);

  // The engine's way: the application owns every tensor and fa works on
  // them where they are. On the host emulator and gfx906-sim its memory is
  // host memory, wrapped as it is; on a GPU an engine wraps what its own
  // allocator (cudaMalloc, hipMalloc, a PyTorch tensor's data_ptr) gave it,
  // and this example, which links no vendor runtime, stands in with fa's.
  std::vector<uint8_t> oBytes(nQ * fa::dtypeBytes(info.dtype));
  std::vector<float> outLse(nLse);
  const bool hostMemory = device->isHostEmulator();
  auto tensor = [&](void *data, size_t bytes) -> fa::Expected<fa::Buffer> {
    if (hostMemory)
      return device->wrap(data, bytes);
    fa::Expected<fa::Buffer> b = device->allocate(bytes);
    if (b)
      if (fa::Status s = b->copyFromHost(data, bytes); !s.ok())
        return s;
    return b;
  };
  fa::Expected<fa::Buffer> q = tensor(qBytes.data(), qBytes.size()),
                           k = tensor(kBytes.data(), kBytes.size()),
                           v = tensor(vBytes.data(), vBytes.size()),
                           o = tensor(oBytes.data(), oBytes.size()),
                           lse = tensor(outLse.data(), nLse * sizeof(float));
  for (const fa::Status *s :
       {&q.status(), &k.status(), &v.status(), &o.status(), &lse.status()})
    if (!s->ok())
      return die(*s);

  fa::AttentionArgs args;
  args.q = &*q;
  args.k = &*k;
  args.v = &*v;
  args.o = &*o;
  args.lse = info.hasLse ? &*lse : nullptr;
  args.shape = shape; // strides: contiguous BHLD

  // A split-KV kernel writes its partial results to a workspace the
  // application gives it, sized once for the largest call it will make.
  fa::Expected<uint64_t> workspaceBytes = kernel->workspaceSize(shape);
  if (!workspaceBytes)
    return die(workspaceBytes.status());
  std::vector<uint8_t> workspaceMemory(hostMemory ? *workspaceBytes : 0);
  std::optional<fa::Buffer> workspace;
  if (*workspaceBytes) {
    fa::Expected<fa::Buffer> w =
        hostMemory ? device->wrap(workspaceMemory.data(), *workspaceBytes)
                   : device->allocate(*workspaceBytes);
    if (!w)
      return die(w.status());
    workspace = w.take();
  }

  // The loop of an engine (a decode step per layer, say): every call is
  // enqueued on the application's stream (nullptr here: the legacy default
  // stream; an engine passes its CUstream / hipStream_t) and returns at
  // once. Nothing synchronises inside the loop; the application does, once,
  // where it needs the results.
  void *stream = nullptr;
  for (int step = 0; step < 4; ++step)
    if (fa::Status s = kernel->enqueue(args, stream,
                                       workspace ? &*workspace : nullptr);
        !s.ok())
      return die(s);
  if (fa::Status s = device->synchronize(); !s.ok())
    return die(s);

  if (!hostMemory) {
    if (fa::Status s = o->copyToHost(oBytes.data(), oBytes.size()); !s.ok())
      return die(s);
    if (info.hasLse)
      if (fa::Status s = lse->copyToHost(outLse.data(), nLse * sizeof(float));
          !s.ok())
        return die(s);
  }
  std::vector<float> out = fa::decodeElements(info.dtype, oBytes.data(), nQ);

  std::vector<double> refO, refLse;
  referenceAttention(shape, d, info.causal, info.scale, qv, kv, vv, refO,
                     refLse);
  // The output's own rounding to its element type dominates the error.
  double tolerance = info.dtype == fa::DType::F32   ? 1e-4
                     : info.dtype == fa::DType::F16 ? 1e-2
                                                    : 5e-2;
  // A NaN or infinity in the output is an infinite error.
  auto worst = [](double &acc, double err) {
    if (!(err <= acc))
      acc = std::isfinite(err) ? err : std::numeric_limits<double>::infinity();
  };
  double errO = 0, errLse = 0;
  for (size_t i = 0; i < nQ; ++i)
    worst(errO, std::fabs(double(out[i]) - refO[i]));
  for (size_t i = 0; info.hasLse && i < nLse; ++i)
    if (std::isfinite(refLse[i]))
      worst(errLse, std::fabs(double(outLse[i]) - refLse[i]) /
                        std::max(1.0, std::fabs(refLse[i])));
  bool pass = errO <= tolerance && errLse <= 1e-4;
  std::printf("embed: device %s, max |O - O_ref| = %.3g (tolerance %.3g)",
              device->name().c_str(), errO, tolerance);
  if (info.hasLse)
    std::printf(", max relative LSE error %.3g (tolerance 1e-4)", errLse);
  std::printf("\nembed: kernel '%s' %s\n", info.name.c_str(),
              pass ? "matches the reference" : "DOES NOT MATCH");
  return pass ? 0 : 1;
}
