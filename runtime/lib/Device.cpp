//===- Device.cpp - Devices and device memory -----------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements device selection (`auto`, `host`, `hip[:N]`,
// `cuda[:N]`) and the Buffer handle.
//
//===----------------------------------------------------------------------===//

#include "core/Backend.h"

#include <algorithm>

using namespace fa;
using namespace fa::detail;

const std::shared_ptr<Backend> &fa::detail::backendOf(const Device &device) {
  return device.backend;
}

const char *Device::knownDevices() { return "auto, host, hip[:N], cuda[:N]"; }

/// Splits "kind[:N]"; ordinal -1 when absent. False if N is not a number.
static bool splitSpec(std::string_view spec, std::string_view &kind,
                      int &ordinal) {
  size_t colon = spec.find(':');
  kind = spec.substr(0, colon);
  ordinal = -1;
  if (colon == std::string_view::npos)
    return true;
  std::string_view digits = spec.substr(colon + 1);
  if (digits.empty() || digits.size() > 6)
    return false;
  ordinal = 0;
  for (char c : digits) {
    if (c < '0' || c > '9')
      return false;
    ordinal = ordinal * 10 + (c - '0');
  }
  return true;
}

Expected<Device> Device::open(std::string_view spec, std::string_view target) {
  std::string_view kind;
  int ordinal;
  if (!splitSpec(spec, kind, ordinal))
    return Status::error(ErrorCode::InvalidArgument,
                         "bad device '" + std::string(spec) +
                             "': the ordinal after ':' must be a number "
                             "(known devices: " +
                             knownDevices() + ")");
  if (kind == "host") {
    if (ordinal > 0)
      return Status::error(ErrorCode::InvalidArgument,
                           "device 'host:" + std::to_string(ordinal) +
                               "' does not exist: there is one host device");
    Expected<std::shared_ptr<Backend>> host = openHostBackend();
    if (!host)
      return host.takeStatus();
    return Device(host.take());
  }
  if (kind == "hip" || kind == "cuda") {
    Expected<std::shared_ptr<Backend>> gpu =
        kind == "hip" ? openHipBackend(std::max(ordinal, 0))
                      : openCudaBackend(std::max(ordinal, 0));
    if (!gpu)
      return gpu.takeStatus();
    return Device(gpu.take());
  }
  if (kind == "auto" && ordinal < 0) {
    std::string log, wanted(target);
    auto note = [&](const std::string &why) {
      log += (log.empty() ? "" : "; ") + why;
    };
    for (const char *gpuKind : {"hip", "cuda"}) {
      bool hip = gpuKind[0] == 'h';
      // Each vendor runs its own spelling of targets; don't initialize a
      // GPU runtime for code it cannot run.
      if (!wanted.empty() && wanted.rfind(hip ? "gfx" : "sm_", 0) != 0) {
        note(std::string(gpuKind) + " skipped: target '" + wanted +
             "' is not " + (hip ? "an AMD" : "an NVIDIA") + " GPU target");
        continue;
      }
      for (int i = 0;; ++i) {
        Expected<std::shared_ptr<Backend>> gpu =
            hip ? openHipBackend(i) : openCudaBackend(i);
        if (!gpu) {
          // Past the last GPU is the normal end of the scan, not news.
          if (i == 0 || gpu.status().code() != ErrorCode::InvalidArgument)
            note(gpu.status().message());
          break;
        }
        std::optional<std::string> problem;
        if (!wanted.empty())
          problem = (*gpu)->targetProblem(wanted, "");
        if (!problem) {
          Device device(gpu.take());
          device.selectionLog_ = std::move(log);
          return device;
        }
        note((*gpu)->description() + " does not run target '" + wanted + "'" +
             (problem->empty() ? "" : ": " + *problem));
      }
    }
    Expected<std::shared_ptr<Backend>> host = openHostBackend();
    if (!host)
      return host.takeStatus().withLog(log);
    Device device(host.take());
    device.selectionLog_ = std::move(log);
    return device;
  }
  return Status::error(ErrorCode::InvalidArgument,
                       "unknown device '" + std::string(spec) +
                           "' (known devices: " + knownDevices() + ")");
}

const std::string &Device::name() const { return backend->name(); }

const std::vector<std::string> &Device::targets() const {
  return backend->targets();
}

std::optional<std::string>
Backend::targetProblem(const std::string &target,
                       const std::string & /*format*/) const {
  const std::vector<std::string> &all = targets();
  if (std::find(all.begin(), all.end(), target) != all.end())
    return std::nullopt;
  return std::string();
}

bool Device::supportsTarget(std::string_view target) const {
  return !backend->targetProblem(std::string(target), "");
}

const DeviceLimits &Device::limits() const { return backend->limits(); }

bool Device::isHostEmulator() const { return backend->isHostEmulator(); }

Expected<Buffer> Device::allocate(size_t bytes) const {
  if (bytes == 0)
    return Status::error(ErrorCode::InvalidArgument,
                         "cannot allocate a 0-byte buffer")
        .withDevice(name());
  Expected<uint64_t> addr = backend->allocate(bytes);
  if (!addr)
    return addr.takeStatus().withDevice(name());
  return Buffer(backend, *addr, bytes);
}

Status Device::synchronize() const { return backend->synchronize(); }

Buffer::Buffer(Buffer &&other) noexcept
    : backend(std::move(other.backend)), addr(other.addr), bytes(other.bytes) {
  other.addr = 0;
  other.bytes = 0;
}

Buffer &Buffer::operator=(Buffer &&other) noexcept {
  if (this != &other) {
    reset();
    backend = std::move(other.backend);
    addr = other.addr;
    bytes = other.bytes;
    other.addr = 0;
    other.bytes = 0;
  }
  return *this;
}

Buffer::~Buffer() { reset(); }

void Buffer::reset() {
  if (backend && addr)
    backend->release(addr);
  backend.reset();
  addr = 0;
  bytes = 0;
}

bool Buffer::belongsTo(const Device &device) const {
  return backend && backend == device.backend;
}

static Status checkRange(const char *what, size_t count, size_t offset,
                         size_t size) {
  if (offset > size || count > size - offset)
    return Status::error(ErrorCode::InvalidArgument,
                         std::string(what) + " of " + std::to_string(count) +
                             " bytes at offset " + std::to_string(offset) +
                             " overruns a buffer of " + std::to_string(size) +
                             " bytes");
  return Status::success();
}

Status Buffer::copyFromHost(const void *src, size_t count, size_t offset) {
  if (!backend)
    return Status::error(ErrorCode::InvalidArgument,
                         "copy into a moved-from buffer");
  if (Status s = checkRange("copy to device", count, offset, bytes); !s.ok())
    return s;
  return backend->copyToDevice(addr + offset, src, count);
}

Status Buffer::copyToHost(void *dst, size_t count, size_t offset) const {
  if (!backend)
    return Status::error(ErrorCode::InvalidArgument,
                         "copy from a moved-from buffer");
  if (Status s = checkRange("copy to host", count, offset, bytes); !s.ok())
    return s;
  return backend->copyToHost(dst, addr + offset, count);
}
