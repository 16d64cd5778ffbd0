//===- HostTarget.cpp - The host emulation target -------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file runs fa-gpu-to-host on a Level 2 module: the host target's
// counterpart of lowerToRocdl and lowerToNvvm.
//
//===----------------------------------------------------------------------===//

#include "compiler/Targets/Host/HostTarget.h"
#include "compiler/Lowering/Passes.h"

#include "mlir/Pass/PassManager.h"

using namespace mlir;

LogicalResult fa::lowerToHost(ModuleOp module) {
  PassManager pm(module.getContext());
  pm.addPass(createFaGpuToHostPass());
  return pm.run(module);
}
