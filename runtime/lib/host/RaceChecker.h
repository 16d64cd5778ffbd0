//===- RaceChecker.h - LDS race detection between barriers ------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. Shadow state per LDS byte of one workgroup: the last writer and
// the barrier epoch of that write, and up to two distinct readers since the
// last barrier. Between two barriers, an access conflicts when
//   - it reads or writes a byte another thread wrote, or
//   - it writes a byte another thread read.
// Two distinct recorded readers suffice: any writer differs from one of them.
// Entries carry the epoch they were made in, so a barrier is O(1) (a new
// epoch makes every entry stale) and nothing is cleared between workgroups.
// Shuffles synchronize a wave but are not barriers for LDS.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_RACECHECKER_H
#define FA_LIB_RACECHECKER_H

#include <cstdint>
#include <string>
#include <vector>

namespace fa {
namespace detail {

struct RaceReport {
  enum Kind { ReadAfterWrite, WriteAfterWrite, WriteAfterRead, OutOfBounds };
  Kind kind;
  uint64_t workgroupLinear;
  uint32_t workgroup[3];
  uint32_t epoch;       ///< barriers the workgroup had passed
  int64_t offset;       ///< first conflicting LDS byte (or access start)
  uint32_t bytes;       ///< size of the access
  uint32_t thread;      ///< the thread making the access
  uint32_t otherThread; ///< the earlier accessor (not for OutOfBounds)
  uint64_t ldsBytes;    ///< LDS size (for OutOfBounds)

  /// One line: kernel, workgroup, epoch, LDS byte, both threads.
  std::string describe(const std::string &kernel) const;
};

class RaceChecker {
public:
  /// Sizes the shadow for `ldsBytes`; keeps at most `maxReports` reports.
  void configure(uint64_t ldsBytes, size_t maxReports);
  void beginWorkgroup(const uint32_t id[3], uint64_t linear);
  void barrier();
  void access(uint32_t thread, int64_t offset, uint32_t bytes, bool isWrite);

  /// Reports of all workgroups since the last clear: the first kept, all
  /// counted.
  const std::vector<RaceReport> &reports() const { return kept; }
  uint64_t reportCount() const { return total; }
  void clearReports();

private:
  struct Shadow {
    uint32_t writeEpoch = 0;
    uint32_t readEpoch = 0;
    int32_t writer = -1;
    int32_t reader0 = -1;
    int32_t reader1 = -1;
  };
  void report(RaceReport r);

  std::vector<Shadow> shadow;
  uint64_t ldsBytes = 0;
  size_t maxReports = 0;
  /// Global epoch, monotonic across workgroups; 0 marks "never".
  uint32_t epoch = 1;
  uint32_t workgroupStartEpoch = 1;
  uint32_t workgroup[3] = {0, 0, 0};
  uint64_t workgroupLinear = 0;
  std::vector<RaceReport> kept;
  uint64_t total = 0;
};

} // namespace detail
} // namespace fa

#endif // FA_LIB_RACECHECKER_H
