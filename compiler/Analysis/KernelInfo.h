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

/// One LDS access fa-pad-lds modelled (one wave's lanes): lane l starts at
/// logical element (row, col) with i = l / q, j = l % q, row = rowI·i +
/// rowJ·j, col = colI·i + colJ·j, and moves `bytes` contiguous bytes.
struct LdsAccessInfo {
  std::string what;
  bool write = false;
  int64_t bytes = 0;
  int64_t q = 1, rowI = 0, rowJ = 0, colI = 0, colJ = 0;
  int64_t unpadded = 0; ///< predicted degree without padding
  int64_t degree = 0;   ///< predicted degree as compiled
};

/// One fa.lds_buffer in the kernel's LDS. Element (r, c) is at byte
/// offset + (r·(cols + pad) + c)·elementBytes, or pair-interleaved at
/// offset + ((r/2)·2(cols + pad) + 2c + r%2)·elementBytes.
struct LdsBufferInfo {
  std::string name, slot;
  int64_t attribution = 0; ///< the kernel's workgroup attribution (slot)
  int64_t offset = -1;     ///< byte offset of the slot; -1: unknown
  int64_t slotBytes = 0;   ///< the slot's size (its largest buffer)
  int64_t rows = 0, cols = 0, pad = 0, elementBytes = 0;
  bool pairs = false;
  std::vector<LdsAccessInfo> accesses; ///< empty: fa-pad-lds did not run
  int64_t bytes() const { return rows * (cols + pad) * elementBytes; }
};

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
  /// Sliding window (-1: that side unbounded) and softcap (0: none).
  int64_t windowLeft = -1, windowRight = -1;
  float softcap = 0;
  /// Kernel ABI version (KernelAbi.h): 1 dense, 2 split-KV.
  int64_t abiVersion = 1;
  /// Split-KV: the split kernel names its combine kernel (`combine`); the
  /// combine kernel has `isCombine`.
  bool splitKv = false, isCombine = false, gqaPacked = false, paged = false,
       varlen = false;
  /// Split-KV: at S = 1 the split kernel writes O and LSE itself and the
  /// combine kernel does nothing.
  bool splitDirect = false;
  /// Validation layer 2: the trace words follow the version's
  /// (KernelAbi.h, "Trace").
  bool trace = false;
  /// ALiBi slopes and sinks: the head words follow the version's
  /// (KernelAbi.h, "Head parameters").
  bool alibi = false, sinks = false;
  bool hasHeadParams() const { return alibi || sinks; }
  std::string combine;
  std::vector<int64_t> staticSizes; // B, Hq, Hkv, Lq, Lk; -1 = dynamic
  /// The backend's resource figures (manifest `resources`), where it has
  /// them: name and value, in the order written.
  std::vector<std::pair<std::string, int64_t>> resources;
  /// The LDS buffers (gpu.func attribute `fa.lds_buffers`, written by
  /// fa-lower-to-gpu with fa-pad-lds's `fa.lds_accesses`), offsets as
  /// layoutLds places the attributions; `ldsLayoutBy` says who placed them
  /// ("fac", or on gfx906 "the AMDGPU backend" once Compile.cpp has read
  /// its layout).
  std::vector<LdsBufferInfo> ldsBuffers;
  std::string ldsLayoutBy = "fac";
};

/// Byte offsets of the kernel's workgroup attributions (16-byte aligned, in
/// order) and the total LDS size.
int64_t layoutLds(gpu::GPUFuncOp kernel, SmallVectorImpl<int64_t> &offsets);

/// Collects every fa kernel of `module`'s gpu.modules.
FailureOr<std::vector<KernelInfo>> collectKernels(ModuleOp module);

} // namespace mlir::fa

#endif // FA_COMPILER_ANALYSIS_KERNEL_INFO_H
