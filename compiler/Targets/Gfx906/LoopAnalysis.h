//===- LoopAnalysis.h - gfx906 assembly analysis ----------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Static analysis of the AMDGPU backend's assembly text: instruction
// classes and the KV loop of each kernel, with per-iteration counts.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_TARGETS_GFX906_LOOP_ANALYSIS_H
#define FA_COMPILER_TARGETS_GFX906_LOOP_ANALYSIS_H

#include "compiler/Targets/Gfx906/CodeObject.h"

#include "llvm/ADT/StringRef.h"

namespace mlir::fa {

/// Parses the backend's assembly output (`.amdhsa_*` directives and the
/// code object metadata) into one entry per kernel, with its instruction
/// mix and KV loop (natural loops of the kernel's control-flow graph).
std::vector<AmdgpuResources> parseAmdgpuResources(llvm::StringRef assembly);

/// Bytes per lane an LDS read or write moves (`ds_read2_b64`: 2 x 8), from
/// its mnemonic; 0 for other instructions.
int64_t ldsBytesPerLane(llvm::StringRef mnemonic);

} // namespace mlir::fa

#endif // FA_COMPILER_TARGETS_GFX906_LOOP_ANALYSIS_H
