//===- Promote.cpp - fa-promote: tiles in LDS made explicit (Level 1b) ----===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements `fa-promote`, the pass that creates the memory level.
// For every tile grid (`scf.forall` with `#fa.tile`):
//
//   1. each fa.load_tile becomes an fa.lds_buffer (allocated at the top of
//      the grid body, named after its role) and an fa.copy_tile where the
//      load was. The right operand of P·V is stored pair-interleaved (16-bit
//      types) so that the product can read two keys as one 32-bit word.
//      With `kv_shared`, K and V share the slot "kv" and the copy into the
//      slot moves down to just before its first reader;
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

#include "compiler/Passes.h"
#include "compiler/Target.h"

#include "llvm/ADT/StringSet.h"
#include "llvm/Support/raw_ostream.h"

namespace mlir::fa {
#define GEN_PASS_DEF_FAPROMOTEPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

//===----------------------------------------------------------------------===//
// Barrier placement
//===----------------------------------------------------------------------===//

namespace {
/// LDS slots accessed since the last barrier.
struct SyncState {
  llvm::StringSet<> written, read;

  void join(const SyncState &other) {
    for (const auto &s : other.written)
      written.insert(s.getKey());
    for (const auto &s : other.read)
      read.insert(s.getKey());
  }
  bool operator==(const SyncState &other) const {
    auto same = [](const llvm::StringSet<> &a, const llvm::StringSet<> &b) {
      if (a.size() != b.size())
        return false;
      for (const auto &s : a)
        if (!b.contains(s.getKey()))
          return false;
      return true;
    };
    return same(written, other.written) && same(read, other.read);
  }
};
} // namespace

static StringRef storageOf(Value buffer) {
  if (auto def = buffer.getDefiningOp<LdsBufferOp>())
    return def.getStorage();
  return "";
}

/// The LDS slots `op` reads and writes.
static void ldsAccesses(Operation *op, SmallVectorImpl<StringRef> &reads,
                        SmallVectorImpl<StringRef> &writes) {
  if (auto copy = dyn_cast<CopyTileOp>(op))
    writes.push_back(storageOf(copy.getDest()));
  else if (auto write = dyn_cast<WriteTileOp>(op))
    writes.push_back(storageOf(write.getDest()));
  else if (auto dot = dyn_cast<LdsDotOp>(op))
    reads.append({storageOf(dot.getLhs()), storageOf(dot.getRhs())});
}

/// Scans `block` from `state`; with `insert`, places the barriers the scan
/// finds missing. Returns the state at the end of the block.
static SyncState syncBlock(Block &block, SyncState state, bool insert,
                           int64_t &barriers) {
  for (Operation &op : llvm::make_early_inc_range(block)) {
    if (isa<gpu::BarrierOp>(op)) {
      state = SyncState();
      continue;
    }
    if (auto loop = dyn_cast<scf::ForOp>(op)) {
      // What one iteration leaves behind reaches the next one's start.
      Block &body = *loop.getBody();
      SyncState entry = state;
      for (int i = 0; i < 8; ++i) {
        int64_t ignored = 0;
        SyncState next = state;
        next.join(syncBlock(body, entry, false, ignored));
        if (next == entry)
          break;
        entry = std::move(next);
      }
      // Zero iterations leave `state` as it was.
      state.join(syncBlock(body, entry, insert, barriers));
      continue;
    }
    for (Region &region : op.getRegions())
      for (Block &inner : region)
        state.join(syncBlock(inner, state, insert, barriers));
    SmallVector<StringRef> reads, writes;
    ldsAccesses(&op, reads, writes);
    bool race = false;
    for (StringRef w : writes)
      race |= state.read.contains(w) || state.written.contains(w);
    for (StringRef r : reads)
      race |= state.written.contains(r);
    if (race) {
      if (insert) {
        OpBuilder b(&op);
        gpu::BarrierOp::create(b, op.getLoc());
        ++barriers;
      }
      state = SyncState();
    }
    for (StringRef w : writes)
      state.written.insert(w);
    for (StringRef r : reads)
      state.read.insert(r);
  }
  return state;
}

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
  const bool widenTiles =
      widen == "on" || (widen == "auto" && target && target->widenLds);
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
  for (LoadTileOp load : loads) {
    auto type = load.getResult().getType();
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
                       load.getHead(), load.getRow(), buffer);
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
  for (LoadTileOp load : loads)
    load.erase();

  int64_t barriers = 0;
  syncBlock(*grid.getBody(), SyncState(), /*insert=*/true, barriers);
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
