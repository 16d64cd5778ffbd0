//===- Codegen.h - LLVM dialect -> code objects -----------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The last step of every target that goes through LLVM: translate the
// LLVM-dialect module to LLVM IR, optimise it, run the target's backend
// in-process and link the result with ld.lld. Targets differ only in the
// target machine (triple, CPU) and the link flags.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_TARGETS_CODEGEN_H
#define FA_COMPILER_TARGETS_CODEGEN_H

#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace mlir::fa {

/// The target machine of an fa target with an LLVM backend: "host"
/// (x86-64, generic CPU, PIC) or "gfx906" (amdgcn-amd-amdhsa).
llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createTargetMachine(llvm::StringRef target);

/// Translates an LLVM-dialect module to LLVM IR for `tm` and runs the -O3
/// pipeline on it; `prepare` (optional) edits the IR before optimisation.
llvm::Expected<std::unique_ptr<llvm::Module>>
translateAndOptimize(ModuleOp module, llvm::LLVMContext &context,
                     llvm::TargetMachine &tm,
                     llvm::function_ref<void(llvm::Module &)> prepare = {});

/// Runs a new-pass-manager module pipeline for `tm` on `module`: the
/// textual `pipeline` ("amdgpu-lower-module-lds"), or -O3 when empty.
llvm::Error runModulePipeline(llvm::Module &module, llvm::TargetMachine &tm,
                              llvm::StringRef pipeline = "");

/// Runs the backend: an ELF object, or assembly text.
llvm::Error emitCode(llvm::Module &module, llvm::TargetMachine &tm,
                     bool assembly, std::string &out);

/// Links an object file into a shared object with ld.lld; `target` picks
/// the flags (host: libm and libgcc_s as DT_NEEDED).
llvm::Error linkSharedObject(llvm::StringRef target, llvm::StringRef objectPath,
                             llvm::StringRef outputPath);

} // namespace mlir::fa

#endif // FA_COMPILER_TARGETS_CODEGEN_H
