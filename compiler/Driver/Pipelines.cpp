//===- Pipelines.cpp - fa pass pipelines ----------------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file assembles the passes into the pipeline `fac` runs and registers
// the same pipeline for `fa-opt --fa-pipeline`.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Pipelines.h"
#include "compiler/Analysis/TargetDesc.h"
#include "compiler/Lowering/PassDetail.h"
#include "compiler/Testing/PlantedBugs.h"
#include "compiler/Transforms/PassDetail.h"

#include "mlir/Conversion/ArithToLLVM/ArithToLLVM.h"
#include "mlir/Conversion/ControlFlowToLLVM/ControlFlowToLLVM.h"
#include "mlir/Conversion/FuncToLLVM/ConvertFuncToLLVM.h"
#include "mlir/Conversion/MathToLLVM/MathToLLVM.h"
#include "mlir/Conversion/MemRefToLLVM/MemRefToLLVM.h"
#include "mlir/Conversion/UBToLLVM/UBToLLVM.h"
#include "mlir/Conversion/VectorToLLVM/ConvertVectorToLLVM.h"
#include "mlir/Dialect/AMDGPU/IR/AMDGPUDialect.h"
#include "mlir/Dialect/ControlFlow/IR/ControlFlow.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/LLVMIR/ROCDLDialect.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/Passes.h"

using namespace mlir;

void fa::registerFaDialects(DialectRegistry &registry) {
  registry.insert<fa::FaDialect, func::FuncDialect, arith::ArithDialect,
                  math::MathDialect, scf::SCFDialect, memref::MemRefDialect,
                  tensor::TensorDialect, vector::VectorDialect, gpu::GPUDialect,
                  ROCDL::ROCDLDialect, NVVM::NVVMDialect, LLVM::LLVMDialect,
                  nvgpu::NVGPUDialect, cf::ControlFlowDialect,
                  amdgpu::AMDGPUDialect>();
  // The ConvertToLLVM interfaces that the gpu-to-rocdl/nvvm conversions use
  // for the ops inside kernels.
  arith::registerConvertArithToLLVMInterface(registry);
  cf::registerConvertControlFlowToLLVMInterface(registry);
  registerConvertFuncToLLVMInterface(registry);
  registerConvertMathToLLVMInterface(registry);
  registerConvertMemRefToLLVMInterface(registry);
  vector::registerConvertVectorToLLVMInterface(registry);
  ub::registerConvertUBToLLVMInterface(registry);
}

void fa::registerFaPasses() {
  registerFaTransformsPasses();
  registerFaLoweringPasses();
}

void fa::buildKernelPipeline(OpPassManager &pm,
                             const PipelineOptions &options) {
  if (options.fuse)
    pm.addPass(createFaFusePass());
  FaTilePassOptions tile;
  tile.target = options.target;
  tile.blockM = options.blockM;
  tile.blockN = options.blockN;
  tile.waves = options.waves;
  tile.stages = options.stages;
  tile.allowBf16 = options.allowBf16;
  tile.kvShared = options.kvShared;
  tile.mergeSplits = options.mergeSplits;
  tile.kvSplits = options.kvSplits;
  tile.gqaPack = options.gqaPack;
  tile.trace = options.trace;
  tile.report = options.report;
  // A planted bug goes to the pass that plants it; an unknown name goes to
  // fa-tile, which rejects it.
  const PlantedBugInfo *bug = lookupPlantedBug(options.plantBug);
  FaLowerToGpuPassOptions lower;
  lower.shareRows = options.shareRows;
  if (bug && bug->pass == "fa-lower-to-gpu")
    lower.testPlantBug = options.plantBug;
  else if (!bug || bug->pass != "fa-double-buffer")
    tile.testPlantBug = options.plantBug;
  pm.addPass(createFaTilePass(tile));
  FaPromotePassOptions promote;
  promote.remarks = options.report;
  promote.pairRhs = options.pairRhs;
  promote.widen = options.widenLds;
  pm.addPass(createFaPromotePass(promote));
  // Without padding the pass still records (and reports) the degrees of
  // the unpadded layout.
  FaPadLdsPassOptions pad;
  pad.remarks = options.report;
  pad.apply = options.padLds;
  pad.unitBytes = options.ldsPadBytes;
  pm.addPass(createFaPadLdsPass(pad));
  FaDoubleBufferPassOptions buffer;
  buffer.remarks = options.report;
  buffer.ahead = options.fetchAhead;
  if (bug && bug->pass == "fa-double-buffer")
    buffer.testPlantBug = options.plantBug;
  pm.addPass(createFaDoubleBufferPass(buffer));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  pm.addPass(createFaLowerToGpuPass(lower));
  pm.addPass(createCanonicalizerPass());
  pm.addPass(createCSEPass());
  const TargetDesc *target = lookupTarget(options.target);
  if (target && target->mergeGuards)
    pm.addPass(createFaMergeGuardsPass());
}

namespace {
struct FaPipelineCLOptions : public PassPipelineOptions<FaPipelineCLOptions> {
  Option<std::string> target{*this, "target",
                             llvm::cl::desc("gfx906, sm_90 or host"),
                             llvm::cl::init("gfx906")};
  Option<int64_t> blockM{*this, "block-m", llvm::cl::init(0)};
  Option<int64_t> blockN{*this, "block-n", llvm::cl::init(0)};
  Option<int64_t> waves{*this, "waves", llvm::cl::init(0)};
  Option<int64_t> stages{
      *this, "stages",
      llvm::cl::desc("K/V stages: 0 (auto), 1, or 2 (double-buffered)"),
      llvm::cl::init(0)};
  Option<bool> allowBf16{*this, "allow-bf16", llvm::cl::init(false)};
  Option<bool> padLds{*this, "pad-lds",
                      llvm::cl::desc("Run fa-pad-lds (default true)"),
                      llvm::cl::init(true)};
  Option<std::string> kvShared{
      *this, "kv-shared",
      llvm::cl::desc("K and V in one LDS slot: auto, on or off"),
      llvm::cl::init("auto")};
  Option<bool> pairRhs{
      *this, "pair-rhs",
      llvm::cl::desc("Store V pair-interleaved (fa-promote, default true)"),
      llvm::cl::init(true)};
  Option<std::string> widenLds{
      *this, "widen-lds",
      llvm::cl::desc("16-bit tiles in LDS as f32: auto, on or off"),
      llvm::cl::init("auto")};
  Option<std::string> fetchAhead{
      *this, "fetch-ahead",
      llvm::cl::desc("fa-double-buffer: next-block or in-block"),
      llvm::cl::init("next-block")};
  Option<std::string> shareRows{
      *this, "share-rows",
      llvm::cl::desc("fa-lower-to-gpu: lhs rows rotated around a thread "
                     "row: auto, on or off"),
      llvm::cl::init("auto")};
  Option<std::string> kvSplits{
      *this, "kv-splits",
      llvm::cl::desc("fa-tile: split-KV, off, runtime or auto"),
      llvm::cl::init("auto")};
  Option<std::string> mergeSplits{
      *this, "merge-splits",
      llvm::cl::desc("fa-tile: the combine's fa.merge_splits, auto, on or "
                     "off"),
      llvm::cl::init("auto")};
  Option<std::string> gqaPack{*this, "gqa-pack",
                              llvm::cl::desc("fa-tile: GQA packing, off or on"),
                              llvm::cl::init("off")};
  Option<bool> trace{*this, "trace",
                     llvm::cl::desc("fa-tile: the layer-2 trace"),
                     llvm::cl::init(false)};
  Option<std::string> testPlantBug{
      *this, "test-plant-bug",
      llvm::cl::desc("Test only: plant a bug (PlantedBugs.h)"),
      llvm::cl::init("")};
};
} // namespace

void fa::registerFaPipelines() {
  PassPipelineRegistration<FaPipelineCLOptions>(
      "fa-pipeline",
      "fa-fuse, fa-tile and the lowering to the gpu dialect for a target",
      [](OpPassManager &pm, const FaPipelineCLOptions &cl) {
        PipelineOptions options;
        options.target = cl.target;
        options.blockM = cl.blockM;
        options.blockN = cl.blockN;
        options.waves = cl.waves;
        options.stages = cl.stages;
        options.allowBf16 = cl.allowBf16;
        options.plantBug = cl.testPlantBug;
        options.padLds = cl.padLds;
        options.kvShared = cl.kvShared;
        options.pairRhs = cl.pairRhs;
        options.widenLds = cl.widenLds;
        options.fetchAhead = cl.fetchAhead;
        options.shareRows = cl.shareRows;
        options.kvSplits = cl.kvSplits;
        options.gqaPack = cl.gqaPack;
        options.mergeSplits = cl.mergeSplits;
        options.trace = cl.trace;
        buildKernelPipeline(pm, options);
      });
}
