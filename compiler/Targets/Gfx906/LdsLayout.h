//===- LdsLayout.h - Where the AMDGPU backend puts a kernel's LDS -*- C++
//-*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The gfx906 kernel's workgroup attributions become LDS globals that the
// AMDGPU backend packs into one block per kernel (amdgpu-lower-module-lds:
// by decreasing alignment, then decreasing size), not in the order fac's
// layoutLds assumes. This reads the offsets the backend chose by running
// that pass on a copy of the optimised module.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_TARGETS_GFX906_LDS_LAYOUT_H
#define FA_COMPILER_TARGETS_GFX906_LDS_LAYOUT_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::fa {

/// The byte offset the backend gives each of `kernel`'s `attributions`
/// workgroup attributions (the globals `__wg_<kernel>_<i>` of the MLIR
/// lowering) in `optimized`, which is not changed; -1 for one the optimiser
/// removed (unused).
llvm::Expected<std::vector<int64_t>>
amdgpuLdsOffsets(const llvm::Module &optimized, llvm::TargetMachine &tm,
                 llvm::StringRef kernel, size_t attributions);

} // namespace mlir::fa

#endif // FA_COMPILER_TARGETS_GFX906_LDS_LAYOUT_H
