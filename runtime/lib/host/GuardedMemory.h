//===- GuardedMemory.h - Host buffers between inaccessible pages -*- C++
//-*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. The host device's buffers, laid out so that a kernel's access
// outside one faults instead of reading or corrupting other memory. Each
// allocation is a reservation of its own:
//
//   | far guard | zone before | buffer (ends on a page) | zone after | far
//   guard |
//
//   - the far guards are PROT_NONE for the allocation's life, each
//     max(1 GiB, the buffer's size rounded up to pages) long (address space
//     only: nothing is committed), so that an access far past either end
//     still faults and is attributed to this buffer;
//   - the zones are Device::allocate's guard zones (filled with
//     Buffer::kGuardPattern, checked after a launch), rounded out to whole
//     pages. They are readable and writable outside launches; while a launch
//     runs, the pages of every zone that hold no byte of a buffer are
//     PROT_NONE (ProtectedZones), so a read of them faults. A write that
//     faults there opens its page and goes on: the guard check after the
//     launch reports it as before, naming the bytes that changed;
//   - the buffer's end is placed on a page boundary, or up to 255 bytes
//     below one so that its start stays 256-byte aligned; its start is
//     wherever that puts it in its first page.
// Accesses the pages cannot catch: within the buffer's first page before
// its start, and within the last 255 bytes after an end that is not a
// multiple of 256.
//
// Copies into or out of the zones (the pattern fill, the guard check) and
// releases wait for a running launch, which holds zoneMutex().
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_GUARDEDMEMORY_H
#define FA_LIB_GUARDEDMEMORY_H

#include "fa/Status.h"

#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <vector>

namespace fa {
namespace detail {

/// One host allocation and its guard pages.
struct GuardedAllocation {
  uintptr_t begin = 0, end = 0; ///< the whole reservation
  uintptr_t data = 0;           ///< the buffer's first byte
  size_t bytes = 0;             ///< the buffer's size
  size_t zoneBytes = 0;         ///< Device::allocate's guard zone, each side
  /// The pages of each zone that hold no byte of the buffer: [first, last).
  uintptr_t zoneBefore[2] = {0, 0}, zoneAfter[2] = {0, 0};
};

class GuardedMemory {
public:
  /// The process's host buffers (every host backend and emulator shares it).
  static GuardedMemory &get();

  /// A zero-filled buffer of `bytes` between zones of `zoneBytes`; returns
  /// the address of the zone before it (the buffer is `zoneBytes` above).
  Expected<uint64_t> allocate(size_t bytes, size_t zoneBytes);
  /// Frees what allocate() returned (waits for a running launch).
  void release(uint64_t addr);
  /// The allocation whose reservation holds `addr`, if any.
  std::optional<GuardedAllocation> find(uintptr_t addr) const;
  /// Locks zoneMutex() when [addr, addr + bytes) overlaps a zone of an
  /// allocation, for a copy that must not run while a launch has it
  /// protected.
  std::unique_lock<std::mutex> lockForCopy(uintptr_t addr, size_t bytes);
  /// Held by a launch while the zones are protected.
  std::mutex &zoneMutex() { return zones; }
  /// Every allocation's zone pages (taken under zoneMutex()).
  std::vector<std::pair<uintptr_t, uintptr_t>> zonePages() const;

private:
  GuardedMemory() = default;
  mutable std::mutex mapMutex;
  std::map<uintptr_t, GuardedAllocation> allocations; ///< by begin
  std::mutex zones;
};

/// The zones of every host allocation, PROT_NONE for one launch. The
/// constructor waits for copies into zones and for other launches; the
/// destructor makes the zones readable and writable again.
class ProtectedZones {
public:
  ProtectedZones();
  ~ProtectedZones();
  ProtectedZones(const ProtectedZones &) = delete;
  ProtectedZones &operator=(const ProtectedZones &) = delete;

  /// Async-signal-safe. If `addr` is in a protected zone page, makes that
  /// page writable and returns true (a write that faulted there can go on).
  bool openForWrite(uintptr_t addr) const;

private:
  std::unique_lock<std::mutex> lock;
  std::vector<std::pair<uintptr_t, uintptr_t>> pages;
  uintptr_t pageSize;
};

} // namespace detail
} // namespace fa

#endif // FA_LIB_GUARDEDMEMORY_H
