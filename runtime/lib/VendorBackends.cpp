//===- VendorBackends.cpp - HIP and CUDA device probes --------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file opens the vendor runtimes with dlopen through a table of required
// symbols (one X-macro per vendor), initializes them and counts devices, so
// `Device::open("hip")` / `("cuda")` fail with the precise reason: library
// not found (with dlopen's message), a missing symbol, the init call's error
// name, no GPU, or no such ordinal. The launch backends themselves are not
// implemented yet; when a GPU is present that is what the error says. They
// will plug in here, extending the symbol tables (hipModuleLoadData,
// hipModuleLaunchKernel, cuModuleLoadData, cuLaunchKernel, ...).
//
// Vendor libraries stay loaded once opened: unloading a GPU runtime after
// initializing it is not reliably safe.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"

#include <dlfcn.h>
#include <mutex>

using namespace fa;
using namespace fa::detail;

// Required HIP symbols: name, return type, parameter list.
#define FA_HIP_SYMBOLS(X)                                                      \
  X(hipInit, int, (unsigned))                                                  \
  X(hipGetDeviceCount, int, (int *))                                           \
  X(hipGetErrorName, const char *, (int))

// Required CUDA driver symbols.
#define FA_CUDA_SYMBOLS(X)                                                     \
  X(cuInit, int, (unsigned))                                                   \
  X(cuDeviceGetCount, int, (int *))                                            \
  X(cuGetErrorName, int, (int, const char **))

namespace {
struct HipApi {
#define FA_DECLARE(NAME, RET, ARGS) RET(*NAME) ARGS = nullptr;
  FA_HIP_SYMBOLS(FA_DECLARE)
};
struct CudaApi {
  FA_CUDA_SYMBOLS(FA_DECLARE)
#undef FA_DECLARE
};

/// Outcome of probing one vendor runtime (cached: probing is idempotent).
struct Probe {
  Status status; ///< why the runtime is unusable, or success
  int deviceCount = 0;
};
} // namespace

/// dlopens the first of `names` that loads; on failure an Unavailable error
/// quoting dlopen's message for the first name.
static Status openLibrary(const char *kind,
                          const std::vector<const char *> &names,
                          void *&handle) {
  std::string firstError;
  for (const char *name : names) {
    ::dlerror();
    handle = ::dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle)
      return Status::success();
    if (firstError.empty()) {
      const char *err = ::dlerror();
      firstError = err ? err : "unknown error";
    }
  }
  return Status::error(ErrorCode::Unavailable,
                       std::string("device '") + kind +
                           "' unavailable: " + names.front() +
                           " not found (dlopen: " + firstError + ")")
      .withCall("dlopen", "")
      .withDevice(kind);
}

static Status resolve(const char *kind, void *handle, const char *symbol,
                      void *&out) {
  out = ::dlsym(handle, symbol);
  if (out)
    return Status::success();
  return Status::error(ErrorCode::Unavailable,
                       std::string("device '") + kind +
                           "' unavailable: the vendor runtime lacks '" +
                           symbol + "' (too old?)")
      .withCall("dlsym", "")
      .withDevice(kind);
}

static Status callFailed(const char *kind, const char *call, int code,
                         const char *errorName) {
  std::string name = errorName ? errorName : "error " + std::to_string(code);
  return Status::error(ErrorCode::Unavailable, std::string("device '") + kind +
                                                   "' unavailable: " + call +
                                                   " returned " + name + " (" +
                                                   std::to_string(code) + ")")
      .withCall(call, name)
      .withDevice(kind);
}

static const Probe &probeHip() {
  static Probe probe;
  static std::once_flag once;
  std::call_once(once, [] {
    const char *kind = "hip";
    void *handle;
    probe.status = openLibrary(
        kind, {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"},
        handle);
    if (!probe.status.ok())
      return;
    HipApi api;
#define FA_RESOLVE(NAME, RET, ARGS)                                            \
  {                                                                            \
    void *sym;                                                                 \
    if (!(probe.status = resolve(kind, handle, #NAME, sym)).ok())              \
      return;                                                                  \
    api.NAME = reinterpret_cast<RET(*) ARGS>(sym);                             \
  }
    FA_HIP_SYMBOLS(FA_RESOLVE)
    if (int rc = api.hipInit(0)) {
      probe.status = callFailed("hip", "hipInit", rc, api.hipGetErrorName(rc));
      return;
    }
    if (int rc = api.hipGetDeviceCount(&probe.deviceCount)) {
      probe.status =
          callFailed("hip", "hipGetDeviceCount", rc, api.hipGetErrorName(rc));
      return;
    }
  });
  return probe;
}

static const Probe &probeCuda() {
  static Probe probe;
  static std::once_flag once;
  std::call_once(once, [] {
    const char *kind = "cuda";
    void *handle;
    probe.status = openLibrary(kind, {"libcuda.so.1", "libcuda.so"}, handle);
    if (!probe.status.ok())
      return;
    CudaApi api;
    FA_CUDA_SYMBOLS(FA_RESOLVE)
#undef FA_RESOLVE
    auto errorName = [&](int rc) {
      const char *name = nullptr;
      return api.cuGetErrorName(rc, &name) == 0 ? name : nullptr;
    };
    if (int rc = api.cuInit(0)) {
      probe.status = callFailed("cuda", "cuInit", rc, errorName(rc));
      return;
    }
    if (int rc = api.cuDeviceGetCount(&probe.deviceCount)) {
      probe.status = callFailed("cuda", "cuDeviceGetCount", rc, errorName(rc));
      return;
    }
  });
  return probe;
}

static Expected<std::shared_ptr<Backend>>
openGpu(const char *kind, const char *vendor, const Probe &probe, int ordinal) {
  std::string spec = std::string(kind) + ":" + std::to_string(ordinal);
  if (!probe.status.ok())
    return probe.status;
  if (probe.deviceCount == 0)
    return Status::error(ErrorCode::Unavailable,
                         std::string("device '") + kind +
                             "' unavailable: the " + kind +
                             " runtime loaded but found no " + vendor + " GPU")
        .withDevice(kind);
  if (ordinal >= probe.deviceCount)
    return Status::error(ErrorCode::InvalidArgument,
                         "device '" + spec + "' does not exist: " +
                             std::to_string(probe.deviceCount) + " " + vendor +
                             " GPU" + (probe.deviceCount == 1 ? "" : "s") +
                             " found")
        .withDevice(spec);
  return Status::error(ErrorCode::Unsupported,
                       "device '" + spec +
                           "' is present but this runtime has "
                           "no " +
                           kind +
                           " launch backend yet (only 'host' is "
                           "implemented)")
      .withDevice(spec);
}

Expected<std::shared_ptr<Backend>> fa::detail::openHipBackend(int ordinal) {
  return openGpu("hip", "AMD", probeHip(), ordinal);
}

Expected<std::shared_ptr<Backend>> fa::detail::openCudaBackend(int ordinal) {
  return openGpu("cuda", "NVIDIA", probeCuda(), ordinal);
}
