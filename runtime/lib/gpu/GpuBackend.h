//===- GpuBackend.h - The shared half of the GPU backends -------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. The CUDA and HIP backends are one skeleton over two vendor APIs,
// in the manner of IREE's HIP driver: each vendor's entry points are one
// X-macro symbol table loaded with dlopen (Vendor.h), and everything that
// does not depend on which vendor it is is written once, here:
//
//   GpuBackend  opens the device (ordinal, name, attributes), allocates,
//               zero-fills, frees and copies memory, synchronizes, loads a
//               code object (format, target and wave checks, then the
//               module, then one function per manifest kernel with its
//               attributes), and is the loadRawCode of the device reference.
//   GpuCode     one loaded module: checks a launch against the device's and
//               the function's limits, launches, synchronizes, unloads.
//
// A vendor (CudaVendor.cpp, HipVendor.cpp) derives from GpuBackend and
// supplies, through the virtual functions below, the calls of its table
// (each returns the vendor's result code, 0 for success) and what really
// differs: how parameters are passed (CUDA's kernelParams vs the HIP packed
// kernarg segment), how the arch is read, context handling, the image
// checks and module loading, and the words of its messages (GpuSpelling),
// so every message is what the vendor's backend always said.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_GPUBACKEND_H
#define FA_LIB_GPUBACKEND_H

#include "core/Backend.h"
#include "gpu/Vendor.h"

#include <climits>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace fa {
namespace detail {

/// How one vendor names things in the messages of the shared code: its call
/// names, result codes and wording. One constant per vendor.
struct GpuSpelling {
  const char *kind; ///< "cuda", "hip": device names are "<kind>:<ordinal>"
  int outOfMemory;  ///< the result code that means out of memory
  int notFound;     ///< the result code of a missing kernel symbol
  // The vendor's name of each call the shared code makes.
  const char *setCurrent, *deviceGet, *deviceGetName, *deviceGetAttribute,
      *synchronize, *memAlloc, *memZero, *copyToDevice, *copyToHost,
      *moduleGetFunction, *funcGetAttribute, *launchKernel;
  /// With the device's select call before cuDeviceGet / hipDeviceGet (HIP
  /// selects by ordinal; CUDA has no context to make current yet).
  bool selectBeforeOpen;
  /// Device attributes are named with their number ("X (56)").
  bool attributeNumbered;
  /// Why an attribute outside its plausible range is refused.
  const char *attributeRangeHint;
  /// The formats the device loads, as the format error lists them.
  const char *formats;
  const char *funcAttributePrefix; ///< "CU_FUNC_ATTRIBUTE_"
  /// A kernel's wave size error names the device's arch (else its name),
  /// then "runs " + waveWords + the device's wave size.
  bool waveNamesArch;
  const char *waveWords;
  const char
      *threadsPer; ///< "block", "workgroup": what a launch's threads fill
  /// A launch's geometry in messages names its dynamic shared memory.
  bool geometryNamesDynamicLds;
  const char *runFailureHint; ///< for a synchronize failing after a launch
};

/// A device or function attribute read as an int into `out`, named `name`
/// in errors, refused outside [lo, hi] (the vendor's enum is not the one
/// this was written against).
struct GpuAttribute {
  int attribute;
  int *out;
  const char *name;
  int lo = INT_MIN, hi = INT_MAX;
};

/// One manifest kernel's function in a loaded module; -1: not known (HIP
/// without hipFuncGetAttribute).
struct GpuFunction {
  KernelInfo info;
  void *function = nullptr; ///< CUfunction, hipFunction_t
  int registers = -1;
  int staticShared = -1; ///< static shared memory / group segment bytes
  int localBytes = -1;
  int maxThreads = -1; ///< the function's limit given its registers
};

/// A kernel's parameters as the vendor's launch call takes them.
struct GpuParams {
  std::vector<void *> pointers;  ///< CUDA kernelParams: one per parameter
  std::vector<uint8_t> kernargs; ///< HIP: the packed explicit kernargs
};

class GpuBackend : public Backend,
                   public std::enable_shared_from_this<GpuBackend> {
public:
  /// Opens the device: the vendor's ordinal, name and attributes, then the
  /// vendor's own steps (finishInit). A failure leaves a backend that
  /// releases what it acquired when destroyed.
  Status init();

  const std::string &name() const override { return name_; }
  const std::vector<std::string> &targets() const override { return targets_; }
  const DeviceLimits &limits() const override { return limits_; }
  bool isHostEmulator() const override { return false; }
  std::string description() const override {
    return name_ + " (" + deviceName_ + ", " + arch_ + ")";
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
              const std::string &symbol, int64_t threads) override;

  /// A failed vendor call `call` with result `rc`, while doing `what`.
  Status fail(ErrorCode code, const std::string &what, const char *call, int rc,
              const std::string &hint = {}) const;
  /// Makes this device current on the calling thread (CUDA: its primary
  /// context; HIP: hipSetDevice): callers may use a device from any thread.
  Status makeCurrent() const;

protected:
  GpuBackend(const GpuSpelling &spelling, int ordinal)
      : spelling_(spelling), ordinal_(ordinal),
        name_(std::string(spelling.kind) + ":" + std::to_string(ordinal)) {}

  /// Loads `bytes`; with `faKernels`, checks the manifest against what the
  /// code object says of its kernels (the kernels fac compiles).
  Expected<std::unique_ptr<LoadedCode>> load(const Manifest &manifest,
                                             const std::vector<uint8_t> &bytes,
                                             const std::string &displayName,
                                             bool faKernels);

  //===--------------------------------------------------------------------===//
  // The vendor's half. Calls return the vendor's result code (0: success).
  //===--------------------------------------------------------------------===//

  virtual const char *errorName(int rc) const = 0;
  virtual const char *errorString(int rc) const = 0;
  virtual int selectDevice() const = 0;
  virtual int getDevice(int ordinal, int &device) const = 0;
  virtual int getDeviceName(char *buf, int size, int device) const = 0;
  virtual int getDeviceAttribute(int *out, int attribute, int device) const = 0;
  /// The attributes init() reads, in order, into the vendor's fields.
  virtual std::vector<GpuAttribute> deviceAttributes() = 0;
  /// The rest of init(): sets limits_, targets_, arch_, waveSize_.
  virtual Status finishInit(const std::string &what) = 0;

  virtual int memAlloc(uint64_t &addr, size_t bytes) const = 0;
  virtual int memZero(uint64_t addr, size_t bytes) const = 0;
  virtual int memFree(uint64_t addr) const = 0;
  virtual int copyHtoD(uint64_t dst, const void *src, size_t bytes) const = 0;
  virtual int copyDtoH(void *dst, uint64_t src, size_t bytes) const = 0;
  virtual int deviceSynchronize() const = 0;

  virtual bool loadsFormat(const std::string &format) const = 0;
  /// Before the wave check: what the vendor reads from the bytes itself.
  virtual Status checkCodeObject(const Manifest &manifest,
                                 const std::vector<uint8_t> &bytes,
                                 bool faKernels) const = 0;
  /// After it: the image the loader gets (`image`, pointing into `bytes` or
  /// into `copy`).
  virtual Status prepareImage(const Manifest &manifest,
                              const std::vector<uint8_t> &bytes,
                              std::vector<uint8_t> &copy,
                              const void *&image) const = 0;
  /// Loads the module; a failure names the call, with hints and logs.
  virtual Status loadModule(const Manifest &manifest, const void *image,
                            const std::string &displayName,
                            void *&module) const = 0;
  virtual int unloadModule(void *module) const = 0;
  virtual int getFunction(void *&function, void *module,
                          const char *symbol) const = 0;
  virtual std::string missingFunctionHint(int rc,
                                          const std::string &symbol) const = 0;
  /// Whether function attributes can be read at all.
  virtual bool hasFunctionAttributes() const = 0;
  virtual int getFunctionAttribute(int *out, int attribute,
                                   void *function) const = 0;
  virtual std::vector<GpuAttribute>
  functionAttributes(GpuFunction &f) const = 0;
  /// The function's checks against the manifest and the device, and its
  /// per-function settings, once its attributes are read.
  virtual Status finishFunction(const KernelInfo &k, GpuFunction &f,
                                bool faKernels) const = 0;

  /// The ABI words (with the kernel's index width) / raw 8-byte parameters
  /// as the launch call takes them.
  virtual void packWords(const uint64_t *words, size_t numWords, int indexBits,
                         GpuParams &params) const = 0;
  virtual void packRaw(const uint64_t *args, size_t count,
                       GpuParams &params) const = 0;
  /// Enqueues the launch on `stream` (null: the legacy default stream).
  virtual int launchKernel(const GpuFunction &f, const LaunchGeometry &g,
                           GpuParams &params, void *stream) const = 0;
  virtual std::string launchFailureHint(int rc, const GpuFunction &f) const = 0;

  const GpuSpelling &spelling_;
  int ordinal_;
  int device_ = 0; ///< CUdevice, the HIP device id
  std::string name_;
  std::string deviceName_;
  std::string arch_; ///< in messages: "sm_90", "gfx906:sramecc+:xnack-"
  std::vector<std::string> targets_;
  DeviceLimits limits_;
  int waveSize_ = 0;

private:
  friend class GpuCode;
  Status readDeviceAttribute(const GpuAttribute &a, const std::string &what);
};

/// A vendor runtime probed once per process: its loaded table and device
/// count, or why it cannot be used.
template <typename Api> struct GpuProbe {
  Status status;
  Api api;
  int deviceCount = 0;
  int driverVersion = 0; ///< CUDA: 12040 for 12.4; 0 if unknown
};

/// The probe of `Probe`'s runtime, made by `load` on first use.
template <typename Probe> const Probe &probeOnce(Status (*load)(Probe &)) {
  static Probe probe;
  static std::once_flag once;
  std::call_once(once, [&] { probe.status = load(probe); });
  return probe;
}

/// A failed probe call (cuInit, hipGetDeviceCount, ...): "device '<kind>'
/// unavailable: <call> returned ...".
Status probeCallError(const char *kind, const char *call, int rc,
                      const char *errorName, const char *description);

} // namespace detail
} // namespace fa

#endif // FA_LIB_GPUBACKEND_H
