//===- HostEmulator.h - Runs host-target kernels like a GPU -----*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The host emulator executes a host-target kernel entry point (KernelAbi.h)
// over a grid: workgroups run in parallel on a pool of worker threads, and
// the threads of one workgroup run as cooperatively scheduled fibers on one
// worker, switching only at barriers, shuffles and exit. It reports instead
// of hanging when threads can never meet again (barrier divergence), instead
// of crashing when the kernel faults on memory (an access outside a host
// buffer, a stack overflow), and can check every LDS access for races.
//
// The host device uses it for launches; tests use it directly to run small
// probe kernels.
//
// Library: fa::runtime (libfa_runtime.so).
//
//===----------------------------------------------------------------------===//

#ifndef FA_HOSTEMULATOR_H
#define FA_HOSTEMULATOR_H

#include "fa/KernelAbi.h"
#include "fa/LaunchOptions.h"
#include "fa/Status.h"

#include <memory>
#include <string>

namespace fa {

/// One launch of a host entry point.
struct HostLaunch {
  fa_host_kernel_fn entry = nullptr;
  /// Passed through to every call of `entry`.
  const uint64_t *args = nullptr;
  /// How many words `args` holds (fa_abi_num_words of the kernel's ABI
  /// version): reports name the buffer an address is in from them (0: the
  /// words are no kernel ABI, name none).
  uint32_t numWords = FA_ABI_V1_NUM_WORDS;
  /// Names the kernel in reports.
  std::string kernelName;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint32_t waveSize = 64;
  uint64_t ldsBytes = 0;
};

class HostEmulator {
public:
  /// `workers` threads (0: one per hardware thread), started on first use.
  explicit HostEmulator(unsigned workers = 0);
  ~HostEmulator();
  HostEmulator(const HostEmulator &) = delete;
  HostEmulator &operator=(const HostEmulator &) = delete;

  unsigned workerCount() const;

  /// Runs every workgroup of `launch` to completion. Returns
  /// BarrierDivergence (with the threads at the barrier and those exited),
  /// LaunchFailed (invalid shuffle arguments, LDS out of bounds when
  /// checking, a memory fault: "invalid read in workgroup (x,y,z) of kernel
  /// 'k': thread t reads at 0x..., N bytes past the end of K (...)"), or
  /// RaceDetected with the reports in the log. Launches on one emulator are
  /// serialized; while one runs, the guard zones of every host buffer are
  /// inaccessible and a SIGSEGV/SIGBUS handler is installed
  /// (runtime/README.md, "The host emulator").
  Status run(const HostLaunch &launch, const LaunchOptions &options = {});

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace fa

#endif // FA_HOSTEMULATOR_H
