//===- AmdgpuMetadata.h - What an hsaco says about its kernels --*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. An AMDGPU code object (hsaco) describes each of its kernels in
// the NT_AMDGPU_METADATA note: a MessagePack map whose `amdhsa.kernels`
// array gives each kernel's name, LDS (group segment) and scratch (private
// segment) sizes, kernarg layout, workgroup size limit and wave size. The
// GPU allocates LDS and scratch from these figures, not from the manifest,
// so the manifest must agree with them. This reads them from the ELF bytes
// (no HIP needed: the checks are pure functions, unit-tested without a GPU).
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_AMDGPUMETADATA_H
#define FA_LIB_AMDGPUMETADATA_H

#include "fa/Manifest.h"
#include "fa/Status.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fa {
namespace detail {

/// One entry of the metadata's `amdhsa.kernels`.
struct AmdgpuKernelMetadata {
  std::string name;   ///< .name: the function (the manifest's `symbol`)
  std::string symbol; ///< .symbol: its kernel descriptor, `<name>.kd`
  uint64_t groupSegmentFixedSize = 0;   ///< static LDS bytes
  uint64_t privateSegmentFixedSize = 0; ///< scratch bytes per lane
  uint64_t kernargSegmentSize = 0;
  /// One past the last byte of the explicit (not `hidden_*`) arguments.
  uint64_t explicitKernargBytes = 0;
  uint64_t maxFlatWorkgroupSize = 0;
  uint64_t wavefrontSize = 0;
};

/// Reads every kernel's metadata from an AMDGPU ELF code object. Every read
/// is bounds-checked; a damaged file is CorruptCodeObject naming what is
/// wrong.
Expected<std::vector<AmdgpuKernelMetadata>>
readAmdgpuMetadata(const std::vector<uint8_t> &elf);

/// Nothing if every kernel of `manifest` is in `elf`'s metadata with the LDS
/// size, wave size, explicit kernarg size (for its index_bits) the manifest
/// implies and a workgroup limit that allows its threads; else an error
/// naming the manifest's and the code object's value.
Status checkAmdgpuCodeObject(const Manifest &manifest,
                             const std::vector<uint8_t> &elf);

} // namespace detail
} // namespace fa

#endif // FA_LIB_AMDGPUMETADATA_H
