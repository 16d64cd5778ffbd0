//===- Compile.cpp - Compiling attention is a library call ----------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements fa::compile:
//
//   1. the options are checked (CompileOptions.cpp: the errors fac reports
//      before it reads any input), the source is parsed, and the remaining
//      option values (fetch distance, planted bug) are checked;
//   2. a copy of the module goes through the kernel pipeline (Level 0 ->
//      Level 2), the target's lowering to the LLVM dialect, translation and
//      -O3; gfx906 and sm_* also get the backend's assembly, gfx906 its
//      object file, whose metadata note gives the resource figures;
//   3. gfx906, with the backend as the judge (seed rule 7): where the
//      kernel spills with K/V block n+1 in registers, fetch-ahead=in-block
//      is tried; where fa-tile chose the tiles and the backend spills,
//      BLOCK_M (then BLOCK_N) is halved until it does not; where v_dot2
//      costs waves per SIMD (--dot2=auto), the kernel without it is kept;
//   4. the code object is emitted (host and gfx906 linked by ld.lld, sm_*
//      assembled by ptxas when found) and its manifest rendered.
//
// Every message goes to CompileResult::diagnostics in the order it is made;
// nothing is printed.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Compile.h"
#include "compiler/Analysis/KernelInfo.h"
#include "compiler/Analysis/TargetDesc.h"
#include "compiler/Driver/Manifest.h"
#include "compiler/Driver/Pipelines.h"
#include "compiler/Targets/Codegen.h"
#include "compiler/Targets/Gfx906/CodeObject.h"
#include "compiler/Targets/Gfx906/LdsLayout.h"
#include "compiler/Targets/Gfx906/LoopAnalysis.h"
#include "compiler/Targets/Gfx906/LowerToRocdl.h"
#include "compiler/Targets/Gfx906/Mi50Model.h"
#include "compiler/Targets/Host/HostTarget.h"
#include "compiler/Targets/Nvptx/NvptxTarget.h"
#include "compiler/Testing/PlantedBugs.h"
#include "dialect/FaOps.h"

#include "fa/KernelAbi.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FileUtilities.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <algorithm>
#include <optional>

using namespace mlir;
using fa::CompileDiagnostic;
using fa::CompileOptions;
using fa::CompileResult;

//===----------------------------------------------------------------------===//
// Options
//===----------------------------------------------------------------------===//

/// NVIDIA targets: PTX from the NVPTX backend, a cubin from ptxas.
static bool isNvidia(llvm::StringRef t) { return t.starts_with("sm_"); }

static unsigned effectiveIndexBits(const CompileOptions &o) {
  return o.indexBits ? o.indexBits : 32;
}

/// The checks fac made after reading its input.
static llvm::Error validateLateOptions(const CompileOptions &o) {
  if (o.fetchAhead != "auto" && o.fetchAhead != "next-block" &&
      o.fetchAhead != "in-block")
    return llvm::createStringError(
        "--fetch-ahead must be auto, next-block or in-block, "
        "got '" +
        o.fetchAhead + "'");
  if (!o.plantBug.empty() && !fa::lookupPlantedBug(o.plantBug))
    return llvm::createStringError("unknown planted bug '" + o.plantBug +
                                   "'; known: " + fa::plantedBugNames());
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Diagnostics
//===----------------------------------------------------------------------===//

namespace {

static CompileDiagnostic::Severity toSeverity(DiagnosticSeverity s) {
  switch (s) {
  case DiagnosticSeverity::Note:
    return CompileDiagnostic::Severity::Note;
  case DiagnosticSeverity::Remark:
    return CompileDiagnostic::Severity::Remark;
  case DiagnosticSeverity::Warning:
    return CompileDiagnostic::Severity::Warning;
  case DiagnosticSeverity::Error:
    return CompileDiagnostic::Severity::Error;
  }
  return CompileDiagnostic::Severity::Error;
}

/// MLIR's source manager handler, whose formatting (location, severity,
/// source line, caret) is used one diagnostic at a time.
struct DiagnosticFormatter : SourceMgrDiagnosticHandler {
  using SourceMgrDiagnosticHandler::emitDiagnostic;
  using SourceMgrDiagnosticHandler::SourceMgrDiagnosticHandler;
};

/// Captures the context's diagnostics, formatted as mlir-opt prints them,
/// one entry each.
class DiagnosticCapture {
public:
  DiagnosticCapture(MLIRContext *context, llvm::SourceMgr &sourceMgr,
                    std::vector<CompileDiagnostic> &out)
      : stream(buffer), formatter(sourceMgr, context, stream),
        capture(context, [this, &out](Diagnostic &diag) {
          formatter.emitDiagnostic(diag);
          stream.flush();
          out.push_back({toSeverity(diag.getSeverity()), buffer, true});
          buffer.clear();
          return success();
        }) {}

private:
  std::string buffer;
  llvm::raw_string_ostream stream;
  DiagnosticFormatter formatter;
  ScopedDiagnosticHandler capture;
};

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
  /// sm_90: the shared memory each kernel gets at launch (all dynamic; a
  /// kernel absent uses none).
  std::map<std::string, int64_t> dynamicShared;
};

/// The state of one fa::compile call.
class Compilation {
public:
  Compilation(const CompileOptions &options, CompileResult &result)
      : options(options), result(result), report(result.report) {}

  /// Compiles `source` (its text is `sourceText`) into `result`.
  void run(ModuleOp source, llvm::StringRef sourceText);

private:
  /// Records a driver message (no location).
  void message(CompileDiagnostic::Severity severity, const llvm::Twine &text) {
    result.diagnostics.push_back({severity, text.str(), false});
  }
  bool fail(const llvm::Twine &text) {
    message(CompileDiagnostic::Severity::Error, text);
    return false;
  }
  void remark(const llvm::Twine &text) {
    message(CompileDiagnostic::Severity::Remark, text);
  }

  bool runKernelPipeline(ModuleOp module, const fa::PipelineOptions &pipeline,
                         std::vector<fa::KernelInfo> &kernels);
  bool build(ModuleOp source, const fa::PipelineOptions &pipeline,
             llvm::TargetMachine &tm, Build &out, bool useDot2 = true);
  void retryOnGfx906(ModuleOp source, fa::PipelineOptions pipeline,
                     llvm::TargetMachine &tm, Build &result);
  void useBackendLdsLayout(fa::KernelInfo &k, const llvm::Module &optimized,
                           llvm::TargetMachine &tm,
                           const std::vector<fa::AmdgpuResources> &resources);
  bool finish(Build &b, llvm::TargetMachine &tm, llvm::StringRef sourceText);
  bool finishNvidia(Build &b, llvm::StringRef sourceText);
  bool emitText(std::string text) {
    result.output = std::move(text);
    result.format = options.emit;
    return true;
  }
  std::string codeObjectName(llvm::StringRef extension) const {
    return options.codeObjectName.empty() ? "attention." + extension.str()
                                          : options.codeObjectName;
  }

  const CompileOptions &options;
  CompileResult &result;
  llvm::raw_string_ostream report;
};

} // namespace

/// Level 0 -> Level 2 in place: fuse, tile, lower to the gpu dialect, and
/// the kernels' launch facts.
bool Compilation::runKernelPipeline(ModuleOp module,
                                    const fa::PipelineOptions &pipeline,
                                    std::vector<fa::KernelInfo> &kernels) {
  PassManager pm(module.getContext());
  fa::buildKernelPipeline(pm, pipeline);
  if (failed(pm.run(module)))
    return false;
  FailureOr<std::vector<fa::KernelInfo>> collected = fa::collectKernels(module);
  if (failed(collected))
    return false;
  if (collected->empty())
    return fail("the input has no fa.attention to compile");
  kernels = std::move(*collected);
  return true;
}

/// Compiles a copy of `source` with `pipeline` down to an optimised LLVM
/// module (and, for gfx906, its object file and resource figures).
bool Compilation::build(ModuleOp source, const fa::PipelineOptions &pipeline,
                        llvm::TargetMachine &tm, Build &out, bool useDot2) {
  OwningOpRef<ModuleOp> module = source.clone();
  const std::string &target = options.target;
  if (!runKernelPipeline(*module, pipeline, out.kernels))
    return false;

  // The target's lowering to the LLVM dialect.
  OwningOpRef<ModuleOp> lowered;
  if (target == "host") {
    if (failed(fa::lowerToHost(*module)))
      return false;
    lowered = std::move(module);
  } else if (isNvidia(target)) {
    FailureOr<OwningOpRef<ModuleOp>> nvvm =
        fa::lowerToNvvm(*module, effectiveIndexBits(options));
    if (failed(nvvm))
      return false;
    lowered = std::move(*nvvm);
  } else {
    FailureOr<OwningOpRef<ModuleOp>> rocdl = fa::lowerToRocdl(
        *module, effectiveIndexBits(options), useDot2 && options.dot2 != "off");
    if (failed(rocdl))
      return false;
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
  if (options.emit == "asm" || target == "gfx906" || isNvidia(target)) {
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
    for (fa::KernelInfo &k : out.kernels)
      useBackendLdsLayout(k, *out.llvmModule, tm, out.resources);
  }
  return true;
}

/// gfx906: the LDS buffers' offsets as the AMDGPU backend packed the
/// attributions (LdsLayout.h), where they fit the code object's LDS size;
/// otherwise unknown (-1).
void Compilation::useBackendLdsLayout(
    fa::KernelInfo &k, const llvm::Module &optimized, llvm::TargetMachine &tm,
    const std::vector<fa::AmdgpuResources> &resources) {
  if (k.ldsBuffers.empty())
    return;
  int64_t attributions = 0, ldsBytes = -1;
  for (const fa::LdsBufferInfo &b : k.ldsBuffers)
    attributions = std::max(attributions, b.attribution + 1);
  for (const fa::AmdgpuResources &r : resources)
    if (r.kernel == k.name)
      ldsBytes = r.ldsBytes;
  auto offsets = fa::amdgpuLdsOffsets(optimized, tm, k.name, attributions);
  bool fits = bool(offsets);
  if (!offsets)
    llvm::consumeError(offsets.takeError());
  for (fa::LdsBufferInfo &b : k.ldsBuffers) {
    if (!fits)
      break;
    int64_t offset = (*offsets)[b.attribution];
    fits = offset >= 0 && offset + b.slotBytes <= ldsBytes;
  }
  for (fa::LdsBufferInfo &b : k.ldsBuffers)
    b.offset = fits ? (*offsets)[b.attribution] : -1;
  k.ldsLayoutBy = fits ? "the AMDGPU backend"
                       : "unknown (the AMDGPU backend's could not be read)";
}

/// The report's LDS layout of `k`: each buffer where it lies and
/// fa-pad-lds's predicted bank-conflict degree of each access it models
/// (docs/bank-conflicts.md; test/e2e/conflicts_vs_padlds.py reads it).
static std::string formatLdsLayout(const fa::KernelInfo &k) {
  if (k.ldsBuffers.empty())
    return "";
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "  LDS layout of " << k.name << " (offsets placed by " << k.ldsLayoutBy
     << "; degrees: fa-pad-lds's prediction for one wave's access, 32 banks "
        "of 4 bytes, unpadded -> as compiled):\n";
  for (const fa::LdsBufferInfo &b : k.ldsBuffers) {
    os << "    LDS buffer " << b.name << ": slot " << b.slot << ", offset "
       << b.offset << ", " << b.bytes() << " bytes (slot " << b.slotBytes
       << "), " << b.rows << "x" << b.cols << " of " << b.elementBytes
       << " B, row pitch " << (b.cols + b.pad) * b.elementBytes << " B (pad "
       << b.pad << ")" << (b.pairs ? ", pair-interleaved" : "") << "\n";
    if (b.accesses.empty())
      os << "      no accesses modelled (fa-pad-lds did not run)\n";
    for (const fa::LdsAccessInfo &a : b.accesses)
      os << "      " << (a.write ? "write" : "read") << " " << a.bytes
         << " B per lane, lane l = (i, j) = (l/" << a.q << ", l%" << a.q
         << ") at row " << a.rowI << "i+" << a.rowJ << "j, col " << a.colI
         << "i+" << a.colJ << "j: degree " << a.unpadded << " -> " << a.degree
         << " (" << a.what << ")\n";
  }
  return text;
}

/// Spills that reach memory: VGPR spills or any instruction that reads or
/// writes scratch. SGPR spills into VGPR lanes (v_writelane, no scratch)
/// cost VGPRs, which the occupancy already counts, but no memory traffic;
/// so does a private segment the backend reserves near the SGPR limit (its
/// register scavenger's emergency slot) that no instruction touches.
static bool spills(const Build &b) {
  for (const fa::AmdgpuResources &r : b.resources)
    if (r.vgprSpills > 0 || fa::scratchAccesses(r) > 0)
      return true;
  return false;
}

/// Whether a kernel other than a split-KV combine kernel spills: the
/// retries that change only the attention kernel's K/V loop (share-rows,
/// fetch-ahead) cannot help a combine kernel that spills.
static bool attentionSpills(const Build &b) {
  for (const fa::AmdgpuResources &r : b.resources) {
    bool combine = false;
    for (const fa::KernelInfo &k : b.kernels)
      combine = combine || (k.name == r.kernel && k.isCombine);
    if (!combine && (r.vgprSpills > 0 || fa::scratchAccesses(r) > 0))
      return true;
  }
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
  int64_t vgprs = 0, sgprs = 0, scratch = 0, accesses = 0;
  for (const fa::AmdgpuResources &r : b.resources) {
    vgprs += r.vgprSpills;
    sgprs += r.sgprSpills;
    scratch = std::max(scratch, r.scratchBytes);
    accesses += fa::scratchAccesses(r);
  }
  std::string text = std::to_string(vgprs) + " VGPRs spilled, ";
  if (sgprs)
    text += std::to_string(sgprs) + " SGPRs spilled, ";
  return text + std::to_string(scratch) + " bytes of scratch, " +
         std::to_string(accesses) + " scratch instructions";
}

/// Whether fa-tile still has an fa.attention to tile in `source`: input
/// past fa-tile (a tile-, memory- or gpu-level module, fa-opt's output)
/// has its tiles and schedule fixed, and no rebuild can change them.
static bool hasUntiledAttention(ModuleOp source) {
  return source
      .walk([](Operation *op) {
        return isa<fa::AttentionOp, fa::MatmulOp, fa::SoftmaxOp>(op)
                   ? WalkResult::interrupt()
                   : WalkResult::advance();
      })
      .wasInterrupted();
}

static std::string describeTiles(const fa::KernelInfo &k) {
  return "BLOCK_M=" + std::to_string(k.blockM) +
         " BLOCK_N=" + std::to_string(k.blockN);
}

/// "the AMDGPU backend spills at BLOCK_M=.. BLOCK_N=.. (figures)".
static std::string describeSpillAt(const Build &b) {
  return "the AMDGPU backend spills at " + describeTiles(b.kernels.front()) +
         " (" + describeSpills(b) + ")";
}

/// Seed rule 7 with the backend as the judge; `result` is the first build
/// and is replaced by the configuration kept. Every retry changes the
/// kernel (another fetch distance, smaller tiles) or the search ends: it
/// ends on input whose tiles are fixed, on explicit tiles, on tiles fa-tile
/// rejects, and on a rebuild whose tiles did not shrink.
void Compilation::retryOnGfx906(ModuleOp source, fa::PipelineOptions pipeline,
                                llvm::TargetMachine &tm, Build &result) {
  MLIRContext *context = source.getContext();
  fa::PipelineOptions chosen = pipeline;
  const bool tilesFixed = !hasUntiledAttention(source);
  if (tilesFixed && spills(result))
    remark(describeSpillAt(result) +
           "; the input is past fa-tile, so its tiles and K/V schedule are "
           "fixed and no smaller configuration can be tried (compile the "
           "fa.attention source to let fac search)");
  // A rebuild with `changed` (its report kept for the build that stays)
  // replaces the result where it compiles.
  auto keepIfBuilt = [&](fa::PipelineOptions changed) {
    const bool report = changed.report;
    changed.report = false;
    Build retry;
    if (!build(source, changed, tm, retry))
      return;
    result.llvmModule.reset();
    result = std::move(retry);
    changed.report = report;
    chosen = pipeline = changed;
  };
  // share-rows=auto is off on gfx906 (TargetDesc::shareRows): every lane
  // reads the lhs rows of both products, an LDS broadcast, no VALU spent
  // moving them. Where that spills, P's rows rotated first.
  if (!tilesFixed && options.shareRows == "auto" && attentionSpills(result)) {
    // share-rows holds one pair of each P row per lane instead of every
    // pair the step needs: fewer registers, for a DPP move per 8 MACs.
    remark(describeSpillAt(result) +
           " with every lane reading P's rows; trying share-rows (P's rows "
           "rotated along each 16-lane row)");
    fa::PipelineOptions rotated = pipeline;
    rotated.shareRows = "on";
    keepIfBuilt(rotated);
  }
  if (!tilesFixed && options.fetchAhead == "auto" && attentionSpills(result) &&
      result.kernels.front().stages == 2) {
    // Double buffering's registers first: only V fetched ahead (in-block)
    // keeps fewer of them live across P·V.
    const fa::KernelInfo &k = result.kernels.front();
    remark("the AMDGPU backend spills at " + describeTiles(k) +
           " with K/V block n+1 in registers (" + describeSpills(result) +
           "); trying fetch-ahead=in-block (V fetched during Q*K^T, K copied "
           "in place)");
    fa::PipelineOptions inBlock = pipeline;
    inBlock.fetchAhead = "in-block";
    keepIfBuilt(inBlock);
  }
  // Rows padded to 16 bytes (gfx906's ldsPadBytes) let the backend read a
  // thread's four consecutive pairs with one ds_read_b128, whose results
  // it hoists: more registers live than 4-byte reads. Where that spills,
  // pairs-only padding before smaller tiles (D=80: BLOCK_M 32 instead of
  // 16, MI50 timing model v2 +17%).
  const fa::TargetDesc *desc = fa::lookupTarget(pipeline.target);
  if (!tilesFixed && attentionSpills(result) && pipeline.ldsPadBytes != 0 &&
      pipeline.padLds && desc && desc->ldsPadBytes > 0) {
    remark(describeSpillAt(result) +
           " with LDS rows padded for 16-byte reads; trying rows padded by "
           "pairs (4-byte reads, fewer registers)");
    fa::PipelineOptions pairs = pipeline;
    pairs.ldsPadBytes = 0;
    keepIfBuilt(pairs);
  }
  // Where fa-tile chose the tiles and the backend spills: halve BLOCK_M
  // (then BLOCK_N) and recompile, keeping the first configuration that
  // compiles cleanly.
  if (!tilesFixed && (options.blockM || options.blockN) && spills(result))
    remark(describeSpillAt(result) +
           "; the tiles are given (--block-m/--block-n), so fac keeps them");
  if (!tilesFixed && options.blockM == 0 && options.blockN == 0) {
    while (spills(result)) {
      const fa::KernelInfo &k = result.kernels.front();
      int64_t nextM = k.blockM > 16 ? k.blockM / 2 : k.blockM;
      int64_t nextN = k.blockM > 16 ? k.blockN : k.blockN / 2;
      if (nextN < 16)
        break;
      remark(describeSpillAt(result) + "; trying BLOCK_M=" +
             llvm::Twine(nextM) + " BLOCK_N=" + llvm::Twine(nextN));
      fa::PipelineOptions smaller = pipeline;
      smaller.blockM = nextM;
      smaller.blockN = nextN;
      smaller.report = false;
      Build retry;
      {
        // A smaller configuration that fa-tile rejects ends the search.
        ScopedDiagnosticHandler quiet(context,
                                      [](Diagnostic &) { return success(); });
        if (!build(source, smaller, tm, retry)) {
          remark("fa-tile rejects BLOCK_M=" + llvm::Twine(nextM) +
                 " BLOCK_N=" + llvm::Twine(nextN) + "; the search ends");
          break;
        }
      }
      // A rebuild must shrink the tiles; one that does not (a pipeline that
      // ignores them) would be tried forever.
      const fa::KernelInfo &got = retry.kernels.front();
      if (got.blockM * got.blockN >= k.blockM * k.blockN) {
        remark("asking for BLOCK_M=" + llvm::Twine(nextM) +
               " BLOCK_N=" + llvm::Twine(nextN) + " gave " +
               describeTiles(got) + "; the search ends");
        break;
      }
      result.llvmModule.reset(); // before the context it lives in
      result = std::move(retry);
      chosen = smaller;
    }
    if (spills(result))
      remark("no smaller configuration tried compiles without spills; "
             "keeping " +
             describeTiles(result.kernels.front()) + " (" +
             describeSpills(result) + ")");
  }
  // v_dot2_f32_f16 halves the Q·Kᵀ MAC instructions but packs its operand
  // pairs in registers; where that costs a wave per SIMD, the backend's
  // occupancy decides (--dot2=on keeps it regardless).
  if (options.dot2 == "auto" && !spills(result) && usesDot2(result)) {
    Build plain;
    chosen.report = false;
    if (build(source, chosen, tm, plain, /*useDot2=*/false) && !spills(plain) &&
        minWaves(plain) > minWaves(result)) {
      remark("v_dot2_f32_f16 in Q·K^T would lower occupancy to " +
             llvm::Twine(minWaves(result)) + " waves per SIMD (" +
             llvm::Twine(maxVgprs(result)) + " VGPRs); keeping v_fma_mix at " +
             llvm::Twine(minWaves(plain)) + " (" +
             llvm::Twine(maxVgprs(plain)) + " VGPRs); --dot2=on forces it");
      result.llvmModule.reset();
      result = std::move(plain);
    }
  }
}

/// sm_80 / sm_90: the PTX, or (ptxas found) a cubin with ptxas's figures, and
/// the manifest. All shared memory is dynamic (see useDynamicSharedMemory).
bool Compilation::finishNvidia(Build &b, llvm::StringRef sourceText) {
  const std::string &target = options.target;
  for (fa::KernelInfo &k : b.kernels) {
    auto shared = b.dynamicShared.find(k.name);
    k.dynamicLdsBytes = shared == b.dynamicShared.end() ? 0 : shared->second;
    k.ldsBytes = 0;
    k.indexBits = effectiveIndexBits(options);
  }
  if (options.emit == "asm" || options.emit == "ptx")
    return emitText(std::move(b.assembly));
  if (options.emit == "obj")
    return fail("--target=" + target +
                " has no object file; use --emit=ptx or --emit=cubin");
  std::string ptxas = fa::findPtxas();
  if (options.emit == "cubin" && ptxas.empty())
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
        int64_t blocks = fa::nvidiaBlocksPerSm(r, k.threads, k.dynamicLdsBytes);
        k.resources = {{"registers", r.registers},
                       {"spill_store_bytes", r.spillStoreBytes},
                       {"spill_load_bytes", r.spillLoadBytes},
                       {"stack_bytes", r.stackBytes},
                       {"blocks_per_sm_estimate", blocks}};
        if (options.report)
          report << "ptxas: kernel " << k.name << " (" << target
                 << "): " << r.registers << " registers, spills "
                 << r.spillStoreBytes << " B stored / " << r.spillLoadBytes
                 << " B loaded, stack " << r.stackBytes << " B, shared "
                 << k.dynamicLdsBytes << " B (dynamic), " << k.threads
                 << " threads -> " << blocks << " blocks per SM (estimate)\n";
      }
  } else if (options.report) {
    report << "ptxas not found: writing PTX, no resource figures\n";
  }
  if (options.report)
    for (const fa::KernelInfo &k : b.kernels)
      report << formatLdsLayout(k);
  llvm::Expected<std::string> manifest = fa::renderManifest(
      target, codeObjectName(format), format, code, sourceText, b.kernels, "");
  if (!manifest)
    return fail(llvm::toString(manifest.takeError()));
  result.output = std::move(code);
  result.format = format;
  result.manifest = std::move(*manifest);
  return true;
}

/// The output --emit asks for, or the code object and its manifest.
bool Compilation::finish(Build &b, llvm::TargetMachine &tm,
                         llvm::StringRef sourceText) {
  const std::string &target = options.target;
  if (options.emit == "llvm") {
    std::string text;
    llvm::raw_string_ostream os(text);
    b.llvmModule->print(os, nullptr);
    os.flush();
    return emitText(std::move(text));
  }
  if (isNvidia(target))
    return finishNvidia(b, sourceText);
  if (options.emit == "asm")
    return emitText(std::move(b.assembly));
  if (target == "gfx906")
    for (fa::KernelInfo &k : b.kernels)
      k.indexBits = effectiveIndexBits(options);
  for (fa::KernelInfo &k : b.kernels)
    for (const fa::AmdgpuResources &r : b.resources)
      if (r.kernel == k.name) {
        k.resources = {
            {"vgprs", r.vgprs},
            {"sgprs", r.sgprs},
            {"vgpr_spills", r.vgprSpills},
            {"sgpr_spills", r.sgprSpills},
            {"scratch_bytes", r.scratchBytes},
            {"waves_per_simd_estimate", fa::gfx906WavesPerSimd(r, k.threads)},
            {"workgroups_per_cu_estimate",
             fa::gfx906WorkgroupsPerCu(r, k.threads)}};
        if (options.report)
          report << fa::formatAmdgpuResources(r, k.threads, k.blockM, k.blockN,
                                              k.headDim)
                 << "\n  K/V loop: "
                 << (k.stages > 1 ? "double-buffered, register-staged ("
                                    "fetch-ahead=" +
                                        k.fetchAhead + ")"
                                  : std::string("single-buffered"))
                 << "\n";
      }
  if (options.report)
    for (const fa::KernelInfo &k : b.kernels)
      report << formatLdsLayout(k);

  std::string object = std::move(b.object);
  if (object.empty())
    if (llvm::Error e =
            fa::emitCode(*b.llvmModule, tm, /*assembly=*/false, object))
      return fail(llvm::toString(std::move(e)));
  if (options.emit == "obj") {
    result.output = std::move(object);
    result.format = "obj";
    return true;
  }

  // ld.lld links through files; the bytes are read back and the files
  // removed.
  llvm::SmallString<128> objectPath, linkedPath;
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("fac", "o", objectPath))
    return fail("cannot create a temporary file: " + ec.message());
  llvm::FileRemover removeObject(objectPath);
  if (std::error_code ec =
          llvm::sys::fs::createTemporaryFile("fac", "so", linkedPath))
    return fail("cannot create a temporary file: " + ec.message());
  llvm::FileRemover removeLinked(linkedPath);
  {
    std::error_code ec;
    llvm::raw_fd_ostream os(objectPath, ec);
    if (ec)
      return fail("cannot write " + objectPath + ": " + ec.message());
    os << object;
  }
  if (llvm::Error e = fa::linkSharedObject(target, objectPath, linkedPath))
    return fail(llvm::toString(std::move(e)));
  auto linked = llvm::MemoryBuffer::getFile(linkedPath);
  if (!linked)
    return fail("cannot read back " + linkedPath + ": " +
                linked.getError().message());
  bool host = target == "host";
  std::string format = host ? "elf-shared-object" : "hsaco";
  llvm::Expected<std::string> manifest =
      fa::renderManifest(target, codeObjectName(host ? "so" : "hsaco"), format,
                         (*linked)->getBuffer(), sourceText, b.kernels,
                         host ? FA_HOST_ENTRY_SUFFIX : "");
  if (!manifest)
    return fail(llvm::toString(manifest.takeError()));
  result.output = (*linked)->getBuffer().str();
  result.format = format;
  result.manifest = std::move(*manifest);
  return true;
}

void Compilation::run(ModuleOp source, llvm::StringRef sourceText) {
  if (llvm::Error e = validateLateOptions(options)) {
    fail(llvm::toString(std::move(e)));
    return;
  }
  fa::PipelineOptions pipeline;
  pipeline.target = options.target;
  pipeline.blockM = options.blockM;
  pipeline.blockN = options.blockN;
  pipeline.waves = options.waves;
  pipeline.stages = options.stages;
  pipeline.allowBf16 = options.allowBf16;
  pipeline.report = options.report;
  pipeline.plantBug = options.plantBug;
  pipeline.padLds = options.padLds;
  pipeline.kvShared = options.kvShared;
  pipeline.shareRows = options.shareRows;
  pipeline.kvSplits = options.kvSplits;
  pipeline.gqaPack = options.gqaPack;
  pipeline.mergeSplits = options.mergeSplits;
  pipeline.trace = options.trace;
  pipeline.pairRhs = options.pairRhs;
  pipeline.widenLds = options.widenLds;
  pipeline.fetchAhead = options.fetchAhead == "auto" ? std::string("next-block")
                                                     : options.fetchAhead;
  if (!options.plantBug.empty()) {
    const fa::PlantedBugInfo *bug = fa::lookupPlantedBug(options.plantBug);
    message(CompileDiagnostic::Severity::Warning,
            "planting test bug '" + bug->name + "' (" + bug->description +
                "): this kernel is wrong on purpose");
  }

  if (options.emit == "mlir") {
    OwningOpRef<ModuleOp> module = source.clone();
    std::vector<fa::KernelInfo> kernels;
    if (!runKernelPipeline(*module, pipeline, kernels))
      return;
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    os.flush();
    result.ok = emitText(std::move(text));
    return;
  }

  auto tm = fa::createTargetMachine(options.target);
  if (!tm) {
    fail(llvm::toString(tm.takeError()));
    return;
  }
  Build build;
  if (!this->build(source, pipeline, **tm, build))
    return;
  if (options.target == "gfx906") {
    retryOnGfx906(source, pipeline, **tm, build);
    if (options.forbidSpills && spills(build)) {
      fail(describeSpillAt(build) + " and --forbid-spills is given");
      return;
    }
  }
  result.ok = finish(build, **tm, sourceText);
}

CompileResult fa::compile(ModuleOp module, llvm::StringRef sourceText,
                          const CompileOptions &options) {
  CompileResult result;
  if (llvm::Error e = validateCompileOptions(options)) {
    result.diagnostics.push_back(
        {CompileDiagnostic::Severity::Error, llvm::toString(std::move(e))});
    return result;
  }
  std::string printed;
  if (sourceText.empty()) {
    llvm::raw_string_ostream os(printed);
    module.print(os);
    os.flush();
    sourceText = printed;
  }
  MLIRContext *context = module.getContext();
  bool printOp = context->shouldPrintOpOnDiagnostic();
  // Diagnostics point at the source line; a generic dump of the op is noise.
  context->printOpOnDiagnostic(false);
  {
    llvm::SourceMgr sourceMgr;
    DiagnosticCapture capture(context, sourceMgr, result.diagnostics);
    Compilation(options, result).run(module, sourceText);
  }
  context->printOpOnDiagnostic(printOp);
  return result;
}

CompileResult fa::compile(llvm::StringRef source, llvm::StringRef sourceName,
                          const CompileOptions &options) {
  CompileResult result;
  if (llvm::Error e = validateCompileOptions(options)) {
    result.diagnostics.push_back(
        {CompileDiagnostic::Severity::Error, llvm::toString(std::move(e))});
    return result;
  }
  DialectRegistry registry;
  registerFaDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, sourceName), llvm::SMLoc());
  DiagnosticCapture capture(&context, sourceMgr, result.diagnostics);
  OwningOpRef<ModuleOp> module = parseSourceFile<ModuleOp>(sourceMgr, &context);
  if (!module)
    return result;
  Compilation(options, result).run(*module, source);
  return result;
}
