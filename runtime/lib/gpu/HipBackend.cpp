//===- HipBackend.cpp - AMD GPUs through the HIP runtime ------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the `hip[:N]` device over the HIP runtime, loaded
// with dlopen (libamdhip64.so, .so.6, .so.5) through the symbol table below;
// no HIP header is needed to build it. Types and enum values are declared
// here from ROCm's hip_runtime_api.h (5.2; ROCm 6 keeps these values: it
// reserves the slots of removed attributes rather than renumbering).
//
//   Device:  hipInit, hipSetDevice before every call (a device may be used
//            from any thread), hipDeviceGetName, limits through
//            hipDeviceGetAttribute, each checked for plausibility (a wrong
//            value would mean a runtime whose enum differs).
//   Arch:    the gcnArchName ("gfx906:sramecc+:xnack-") exists only in
//            hipDeviceProp_t, whose layout changed between ROCm 5 and 6
//            (hipGetDevicePropertiesR0600). The struct is filled into an
//            oversized zeroed buffer and the name is found by its spelling
//            (findGcnArchName, Vendor.h), so no offset is assumed.
//   Memory:  hipMalloc (then zeroed), hipFree, hipMemcpyHtoD / hipMemcpyDtoH.
//   Loading: the manifest checked against the hsaco's AMDGPU metadata
//            (AmdgpuMetadata.h: LDS size, wave size, kernarg layout,
//            workgroup limit), hipModuleLoadData (an ELF file for EM_AMDGPU),
//            hipModuleGetFunction per kernel, hipFuncGetAttribute (optional)
//            for registers and static LDS.
//   Launch:  hipModuleLaunchKernel with the 44 ABI words as the packed
//            kernarg buffer (HIP_LAUNCH_PARAM_BUFFER_POINTER): every
//            parameter is 8 bytes with 8-byte alignment, so the kernarg
//            layout of the explicit arguments is the word array itself.
//            Then hipDeviceSynchronize.
//
// The code object's target must be the device's processor; gfx906 code on a
// gfx908 is refused before the loader sees it, naming both.
//
//===----------------------------------------------------------------------===//

#include "gpu/AmdgpuMetadata.h"
#include "core/Backend.h"
#include "gpu/Vendor.h"

#include <cstring>

#include <algorithm>
#include <map>
#include <mutex>

using namespace fa;
using namespace fa::detail;

namespace {

using hipError_t = int;
using hipModule_t = struct ihipModule_t *;
using hipFunction_t = struct ihipModuleSymbol_t *;
using hipStream_t = struct ihipStream_t *;

// hipDeviceAttribute_t.
constexpr int hipDeviceAttributeMaxBlockDimX = 26;
constexpr int hipDeviceAttributeMaxGridDimX = 29; // Y = 30, Z = 31
constexpr int hipDeviceAttributeMaxThreadsPerBlock = 56;
constexpr int hipDeviceAttributeMaxSharedMemoryPerBlock = 74;
constexpr int hipDeviceAttributeWarpSize = 87;
// hipFunction_attribute (as CUDA's).
constexpr int HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK = 0;
constexpr int HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES = 1;
constexpr int HIP_FUNC_ATTRIBUTE_NUM_REGS = 4;
// hipModuleLaunchKernel's `extra` keys.
void *const HIP_LAUNCH_PARAM_BUFFER_POINTER = reinterpret_cast<void *>(1);
void *const HIP_LAUNCH_PARAM_BUFFER_SIZE = reinterpret_cast<void *>(2);
void *const HIP_LAUNCH_PARAM_END = reinterpret_cast<void *>(3);
// hipError_t values the messages explain.
constexpr hipError_t hipErrorOutOfMemory = 2;
constexpr hipError_t hipErrorInvalidImage = 200;
constexpr hipError_t hipErrorNoBinaryForGpu = 209;
constexpr hipError_t hipErrorInvalidKernelFile = 218;
constexpr hipError_t hipErrorSharedObjectInitFailed = 303;
constexpr hipError_t hipErrorNotFound = 500;

/// Larger than any hipDeviceProp_t (792 bytes in ROCm 5.2, about 1.5 KiB in
/// ROCm 6), so either layout fits.
constexpr size_t kDevicePropBytes = 16384;

#define FA_HIP_REQUIRED(X)                                                     \
  X(hipInit, hipError_t, (unsigned))                                           \
  X(hipGetDeviceCount, hipError_t, (int *))                                    \
  X(hipGetErrorName, const char *, (hipError_t))                               \
  X(hipGetErrorString, const char *, (hipError_t))                             \
  X(hipSetDevice, hipError_t, (int))                                           \
  X(hipDeviceGet, hipError_t, (int *, int))                                    \
  X(hipDeviceGetName, hipError_t, (char *, int, int))                          \
  X(hipDeviceGetAttribute, hipError_t, (int *, int, int))                      \
  X(hipDeviceSynchronize, hipError_t, ())                                      \
  X(hipMalloc, hipError_t, (void **, size_t))                                  \
  X(hipFree, hipError_t, (void *))                                             \
  X(hipMemset, hipError_t, (void *, int, size_t))                              \
  X(hipMemcpyHtoD, hipError_t, (void *, void *, size_t))                       \
  X(hipMemcpyDtoH, hipError_t, (void *, void *, size_t))                       \
  X(hipModuleLoadData, hipError_t, (hipModule_t *, const void *))              \
  X(hipModuleUnload, hipError_t, (hipModule_t))                                \
  X(hipModuleGetFunction, hipError_t,                                          \
    (hipFunction_t *, hipModule_t, const char *))                              \
  X(hipModuleLaunchKernel, hipError_t,                                         \
    (hipFunction_t, unsigned, unsigned, unsigned, unsigned, unsigned,          \
     unsigned, unsigned, hipStream_t, void **, void **))

// Optional: ROCm 6 names the properties call by its struct revision; 5.x
// has only the plain name (6.x keeps it for old binaries).
#define FA_HIP_OPTIONAL(X)                                                     \
  X(hipGetDevicePropertiesR0600, hipError_t, (void *, int))                    \
  X(hipGetDeviceProperties, hipError_t, (void *, int))                         \
  X(hipFuncGetAttribute, hipError_t, (int *, int, hipFunction_t))

struct HipApi {
  FA_HIP_REQUIRED(FA_DECLARE_SYMBOL)
  FA_HIP_OPTIONAL(FA_DECLARE_SYMBOL)
};

struct HipProbe {
  Status status;
  HipApi api;
  int deviceCount = 0;
};

Status loadHip(HipProbe &probe) {
  const char *kind = "hip";
  void *handle;
  if (Status s = openVendorLibrary(
          kind, {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"},
          handle);
      !s.ok())
    return s;
  HipApi &api = probe.api;
  FA_HIP_REQUIRED(FA_RESOLVE_REQUIRED)
  FA_HIP_OPTIONAL(FA_RESOLVE_OPTIONAL)
  if (!api.hipGetDevicePropertiesR0600 && !api.hipGetDeviceProperties)
    return missingVendorSymbol(kind, "hipGetDeviceProperties");
  if (hipError_t rc = api.hipInit(0))
    return vendorCallError(ErrorCode::Unavailable, kind,
                           "device 'hip' unavailable", "hipInit", rc,
                           api.hipGetErrorName(rc), api.hipGetErrorString(rc));
  if (hipError_t rc = api.hipGetDeviceCount(&probe.deviceCount))
    return vendorCallError(ErrorCode::Unavailable, kind,
                           "device 'hip' unavailable", "hipGetDeviceCount", rc,
                           api.hipGetErrorName(rc), api.hipGetErrorString(rc));
  return Status::success();
}

const HipProbe &probeHip() {
  static HipProbe probe;
  static std::once_flag once;
  std::call_once(once, [] { probe.status = loadHip(probe); });
  return probe;
}

class HipBackend;

class HipCode : public LoadedCode {
public:
  HipCode(std::shared_ptr<HipBackend> backend, hipModule_t module)
      : backend(std::move(backend)), module(module) {}
  ~HipCode() override;

  Status launch(size_t index, const LaunchGeometry &geometry,
                const uint64_t *words, const LaunchOptions &options) override;
  Status launchRaw(size_t index, const LaunchGeometry &geometry,
                   const uint64_t *params, size_t count) override;
  /// Checks the geometry and launches with `kernargs` as the kernarg
  /// segment's explicit arguments.
  Status launchBytes(size_t index, const LaunchGeometry &geometry,
                     std::vector<uint8_t> &kernargs);

  struct Function {
    KernelInfo info;
    hipFunction_t function = nullptr;
    int registers = -1;    ///< -1: hipFuncGetAttribute unavailable
    int staticShared = -1; ///< group segment size
    int maxThreads = -1;
  };
  std::vector<Function> functions;

private:
  std::shared_ptr<HipBackend> backend;
  hipModule_t module;
};

class HipBackend : public Backend,
                   public std::enable_shared_from_this<HipBackend> {
public:
  HipBackend(const HipProbe &probe, int ordinal)
      : api(probe.api), ordinal(ordinal),
        name_("hip:" + std::to_string(ordinal)) {}

  Status init();

  const std::string &name() const override { return name_; }
  const std::vector<std::string> &targets() const override { return targets_; }
  const DeviceLimits &limits() const override { return limits_; }
  bool isHostEmulator() const override { return false; }
  std::string description() const override {
    return name_ + " (" + deviceName + ", " + gcnArchName + ")";
  }
  std::optional<std::string>
  targetProblem(const std::string &target,
                const std::string & /*format*/) const override {
    std::string why = hipTargetProblem(target, gcnArchName);
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
  Expected<std::unique_ptr<LoadedCode>>
  loadRawCode(const std::vector<uint8_t> &bytes, const std::string &format,
              const std::string &symbol, int64_t threads) override {
    // The manifest load checks against, describing the one kernel; its
    // LDS size and parameters are the run-time compiler's, not fa's ABI.
    Manifest m;
    m.target = gcnArchBase(gcnArchName);
    m.codeObjectFormat = format;
    KernelInfo k;
    k.name = k.symbol = symbol;
    k.threads = threads;
    k.waveSize = warpSize;
    m.kernels.push_back(k);
    return load(m, bytes, "<run-time compiled " + symbol + ">",
                /*faKernels=*/false);
  }
  /// Loads `bytes`; with `faKernels`, after checking the manifest against
  /// the code object's AMDGPU metadata (the kernels fac compiles).
  Expected<std::unique_ptr<LoadedCode>> load(const Manifest &manifest,
                                             const std::vector<uint8_t> &bytes,
                                             const std::string &displayName,
                                             bool faKernels);

  Status fail(ErrorCode code, const std::string &what, const char *call,
              hipError_t rc, const std::string &hint = {}) const {
    if (rc == hipErrorOutOfMemory)
      code = ErrorCode::OutOfMemory;
    return vendorCallError(code, name_, what, call, rc, api.hipGetErrorName(rc),
                           api.hipGetErrorString(rc), hint);
  }

  /// Selects this device on the calling thread.
  Status makeCurrent() const {
    if (hipError_t rc = api.hipSetDevice(ordinal))
      return fail(ErrorCode::Unavailable, "cannot use device '" + name_ + "'",
                  "hipSetDevice", rc);
    return Status::success();
  }

  const HipApi &api;
  int ordinal;
  std::string name_;
  std::string deviceName;
  std::string gcnArchName; ///< with features: "gfx906:sramecc+:xnack-"
  std::vector<std::string> targets_;
  DeviceLimits limits_;
  int warpSize = 0;
};

} // namespace

Status HipBackend::init() {
  std::string what = "cannot open device '" + name_ + "'";
  if (Status s = makeCurrent(); !s.ok())
    return s;
  int device = 0;
  if (hipError_t rc = api.hipDeviceGet(&device, ordinal))
    return fail(ErrorCode::Unavailable, what, "hipDeviceGet", rc);
  char buf[256] = {};
  if (hipError_t rc = api.hipDeviceGetName(buf, sizeof(buf) - 1, device))
    return fail(ErrorCode::Unavailable, what, "hipDeviceGetName", rc);
  deviceName = buf;

  // Attributes, each with the range a real AMD GPU reports: outside it the
  // runtime's enum is not the one this file was written against.
  int maxThreads = 0, blockX = 0, lds = 0, grid[3] = {0, 0, 0};
  struct {
    int attribute;
    int *out;
    const char *name;
    int lo, hi;
  } attributes[] = {
      {hipDeviceAttributeMaxThreadsPerBlock, &maxThreads,
       "hipDeviceAttributeMaxThreadsPerBlock", 64, 4096},
      {hipDeviceAttributeMaxBlockDimX, &blockX,
       "hipDeviceAttributeMaxBlockDimX", 64, 4096},
      {hipDeviceAttributeMaxSharedMemoryPerBlock, &lds,
       "hipDeviceAttributeMaxSharedMemoryPerBlock", 16384, 1 << 20},
      {hipDeviceAttributeWarpSize, &warpSize, "hipDeviceAttributeWarpSize", 32,
       64},
      {hipDeviceAttributeMaxGridDimX, &grid[0], "hipDeviceAttributeMaxGridDimX",
       1, INT32_MAX},
      {hipDeviceAttributeMaxGridDimX + 1, &grid[1],
       "hipDeviceAttributeMaxGridDimY", 1, INT32_MAX},
      {hipDeviceAttributeMaxGridDimX + 2, &grid[2],
       "hipDeviceAttributeMaxGridDimZ", 1, INT32_MAX},
  };
  for (const auto &a : attributes) {
    if (hipError_t rc = api.hipDeviceGetAttribute(a.out, a.attribute, device))
      return fail(ErrorCode::Unavailable,
                  what + ": cannot read " + a.name + " (" +
                      std::to_string(a.attribute) + ")",
                  "hipDeviceGetAttribute", rc);
    if (*a.out < a.lo || *a.out > a.hi)
      return Status::error(
                 ErrorCode::Unavailable,
                 what + ": " + a.name + " (" + std::to_string(a.attribute) +
                     ") is " + std::to_string(*a.out) + ", outside [" +
                     std::to_string(a.lo) + ", " + std::to_string(a.hi) +
                     "] (a HIP runtime whose attribute numbering "
                     "differs from ROCm 5/6?)")
          .withCall("hipDeviceGetAttribute", "")
          .withDevice(name_);
  }
  limits_.maxThreadsPerWorkgroup = uint32_t(std::min(maxThreads, blockX));
  limits_.maxLdsBytes = uint64_t(lds);
  for (int i = 0; i < 3; ++i)
    limits_.maxGrid[i] = uint32_t(grid[i]);

  // The gcnArchName, read without assuming the struct's layout.
  std::vector<char> props(kDevicePropBytes, 0);
  const char *call = api.hipGetDevicePropertiesR0600
                         ? "hipGetDevicePropertiesR0600"
                         : "hipGetDeviceProperties";
  hipError_t rc = api.hipGetDevicePropertiesR0600
                      ? api.hipGetDevicePropertiesR0600(props.data(), device)
                      : api.hipGetDeviceProperties(props.data(), device);
  if (rc)
    return fail(ErrorCode::Unavailable, what, call, rc);
  gcnArchName = findGcnArchName(props.data(), props.size());
  if (gcnArchName.empty())
    return Status::error(ErrorCode::Unavailable,
                         what + ": " + call +
                             " reported no gcnArchName (no \"gfx...\" string "
                             "in the device properties of " +
                             deviceName + ")")
        .withCall(call, "")
        .withDevice(name_);
  targets_ = {gcnArchBase(gcnArchName)};
  return Status::success();
}

Expected<uint64_t> HipBackend::allocate(size_t bytes) {
  if (Status s = makeCurrent(); !s.ok())
    return s;
  void *ptr = nullptr;
  std::string what = "cannot allocate " + std::to_string(bytes) +
                     " bytes on device '" + name_ + "'";
  if (hipError_t rc = api.hipMalloc(&ptr, bytes))
    return fail(ErrorCode::OutOfMemory, what, "hipMalloc", rc);
  if (hipError_t rc = api.hipMemset(ptr, 0, bytes)) {
    (void)api.hipFree(ptr);
    return fail(ErrorCode::LaunchFailed, what + " (zero-filling it failed)",
                "hipMemset", rc);
  }
  return uint64_t(reinterpret_cast<uintptr_t>(ptr));
}

void HipBackend::release(uint64_t addr) {
  if (makeCurrent().ok())
    (void)api.hipFree(reinterpret_cast<void *>(uintptr_t(addr)));
}

Status HipBackend::copyToDevice(uint64_t dst, const void *src, size_t bytes) {
  if (Status s = makeCurrent(); !s.ok())
    return s;
  if (hipError_t rc =
          api.hipMemcpyHtoD(reinterpret_cast<void *>(uintptr_t(dst)),
                            const_cast<void *>(src), bytes))
    return fail(ErrorCode::LaunchFailed,
                "cannot copy " + std::to_string(bytes) + " bytes to device '" +
                    name_ + "'",
                "hipMemcpyHtoD", rc);
  return Status::success();
}

Status HipBackend::copyToHost(void *dst, uint64_t src, size_t bytes) {
  if (Status s = makeCurrent(); !s.ok())
    return s;
  if (hipError_t rc = api.hipMemcpyDtoH(
          dst, reinterpret_cast<void *>(uintptr_t(src)), bytes))
    return fail(ErrorCode::LaunchFailed,
                "cannot copy " + std::to_string(bytes) +
                    " bytes from device '" + name_ + "'",
                "hipMemcpyDtoH", rc);
  return Status::success();
}

Status HipBackend::synchronize() {
  if (Status s = makeCurrent(); !s.ok())
    return s;
  if (hipError_t rc = api.hipDeviceSynchronize())
    return fail(ErrorCode::LaunchFailed,
                "device '" + name_ + "' failed while running earlier work",
                "hipDeviceSynchronize", rc);
  return Status::success();
}

Expected<std::unique_ptr<LoadedCode>>
HipBackend::load(const Manifest &manifest, const std::vector<uint8_t> &bytes,
                 const std::string &displayName, bool faKernels) {
  if (manifest.codeObjectFormat != "hsaco")
    return Status::error(ErrorCode::Unsupported,
                         "a hip device loads 'hsaco' code objects, the "
                         "manifest says '" +
                             manifest.codeObjectFormat + "'");
  if (std::optional<std::string> why = targetProblem(manifest.target, ""))
    return Status::error(ErrorCode::Unsupported,
                         "code object is for target '" + manifest.target +
                             "' but device '" + name_ + "' is " + deviceName +
                             ", " + gcnArchName + ": " + *why);
  if (Status s = checkGpuElf(bytes, /*EM_AMDGPU=*/224, "AMDGPU"); !s.ok())
    return s;
  // The GPU sizes LDS and reads kernel arguments as the code object says:
  // the manifest the runtime packs and checks limits by must agree.
  if (faKernels)
    if (Status s = checkAmdgpuCodeObject(manifest, bytes); !s.ok())
      return s;
  for (const KernelInfo &k : manifest.kernels)
    if (k.waveSize != warpSize)
      return Status::error(ErrorCode::Unsupported,
                           "kernel '" + k.name + "' was compiled for wave " +
                               std::to_string(k.waveSize) + ", device '" +
                               name_ + "' (" + gcnArchName + ") runs wave " +
                               std::to_string(warpSize))
          .withKernel(k.name);

  if (Status s = makeCurrent(); !s.ok())
    return s;
  hipModule_t module = nullptr;
  if (hipError_t rc = api.hipModuleLoadData(&module, bytes.data())) {
    std::string hint;
    if (rc == hipErrorNoBinaryForGpu || rc == hipErrorInvalidImage ||
        rc == hipErrorInvalidKernelFile || rc == hipErrorSharedObjectInitFailed)
      hint = "mismatched target chip? the manifest says " + manifest.target +
             ", the device is " + gcnArchName;
    return fail(ErrorCode::LoadFailed,
                "cannot load code object '" + displayName + "' (hsaco)",
                "hipModuleLoadData", rc, hint)
        .withLog("hipModuleLoadData returned no log; AMD_LOG_LEVEL=4 makes "
                 "the HIP runtime print the loader's reasons to stderr");
  }
  // From here `code` owns the module: a failure below unloads it.
  auto code = std::make_unique<HipCode>(shared_from_this(), module);

  for (const KernelInfo &k : manifest.kernels) {
    HipCode::Function f;
    f.info = k;
    if (hipError_t rc =
            api.hipModuleGetFunction(&f.function, module, k.symbol.c_str()))
      return fail(rc == hipErrorNotFound ? ErrorCode::NotFound
                                         : ErrorCode::LoadFailed,
                  "kernel '" + k.name + "': symbol '" + k.symbol +
                      "' not loaded",
                  "hipModuleGetFunction", rc,
                  "the manifest does not describe this code object's "
                  "kernels? its descriptor is '" +
                      k.symbol + ".kd'")
          .withKernel(k.name);
    uint64_t staticLds = uint64_t(k.ldsBytes);
    uint64_t maxThreads = limits_.maxThreadsPerWorkgroup;
    std::string threadsWhy;
    if (api.hipFuncGetAttribute) {
      struct {
        int attribute;
        int *out;
        const char *name;
      } attributes[] = {
          {HIP_FUNC_ATTRIBUTE_NUM_REGS, &f.registers, "NUM_REGS"},
          {HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &f.staticShared,
           "SHARED_SIZE_BYTES"},
          {HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &f.maxThreads,
           "MAX_THREADS_PER_BLOCK"},
      };
      for (const auto &a : attributes)
        if (hipError_t rc =
                api.hipFuncGetAttribute(a.out, a.attribute, f.function))
          return fail(ErrorCode::LoadFailed,
                      "kernel '" + k.name +
                          "': cannot read HIP_FUNC_ATTRIBUTE_" + a.name,
                      "hipFuncGetAttribute", rc)
              .withKernel(k.name);
      // The code object's own figures are the truth; the manifest's
      // lds_bytes may round differently.
      staticLds = std::max<uint64_t>(staticLds, uint64_t(f.staticShared));
      if (f.maxThreads > 0 && uint64_t(f.maxThreads) < maxThreads) {
        maxThreads = uint64_t(f.maxThreads);
        threadsWhy = "the kernel's limit with " + std::to_string(f.registers) +
                     " registers per thread";
      }
    }
    if (Status s = checkKernelFits(k, name_, staticLds, maxThreads,
                                   limits_.maxLdsBytes, threadsWhy,
                                   "LDS per workgroup of " + gcnArchName);
        !s.ok())
      return s;
    code->functions.push_back(std::move(f));
  }
  return std::unique_ptr<LoadedCode>(std::move(code));
}

HipCode::~HipCode() {
  if (module && backend->makeCurrent().ok())
    (void)backend->api.hipModuleUnload(module);
}

Status HipCode::launch(size_t index, const LaunchGeometry &g,
                       const uint64_t *words, const LaunchOptions &) {
  // The explicit kernargs: the ABI words laid out as the kernel's argument
  // list has them (4-byte descriptor fields with 32-bit index arithmetic).
  // HIP appends the hidden arguments.
  std::vector<uint8_t> kernargs =
      packKernargSegment(words, int(functions[index].info.indexBits));
  return launchBytes(index, g, kernargs);
}

Status HipCode::launchRaw(size_t index, const LaunchGeometry &g,
                          const uint64_t *params, size_t count) {
  // Every parameter is 8 bytes at an 8-byte aligned offset: the kernarg
  // buffer is the parameters, contiguous.
  std::vector<uint8_t> kernargs(count * sizeof(uint64_t));
  std::memcpy(kernargs.data(), params, kernargs.size());
  return launchBytes(index, g, kernargs);
}

Status HipCode::launchBytes(size_t index, const LaunchGeometry &g,
                            std::vector<uint8_t> &kernargs) {
  const Function &f = functions[index];
  const DeviceLimits &limits = backend->limits();
  auto geometry = [&] {
    return "grid (" + std::to_string(g.grid[0]) + ", " +
           std::to_string(g.grid[1]) + ", " + std::to_string(g.grid[2]) +
           "), block (" + std::to_string(g.block[0]) + ", " +
           std::to_string(g.block[1]) + ", " + std::to_string(g.block[2]) + ")";
  };
  uint64_t threads = uint64_t(g.block[0]) * g.block[1] * g.block[2];
  uint64_t maxThreads = limits.maxThreadsPerWorkgroup;
  if (f.maxThreads > 0)
    maxThreads = std::min<uint64_t>(maxThreads, uint64_t(f.maxThreads));
  if (threads > maxThreads)
    return Status::error(
        ErrorCode::InvalidArgument,
        "launch of " + geometry() + " has " + std::to_string(threads) +
            " threads per workgroup, kernel '" + f.info.name + "' on device '" +
            backend->name() + "' allows " + std::to_string(maxThreads));
  for (int i = 0; i < 3; ++i)
    if (g.grid[i] == 0 || g.grid[i] > limits.maxGrid[i])
      return Status::error(ErrorCode::InvalidArgument,
                           "launch of " + geometry() +
                               " is outside the device's grid limit (" +
                               std::to_string(limits.maxGrid[0]) + ", " +
                               std::to_string(limits.maxGrid[1]) + ", " +
                               std::to_string(limits.maxGrid[2]) + ")");

  size_t kernargBytes = kernargs.size();
  void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, kernargs.data(),
                   HIP_LAUNCH_PARAM_BUFFER_SIZE, &kernargBytes,
                   HIP_LAUNCH_PARAM_END};
  if (Status s = backend->makeCurrent(); !s.ok())
    return s;
  const HipApi &api = backend->api;
  if (hipError_t rc = api.hipModuleLaunchKernel(
          f.function, g.grid[0], g.grid[1], g.grid[2], g.block[0], g.block[1],
          g.block[2], unsigned(f.info.dynamicLdsBytes), /*stream=*/nullptr,
          /*kernelParams=*/nullptr, extra))
    return backend->fail(ErrorCode::LaunchFailed,
                         "cannot launch kernel '" + f.info.name + "' with " +
                             geometry(),
                         "hipModuleLaunchKernel", rc);
  if (hipError_t rc = api.hipDeviceSynchronize())
    return backend->fail(ErrorCode::LaunchFailed,
                         "kernel '" + f.info.name + "' failed while running (" +
                             geometry() + ")",
                         "hipDeviceSynchronize", rc,
                         "a memory fault here usually means an out-of-bounds "
                         "access in the kernel");
  return Status::success();
}

Expected<std::shared_ptr<Backend>> fa::detail::openHipBackend(int ordinal) {
  return openBackendOnce<HipBackend>(probeHip(), ordinal, "hip", "AMD");
}
