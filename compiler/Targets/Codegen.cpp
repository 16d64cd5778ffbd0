//===- Codegen.cpp - LLVM dialect -> code objects -------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file turns a target's LLVM-dialect module into a loadable code
// object: MLIR -> LLVM IR translation, the -O3 pipeline, the backend
// in-process, and ld.lld (from the same LLVM) for the final link.
//
// host:   x86_64-unknown-linux-gnu, x86-64-v3 (AVX2, FMA, F16C: every
//         x86-64 CPU since 2013; the emulator's f16 conversions become
//         single instructions instead of libgcc calls, about a quarter of
//         an f16 case's time; the runtime refuses to load it on an older
//         CPU); a shared object for the emulator.
// gfx906: amdgcn-amd-amdhsa, code object v4 (ROCm 5.x and 6.x load it); a
//         shared object, i.e. an .hsaco.
// sm_90:  nvptx64-nvidia-cuda; the backend's assembly is the PTX.
//
//===----------------------------------------------------------------------===//

#include "compiler/Targets/Codegen.h"

#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/NVVM/NVVMToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/ROCDL/ROCDLToLLVMIRTranslation.h"
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

using namespace mlir;

namespace {
struct TargetSpec {
  const char *name, *triple, *cpu;
};
} // namespace

static const TargetSpec kSpecs[] = {
    {"host", "x86_64-unknown-linux-gnu", "x86-64-v3"},
    {"gfx906", "amdgcn-amd-amdhsa", "gfx906"},
    {"sm_90", "nvptx64-nvidia-cuda", "sm_90"},
    {"sm_80", "nvptx64-nvidia-cuda", "sm_80"},
};

static void initializeBackends() {
  static bool done = [] {
    LLVMInitializeX86TargetInfo();
    LLVMInitializeX86Target();
    LLVMInitializeX86TargetMC();
    LLVMInitializeX86AsmPrinter();
    LLVMInitializeAMDGPUTargetInfo();
    LLVMInitializeAMDGPUTarget();
    LLVMInitializeAMDGPUTargetMC();
    LLVMInitializeAMDGPUAsmPrinter();
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
    return true;
  }();
  (void)done;
}

llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
fa::createTargetMachine(llvm::StringRef target) {
  initializeBackends();
  const TargetSpec *spec = nullptr;
  for (const TargetSpec &s : kSpecs)
    if (target == s.name)
      spec = &s;
  if (!spec)
    return llvm::createStringError("no LLVM backend for target '" +
                                   target.str() + "'");
  std::string error;
  llvm::Triple triple(spec->triple);
  const llvm::Target *t = llvm::TargetRegistry::lookupTarget(triple, error);
  if (!t)
    return llvm::createStringError("no backend for " + triple.str() + ": " +
                                   error);
  llvm::TargetOptions options;
  std::unique_ptr<llvm::TargetMachine> tm(
      t->createTargetMachine(triple, spec->cpu, "", options, llvm::Reloc::PIC_,
                             std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  if (!tm)
    return llvm::createStringError("cannot create the target machine for " +
                                   triple.str());
  return tm;
}

llvm::Error fa::runModulePipeline(llvm::Module &module, llvm::TargetMachine &tm,
                                  llvm::StringRef pipeline) {
  llvm::LoopAnalysisManager lam;
  llvm::FunctionAnalysisManager fam;
  llvm::CGSCCAnalysisManager cgam;
  llvm::ModuleAnalysisManager mam;
  llvm::PassBuilder pb(&tm);
  pb.registerModuleAnalyses(mam);
  pb.registerCGSCCAnalyses(cgam);
  pb.registerFunctionAnalyses(fam);
  pb.registerLoopAnalyses(lam);
  pb.crossRegisterProxies(lam, fam, cgam, mam);
  llvm::ModulePassManager mpm;
  if (pipeline.empty())
    mpm = pb.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3);
  else if (llvm::Error e = pb.parsePassPipeline(mpm, pipeline))
    return e;
  mpm.run(module, mam);
  return llvm::Error::success();
}

llvm::Expected<std::unique_ptr<llvm::Module>>
fa::translateAndOptimize(ModuleOp module, llvm::LLVMContext &context,
                         llvm::TargetMachine &tm,
                         llvm::function_ref<void(llvm::Module &)> prepare) {
  registerBuiltinDialectTranslation(*module.getContext());
  registerLLVMDialectTranslation(*module.getContext());
  registerROCDLDialectTranslation(*module.getContext());
  registerNVVMDialectTranslation(*module.getContext());
  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, context, "fa");
  if (!llvmModule)
    return llvm::createStringError("translation to LLVM IR failed");
  llvmModule->setTargetTriple(tm.getTargetTriple());
  llvmModule->setDataLayout(tm.createDataLayout());
  if (tm.getTargetTriple().isAMDGCN())
    llvmModule->addModuleFlag(llvm::Module::Error, "amdhsa_code_object_version",
                              400);
  if (prepare)
    prepare(*llvmModule);

  if (llvm::Error e = runModulePipeline(*llvmModule, tm))
    return std::move(e);
  return llvmModule;
}

llvm::Error fa::emitCode(llvm::Module &module, llvm::TargetMachine &tm,
                         bool assembly, std::string &out) {
  llvm::raw_string_ostream os(out);
  llvm::buffer_ostream buffered(os);
  llvm::legacy::PassManager pm;
  if (tm.addPassesToEmitFile(pm, buffered, nullptr,
                             assembly ? llvm::CodeGenFileType::AssemblyFile
                                      : llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("the backend cannot emit this file type");
  pm.run(module);
  return llvm::Error::success();
}

llvm::Error fa::linkSharedObject(llvm::StringRef target,
                                 llvm::StringRef objectPath,
                                 llvm::StringRef outputPath) {
  auto lld = llvm::sys::findProgramByName("ld.lld", {LLD_BIN_DIR});
  if (!lld)
    lld = llvm::sys::findProgramByName("ld.lld");
  if (!lld)
    return llvm::createStringError("ld.lld not found (install lld-22)");
  llvm::SmallVector<llvm::StringRef> args = {*lld, "-shared", "-o", outputPath,
                                             objectPath};
  // Host: exp2f/fmaf come from libm, the f16 conversions from libgcc_s;
  // name them so that the object loads into any process. The bf16
  // conversions (__truncsfbf2: not in Debian 12's libgcc_s) are linked in
  // statically from compiler-rt's builtins.
  if (target == "host") {
    args.append({"-L/lib/x86_64-linux-gnu", "-L/usr/lib/x86_64-linux-gnu",
                 "-l:libm.so.6", "-l:libgcc_s.so.1"});
    if (llvm::sys::fs::exists(FA_CLANG_RT_BUILTINS))
      args.push_back(FA_CLANG_RT_BUILTINS);
  }
  std::string message;
  int rc =
      llvm::sys::ExecuteAndWait(*lld, args, std::nullopt, {}, 0, 0, &message);
  if (rc != 0)
    return llvm::createStringError("ld.lld failed (exit " + std::to_string(rc) +
                                   ")" +
                                   (message.empty() ? "" : ": " + message));
  return llvm::Error::success();
}
