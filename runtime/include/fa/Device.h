//===- Device.h - Devices and device memory ---------------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// A Device is an opened backend: `host` (the emulator, always present) or a
// GPU through its vendor runtime (`hip`, `cuda`), which is loaded with dlopen
// so one build runs everywhere and says plainly where a runtime is missing.
// Buffers are device allocations owned RAII-style, or views of memory the
// caller owns (Device::wrap); both keep their device alive.
//
// Library: fa::runtime (libfa_runtime.so).
//
//===----------------------------------------------------------------------===//

#ifndef FA_DEVICE_H
#define FA_DEVICE_H

#include "fa/Status.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace fa {

class Buffer;
class Device;

namespace detail {
class Backend;
/// The backend behind `device` (internal: for runtime code outside the
/// Device/Buffer/Module/Kernel classes, such as the device reference).
const std::shared_ptr<Backend> &backendOf(const Device &device);
/// The backend `buffer` lives on (null for a moved-from buffer).
const std::shared_ptr<Backend> &backendOf(const Buffer &buffer);
} // namespace detail

/// What a device can launch; checked before every launch.
struct DeviceLimits {
  uint32_t maxThreadsPerWorkgroup = 0;
  uint64_t maxLdsBytes = 0;
  uint32_t maxGrid[3] = {0, 0, 0};
  /// Compute units (CUs, SMs) that run workgroups at once: what the
  /// automatic K/V split count fills (0: unknown, taken as 1).
  uint32_t computeUnits = 0;
};

/// A handle to an opened device; copies share it.
class Device {
public:
  /// Opens "auto", "host", "hip", "hip:N", "cuda" or "cuda:N". `auto` tries
  /// hip:0, then cuda:0, then falls back to host; `selectionLog()` says why.
  /// With `target` (a manifest's, e.g. "sm_90"), `auto` opens the first
  /// device that runs it: the hip GPUs in order (for gfx targets), the cuda
  /// GPUs in order (for sm targets), else host; the log says why each
  /// device was skipped. Other specs ignore `target` (loading checks it).
  static Expected<Device> open(std::string_view spec,
                               std::string_view target = {});

  /// The spellings `open` accepts, for messages and --help.
  static const char *knownDevices();

  /// "host", "hip:0", ...
  const std::string &name() const;
  /// Code object targets this device runs ("host", "gfx906", "sm_90").
  const std::vector<std::string> &targets() const;
  bool supportsTarget(std::string_view target) const;
  const DeviceLimits &limits() const;
  /// True for the emulator: its timings are no performance figure.
  bool isHostEmulator() const;
  /// For `auto`: why each skipped backend was skipped; empty otherwise.
  const std::string &selectionLog() const { return selectionLog_; }
  /// gfx906-sim: the execution profile of the last launch on this device
  /// made with LaunchOptions::profile (runtime/README.md, "Execution
  /// profile"): text, or with `json` one JSON object. Empty when there is
  /// none (other devices, no profiled launch yet).
  std::string lastProfile(bool json = false) const;
  /// gfx906-sim: the MI50 timing estimate of the last launch made with
  /// LaunchOptions::estimate (a model's ESTIMATE, not a measurement), text
  /// or one JSON object; `flops` (> 0) adds TFLOP/s. Empty when there is
  /// none.
  std::string lastEstimate(bool json = false, double flops = 0) const;

  /// Allocates `bytes` (> 0) of device memory, zero-filled.
  Expected<Buffer> allocate(size_t bytes) const;
  /// Allocates `bytes` between two guard zones of `guardBytes` each, filled
  /// with Buffer::kGuardPattern: Kernel::launch checks them after the
  /// kernel ran (LaunchOptions::checkGuards) and reports a write past
  /// either end of the buffer, naming the tensor, the offset and the
  /// element. `allocate(bytes)` uses Buffer::kDefaultGuardBytes on the host
  /// emulator and none on GPUs; fa::validate's harness asks for them on
  /// every device.
  Expected<Buffer> allocate(size_t bytes, size_t guardBytes) const;
  /// Waits for all launched work.
  Status synchronize() const;

  /// A buffer over `bytes` of memory at `pointer` that the caller owns and
  /// fa never frees (an engine's tensor, a slice of its cache): device
  /// memory of this GPU on cuda and hip (a pointer the vendor runtime
  /// allocated; fa cannot check it), host memory on the host emulator and
  /// gfx906-sim, whose kernels read and write it where it is. The memory
  /// must outlive the buffer and every launch that uses it. It has no
  /// guard zones (guardBytes() 0): a kernel's write past its end is not
  /// reported (on gfx906-sim, an access outside every buffer still is).
  /// InvalidArgument for a null pointer or 0 bytes.
  Expected<Buffer> wrap(void *pointer, size_t bytes) const;

private:
  friend class Buffer;
  friend class Module;
  friend class Kernel;
  friend const std::shared_ptr<detail::Backend> &
  detail::backendOf(const Device &device);
  explicit Device(std::shared_ptr<detail::Backend> backend)
      : backend(std::move(backend)) {}
  std::shared_ptr<detail::Backend> backend;
  std::string selectionLog_;
};

/// A device allocation; move-only, freed on destruction.
class Buffer {
public:
  Buffer(Buffer &&other) noexcept;
  Buffer &operator=(Buffer &&other) noexcept;
  Buffer(const Buffer &) = delete;
  Buffer &operator=(const Buffer &) = delete;
  ~Buffer();

  /// The byte every guard zone is filled with, and the guard zone size the
  /// host emulator's buffers get by default (a row of a few heads of D=128
  /// f32 past the end).
  static constexpr uint8_t kGuardPattern = 0xfa;
  static constexpr size_t kDefaultGuardBytes = 4096;

  /// Buffer::wrap's spelling of Device::wrap.
  static Expected<Buffer> wrap(const Device &device, void *pointer,
                               size_t bytes) {
    return device.wrap(pointer, bytes);
  }

  size_t size() const { return bytes; }
  /// False for a buffer over the caller's memory (Device::wrap), which is
  /// never freed by fa.
  bool owned() const { return owns; }
  /// Bytes of each guard zone around the buffer (0: none).
  size_t guardBytes() const { return guard; }
  /// Nothing when both guard zones still hold kGuardPattern, else an error
  /// (LaunchFailed) naming `tensor`, the byte offset relative to the
  /// buffer's start or end, the element (`elementBytes` wide) and how many
  /// bytes changed.
  Status checkGuards(const std::string &tensor, size_t elementBytes) const;
  /// The device address, as the kernel ABI passes it.
  uint64_t address() const { return addr; }
  /// True if allocated on `device` (or a copy of its handle).
  bool belongsTo(const Device &device) const;

  /// Copies `count` bytes from host memory to this buffer at `offset`.
  Status copyFromHost(const void *src, size_t count, size_t offset = 0);
  /// Copies `count` bytes at `offset` of this buffer to host memory.
  Status copyToHost(void *dst, size_t count, size_t offset = 0) const;

private:
  friend class Device;
  friend class Kernel;
  friend const std::shared_ptr<detail::Backend> &
  detail::backendOf(const Buffer &buffer);
  Buffer(std::shared_ptr<detail::Backend> backend, uint64_t addr, size_t bytes,
         size_t guard, bool owns = true)
      : backend(std::move(backend)), addr(addr), bytes(bytes), guard(guard),
        owns(owns) {}
  void reset();
  std::shared_ptr<detail::Backend> backend;
  uint64_t addr = 0; ///< the buffer's first byte (past the leading guard)
  size_t bytes = 0;
  size_t guard = 0;
  bool owns = true; ///< freed on destruction (false: Device::wrap)
};

} // namespace fa

#endif // FA_DEVICE_H
