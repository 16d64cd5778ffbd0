//===- Workgroup.h - A workgroup run as fibers ------------------*- C++ -*-===//
//-*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. A WorkgroupRunner belongs to one worker thread and runs one
// workgroup at a time: every thread of the workgroup is a fiber with its own
// stack and fa_host_env; a fiber runs until it reaches a
// barrier, a shuffle or its end, then the scheduler decides who goes next.
// Stacks, fibers, LDS and race-checker shadow are allocated once and reused
// for every workgroup (and launch) the worker runs.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_WORKGROUP_H
#define FA_LIB_WORKGROUP_H

#include "fa/HostEmulator.h"
#include "host/Fiber.h"
#include "host/MemoryFaults.h"
#include "host/RaceChecker.h"

#include <csetjmp>
#include <csignal>
#include <memory>
#include <vector>

namespace fa {
namespace detail {

/// `count` fiber stacks of equal size, each above a PROT_NONE guard page.
class StackArena {
public:
  StackArena() = default;
  StackArena(const StackArena &) = delete;
  StackArena &operator=(const StackArena &) = delete;
  ~StackArena();
  /// Ensures room for `count` stacks of at least `bytes` each.
  Status reserve(size_t count, size_t bytes);
  void *stack(size_t index) const;
  size_t stackBytes() const { return bytes; }
  /// True if `addr` is in the guard page below a stack; `index` says whose.
  bool isGuard(uintptr_t addr, size_t &index) const;

private:
  void release();
  uint8_t *memory = nullptr;
  size_t mapped = 0;
  size_t count = 0;
  size_t bytes = 0;
  size_t slot = 0;
};

class WorkgroupRunner {
public:
  WorkgroupRunner() = default;
  WorkgroupRunner(const WorkgroupRunner &) = delete;
  WorkgroupRunner &operator=(const WorkgroupRunner &) = delete;

  /// Sizes fibers, stacks, LDS and the race checker for `launch`, on the
  /// worker thread that runs it. A write that faults in one of `zones` may
  /// go on (null: none may).
  Status prepare(const HostLaunch &launch, const LaunchOptions &options,
                 const ProtectedZones *zones = nullptr);
  /// Runs workgroup `id` to completion, or returns why it cannot complete.
  /// A memory fault of the kernel abandons the workgroup and is an error
  /// (LaunchFailed) naming the tensor and offset; the runner stays usable.
  Status run(const uint32_t id[3], uint64_t linear);
  RaceChecker &raceChecker() { return checker; }
  /// The worker thread's alternate signal stack.
  AltStack &altStack() { return signalStack; }

private:
  enum class State : uint8_t { Ready, AtBarrier, InShuffle, Exited };
  struct Fiber {
    FiberContext context;
    fa_host_env env;
    WorkgroupRunner *runner;
    uint32_t id;   ///< linear thread id in the workgroup
    uint32_t wave; ///< id / wave size
    State state;
    uint32_t shuffleValue, shuffleOffset, shuffleWidth, shuffleMode;
    uint32_t shuffleResult;
    sigjmp_buf resume; ///< set at the fiber's start: out of a memory fault
  };

  static void fiberMain(void *fiber);
  static void barrierHook(void *emu);
  static uint32_t shuffleHook(void *emu, uint32_t value, uint32_t offset,
                              uint32_t width, uint32_t mode);
  static void ldsCheckHook(void *emu, const void *addr, uint32_t bytes,
                           uint32_t isWrite);
  static void ldsIgnoreHook(void *emu, const void *addr, uint32_t bytes,
                            uint32_t isWrite);
  static void misalignedHook(void *emu, const void *addr, uint32_t bytes,
                             uint32_t claimed, uint32_t isWrite);
  /// "Q (byte 18)": the kernel argument or LDS that holds `addr`.
  std::string describeAddress(const void *addr) const;
  /// The error for memoryFault, raised by thread `thread`.
  Status memoryFaultStatus(uint32_t thread) const;
  /// "4 bytes past the end of K (...)": where a faulting address lies.
  std::string describeFaultAddress(uintptr_t addr) const;

  void yield(Fiber &fiber);
  void resolveShuffle(uint32_t wave);
  Status stuck(const char *what) const;
  std::string where() const;

  const HostLaunch *launch = nullptr;
  const LaunchOptions *options = nullptr;
  uint32_t threads = 0;
  uint32_t waveCount = 0;
  std::vector<Fiber> fibers;
  StackArena stacks;
  std::unique_ptr<uint8_t[]> ldsStorage;
  uint8_t *lds = nullptr;
  RaceChecker checker;
  FiberContext schedulerContext;
  AltStack signalStack;
  FaultCatch faultCatch;
  MemoryFault memoryFault; ///< the current workgroup's, if any
  sigset_t workerMask;     ///< restored after a fault's handler jumped out

  // Per-workgroup scheduling state.
  uint32_t workgroup[3] = {0, 0, 0};
  std::vector<uint32_t> ready;        ///< to run in the next round
  std::vector<uint32_t> running;      ///< the round being run
  std::vector<uint32_t> inShuffle;    ///< per wave
  std::vector<uint32_t> exitedInWave; ///< per wave
  uint32_t atBarrier = 0;
  uint32_t exited = 0;
  uint32_t barrierEpoch = 0;
  std::string fault; ///< set by a hook when the kernel misbehaved
};

} // namespace detail
} // namespace fa

#endif // FA_LIB_WORKGROUP_H
