//===- LdsRaces.h - LDS race detection between waves ------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. The simulator's counterpart of the host emulator's race checker
// (`--check-races`): per LDS byte, the wave that last wrote it and the waves
// that read it since the last s_barrier (an epoch number makes older entries
// stale without clearing). A read of a byte another wave wrote, or a write
// of a byte another wave read or wrote, in the same epoch is a race: on the
// GPU the order of the two waves' accesses is not defined. Lanes of one wave
// execute an instruction together, so accesses within a wave never race.
// One report per conflicting instruction, at its first conflicting byte.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_SIM_LDSRACES_H
#define FA_LIB_SIM_LDSRACES_H

#include <cstdint>
#include <string>
#include <vector>

namespace fa {
namespace sim {

class LdsRaceTracker {
public:
  /// Prepares for a workgroup with `bytes` of LDS: every entry goes stale.
  void beginWorkgroup(uint32_t bytes, const uint32_t wg[3]) {
    if (shadow.size() != bytes) {
      shadow.assign(bytes, Shadow());
      epoch = 0;
    }
    nextEpoch();
    startEpoch = epoch;
    for (int i = 0; i < 3; ++i)
      this->wg[i] = wg[i];
  }
  /// An s_barrier released every wave.
  void barrier() { nextEpoch(); }

  /// Wave `wave` (instruction at `pc`) accesses [addr, addr + bytes); the
  /// range is inside LDS. Returns false when it races (a report is kept).
  bool access(unsigned wave, uint32_t pc, uint32_t addr, uint32_t bytes,
              bool write, const char *mnemonic) {
    for (uint32_t i = 0; i < bytes; ++i) {
      Shadow &s = shadow[addr + i];
      uint16_t bit = uint16_t(1u << wave);
      if (s.writeEpoch == epoch && s.writer != wave) {
        report(wave, pc, addr + i, write ? "writes" : "reads", s.writer,
               s.writerPc, "wrote", mnemonic);
        return false;
      }
      if (write && s.readEpoch == epoch && (s.readers & ~bit)) {
        unsigned other = 0;
        while (!((s.readers >> other) & 1) || other == wave)
          ++other;
        report(wave, pc, addr + i, "writes", other, s.readerPc, "read",
               mnemonic);
        return false;
      }
    }
    for (uint32_t i = 0; i < bytes; ++i) {
      Shadow &s = shadow[addr + i];
      if (write) {
        s.writeEpoch = epoch;
        s.writer = uint8_t(wave);
        s.writerPc = pc;
      } else {
        if (s.readEpoch != epoch) {
          s.readEpoch = epoch;
          s.readers = 0;
        }
        s.readers |= uint16_t(1u << wave);
        s.readerPc = pc;
      }
    }
    return true;
  }

  std::vector<std::string> reports; ///< the first `maxReports`
  size_t total = 0;
  size_t maxReports = 16;

private:
  struct Shadow {
    uint32_t writeEpoch = 0, readEpoch = 0;
    uint32_t writerPc = 0, readerPc = 0;
    uint16_t readers = 0;
    uint8_t writer = 0;
  };

  void nextEpoch() {
    if (++epoch == 0) { // wrapped: forget everything rather than alias
      shadow.assign(shadow.size(), Shadow());
      epoch = 1;
    }
  }

  void report(unsigned wave, uint32_t pc, uint32_t byte, const char *verb,
              unsigned other, uint32_t otherPc, const char *otherVerb,
              const char *mnemonic);

  std::vector<Shadow> shadow;
  uint32_t epoch = 0, startEpoch = 0;
  uint32_t wg[3] = {0, 0, 0};
};

} // namespace sim
} // namespace fa

#endif // FA_LIB_SIM_LDSRACES_H
