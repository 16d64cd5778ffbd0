//===- Dispatch.h - One kernel dispatch, as HIP hands it over ---*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. The simulator below any runtime: a code object loaded from its
// bytes (SimModule: the image, its kernel descriptors, the text decoded
// once) and a dispatch of one of its kernels given what a HIP runtime
// hands the GPU (the packed kernarg segment, grid, block, dynamic LDS) and
// the device memory the kernel may touch. What the command processor adds
// is made here: the kernarg segment padded to the descriptor's size in
// read-only memory, the dispatch packet and a queue for kernels that ask
// for their pointers, the memory map of the memcheck.
//
// Two users: the gfx906-sim device (SimBackend.cpp) and the fake HIP
// runtime of the tests (test/runtime/gpu/FakeHip.cpp), which runs kernels
// launched through the real HIP backend on this, so the backend's packing
// is checked by execution, not by the simulator's own packing.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_SIM_DISPATCH_H
#define FA_LIB_SIM_DISPATCH_H

#include "sim/Simulator.h"

#include <memory>

namespace fa {
namespace sim {

/// A loaded code object: immutable, shared by concurrent dispatches.
struct SimModule {
  CodeObject co;
  Program program; ///< decoded from `co`, which must not move after

  /// Reads and decodes `elf` (readCodeObject's checks and errors).
  static Expected<std::unique_ptr<SimModule>>
  load(const std::vector<uint8_t> &elf);
};

struct SimDispatch {
  const SimModule *module = nullptr;
  const CodeObjectKernel *kernel = nullptr;
  std::string kernelName;        ///< for messages
  uint32_t grid[3] = {1, 1, 1};  ///< workgroups
  uint32_t block[3] = {1, 1, 1}; ///< work-items per workgroup
  uint32_t dynamicLdsBytes = 0;  ///< added to the descriptor's static LDS
  /// The explicit arguments as packed for the launch; the segment the kernel
  /// sees is at least the descriptor's kernarg size, the rest zero.
  std::vector<uint8_t> kernarg;
  /// Append code object v5's hidden arguments (block counts, group sizes,
  /// grid dimensions) after the explicit ones, as HIP does for kernels
  /// compiled from HIP.
  bool hiddenArgsV5 = false;
  /// The device memory a kernel may read and write (allocations less any
  /// guard zones); the kernarg segment, packet and queue are added.
  std::vector<Region> memory;
  SimChecks checks;
  unsigned workers = 0;   ///< threads; 0: the hardware's
  bool poisonLds = false; ///< LDS starts as 0xff bytes
  SimStats *stats = nullptr;
  ProfileCounters *profile = nullptr; ///< execution counts (sim/Profile.h)
  /// When set, the sampled workgroups' instruction streams are recorded
  /// for the timing model (sim/Timing.h).
  TimingRequest *timing = nullptr;
};

/// Runs every workgroup of `d` to completion; the first error (runLaunch's).
Status dispatch(const SimDispatch &d);

} // namespace sim
} // namespace fa

#endif // FA_LIB_SIM_DISPATCH_H
