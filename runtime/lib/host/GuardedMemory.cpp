//===- GuardedMemory.cpp - Host buffers between inaccessible pages --------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the host device's allocations (GuardedMemory.h says
// the layout) and the protection of their zones during a launch.
//
//===----------------------------------------------------------------------===//

#include "host/GuardedMemory.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>
#include <sys/mman.h>
#include <unistd.h>

using namespace fa;
using namespace fa::detail;

/// The far guard on each side of a buffer is at least this long, so that an
/// access a wrong page index or sequence start sends far past a small
/// tensor still lands in that tensor's own guard. Only address space: 2 GiB
/// a buffer leaves room for tens of thousands of buffers in a 47-bit
/// address space.
static constexpr size_t kFarGuardBytes = size_t(1) << 30;
/// Where the address space is limited (RLIMIT_AS), at least this.
static constexpr size_t kSmallFarGuardBytes = size_t(1) << 20;
/// Buffers start 256-byte aligned, as GPU allocations do.
static constexpr size_t kAlignment = 256;
/// Larger buffers are refused before any arithmetic on their size.
static constexpr size_t kMaxBytes = size_t(1) << 46;

static size_t pageBytes() {
  static const size_t page = size_t(::sysconf(_SC_PAGESIZE));
  return page;
}

static size_t roundUp(size_t x, size_t to) { return (x + to - 1) / to * to; }

GuardedMemory &GuardedMemory::get() {
  // Never destroyed: buffers may be released by static destructors.
  static GuardedMemory *memory = new GuardedMemory();
  return *memory;
}

Expected<uint64_t> GuardedMemory::allocate(size_t bytes, size_t zoneBytes) {
  if (bytes > kMaxBytes || zoneBytes > kMaxBytes)
    return Status::error(ErrorCode::OutOfMemory,
                         "cannot allocate " + std::to_string(bytes) +
                             " bytes of host memory (more than the address "
                             "space holds)");
  const size_t page = pageBytes();
  const size_t span = roundUp(std::max<size_t>(bytes, 1), kAlignment);
  const size_t dataPages = roundUp(span, page);
  const size_t head = dataPages - span; // first data page, before the buffer
  const size_t tail = span - bytes;     // last data page, after the buffer
  const size_t before = roundUp(zoneBytes > head ? zoneBytes - head : 0, page);
  const size_t after = roundUp(zoneBytes > tail ? zoneBytes - tail : 0, page);
  const size_t usable = before + dataPages + after;

  void *p = MAP_FAILED;
  size_t far = 0;
  int err = 0;
  for (size_t farMin : {kFarGuardBytes, kSmallFarGuardBytes}) {
    far = std::max(farMin, dataPages);
    p = ::mmap(nullptr, 2 * far + usable, PROT_NONE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED)
      break;
    err = errno;
  }
  auto outOfMemory = [&](const char *call) {
    return Status::error(ErrorCode::OutOfMemory, "cannot allocate " +
                                                     std::to_string(bytes) +
                                                     " bytes of host memory")
        .withCall(call, std::strerror(err));
  };
  if (p == MAP_FAILED)
    return outOfMemory("mmap");
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t usableBegin = begin + far;
  if (::mprotect(reinterpret_cast<void *>(usableBegin), usable,
                 PROT_READ | PROT_WRITE) != 0) {
    err = errno;
    ::munmap(p, 2 * far + usable);
    return outOfMemory("mprotect");
  }
  GuardedAllocation a;
  a.begin = begin;
  a.end = begin + 2 * far + usable;
  a.data = usableBegin + before + head;
  a.bytes = bytes;
  a.zoneBytes = zoneBytes;
  a.zoneBefore[0] = usableBegin;
  a.zoneBefore[1] = usableBegin + before;
  a.zoneAfter[0] = usableBegin + before + dataPages;
  a.zoneAfter[1] = a.zoneAfter[0] + after;
  try {
    std::lock_guard<std::mutex> lock(mapMutex);
    allocations.emplace(begin, a);
  } catch (...) {
    ::munmap(p, a.end - a.begin);
    throw;
  }
  return uint64_t(a.data - zoneBytes);
}

void GuardedMemory::release(uint64_t addr) {
  std::lock_guard<std::mutex> launch(zones);
  std::lock_guard<std::mutex> lock(mapMutex);
  auto it = allocations.upper_bound(uintptr_t(addr));
  if (it == allocations.begin())
    return;
  --it;
  const GuardedAllocation &a = it->second;
  if (a.data - a.zoneBytes != addr)
    return;
  ::munmap(reinterpret_cast<void *>(a.begin), a.end - a.begin);
  allocations.erase(it);
}

std::optional<GuardedAllocation> GuardedMemory::find(uintptr_t addr) const {
  std::lock_guard<std::mutex> lock(mapMutex);
  auto it = allocations.upper_bound(addr);
  if (it == allocations.begin())
    return std::nullopt;
  --it;
  if (addr >= it->second.end)
    return std::nullopt;
  return it->second;
}

std::unique_lock<std::mutex> GuardedMemory::lockForCopy(uintptr_t addr,
                                                        size_t bytes) {
  std::optional<GuardedAllocation> a = find(addr);
  if (!a)
    return {};
  const uintptr_t end = addr + bytes;
  const uintptr_t dataEnd = a->data + a->bytes;
  bool zone = (addr < a->data && end > a->data - a->zoneBytes) ||
              (end > dataEnd && addr < dataEnd + a->zoneBytes);
  if (!zone)
    return {};
  return std::unique_lock<std::mutex>(zones);
}

std::vector<std::pair<uintptr_t, uintptr_t>> GuardedMemory::zonePages() const {
  std::vector<std::pair<uintptr_t, uintptr_t>> pages;
  std::lock_guard<std::mutex> lock(mapMutex);
  pages.reserve(2 * allocations.size());
  for (const auto &[begin, a] : allocations)
    for (const uintptr_t *zone : {a.zoneBefore, a.zoneAfter})
      if (zone[1] > zone[0])
        pages.emplace_back(zone[0], zone[1]);
  return pages;
}

ProtectedZones::ProtectedZones()
    : lock(GuardedMemory::get().zoneMutex()),
      pages(GuardedMemory::get().zonePages()), pageSize(pageBytes()) {
  for (const auto &[first, last] : pages)
    ::mprotect(reinterpret_cast<void *>(first), last - first, PROT_NONE);
}

ProtectedZones::~ProtectedZones() {
  for (const auto &[first, last] : pages)
    ::mprotect(reinterpret_cast<void *>(first), last - first,
               PROT_READ | PROT_WRITE);
}

bool ProtectedZones::openForWrite(uintptr_t addr) const {
  for (const auto &[first, last] : pages)
    if (addr >= first && addr < last) {
      uintptr_t page = addr & ~(pageSize - 1);
      return ::mprotect(reinterpret_cast<void *>(page), pageSize,
                        PROT_READ | PROT_WRITE) == 0;
    }
  return false;
}
