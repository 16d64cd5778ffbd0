//===- fa-opt.cpp - mlir-opt with the fa dialect and passes ---------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Pipelines.h"

#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/raw_ostream.h"

#include <exception>

int main(int argc, char **argv) {
  // Nothing escapes main: an exception from our code (the LLVM libraries are
  // built without them) is reported, not an abort.
  try {
    mlir::DialectRegistry registry;
    mlir::fa::registerFaDialects(registry);
    mlir::registerCanonicalizerPass();
    mlir::registerCSEPass();
    mlir::fa::registerFaPasses();
    mlir::fa::registerFaPipelines();
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, "fa optimizer driver\n", registry));
  } catch (const std::exception &e) {
    llvm::errs() << "fa-opt: internal error: " << e.what() << "\n";
  } catch (...) {
    llvm::errs() << "fa-opt: internal error: unknown exception\n";
  }
  return 1;
}
