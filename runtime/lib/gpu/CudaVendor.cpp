//===- CudaVendor.cpp - NVIDIA GPUs through the CUDA driver API -----------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file is the CUDA half of the `cuda[:N]` device (the shared half is
// GpuBackend.cpp): the CUDA driver API, loaded with dlopen("libcuda.so.1",
// or $FA_CUDA_LIBRARY) through the symbol table below; no CUDA header or
// library is needed to build it. The few types and enum
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

#include "gpu/GpuBackend.h"

#include <algorithm>

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
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
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
// cuStreamGetCtx (CUDA 9.2) says whose a caller's stream is;
// cuCtxGetDevice_v2 (CUDA 12.8) names another context's device.
#define FA_CUDA_OPTIONAL(X)                                                    \
  X(cuDriverGetVersion, CUresult, (int *))                                     \
  X(cuStreamGetCtx, CUresult, (CUstream, CUcontext *))                         \
  X(cuCtxGetDevice_v2, CUresult, (CUdevice *, CUcontext))

struct CudaApi {
  FA_CUDA_REQUIRED(FA_DECLARE_SYMBOL)
  FA_CUDA_OPTIONAL(FA_DECLARE_SYMBOL)
};

using CudaProbe = GpuProbe<CudaApi>;

// CUDA returns its error names and strings through an out parameter.
const char *cudaErrorName(const CudaApi &api, CUresult rc) {
  const char *s = nullptr;
  return api.cuGetErrorName(rc, &s) == 0 ? s : nullptr;
}
const char *cudaErrorString(const CudaApi &api, CUresult rc) {
  const char *s = nullptr;
  return api.cuGetErrorString(rc, &s) == 0 ? s : nullptr;
}

Status loadCuda(CudaProbe &probe) {
  const char *kind = "cuda";
  void *handle;
  if (Status s = openVendorLibrary(
          kind,
          vendorLibraryNames("FA_CUDA_LIBRARY", {"libcuda.so.1", "libcuda.so"}),
          handle);
      !s.ok())
    return s;
  CudaApi &api = probe.api;
  FA_CUDA_REQUIRED(FA_RESOLVE_REQUIRED)
  FA_CUDA_OPTIONAL(FA_RESOLVE_OPTIONAL)
  if (CUresult rc = api.cuInit(0))
    return probeCallError(kind, "cuInit", rc, cudaErrorName(api, rc),
                          cudaErrorString(api, rc));
  if (CUresult rc = api.cuDeviceGetCount(&probe.deviceCount))
    return probeCallError(kind, "cuDeviceGetCount", rc, cudaErrorName(api, rc),
                          cudaErrorString(api, rc));
  if (api.cuDriverGetVersion)
    (void)api.cuDriverGetVersion(&probe.driverVersion);
  return Status::success();
}

const GpuSpelling kCudaSpelling = {
    /*kind=*/"cuda",
    /*outOfMemory=*/CUDA_ERROR_OUT_OF_MEMORY,
    /*notFound=*/CUDA_ERROR_NOT_FOUND,
    "cuCtxSetCurrent",
    "cuDeviceGet",
    "cuDeviceGetName",
    "cuDeviceGetAttribute",
    "cuCtxSynchronize",
    "cuMemAlloc_v2",
    "cuMemsetD8_v2",
    "cuMemcpyHtoD_v2",
    "cuMemcpyDtoH_v2",
    "cuModuleGetFunction",
    "cuFuncGetAttribute",
    "cuLaunchKernel",
    /*selectBeforeOpen=*/false, // the primary context comes last
    /*attributeNumbered=*/false,
    /*attributeRangeHint=*/"", // CUDA attributes are taken as they come
    /*formats=*/"'ptx' or 'cubin'",
    /*funcAttributePrefix=*/"CU_FUNC_ATTRIBUTE_",
    /*waveNamesArch=*/false,
    /*waveWords=*/"warps of ",
    /*threadsPer=*/"block",
    /*geometryNamesDynamicLds=*/true,
    /*runFailureHint=*/
    "errors like this one are sticky: the device's "
    "context is unusable for the rest of the process",
};

/// The CUDA half of a `cuda:N` device: the device's primary context
/// (retained by init, released on destruction, made current before every
/// call), compute capability targets, the JIT logs, kernelParams.
class CudaBackend final : public GpuBackend {
public:
  CudaBackend(const CudaProbe &probe, int ordinal)
      : GpuBackend(kCudaSpelling, ordinal), api(probe.api),
        driverVersion(probe.driverVersion) {}
  ~CudaBackend() override {
    if (context)
      (void)api.cuDevicePrimaryCtxRelease_v2(device_);
  }

  std::optional<std::string>
  targetProblem(const std::string &target,
                const std::string &format) const override {
    std::string why = cudaTargetProblem(target, format, ccMajor, ccMinor);
    if (why.empty())
      return std::nullopt;
    return why;
  }

private:
  const char *errorName(int rc) const override {
    return cudaErrorName(api, rc);
  }
  const char *errorString(int rc) const override {
    return cudaErrorString(api, rc);
  }
  int selectDevice() const override { return api.cuCtxSetCurrent(context); }
  int getDevice(int ordinal, int &device) const override {
    return api.cuDeviceGet(&device, ordinal);
  }
  int getDeviceName(char *buf, int size, int device) const override {
    return api.cuDeviceGetName(buf, size, device);
  }
  int getDeviceAttribute(int *out, int attribute, int device) const override {
    return api.cuDeviceGetAttribute(out, attribute, device);
  }
  std::vector<GpuAttribute> deviceAttributes() override {
    return {
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &ccMajor,
         "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR"},
        {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &ccMinor,
         "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR"},
        {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &maxBlockDimX,
         "CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X"},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &sharedPerBlock,
         "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK"},
        {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &sharedOptin,
         "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"},
        {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &maxThreads,
         "CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK"},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &grid[0],
         "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X"},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + 1, &grid[1],
         "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y"},
        {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X + 2, &grid[2],
         "CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z"},
        {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &computeUnits,
         "CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT", 1, 1 << 16},
    };
  }
  Status finishInit(const std::string &what) override {
    if (sharedOptin < sharedPerBlock)
      sharedOptin = sharedPerBlock; // devices before Volta have no opt-in
    limits_.maxThreadsPerWorkgroup =
        uint32_t(std::min(maxThreads, maxBlockDimX));
    limits_.maxLdsBytes = uint64_t(sharedOptin);
    for (int i = 0; i < 3; ++i)
      limits_.maxGrid[i] = uint32_t(grid[i]);
    limits_.computeUnits = uint32_t(computeUnits);
    targets_ = {"sm_" + std::to_string(ccMajor) + std::to_string(ccMinor)};
    arch_ = targets_.front();
    waveSize_ = 32;
    if (CUresult rc = api.cuDevicePrimaryCtxRetain(&context, device_)) {
      context = nullptr;
      return fail(ErrorCode::Unavailable, what, "cuDevicePrimaryCtxRetain", rc);
    }
    return makeCurrent();
  }

  int memAlloc(uint64_t &addr, size_t bytes) const override {
    CUdeviceptr ptr = 0;
    CUresult rc = api.cuMemAlloc_v2(&ptr, bytes);
    addr = uint64_t(ptr);
    return rc;
  }
  int memZero(uint64_t addr, size_t bytes) const override {
    return api.cuMemsetD8_v2(CUdeviceptr(addr), 0, bytes);
  }
  int memFree(uint64_t addr) const override {
    return api.cuMemFree_v2(CUdeviceptr(addr));
  }
  int copyHtoD(uint64_t dst, const void *src, size_t bytes) const override {
    return api.cuMemcpyHtoD_v2(CUdeviceptr(dst), src, bytes);
  }
  int copyDtoH(void *dst, uint64_t src, size_t bytes) const override {
    return api.cuMemcpyDtoH_v2(dst, CUdeviceptr(src), bytes);
  }
  int deviceSynchronize() const override { return api.cuCtxSynchronize(); }

  bool loadsFormat(const std::string &format) const override {
    return format == "ptx" || format == "cubin";
  }
  Status checkCodeObject(const Manifest &, const std::vector<uint8_t> &,
                         bool) const override {
    return Status::success(); // the driver checks the image itself
  }
  Status prepareImage(const Manifest &manifest,
                      const std::vector<uint8_t> &bytes,
                      std::vector<uint8_t> &copy,
                      const void *&image) const override;
  Status loadModule(const Manifest &manifest, const void *image,
                    const std::string &displayName,
                    void *&module) const override;
  int unloadModule(void *module) const override {
    return api.cuModuleUnload(static_cast<CUmodule>(module));
  }
  int getFunction(void *&function, void *module,
                  const char *symbol) const override {
    CUfunction f = nullptr;
    CUresult rc =
        api.cuModuleGetFunction(&f, static_cast<CUmodule>(module), symbol);
    function = f;
    return rc;
  }
  std::string missingFunctionHint(int rc, const std::string &) const override {
    return rc == CUDA_ERROR_NOT_FOUND
               ? "the manifest does not describe this code object's kernels?"
               : "";
  }
  bool hasFunctionAttributes() const override { return true; }
  int getFunctionAttribute(int *out, int attribute,
                           void *function) const override {
    return api.cuFuncGetAttribute(out, attribute,
                                  static_cast<CUfunction>(function));
  }
  std::vector<GpuAttribute> functionAttributes(GpuFunction &f) const override {
    return {
        {CU_FUNC_ATTRIBUTE_NUM_REGS, &f.registers, "NUM_REGS"},
        {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &f.staticShared,
         "SHARED_SIZE_BYTES"},
        {CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &f.localBytes, "LOCAL_SIZE_BYTES"},
        {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &f.maxThreads,
         "MAX_THREADS_PER_BLOCK"},
    };
  }
  Status finishFunction(const KernelInfo &k, GpuFunction &f,
                        bool faKernels) const override;

  void packWords(const uint64_t *words, size_t numWords, int,
                 GpuParams &params) const override {
    // One pointer per ABI word of the kernel's version (the index width
    // changes only which half of a word the driver reads).
    params.pointers.resize(std::min(numWords, kMaxKernelParams));
    packKernelParams(words, params.pointers.size(), params.pointers.data());
  }
  void packRaw(const uint64_t *args, size_t count,
               GpuParams &params) const override {
    // One pointer per 8-byte parameter, as cuLaunchKernel reads them.
    params.pointers.resize(count);
    for (size_t i = 0; i < count; ++i)
      params.pointers[i] = const_cast<uint64_t *>(args + i);
  }
  int launchKernel(const GpuFunction &f, const LaunchGeometry &g,
                   GpuParams &params, void *stream) const override {
    return api.cuLaunchKernel(static_cast<CUfunction>(f.function), g.grid[0],
                              g.grid[1], g.grid[2], g.block[0], g.block[1],
                              g.block[2], unsigned(f.info.dynamicLdsBytes),
                              static_cast<CUstream>(stream),
                              params.pointers.data(),
                              /*extra=*/nullptr);
  }
  Status checkStream(void *stream) const override {
    // Null and the special handles CU_STREAM_LEGACY (1) and
    // CU_STREAM_PER_THREAD (2) are streams of the current context, which a
    // launch makes this device's.
    if (uintptr_t(stream) <= 2 || !api.cuStreamGetCtx)
      return Status::success();
    if (Status s = makeCurrent(); !s.ok())
      return s;
    CUcontext owner = nullptr;
    if (CUresult rc = api.cuStreamGetCtx(static_cast<CUstream>(stream), &owner))
      return fail(ErrorCode::InvalidArgument,
                  "cannot tell which context stream " + hexPointer(stream) +
                      " belongs to",
                  "cuStreamGetCtx", rc);
    if (owner == context)
      return Status::success();
    CUdevice other = -1;
    std::string whose = "another context";
    if (api.cuCtxGetDevice_v2 && api.cuCtxGetDevice_v2(&other, owner) == 0)
      whose = other == device_ ? "another context of " + name_
                               : "a context of cuda:" + std::to_string(other);
    return Status::error(ErrorCode::InvalidArgument,
                         "stream " + hexPointer(stream) + " belongs to " +
                             whose + ", not to " + name_ +
                             "'s primary context, where this module is "
                             "loaded")
        .withDevice(name_);
  }
  std::string launchFailureHint(int rc, const GpuFunction &f) const override {
    return rc == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
               ? "the kernel uses " + std::to_string(f.registers) +
                     " registers per thread"
               : "";
  }

  const CudaApi &api;
  int driverVersion;
  CUcontext context = nullptr;
  int ccMajor = 0, ccMinor = 0;
  int maxBlockDimX = 0;
  int maxThreads = 0, grid[3] = {0, 0, 0};
  int computeUnits = 0;   ///< streaming multiprocessors
  int sharedPerBlock = 0; ///< without opt-in (48 KiB)
  int sharedOptin = 0;    ///< with MAX_DYNAMIC_SHARED_SIZE_BYTES raised
};

} // namespace

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

Status CudaBackend::prepareImage(const Manifest &manifest,
                                 const std::vector<uint8_t> &bytes,
                                 std::vector<uint8_t> &ptx,
                                 const void *&image) const {
  // PTX must end in a NUL (the driver reads a C string), a cubin is an ELF
  // file for EM_CUDA.
  image = bytes.data();
  if (manifest.codeObjectFormat == "ptx") {
    if (Status s = checkPtxText(bytes); !s.ok())
      return s;
    if (bytes.empty() || bytes.back() != 0) {
      ptx.reserve(bytes.size() + 1);
      ptx.assign(bytes.begin(), bytes.end());
      ptx.push_back(0);
      image = ptx.data();
    }
    return Status::success();
  }
  return checkGpuElf(bytes, /*EM_CUDA=*/190, "cubin");
}

Status CudaBackend::loadModule(const Manifest &manifest, const void *image,
                               const std::string &displayName,
                               void *&module) const {
  std::vector<char> errorLog(16384, 0), infoLog(16384, 0);
  int options[] = {CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
                   CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {
      errorLog.data(), reinterpret_cast<void *>(uintptr_t(errorLog.size() - 1)),
      infoLog.data(), reinterpret_cast<void *>(uintptr_t(infoLog.size() - 1))};
  CUmodule loaded = nullptr;
  CUresult rc = api.cuModuleLoadDataEx(&loaded, image, 4, options, values);
  module = loaded;
  if (rc == 0)
    return Status::success();
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
              "cannot load code object '" + displayName + "' (" +
                  manifest.codeObjectFormat + ")",
              "cuModuleLoadDataEx", rc, hint)
      .withLog(log);
}

Status CudaBackend::finishFunction(const KernelInfo &k, GpuFunction &f,
                                   bool faKernels) const {
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
          k, name_, staticShared, uint64_t(f.maxThreads), uint64_t(sharedOptin),
          "the function uses " + std::to_string(f.registers) +
              " registers per thread; cuFuncGetAttribute("
              "CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)",
          "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN of " + deviceName_);
      !s.ok())
    return s;
  if (k.dynamicLdsBytes > 0)
    if (CUresult rc = api.cuFuncSetAttribute(
            static_cast<CUfunction>(f.function),
            CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            int(k.dynamicLdsBytes)))
      return fail(ErrorCode::LoadFailed,
                  "kernel '" + k.name + "': cannot allow " +
                      std::to_string(k.dynamicLdsBytes) +
                      " bytes of dynamic shared memory (" +
                      std::to_string(f.staticShared) + " static, limit " +
                      std::to_string(sharedOptin) + ")",
                  "cuFuncSetAttribute", rc)
          .withKernel(k.name);
  return Status::success();
}

Expected<std::shared_ptr<Backend>> fa::detail::openCudaBackend(int ordinal) {
  return openBackendOnce<CudaBackend>(probeOnce(loadCuda), ordinal, "cuda",
                                      "NVIDIA");
}
