//===- HostTarget.h - The host emulation target -----------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The host target runs the very kernel the GPU targets get in the runtime's
// emulator: the Level 2 gpu.module is lowered by fa-gpu-to-host
// (Lowering/GpuToHost.cpp) to x86-64 functions in the LLVM dialect;
// Targets/Codegen.h runs the X86 backend and ld.lld to a shared object.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_TARGETS_HOST_HOST_TARGET_H
#define FA_COMPILER_TARGETS_HOST_HOST_TARGET_H

#include "mlir/IR/BuiltinOps.h"

namespace mlir::fa {

/// Lowers `module`'s kernels in place to the LLVM dialect for the host
/// emulator (one exported `<kernel>_host` entry point each, KernelAbi.h),
/// ready for translation.
LogicalResult lowerToHost(ModuleOp module);

} // namespace mlir::fa

#endif // FA_COMPILER_TARGETS_HOST_HOST_TARGET_H
