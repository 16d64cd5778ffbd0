//===- KernelInfo.h - What a runtime needs to know about a kernel -*- C++
//-*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Reads the launch-relevant facts (ABI, tile config, LDS layout) off a
// Level 2 gpu.func. fac writes them into the manifest; the host lowering uses
// the same LDS layout, so the two cannot disagree.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_ANALYSIS_KERNEL_INFO_H
#define FA_COMPILER_ANALYSIS_KERNEL_INFO_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/BuiltinOps.h"

#include <string>
#include <utility>
#include <vector>

namespace mlir::fa {

struct KernelInfo {
  std::string name, target, dtype;
  int64_t headDim = 0, blockM = 0, blockN = 0, threads = 0, waveSize = 0;
  int64_t ldsBytes = 0, ldsPad = 0, stages = 1;
  /// With stages = 2: fa-double-buffer's fetch distance (next-block,
  /// in-block).
  std::string fetchAhead;
  /// Shared memory passed at launch (sm_90: all of it is dynamic).
  int64_t dynamicLdsBytes = 0;
  /// Width of the kernel's index arithmetic (KernelAbi.h: 32 means every
  /// element offset must fit in int32).
  int64_t indexBits = 64;
  float scale = 0;
  bool causal = false, hasLse = false;
  std::vector<int64_t> staticSizes; // B, Hq, Hkv, Lq, Lk; -1 = dynamic
  /// The backend's resource figures (manifest `resources`), where it has
  /// them: name and value, in the order written.
  std::vector<std::pair<std::string, int64_t>> resources;
};

/// Byte offsets of the kernel's workgroup attributions (16-byte aligned, in
/// order) and the total LDS size.
int64_t layoutLds(gpu::GPUFuncOp kernel, SmallVectorImpl<int64_t> &offsets);

/// Collects every fa kernel of `module`'s gpu.modules.
FailureOr<std::vector<KernelInfo>> collectKernels(ModuleOp module);

} // namespace mlir::fa

#endif // FA_COMPILER_ANALYSIS_KERNEL_INFO_H
