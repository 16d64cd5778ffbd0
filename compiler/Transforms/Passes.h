//===- Passes.h - fa transformation passes ----------------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_TRANSFORMS_PASSES_H
#define FA_COMPILER_TRANSFORMS_PASSES_H

#include "dialect/FaOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/Pass/Pass.h"

namespace mlir {
class RewriterBase;
namespace fa {

#define GEN_PASS_DECL
#include "compiler/Transforms/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/Transforms/Passes.h.inc"

/// Replaces every matmul -> softmax -> matmul chain under `root` that forms
/// attention with one fa.attention. Returns the number of chains fused.
/// With `remarks`, each declined chain gets a remark saying why.
unsigned fuseAttentionChains(RewriterBase &rewriter, Operation *root,
                             bool remarks);

} // namespace fa
} // namespace mlir

#endif // FA_COMPILER_TRANSFORMS_PASSES_H
