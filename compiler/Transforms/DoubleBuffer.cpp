//===- DoubleBuffer.cpp - fa-double-buffer: a pipelined K/V loop ----------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements `fa-double-buffer` (see Passes.td for the schedule it
// builds). The pass works on the memory level: it splits each fa.copy_tile
// of a K/V loop into fa.fetch_tile (global -> registers) and fa.stage_tile
// (registers -> LDS), moves the fetch ahead of the LDS reads it can overlap,
// carries the first group's fetch across iterations, and lets the memory
// level's slot scan (LdsSync.h) place the barriers again.
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/LdsSync.h"
#include "compiler/Analysis/TargetDesc.h"
#include "compiler/Testing/PlantedBugs.h"
#include "compiler/Transforms/PassDetail.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::fa {
#define GEN_PASS_DEF_FADOUBLEBUFFERPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

/// Whether `v` can be recomputed anywhere in `loop`'s body from the
/// induction variable: defined outside the loop, or by pure ops of the body.
static bool recomputable(Value v, scf::ForOp loop, int depth = 0) {
  if (v == loop.getInductionVar() || loop.isDefinedOutsideOfLoop(v))
    return true;
  Operation *def = v.getDefiningOp();
  if (depth > 32 || !def || def->getBlock() != loop.getBody() || !isPure(def) ||
      def->getNumRegions() != 0)
    return false;
  return llvm::all_of(def->getOperands(), [&](Value operand) {
    return recomputable(operand, loop, depth + 1);
  });
}

/// Clones at `b` the body ops `v` depends on, with the induction variable
/// taking the value `iv` (`recomputable(v)` must hold).
static Value recompute(Value v, scf::ForOp loop, OpBuilder &b, IRMapping &map) {
  if (Value mapped = map.lookupOrNull(v))
    return mapped;
  if (loop.isDefinedOutsideOfLoop(v))
    return v;
  Operation *def = v.getDefiningOp();
  for (Value operand : def->getOperands())
    recompute(operand, loop, b, map);
  b.clone(*def, map);
  return map.lookup(v);
}

/// A fetch of `copy`'s tile at `b`, for the iteration whose induction
/// variable is `iv`; rows from `row` instead of the copy's when given.
static FetchTileOp fetchFor(CopyTileOp copy, scf::ForOp loop, OpBuilder &b,
                            Value iv, function_ref<Value(Value)> row = {}) {
  IRMapping map;
  map.map(loop.getInductionVar(), iv);
  Value batch = recompute(copy.getBatch(), loop, b, map);
  Value head = recompute(copy.getHead(), loop, b, map);
  Value r = recompute(copy.getRow(), loop, b, map);
  if (row)
    r = row(r);
  auto layout = getLdsLayout(cast<MemRefType>(copy.getDest().getType()));
  auto type =
      RankedTensorType::get({layout->rows, layout->cols},
                            copy.getSource().getType().getElementType());
  Value pages = copy.getPageTable();
  Value pageRows =
      pages ? recompute(copy.getPageRows(), loop, b, map) : Value();
  Value seqStart = copy.getSeqStart()
                       ? recompute(copy.getSeqStart(), loop, b, map)
                       : Value();
  Value seqRows =
      seqStart ? recompute(copy.getSeqRows(), loop, b, map) : Value();
  return FetchTileOp::create(b, copy.getLoc(), type, copy.getSource(), batch,
                             head, r, copy.getDest(), pages, pageRows, seqStart,
                             seqRows);
}

/// Whether `op` or an op nested in it reads LDS (`slot`: that slot) or,
/// with `orWrites`, also writes it.
static bool usesLds(Operation *op, std::optional<StringRef> slot,
                    bool orWrites) {
  bool found = false;
  op->walk([&](Operation *inner) {
    SmallVector<StringRef> reads, writes;
    ldsAccesses(inner, reads, writes);
    if (!orWrites)
      writes.clear();
    for (StringRef s : llvm::concat<StringRef>(reads, writes))
      found |= !slot || s == *slot;
  });
  return found;
}

/// Moves each copy of `body` down to just before the first op that uses its
/// slot, so that the copies of tiles used at different times form different
/// fetch groups (V's copy then sits before P·V, as fa-promote places it for
/// a shared K/V slot).
static void sinkCopies(Block &body) {
  SmallVector<CopyTileOp> copies;
  for (Operation &op : body)
    if (auto copy = dyn_cast<CopyTileOp>(op))
      copies.push_back(copy);
  for (CopyTileOp copy : llvm::reverse(copies)) {
    StringRef slot = ldsStorageOf(copy.getDest());
    Operation *at = copy->getNextNode();
    while (at && !at->hasTrait<OpTrait::IsTerminator>() &&
           !usesLds(at, slot, /*orWrites=*/true) && !isa<CopyTileOp>(at))
      at = at->getNextNode();
    if (at && at != copy->getNextNode())
      copy->moveBefore(at);
  }
}

/// Moves each register-staged fetch of `grid` past the barriers that
/// follow it before anything else touches memory or uses the fetched tile:
/// only pure ops and other fetches lie between. gfx906 has no back-off
/// barrier, so the backend drains every outstanding load (s_waitcnt
/// vmcnt(0)) before an s_barrier: a fetch left before the barrier that
/// guards the next LDS reads (the stage before P·V, where the next block's
/// first group is fetched) waits for its global loads there instead of
/// overlapping them with the products that follow.
static void fetchAfterBarriers(scf::ForallOp grid) {
  SmallVector<FetchTileOp> fetches;
  grid.walk([&](FetchTileOp op) { fetches.push_back(op); });
  for (FetchTileOp fetch : llvm::reverse(fetches)) {
    Operation *lastBarrier = nullptr;
    for (Operation *at = fetch->getNextNode();
         at && !at->hasTrait<OpTrait::IsTerminator>(); at = at->getNextNode()) {
      if (llvm::is_contained(at->getOperands(), fetch.getResult()))
        break;
      if (isa<gpu::BarrierOp>(at)) {
        lastBarrier = at;
        continue;
      }
      if (!isa<FetchTileOp>(at) && !(isPure(at) && at->getNumRegions() == 0))
        break;
    }
    if (lastBarrier)
      fetch->moveAfter(lastBarrier);
  }
}

static std::string bufferName(Value buffer) {
  auto def = buffer.getDefiningOp<LdsBufferOp>();
  return def ? def.getName().str() : "?";
}

namespace {
struct FaDoubleBufferPass
    : public mlir::fa::impl::FaDoubleBufferPassBase<FaDoubleBufferPass> {
  using FaDoubleBufferPassBase::FaDoubleBufferPassBase;
  void runOnOperation() override;

private:
  /// Pipelines `loop`; appends a description to `os`.
  void pipeline(scf::ForOp loop, scf::ForallOp grid,
                ArrayRef<SmallVector<CopyTileOp>> groups, int64_t threads,
                llvm::raw_ostream &os);
  void processGrid(scf::ForallOp grid, TileConfigAttr config);

  PlantedBug plantedBug = PlantedBug::None;
  bool badOption = false;
};
} // namespace

void FaDoubleBufferPass::pipeline(scf::ForOp loop, scf::ForallOp grid,
                                  ArrayRef<SmallVector<CopyTileOp>> groups,
                                  int64_t threads, llvm::raw_ostream &os) {
  IRRewriter rw(loop.getContext());
  ArrayRef<CopyTileOp> first = groups.front();
  // next-block: the first group of block n+1 is fetched in iteration n;
  // in-block: it is copied in place and only later groups are fetched
  // ahead (fewer registers live across the last group's products).
  const bool carry = ahead == "next-block";
  scf::ForOp newLoop = loop;
  SmallVector<Value> carried;
  if (carry) {
    // Prologue: the first group of block 0, before the loop.
    SmallVector<Value> inits;
    rw.setInsertionPoint(loop);
    for (CopyTileOp copy : first)
      inits.push_back(fetchFor(copy, loop, rw, loop.getLowerBound()));
    // The first group of block n+1, fetched after the last group's stage of
    // block n. The last iteration asks for rows from L on: no loads.
    Operation *lastCopy = groups.back().back();
    auto nextFetches = [&](OpBuilder &b, Location l,
                           ArrayRef<BlockArgument>) -> SmallVector<Value> {
      b.setInsertionPointAfter(lastCopy);
      // The body may already live in the new loop: recompute within it.
      auto current = cast<scf::ForOp>(lastCopy->getParentOp());
      Value next = arith::AddIOp::create(b, l, current.getInductionVar(),
                                         current.getStep());
      Value more = arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt, next,
                                         current.getUpperBound());
      SmallVector<Value> fetched;
      for (CopyTileOp copy : first) {
        OpBuilder outside(grid);
        Value len = memref::DimOp::create(outside, l, copy.getSource(), 2);
        fetched.push_back(fetchFor(copy, current, b, next, [&](Value row) {
          return arith::SelectOp::create(b, l, more, row, len).getResult();
        }));
      }
      return fetched;
    };
    auto replaced =
        cast<LoopLikeOpInterface>(loop.getOperation())
            .replaceWithAdditionalYields(rw, inits, false, nextFetches);
    // scf.for always accepts more iteration arguments.
    assert(succeeded(replaced) && "scf.for refused iteration arguments");
    newLoop = cast<scf::ForOp>(replaced->getOperation());
    for (BlockArgument arg :
         newLoop.getRegionIterArgs().take_back(first.size()))
      carried.push_back(arg);
  }

  // Every copy becomes a stage where it was; groups after the first fetch
  // right after the previous group's stages.
  int64_t maxRegs = 0;
  Operation *previous = nullptr;
  for (auto [g, group] : llvm::enumerate(groups)) {
    SmallVector<Value> tiles;
    if (g == 0 && !carry) {
      previous = group.back();
      continue;
    }
    if (g == 0) {
      tiles.append(carried.begin(), carried.end());
    } else {
      rw.setInsertionPointAfter(previous);
      for (CopyTileOp copy : group)
        tiles.push_back(fetchFor(copy, newLoop, rw, newLoop.getInductionVar()));
    }
    int64_t bytes = 0;
    os << (g ? " | " : "");
    for (auto [i, tile] : llvm::enumerate(tiles)) {
      CopyTileOp copy = group[i];
      rw.setInsertionPoint(copy);
      previous = StageTileOp::create(rw, copy.getLoc(), tile, copy.getDest());
      auto type = cast<RankedTensorType>(tile.getType());
      bytes += type.getNumElements() * type.getElementTypeBitWidth() / 8;
      os << (i ? " " : "") << bufferName(copy.getDest());
      rw.eraseOp(copy);
    }
    if (threads > 0)
      maxRegs = std::max(maxRegs, (bytes + 4 * threads - 1) / (4 * threads));
  }
  if (threads > 0)
    os << "; in flight at most " << maxRegs << " registers per thread; ";
  else
    os << "; in flight in shared staging areas; ";
  if (carry)
    os << "the first group of block n+1 is fetched during block n (prologue "
          "fetch before the loop, the last iteration fetches nothing)\n";
  else
    os << "in-block: the first group is copied in place, the others are "
          "fetched while the earlier ones are used\n";
}

void FaDoubleBufferPass::processGrid(scf::ForallOp grid,
                                     TileConfigAttr config) {
  auto setStages = [&](int64_t stages) {
    grid->setAttr("fa.tile",
                  TileConfigAttr::get(grid.getContext(), config.getTarget(),
                                      config.getBlockM(), config.getBlockN(),
                                      config.getWaves(), config.getWaveSize(),
                                      stages, config.getLdsPad(),
                                      config.getKvShared()));
  };
  if (ahead != "next-block" && ahead != "in-block") {
    grid.emitError() << "fa-double-buffer: ahead must be next-block or "
                        "in-block, got '"
                     << ahead << "'";
    badOption = true;
    return;
  }
  if (config.getStages() != 2) {
    if (remarks)
      grid.emitRemark() << "fa-double-buffer: #fa.tile has stages = "
                        << config.getStages() << "; single-buffered";
    return;
  }
  // The K/V loops: scf.for ops with copies among their own ops.
  SmallVector<std::pair<scf::ForOp, SmallVector<SmallVector<CopyTileOp>>>>
      loops;
  std::string why;
  grid.walk([](gpu::BarrierOp barrier) { barrier.erase(); });
  grid.walk([&](scf::ForOp loop) {
    sinkCopies(*loop.getBody());
    SmallVector<SmallVector<CopyTileOp>> groups;
    bool readSince = true;
    for (Operation &op : *loop.getBody()) {
      auto copy = dyn_cast<CopyTileOp>(op);
      if (!copy) {
        readSince |= usesLds(&op, std::nullopt, /*orWrites=*/false);
        continue;
      }
      if (!recomputable(copy.getBatch(), loop) ||
          !recomputable(copy.getHead(), loop) ||
          !recomputable(copy.getRow(), loop)) {
        why = "a copy's row, batch or head is not computed from the "
              "induction variable by pure ops";
        return;
      }
      if (readSince)
        groups.emplace_back();
      groups.back().push_back(copy);
      readSince = false;
    }
    if (!groups.empty())
      loops.push_back({loop, std::move(groups)});
  });
  if (!why.empty() || loops.empty()) {
    if (why.empty())
      why = "no scf.for copies tiles to LDS";
    setStages(1);
    placeLdsBarriers(*grid.getBody());
    if (remarks)
      grid.emitRemark() << "fa-double-buffer: single-buffered: " << why;
    return;
  }
  std::string summary;
  llvm::raw_string_ostream os(summary);
  const TargetDesc *target = lookupTarget(config.getTarget().getValue());
  const bool async = target && target->asyncCopy;
  for (auto &[loop, groups] : loops) {
    os << "  " << (async ? "cp.async-staged" : "register-staged") << ", "
       << ahead.getValue() << ": " << groups.size()
       << " fetch group(s) in the loop: ";
    pipeline(loop, grid, groups, async ? 0 : config.getThreads(), os);
  }
  grid->setAttr("fa.fetch_ahead", StringAttr::get(grid.getContext(), ahead));
  int64_t barriers = placeLdsBarriers(*grid.getBody());
  if (!async)
    fetchAfterBarriers(grid);
  if (plantedBug == PlantedBug::PipelineNoBarrier) {
    StageTileOp stage;
    grid.walk([&](StageTileOp op) {
      if (!stage && isa<scf::ForOp>(op->getParentOp()))
        stage = op;
    });
    if (auto barrier = dyn_cast_or_null<gpu::BarrierOp>(stage->getPrevNode())) {
      barrier.erase();
      --barriers;
    }
  }
  if (remarks)
    grid.emitRemark() << "fa-double-buffer: K/V loads of block n+1 overlap "
                         "block n; "
                      << barriers << " barriers placed\n"
                      << summary;
}

void FaDoubleBufferPass::runOnOperation() {
  if (std::string why =
          resolvePlantedBug(testPlantBug, getArgument(), plantedBug);
      !why.empty()) {
    getOperation().emitError() << why;
    return signalPassFailure();
  }
  SmallVector<std::pair<scf::ForallOp, TileConfigAttr>> grids;
  getOperation().walk([&](scf::ForallOp grid) {
    if (auto config = grid->getAttrOfType<TileConfigAttr>("fa.tile"))
      grids.push_back({grid, config});
  });
  for (auto [grid, config] : grids)
    processGrid(grid, config);
  if (badOption)
    signalPassFailure();
}
