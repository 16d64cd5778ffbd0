//===- Promote.cpp - fa-promote: tiles in LDS made explicit (Level 1b) ----===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements `fa-promote`, the pass that creates the memory level.
// For every tile grid (`scf.forall` with `#fa.tile`):
//
//   1. each fa.load_tile that a tile product reads becomes an
//      fa.lds_buffer (allocated at the top of the grid body, named after its
//      role) and an fa.copy_tile where the load was (a tile no product
//      reads stays a register load). The right operand of P·V is stored
//      pair-interleaved (16-bit types) so that the product can read two keys as
//      one 32-bit word. With `kv_shared`, K and V share the slot "kv" and the
//      copy into the slot moves down to just before its first reader;
//   2. a tile product whose left operand lives in registers (P) gets a
//      buffer of its own and an fa.write_tile before it;
//   3. every fa.tile_dot becomes an fa.lds_dot over the buffers;
//   4. barriers: a forward scan over each block tracks which slots were
//      written and read since the last barrier (loops iterate to a fixed
//      point, so what the end of an iteration leaves reaches its start), and
//      places a gpu.barrier before an access that would otherwise race:
//      reading a slot written since the last barrier (RAW), or writing one
//      read or written since then (WAR, WAW).
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/LdsSync.h"
#include "compiler/Analysis/TargetDesc.h"
#include "compiler/Transforms/PassDetail.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::fa {
#define GEN_PASS_DEF_FAPROMOTEPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

//===----------------------------------------------------------------------===//
// Promotion
//===----------------------------------------------------------------------===//

namespace {
struct FaPromotePass : public mlir::fa::impl::FaPromotePassBase<FaPromotePass> {
  using FaPromotePassBase::FaPromotePassBase;
  void runOnOperation() override;

private:
  LogicalResult promote(scf::ForallOp grid, TileConfigAttr config);
};
} // namespace

/// "q", "k", "v" for the grid's Q, K and V arguments (fa.args), else "tile".
static std::string roleName(scf::ForallOp grid, Value source) {
  auto roles = grid->getAttrOfType<DenseI64ArrayAttr>("fa.args");
  auto arg = dyn_cast<BlockArgument>(source);
  static const char *const names[] = {"q", "k", "v"};
  if (roles && arg)
    for (size_t i = 0; i < 3 && i < roles.size(); ++i)
      if (roles[i] == int64_t(arg.getArgNumber()))
        return names[i];
  return "tile";
}

LogicalResult FaPromotePass::promote(scf::ForallOp grid,
                                     TileConfigAttr config) {
  MLIRContext *ctx = grid.getContext();
  const TargetDesc *target = lookupTarget(config.getTarget().getValue());
  if (widen != "auto" && widen != "on" && widen != "off") {
    grid.emitError() << "fa-promote: widen must be auto, on or off, got '"
                     << widen << "'";
    return failure();
  }
  // A split-KV (decode) grid follows the target's decode choice. (A
  // split grid with the dense tiles, kv-splits=auto, does too: gfx906,
  // the one target that builds those, widens neither.)
  const bool decode = grid->hasAttr("fa.kv_splits");
  const bool widenTiles =
      widen == "on" || (widen == "auto" && target &&
                        (decode ? target->decodeWidenLds : target->widenLds));
  // The type a tile of `t` is kept in, in LDS.
  auto ldsType = [&](Type t) -> Type {
    if (widenTiles && t.getIntOrFloatBitWidth() == 16)
      return Float32Type::get(ctx);
    return t;
  };
  // The layout fa-promote gives a tile of `type`: #fa.tile's padding, its
  // element type as kept in LDS.
  auto layoutOf = [&](RankedTensorType type) {
    LdsLayout layout;
    layout.rows = type.getDimSize(0);
    layout.cols = type.getDimSize(1);
    layout.pad = config.getLdsPad();
    layout.elementType = ldsType(type.getElementType());
    return layout;
  };
  OpBuilder alloc(ctx);
  alloc.setInsertionPointToStart(grid.getBody());
  SmallVector<LoadTileOp> loads;
  grid.walk([&](LoadTileOp op) { loads.push_back(op); });
  SmallVector<TileDotOp> dots;
  grid.walk([&](TileDotOp op) { dots.push_back(op); });
  if (loads.empty() && dots.empty()) {
    if (remarks)
      grid.emitRemark() << "fa-promote: no tile lives in LDS; nothing to do";
    return success();
  }

  std::string summary;
  llvm::raw_string_ostream os(summary);
  DenseMap<Value, Value> buffers; // loaded tensor -> LDS buffer
  SmallVector<LoadTileOp> promoted;
  for (LoadTileOp load : loads) {
    auto type = load.getResult().getType();
    // A tile no product reads (split-KV's partial results) stays a register
    // load: each thread reads its own fragment.
    if (llvm::none_of(load->getUsers(), llvm::IsaPred<TileDotOp>) &&
        !load->use_empty())
      continue;
    promoted.push_back(load);
    bool rhsOnly = !load->use_empty();
    for (OpOperand &use : load->getUses()) {
      auto dot = dyn_cast<TileDotOp>(use.getOwner());
      if (!dot)
        return load.emitOpError()
               << "cannot be promoted to LDS: its tile is used by '"
               << use.getOwner()->getName()
               << "', and LDS tiles are read only by fa.tile_dot";
      rhsOnly &= use.getOperandNumber() == 1 && !dot.getTransposeRhs();
    }
    std::string name = roleName(grid, load.getSource());
    LdsLayout layout = layoutOf(type);
    // Two keys in one 32-bit word, as a two-element dot product reads them.
    layout.pairs = pairRhs && rhsOnly && layout.rows % 2 == 0 &&
                   layout.elementType.getIntOrFloatBitWidth() == 16;
    bool shared = config.getKvShared() && (name == "k" || name == "v");
    auto buffer =
        LdsBufferOp::create(alloc, load.getLoc(), layout.type(ctx), name,
                            shared ? alloc.getStringAttr("kv") : StringAttr());
    // A copy into a shared slot waits until its tile is needed: the other
    // tile of the slot is read before.
    Operation *at = load;
    if (shared) {
      Operation *first = nullptr;
      for (Operation *user : load->getUsers()) {
        Operation *u = load->getBlock()->findAncestorOpInBlock(*user);
        if (u && (!first || u->isBeforeInBlock(first)))
          first = u;
      }
      if (first)
        at = first;
    }
    OpBuilder b(at);
    CopyTileOp::create(b, load.getLoc(), load.getSource(), load.getBatch(),
                       load.getHead(), load.getRow(), buffer, load.getGroup(),
                       load.getPageTable(), load.getPageRows(),
                       load.getSeqStart(), load.getSeqRows());
    buffers[load.getResult()] = buffer;
    os << "  " << name << ": " << layout.rows << "x" << layout.cols << " "
       << layout.elementType << (layout.pairs ? " pair-interleaved" : "")
       << ", " << layout.bytes() << " bytes" << (shared ? ", slot kv" : "")
       << "\n";
  }
  for (TileDotOp dot : dots) {
    Value rhs = buffers.lookup(dot.getRhs());
    if (!rhs)
      return dot.emitOpError() << "rhs must be a tile loaded with fa.load_tile";
    OpBuilder b(dot);
    Value lhs = buffers.lookup(dot.getLhs());
    if (!lhs) {
      // An operand computed in registers (P) reaches the other threads of
      // its rows through LDS.
      auto type = dot.getLhs().getType();
      LdsLayout layout = layoutOf(type);
      lhs = LdsBufferOp::create(alloc, dot.getLoc(), layout.type(ctx), "p",
                                StringAttr());
      WriteTileOp::create(b, dot.getLoc(), dot.getLhs(), lhs);
      os << "  p: " << layout.rows << "x" << layout.cols << " "
         << layout.elementType << ", " << layout.bytes()
         << " bytes, written from registers\n";
    }
    auto lds = LdsDotOp::create(b, dot.getLoc(), dot.getResult().getType(), lhs,
                                rhs, dot.getAcc(), dot.getTransposeRhs());
    dot.replaceAllUsesWith(lds.getResult());
    dot.erase();
  }
  for (LoadTileOp load : promoted)
    load.erase();

  int64_t barriers = placeLdsBarriers(*grid.getBody());
  if (remarks)
    grid.emitRemark() << "fa-promote: " << buffers.size()
                      << " loaded tiles in LDS, " << barriers
                      << " barriers placed\n"
                      << summary;
  return success();
}

void FaPromotePass::runOnOperation() {
  SmallVector<std::pair<scf::ForallOp, TileConfigAttr>> grids;
  getOperation().walk([&](scf::ForallOp grid) {
    if (auto config = grid->getAttrOfType<TileConfigAttr>("fa.tile"))
      grids.push_back({grid, config});
  });
  for (auto [grid, config] : grids)
    if (failed(promote(grid, config)))
      return signalPassFailure();
}
