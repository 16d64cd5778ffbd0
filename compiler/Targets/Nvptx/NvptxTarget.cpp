//===- NvptxTarget.cpp - The sm_90 / sm_80 backend ------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file lowers Level 2 kernels for NVIDIA GPUs:
//
//   1. in each gpu.module: f32 math.exp2 / math.log2 become the NVVM
//      intrinsics (ex2.approx / lg2.approx in PTX) instead of libdevice
//      calls; scf -> cf; convert-gpu-to-nvvm;
//   2. the gpu.module's contents become a builtin.module for translation;
//   3. after translation, shared memory is made dynamic
//      (useDynamicSharedMemory) so that D=128 tiles above 48 KiB load;
//   4. the NVPTX backend writes PTX (Codegen.h) and ptxas, when present,
//      assembles it and reports the resources.
//
//===----------------------------------------------------------------------===//

#include "compiler/Targets/Nvptx/NvptxTarget.h"
#include "compiler/Targets/DeviceModule.h"

#include "mlir/Conversion/LLVMCommon/TypeConverter.h"
#include "mlir/Conversion/NVGPUToNVVM/NVGPUToNVVM.h"
#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/DialectConversion.h"
#include "mlir/Transforms/Passes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Function.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/Instruction.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <algorithm>
#include <cstdlib>
#include <functional>

using namespace mlir;

/// A call of the NVVM intrinsic `name` on one f32 value. (llvm.exp2 would
/// do, but the NVVM lowering marks it illegal to route math through
/// libdevice.)
static std::function<Value(OpBuilder &, Location, Value)>
intrinsic(StringRef name) {
  return [name](OpBuilder &b, Location loc, Value x) -> Value {
    return LLVM::CallIntrinsicOp::create(b, loc, b.getF32Type(),
                                         b.getStringAttr(name), ValueRange{x})
        .getResult(0);
  };
}

/// The nvgpu ops of `gm` (the cp.async of fa-double-buffer's fetches) to
/// NVVM, with the index width the rest of the lowering uses: the memref
/// operands meet convert-gpu-to-nvvm's descriptors through casts that
/// reconcile afterwards.
static LogicalResult lowerNvgpu(gpu::GPUModuleOp gm, unsigned indexBits) {
  bool any = false;
  gm.walk([&](Operation *op) {
    any |= isa<nvgpu::NVGPUDialect>(op->getDialect());
  });
  if (!any)
    return success();
  MLIRContext *ctx = gm.getContext();
  LowerToLLVMOptions options(ctx);
  options.overrideIndexBitwidth(indexBits);
  LLVMTypeConverter converter(ctx, options);
  nvgpu::populateCommonGPUTypeAndAttributeConversions(converter);
  // Async tokens are group numbers (i32), as upstream's pass converts them.
  converter.addConversion([](nvgpu::DeviceAsyncTokenType type) -> Type {
    return IntegerType::get(type.getContext(), 32);
  });
  RewritePatternSet patterns(ctx);
  populateNVGPUToNVVMConversionPatterns(converter, patterns);
  ConversionTarget target(*ctx);
  target.addLegalDialect<LLVM::LLVMDialect, NVVM::NVVMDialect>();
  target.addIllegalDialect<nvgpu::NVGPUDialect>();
  target.markUnknownOpDynamicallyLegal([](Operation *) { return true; });
  return applyPartialConversion(gm, target, std::move(patterns));
}

FailureOr<OwningOpRef<ModuleOp>> fa::lowerToNvvm(ModuleOp module,
                                                 unsigned indexBits) {
  OwningOpRef<ModuleOp> work = module.clone();
  for (auto gm : work->getOps<gpu::GPUModuleOp>()) {
    replaceF32PerElement<math::Exp2Op>(gm,
                                       intrinsic("llvm.nvvm.ex2.approx.f32"));
    replaceF32PerElement<math::Log2Op>(gm, intrinsic("llvm.nvvm.lg2.approx.f"));
    // math.fma would become __nv_fmaf; llvm.fma is a single fma.rn.
    SmallVector<math::FmaOp> fmas;
    gm.walk([&](math::FmaOp op) { fmas.push_back(op); });
    for (math::FmaOp op : fmas) {
      OpBuilder b(op);
      op.replaceAllUsesWith(
          LLVM::FMAOp::create(b, op.getLoc(), op.getA(), op.getB(), op.getC())
              .getResult());
      op.erase();
    }
    // arith.maxnumf would become __nv_fmaxf; llvm.maxnum is max.f32.
    SmallVector<arith::MaxNumFOp> maxes;
    gm.walk([&](arith::MaxNumFOp op) { maxes.push_back(op); });
    for (arith::MaxNumFOp op : maxes) {
      OpBuilder b(op);
      op.replaceAllUsesWith(
          LLVM::MaxNumOp::create(b, op.getLoc(), op.getLhs(), op.getRhs())
              .getResult());
      op.erase();
    }
  }
  for (auto gm : work->getOps<gpu::GPUModuleOp>())
    if (failed(lowerNvgpu(gm, indexBits)))
      return failure();
  PassManager pm(module.getContext());
  OpPassManager &gpu = pm.nest<gpu::GPUModuleOp>();
  gpu.addPass(createSCFToControlFlowPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = indexBits;
  nvvm.allowedDialects = {"arith",  "cf",     "func", "math",
                          "memref", "vector", "ub"};
  gpu.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  gpu.addPass(createReconcileUnrealizedCastsPass());
  if (failed(pm.run(*work)))
    return failure();

  return extractDeviceModule(*work, module, "NVPTX");
}

/// The functions whose instructions use `c`, through constant expressions,
/// and (transitively) the functions that call them.
static void usersOf(llvm::Value *c,
                    llvm::SmallPtrSetImpl<llvm::Function *> &functions) {
  for (llvm::User *u : c->users()) {
    if (auto *i = llvm::dyn_cast<llvm::Instruction>(u)) {
      llvm::Function *f = i->getFunction();
      if (functions.insert(f).second)
        usersOf(f, functions);
    } else if (llvm::isa<llvm::Constant>(u)) {
      usersOf(u, functions);
    }
  }
}

std::map<std::string, int64_t>
fa::useDynamicSharedMemory(llvm::Module &module) {
  constexpr unsigned kShared = 3;
  SmallVector<llvm::GlobalVariable *> shared;
  for (llvm::GlobalVariable &g : module.globals())
    if (g.getAddressSpace() == kShared && !g.isDeclaration())
      shared.push_back(&g);
  std::map<std::string, int64_t> bytes;
  if (shared.empty())
    return bytes;
  llvm::LLVMContext &ctx = module.getContext();
  const llvm::DataLayout &dl = module.getDataLayout();
  auto *i8 = llvm::Type::getInt8Ty(ctx);
  auto *base = new llvm::GlobalVariable(
      module, llvm::ArrayType::get(i8, 0), /*isConstant=*/false,
      llvm::GlobalValue::ExternalLinkage, nullptr, "fa_dynamic_shared", nullptr,
      llvm::GlobalValue::NotThreadLocal, kShared);
  base->setAlignment(llvm::Align(16));
  for (llvm::GlobalVariable *g : shared) {
    llvm::SmallPtrSet<llvm::Function *, 4> functions;
    usersOf(g, functions);
    // After every global already placed for a function that uses this one.
    uint64_t offset = 0;
    for (llvm::Function *f : functions)
      offset = std::max<uint64_t>(offset, bytes[f->getName().str()]);
    uint64_t align = std::max<uint64_t>(16, g->getAlign().valueOrOne().value());
    offset = llvm::alignTo(offset, align);
    llvm::Constant *addr = llvm::ConstantExpr::getInBoundsGetElementPtr(
        i8, base, llvm::ConstantInt::get(llvm::Type::getInt64Ty(ctx), offset));
    offset += dl.getTypeAllocSize(g->getValueType());
    for (llvm::Function *f : functions)
      bytes[f->getName().str()] = offset;
    g->replaceAllUsesWith(addr);
    g->eraseFromParent();
  }
  return bytes;
}

std::string fa::findPtxas() {
  // FA_PTXAS names the assembler; "none" means there is none.
  if (const char *env = std::getenv("FA_PTXAS"))
    return llvm::StringRef(env) == "none" ? "" : env;
  if (auto p = llvm::sys::findProgramByName("ptxas"))
    return *p;
  if (auto p = llvm::sys::findProgramByName("ptxas", {"/usr/local/cuda/bin"}))
    return *p;
  return "";
}

/// The integer before `suffix` at the end of `text`'s word run, e.g.
/// numberBefore("Used 128 registers", " registers") == 128.
static int64_t numberBefore(llvm::StringRef line, llvm::StringRef suffix) {
  size_t at = line.find(suffix);
  if (at == llvm::StringRef::npos)
    return 0;
  llvm::StringRef head = line.take_front(at).rtrim();
  size_t space = head.find_last_of(" ,:");
  int64_t v = 0;
  if (head.substr(space == llvm::StringRef::npos ? 0 : space + 1)
          .getAsInteger(10, v))
    return 0;
  return v;
}

std::vector<fa::PtxasResources> fa::parsePtxasReport(llvm::StringRef text) {
  std::vector<PtxasResources> kernels;
  llvm::SmallVector<llvm::StringRef> lines;
  text.split(lines, '\n');
  for (llvm::StringRef line : lines) {
    // ptxas info    : Compiling entry function 'name' for 'sm_90'
    size_t at = line.find("Compiling entry function '");
    if (at != llvm::StringRef::npos) {
      llvm::StringRef rest =
          line.drop_front(at + strlen("Compiling entry function '"));
      kernels.emplace_back();
      kernels.back().kernel = rest.take_until([](char c) { return c == '\''; });
      continue;
    }
    if (kernels.empty())
      continue;
    PtxasResources &k = kernels.back();
    if (line.contains("bytes stack frame")) {
      k.stackBytes = numberBefore(line, " bytes stack frame");
      k.spillStoreBytes = numberBefore(line, " bytes spill stores");
      k.spillLoadBytes = numberBefore(line, " bytes spill loads");
    }
    if (line.contains("Used ")) {
      k.registers = numberBefore(line, " registers");
      k.sharedBytes = numberBefore(line, " bytes smem");
    }
  }
  return kernels;
}

llvm::Error fa::assemblePtx(llvm::StringRef ptxas, llvm::StringRef ptx,
                            llvm::StringRef arch, std::string &cubin,
                            std::vector<PtxasResources> &resources) {
  llvm::SmallString<128> in, out, log;
  if (auto ec = llvm::sys::fs::createTemporaryFile("fac", "ptx", in))
    return llvm::createStringError("cannot create a temporary file: " +
                                   ec.message());
  llvm::FileRemover removeIn(in);
  if (auto ec = llvm::sys::fs::createTemporaryFile("fac", "cubin", out))
    return llvm::createStringError("cannot create a temporary file: " +
                                   ec.message());
  llvm::FileRemover removeOut(out);
  if (auto ec = llvm::sys::fs::createTemporaryFile("fac", "log", log))
    return llvm::createStringError("cannot create a temporary file: " +
                                   ec.message());
  llvm::FileRemover removeLog(log);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(in, ec);
    if (ec)
      return llvm::createStringError("cannot write " + in.str().str());
    os << ptx;
  }
  std::string archFlag = ("-arch=" + arch).str();
  llvm::SmallVector<llvm::StringRef> args = {ptxas, "-O3", "-v", archFlag,
                                             in,    "-o",  out};
  std::optional<llvm::StringRef> redirects[] = {std::nullopt, log, log};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects, 0, 0,
                                     &message);
  auto logText = llvm::MemoryBuffer::getFile(log);
  std::string report = logText ? (*logText)->getBuffer().str() : "";
  if (rc != 0)
    return llvm::createStringError("ptxas failed (exit " + std::to_string(rc) +
                                   ")" +
                                   (message.empty() ? "" : ": " + message) +
                                   (report.empty() ? "" : "\n" + report));
  auto bytes = llvm::MemoryBuffer::getFile(out);
  if (!bytes)
    return llvm::createStringError("cannot read ptxas output: " +
                                   bytes.getError().message());
  cubin = (*bytes)->getBuffer().str();
  resources = parsePtxasReport(report);
  return llvm::Error::success();
}

int64_t fa::nvidiaBlocksPerSm(const PtxasResources &r, int64_t threads,
                              int64_t sharedBytes) {
  // Registers are allocated per warp in units of 256.
  int64_t warps = (threads + 31) / 32;
  int64_t regsPerWarp =
      llvm::alignTo(std::max<int64_t>(r.registers, 1) * 32, 256);
  int64_t byRegs = 65536 / (regsPerWarp * warps);
  int64_t byThreads = 2048 / std::max<int64_t>(threads, 1);
  int64_t perBlockShared = sharedBytes + 1024; // the runtime's reservation
  int64_t byShared = sharedBytes ? (228 * 1024) / perBlockShared : 32;
  return std::min({byRegs, byThreads, byShared, int64_t(32)});
}
