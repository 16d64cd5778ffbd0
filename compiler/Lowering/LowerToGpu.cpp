//===- LowerToGpu.cpp - fa-lower-to-gpu: tile IR -> gpu kernels -----------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements `fa-lower-to-gpu`. For every tile-level grid
// (`scf.forall` carrying `#fa.tile`) it
//
//   1. creates a `gpu.func` kernel in `gpu.module @fa_kernels` with the
//      argument list of KernelAbi.h (flat buffers, sizes, strides);
//   2. allocates the memory level's LDS (fa-promote made it explicit): one
//      workgroup attribution per storage slot, copies, fragment writes and
//      the barriers fa-promote placed;
//   3. maps threads (KernelLowering.h): tensors of BLOCK_M rows become
//      per-thread fragments (1-D vectors), row reductions are lane shuffles,
//      fa.lds_dot is a per-thread f32 FMA loop over LDS operand pairs;
//   4. versions a K/V loop on whether its copies can use 16-byte vectors;
//   5. replaces the grid with a host-side `gpu.launch_func` that computes
//      the ABI's arguments from the memref descriptors (with fa-tile's
//      trace, the trace buffer and the traced row after them).
//
//===----------------------------------------------------------------------===//

#include "compiler/Lowering/KernelLowering.h"
#include "compiler/Lowering/PassDetail.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::fa {
#define GEN_PASS_DEF_FALOWERTOGPUPASS
#include "compiler/Lowering/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

static constexpr StringLiteral kGpuModuleName = "fa_kernels";

static gpu::GPUModuleOp getOrCreateGpuModule(ModuleOp module) {
  if (auto existing = module.lookupSymbol<gpu::GPUModuleOp>(kGpuModuleName))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(),
                  b.getUnitAttr());
  return gpu::GPUModuleOp::create(b, module.getLoc(), kGpuModuleName);
}

/// The host side: flatten each memref to the ABI's rank-1 view, compute the
/// sizes and strides, launch.
static void buildLaunch(OpBuilder &b, scf::ForallOp grid, gpu::GPUFuncOp kernel,
                        ArrayRef<int64_t> roles, int64_t threads) {
  Location loc = grid.getLoc();
  auto func = grid->getParentOfType<func::FuncOp>();
  Value c1 = arith::ConstantIndexOp::create(b, loc, 1);
  SmallVector<Value> flat, strides;
  for (int r = 0; r < kNumRoles; ++r) {
    auto flatType = cast<MemRefType>(kernel.getArgumentTypes()[r]);
    if (roles[r] < 0) {
      Value empty = memref::AllocaOp::create(
          b, loc, MemRefType::get({0}, flatType.getElementType()));
      flat.push_back(memref::CastOp::create(b, loc, flatType, empty));
      for (int i = 0; i < 2; ++i)
        strides.push_back(arith::ConstantIntOp::create(b, loc, 0, 64));
      continue;
    }
    Value m = func.getArgument(roles[r]);
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, m);
    // Elements from the first to one past the last addressable one.
    Value extent = c1;
    int64_t rank = cast<MemRefType>(m.getType()).getRank();
    for (int64_t i = 0; i < rank; ++i) {
      Value last = arith::SubIOp::create(b, loc, meta.getSizes()[i], c1);
      extent = arith::AddIOp::create(
          b, loc, extent,
          arith::MulIOp::create(b, loc, last, meta.getStrides()[i]));
    }
    flat.push_back(memref::ReinterpretCastOp::create(
        b, loc, flatType, meta.getBaseBuffer(), OpFoldResult(meta.getOffset()),
        ArrayRef<OpFoldResult>{extent},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)}));
    for (int64_t i = 0; i + 1 < rank; ++i)
      strides.push_back(arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                                   meta.getStrides()[i]));
  }
  auto dim = [&](int role, int64_t d) -> Value {
    Value v = memref::DimOp::create(b, loc, func.getArgument(roles[role]), d);
    return arith::IndexCastOp::create(b, loc, b.getI64Type(), v);
  };
  SmallVector<Value> args(flat);
  args.append({dim(kQ, 0), dim(kQ, 1), dim(kK, 1), dim(kQ, 2), dim(kK, 2)});
  args.append(strides);
  // The flat rank-1 view of a contiguous buffer, or an empty one for an
  // absent role.
  auto contiguous = [&](int r, int64_t arg) -> Value {
    auto flatType = cast<MemRefType>(kernel.getArgumentTypes()[arg]);
    if (roles[r] < 0) {
      Value empty = memref::AllocaOp::create(
          b, loc, MemRefType::get({0}, flatType.getElementType()));
      return memref::CastOp::create(b, loc, flatType, empty);
    }
    Value m = func.getArgument(roles[r]);
    auto meta = memref::ExtractStridedMetadataOp::create(b, loc, m);
    Value extent = c1;
    for (Value size : meta.getSizes())
      extent = arith::MulIOp::create(b, loc, extent, size);
    return memref::ReinterpretCastOp::create(
        b, loc, flatType, meta.getBaseBuffer(), OpFoldResult(meta.getOffset()),
        ArrayRef<OpFoldResult>{extent},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)});
  };
  if (roles.size() >= kNumSplitRoles) {
    // ABI version 2: the workspace (contiguous) and S = its batches / B; a
    // paged kernel that is not split-KV: none, and S = 1.
    args.push_back(contiguous(kWsO, kWsArg));
    args.push_back(contiguous(kWsLse, kWsArg + 1));
    if (roles[kWsLse] < 0) {
      args.push_back(arith::ConstantIntOp::create(b, loc, 1, 64));
    } else {
      Value s = arith::DivUIOp::create(
          b, loc,
          memref::DimOp::create(b, loc, func.getArgument(roles[kWsLse]), 0),
          memref::DimOp::create(b, loc, func.getArgument(roles[kQ]), 0));
      args.push_back(arith::IndexCastOp::create(b, loc, b.getI64Type(), s));
    }
  }
  if (roles.size() >= kNumPagedRoles && roles[kTable] < 0) {
    // A varlen kernel: no block table nor lengths, page size and stride 0.
    args.push_back(contiguous(kTable, kTableArg));
    args.push_back(contiguous(kSeqLens, kTableArg + 1));
    args.append(2, arith::ConstantIntOp::create(b, loc, 0, 64));
  } else if (roles.size() >= kNumPagedRoles) {
    // ABI version 3: the block table (rows as it has them: its extent is
    // rows * row stride), the lengths, the page size (the cache's
    // dimension 1) and the table's row stride.
    auto meta = memref::ExtractStridedMetadataOp::create(
        b, loc, func.getArgument(roles[kTable]));
    auto tableType = cast<MemRefType>(kernel.getArgumentTypes()[kTableArg]);
    Value extent =
        arith::MulIOp::create(b, loc, meta.getSizes()[0], meta.getStrides()[0]);
    args.push_back(memref::ReinterpretCastOp::create(
        b, loc, tableType, meta.getBaseBuffer(), OpFoldResult(meta.getOffset()),
        ArrayRef<OpFoldResult>{extent},
        ArrayRef<OpFoldResult>{b.getIndexAttr(1)}));
    args.push_back(contiguous(kSeqLens, kTableArg + 1));
    args.push_back(dim(kK, 1));
    args.push_back(arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                              meta.getStrides()[0]));
  }
  if (roles.size() == kNumVarlenRoles) {
    // ABI version 4: cu_seqlens_q and cu_seqlens_k.
    args.push_back(contiguous(kCuQ, kCuArg));
    args.push_back(contiguous(kCuK, kCuArg + 1));
  }
  if (auto head = grid->getAttrOfType<DenseI64ArrayAttr>("fa.head_params")) {
    // The head words: ALiBi slopes and sinks ([Hq] f32), or empty ones.
    for (int i = 0; i < 2; ++i) {
      auto flatType = cast<MemRefType>(
          kernel.getArgumentTypes()[headParamsArg(roles.size()) + i]);
      if (head[i] < 0) {
        Value empty = memref::AllocaOp::create(
            b, loc, MemRefType::get({0}, flatType.getElementType()));
        args.push_back(memref::CastOp::create(b, loc, flatType, empty));
        continue;
      }
      Value m = func.getArgument(head[i]);
      auto meta = memref::ExtractStridedMetadataOp::create(b, loc, m);
      args.push_back(memref::ReinterpretCastOp::create(
          b, loc, flatType, meta.getBaseBuffer(),
          OpFoldResult(meta.getOffset()),
          ArrayRef<OpFoldResult>{OpFoldResult(meta.getSizes()[0])},
          ArrayRef<OpFoldResult>{b.getIndexAttr(1)}));
    }
  }
  if (auto trace = grid->getAttrOfType<DenseI64ArrayAttr>("fa.trace")) {
    // The trace words: the buffer (rank 1 already) and batch, head, row.
    args.push_back(memref::CastOp::create(b, loc,
                                          kernel.getArgumentTypes()[kTraceArg],
                                          func.getArgument(trace[0])));
    for (int i = 1; i < 4; ++i)
      args.push_back(arith::IndexCastOp::create(b, loc, b.getI64Type(),
                                                func.getArgument(trace[i])));
  }

  SmallVector<Value> gridSize =
      getValueOrCreateConstantIndexOp(b, loc, grid.getMixedUpperBound());
  Value tx = arith::ConstantIndexOp::create(b, loc, threads);
  gpu::LaunchFuncOp::create(
      b, loc, kernel, {gridSize[0], gridSize[1], gridSize[2]}, {tx, c1, c1},
      /*dynamicSharedMemorySize=*/Value(), args);
}

/// What makes `grid` unusable as an fa tile grid, or "" if nothing: the
/// kernel is built from the grid's (Q block, head, batch) ids and from the
/// memref arguments that `fa.args` names (-1 only for an absent LSE).
static std::string checkGridShape(scf::ForallOp grid, ArrayRef<int64_t> roles) {
  if (grid.getRank() != 3)
    return "expected 3 induction variables, got " +
           std::to_string(grid.getRank());
  auto func = grid->getParentOfType<func::FuncOp>();
  if (!func)
    return "not inside a func.func";
  for (int r = 0; r < kNumRoles; ++r) {
    std::string role = "fa.args[" + std::to_string(r) + "]";
    if (roles[r] < 0 && r == kLse)
      continue;
    if (roles[r] < 0 ||
        roles[r] >= static_cast<int64_t>(func.getNumArguments()))
      return role + " = " + std::to_string(roles[r]) +
             " is not an argument of the function";
    auto type = dyn_cast<MemRefType>(func.getArgument(roles[r]).getType());
    int64_t rank = r == kLse ? 3 : 4;
    if (!type || type.getRank() != rank)
      return role + " must be a rank-" + std::to_string(rank) + " memref";
    if (r != kLse && ShapedType::isDynamic(type.getShape()[3]))
      return role + " must have a static head dimension";
  }
  if (roles.size() == kNumRoles)
    return "";
  if (roles.size() != kNumSplitRoles && roles.size() != kNumPagedRoles &&
      roles.size() != kNumVarlenRoles)
    return "fa.args has " + std::to_string(roles.size()) +
           " entries, expected 5, 7 for split-KV, 9 for paged K/V or 11 for "
           "varlen";
  // Role r: a rank-`rank` memref argument of `elt` (what: for the message).
  auto check = [&](int r, int64_t rank, Type elt,
                   StringRef what) -> std::string {
    std::string role = "fa.args[" + std::to_string(r) + "]";
    if (roles[r] < 0 ||
        roles[r] >= static_cast<int64_t>(func.getNumArguments()))
      return role + " = " + std::to_string(roles[r]) +
             " is not an argument of the function";
    auto type = dyn_cast<MemRefType>(func.getArgument(roles[r]).getType());
    if (!type || type.getRank() != rank || type.getElementType() != elt) {
      std::string eltName;
      llvm::raw_string_ostream(eltName) << elt;
      return role + " (" + what.str() + ") must be a rank-" +
             std::to_string(rank) + " " + eltName + " memref";
    }
    return "";
  };
  MLIRContext *ctx = grid.getContext();
  Type i32 = IntegerType::get(ctx, 32), f32 = Float32Type::get(ctx);
  if (roles.size() == kNumVarlenRoles &&
      (roles[kTable] >= 0 || roles[kSeqLens] >= 0)) {
    // A mixed batch: varlen queries over a paged cache.
    if (roles[kCuK] >= 0)
      return "a mixed batch (varlen over a paged cache) has no cu_seqlens_k "
             "(fa.args[10] must be -1)";
    for (std::string why : {check(kTable, 2, i32, "the block table"),
                            check(kSeqLens, 1, i32, "the cache lengths"),
                            check(kCuQ, 1, i32, "cu_seqlens_q")})
      if (!why.empty())
        return why;
    if (roles[kWsO] < 0 && roles[kWsLse] < 0)
      return "";
  } else if (roles.size() == kNumVarlenRoles) {
    for (std::string why : {check(kCuQ, 1, i32, "cu_seqlens_q"),
                            check(kCuK, 1, i32, "cu_seqlens_k")})
      if (!why.empty())
        return why;
    if (roles[kWsO] < 0 && roles[kWsLse] < 0)
      return "";
  } else if (roles.size() == kNumPagedRoles) {
    for (std::string why : {check(kTable, 2, i32, "the block table"),
                            check(kSeqLens, 1, i32, "the cache lengths")})
      if (!why.empty())
        return why;
    if (roles[kWsO] < 0 && roles[kWsLse] < 0)
      return "";
  }
  for (std::string why : {check(kWsO, 4, f32, "the split-KV workspace"),
                          check(kWsLse, 3, f32, "the split-KV workspace")})
    if (!why.empty())
      return why;
  return "";
}

/// Lowers one grid to a kernel plus its launch.
static LogicalResult lowerGrid(scf::ForallOp grid, gpu::GPUModuleOp gpuModule,
                               unsigned kernelIndex, PlantedBug bug,
                               StringRef shareRows) {
  auto config = grid->getAttrOfType<TileConfigAttr>("fa.tile");
  auto rolesAttr = grid->getAttrOfType<DenseI64ArrayAttr>("fa.args");
  if (!config || !rolesAttr ||
      (rolesAttr.size() != kNumRoles && rolesAttr.size() != kNumSplitRoles &&
       rolesAttr.size() != kNumPagedRoles &&
       rolesAttr.size() != kNumVarlenRoles))
    return grid.emitOpError()
           << "is not an fa tile grid (missing fa.tile or fa.args)";
  if (std::string why = checkGridShape(grid, rolesAttr.asArrayRef());
      !why.empty())
    return grid.emitOpError() << "is not an fa tile grid (" << why << ")";
  auto traceAttr = grid->getAttrOfType<DenseI64ArrayAttr>("fa.trace");
  if (traceAttr) {
    auto func = grid->getParentOfType<func::FuncOp>();
    auto isArg = [&](int64_t i, bool buffer) {
      if (i < 0 || i >= static_cast<int64_t>(func.getNumArguments()))
        return false;
      Type t = func.getArgument(i).getType();
      auto m = dyn_cast<MemRefType>(t);
      return buffer ? m && m.getRank() == 1 && m.getElementType().isF32()
                    : t.isIndex();
    };
    if (traceAttr.size() != 4 || !isArg(traceAttr[0], true) ||
        !isArg(traceAttr[1], false) || !isArg(traceAttr[2], false) ||
        !isArg(traceAttr[3], false))
      return grid.emitOpError()
             << "is not an fa tile grid (fa.trace must name a rank-1 f32 "
                "memref argument and three index arguments)";
    if (rolesAttr.size() != kNumRoles)
      return grid.emitOpError() << "traces a grid that is not dense (fa.args "
                                   "has "
                                << rolesAttr.size()
                                << " entries): the trace words follow ABI "
                                   "version 1's";
  }
  auto headAttr = grid->getAttrOfType<DenseI64ArrayAttr>("fa.head_params");
  if (headAttr) {
    auto func = grid->getParentOfType<func::FuncOp>();
    auto isVector = [&](int64_t i) {
      if (i == -1)
        return true;
      if (i < 0 || i >= static_cast<int64_t>(func.getNumArguments()))
        return false;
      auto m = dyn_cast<MemRefType>(func.getArgument(i).getType());
      return m && m.getRank() == 1 && m.getElementType().isF32();
    };
    if (headAttr.size() != 2 || !isVector(headAttr[0]) ||
        !isVector(headAttr[1]) || (headAttr[0] < 0 && headAttr[1] < 0))
      return grid.emitOpError()
             << "is not an fa tile grid (fa.head_params must name the ALiBi "
                "slopes and sinks arguments, rank-1 f32 memrefs, or -1; not "
                "both -1)";
    if (traceAttr)
      return grid.emitOpError() << "traces a grid with ALiBi or sinks (the "
                                   "trace words follow ABI version 1's)";
  }
  const TargetDesc *target = lookupTarget(config.getTarget().getValue());
  if (!target)
    return grid.emitOpError()
           << "unknown target '" << config.getTarget().getValue()
           << "'; known targets: " << knownTargetNames();

  auto func = grid->getParentOfType<func::FuncOp>();
  ArrayRef<int64_t> roles = rolesAttr.asArrayRef();
  if (grid->hasAttr("fa.combine") &&
      (roles.size() < kNumSplitRoles || roles[kWsO] < 0))
    return grid.emitOpError()
           << "is a split-KV combine grid without the workspace (fa.args)";
  auto qType = cast<MemRefType>(func.getArgument(roles[kQ]).getType());
  Type elt = qType.getElementType();
  int64_t headDim = qType.getShape()[3];
  // The tiles' D: wider than D where fa-tile padded it for the thread grid
  // (the output tile's columns).
  int64_t tileHeadDim = headDim;
  grid.walk([&](StoreTileOp store) {
    if (store.getTile().getType().getRank() == 2)
      tileHeadDim = store.getTile().getType().getDimSize(1);
  });
  auto mapping =
      chooseThreadMapping(config.getBlockM(), config.getBlockN(), tileHeadDim,
                          config.getThreads(), config.getWaveSize());
  if (!mapping)
    return grid.emitOpError() << "tile config cannot be mapped to "
                              << config.getThreads() << " threads";

  // The kernel, with the ABI's argument list.
  MLIRContext *ctx = grid.getContext();
  OpBuilder mb = OpBuilder::atBlockEnd(gpuModule.getBody());
  auto flatType = [&](Type e) {
    return MemRefType::get(
        {ShapedType::kDynamic}, e,
        StridedLayoutAttr::get(ctx, ShapedType::kDynamic, {1}));
  };
  SmallVector<Type> argTypes(4, flatType(elt));
  argTypes.push_back(flatType(Float32Type::get(ctx)));
  argTypes.append(kNumSizes + kNumStrides, IntegerType::get(ctx, 64));
  const bool varlen = roles.size() == kNumVarlenRoles;
  const bool paged = roles.size() >= kNumPagedRoles; // version 3 words
  const bool split = roles.size() >= kNumSplitRoles;
  if (split) // ABI version 2: workspace O and LSE, S
    argTypes.append({flatType(Float32Type::get(ctx)),
                     flatType(Float32Type::get(ctx)),
                     IntegerType::get(ctx, 64)});
  if (paged) // version 3: block table, cache lengths, page size, row stride
    argTypes.append({flatType(IntegerType::get(ctx, 32)),
                     flatType(IntegerType::get(ctx, 32)),
                     IntegerType::get(ctx, 64), IntegerType::get(ctx, 64)});
  if (varlen) // version 4: cu_seqlens_q, cu_seqlens_k
    argTypes.append({flatType(IntegerType::get(ctx, 32)),
                     flatType(IntegerType::get(ctx, 32))});
  if (headAttr) // ALiBi slopes and sinks
    argTypes.append(
        {flatType(Float32Type::get(ctx)), flatType(Float32Type::get(ctx))});
  if (traceAttr) // the trace buffer; traced batch, head, row
    argTypes.append({flatType(Float32Type::get(ctx)), IntegerType::get(ctx, 64),
                     IntegerType::get(ctx, 64), IntegerType::get(ctx, 64)});
  std::string name = func.getName().str() + "_kernel";
  if (kernelIndex)
    name += std::to_string(kernelIndex);
  auto kernel = gpu::GPUFuncOp::create(mb, grid.getLoc(), name,
                                       FunctionType::get(ctx, argTypes, {}));
  kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), mb.getUnitAttr());
  kernel.setKnownBlockSizeAttr(DenseI32ArrayAttr::get(
      ctx, {static_cast<int32_t>(config.getThreads()), 1, 1}));
  // The kernel records the stages it has: fa-tile's stages=2 is a request
  // that fa-double-buffer carries out (fetches in the grid) or declines.
  bool pipelined = false;
  grid.walk([&](FetchTileOp) { pipelined = true; });
  if (config.getStages() > 1 && !pipelined)
    config = TileConfigAttr::get(ctx, config.getTarget(), config.getBlockM(),
                                 config.getBlockN(), config.getWaves(),
                                 config.getWaveSize(), 1, config.getLdsPad(),
                                 config.getKvShared());
  kernel->setAttr("fa.tile", config);
  for (StringRef attr :
       {"fa.scale", "fa.causal", "fa.window", "fa.softcap", "fa.fetch_ahead",
        "fa.kv_splits", "fa.split_direct", "fa.gqa_packed", "fa.combine",
        "fa.paged", "fa.varlen"})
    if (Attribute a = grid->getAttr(attr))
      kernel->setAttr(attr, a);
  kernel->setAttr("fa.abi_version", mb.getI64IntegerAttr(varlen  ? 4
                                                         : paged ? 3
                                                         : split ? 2
                                                                 : 1));
  kernel->setAttr("fa.has_lse", mb.getBoolAttr(roles[kLse] >= 0));
  if (traceAttr)
    kernel->setAttr("fa.trace", mb.getUnitAttr());
  if (headAttr && headAttr[0] >= 0)
    kernel->setAttr("fa.alibi", mb.getUnitAttr());
  if (headAttr && headAttr[1] >= 0)
    kernel->setAttr("fa.sinks", mb.getUnitAttr());
  kernel->setAttr("fa.head_dim", mb.getI64IntegerAttr(headDim));
  // Sizes fixed at compile time (-1: dynamic); the runtime checks them.
  // A paged cache is [num_pages, page_size, Hkv, D]: Hkv is its dimension
  // 2, and Lk (the longest sequence) is known only at launch.
  auto kType = cast<MemRefType>(func.getArgument(roles[kK]).getType());
  auto staticDim = [](int64_t d) { return ShapedType::isDynamic(d) ? -1 : d; };
  const bool pagedCache = paged && roles[kTable] >= 0;
  kernel->setAttr(
      "fa.static_sizes",
      mb.getDenseI64ArrayAttr(
          {staticDim(qType.getShape()[0]), staticDim(qType.getShape()[1]),
           staticDim(kType.getShape()[pagedCache ? 2 : 1]),
           staticDim(qType.getShape()[2]),
           pagedCache ? -1 : staticDim(kType.getShape()[2])}));

  const bool share =
      shareRows == "on" || (shareRows == "auto" && target->shareRows);
  KernelLowering lowering(grid, kernel, *target, config, *mapping, roles, bug,
                          share);
  if (failed(lowering.run()))
    return failure();

  OpBuilder hb(grid);
  buildLaunch(hb, grid, kernel, roles, config.getThreads());
  grid.erase();
  return success();
}

namespace {
struct FaLowerToGpuPass
    : public mlir::fa::impl::FaLowerToGpuPassBase<FaLowerToGpuPass> {
  using FaLowerToGpuPassBase::FaLowerToGpuPassBase;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    PlantedBug bug;
    if (std::string why = resolvePlantedBug(testPlantBug, getArgument(), bug);
        !why.empty()) {
      module.emitError() << why;
      return signalPassFailure();
    }
    if (shareRows != "auto" && shareRows != "on" && shareRows != "off") {
      module.emitError() << "fa-lower-to-gpu: share-rows must be auto, on or "
                            "off, got '"
                         << shareRows << "'";
      return signalPassFailure();
    }
    SmallVector<scf::ForallOp> grids;
    module.walk([&](scf::ForallOp op) {
      if (op->hasAttr("fa.tile"))
        grids.push_back(op);
    });
    if (grids.empty()) {
      if (remarks)
        module.emitRemark() << "fa-lower-to-gpu: no tile grid to lower";
      return;
    }
    gpu::GPUModuleOp gpuModule = getOrCreateGpuModule(module);
    DenseMap<Operation *, unsigned> perFunc;
    // A split-KV grid names its combine kernel (the next combine grid of
    // the same function): fa.combine = @kernel on the split kernel.
    DenseMap<Operation *, gpu::GPUFuncOp> pendingSplit;
    for (scf::ForallOp grid : grids) {
      Operation *func = grid->getParentOfType<func::FuncOp>();
      unsigned &index = perFunc[func];
      const bool isSplit = grid->hasAttr("fa.kv_splits");
      const bool isCombine = grid->hasAttr("fa.combine");
      if (failed(lowerGrid(grid, gpuModule, index++, bug, shareRows)))
        return signalPassFailure();
      auto kernel = cast<gpu::GPUFuncOp>(gpuModule.getBody()->back());
      if (isSplit)
        pendingSplit[func] = kernel;
      if (isCombine) {
        gpu::GPUFuncOp split = pendingSplit.lookup(func);
        if (!split) {
          kernel.emitOpError() << "is a split-KV combine kernel with no "
                                  "split-KV grid before it";
          return signalPassFailure();
        }
        split->setAttr("fa.combine",
                       FlatSymbolRefAttr::get(kernel.getNameAttr()));
        kernel->setAttr("fa.combine", UnitAttr::get(&getContext()));
        pendingSplit.erase(func);
      }
    }
    for (auto &[func, split] : pendingSplit) {
      split.emitOpError() << "is a split-KV kernel with no combine grid";
      return signalPassFailure();
    }
  }
};
} // namespace
