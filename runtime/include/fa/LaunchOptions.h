//===- LaunchOptions.h - Per-launch options ---------------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Options a caller may set per launch. GPU backends ignore the emulator-only
// ones; the host emulator honours all of them.
//
// Library: fa::runtime (libfa_runtime.so).
//
//===----------------------------------------------------------------------===//

#ifndef FA_LAUNCHOPTIONS_H
#define FA_LAUNCHOPTIONS_H

#include <cstddef>
#include <cstdint>
#include <string>

namespace fa {

struct LaunchOptions {
  /// Split-KV kernels (manifest `kv_splits`): the number of K/V splits S,
  /// 1 to maxKvSplits (fa/Module.h; more splits than K/V blocks is allowed:
  /// the extra splits are empty), or 0 to let the runtime choose (about two
  /// workgroups per compute unit). A dense kernel takes 0 or 1.
  int64_t kvSplits = 0;
  /// Host emulator: track every LDS byte and fail the launch (RaceDetected)
  /// when two threads touch it without a barrier between, one of them
  /// writing. Also reports LDS accesses out of bounds.
  bool checkRaces = false;
  /// How many race reports to keep in the error; all are counted.
  size_t maxRaceReports = 16;
  /// Host emulator: fill LDS with 0xff bytes (NaN as f32/f16) before each
  /// workgroup instead of zeros, to expose reads of unwritten LDS.
  bool poisonLds = false;
  /// Host emulator: stack size of each emulated thread (rounded up to pages;
  /// a guard page below each stack turns overflow into an error, not
  /// corruption).
  size_t fiberStackBytes = 64 * 1024;
  /// Host emulator: worker threads running workgroups; 0 = all hardware
  /// threads.
  unsigned workers = 0;
  /// Any device: after the kernel ran, check the guard zones of the
  /// launch's buffers that have them (Device::allocate with guard bytes;
  /// the host emulator's buffers by default) and fail the launch
  /// (LaunchFailed) on a write past either end, naming the tensor. A
  /// benchmark's timed launches turn it off.
  bool checkGuards = true;
  /// gfx906-sim: collect the launch's execution profile (execution counts
  /// from the simulator, not timing), read back with Device::lastProfile.
  /// Other devices ignore it.
  bool profile = false;
  /// gfx906-sim: record the instruction streams of a sample of the
  /// launch's workgroups and replay them on the MI50 timing model
  /// (runtime/lib/sim/Timing.h, docs/mi50-timing-model.md); read the
  /// ESTIMATE back with Device::lastEstimate. Other devices ignore it.
  bool estimate = false;
  /// With `estimate`: run only the sampled workgroups. The launch's
  /// outputs are then incomplete: do not validate them.
  bool estimateOnly = false;
  /// With `estimate`: how many grid x indices to sample (evenly spread,
  /// both ends; at y = z = 0).
  unsigned estimateSamples = 8;
  /// With `estimate`: the model's parameters changed from their calibrated
  /// values, "key=value ..." (a sensitivity study; the estimate prints
  /// them). An unknown key fails the launch.
  std::string estimateParams;
};

} // namespace fa

#endif // FA_LAUNCHOPTIONS_H
