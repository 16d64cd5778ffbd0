//===- HostCodegen.cpp - LLVM dialect -> x86-64 shared object -------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file turns the host target's LLVM-dialect module into a loadable
// shared object: MLIR -> LLVM IR translation, the -O2 pipeline, the x86-64
// backend in-process, and ld.lld (from the same LLVM) for the final link.
// The CPU is generic x86-64 so that the object runs on any x86-64 machine.
//
//===----------------------------------------------------------------------===//

#include "compiler/HostCodegen.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

using namespace mlir;

static const char *kHostTriple = "x86_64-unknown-linux-gnu";

static llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
createHostTargetMachine() {
  LLVMInitializeX86TargetInfo();
  LLVMInitializeX86Target();
  LLVMInitializeX86TargetMC();
  LLVMInitializeX86AsmPrinter();
  std::string error;
  llvm::Triple triple(kHostTriple);
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return llvm::createStringError("no x86-64 backend: " + error);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(target->createTargetMachine(
      triple, "x86-64", "", options, llvm::Reloc::PIC_, std::nullopt,
      llvm::CodeGenOptLevel::Aggressive));
  if (!tm)
    return llvm::createStringError("cannot create the x86-64 target machine");
  return tm;
}

llvm::Expected<std::unique_ptr<llvm::Module>>
fa::translateAndOptimizeForHost(ModuleOp module, llvm::LLVMContext &context) {
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "fa_host");
  if (!llvmModule)
    return llvm::createStringError("translation to LLVM IR failed");
  auto tm = createHostTargetMachine();
  if (!tm)
    return tm.takeError();
  llvmModule->setTargetTriple(llvm::Triple(kHostTriple));
  llvmModule->setDataLayout((*tm)->createDataLayout());

  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(tm->get());
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm =
      pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O2);
  mpm.run(*llvmModule, mam);
  return llvmModule;
}

llvm::Error fa::emitHostObject(llvm::Module &module, std::string &bytes) {
  auto tm = createHostTargetMachine();
  if (!tm)
    return tm.takeError();
  llvm::raw_string_ostream os(bytes);
  llvm::buffer_ostream out(os);
  llvm::legacy::PassManager pm;
  if ((*tm)->addPassesToEmitFile(pm, out, nullptr,
                                 llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("the x86-64 backend cannot emit objects");
  pm.run(module);
  return llvm::Error::success();
}

llvm::Error fa::linkSharedObject(llvm::StringRef objectPath,
                                 llvm::StringRef outputPath) {
  auto lld = llvm::sys::findProgramByName("ld.lld", {LLD_BIN_DIR});
  if (!lld)
    lld = llvm::sys::findProgramByName("ld.lld");
  if (!lld)
    return llvm::createStringError("ld.lld not found (install lld-22)");
  // exp2f/fmaf come from libm, the f16 conversions from libgcc_s: name them
  // so that the object loads into any process.
  llvm::SmallVector<llvm::StringRef> args = {*lld,
                                             "-shared",
                                             "-o",
                                             outputPath,
                                             objectPath,
                                             "-L/lib/x86_64-linux-gnu",
                                             "-L/usr/lib/x86_64-linux-gnu",
                                             "-l:libm.so.6",
                                             "-l:libgcc_s.so.1"};
  std::string message;
  int rc =
      llvm::sys::ExecuteAndWait(*lld, args, std::nullopt, {}, 0, 0, &message);
  if (rc != 0)
    return llvm::createStringError("ld.lld failed (exit " + std::to_string(rc) +
                                   ")" +
                                   (message.empty() ? "" : ": " + message));
  return llvm::Error::success();
}
