//===- launch_overhead.cpp - Host cost of one attention launch (CUDA) -----===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// A benchmark (never a timed test), run by bench/gpu-engine.sh on an NVIDIA
// GPU: the host time of enqueuing one decode attention (the split kernel and
// its combine kernel of decode_d128.cubin: f16, D=128, Hq=32, Hkv=8, Lq=1)
// on a stream, with no synchronisation, by
//
//   raw       two cuLaunchKernel calls of the same cubin's functions with
//             the parameters fa packs (fa::packAttentionArgs,
//             bindWorkspace, packKernelParams, computed once outside the
//             loop): the floor any launcher pays;
//   aot       the launcher fac --emit=launcher generated for the same
//             kernel (its own cuModuleLoadData, packing and launches;
//             compiled in with -DFA_AOT_HEADER="decode_launcher.h");
//   enqueue   fa's C API, fa_module_enqueue (checks, packing, launches);
//   enqueue++ fa::Kernel::enqueue, the C++ API under it;
//   blocking  fa_module_launch, the blocking call of before (fa's own
//             buffers and workspace; it synchronises: host time per call).
//
// Host time per call: the median over rounds of the wall time of a batch of
// calls divided by its size; the stream is synchronised between batches,
// outside the timing, so the launch queue never fills. Every method's
// output is compared with the raw launch's, byte for byte.
//
// usage: launch_overhead DECODE_CUBIN [Lk]   (prints CSV lines)
//
//===----------------------------------------------------------------------===//

#include "fa/Module.h"
#include "fa/fa_runtime.h"
#include "gpu/Vendor.h"

#include <cuda.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

#ifdef FA_AOT_HEADER
extern "C" {
#include FA_AOT_HEADER
}
#endif

namespace {

void check(CUresult rc, const char *what) {
  if (rc != CUDA_SUCCESS) {
    const char *name = nullptr;
    cuGetErrorName(rc, &name);
    std::fprintf(stderr, "%s failed: %s\n", what, name ? name : "?");
    std::exit(2);
  }
}

void checkFa(fa_status s, const char *what) {
  if (s != FA_OK) {
    std::fprintf(stderr, "%s failed: %s\n", what, fa_last_error());
    std::exit(2);
  }
}

/// Median over `rounds` of the host microseconds per call of `batch` calls.
double hostMicros(const std::function<void()> &call, CUstream stream,
                  int batch = 64, int rounds = 51) {
  for (int i = 0; i < 8; ++i)
    call();
  check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  std::vector<double> per;
  for (int r = 0; r < rounds; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < batch; ++i)
      call();
    auto t1 = std::chrono::steady_clock::now();
    per.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count() /
                  batch);
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  }
  std::nth_element(per.begin(), per.begin() + per.size() / 2, per.end());
  return per[per.size() / 2];
}

std::vector<uint8_t> readOutput(CUdeviceptr o, size_t bytes) {
  std::vector<uint8_t> out(bytes);
  check(cuMemcpyDtoH(out.data(), o, bytes), "cuMemcpyDtoH");
  return out;
}

} // namespace

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: launch_overhead DECODE_CUBIN [Lk]\n");
    return 2;
  }
  const std::string cubin = argv[1];
  const int64_t B = 1, Hq = 32, Hkv = 8, Lq = 1, D = 128;
  const int64_t Lk = argc > 2 ? std::atoll(argv[2]) : 1024;

  // The engine: its context (the primary one), stream and tensors.
  check(cuInit(0), "cuInit");
  CUdevice cuDev;
  check(cuDeviceGet(&cuDev, 0), "cuDeviceGet");
  CUcontext ctx;
  check(cuDevicePrimaryCtxRetain(&ctx, cuDev), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(ctx), "cuCtxSetCurrent");
  CUstream stream;
  check(cuStreamCreate(&stream, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
  const size_t qBytes = size_t(B * Hq * Lq * D * 2),
               kvBytes = size_t(B * Hkv * Lk * D * 2);
  CUdeviceptr q, k, v, o;
  check(cuMemAlloc(&q, qBytes), "cuMemAlloc");
  check(cuMemAlloc(&k, kvBytes), "cuMemAlloc");
  check(cuMemAlloc(&v, kvBytes), "cuMemAlloc");
  check(cuMemAlloc(&o, qBytes), "cuMemAlloc");
  {
    std::vector<uint16_t> fill(kvBytes / 2);
    for (size_t i = 0; i < fill.size(); ++i)
      fill[i] = uint16_t(0x3000 + (i * 2654435761u >> 20) % 0x800); // ~[0.125, 0.5)
    check(cuMemcpyHtoD(k, fill.data(), kvBytes), "cuMemcpyHtoD");
    check(cuMemcpyHtoD(v, fill.data(), kvBytes), "cuMemcpyHtoD");
    check(cuMemcpyHtoD(q, fill.data(), qBytes), "cuMemcpyHtoD");
  }

  // fa over the engine's memory.
  fa_device *dev;
  checkFa(fa_device_open("cuda:0", &dev), "fa_device_open");
  fa_module *mod;
  checkFa(fa_module_load(dev, cubin.c_str(), &mod), "fa_module_load");
  fa_buffer *bq, *bk, *bv, *bo;
  checkFa(fa_buffer_wrap(dev, (void *)q, qBytes, &bq), "fa_buffer_wrap");
  checkFa(fa_buffer_wrap(dev, (void *)k, kvBytes, &bk), "fa_buffer_wrap");
  checkFa(fa_buffer_wrap(dev, (void *)v, kvBytes, &bv), "fa_buffer_wrap");
  checkFa(fa_buffer_wrap(dev, (void *)o, qBytes, &bo), "fa_buffer_wrap");
  fa_attention_args a = {};
  a.q = bq, a.k = bk, a.v = bv, a.o = bo;
  a.batch = B, a.heads_q = Hq, a.heads_kv = Hkv, a.seq_q = Lq, a.seq_k = Lk;
  size_t wsBytes = 0;
  checkFa(fa_module_workspace_size(mod, nullptr, &a, 0, &wsBytes),
          "fa_module_workspace_size");
  CUdeviceptr ws;
  check(cuMemAlloc(&ws, std::max<size_t>(wsBytes, 256)), "cuMemAlloc");
  fa_buffer *bws;
  checkFa(fa_buffer_wrap(dev, (void *)ws, std::max<size_t>(wsBytes, 256), &bws),
          "fa_buffer_wrap");
  fa_enqueue_options eo = {};
  eo.stream = stream;
  eo.workspace = bws;
  checkFa(fa_module_enqueue(mod, nullptr, &a, nullptr, nullptr, &eo),
          "fa_module_enqueue");
  const int64_t splits = eo.kv_splits_used;
  check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  const std::vector<uint8_t> viaFa = readOutput(o, qBytes);

  // The raw driver launch of the same cubin, with fa's parameters.
  fa::Expected<fa::Device> cxxDev = fa::Device::open("cuda:0");
  fa::Expected<fa::Module> cxxMod = fa::Module::load(*cxxDev, cubin);
  fa::Expected<fa::Kernel> kernel = cxxMod->kernel();
  if (!kernel) {
    std::fprintf(stderr, "%s\n", kernel.status().toString().c_str());
    return 2;
  }
  const fa::KernelInfo &split = kernel->info();
  const fa::KernelInfo *combine = nullptr;
  for (const fa::KernelInfo &ki : cxxMod->manifest().kernels)
    if (ki.name == split.combine)
      combine = &ki;
  fa::Expected<fa::Buffer> wq = cxxDev->wrap((void *)q, qBytes),
                           wk = cxxDev->wrap((void *)k, kvBytes),
                           wv = cxxDev->wrap((void *)v, kvBytes),
                           wo = cxxDev->wrap((void *)o, qBytes),
                           wws = cxxDev->wrap((void *)ws,
                                              std::max<size_t>(wsBytes, 256));
  fa::AttentionArgs cxxArgs{&*wq, &*wk, &*wv, &*wo, nullptr,
                            {B, Hq, Hkv, Lq, Lk}, {}, {}, {}};
  fa::Expected<fa::PackedLaunch> packed = fa::packAttentionArgs(
      split, cxxArgs, cxxDev->limits(), combine, splits);
  if (!packed || !fa::bindWorkspace(*packed, split, *wws).ok()) {
    std::fprintf(stderr, "packing failed\n");
    return 2;
  }
  std::vector<char> image;
  {
    std::ifstream in(cubin, std::ios::binary);
    image.assign(std::istreambuf_iterator<char>(in), {});
  }
  CUmodule rawModule;
  check(cuModuleLoadData(&rawModule, image.data()), "cuModuleLoadData");
  CUfunction fSplit, fCombine;
  check(cuModuleGetFunction(&fSplit, rawModule, split.symbol.c_str()),
        "cuModuleGetFunction");
  check(cuModuleGetFunction(&fCombine, rawModule, combine->symbol.c_str()),
        "cuModuleGetFunction");
  for (auto [f, ki] : {std::pair{fSplit, &split}, std::pair{fCombine, combine}})
    if (ki->dynamicLdsBytes > 0)
      check(cuFuncSetAttribute(f,
                               CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                               int(ki->dynamicLdsBytes)),
            "cuFuncSetAttribute");
  void *params[fa::detail::kMaxKernelParams];
  fa::detail::packKernelParams(packed->words.data(), packed->numWords, params);
  const fa::LaunchGeometry &g = packed->geometry, &gc = *packed->combineGeometry;
  auto raw = [&] {
    check(cuLaunchKernel(fSplit, g.grid[0], g.grid[1], g.grid[2], g.block[0],
                         1, 1, unsigned(split.dynamicLdsBytes), stream, params,
                         nullptr),
          "cuLaunchKernel");
    check(cuLaunchKernel(fCombine, gc.grid[0], gc.grid[1], gc.grid[2],
                         gc.block[0], 1, 1, unsigned(combine->dynamicLdsBytes),
                         stream, params, nullptr),
          "cuLaunchKernel");
  };
  check(cuMemsetD8(o, 0, qBytes), "cuMemsetD8");
  raw();
  check(cuStreamSynchronize(stream), "cuStreamSynchronize");
  const std::vector<uint8_t> viaRaw = readOutput(o, qBytes);

  std::printf("method,host_us_per_call,same_output_as_raw,splits,Lk\n");
  auto row = [&](const char *name, double us, bool same) {
    std::printf("%s,%.3f,%s,%lld,%lld\n", name, us, same ? "yes" : "NO",
                (long long)splits, (long long)Lk);
  };
  row("raw", hostMicros(raw, stream), true);
  auto sameAfter = [&](const std::function<void()> &call) {
    check(cuMemsetD8(o, 0, qBytes), "cuMemsetD8");
    call();
    check(cuStreamSynchronize(stream), "cuStreamSynchronize");
    return readOutput(o, qBytes) == viaRaw;
  };
  auto enqueue = [&] {
    checkFa(fa_module_enqueue(mod, nullptr, &a, nullptr, nullptr, &eo),
            "fa_module_enqueue");
  };
  row("enqueue", hostMicros(enqueue, stream), viaFa == viaRaw && sameAfter(enqueue));
  fa::LaunchOptions lo;
  lo.kvSplits = splits;
  auto enqueueCxx = [&] {
    fa::Status s = kernel->enqueue(cxxArgs, stream, &*wws, lo);
    if (!s.ok()) {
      std::fprintf(stderr, "%s\n", s.toString().c_str());
      std::exit(2);
    }
  };
  row("enqueue++", hostMicros(enqueueCxx, stream), sameAfter(enqueueCxx));

#ifdef FA_AOT_HEADER
  // The launcher `fac --emit=launcher --launcher-prefix=decode` wrote for
  // the same kernel: its own module, packing and launches.
  decode_module aot;
  if (int rc = decode_load(&aot)) {
    std::fprintf(stderr, "AOT load failed: %s\n", decode_error_string(rc));
    return 2;
  }
  auto aotLaunch = [&] {
    if (int rc = decode_launch(&aot, stream, q, k, v, o, 0, B, Hq, Hkv, Lq,
                               Lk, nullptr, ws, std::max<size_t>(wsBytes, 256),
                               splits)) {
      std::fprintf(stderr, "AOT launch failed: %s\n",
                   decode_error_string(rc));
      std::exit(2);
    }
  };
  row("aot", hostMicros(aotLaunch, stream), sameAfter(aotLaunch));
#endif

  // The blocking call of before, on fa's own buffers (it synchronises).
  fa_buffer *own[4];
  for (int i = 0; i < 4; ++i)
    checkFa(fa_buffer_alloc(dev, i == 1 || i == 2 ? kvBytes : qBytes, &own[i]),
            "fa_buffer_alloc");
  fa_attention_args ab = a;
  ab.q = own[0], ab.k = own[1], ab.v = own[2], ab.o = own[3];
  auto blocking = [&] {
    checkFa(fa_module_launch(mod, nullptr, &ab), "fa_module_launch");
  };
  row("blocking", hostMicros(blocking, stream, 16, 21), true);
  return 0;
}
