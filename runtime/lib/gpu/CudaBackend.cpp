//===- CudaBackend.cpp - NVIDIA GPUs through the CUDA driver API ----------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the `cuda[:N]` device over the CUDA driver API, which
// is loaded with dlopen("libcuda.so.1") through the symbol table below; no
// CUDA header or library is needed to build it. The few types and enum
// values it uses are declared here (values from cuda.h, stable across CUDA
// 11-13).
//
//   Device:  cuInit, cuDeviceGet, the device's primary context
//            (cuDevicePrimaryCtxRetain, released on destruction), made
//            current on the calling thread before every call. Limits and
//            the target sm_XY come from cuDeviceGetAttribute.
//   Memory:  cuMemAlloc_v2 (then zeroed, as Device::allocate promises),
//            cuMemFree_v2, synchronous cuMemcpyHtoD_v2 / cuMemcpyDtoH_v2.
//   Loading: cuModuleLoadDataEx with the JIT's error and info logs (PTX is
//            passed NUL-terminated; a cubin as is), cuModuleGetFunction per
//            kernel, cuFuncGetAttribute for registers, static shared memory
//            and the function's thread limit (a manifest below the former
//            or above the latter is refused); cuFuncSetAttribute
//            (MAX_DYNAMIC_SHARED_SIZE_BYTES) for the manifest's
//            dynamic_lds_bytes.
//   Launch:  cuLaunchKernel on the context's default stream with the ABI
//            words as parameters (packKernelParams, Vendor.h), then
//            cuCtxSynchronize: a launch runs to completion.
//
// Every failing call becomes a Status naming the call, CUDA's error name and
// string, and what was being done; loads carry the JIT log. Launch sizes and
// shared memory are checked against the device and the function before the
// driver sees them.
//
//===----------------------------------------------------------------------===//

#include "core/Backend.h"
#include "gpu/Vendor.h"

#include <algorithm>
#include <map>
#include <mutex>

using namespace fa;
using namespace fa::detail;

namespace {

// The driver API's types, as cuda.h declares them.
using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = struct CUctx_st *;
using CUmodule = struct CUmod_st *;
using CUfunction = struct CUfunc_st *;
using CUstream = struct CUstream_st *;

// CUdevice_attribute.
constexpr int CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 1;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X = 2;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X = 5; // Y = 6, Z = 7
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK = 8;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
// CUfunction_attribute.
constexpr int CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
constexpr int CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
constexpr int CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3;
constexpr int CU_FUNC_ATTRIBUTE_NUM_REGS = 4;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
// CUjit_option.
constexpr int CU_JIT_INFO_LOG_BUFFER = 3;
constexpr int CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES = 4;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
// CUresult values the messages explain.
constexpr CUresult CUDA_ERROR_OUT_OF_MEMORY = 2;
constexpr CUresult CUDA_ERROR_INVALID_IMAGE = 200;
constexpr CUresult CUDA_ERROR_NO_BINARY_FOR_GPU = 209;
constexpr CUresult CUDA_ERROR_INVALID_PTX = 218;
constexpr CUresult CUDA_ERROR_UNSUPPORTED_PTX_VERSION = 222;
constexpr CUresult CUDA_ERROR_NOT_FOUND = 500;
constexpr CUresult CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES = 701;

/// Static shared memory above this needs the dynamic opt-in.
constexpr int kDefaultSharedLimit = 48 * 1024;

// Required driver symbols: name, return type, parameter list. The _v2 names
// are what cuda.h's macros select since CUDA 4 / 11.
#define FA_CUDA_REQUIRED(X)                                                    \
  X(cuInit, CUresult, (unsigned))                                              \
  X(cuDeviceGetCount, CUresult, (int *))                                       \
  X(cuGetErrorName, CUresult, (CUresult, const char **))                       \
  X(cuGetErrorString, CUresult, (CUresult, const char **))                     \
  X(cuDeviceGet, CUresult, (CUdevice *, int))                                  \
  X(cuDeviceGetName, CUresult, (char *, int, CUdevice))                        \
  X(cuDeviceGetAttribute, CUresult, (int *, int, CUdevice))                    \
  X(cuDevicePrimaryCtxRetain, CUresult, (CUcontext *, CUdevice))               \
  X(cuDevicePrimaryCtxRelease_v2, CUresult, (CUdevice))                        \
  X(cuCtxSetCurrent, CUresult, (CUcontext))                                    \
  X(cuCtxSynchronize, CUresult, ())                                            \
  X(cuMemAlloc_v2, CUresult, (CUdeviceptr *, size_t))                          \
  X(cuMemFree_v2, CUresult, (CUdeviceptr))                                     \
  X(cuMemsetD8_v2, CUresult, (CUdeviceptr, unsigned char, size_t))             \
  X(cuMemcpyHtoD_v2, CUresult, (CUdeviceptr, const void *, size_t))            \
  X(cuMemcpyDtoH_v2, CUresult, (void *, CUdeviceptr, size_t))                  \
  X(cuModuleLoadDataEx, CUresult,                                              \
    (CUmodule *, const void *, unsigned, int *, void **))                      \
  X(cuModuleUnload, CUresult, (CUmodule))                                      \
  X(cuModuleGetFunction, CUresult, (CUfunction *, CUmodule, const char *))     \
  X(cuFuncGetAttribute, CUresult, (int *, int, CUfunction))                    \
  X(cuFuncSetAttribute, CUresult, (CUfunction, int, int))                      \
  X(cuLaunchKernel, CUresult,                                                  \
    (CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,   \
     unsigned, CUstream, void **, void **))

// Optional symbols: used when present.
#define FA_CUDA_OPTIONAL(X) X(cuDriverGetVersion, CUresult, (int *))

struct CudaApi {
  FA_CUDA_REQUIRED(FA_DECLARE_SYMBOL)
  FA_CUDA_OPTIONAL(FA_DECLARE_SYMBOL)

  const char *errorName(CUresult rc) const {
    const char *s = nullptr;
    return cuGetErrorName(rc, &s) == 0 ? s : nullptr;
  }
  const char *errorString(CUresult rc) const {
    const char *s = nullptr;
    return cuGetErrorString(rc, &s) == 0 ? s : nullptr;
  }
};

/// The loaded driver (once per process) and its device count.
struct CudaProbe {
  Status status;
  CudaApi api;
  int deviceCount = 0;
  int driverVersion = 0; ///< 12040 for 12.4; 0 if unknown
};

Status loadCuda(CudaProbe &probe) {
  const char *kind = "cuda";
  void *handle;
  if (Status s =
          openVendorLibrary(kind, {"libcuda.so.1", "libcuda.so"}, handle);
      !s.ok())
    return s;
  CudaApi &api = probe.api;
  FA_CUDA_REQUIRED(FA_RESOLVE_REQUIRED)
  FA_CUDA_OPTIONAL(FA_RESOLVE_OPTIONAL)
  if (CUresult rc = api.cuInit(0))
    return vendorCallError(ErrorCode::Unavailable, kind,
                           "device 'cuda' unavailable", "cuInit", rc,
                           api.errorName(rc), api.errorString(rc));
  if (CUresult rc = api.cuDeviceGetCount(&probe.deviceCount))
    return vendorCallError(ErrorCode::Unavailable, kind,
                           "device 'cuda' unavailable", "cuDeviceGetCount", rc,
                           api.errorName(rc), api.errorString(rc));
  if (api.cuDriverGetVersion)
    (void)api.cuDriverGetVersion(&probe.driverVersion);
  return Status::success();
}

const CudaProbe &probeCuda() {
  static CudaProbe probe;
  static std::once_flag once;
  std::call_once(once, [] { probe.status = loadCuda(probe); });
  return probe;
}

class CudaBackend;

/// A module loaded into the backend's context, with one function per
/// manifest kernel. Unloaded on destruction (also when half built).
class CudaCode : public LoadedCode {
public:
  CudaCode(std::shared_ptr<CudaBackend> backend, CUmodule module)
      : backend(std::move(backend)), module(module) {}
  ~CudaCode() override;

  Status launch(size_t index, const LaunchGeometry &geometry,
                const uint64_t *words, const LaunchOptions &options) override;
  Status launchRaw(size_t index, const LaunchGeometry &geometry,
                   const uint64_t *params, size_t count) override;

  struct Function {
    KernelInfo info;
    CUfunction function = nullptr;
    int registers = 0;
    int staticShared = 0;
    int localBytes = 0;
    int maxThreads = 0; ///< the function's limit given its registers
  };
  std::vector<Function> functions;

private:
  /// Checks the geometry, launches with cuLaunchKernel's `params` and waits.
  Status launchParams(size_t index, const LaunchGeometry &geometry,
                      void **params);

  std::shared_ptr<CudaBackend> backend;
  CUmodule module;
};

class CudaBackend : public Backend,
                    public std::enable_shared_from_this<CudaBackend> {
public:
  CudaBackend(const CudaProbe &probe, int ordinal)
      : api(probe.api), driverVersion(probe.driverVersion), ordinal(ordinal),
        name_("cuda:" + std::to_string(ordinal)) {}
  ~CudaBackend() override {
    if (context)
      (void)api.cuDevicePrimaryCtxRelease_v2(device);
  }

  /// Retains the primary context and reads the device's properties.
  Status init();

  const std::string &name() const override { return name_; }
  const std::vector<std::string> &targets() const override { return targets_; }
  const DeviceLimits &limits() const override { return limits_; }
  bool isHostEmulator() const override { return false; }
  std::string description() const override {
    return name_ + " (" + deviceName + ", " + targets_.front() + ")";
  }
  std::optional<std::string>
  targetProblem(const std::string &target,
                const std::string &format) const override {
    std::string why = cudaTargetProblem(target, format, ccMajor, ccMinor);
    if (why.empty())
      return std::nullopt;
    return why;
  }

  Expected<uint64_t> allocate(size_t bytes) override;
  void release(uint64_t addr) override;
  Status copyToDevice(uint64_t dst, const void *src, size_t bytes) override;
  Status copyToHost(void *dst, uint64_t src, size_t bytes) override;
  Status synchronize() override;
  Expected<std::unique_ptr<LoadedCode>>
  loadCode(const Manifest &manifest, const std::vector<uint8_t> &bytes,
           const std::string &displayName) override {
    return load(manifest, bytes, displayName, /*faKernels=*/true);
  }
  /// Loads `bytes`; with `faKernels`, refuses a manifest that disagrees
  /// with the functions' own attributes (the kernels fac compiles).
  Expected<std::unique_ptr<LoadedCode>> load(const Manifest &manifest,
                                             const std::vector<uint8_t> &bytes,
                                             const std::string &displayName,
                                             bool faKernels);
  Expected<std::unique_ptr<LoadedCode>>
  loadRawCode(const std::vector<uint8_t> &bytes, const std::string &format,
              const std::string &symbol, int64_t threads) override {
    // The manifest load checks against, describing the one kernel (its
    // shared memory is the run-time compiler's business).
    Manifest m;
    m.target = targets_.front();
    m.codeObjectFormat = format;
    KernelInfo k;
    k.name = k.symbol = symbol;
    k.threads = threads;
    k.waveSize = 32;
    m.kernels.push_back(k);
    return load(m, bytes, "<run-time compiled " + symbol + ">",
                /*faKernels=*/false);
  }

  /// A failed call `call` with result `rc`, while doing `what`.
  Status fail(ErrorCode code, const std::string &what, const char *call,
              CUresult rc, const std::string &hint = {}) const {
    if (rc == CUDA_ERROR_OUT_OF_MEMORY)
      code = ErrorCode::OutOfMemory;
    return vendorCallError(code, name_, what, call, rc, api.errorName(rc),
                           api.errorString(rc), hint);
  }

  /// Makes the primary context current on the calling thread: callers may
  /// use a device from any thread.
  Status makeCurrent() const {
    if (CUresult rc = api.cuCtxSetCurrent(context))
      return fail(ErrorCode::Unavailable, "cannot use device '" + name_ + "'",
                  "cuCtxSetCurrent", rc);
    return Status::success();
  }

  const CudaApi &api;
  int driverVersion;
  int ordinal;
  CUdevice device = 0;
  CUcontext context = nullptr;
  std::string name_;
  std::string deviceName;
  std::vector<std::string> targets_;
  DeviceLimits limits_;
  int ccMajor = 0, ccMinor = 0;
  int maxBlockDimX = 0;
  int sharedPerBlock = 0; ///< without opt-in (48 KiB)
  int sharedOptin = 0;    ///< with MAX_DYNAMIC_SHARED_SIZE_BYTES raised
};

} // namespace

Status CudaBackend::init() {
  std::string what = "cannot open device '" + name_ + "'";
  if (CUresult rc = api.cuDeviceGet(&device, ordinal))
    return fail(ErrorCode::Unavailable, what, "cuDeviceGet", rc);
  char buf[256] = {};
  if (CUresult rc = api.cuDeviceGetName(buf, sizeof(buf) - 1, device))
    return fail(ErrorCode::Unavailable, what, "cuDeviceGetName", rc);
  deviceName = buf;

  struct {
    int attribute;
    int *out;
    const char *name;
  } attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &ccMajor,
       "COMPUTE_CAPABILITY_MAJOR"},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &ccMinor,
       "COMPUTE_CAPABILITY_MINOR"},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &maxBlockDimX, "MAX_BLOCK_DIM_X"},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &sharedPerBlock,
       "MAX_SHARED_MEMORY_PER_BLOCK"},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &sharedOptin,
       "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"},
  };
  for (const auto &a : attributes)
    if (CUresult rc = api.cuDeviceGetAttribute(a.out, a.attribute, device))
      return fail(ErrorCode::Unavailable,
                  what + ": cannot read CU_DEVICE_ATTRIBUTE_" + a.name,
                  "cuDeviceGetAttribute", rc);
  int maxThreads = 0, grid[3] = {0, 0, 0};
  if (CUresult rc = api.cuDeviceGetAttribute(
          &maxThreads, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, device))
    return fail(ErrorCode::Unavailable,
                what +
                    ": cannot read CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK",
                "cuDeviceGetAttribute", rc);
  for (int i = 0; i < 3; ++i)
    if (CUresult rc = api.cuDeviceGetAttribute(
            &grid[i], CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + i, device))
      return fail(ErrorCode::Unavailable,
                  what + ": cannot read CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_" +
                      "XYZ"[i],
                  "cuDeviceGetAttribute", rc);
  if (sharedOptin < sharedPerBlock)
    sharedOptin = sharedPerBlock; // devices before Volta have no opt-in
  limits_.maxThreadsPerWorkgroup = uint32_t(std::min(maxThreads, maxBlockDimX));
  limits_.maxLdsBytes = uint64_t(sharedOptin);
  for (int i = 0; i < 3; ++i)
    limits_.maxGrid[i] = uint32_t(grid[i]);
  targets_ = {"sm_" + std::to_string(ccMajor) + std::to_string(ccMinor)};

  if (CUresult rc = api.cuDevicePrimaryCtxRetain(&context, device)) {
    context = nullptr;
    return fail(ErrorCode::Unavailable, what, "cuDevicePrimaryCtxRetain", rc);
  }
  return makeCurrent();
}

Expected<uint64_t> CudaBackend::allocate(size_t bytes) {
  if (Status s = makeCurrent(); !s.ok())
    return s;
  CUdeviceptr ptr = 0;
  std::string what = "cannot allocate " + std::to_string(bytes) +
                     " bytes on device '" + name_ + "'";
  if (CUresult rc = api.cuMemAlloc_v2(&ptr, bytes))
    return fail(ErrorCode::OutOfMemory, what, "cuMemAlloc_v2", rc);
  if (CUresult rc = api.cuMemsetD8_v2(ptr, 0, bytes)) {
    (void)api.cuMemFree_v2(ptr);
    return fail(ErrorCode::LaunchFailed, what + " (zero-filling it failed)",
                "cuMemsetD8_v2", rc);
  }
  return uint64_t(ptr);
}

void CudaBackend::release(uint64_t addr) {
  if (makeCurrent().ok())
    (void)api.cuMemFree_v2(CUdeviceptr(addr));
}

Status CudaBackend::copyToDevice(uint64_t dst, const void *src, size_t bytes) {
  if (Status s = makeCurrent(); !s.ok())
    return s;
  if (CUresult rc = api.cuMemcpyHtoD_v2(CUdeviceptr(dst), src, bytes))
    return fail(ErrorCode::LaunchFailed,
                "cannot copy " + std::to_string(bytes) + " bytes to device '" +
                    name_ + "'",
                "cuMemcpyHtoD_v2", rc);
  return Status::success();
}

Status CudaBackend::copyToHost(void *dst, uint64_t src, size_t bytes) {
  if (Status s = makeCurrent(); !s.ok())
    return s;
  if (CUresult rc = api.cuMemcpyDtoH_v2(dst, CUdeviceptr(src), bytes))
    return fail(ErrorCode::LaunchFailed,
                "cannot copy " + std::to_string(bytes) +
                    " bytes from device '" + name_ + "'",
                "cuMemcpyDtoH_v2", rc);
  return Status::success();
}

Status CudaBackend::synchronize() {
  if (Status s = makeCurrent(); !s.ok())
    return s;
  if (CUresult rc = api.cuCtxSynchronize())
    return fail(ErrorCode::LaunchFailed,
                "device '" + name_ + "' failed while running earlier work",
                "cuCtxSynchronize", rc);
  return Status::success();
}

/// CorruptCodeObject unless `bytes` look like PTX text: no NUL before the
/// end (a trailing one is allowed) and a `.target` directive.
static Status checkPtxText(const std::vector<uint8_t> &bytes) {
  size_t n = bytes.size();
  while (n > 0 && bytes[n - 1] == 0)
    --n;
  for (size_t i = 0; i < n; ++i)
    if (bytes[i] == 0)
      return Status::error(ErrorCode::CorruptCodeObject,
                           "code object is not PTX text: NUL byte at offset " +
                               std::to_string(i) + " of " +
                               std::to_string(bytes.size()));
  std::string_view text(reinterpret_cast<const char *>(bytes.data()), n);
  if (text.find(".target") == std::string_view::npos)
    return Status::error(ErrorCode::CorruptCodeObject,
                         "code object is not PTX: no '.target' directive in " +
                             std::to_string(bytes.size()) + " bytes");
  return Status::success();
}

Expected<std::unique_ptr<LoadedCode>>
CudaBackend::load(const Manifest &manifest, const std::vector<uint8_t> &bytes,
                  const std::string &displayName, bool faKernels) {
  const std::string &format = manifest.codeObjectFormat;
  if (format != "ptx" && format != "cubin")
    return Status::error(ErrorCode::Unsupported,
                         "a cuda device loads 'ptx' or 'cubin' code objects, "
                         "the manifest says '" +
                             format + "'");
  if (std::optional<std::string> why = targetProblem(manifest.target, format))
    return Status::error(ErrorCode::Unsupported,
                         "code object is for target '" + manifest.target +
                             "' but device '" + name_ + "' is " + deviceName +
                             ", " + targets_.front() + ": " + *why);
  for (const KernelInfo &k : manifest.kernels)
    if (k.waveSize != 32)
      return Status::error(ErrorCode::Unsupported,
                           "kernel '" + k.name + "' was compiled for wave " +
                               std::to_string(k.waveSize) + ", device '" +
                               name_ + "' (" + deviceName +
                               ") runs warps of 32")
          .withKernel(k.name);
  // The image: PTX must end in a NUL (the driver reads a C string), a cubin
  // is an ELF file for EM_CUDA.
  std::vector<uint8_t> ptx;
  const void *image = bytes.data();
  if (format == "ptx") {
    if (Status s = checkPtxText(bytes); !s.ok())
      return s;
    if (bytes.empty() || bytes.back() != 0) {
      ptx.reserve(bytes.size() + 1);
      ptx.assign(bytes.begin(), bytes.end());
      ptx.push_back(0);
      image = ptx.data();
    }
  } else if (Status s = checkGpuElf(bytes, /*EM_CUDA=*/190, "cubin"); !s.ok()) {
    return s;
  }

  if (Status s = makeCurrent(); !s.ok())
    return s;
  std::vector<char> errorLog(16384, 0), infoLog(16384, 0);
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                   CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {
      errorLog.data(), reinterpret_cast<void *>(uintptr_t(errorLog.size() - 1)),
      infoLog.data(), reinterpret_cast<void *>(uintptr_t(infoLog.size() - 1))};
  CUmodule module = nullptr;
  if (CUresult rc =
          api.cuModuleLoadDataEx(&module, image, 4, options, values)) {
    std::string hint;
    if (rc == CUDA_ERROR_NO_BINARY_FOR_GPU || rc == CUDA_ERROR_INVALID_IMAGE ||
        rc == CUDA_ERROR_INVALID_PTX)
      hint = "mismatched target chip? the manifest says " + manifest.target +
             ", the device is " + targets_.front();
    else if (rc == CUDA_ERROR_UNSUPPORTED_PTX_VERSION)
      hint = "the PTX ISA version is newer than this driver" +
             (driverVersion
                  ? " (CUDA " + std::to_string(driverVersion / 1000) + "." +
                        std::to_string(driverVersion % 1000 / 10) + ")"
                  : std::string()) +
             " supports: update the driver or compile for an older PTX ISA";
    std::string log;
    errorLog.back() = infoLog.back() = 0;
    if (errorLog[0])
      log += std::string("JIT error log:\n") + errorLog.data();
    if (infoLog[0])
      log += std::string(log.empty() ? "" : "\n") + "JIT info log:\n" +
             infoLog.data();
    return fail(ErrorCode::LoadFailed,
                "cannot load code object '" + displayName + "' (" + format +
                    ")",
                "cuModuleLoadDataEx", rc, hint)
        .withLog(log);
  }
  // From here `code` owns the module: a failure below unloads it.
  auto code = std::make_unique<CudaCode>(shared_from_this(), module);

  for (const KernelInfo &k : manifest.kernels) {
    CudaCode::Function f;
    f.info = k;
    if (CUresult rc =
            api.cuModuleGetFunction(&f.function, module, k.symbol.c_str())) {
      std::string hint = rc == CUDA_ERROR_NOT_FOUND
                             ? "the manifest does not describe this code "
                               "object's kernels?"
                             : "";
      return fail(rc == CUDA_ERROR_NOT_FOUND ? ErrorCode::NotFound
                                             : ErrorCode::LoadFailed,
                  "kernel '" + k.name + "': symbol '" + k.symbol +
                      "' not loaded",
                  "cuModuleGetFunction", rc, hint)
          .withKernel(k.name);
    }
    struct {
      int attribute;
      int *out;
      const char *name;
    } attributes[] = {
        {CU_FUNC_ATTRIBUTE_NUM_REGS, &f.registers, "NUM_REGS"},
        {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &f.staticShared,
         "SHARED_SIZE_BYTES"},
        {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &f.localBytes, "LOCAL_SIZE_BYTES"},
        {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &f.maxThreads,
         "MAX_THREADS_PER_BLOCK"},
    };
    for (const auto &a : attributes)
      if (CUresult rc = api.cuFuncGetAttribute(a.out, a.attribute, f.function))
        return fail(ErrorCode::LoadFailed,
                    "kernel '" + k.name + "': cannot read CU_FUNC_ATTRIBUTE_" +
                        a.name,
                    "cuFuncGetAttribute", rc)
            .withKernel(k.name);
    // The manifest must describe this function: it sizes nothing the
    // function allocates itself, but the limits below are checked with it.
    if (faKernels && int64_t(f.staticShared) > k.ldsBytes)
      return Status::error(
                 ErrorCode::ManifestError,
                 "kernel '" + k.name + "': the manifest says lds_bytes " +
                     std::to_string(k.ldsBytes) +
                     ", the function's static shared memory "
                     "(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES) is " +
                     std::to_string(f.staticShared) +
                     " (the manifest does not describe this code object)")
          .withKernel(k.name);
    // The function's own figures are the truth; the manifest's lds_bytes
    // may round differently.
    uint64_t staticShared =
        std::max<uint64_t>(uint64_t(f.staticShared), uint64_t(k.ldsBytes));
    if (Status s = checkKernelFits(
            k, name_, staticShared, uint64_t(f.maxThreads),
            uint64_t(sharedOptin),
            "the function uses " + std::to_string(f.registers) +
                " registers per thread; cuFuncGetAttribute("
                "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)",
            "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN of " + deviceName);
        !s.ok())
      return s;
    if (k.dynamicLdsBytes > 0)
      if (CUresult rc = api.cuFuncSetAttribute(
              f.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
              int(k.dynamicLdsBytes)))
        return fail(ErrorCode::LoadFailed,
                    "kernel '" + k.name + "': cannot allow " +
                        std::to_string(k.dynamicLdsBytes) +
                        " bytes of dynamic shared memory (" +
                        std::to_string(f.staticShared) + " static, limit " +
                        std::to_string(sharedOptin) + ")",
                    "cuFuncSetAttribute", rc)
            .withKernel(k.name);
    code->functions.push_back(std::move(f));
  }
  return std::unique_ptr<LoadedCode>(std::move(code));
}

CudaCode::~CudaCode() {
  if (module && backend->makeCurrent().ok())
    (void)backend->api.cuModuleUnload(module);
}

Status CudaCode::launch(size_t index, const LaunchGeometry &g,
                        const uint64_t *words, const LaunchOptions &) {
  void *params[kMaxKernelParams];
  size_t count = packKernelParams(words, params);
  (void)count; // the kernel's parameter list is fixed by the ABI
  return launchParams(index, g, params);
}

Status CudaCode::launchRaw(size_t index, const LaunchGeometry &g,
                           const uint64_t *args, size_t count) {
  // One pointer per 8-byte parameter, as cuLaunchKernel reads them.
  std::vector<void *> params(count);
  for (size_t i = 0; i < count; ++i)
    params[i] = const_cast<uint64_t *>(args + i);
  return launchParams(index, g, params.data());
}

Status CudaCode::launchParams(size_t index, const LaunchGeometry &g,
                              void **params) {
  const Function &f = functions[index];
  const DeviceLimits &limits = backend->limits();
  const std::string &device = backend->name();
  auto geometry = [&] {
    return "grid (" + std::to_string(g.grid[0]) + ", " +
           std::to_string(g.grid[1]) + ", " + std::to_string(g.grid[2]) +
           "), block (" + std::to_string(g.block[0]) + ", " +
           std::to_string(g.block[1]) + ", " + std::to_string(g.block[2]) +
           "), " + std::to_string(f.info.dynamicLdsBytes) +
           " bytes of dynamic shared memory";
  };
  // The driver's own checks give one error name for many causes; these say
  // which number is wrong.
  uint64_t threads = uint64_t(g.block[0]) * g.block[1] * g.block[2];
  uint64_t maxThreads =
      std::min<uint64_t>(limits.maxThreadsPerWorkgroup, uint64_t(f.maxThreads));
  if (threads > maxThreads)
    return Status::error(
        ErrorCode::InvalidArgument,
        "launch of " + geometry() + " has " + std::to_string(threads) +
            " threads per block, kernel '" + f.info.name + "' on device '" +
            device + "' allows " + std::to_string(maxThreads));
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
  const CudaApi &api = backend->api;
  if (CUresult rc = api.cuLaunchKernel(
          f.function, g.grid[0], g.grid[1], g.grid[2], g.block[0], g.block[1],
          g.block[2], unsigned(f.info.dynamicLdsBytes), /*stream=*/nullptr,
          params, /*extra=*/nullptr))
    return backend->fail(
        ErrorCode::LaunchFailed,
        "cannot launch kernel '" + f.info.name + "' with " + geometry(),
        "cuLaunchKernel", rc,
        rc == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
            ? "the kernel uses " + std::to_string(f.registers) +
                  " registers per thread"
            : "");
  if (CUresult rc = api.cuCtxSynchronize())
    return backend->fail(ErrorCode::LaunchFailed,
                         "kernel '" + f.info.name + "' failed while running (" +
                             geometry() + ")",
                         "cuCtxSynchronize", rc,
                         "errors like this one are sticky: the device's "
                         "context is unusable for the rest of the process");
  return Status::success();
}

Expected<std::shared_ptr<Backend>> fa::detail::openCudaBackend(int ordinal) {
  return openBackendOnce<CudaBackend>(probeCuda(), ordinal, "cuda", "NVIDIA");
}
