//===- Memory.h - The simulated device's global memory ----------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. Global memory of the gfx906-sim device is host memory: device
// addresses are host addresses, so the kernarg segment holds the same
// pointers the runtime passes to any GPU. What makes it a memcheck is that
// every access a kernel makes is looked up in the set of regions the
// runtime allocated (buffers, the kernarg segment, the dispatch packet):
// an access that is not wholly inside one region is an error naming the
// instruction, lane and address, never a read of whatever lies there.
//
// A launch takes a sorted snapshot of the regions (MemoryMap), so lookups
// during the launch take no lock; each wave remembers its last region, so
// the common case is two compares.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_SIM_MEMORY_H
#define FA_LIB_SIM_MEMORY_H

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace fa {
namespace sim {

struct Region {
  uint64_t begin = 0, end = 0; ///< [begin, end)
  bool writable = true;
  const char *what = "buffer"; ///< "buffer", "kernarg segment", ...
};

/// An immutable sorted set of non-overlapping regions.
class MemoryMap {
public:
  MemoryMap() = default;
  explicit MemoryMap(std::vector<Region> regions)
      : regions(std::move(regions)) {
    std::sort(
        this->regions.begin(), this->regions.end(),
        [](const Region &a, const Region &b) { return a.begin < b.begin; });
  }

  /// The region holding all of [addr, addr + bytes), or nullptr. `hint` is
  /// tried first and updated.
  const Region *find(uint64_t addr, uint64_t bytes, const Region *&hint) const {
    if (hint && addr >= hint->begin && addr <= hint->end &&
        bytes <= hint->end - addr)
      return hint;
    auto it = std::upper_bound(
        regions.begin(), regions.end(), addr,
        [](uint64_t a, const Region &r) { return a < r.begin; });
    if (it == regions.begin())
      return nullptr;
    --it;
    if (addr > it->end || bytes > it->end - addr)
      return nullptr;
    hint = &*it;
    return hint;
  }

  /// The region nearest below `addr` (for messages), or nullptr.
  const Region *nearest(uint64_t addr) const {
    auto it = std::upper_bound(
        regions.begin(), regions.end(), addr,
        [](uint64_t a, const Region &r) { return a < r.begin; });
    if (it == regions.begin())
      return regions.empty() ? nullptr : &regions.front();
    return &*--it;
  }

private:
  std::vector<Region> regions;
};

} // namespace sim
} // namespace fa

#endif // FA_LIB_SIM_MEMORY_H
