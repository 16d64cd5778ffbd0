//===- Passes.h - fa transformation passes ----------------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_TRANSFORMS_PASSES_H
#define FA_COMPILER_TRANSFORMS_PASSES_H

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
