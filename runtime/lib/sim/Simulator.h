//===- Simulator.h - Running a gfx906 kernel on the CPU ---------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. The gfx906 simulator's entry points:
//   Program    a code object's text decoded once (sim/Decoder.h), each
//              instruction with its handler from the dispatch table and a
//              pc -> instruction index map for branches;
//   SimLaunch  one dispatch: kernel, grid, memory map, kernarg address;
//   runLaunch  all workgroups, in parallel on worker threads; within a
//              workgroup the waves run in turn, each until s_barrier or
//              s_endpgm, the barrier released once every wave waits at it.
//
// Every failure is a Status naming the kernel, workgroup, wave, pc and
// instruction: an instruction the decoder or the engine does not know, an
// access outside the regions of the memory map, a wave over its instruction
// budget (a kernel that never ends), a barrier some waves never reach.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_SIM_SIMULATOR_H
#define FA_LIB_SIM_SIMULATOR_H

#include "sim/CodeObject.h"
#include "sim/Exec.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

namespace fa {
namespace sim {

struct ProfileCounters;
struct TimingRequest;

/// Decoded code. Immutable once built: shared by every worker thread.
class Program {
public:
  /// Decodes [co.codeBegin, co.codeEnd). A word that does not decode keeps
  /// the decoder's error and fails only when executed.
  static Program decode(const CodeObject &co);

  /// The index of the instruction at `pc`, or -1 (outside the code or in
  /// the middle of an instruction).
  int64_t indexOf(uint64_t pc) const {
    if (pc < base || pc >= base + 4 * wordIndex.size() || pc % 4)
      return -1;
    return wordIndex[(pc - base) / 4];
  }

  std::vector<Instruction> insts;
  std::vector<ExecFn> fns; ///< per instruction; nullptr: not implemented
  std::vector<std::string> decodeErrors; ///< per instruction; empty: decoded

private:
  uint64_t base = 0;
  std::vector<int64_t> wordIndex;
};

/// Totals of a launch (for the speed note and tests).
struct SimStats {
  uint64_t instructions = 0; ///< wave-instructions
  uint64_t laneOps = 0;      ///< lane-instructions (EXEC lanes summed)
  double seconds = 0;
};

struct SimLaunch {
  const Program *program = nullptr;
  const CodeObjectKernel *kernel = nullptr;
  std::string kernelName;
  uint32_t grid[3] = {1, 1, 1};  ///< workgroups
  uint32_t block[3] = {1, 1, 1}; ///< work-items per workgroup
  uint32_t ldsBytes = 0;         ///< static + dynamic
  uint64_t kernargAddr = 0;
  uint64_t dispatchPacketAddr = 0;
  uint64_t queueAddr = 0;
  MemoryMap memory;
  SimChecks checks;
  unsigned workers = 0;   ///< threads; 0: the hardware's
  bool poisonLds = false; ///< LDS starts as 0xff bytes, not zeros
  SimStats *stats = nullptr;
  /// When set, the launch's execution counts are added to it
  /// (sim/Profile.h).
  ProfileCounters *profile = nullptr;
  /// When set, the sampled workgroups' instruction streams are recorded
  /// for the timing model (sim/Timing.h).
  TimingRequest *timing = nullptr;
};

/// Runs wave `w` from its current instruction (`w.at`) until it reaches
/// s_barrier or s_endpgm (true) or fails (false, the error in ctx.error).
/// The workgroup runner's loop; the unit tests call it on one wave.
bool runWave(Wave &w, const Program &p, ExecContext &ctx);

/// Runs every workgroup of `launch` to completion.
Status runLaunch(const SimLaunch &launch);

} // namespace sim
} // namespace fa

#endif // FA_LIB_SIM_SIMULATOR_H
