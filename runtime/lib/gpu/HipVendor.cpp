//===- HipVendor.cpp - AMD GPUs through the HIP runtime -------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file is the HIP half of the `hip[:N]` device (the shared half is
// GpuBackend.cpp): the HIP runtime, loaded with dlopen (libamdhip64.so,
// .so.6, .so.5; or the one file $FA_HIP_LIBRARY names, which is how
// test/runtime/gpu runs this file against its fake HIP library) through the
// symbol table below; no HIP header is needed to build it. Types and enum
// values are declared here from ROCm's hip_runtime_api.h (5.2; ROCm 6 keeps
// these values: it reserves the slots of removed attributes rather than
// renumbering).
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
//   Launch:  hipModuleLaunchKernel with the ABI words (44, or 55 for a
//            split-KV kernel of ABI version 2) as the packed kernarg buffer
//            (HIP_LAUNCH_PARAM_BUFFER_POINTER) laid out as the code
//            object's `.args` say (packKernargSegment, Vendor.h: 8-byte
//            words, or 4-byte descriptor fields with 32-bit index
//            arithmetic). Then hipDeviceSynchronize.
//
// The code object's target must be the device's processor; gfx906 code on a
// gfx908 is refused before the loader sees it, naming both.
//
//===----------------------------------------------------------------------===//

#include "gpu/AmdgpuMetadata.h"
#include "gpu/GpuBackend.h"

#include <cstring>

#include <algorithm>

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
constexpr int hipDeviceAttributeMultiprocessorCount = 63;
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
// hipStreamGetDevice (ROCm 5.6 and later) says whose a caller's stream is.
#define FA_HIP_OPTIONAL(X)                                                     \
  X(hipStreamGetDevice, hipError_t, (hipStream_t, int *))                      \
  X(hipGetDevicePropertiesR0600, hipError_t, (void *, int))                    \
  X(hipGetDeviceProperties, hipError_t, (void *, int))                         \
  X(hipFuncGetAttribute, hipError_t, (int *, int, hipFunction_t))

struct HipApi {
  FA_HIP_REQUIRED(FA_DECLARE_SYMBOL)
  FA_HIP_OPTIONAL(FA_DECLARE_SYMBOL)
};

using HipProbe = GpuProbe<HipApi>;

Status loadHip(HipProbe &probe) {
  const char *kind = "hip";
  void *handle;
  if (Status s = openVendorLibrary(
          kind,
          vendorLibraryNames(
              "FA_HIP_LIBRARY",
              {"libamdhip64.so", "libamdhip64.so.6", "libamdhip64.so.5"}),
          handle);
      !s.ok())
    return s;
  HipApi &api = probe.api;
  FA_HIP_REQUIRED(FA_RESOLVE_REQUIRED)
  FA_HIP_OPTIONAL(FA_RESOLVE_OPTIONAL)
  if (!api.hipGetDevicePropertiesR0600 && !api.hipGetDeviceProperties)
    return missingVendorSymbol(kind, "hipGetDeviceProperties");
  if (hipError_t rc = api.hipInit(0))
    return probeCallError(kind, "hipInit", rc, api.hipGetErrorName(rc),
                          api.hipGetErrorString(rc));
  if (hipError_t rc = api.hipGetDeviceCount(&probe.deviceCount))
    return probeCallError(kind, "hipGetDeviceCount", rc,
                          api.hipGetErrorName(rc), api.hipGetErrorString(rc));
  return Status::success();
}

const GpuSpelling kHipSpelling = {
    /*kind=*/"hip",
    /*outOfMemory=*/hipErrorOutOfMemory,
    /*notFound=*/hipErrorNotFound,
    "hipSetDevice",
    "hipDeviceGet",
    "hipDeviceGetName",
    "hipDeviceGetAttribute",
    "hipDeviceSynchronize",
    "hipMalloc",
    "hipMemset",
    "hipMemcpyHtoD",
    "hipMemcpyDtoH",
    "hipModuleGetFunction",
    "hipFuncGetAttribute",
    "hipModuleLaunchKernel",
    /*selectBeforeOpen=*/true,
    /*attributeNumbered=*/true,
    /*attributeRangeHint=*/
    "a HIP runtime whose attribute numbering differs "
    "from ROCm 5/6?",
    /*formats=*/"'hsaco'",
    /*funcAttributePrefix=*/"HIP_FUNC_ATTRIBUTE_",
    /*waveNamesArch=*/true,
    /*waveWords=*/"wave ",
    /*threadsPer=*/"workgroup",
    /*geometryNamesDynamicLds=*/false,
    /*runFailureHint=*/
    "a memory fault here usually means an out-of-bounds "
    "access in the kernel",
};

/// The HIP half of a `hip:N` device: hipSetDevice before every call, the
/// gcnArchName as the target, the manifest checked against the hsaco's
/// metadata, the packed kernarg segment.
class HipBackend final : public GpuBackend {
public:
  HipBackend(const HipProbe &probe, int ordinal)
      : GpuBackend(kHipSpelling, ordinal), api(probe.api) {}

  std::optional<std::string>
  targetProblem(const std::string &target,
                const std::string & /*format*/) const override {
    std::string why = hipTargetProblem(target, arch_);
    if (why.empty())
      return std::nullopt;
    return why;
  }

private:
  const char *errorName(int rc) const override {
    return api.hipGetErrorName(rc);
  }
  const char *errorString(int rc) const override {
    return api.hipGetErrorString(rc);
  }
  int selectDevice() const override { return api.hipSetDevice(ordinal_); }
  int getDevice(int ordinal, int &device) const override {
    return api.hipDeviceGet(&device, ordinal);
  }
  int getDeviceName(char *buf, int size, int device) const override {
    return api.hipDeviceGetName(buf, size, device);
  }
  int getDeviceAttribute(int *out, int attribute, int device) const override {
    return api.hipDeviceGetAttribute(out, attribute, device);
  }
  std::vector<GpuAttribute> deviceAttributes() override {
    // Each with the range a real AMD GPU reports: outside it the runtime's
    // enum is not the one this file was written against.
    return {
        {hipDeviceAttributeMaxThreadsPerBlock, &maxThreads,
         "hipDeviceAttributeMaxThreadsPerBlock", 64, 4096},
        {hipDeviceAttributeMaxBlockDimX, &blockX,
         "hipDeviceAttributeMaxBlockDimX", 64, 4096},
        {hipDeviceAttributeMaxSharedMemoryPerBlock, &lds,
         "hipDeviceAttributeMaxSharedMemoryPerBlock", 16384, 1 << 20},
        {hipDeviceAttributeWarpSize, &waveSize_, "hipDeviceAttributeWarpSize",
         32, 64},
        {hipDeviceAttributeMaxGridDimX, &grid[0],
         "hipDeviceAttributeMaxGridDimX", 1, INT32_MAX},
        {hipDeviceAttributeMaxGridDimX + 1, &grid[1],
         "hipDeviceAttributeMaxGridDimY", 1, INT32_MAX},
        {hipDeviceAttributeMaxGridDimX + 2, &grid[2],
         "hipDeviceAttributeMaxGridDimZ", 1, INT32_MAX},
        {hipDeviceAttributeMultiprocessorCount, &computeUnits,
         "hipDeviceAttributeMultiprocessorCount", 1, 1024},
    };
  }
  Status finishInit(const std::string &what) override;

  int memAlloc(uint64_t &addr, size_t bytes) const override {
    void *ptr = nullptr;
    hipError_t rc = api.hipMalloc(&ptr, bytes);
    addr = uint64_t(reinterpret_cast<uintptr_t>(ptr));
    return rc;
  }
  int memZero(uint64_t addr, size_t bytes) const override {
    return api.hipMemset(pointer(addr), 0, bytes);
  }
  int memFree(uint64_t addr) const override {
    return api.hipFree(pointer(addr));
  }
  int copyHtoD(uint64_t dst, const void *src, size_t bytes) const override {
    return api.hipMemcpyHtoD(pointer(dst), const_cast<void *>(src), bytes);
  }
  int copyDtoH(void *dst, uint64_t src, size_t bytes) const override {
    return api.hipMemcpyDtoH(dst, pointer(src), bytes);
  }
  int deviceSynchronize() const override { return api.hipDeviceSynchronize(); }

  bool loadsFormat(const std::string &format) const override {
    return format == "hsaco";
  }
  Status checkCodeObject(const Manifest &manifest,
                         const std::vector<uint8_t> &bytes,
                         bool faKernels) const override {
    if (Status s = checkGpuElf(bytes, /*EM_AMDGPU=*/224, "AMDGPU"); !s.ok())
      return s;
    // The GPU sizes LDS and reads kernel arguments as the code object
    // says: the manifest the runtime packs and checks limits by must agree.
    if (faKernels)
      return checkAmdgpuCodeObject(manifest, bytes);
    return Status::success();
  }
  Status prepareImage(const Manifest &, const std::vector<uint8_t> &bytes,
                      std::vector<uint8_t> &,
                      const void *&image) const override {
    image = bytes.data();
    return Status::success();
  }
  Status loadModule(const Manifest &manifest, const void *image,
                    const std::string &displayName,
                    void *&module) const override;
  int unloadModule(void *module) const override {
    return api.hipModuleUnload(static_cast<hipModule_t>(module));
  }
  int getFunction(void *&function, void *module,
                  const char *symbol) const override {
    hipFunction_t f = nullptr;
    hipError_t rc =
        api.hipModuleGetFunction(&f, static_cast<hipModule_t>(module), symbol);
    function = f;
    return rc;
  }
  std::string missingFunctionHint(int,
                                  const std::string &symbol) const override {
    return "the manifest does not describe this code object's kernels? its "
           "descriptor is '" +
           symbol + ".kd'";
  }
  bool hasFunctionAttributes() const override {
    return api.hipFuncGetAttribute != nullptr;
  }
  int getFunctionAttribute(int *out, int attribute,
                           void *function) const override {
    return api.hipFuncGetAttribute(out, attribute,
                                   static_cast<hipFunction_t>(function));
  }
  std::vector<GpuAttribute> functionAttributes(GpuFunction &f) const override {
    return {
        {HIP_FUNC_ATTRIBUTE_NUM_REGS, &f.registers, "NUM_REGS"},
        {HIP_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &f.staticShared,
         "SHARED_SIZE_BYTES"},
        {HIP_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &f.maxThreads,
         "MAX_THREADS_PER_BLOCK"},
    };
  }
  Status finishFunction(const KernelInfo &k, GpuFunction &f,
                        bool faKernels) const override;

  void packWords(const uint64_t *words, size_t numWords, int indexBits,
                 GpuParams &params) const override {
    // The explicit kernargs: the ABI words laid out as the kernel's
    // argument list has them (4-byte descriptor fields with 32-bit index
    // arithmetic). HIP appends the hidden arguments.
    params.kernargs = packKernargSegment(words, numWords, indexBits);
  }
  void packRaw(const uint64_t *args, size_t count,
               GpuParams &params) const override {
    // Every parameter is 8 bytes at an 8-byte aligned offset: the kernarg
    // buffer is the parameters, contiguous.
    params.kernargs.resize(count * sizeof(uint64_t));
    std::memcpy(params.kernargs.data(), args, params.kernargs.size());
  }
  int launchKernel(const GpuFunction &f, const LaunchGeometry &g,
                   GpuParams &params, void *stream) const override {
    size_t kernargBytes = params.kernargs.size();
    void *extra[] = {HIP_LAUNCH_PARAM_BUFFER_POINTER, params.kernargs.data(),
                     HIP_LAUNCH_PARAM_BUFFER_SIZE, &kernargBytes,
                     HIP_LAUNCH_PARAM_END};
    return api.hipModuleLaunchKernel(
        static_cast<hipFunction_t>(f.function), g.grid[0], g.grid[1], g.grid[2],
        g.block[0], g.block[1], g.block[2], unsigned(f.info.dynamicLdsBytes),
        static_cast<hipStream_t>(stream),
        /*kernelParams=*/nullptr, extra);
  }
  std::string launchFailureHint(int, const GpuFunction &) const override {
    return "";
  }
  Status checkStream(void *stream) const override {
    // Null and hipStreamPerThread (2) are streams of the current device.
    if (uintptr_t(stream) <= 2 || !api.hipStreamGetDevice)
      return Status::success();
    int owner = -1;
    if (hipError_t rc =
            api.hipStreamGetDevice(static_cast<hipStream_t>(stream), &owner))
      return fail(ErrorCode::InvalidArgument,
                  "cannot tell which device stream " + hexPointer(stream) +
                      " belongs to",
                  "hipStreamGetDevice", rc);
    if (owner == device_)
      return Status::success();
    return Status::error(ErrorCode::InvalidArgument,
                         "stream " + hexPointer(stream) +
                             " belongs to hip:" + std::to_string(owner) +
                             ", not to " + name_ +
                             ", where this module is loaded")
        .withDevice(name_);
  }

  static void *pointer(uint64_t addr) {
    return reinterpret_cast<void *>(uintptr_t(addr));
  }

  const HipApi &api;
  int maxThreads = 0, blockX = 0, lds = 0, grid[3] = {0, 0, 0};
  int computeUnits = 0;
};

} // namespace

Status HipBackend::finishInit(const std::string &what) {
  limits_.maxThreadsPerWorkgroup = uint32_t(std::min(maxThreads, blockX));
  limits_.maxLdsBytes = uint64_t(lds);
  for (int i = 0; i < 3; ++i)
    limits_.maxGrid[i] = uint32_t(grid[i]);
  limits_.computeUnits = uint32_t(computeUnits);

  // The gcnArchName, read without assuming the struct's layout.
  std::vector<char> props(kDevicePropBytes, 0);
  const char *call = api.hipGetDevicePropertiesR0600
                         ? "hipGetDevicePropertiesR0600"
                         : "hipGetDeviceProperties";
  hipError_t rc = api.hipGetDevicePropertiesR0600
                      ? api.hipGetDevicePropertiesR0600(props.data(), device_)
                      : api.hipGetDeviceProperties(props.data(), device_);
  if (rc)
    return fail(ErrorCode::Unavailable, what, call, rc);
  arch_ = findGcnArchName(props.data(), props.size());
  if (arch_.empty())
    return Status::error(ErrorCode::Unavailable,
                         what + ": " + call +
                             " reported no gcnArchName (no \"gfx...\" string "
                             "in the device properties of " +
                             deviceName_ + ")")
        .withCall(call, "")
        .withDevice(name_);
  targets_ = {gcnArchBase(arch_)};
  return Status::success();
}

Status HipBackend::loadModule(const Manifest &manifest, const void *image,
                              const std::string &displayName,
                              void *&module) const {
  hipModule_t loaded = nullptr;
  hipError_t rc = api.hipModuleLoadData(&loaded, image);
  module = loaded;
  if (rc == 0)
    return Status::success();
  std::string hint;
  if (rc == hipErrorNoBinaryForGpu || rc == hipErrorInvalidImage ||
      rc == hipErrorInvalidKernelFile || rc == hipErrorSharedObjectInitFailed)
    hint = "mismatched target chip? the manifest says " + manifest.target +
           ", the device is " + arch_;
  return fail(ErrorCode::LoadFailed,
              "cannot load code object '" + displayName + "' (hsaco)",
              "hipModuleLoadData", rc, hint)
      .withLog("hipModuleLoadData returned no log; AMD_LOG_LEVEL=4 makes "
               "the HIP runtime print the loader's reasons to stderr");
}

Status HipBackend::finishFunction(const KernelInfo &k, GpuFunction &f,
                                  bool) const {
  uint64_t staticLds = uint64_t(k.ldsBytes);
  uint64_t maxThreads = limits_.maxThreadsPerWorkgroup;
  std::string threadsWhy;
  if (hasFunctionAttributes()) {
    // The code object's own figures are the truth; the manifest's
    // lds_bytes may round differently.
    staticLds = std::max<uint64_t>(staticLds, uint64_t(f.staticShared));
    if (f.maxThreads > 0 && uint64_t(f.maxThreads) < maxThreads) {
      maxThreads = uint64_t(f.maxThreads);
      threadsWhy = "the kernel's limit with " + std::to_string(f.registers) +
                   " registers per thread";
    }
  }
  return checkKernelFits(k, name_, staticLds, maxThreads, limits_.maxLdsBytes,
                         threadsWhy, "LDS per workgroup of " + arch_);
}

Expected<std::shared_ptr<Backend>> fa::detail::openHipBackend(int ordinal) {
  return openBackendOnce<HipBackend>(probeOnce(loadHip), ordinal, "hip", "AMD");
}
