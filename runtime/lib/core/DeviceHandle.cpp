//===- DeviceHandle.cpp - Device queries and device memory ----------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the Device handle's queries and allocation and the
// Buffer handle, over whichever backend the device was opened on (opening
// by name is the top's, lib/Device.cpp), and the default target check of
// the backend interface.
//
//===----------------------------------------------------------------------===//

#include "core/Backend.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

using namespace fa;
using namespace fa::detail;

const std::shared_ptr<Backend> &fa::detail::backendOf(const Device &device) {
  return device.backend;
}

const std::shared_ptr<Backend> &fa::detail::backendOf(const Buffer &buffer) {
  return buffer.backend;
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
std::string Device::lastProfile(bool json) const {
  return backend->lastProfile(json);
}
std::string Device::lastEstimate(bool json, double flops) const {
  return backend->lastEstimate(json, flops);
}

Expected<Buffer> Device::allocate(size_t bytes) const {
  return allocate(bytes, isHostEmulator() ? Buffer::kDefaultGuardBytes : 0);
}

Expected<Buffer> Device::allocate(size_t bytes, size_t guardBytes) const {
  if (bytes == 0)
    return Status::error(ErrorCode::InvalidArgument,
                         "cannot allocate a 0-byte buffer")
        .withDevice(name());
  if (guardBytes > (SIZE_MAX - bytes) / 2)
    return Status::error(ErrorCode::OutOfMemory,
                         "cannot allocate " + std::to_string(bytes) +
                             " bytes with guard zones of " +
                             std::to_string(guardBytes) +
                             " bytes: the size overflows")
        .withDevice(name());
  Expected<uint64_t> addr = backend->allocateGuarded(bytes, guardBytes);
  if (!addr)
    return addr.takeStatus().withDevice(name());
  Buffer buffer(backend, *addr + guardBytes, bytes, guardBytes);
  if (guardBytes) {
    std::vector<uint8_t> pattern(guardBytes, Buffer::kGuardPattern);
    for (uint64_t at : {*addr, *addr + guardBytes + bytes})
      if (Status s = backend->copyToDevice(at, pattern.data(), guardBytes);
          !s.ok())
        return s.withDevice(name());
  }
  return buffer;
}

Status Device::synchronize() const { return backend->synchronize(); }

Expected<Buffer> Device::wrap(void *pointer, size_t bytes) const {
  if (!pointer || bytes == 0)
    return Status::error(ErrorCode::InvalidArgument,
                         std::string("cannot wrap ") +
                             (pointer ? "0 bytes" : "a null pointer") +
                             ": a wrapped buffer is memory the caller "
                             "allocated, at least 1 byte")
        .withDevice(name());
  const uint64_t addr = uint64_t(reinterpret_cast<uintptr_t>(pointer));
  if (addr > UINT64_MAX - bytes)
    return Status::error(ErrorCode::InvalidArgument,
                         "cannot wrap " + std::to_string(bytes) +
                             " bytes at " + std::to_string(addr) +
                             ": the range overflows the address space")
        .withDevice(name());
  if (Status s = backend->wrap(addr, bytes); !s.ok())
    return s.withDevice(name());
  return Buffer(backend, addr, bytes, 0, /*owns=*/false);
}

Buffer::Buffer(Buffer &&other) noexcept
    : backend(std::move(other.backend)), addr(other.addr), bytes(other.bytes),
      guard(other.guard), owns(other.owns) {
  other.addr = 0;
  other.bytes = 0;
  other.guard = 0;
}

Buffer &Buffer::operator=(Buffer &&other) noexcept {
  if (this != &other) {
    reset();
    backend = std::move(other.backend);
    addr = other.addr;
    bytes = other.bytes;
    guard = other.guard;
    owns = other.owns;
    other.addr = 0;
    other.bytes = 0;
    other.guard = 0;
  }
  return *this;
}

Buffer::~Buffer() { reset(); }

void Buffer::reset() {
  if (backend && addr) {
    if (owns)
      backend->release(addr - guard);
    else
      backend->unwrap(addr, bytes);
  }
  backend.reset();
  addr = 0;
  bytes = 0;
  guard = 0;
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

Status Buffer::checkGuards(const std::string &tensor,
                           size_t elementBytes) const {
  if (!backend || guard == 0)
    return Status::success();
  std::vector<uint8_t> zone(guard);
  for (bool after : {false, true}) {
    uint64_t at = after ? addr + bytes : addr - guard;
    if (Status s = backend->copyToHost(zone.data(), at, guard); !s.ok())
      return s;
    size_t changed = 0, first = 0;
    for (size_t i = 0; i < guard; ++i)
      if (zone[i] != kGuardPattern && changed++ == 0)
        first = i;
    if (changed == 0)
      continue;
    size_t elem = elementBytes ? elementBytes : 1;
    // Offsets from the buffer's start (negative before it) and, past its
    // end, in elements past the last one.
    std::string where;
    if (after) {
      size_t offset = bytes + first;
      where = "past the end of " + tensor + ": byte offset " +
              std::to_string(offset) + " (" + std::to_string(first) +
              " bytes past its end; element " + std::to_string(offset / elem) +
              ", " + std::to_string(first / elem) + " past the last of " +
              std::to_string(bytes / elem) + ")";
    } else {
      size_t before = guard - first; // the earliest changed byte
      where = "before the start of " + tensor + ": byte offset -" +
              std::to_string(before) + " (element -" +
              std::to_string((before + elem - 1) / elem) + ")";
    }
    return Status::error(ErrorCode::LaunchFailed,
                         "the kernel wrote " + where + "; " +
                             std::to_string(changed) + " of the " +
                             std::to_string(guard) +
                             " guard bytes there changed")
        .withDevice(backend->name());
  }
  return Status::success();
}
