//===- FakeHip.h - Control of the fake HIP runtime (test double) -*- C -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// libfa-fake-hip.so (FakeHip.cpp) exports the HIP 5.2 entry points the HIP
// backend resolves and pretends to be one gfx906 GPU; the runtime is pointed
// at it with FA_HIP_LIBRARY=<path>. This header is its other face: what a
// test calls to make it fail and to read what it saw. Plain C, so the
// functions are what the library exports.
//
//===----------------------------------------------------------------------===//

#ifndef FA_TEST_FAKEHIP_H
#define FA_TEST_FAKEHIP_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One explicit argument of the launched kernel as the code object's
/// `.args` metadata describes it, with the value the kernarg segment held
/// at its offset (4-byte arguments zero-extended).
typedef struct fake_hip_arg {
  uint32_t offset;
  uint32_t size;
  char value_kind[32]; ///< "global_buffer", "by_value", ...
  uint64_t value;
  /// For global_buffer: 1 if `value` points into a live hipMalloc
  /// allocation, 0 if it is null.
  int is_allocation;
} fake_hip_arg;

/// What the last hipModuleLaunchKernel saw.
typedef struct fake_hip_launch {
  int launches; ///< hipModuleLaunchKernel calls that reached the checks
  char kernel[256];
  unsigned grid[3], block[3];
  unsigned shared_mem_bytes;
  void *stream; ///< the hipStream_t it was launched on (NULL: null stream)
  int used_kernel_params;        ///< kernelParams was passed (instead of extra)
  size_t kernarg_bytes;          ///< HIP_LAUNCH_PARAM_BUFFER_SIZE
  uint64_t kernarg_segment_size; ///< .kernarg_segment_size of the metadata
  int num_args;
  fake_hip_arg args[96]; ///< ABI version 4 has 77 explicit arguments
  /// Empty when the launch agreed with the code object's metadata, else
  /// the first disagreement (the launch then returned
  /// hipErrorInvalidValue).
  char problem[512];
  /// 1 if the kernel ran on the simulator (the checks passed).
  int executed;
  /// Empty if it ran to completion, else the simulator's error; the next
  /// hipDeviceSynchronize then returns hipErrorLaunchFailure.
  char fault[2048];
} fake_hip_launch;

/// Back to one healthy gfx906 with no failures planted, no call recorded
/// and no launch seen. Allocations and modules stay.
void fake_hip_reset(void);

/// The next call of `call` ("hipModuleLoadData") returns `rc` and does
/// nothing else. FA_FAKE_HIP_FAIL="hipInit=3" plants one at load time,
/// for the calls the runtime makes once per process.
void fake_hip_fail_next(const char *call, int rc);

/// The gcnArchName hipGetDeviceProperties reports from now on.
void fake_hip_set_arch(const char *gcn_arch_name);

/// How many times `call` was made since the last reset.
int fake_hip_call_count(const char *call);

/// The calls since the last reset, in order, one per line.
const char *fake_hip_calls(void);

const fake_hip_launch *fake_hip_last_launch(void);

/// The launch before the last one (a split-KV attention's split kernel,
/// when the last was its combine kernel).
const fake_hip_launch *fake_hip_previous_launch(void);

/// The launches and synchronisations since the last reset, in order, one
/// per line: "launch <kernel> on stream 2" ("on null stream"),
/// "synchronize stream 2", "synchronize device". Streams are numbered 1, 2,
/// ... in creation order (hipStreamCreate, fake_hip_stream_of_device).
const char *fake_hip_stream_log(void);

/// A stream that hipStreamGetDevice says belongs to device `device` (the
/// fake has one GPU: another number stands for another GPU's stream).
/// Freed with hipStreamDestroy.
struct ihipStream_t;
struct ihipStream_t *fake_hip_stream_of_device(int device);

/// Live allocations (hipMalloc'ed, not yet hipFree'd).
int fake_hip_live_allocations(void);

#ifdef __cplusplus
}
#endif

#endif // FA_TEST_FAKEHIP_H
