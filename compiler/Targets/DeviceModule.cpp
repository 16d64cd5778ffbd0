//===- DeviceModule.cpp - Helpers shared by the GPU target lowerings ------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements extractDeviceModule (DeviceModule.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/Targets/DeviceModule.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

using namespace mlir;

FailureOr<OwningOpRef<ModuleOp>>
fa::extractDeviceModule(ModuleOp lowered, ModuleOp original, StringRef target) {
  OwningOpRef<ModuleOp> device = ModuleOp::create(original.getLoc());
  bool found = false;
  for (auto gm : lowered.getOps<gpu::GPUModuleOp>()) {
    found = true;
    for (NamedAttribute a : gm->getDiscardableAttrs())
      if (a.getName() == LLVM::LLVMDialect::getDataLayoutAttrName())
        (*device)->setAttr(a.getName(), a.getValue());
    OpBuilder b = OpBuilder::atBlockEnd(device->getBody());
    for (Operation &op : gm.getBody()->without_terminator())
      b.clone(op);
  }
  if (!found)
    return original.emitError() << "no gpu.module to compile for " << target,
           failure();
  return device;
}
