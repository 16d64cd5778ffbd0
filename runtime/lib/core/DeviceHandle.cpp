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

using namespace fa;
using namespace fa::detail;

const std::shared_ptr<Backend> &fa::detail::backendOf(const Device &device) {
  return device.backend;
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
