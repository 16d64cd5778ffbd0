//===- Vendor.h - Shared pieces of the HIP and CUDA backends ----*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. What the GPU backends (GpuBackend.cpp and its vendors,
// CudaVendor.cpp and HipVendor.cpp) share:
//   - which vendor library to open (core/DynamicLibrary.h opens it, resolves
//     its X-macro symbol table and reports a failed call);
//   - the pure decisions, testable without a GPU: how the ABI words become
//     kernel parameters, which code object targets a device runs, where the
//     gcnArchName is, whether a launch fits the device.
//
// The functions below are exported from libfa_runtime.so (default
// visibility) only so that test/runtime can call them; they are not API.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_VENDOR_H
#define FA_LIB_VENDOR_H

#include "fa/KernelAbi.h"
#include "fa/Manifest.h"
#include "fa/Status.h"

#include "core/Backend.h"
#include "core/DynamicLibrary.h"

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

namespace fa {
namespace detail {

//===----------------------------------------------------------------------===//
// Loading vendor libraries
//===----------------------------------------------------------------------===//

/// The library names to try for a vendor runtime: the path in environment
/// variable `variable` when it is set and not empty (FA_HIP_LIBRARY,
/// FA_CUDA_LIBRARY: another build of the runtime, or a test double such as
/// test/runtime/gpu's fake HIP), else `defaults`.
std::vector<const char *>
vendorLibraryNames(const char *variable,
                   const std::vector<const char *> &defaults);

/// The probe failures shared by both vendors: the runtime loaded but found
/// no GPU, or the ordinal is past the last GPU.
Status noGpuError(const char *kind, const char *vendor);
Status noSuchOrdinalError(const char *kind, const char *vendor, int ordinal,
                          int count);

/// Opens backend `B` for `ordinal` of a probed vendor runtime: the probe's
/// error, "no GPU", "no such ordinal", or one backend per ordinal shared
/// while any handle holds it (a half-initialised one is destroyed, which
/// releases what its init() acquired).
template <typename B, typename Probe>
Expected<std::shared_ptr<Backend>>
openBackendOnce(const Probe &probe, int ordinal, const char *kind,
                const char *vendor) {
  if (!probe.status.ok())
    return probe.status;
  if (probe.deviceCount == 0)
    return noGpuError(kind, vendor);
  if (ordinal >= probe.deviceCount)
    return noSuchOrdinalError(kind, vendor, ordinal, probe.deviceCount);
  static std::mutex mutex;
  static std::map<int, std::weak_ptr<B>> open;
  std::lock_guard<std::mutex> lock(mutex);
  if (std::shared_ptr<B> existing = open[ordinal].lock())
    return std::shared_ptr<Backend>(existing);
  auto backend = std::make_shared<B>(probe, ordinal);
  if (Status s = backend->init(); !s.ok())
    return s;
  open[ordinal] = backend;
  return std::shared_ptr<Backend>(backend);
}

/// "0x7f12..." for a stream or pointer in messages.
std::string hexPointer(const void *pointer);

//===----------------------------------------------------------------------===//
// Kernel parameters
//===----------------------------------------------------------------------===//

/// The AMDGPU kernarg segment (the explicit arguments) of an fa kernel for
/// its `numWords` ABI words (44 for ABI version 1, 55 for version 2, 67 for
/// version 3, 77 for version 4). With 64-bit index arithmetic every
/// argument is 8 bytes and the segment is the words as they are (352 / 440
/// / 536 / 616 bytes). With 32-bit index arithmetic (manifest index_bits
/// 32) each buffer descriptor (Q, K, V, O, LSE, version 2's workspace O and
/// LSE, version 3's block_table and cache_seqlens, version 4's cu_seqlens_q
/// and cu_seqlens_k) is two 8-byte pointers then offset, size and stride as
/// 4-byte integers, padded to 8 (32 bytes per buffer), and every other word
/// (sizes, strides, S, page size, table stride) 8 bytes: 312 / 384 / 464 /
/// 524 bytes (version 4 ends with cu_seqlens_k's 4-byte stride, so its last
/// descriptor is 28 bytes). A trace kernel's 52 words (version 1's and
/// the trace words, KernelAbi.h) are version 1's, the trace descriptor (32
/// bytes) and three 8-byte words: 352 or 344 bytes. The head words of a
/// kernel with alibi or sinks (KernelAbi.h, "Head parameters": version 1's
/// 54, 2's 65, 3's 77 and 4's 87 words) are two descriptors after the
/// version's words, where the next version has two descriptors too (and
/// after version 4's, on their own), so the word count alone lays them
/// out: 64 bytes each, or 32 with 32-bit index arithmetic. This
/// is the layout of the code object's `.args` metadata
/// (test/tools/fac-gfx906.test pins it on a compiled kernel).
std::vector<uint8_t> packKernargSegment(const uint64_t *words, size_t numWords,
                                        int indexBits);

/// Parameters of an fa kernel: one per ABI word (KernelAbi.h), of the
/// newest version at most.
constexpr size_t kMaxKernelParams = FA_ABI_MAX_WORDS;

/// Fills `params` (cuLaunchKernel's kernelParams: one pointer per
/// parameter, pointing at its value) from the `numWords` ABI `words`;
/// returns `numWords`. MLIR's lowering of the kernel's memrefs gives 5
/// parameters per buffer (allocated ptr, aligned ptr, offset, size,
/// stride), then the i64 scalars: one word each. With 32-bit index
/// arithmetic the offset, size and stride parameters are 4 bytes and the
/// driver reads the low half of their word (little-endian). `params[i]`
/// points into `words`, which must outlive the launch call.
size_t packKernelParams(const uint64_t *words, size_t numWords, void **params);

/// True for ABI word `i` that is a buffer descriptor's offset, size or
/// stride (a 4-byte parameter with 32-bit index arithmetic).
bool isDescriptorIndexWord(size_t i);

//===----------------------------------------------------------------------===//
// Targets
//===----------------------------------------------------------------------===//

/// Parses "sm_XY" / "sm_XYa" (and "sm_XYZ"): compute capability as
/// major*10+minor in `cc` (for "sm_100", 100), `archSpecific` for the "a"
/// suffix. False if `target` is not spelled so.
bool parseSmTarget(std::string_view target, int &cc, bool &archSpecific);

/// Empty if a code object for `target` in `format` ("ptx" or "cubin") runs
/// on a device of compute capability `major`.`minor`, else why not:
///   cubin: the exact capability only (sm_90 on 9.0);
///   ptx:   the capability or newer (the driver JITs it forward), except an
///          arch-specific "sm_90a", which needs exactly 9.0;
///   "" (format unknown, for device selection): as ptx.
std::string cudaTargetProblem(std::string_view target, std::string_view format,
                              int major, int minor);

/// "gfx906:sramecc+:xnack-" -> "gfx906" (the processor without the target
/// features).
std::string gcnArchBase(std::string_view arch);

/// Empty if code for `codeTarget` ("gfx906", or with features
/// "gfx906:xnack-") runs on a device whose gcnArchName is `deviceArch`
/// ("gfx906:sramecc+:xnack-"), else why not: the processors must be equal,
/// and each feature the code object fixes must not be set the other way on
/// the device.
std::string hipTargetProblem(std::string_view codeTarget,
                             std::string_view deviceArch);

/// Finds the gcnArchName in the bytes of a hipDeviceProp_t filled by
/// hipGetDeviceProperties without knowing the struct's layout (it changed
/// between ROCm 5 and 6, and the gcnArchName offset with it): a
/// NUL-terminated string of at most 255 characters starting "gfx" and a hex
/// digit; one with target features (':') is preferred. Empty if none.
/// `name` (char[256], the first field) holds a marketing name ("AMD
/// Instinct MI50"); numeric fields cannot spell "gfx" followed by a NUL.
std::string findGcnArchName(const void *props, size_t bytes);

/// Unsupported errors when `kernel` cannot run on a device: `threads` above
/// `maxThreads` (the device's, or the function's given its registers), or
/// static + dynamic LDS above `maxLdsBytes`. `why` names where the limits
/// come from ("the device's opt-in limit", ...). Empty status when it fits.
Status checkKernelFits(const KernelInfo &kernel, const std::string &device,
                       uint64_t staticLds, uint64_t maxThreads,
                       uint64_t maxLdsBytes, const std::string &threadsWhy,
                       const std::string &ldsWhy);

/// CorruptCodeObject unless `bytes` is an ELF file for `machine`
/// (EM_CUDA = 190 for a cubin, EM_AMDGPU = 224 for an hsaco).
Status checkGpuElf(const std::vector<uint8_t> &bytes, uint16_t machine,
                   const char *machineName);

} // namespace detail
} // namespace fa

#endif // FA_LIB_VENDOR_H
