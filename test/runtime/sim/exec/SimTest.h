//===- SimTest.h - Running instruction snippets on one wave -----*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The harness of the execution engine's unit tests: a snippet of gfx906
// machine words (assembled with `llvm-mc -arch=amdgcn -mcpu=gfx906
// -show-encoding`, the assembly next to each word in the tests) runs on one
// wave through the real dispatch loop (sim::runWave, with the s_waitcnt
// model and the register checks), from register values the test chooses;
// the test then compares registers, LDS and memory with values worked out
// from the ISA's definition of each instruction.
//
//===----------------------------------------------------------------------===//

#ifndef FA_TEST_RUNTIME_SIM_EXEC_SIMTEST_H
#define FA_TEST_RUNTIME_SIM_EXEC_SIMTEST_H

#include "sim/Simulator.h"

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <string>
#include <vector>

namespace fa {
namespace sim {
namespace test {

constexpr uint32_t kEndpgm = 0xbf810000; // s_endpgm

inline uint32_t f32(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}
inline float asF32(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}

/// One wave running a snippet (s_endpgm appended).
class WaveRun {
public:
  explicit WaveRun(std::vector<uint32_t> words, unsigned vgprs = 32,
                   uint32_t ldsBytes = 2048) {
    words.push_back(kEndpgm);
    co.image.resize(words.size() * 4);
    std::memcpy(co.image.data(), words.data(), co.image.size());
    co.codeBegin = 0;
    co.codeEnd = co.image.size();
    program = Program::decode(co);
    w.reset(vgprs, 104);
    w.setExec(~uint64_t(0));
    w.pc = 0;
    w.at = 0;
    lds.assign(ldsBytes, 0);
    ctx.lds = lds.data();
    ctx.ldsBytes = ldsBytes;
    ctx.checks = &checks;
    ctx.memory = &memory;
    ctx.kernel = "test";
  }

  /// Runs to s_endpgm (or s_barrier); the first error.
  Status run() {
    if (!runWave(w, program, ctx))
      return ctx.error;
    return Status::success();
  }

  void setV(unsigned r, const std::function<uint32_t(unsigned)> &f) {
    for (unsigned l = 0; l < kWaveLanes; ++l)
      w.vgpr(r)[l] = f(l);
  }
  void setV(unsigned r, uint32_t x) {
    setV(r, [x](unsigned) { return x; });
  }
  uint32_t v(unsigned r, unsigned lane) const { return w.vgpr(r)[lane]; }

  /// Makes `bytes` at `data` a global region of the memory map.
  void addRegion(void *data, size_t bytes, bool writable = true,
                 const char *what = "buffer") {
    uint64_t a = uint64_t(reinterpret_cast<uintptr_t>(data));
    regions.push_back(Region{a, a + bytes, writable, what});
    memory = MemoryMap(regions);
  }

  CodeObject co;
  Program program;
  Wave w;
  SimChecks checks;
  ExecContext ctx;
  std::vector<uint8_t> lds;
  std::vector<Region> regions;
  MemoryMap memory;
};

} // namespace test
} // namespace sim
} // namespace fa

#endif // FA_TEST_RUNTIME_SIM_EXEC_SIMTEST_H
