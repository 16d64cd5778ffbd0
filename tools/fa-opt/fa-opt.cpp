//===- fa-opt.cpp - mlir-opt with the fa dialect and passes ---------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/Pipelines.h"

#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  mlir::fa::registerFaDialects(registry);
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::fa::registerFaPasses();
  mlir::fa::registerFaPipelines();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "fa optimizer driver\n", registry));
}
