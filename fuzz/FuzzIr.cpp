//===- FuzzIr.cpp - Fuzz target: parse, verify and compile fa IR ----------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The input is MLIR text. It is parsed with the fa dialect registry and
// verified; a module that verifies is compiled for each target (host,
// gfx906, sm_90) the way `fac` does it: the kernel pipeline (fa-fuse ...
// fa-lower-to-gpu), the kernels' launch facts, the target's lowering to the
// LLVM dialect (fa-gpu-to-host, ROCDL, NVVM) and, with FA_FUZZ_IR_LLVM=1 in
// the environment, the translation to LLVM IR with -O3 (slow: off by
// default). Every error must be a diagnostic, never a crash; diagnostics are
// swallowed.
//
// A first line `// fa-fuzz: KEY=VALUE ...` sets pipeline options (block-m,
// block-n, waves, stages, kv-shared, widen-lds, pad-lds, pair-rhs,
// fetch-ahead, allow-bf16, fuse), as fac's flags do, so the fuzzer also
// explores tile configurations. It is an MLIR comment, so the rest parses
// as usual.
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/KernelInfo.h"
#include "compiler/Driver/Pipelines.h"
#include "compiler/Targets/Codegen.h"
#include "compiler/Targets/Gfx906/LowerToRocdl.h"
#include "compiler/Targets/Host/HostTarget.h"
#include "compiler/Targets/Nvptx/NvptxTarget.h"
#include "compiler/Transforms/Passes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"
#include "llvm/Target/TargetMachine.h"

#include <cstdint>
#include <cstdlib>
#include <string>

using namespace mlir;

/// Applies a `// fa-fuzz: KEY=VALUE ...` first line to `options`.
static void parseOptionLine(llvm::StringRef text, fa::PipelineOptions &o) {
  if (!text.consume_front("// fa-fuzz:"))
    return;
  llvm::StringRef line = text.take_until([](char c) { return c == '\n'; });
  llvm::SmallVector<llvm::StringRef> words;
  line.split(words, ' ', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef word : words) {
    auto [key, value] = word.split('=');
    int64_t n = 0;
    bool isInt = !value.getAsInteger(10, n);
    bool flag = value == "true" || value == "1" || value == "on";
    if (key == "block-m" && isInt)
      o.blockM = n;
    else if (key == "block-n" && isInt)
      o.blockN = n;
    else if (key == "waves" && isInt)
      o.waves = n;
    else if (key == "stages" && isInt)
      o.stages = n;
    else if (key == "kv-shared")
      o.kvShared = value.str();
    else if (key == "widen-lds")
      o.widenLds = value.str();
    else if (key == "fetch-ahead")
      o.fetchAhead = value.str();
    else if (key == "pad-lds")
      o.padLds = flag;
    else if (key == "pair-rhs")
      o.pairRhs = flag;
    else if (key == "allow-bf16")
      o.allowBf16 = flag;
    else if (key == "fuse")
      o.fuse = flag;
  }
}

static const DialectRegistry &registry() {
  static DialectRegistry *r = [] {
    auto *r = new DialectRegistry;
    fa::registerFaDialects(*r);
    return r;
  }();
  return *r;
}

/// fac's backend step for `target`, on a module at Level 2.
static LogicalResult lowerForTarget(ModuleOp module, llvm::StringRef target) {
  OwningOpRef<ModuleOp> lowered;
  if (target == "host") {
    if (failed(fa::lowerToHost(module)))
      return failure();
    lowered = module.clone();
  } else if (target == "sm_90") {
    FailureOr<OwningOpRef<ModuleOp>> nvvm = fa::lowerToNvvm(module, 32);
    if (failed(nvvm))
      return failure();
    lowered = std::move(*nvvm);
  } else {
    FailureOr<OwningOpRef<ModuleOp>> rocdl =
        fa::lowerToRocdl(module, 32, /*dot2=*/true);
    if (failed(rocdl))
      return failure();
    lowered = std::move(*rocdl);
  }
  static bool toLlvm = [] {
    const char *e = std::getenv("FA_FUZZ_IR_LLVM");
    return e && *e == '1';
  }();
  if (!toLlvm)
    return success();
  auto tm = fa::createTargetMachine(target);
  if (!tm) {
    llvm::consumeError(tm.takeError());
    return failure();
  }
  llvm::LLVMContext llvmContext;
  auto llvmModule = fa::translateAndOptimize(*lowered, llvmContext, **tm);
  if (!llvmModule) {
    llvm::consumeError(llvmModule.takeError());
    return failure();
  }
  return success();
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  // Large inputs only slow the search down; the pipeline's cost grows with
  // the module, not its findings.
  if (size > 16384)
    return -1;
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);

  MLIRContext context(registry(), MLIRContext::Threading::DISABLED);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  ScopedDiagnosticHandler quiet(&context,
                                [](Diagnostic &) { return success(); });

  // Parsing verifies.
  OwningOpRef<ModuleOp> module =
      parseSourceString<ModuleOp>(text, ParserConfig(&context));
  if (!module)
    return 0;

  fa::PipelineOptions options;
  parseOptionLine(text, options);
  for (const char *target : {"host", "gfx906", "sm_90"}) {
    options.target = target;
    OwningOpRef<ModuleOp> copy = module->clone();
    PassManager pm(&context);
    fa::buildKernelPipeline(pm, options);
    if (failed(pm.run(*copy)))
      continue;
    FailureOr<std::vector<fa::KernelInfo>> kernels = fa::collectKernels(*copy);
    if (failed(kernels) || kernels->empty())
      continue;
    (void)lowerForTarget(*copy, target);
  }
  return 0;
}
