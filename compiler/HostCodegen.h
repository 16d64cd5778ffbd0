//===- HostCodegen.h - LLVM dialect -> x86-64 shared object -----*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_HOSTCODEGEN_H
#define FA_COMPILER_HOSTCODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
} // namespace llvm

namespace mlir::fa {

/// Translates an LLVM-dialect module to LLVM IR for the host (x86-64,
/// generic CPU, PIC) and optimises it at -O2.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateAndOptimizeForHost(ModuleOp module, llvm::LLVMContext &context);

/// Emits `module` as an ELF object into `objectBytes`.
llvm::Error emitHostObject(llvm::Module &module, std::string &objectBytes);

/// Links an object file into a shared object with ld.lld.
llvm::Error linkSharedObject(llvm::StringRef objectPath,
                             llvm::StringRef outputPath);

} // namespace mlir::fa

#endif // FA_COMPILER_HOSTCODEGEN_H
