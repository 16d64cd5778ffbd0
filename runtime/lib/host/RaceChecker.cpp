//===- RaceChecker.cpp - LDS race detection between barriers --------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the per-byte shadow checks described in
// RaceChecker.h. One report is made per conflicting access (at its first
// conflicting byte), not per byte.
//
//===----------------------------------------------------------------------===//

#include "host/RaceChecker.h"

using namespace fa::detail;

std::string RaceReport::describe(const std::string &kernel) const {
  std::string where =
      "in kernel '" + kernel + "' workgroup (" + std::to_string(workgroup[0]) +
      "," + std::to_string(workgroup[1]) + "," + std::to_string(workgroup[2]) +
      ") barrier epoch " + std::to_string(epoch) + ": thread " +
      std::to_string(thread);
  if (kind == OutOfBounds)
    return "lds access out of bounds " + where + " accesses bytes [" +
           std::to_string(offset) + ", " + std::to_string(offset + bytes) +
           "), outside the " + std::to_string(ldsBytes) + " bytes of lds";
  const char *verb =
      kind == WriteAfterRead || kind == WriteAfterWrite ? " writes" : " reads";
  const char *earlier = kind == WriteAfterRead ? " read" : " wrote";
  return "lds race " + where + verb + " lds byte " + std::to_string(offset) +
         " (" + std::to_string(bytes) + "-byte access) after thread " +
         std::to_string(otherThread) + earlier + " it, with no barrier between";
}

void RaceChecker::configure(uint64_t bytes, size_t maxKept) {
  if (shadow.size() != bytes) {
    shadow.assign(bytes, Shadow());
    epoch = 1;
  }
  ldsBytes = bytes;
  maxReports = maxKept;
}

void RaceChecker::beginWorkgroup(const uint32_t id[3], uint64_t linear) {
  barrier(); // a fresh epoch: entries of the previous workgroup go stale
  workgroupStartEpoch = epoch;
  for (int i = 0; i < 3; ++i)
    workgroup[i] = id[i];
  workgroupLinear = linear;
}

void RaceChecker::barrier() {
  if (++epoch == 0) { // wrapped: forget everything rather than alias epochs
    shadow.assign(shadow.size(), Shadow());
    epoch = 1;
  }
}

void RaceChecker::clearReports() {
  kept.clear();
  total = 0;
}

void RaceChecker::report(RaceReport r) {
  ++total;
  if (kept.size() < maxReports)
    kept.push_back(r);
}

void RaceChecker::access(uint32_t thread, int64_t offset, uint32_t bytes,
                         bool isWrite) {
  RaceReport r{};
  r.workgroupLinear = workgroupLinear;
  for (int i = 0; i < 3; ++i)
    r.workgroup[i] = workgroup[i];
  r.epoch = epoch - workgroupStartEpoch;
  r.bytes = bytes;
  r.thread = thread;
  r.ldsBytes = ldsBytes;
  if (offset < 0 || uint64_t(offset) + bytes > ldsBytes) {
    r.kind = RaceReport::OutOfBounds;
    r.offset = offset;
    report(r);
    return;
  }
  int32_t self = int32_t(thread);
  bool reported = false;
  for (uint64_t b = uint64_t(offset); b < uint64_t(offset) + bytes; ++b) {
    Shadow &s = shadow[b];
    if (!reported) {
      bool written = s.writeEpoch == epoch && s.writer != self;
      int32_t otherReader = -1;
      if (isWrite && s.readEpoch == epoch) {
        if (s.reader0 >= 0 && s.reader0 != self)
          otherReader = s.reader0;
        else if (s.reader1 >= 0 && s.reader1 != self)
          otherReader = s.reader1;
      }
      if (written || otherReader >= 0) {
        r.kind = written ? (isWrite ? RaceReport::WriteAfterWrite
                                    : RaceReport::ReadAfterWrite)
                         : RaceReport::WriteAfterRead;
        r.otherThread = uint32_t(written ? s.writer : otherReader);
        r.offset = int64_t(b);
        report(r);
        reported = true;
      }
    }
    if (isWrite) {
      s.writer = self;
      s.writeEpoch = epoch;
    } else if (s.readEpoch != epoch) {
      s.readEpoch = epoch;
      s.reader0 = self;
      s.reader1 = -1;
    } else if (s.reader0 != self && s.reader1 < 0) {
      s.reader1 = self;
    }
  }
}
