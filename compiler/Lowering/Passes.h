//===- Passes.h - fa lowering passes ----------------------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// fa-lower-to-gpu (memory level -> gpu dialect) and fa-gpu-to-host (gpu
// dialect -> x86-64 functions for the host emulator), declared in
// Lowering/Passes.td.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_LOWERING_PASSES_H
#define FA_COMPILER_LOWERING_PASSES_H


#include "mlir/Pass/Pass.h"

namespace mlir::fa {

#define GEN_PASS_DECL
#include "compiler/Lowering/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Lowering/Passes.h.inc"

} // namespace mlir::fa

#endif // FA_COMPILER_LOWERING_PASSES_H
