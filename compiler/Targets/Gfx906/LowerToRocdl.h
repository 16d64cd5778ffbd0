//===- LowerToRocdl.h - gfx906: gpu -> ROCDL --------------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// gfx906 (AMD MI50/MI60): the Level 2 gpu.module goes through the upstream
// ROCDL lowering to LLVM; Targets/Codegen.h runs the AMDGPU backend and
// ld.lld to an .hsaco. The other files of this folder read the backend's
// output back: CodeObject.h (metadata), LoopAnalysis.h (assembly) and
// Mi50Model.h (occupancy and the throughput estimate).
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_TARGETS_GFX906_LOWER_TO_ROCDL_H
#define FA_COMPILER_TARGETS_GFX906_LOWER_TO_ROCDL_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"

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

} // namespace mlir::fa

#endif // FA_COMPILER_TARGETS_GFX906_LOWER_TO_ROCDL_H
