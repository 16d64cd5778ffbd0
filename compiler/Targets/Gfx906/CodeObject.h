//===- CodeObject.h - gfx906 resources --------------------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// What the AMDGPU backend reports for a kernel, and reading it from the
// code object's metadata note. On gfx906 these compile-time figures, and
// the static estimates built on them, are what we can report: no MI50 is
// available.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_TARGETS_GFX906_CODE_OBJECT_H
#define FA_COMPILER_TARGETS_GFX906_CODE_OBJECT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace mlir::fa {

/// A loop nested in the KV loop (a dot or copy loop the backend did not
/// unroll): its header and its trip count, 0 where that is not static.
struct AmdgpuInnerLoop {
  std::string header;
  int64_t trips = 0;
};

/// The instructions of one iteration of a kernel's KV loop, counted in the
/// assembly: every instruction of the loop body once, those of an inner loop
/// times its trip count (once where that is not static).
struct AmdgpuLoopStats {
  /// The loop header's label (`.LBB0_42`).
  std::string header;
  /// The loops nested inside it, in the order of the code.
  std::vector<AmdgpuInnerLoop> inner;
  /// The instruction classes of AmdgpuResources::mix, in the loop only.
  std::map<std::string, int64_t> mix;
  /// All VALU (`v_*`) instructions and the v_dot2_f32_f16 among them.
  int64_t valu = 0, dot2 = 0;
  /// Scalar instructions (`s_*`: SALU, branches, s_waitcnt, s_barrier).
  int64_t salu = 0, barriers = 0;
  /// LDS instructions (`ds_*`), the reads and writes among them and the
  /// bytes these move per lane.
  int64_t lds = 0, ldsReads = 0, ldsWrites = 0;
  int64_t ldsReadBytes = 0, ldsWriteBytes = 0;
  /// Vector memory instructions (`global_*`, `buffer_*`, `flat_*`).
  int64_t global = 0;
  /// The FLOP per lane its multiply-accumulate instructions can do (v_dot2:
  /// 4, v_fma_mix: 2, ...): less than an iteration's GEMMs need means the
  /// counts miss work (inner loops whose trip count is not static).
  int64_t macFlopsPerLane = 0;
};

/// What the AMDGPU backend reports for one kernel.
struct AmdgpuResources {
  std::string kernel;
  int64_t vgprs = 0, sgprs = 0, vgprSpills = 0, sgprSpills = 0;
  int64_t ldsBytes = 0, scratchBytes = 0, wavefrontSize = 0;
  /// Instruction classes counted in the kernel's code.
  std::map<std::string, int64_t> mix;
  /// The KV loop: of the outermost loops with multiply-accumulate
  /// instructions (v_dot2, v_fma_mix, v_fmac, v_mac, v_pk_fma), the one with
  /// the most MAC FLOP per iteration; on a tie, the one with the fewest inner
  /// loops without a static trip count, then the fewest VALU instructions.
  std::optional<AmdgpuLoopStats> kvLoop;
  /// The other outermost loops with multiply-accumulate instructions (other
  /// versions of the KV loop: the scalar-copy fallback, a causal kernel's
  /// diagonal blocks), in the same order.
  std::vector<AmdgpuLoopStats> otherMacLoops;
};

/// Instructions of the kernel that read or write scratch (the mix's
/// buffer_* class: fa's kernels address global memory with global_*, so
/// every MUBUF instruction is a scratch access); 0 without a mix.
int64_t scratchAccesses(const AmdgpuResources &r);

/// Reads each kernel's resources from an AMDGPU ELF (relocatable object or
/// .hsaco) itself: the NT_AMDGPU_METADATA note's msgpack `amdhsa.kernels`
/// (.vgpr_count, .sgpr_count, spill counts, .group_segment_fixed_size,
/// .private_segment_fixed_size, .wavefront_size). No instruction mix.
llvm::Expected<std::vector<AmdgpuResources>>
readAmdgpuCodeObject(llvm::StringRef elf);

} // namespace mlir::fa

#endif // FA_COMPILER_TARGETS_GFX906_CODE_OBJECT_H
