//===- DeviceModule.h - Helpers shared by the GPU target lowerings -*- C++
//-*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// What the gfx906 and NVIDIA lowerings do alike: replace f32 math ops by a
// target instruction one element at a time, and take the lowered kernels
// out of their gpu.modules into a builtin.module for translation to LLVM IR.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_TARGETS_DEVICE_MODULE_H
#define FA_COMPILER_TARGETS_DEVICE_MODULE_H

#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/IR/TypeUtilities.h"

namespace mlir::fa {

/// Replaces every f32 `MathOp` (scalar or vector) below `root` by
/// `scalarOp(builder, loc, x)` applied to each element.
template <typename MathOp>
void replaceF32PerElement(
    Operation *root,
    function_ref<Value(OpBuilder &, Location, Value)> scalarOp) {
  SmallVector<MathOp> ops;
  root->walk([&](MathOp op) {
    if (getElementTypeOrSelf(op.getType()).isF32())
      ops.push_back(op);
  });
  for (MathOp op : ops) {
    OpBuilder b(op);
    Location loc = op.getLoc();
    Value x = op.getOperand();
    Value result;
    if (auto vt = dyn_cast<VectorType>(x.getType())) {
      SmallVector<Value> elements;
      for (int64_t i = 0; i < vt.getNumElements(); ++i)
        elements.push_back(scalarOp(
            b, loc,
            vector::ExtractOp::create(b, loc, x, ArrayRef<int64_t>{i})));
      result = vector::FromElementsOp::create(b, loc, vt, elements);
    } else {
      result = scalarOp(b, loc, x);
    }
    op.replaceAllUsesWith(result);
    op.erase();
  }
}

/// The contents of `lowered`'s gpu.modules (and their LLVM data layout) as
/// one builtin.module; an error at `original` naming `target` if there is
/// no gpu.module.
FailureOr<OwningOpRef<ModuleOp>>
extractDeviceModule(ModuleOp lowered, ModuleOp original, StringRef target);

} // namespace mlir::fa

#endif // FA_COMPILER_TARGETS_DEVICE_MODULE_H
