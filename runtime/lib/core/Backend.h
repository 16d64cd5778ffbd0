//===- Backend.h - The interface device backends implement ------*- C++ -*-===//
//-*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. A backend owns one device: memory, code object loading and
// launches. The public Device, Buffer, Module and Kernel classes are thin
// handles over it. The GPU backends (HIP, CUDA) implement the same interface
// over their vendor runtimes, loaded with dlopen through a symbol table
// (Vendor.h).
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_BACKEND_H
#define FA_LIB_BACKEND_H

#include "fa/Device.h"
#include "fa/LaunchOptions.h"
#include "fa/Manifest.h"
#include "fa/Module.h"

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

namespace fa {
namespace detail {

/// Where a launch stands in one attention call: a split-KV attention is two
/// launches with the same words, the split kernel's (step 0 of 2) and the
/// combine kernel's (step 1 of 2); a dense one is step 0 of 1. A backend
/// that reports on the last call (gfx906-sim's estimate and profile) keeps
/// every step of it.
struct LaunchStep {
  unsigned index = 0;
  unsigned count = 1;
};

/// Where a launch goes: the caller's stream (CUstream / hipStream_t; null:
/// the legacy default stream) and whether the call waits for the kernel
/// (Kernel::launch) or returns once it is enqueued (Kernel::enqueue). The
/// host emulator and gfx906-sim always run the kernel within the call.
struct LaunchQueue {
  void *stream = nullptr;
  bool wait = true;
};

/// A code object loaded on a backend.
class LoadedCode {
public:
  virtual ~LoadedCode() = default;
  /// Runs kernel `kernelIndex` (of the manifest) with the
  /// fa_abi_num_words(abi_version) ABI words of its manifest version, to
  /// completion or (queue.wait false) enqueued on queue.stream.
  virtual Status launch(size_t kernelIndex, const LaunchGeometry &geometry,
                        const uint64_t *words, const LaunchOptions &options,
                        LaunchStep step, LaunchQueue queue) = 0;
  /// Runs kernel `kernelIndex` of code loaded with Backend::loadRawCode to
  /// completion with `count` parameters of 8 bytes each (pointers, int64,
  /// double bits), in order. Unsupported unless the backend overrides it.
  virtual Status launchRaw(size_t kernelIndex, const LaunchGeometry &geometry,
                           const uint64_t *params, size_t count) {
    (void)kernelIndex, (void)geometry, (void)params, (void)count;
    return Status::error(ErrorCode::Unsupported,
                         "this device cannot launch raw parameter lists");
  }
};

class Backend {
public:
  virtual ~Backend() = default;

  virtual const std::string &name() const = 0;
  virtual const std::vector<std::string> &targets() const = 0;
  virtual const DeviceLimits &limits() const = 0;
  virtual bool isHostEmulator() const = 0;
  /// "host", "cuda:0 (NVIDIA H200, sm_90)": for selection logs.
  virtual std::string description() const { return name(); }
  /// The execution profile of the last launch that asked for one
  /// (LaunchOptions::profile), as text or JSON; empty where the backend
  /// has none (only gfx906-sim profiles).
  virtual std::string lastProfile(bool json) const {
    (void)json;
    return {};
  }
  /// The timing estimate of the last launch that asked for one
  /// (LaunchOptions::estimate); empty where the backend has none.
  virtual std::string lastEstimate(bool json, double flops) const {
    (void)json;
    (void)flops;
    return {};
  }

  /// Nothing if this device runs code objects for `target` in `format`
  /// (`format` empty: any format), else why not ("" when targets() says it
  /// all). By default: `target` must be one of targets(). The CUDA backend
  /// also accepts PTX for older capabilities; the HIP backend compares
  /// processors and target features.
  virtual std::optional<std::string>
  targetProblem(const std::string &target, const std::string &format) const;

  virtual Expected<uint64_t> allocate(size_t bytes) = 0;
  virtual void release(uint64_t addr) = 0;
  /// The allocation at `addr` holds a buffer between two guard zones of
  /// `guardBytes` each (Device::allocate). A backend that checks the
  /// kernel's accesses (gfx906-sim) treats the zones as outside the buffer,
  /// so a read of them is reported too, not only a write; others ignore it.
  virtual void setGuardZones(uint64_t addr, size_t guardBytes) {
    (void)addr, (void)guardBytes;
  }
  /// Device::allocate's allocation: `bytes` between two guard zones of
  /// `guardBytes` each, at the returned address (the buffer `guardBytes`
  /// above it), released with release(). By default allocate() of the
  /// whole and setGuardZones(); the host device lays the zones out itself
  /// (inaccessible pages around them and, during launches, over them).
  virtual Expected<uint64_t> allocateGuarded(size_t bytes, size_t guardBytes) {
    Expected<uint64_t> addr = allocate(bytes + 2 * guardBytes);
    if (addr && guardBytes)
      setGuardZones(*addr, guardBytes);
    return addr;
  }
  /// Device::wrap: `bytes` at `addr` of the caller's memory become a buffer
  /// of this device (never freed here); unwrap() when the buffer goes. By
  /// default nothing to record; gfx906-sim registers the range so that its
  /// kernels and copies may touch it.
  virtual Status wrap(uint64_t addr, size_t bytes) {
    (void)addr, (void)bytes;
    return Status::success();
  }
  virtual void unwrap(uint64_t addr, size_t bytes) { (void)addr, (void)bytes; }
  virtual Status copyToDevice(uint64_t dst, const void *src, size_t bytes) = 0;
  virtual Status copyToHost(void *dst, uint64_t src, size_t bytes) = 0;
  virtual Status synchronize() = 0;
  /// Nothing if kernels of this device may be enqueued on `stream`, else
  /// InvalidArgument naming the stream's device. By default (the host
  /// emulator, gfx906-sim, which do not use streams) nothing.
  virtual Status checkStream(void *stream) const {
    (void)stream;
    return Status::success();
  }

  /// Loads `bytes` (already matched against the manifest's size and hash).
  /// `displayName` names the file in errors.
  virtual Expected<std::unique_ptr<LoadedCode>>
  loadCode(const Manifest &manifest, const std::vector<uint8_t> &bytes,
           const std::string &displayName) = 0;

  /// Loads a code object compiled at run time for this device (no manifest):
  /// `format` is "cubin", "ptx" or "hsaco"; it holds kernel `symbol`,
  /// launched with at most `threads` per workgroup through
  /// LoadedCode::launchRaw as kernel 0. Unsupported unless the backend
  /// overrides it (the host emulator does not).
  virtual Expected<std::unique_ptr<LoadedCode>>
  loadRawCode(const std::vector<uint8_t> &bytes, const std::string &format,
              const std::string &symbol, int64_t threads) {
    (void)bytes, (void)format, (void)symbol, (void)threads;
    return Status::error(ErrorCode::Unsupported,
                         "device '" + name() +
                             "' cannot load run-time compiled code");
  }
};

/// The split-KV workspaces of one kernel (KernelAbi.h: O f32 [S*B, Hq, Lq,
/// D] and LSE f32 [S*B, Hq, Lq]), kept for reuse: a launch takes one at
/// least as large as it needs, or allocates one, and gives it back when
/// done, so concurrent launches of one kernel never share a workspace and
/// the pool holds at most as many as ran at once.
class WorkspacePool {
public:
  struct Workspace {
    Buffer o, lse;
    bool fresh = false; ///< allocated by this take()
  };
  /// The smallest free workspace that holds `oBytes` and `lseBytes`, else a
  /// new one (replacing a free one too small, if any).
  Expected<Workspace> take(const Device &device, uint64_t oBytes,
                           uint64_t lseBytes);
  void give(Workspace workspace);

private:
  std::mutex mutex;
  std::vector<Workspace> free;
};

/// State shared by a Module and its Kernels.
struct ModuleState {
  std::shared_ptr<Backend> backend;
  Manifest manifest;
  std::string path;
  std::unique_ptr<LoadedCode> code;
  /// Per kernel: the index of its combine kernel (split-KV), else -1.
  std::vector<int> combineIndex;
  /// Per kernel: its workspaces (split-KV kernels; null for the others).
  std::vector<std::unique_ptr<WorkspacePool>> workspaces;
};

/// Nothing if the manifest's kernel `k` is the kernel whose code object
/// exports `info` (the facts memory safety depends on: LDS size, threads,
/// element type, head dimension, ...), else an error naming both values.
Status checkHostInfo(const KernelInfo &k, const fa_host_info &info);

/// The host emulator backend.
Expected<std::shared_ptr<Backend>> openHostBackend();

/// GPU backends (gpu/HipVendor.cpp, gpu/CudaVendor.cpp): open device
/// `ordinal` of the vendor runtime, or say precisely why it cannot be used
/// (library missing with dlopen's message, a missing symbol, the failing
/// call and its error name, no GPU, no such ordinal). Handles of one ordinal
/// share one backend.
Expected<std::shared_ptr<Backend>> openHipBackend(int ordinal);
Expected<std::shared_ptr<Backend>> openCudaBackend(int ordinal);

} // namespace detail
} // namespace fa

#endif // FA_LIB_BACKEND_H
