//===- Gfx906Target.h - The gfx906 backend ----------------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// gfx906 (AMD MI50/MI60): the Level 2 gpu.module goes through the upstream
// ROCDL lowering to LLVM, the AMDGPU backend and ld.lld to an .hsaco. The
// backend's own figures (VGPRs, SGPRs, LDS, scratch, spills, instruction
// mix) are read back from its assembly output: on gfx906 these compile-time
// figures are what we can report, since no MI50 is available.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_GFX906TARGET_H
#define FA_COMPILER_GFX906TARGET_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/Support/Error.h"

#include <map>
#include <string>
#include <vector>

namespace mlir::fa {

/// The kernels of `module`'s gpu.modules as an LLVM-dialect module with
/// ROCDL ops, ready for translation. math.exp2/log2/fma become LLVM
/// intrinsics (v_exp_f32, v_log_f32, v_fma_f32), so no device library is
/// needed. With `indexBits` = 32, index arithmetic and the memref
/// descriptors' offset/size/stride kernel arguments are 32-bit (the runtime
/// packs the kernarg segment accordingly: KernelAbi.h). With `dot2`, the
/// Q·Kᵀ products over contiguous f16 pairs become v_dot2_f32_f16
/// (llvm.amdgcn.fdot2, f32 accumulation).
FailureOr<OwningOpRef<ModuleOp>> lowerToRocdl(ModuleOp module,
                                              unsigned indexBits, bool dot2);

/// What the AMDGPU backend reports for one kernel.
struct AmdgpuResources {
  std::string kernel;
  int64_t vgprs = 0, sgprs = 0, vgprSpills = 0, sgprSpills = 0;
  int64_t ldsBytes = 0, scratchBytes = 0, wavefrontSize = 0;
  /// Instruction classes counted in the kernel's code.
  std::map<std::string, int64_t> mix;
};

/// Parses the backend's assembly output (`.amdhsa_*` directives and the
/// code object metadata) into one entry per kernel.
std::vector<AmdgpuResources> parseAmdgpuResources(llvm::StringRef assembly);

/// Reads each kernel's resources from an AMDGPU ELF (relocatable object or
/// .hsaco) itself: the NT_AMDGPU_METADATA note's msgpack `amdhsa.kernels`
/// (.vgpr_count, .sgpr_count, spill counts, .group_segment_fixed_size,
/// .private_segment_fixed_size, .wavefront_size). No instruction mix.
llvm::Expected<std::vector<AmdgpuResources>>
readAmdgpuCodeObject(llvm::StringRef elf);

/// Waves per SIMD that gfx906 can keep resident for a kernel with these
/// resources and `threads` per workgroup, with the limit that binds.
int64_t gfx906WavesPerSimd(const AmdgpuResources &r, int64_t threads,
                           std::string *limitedBy = nullptr);

/// A human-readable report, estimates labelled as such.
std::string formatAmdgpuResources(const AmdgpuResources &r, int64_t threads);

} // namespace mlir::fa

#endif // FA_COMPILER_GFX906TARGET_H
