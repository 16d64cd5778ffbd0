//===- GpuBackend.cpp - The device-generic half of the GPU backends -------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements GpuBackend and GpuCode (GpuBackend.h): the device,
// memory, loading and launch logic the CUDA and HIP backends share, written
// against the vendor's half (CudaVendor.cpp, HipVendor.cpp). Every vendor
// call is checked and its failure becomes a Status naming the call, the
// vendor's error name and string, and what was being done; launch sizes are
// checked against the device and the function before the driver sees them,
// because the driver's own checks give one error name for many causes.
//
//===----------------------------------------------------------------------===//

#include "gpu/GpuBackend.h"

#include <algorithm>

using namespace fa;
using namespace fa::detail;

Status fa::detail::probeCallError(const char *kind, const char *call, int rc,
                                  const char *errorName,
                                  const char *description) {
  return vendorCallError(ErrorCode::Unavailable, kind,
                         std::string("device '") + kind + "' unavailable", call,
                         rc, errorName, description);
}

namespace fa {
namespace detail {

/// A module loaded on a GpuBackend, with one function per manifest kernel.
/// Unloaded on destruction (also when half built).
class GpuCode : public LoadedCode {
public:
  GpuCode(std::shared_ptr<GpuBackend> backend, void *module)
      : backend(std::move(backend)), module(module) {}
  ~GpuCode() override {
    if (module && backend->makeCurrent().ok())
      (void)backend->unloadModule(module);
  }

  Status launch(size_t index, const LaunchGeometry &g, const uint64_t *words,
                const LaunchOptions &, LaunchStep,
                LaunchQueue queue) override {
    const KernelInfo &k = functions[index].info;
    GpuParams params;
    backend->packWords(
        words,
        fa_kernel_abi_words(uint32_t(k.abiVersion), k.trace, k.hasHeadParams()),
        int(k.indexBits), params);
    return launchParams(index, g, params, queue);
  }
  Status launchRaw(size_t index, const LaunchGeometry &g, const uint64_t *args,
                   size_t count) override {
    GpuParams params;
    backend->packRaw(args, count, params);
    return launchParams(index, g, params, LaunchQueue{});
  }

  std::vector<GpuFunction> functions;

private:
  /// Checks the geometry, launches with `params` on queue.stream and, with
  /// queue.wait, waits for the device.
  Status launchParams(size_t index, const LaunchGeometry &g, GpuParams &params,
                      LaunchQueue queue);

  std::shared_ptr<GpuBackend> backend;
  void *module;
};

} // namespace detail
} // namespace fa

Status GpuBackend::fail(ErrorCode code, const std::string &what,
                        const char *call, int rc,
                        const std::string &hint) const {
  if (rc == spelling_.outOfMemory)
    code = ErrorCode::OutOfMemory;
  return vendorCallError(code, name_, what, call, rc, errorName(rc),
                         errorString(rc), hint);
}

Status GpuBackend::makeCurrent() const {
  if (int rc = selectDevice())
    return fail(ErrorCode::Unavailable, "cannot use device '" + name_ + "'",
                spelling_.setCurrent, rc);
  return Status::success();
}

Status GpuBackend::readDeviceAttribute(const GpuAttribute &a,
                                       const std::string &what) {
  std::string number = " (" + std::to_string(a.attribute) + ")";
  if (int rc = getDeviceAttribute(a.out, a.attribute, device_))
    return fail(ErrorCode::Unavailable,
                what + ": cannot read " + a.name +
                    (spelling_.attributeNumbered ? number : ""),
                spelling_.deviceGetAttribute, rc);
  if (*a.out < a.lo || *a.out > a.hi)
    return Status::error(ErrorCode::Unavailable,
                         what + ": " + a.name + number + " is " +
                             std::to_string(*a.out) + ", outside [" +
                             std::to_string(a.lo) + ", " +
                             std::to_string(a.hi) + "] (" +
                             spelling_.attributeRangeHint + ")")
        .withCall(spelling_.deviceGetAttribute, "")
        .withDevice(name_);
  return Status::success();
}

Status GpuBackend::init() {
  std::string what = "cannot open device '" + name_ + "'";
  if (spelling_.selectBeforeOpen)
    if (Status s = makeCurrent(); !s.ok())
      return s;
  if (int rc = getDevice(ordinal_, device_))
    return fail(ErrorCode::Unavailable, what, spelling_.deviceGet, rc);
  char buf[256] = {};
  if (int rc = getDeviceName(buf, sizeof(buf) - 1, device_))
    return fail(ErrorCode::Unavailable, what, spelling_.deviceGetName, rc);
  deviceName_ = buf;
  for (const GpuAttribute &a : deviceAttributes())
    if (Status s = readDeviceAttribute(a, what); !s.ok())
      return s;
  return finishInit(what);
}

Expected<uint64_t> GpuBackend::allocate(size_t bytes) {
  if (Status s = makeCurrent(); !s.ok())
    return s;
  uint64_t addr = 0;
  std::string what = "cannot allocate " + std::to_string(bytes) +
                     " bytes on device '" + name_ + "'";
  if (int rc = memAlloc(addr, bytes))
    return fail(ErrorCode::OutOfMemory, what, spelling_.memAlloc, rc);
  // Device::allocate promises zeroed memory.
  if (int rc = memZero(addr, bytes)) {
    (void)memFree(addr);
    return fail(ErrorCode::LaunchFailed, what + " (zero-filling it failed)",
                spelling_.memZero, rc);
  }
  return addr;
}

void GpuBackend::release(uint64_t addr) {
  if (makeCurrent().ok())
    (void)memFree(addr);
}

Status GpuBackend::copyToDevice(uint64_t dst, const void *src, size_t bytes) {
  if (Status s = makeCurrent(); !s.ok())
    return s;
  if (int rc = copyHtoD(dst, src, bytes))
    return fail(ErrorCode::LaunchFailed,
                "cannot copy " + std::to_string(bytes) + " bytes to device '" +
                    name_ + "'",
                spelling_.copyToDevice, rc);
  return Status::success();
}

Status GpuBackend::copyToHost(void *dst, uint64_t src, size_t bytes) {
  if (Status s = makeCurrent(); !s.ok())
    return s;
  if (int rc = copyDtoH(dst, src, bytes))
    return fail(ErrorCode::LaunchFailed,
                "cannot copy " + std::to_string(bytes) +
                    " bytes from device '" + name_ + "'",
                spelling_.copyToHost, rc);
  return Status::success();
}

Status GpuBackend::synchronize() {
  if (Status s = makeCurrent(); !s.ok())
    return s;
  if (int rc = deviceSynchronize())
    return fail(ErrorCode::LaunchFailed,
                "device '" + name_ + "' failed while running earlier work",
                spelling_.synchronize, rc);
  return Status::success();
}

Expected<std::unique_ptr<LoadedCode>>
GpuBackend::loadRawCode(const std::vector<uint8_t> &bytes,
                        const std::string &format, const std::string &symbol,
                        int64_t threads) {
  // The manifest load checks against, describing the one kernel; its
  // shared memory and parameters are the run-time compiler's, not fa's ABI.
  Manifest m;
  m.target = targets_.front();
  m.codeObjectFormat = format;
  KernelInfo k;
  k.name = k.symbol = symbol;
  k.threads = threads;
  k.waveSize = waveSize_;
  m.kernels.push_back(k);
  return load(m, bytes, "<run-time compiled " + symbol + ">",
              /*faKernels=*/false);
}

Expected<std::unique_ptr<LoadedCode>>
GpuBackend::load(const Manifest &manifest, const std::vector<uint8_t> &bytes,
                 const std::string &displayName, bool faKernels) {
  const std::string &format = manifest.codeObjectFormat;
  if (!loadsFormat(format))
    return Status::error(ErrorCode::Unsupported,
                         std::string("a ") + spelling_.kind + " device loads " +
                             spelling_.formats +
                             " code objects, the manifest says '" + format +
                             "'");
  if (std::optional<std::string> why = targetProblem(manifest.target, format))
    return Status::error(ErrorCode::Unsupported,
                         "code object is for target '" + manifest.target +
                             "' but device '" + name_ + "' is " + deviceName_ +
                             ", " + arch_ + ": " + *why);
  if (Status s = checkCodeObject(manifest, bytes, faKernels); !s.ok())
    return s;
  for (const KernelInfo &k : manifest.kernels)
    if (k.waveSize != waveSize_)
      return Status::error(ErrorCode::Unsupported,
                           "kernel '" + k.name + "' was compiled for wave " +
                               std::to_string(k.waveSize) + ", device '" +
                               name_ + "' (" +
                               (spelling_.waveNamesArch ? arch_ : deviceName_) +
                               ") runs " + spelling_.waveWords +
                               std::to_string(waveSize_))
          .withKernel(k.name);
  std::vector<uint8_t> copy;
  const void *image = nullptr;
  if (Status s = prepareImage(manifest, bytes, copy, image); !s.ok())
    return s;

  if (Status s = makeCurrent(); !s.ok())
    return s;
  void *module = nullptr;
  if (Status s = loadModule(manifest, image, displayName, module); !s.ok())
    return s;
  // From here `code` owns the module: a failure below unloads it.
  auto code = std::make_unique<GpuCode>(shared_from_this(), module);

  for (const KernelInfo &k : manifest.kernels) {
    GpuFunction f;
    f.info = k;
    if (int rc = getFunction(f.function, module, k.symbol.c_str()))
      return fail(rc == spelling_.notFound ? ErrorCode::NotFound
                                           : ErrorCode::LoadFailed,
                  "kernel '" + k.name + "': symbol '" + k.symbol +
                      "' not loaded",
                  spelling_.moduleGetFunction, rc,
                  missingFunctionHint(rc, k.symbol))
          .withKernel(k.name);
    if (hasFunctionAttributes())
      for (const GpuAttribute &a : functionAttributes(f))
        if (int rc = getFunctionAttribute(a.out, a.attribute, f.function))
          return fail(ErrorCode::LoadFailed,
                      "kernel '" + k.name + "': cannot read " +
                          spelling_.funcAttributePrefix + a.name,
                      spelling_.funcGetAttribute, rc)
              .withKernel(k.name);
    if (Status s = finishFunction(k, f, faKernels); !s.ok())
      return s;
    code->functions.push_back(std::move(f));
  }
  return std::unique_ptr<LoadedCode>(std::move(code));
}

Status GpuCode::launchParams(size_t index, const LaunchGeometry &g,
                             GpuParams &params, LaunchQueue queue) {
  const GpuFunction &f = functions[index];
  const DeviceLimits &limits = backend->limits();
  const GpuSpelling &spelling = backend->spelling_;
  auto geometry = [&] {
    return "grid (" + std::to_string(g.grid[0]) + ", " +
           std::to_string(g.grid[1]) + ", " + std::to_string(g.grid[2]) +
           "), block (" + std::to_string(g.block[0]) + ", " +
           std::to_string(g.block[1]) + ", " + std::to_string(g.block[2]) +
           ")" +
           (spelling.geometryNamesDynamicLds
                ? ", " + std::to_string(f.info.dynamicLdsBytes) +
                      " bytes of dynamic shared memory"
                : "");
  };
  // The driver's own checks give one error name for many causes; these say
  // which number is wrong. A function limit is known on CUDA always (a load
  // with a limit of 0 is refused: threads are at least 1), on HIP with
  // hipFuncGetAttribute.
  uint64_t threads = uint64_t(g.block[0]) * g.block[1] * g.block[2];
  uint64_t maxThreads = limits.maxThreadsPerWorkgroup;
  if (f.maxThreads > 0)
    maxThreads = std::min<uint64_t>(maxThreads, uint64_t(f.maxThreads));
  if (threads > maxThreads)
    return Status::error(ErrorCode::InvalidArgument,
                         "launch of " + geometry() + " has " +
                             std::to_string(threads) + " threads per " +
                             spelling.threadsPer + ", kernel '" + f.info.name +
                             "' on device '" + backend->name() + "' allows " +
                             std::to_string(maxThreads));
  for (int i = 0; i < 3; ++i)
    if (g.grid[i] == 0 || g.grid[i] > limits.maxGrid[i])
      return Status::error(ErrorCode::InvalidArgument,
                           "launch of " + geometry() +
                               " is outside the device's grid limit (" +
                               std::to_string(limits.maxGrid[0]) + ", " +
                               std::to_string(limits.maxGrid[1]) + ", " +
                               std::to_string(limits.maxGrid[2]) + ")");

  if (Status s = backend->makeCurrent(); !s.ok())
    return s;
  if (int rc = backend->launchKernel(f, g, params, queue.stream))
    return backend->fail(
        ErrorCode::LaunchFailed,
        "cannot launch kernel '" + f.info.name + "' with " + geometry(),
        spelling.launchKernel, rc, backend->launchFailureHint(rc, f));
  // An enqueue returns here: the kernel's faults show where the caller
  // synchronises.
  if (!queue.wait)
    return Status::success();
  // A launch runs to completion: a fault is reported here, by name.
  if (int rc = backend->deviceSynchronize())
    return backend->fail(ErrorCode::LaunchFailed,
                         "kernel '" + f.info.name + "' failed while running (" +
                             geometry() + ")",
                         spelling.synchronize, rc, spelling.runFailureHint);
  return Status::success();
}
