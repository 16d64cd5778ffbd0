//===- fac.cpp - The fa compiler driver -----------------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// fac input.mlir --target=host|gfx906|sm_90 [-o out] [--emit=mlir|llvm|obj]
//
// Runs the kernel pipeline (fa-fuse, fa-tile, fa-lower-to-gpu) and the
// target's backend, and writes the code object with its manifest
// (`<out>.json`, docs/manifest.md).
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen.h"
#include "compiler/Gfx906Target.h"
#include "compiler/KernelInfo.h"
#include "compiler/Manifest.h"
#include "compiler/NvptxTarget.h"
#include "compiler/Passes.h"
#include "compiler/Pipelines.h"
#include "compiler/PlantedBugs.h"
#include "compiler/Target.h"

#include "fa/KernelAbi.h"

#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <exception>

using namespace mlir;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional, cl::desc("<input.mlir>"),
                                      cl::Required);
static cl::opt<std::string> outputFile("o", cl::desc("Output file"),
                                       cl::value_desc("path"), cl::init(""));
static cl::opt<std::string> target("target",
                                   cl::desc("gfx906, sm_90, sm_80 or host"),
                                   cl::init("gfx906"));
static cl::opt<std::string>
    emit("emit",
         cl::desc("Stop at: mlir (gpu dialect), llvm (LLVM IR), asm, obj "
                  "(object file), ptx or cubin (sm_90); default: the code "
                  "object (sm_90: a cubin when ptxas is found, else PTX)"),
         cl::init(""));
static cl::opt<int64_t> blockM("block-m", cl::desc("Rows of Q per workgroup"),
                               cl::init(0));
static cl::opt<int64_t> blockN("block-n", cl::desc("Rows of K/V per step"),
                               cl::init(0));
static cl::opt<int64_t> waves("waves", cl::desc("Waves per workgroup"),
                              cl::init(0));
static cl::opt<int64_t> stages(
    "stages",
    cl::desc("K/V pipeline stages: 2 double-buffers the K/V loop "
             "(fa-double-buffer), 1 does not, 0 (default) chooses 2 unless "
             "its registers would cost occupancy or tile size"),
    cl::init(0));
static cl::opt<std::string> fetchAhead(
    "fetch-ahead",
    cl::desc("With stages=2: next-block (K/V of block n+1 fetched during "
             "block n), in-block (only V fetched ahead, during Q·K^T), or "
             "auto (default: next-block; on gfx906 in-block where "
             "next-block spills, before smaller tiles are tried)"),
    cl::init("auto"));
static cl::opt<unsigned> indexBits(
    "index-bits",
    cl::desc("Width of index arithmetic in gfx906 and sm_90 kernels: 32 "
             "(default; the runtime refuses problems whose offsets do not "
             "fit) or 64"),
    cl::init(32));
static cl::opt<bool>
    padLds("pad-lds",
           cl::desc("Pad LDS rows by bank-conflict analysis (fa-pad-lds; "
                    "--pad-lds=false turns it off)"),
           cl::init(true));
static cl::opt<std::string> kvShared(
    "kv-shared",
    cl::desc("K and V blocks in one LDS slot: auto (default: where that "
             "gives the target's occupancy goal), on, off"),
    cl::init("auto"));
static cl::opt<bool> pairRhs(
    "pair-rhs",
    cl::desc("Store V pair-interleaved in LDS so that P·V reads two keys "
             "per 32-bit word (default; --pair-rhs=false for row-major)"),
    cl::init(true));
static cl::opt<std::string> widenLds(
    "widen-lds",
    cl::desc("Keep f16/bf16 tiles in LDS as f32, converted once by the copy: "
             "auto (default: on for sm_90/sm_80), on, off"),
    cl::init("auto"));
static cl::opt<std::string> dot2(
    "dot2",
    cl::desc("gfx906: v_dot2_f32_f16 for the Q·K^T products: auto (default: "
             "unless it costs waves per SIMD, judged by the backend), on, off"),
    cl::init("auto"));
static cl::opt<bool> allowBf16("allow-bf16", cl::desc("Accept emulated bf16"),
                               cl::init(false));
static cl::opt<bool> report("report",
                            cl::desc("Print the tile config and LDS budget"),
                            cl::init(false));

static cl::opt<std::string>
    testPlantBug("test-plant-bug",
                 cl::desc("Test only: plant a known bug in the kernel "
                          "(compiler/PlantedBugs.h) to check that tests "
                          "catch it"),
                 cl::value_desc("name"), cl::init(""), cl::Hidden);

static cl::opt<bool> testListPlantedBugs(
    "test-list-planted-bugs",
    cl::desc("Test only: print the names of the plantable bugs and exit"),
    cl::init(false), cl::Hidden);

/// NVIDIA targets: PTX from the NVPTX backend, a cubin from ptxas.
static bool isNvidia(llvm::StringRef t) { return t.starts_with("sm_"); }

static int fail(const llvm::Twine &message) {
  llvm::errs() << "fac: error: " << message << "\n";
  return 1;
}

static int writeFile(llvm::StringRef path, llvm::StringRef bytes) {
  std::string error;
  auto out = openOutputFile(path, &error);
  if (!out)
    return fail(error);
  out->os() << bytes;
  out->keep();
  return 0;
}

/// One compilation: the Level 2 module, its kernels, the optimised LLVM
/// module and (gfx906) the assembly with the backend's resource figures.
struct Build {
  std::vector<fa::KernelInfo> kernels;
  std::unique_ptr<llvm::LLVMContext> llvmContext;
  std::unique_ptr<llvm::Module> llvmModule;
  std::string assembly;
  std::vector<fa::AmdgpuResources> resources;
  /// gfx906: the object file, emitted once for the resources and the link.
  std::string object;
  /// sm_90: the shared memory every kernel gets at launch (all dynamic).
  int64_t dynamicShared = 0;
};

/// Compiles a copy of `source` with `options` down to an optimised LLVM
/// module. Returns 0 or the exit code (diagnostics already reported).
/// Level 0 -> Level 2 in place: fuse, tile, lower to the gpu dialect, and
/// the kernels' launch facts. Returns 0 or the exit code.
static int runKernelPipeline(ModuleOp module,
                             const fa::PipelineOptions &options,
                             std::vector<fa::KernelInfo> &kernels) {
  PassManager pm(module.getContext());
  fa::buildKernelPipeline(pm, options);
  if (failed(pm.run(module)))
    return 1;
  FailureOr<std::vector<fa::KernelInfo>> collected = fa::collectKernels(module);
  if (failed(collected))
    return 1;
  if (collected->empty())
    return fail("the input has no fa.attention to compile");
  kernels = std::move(*collected);
  return 0;
}

/// Compiles a copy of `source` with `options` down to an optimised LLVM
/// module. Returns 0 or the exit code (diagnostics already reported).
static int build(ModuleOp source, const fa::PipelineOptions &options,
                 llvm::TargetMachine &tm, Build &out, bool useDot2 = true) {
  OwningOpRef<ModuleOp> module = source.clone();
  MLIRContext *context = source.getContext();
  if (int rc = runKernelPipeline(*module, options, out.kernels))
    return rc;

  // The target's backend: host and gfx906 both end in LLVM.
  OwningOpRef<ModuleOp> lowered;
  if (target == "host") {
    PassManager host(context);
    host.addPass(fa::createFaGpuToHostPass());
    if (failed(host.run(*module)))
      return 1;
    lowered = std::move(module);
  } else if (isNvidia(target)) {
    FailureOr<OwningOpRef<ModuleOp>> nvvm = fa::lowerToNvvm(*module, indexBits);
    if (failed(nvvm))
      return 1;
    lowered = std::move(*nvvm);
  } else {
    FailureOr<OwningOpRef<ModuleOp>> rocdl =
        fa::lowerToRocdl(*module, indexBits, useDot2 && dot2 != "off");
    if (failed(rocdl))
      return 1;
    lowered = std::move(*rocdl);
  }
  out.llvmContext = std::make_unique<llvm::LLVMContext>();
  auto prepare = [&](llvm::Module &m) {
    if (isNvidia(target))
      out.dynamicShared = fa::useDynamicSharedMemory(m);
  };
  auto llvmModule =
      fa::translateAndOptimize(*lowered, *out.llvmContext, tm, prepare);
  if (!llvmModule)
    return fail(llvm::toString(llvmModule.takeError()));
  out.llvmModule = std::move(*llvmModule);
  // The assembly: asked for, or (gfx906) the source of the resource figures.
  if (emit == "asm" || target == "gfx906" || isNvidia(target)) {
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*out.llvmModule);
    if (llvm::Error e =
            fa::emitCode(*copy, tm, /*assembly=*/true, out.assembly))
      return fail(llvm::toString(std::move(e)));
  }
  if (target == "gfx906") {
    // The resources come from the code object's own metadata note; the
    // instruction mix from the assembly.
    std::unique_ptr<llvm::Module> copy = llvm::CloneModule(*out.llvmModule);
    if (llvm::Error e = fa::emitCode(*copy, tm, /*assembly=*/false, out.object))
      return fail(llvm::toString(std::move(e)));
    auto resources = fa::readAmdgpuCodeObject(out.object);
    if (!resources)
      return fail("cannot read the gfx906 code object's metadata: " +
                  llvm::toString(resources.takeError()));
    out.resources = std::move(*resources);
    std::vector<fa::AmdgpuResources> fromAsm =
        fa::parseAmdgpuResources(out.assembly);
    for (fa::AmdgpuResources &r : out.resources)
      for (const fa::AmdgpuResources &a : fromAsm)
        if (a.kernel == r.kernel) {
          r.mix = a.mix;
          r.kvLoop = a.kvLoop;
          r.otherMacLoops = a.otherMacLoops;
        }
  }
  return 0;
}

/// Spills that reach memory: VGPR spills or any scratch. SGPR spills into
/// VGPR lanes (v_writelane, no scratch) cost VGPRs, which the occupancy
/// already counts, but no memory traffic.
static bool spills(const Build &b) {
  for (const fa::AmdgpuResources &r : b.resources)
    if (r.vgprSpills > 0 || r.scratchBytes > 0)
      return true;
  return false;
}

static bool usesDot2(const Build &b) {
  for (const fa::AmdgpuResources &r : b.resources)
    if (r.mix.count("v_dot2") && r.mix.at("v_dot2") > 0)
      return true;
  return false;
}

/// The lowest waves per SIMD (estimate) over the kernels.
static int64_t minWaves(const Build &b) {
  int64_t waves = 10;
  for (const fa::AmdgpuResources &r : b.resources)
    for (const fa::KernelInfo &k : b.kernels)
      if (k.name == r.kernel)
        waves = std::min(waves, fa::gfx906WavesPerSimd(r, k.threads));
  return waves;
}

static int64_t maxVgprs(const Build &b) {
  int64_t vgprs = 0;
  for (const fa::AmdgpuResources &r : b.resources)
    vgprs = std::max(vgprs, r.vgprs);
  return vgprs;
}

static std::string describeSpills(const Build &b) {
  int64_t vgprs = 0, sgprs = 0, scratch = 0;
  for (const fa::AmdgpuResources &r : b.resources) {
    vgprs += r.vgprSpills;
    sgprs += r.sgprSpills;
    scratch = std::max(scratch, r.scratchBytes);
  }
  std::string text = std::to_string(vgprs) + " VGPRs spilled, ";
  if (sgprs)
    text += std::to_string(sgprs) + " SGPRs spilled, ";
  return text + std::to_string(scratch) + " bytes of scratch";
}

static int emitText(const std::string &text) {
  if (outputFile.empty() || outputFile == "-") {
    llvm::outs() << text;
    return 0;
  }
  return writeFile(outputFile, text);
}

/// sm_80 / sm_90: the PTX, or (ptxas found) a cubin with ptxas's figures, and
/// the manifest. All shared memory is dynamic (see useDynamicSharedMemory).
static int finishNvidia(Build &b, const std::string &sourceText) {
  for (fa::KernelInfo &k : b.kernels) {
    k.dynamicLdsBytes = b.dynamicShared;
    k.ldsBytes = 0;
    k.indexBits = indexBits;
  }
  if (emit == "asm" || emit == "ptx")
    return emitText(b.assembly);
  if (emit == "obj")
    return fail("--target=" + target +
                " has no object file; use --emit=ptx or --emit=cubin");
  std::string ptxas = fa::findPtxas();
  if (emit == "cubin" && ptxas.empty())
    return fail("--emit=cubin needs ptxas (the CUDA toolkit's assembler), "
                "not found (FA_PTXAS, PATH, /usr/local/cuda/bin)");
  std::string code = b.assembly, format = "ptx";
  if (!ptxas.empty()) {
    std::string cubin;
    std::vector<fa::PtxasResources> resources;
    if (llvm::Error e =
            fa::assemblePtx(ptxas, b.assembly, target, cubin, resources))
      return fail(llvm::toString(std::move(e)));
    code = std::move(cubin);
    format = "cubin";
    for (fa::KernelInfo &k : b.kernels)
      for (const fa::PtxasResources &r : resources) {
        if (r.kernel != k.name)
          continue;
        int64_t blocks = fa::nvidiaBlocksPerSm(r, k.threads, b.dynamicShared);
        k.resources = {{"registers", r.registers},
                       {"spill_store_bytes", r.spillStoreBytes},
                       {"spill_load_bytes", r.spillLoadBytes},
                       {"stack_bytes", r.stackBytes},
                       {"blocks_per_sm_estimate", blocks}};
        if (report)
          llvm::outs() << "ptxas: kernel " << k.name << " (" << target
                       << "): " << r.registers << " registers, spills "
                       << r.spillStoreBytes << " B stored / "
                       << r.spillLoadBytes << " B loaded, stack "
                       << r.stackBytes << " B, shared " << b.dynamicShared
                       << " B (dynamic), " << k.threads << " threads -> "
                       << blocks << " blocks per SM (estimate)\n";
      }
  } else if (report) {
    llvm::outs() << "ptxas not found: writing PTX, no resource figures\n";
  }
  llvm::Expected<std::string> manifest =
      fa::renderManifest(target, llvm::sys::path::filename(outputFile), format,
                         code, sourceText, b.kernels, "");
  if (!manifest)
    return fail(llvm::toString(manifest.takeError()));
  if (int rc = writeFile(outputFile, code))
    return rc;
  return writeFile(outputFile + ".json", *manifest);
}

/// Writes what --emit asks for, or the code object and its manifest.
static int finish(Build &b, llvm::TargetMachine &tm,
                  const std::string &sourceText) {
  if (emit == "llvm") {
    std::string text;
    llvm::raw_string_ostream os(text);
    b.llvmModule->print(os, nullptr);
    return emitText(text);
  }
  if (isNvidia(target))
    return finishNvidia(b, sourceText);
  if (emit == "asm")
    return emitText(b.assembly);
  if (target == "gfx906")
    for (fa::KernelInfo &k : b.kernels)
      k.indexBits = indexBits;
  for (fa::KernelInfo &k : b.kernels)
    for (const fa::AmdgpuResources &r : b.resources)
      if (r.kernel == k.name) {
        k.resources = {
            {"vgprs", r.vgprs},
            {"sgprs", r.sgprs},
            {"vgpr_spills", r.vgprSpills},
            {"sgpr_spills", r.sgprSpills},
            {"scratch_bytes", r.scratchBytes},
            {"waves_per_simd_estimate", fa::gfx906WavesPerSimd(r, k.threads)}};
        if (report)
          llvm::outs() << fa::formatAmdgpuResources(r, k.threads, k.blockM,
                                                    k.blockN, k.headDim)
                       << "\n  K/V loop: "
                       << (k.stages > 1 ? "double-buffered, register-staged ("
                                          "fetch-ahead=" +
                                              k.fetchAhead + ")"
                                        : std::string("single-buffered"))
                       << "\n";
      }

  std::string object = std::move(b.object);
  if (object.empty())
    if (llvm::Error e =
            fa::emitCode(*b.llvmModule, tm, /*assembly=*/false, object))
      return fail(llvm::toString(std::move(e)));
  if (emit == "obj")
    return writeFile(outputFile, object);

  llvm::SmallString<128> objectPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("fac", "o", objectPath))
    return fail("cannot create a temporary file: " + ec.message());
  llvm::FileRemover removeObject(objectPath);
  if (int rc = writeFile(objectPath, object))
    return rc;
  if (llvm::Error e = fa::linkSharedObject(target, objectPath, outputFile))
    return fail(llvm::toString(std::move(e)));
  auto linked = llvm::MemoryBuffer::getFile(outputFile);
  if (!linked)
    return fail("cannot read back " + outputFile + ": " +
                linked.getError().message());
  bool host = target == "host";
  llvm::Expected<std::string> manifest = fa::renderManifest(
      target, llvm::sys::path::filename(outputFile),
      host ? "elf-shared-object" : "hsaco", (*linked)->getBuffer(), sourceText,
      b.kernels, host ? FA_HOST_ENTRY_SUFFIX : "");
  if (!manifest) {
    llvm::sys::fs::remove(outputFile); // no code object without its manifest
    return fail(llvm::toString(manifest.takeError()));
  }
  return writeFile(outputFile + ".json", *manifest);
}

/// fac's driver; main adds only the exception barrier.
static int runFac(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  // Needs no input file, so it is answered before the required positional
  // argument is checked.
  for (int i = 1; i < argc; ++i)
    if (llvm::StringRef(argv[i]) == "--test-list-planted-bugs") {
      for (const fa::PlantedBugInfo &bug : fa::plantedBugs())
        llvm::outs() << bug.name << "\n";
      return 0;
    }
  cl::ParseCommandLineOptions(argc, argv, "fa compiler driver\n");

  const fa::TargetDesc *desc = fa::lookupTarget(target);
  if (!desc)
    return fail("unknown target '" + target +
                "'; known targets: " + fa::knownTargetNames());
  if (!emit.empty() && emit != "mlir" && emit != "llvm" && emit != "asm" &&
      emit != "obj" && emit != "ptx" && emit != "cubin")
    return fail("unknown --emit='" + emit +
                "'; expected mlir, llvm, asm, obj, ptx or cubin");
  if (indexBits != 32 && indexBits != 64)
    return fail("--index-bits must be 32 or 64, got " +
                std::to_string(indexBits));
  if (dot2 != "auto" && dot2 != "on" && dot2 != "off")
    return fail("--dot2 must be auto, on or off, got '" + dot2 + "'");
  if (indexBits.getNumOccurrences() && target == "host")
    return fail("--index-bits is for GPU targets (host kernels use 64-bit "
                "index arithmetic)");
  if ((emit == "ptx" || emit == "cubin") && !isNvidia(target))
    return fail("--emit=" + emit +
                " is for NVIDIA targets (sm_80, sm_90), not " + target);
  if (outputFile.empty() && emit != "mlir" && emit != "llvm" && emit != "asm" &&
      emit != "ptx")
    return fail("-o <path> is required for --target=" + target);

  DialectRegistry registry;
  fa::registerFaDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  // Diagnostics point at the source line; a generic dump of the op is noise.
  context.printOpOnDiagnostic(false);

  std::string error;
  auto input = openInputFile(inputFile, &error);
  if (!input)
    return fail(error);
  std::string sourceText = input->getBuffer().str();
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return 1;

  fa::PipelineOptions options;
  options.target = target;
  options.blockM = blockM;
  options.blockN = blockN;
  options.waves = waves;
  options.stages = stages;
  options.allowBf16 = allowBf16;
  options.report = report;
  options.plantBug = testPlantBug;
  options.padLds = padLds;
  options.kvShared = kvShared;
  options.pairRhs = pairRhs;
  options.widenLds = widenLds;
  if (fetchAhead != "auto" && fetchAhead != "next-block" &&
      fetchAhead != "in-block")
    return fail("--fetch-ahead must be auto, next-block or in-block, got '" +
                fetchAhead + "'");
  options.fetchAhead =
      fetchAhead == "auto" ? std::string("next-block") : fetchAhead.getValue();
  if (!testPlantBug.empty()) {
    const fa::PlantedBugInfo *bug = fa::lookupPlantedBug(testPlantBug);
    if (!bug)
      return fail("unknown planted bug '" + testPlantBug +
                  "'; known: " + fa::plantedBugNames());
    llvm::errs() << "fac: warning: planting test bug '" << bug->name << "' ("
                 << bug->description << "): this kernel is wrong on purpose\n";
  }

  if (emit == "mlir") {
    std::vector<fa::KernelInfo> kernels;
    if (int rc = runKernelPipeline(*module, options, kernels))
      return rc;
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    if (outputFile.empty() || outputFile == "-") {
      llvm::outs() << text;
      return 0;
    }
    return writeFile(outputFile, text);
  }

  auto tm = fa::createTargetMachine(target);
  if (!tm)
    return fail(llvm::toString(tm.takeError()));
  Build result;
  if (int rc = build(*module, options, **tm, result))
    return rc;
  fa::PipelineOptions chosen = options;

  // Seed rule 7 with the backend as the judge: when fa-tile chose the tiles
  // and the AMDGPU backend spills, shrink BLOCK_M (then BLOCK_N) and
  // recompile, keeping the first configuration that compiles cleanly.
  if (target == "gfx906" && fetchAhead == "auto" && spills(result) &&
      result.kernels.front().stages == 2) {
    // Double buffering's registers first: only V fetched ahead (in-block)
    // keeps fewer of them live across P·V.
    const fa::KernelInfo &k = result.kernels.front();
    llvm::errs() << "fac: remark: the AMDGPU backend spills at BLOCK_M="
                 << k.blockM << " BLOCK_N=" << k.blockN
                 << " with K/V block n+1 in registers ("
                 << describeSpills(result)
                 << "); trying fetch-ahead=in-block (V fetched during "
                    "Q*K^T, K copied in place)\n";
    fa::PipelineOptions inBlock = options;
    inBlock.fetchAhead = "in-block";
    inBlock.report = false;
    Build retry;
    if (build(*module, inBlock, **tm, retry) == 0) {
      result.llvmModule.reset();
      result = std::move(retry);
      inBlock.report = options.report;
      chosen = options = inBlock;
    }
  }
  if (target == "gfx906" && blockM == 0 && blockN == 0) {
    while (spills(result)) {
      const fa::KernelInfo &k = result.kernels.front();
      int64_t nextM = k.blockM > 16 ? k.blockM / 2 : k.blockM;
      int64_t nextN = k.blockM > 16 ? k.blockN : k.blockN / 2;
      if (nextN < 16)
        break;
      llvm::errs() << "fac: remark: the AMDGPU backend spills at BLOCK_M="
                   << k.blockM << " BLOCK_N=" << k.blockN << " ("
                   << describeSpills(result) << "); trying BLOCK_M=" << nextM
                   << " BLOCK_N=" << nextN << "\n";
      fa::PipelineOptions smaller = options;
      smaller.blockM = nextM;
      smaller.blockN = nextN;
      smaller.report = false;
      Build retry;
      {
        // A smaller configuration that fa-tile rejects ends the search.
        ScopedDiagnosticHandler quiet(&context,
                                      [](Diagnostic &) { return success(); });
        if (build(*module, smaller, **tm, retry))
          break;
      }
      result.llvmModule.reset(); // before the context it lives in
      result = std::move(retry);
      chosen = smaller;
    }
    if (spills(result))
      llvm::errs() << "fac: remark: no smaller configuration tried compiles "
                      "without spills; keeping BLOCK_M="
                   << result.kernels.front().blockM
                   << " BLOCK_N=" << result.kernels.front().blockN << " ("
                   << describeSpills(result) << ")\n";
  }
  // v_dot2_f32_f16 halves the Q·Kᵀ MAC instructions but packs its operand
  // pairs in registers; where that costs a wave per SIMD, the backend's
  // occupancy decides (--dot2=on keeps it regardless).
  if (target == "gfx906" && dot2 == "auto" && !spills(result) &&
      usesDot2(result)) {
    Build plain;
    chosen.report = false;
    if (build(*module, chosen, **tm, plain, /*useDot2=*/false) == 0 &&
        !spills(plain) && minWaves(plain) > minWaves(result)) {
      llvm::errs() << "fac: remark: v_dot2_f32_f16 in Q·K^T would lower "
                      "occupancy to "
                   << minWaves(result) << " waves per SIMD ("
                   << maxVgprs(result) << " VGPRs); keeping v_fma_mix at "
                   << minWaves(plain) << " (" << maxVgprs(plain)
                   << " VGPRs); --dot2=on forces it\n";
      result.llvmModule.reset();
      result = std::move(plain);
    }
  }
  return finish(result, **tm, sourceText);
}

int main(int argc, char **argv) {
  // Nothing escapes main: an exception from our code (the LLVM libraries are
  // built without them) is reported, not an abort.
  try {
    return runFac(argc, argv);
  } catch (const std::exception &e) {
    llvm::errs() << "fac: internal error: " << e.what() << "\n";
  } catch (...) {
    llvm::errs() << "fac: internal error: unknown exception\n";
  }
  return 1;
}
