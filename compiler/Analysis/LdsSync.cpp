//===- LdsSync.cpp - Barriers between LDS accesses of the memory level ----===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// A forward scan over a block tracks which LDS slots were written and read
// since the last barrier (loops iterate to a fixed point, so what the end of
// an iteration leaves reaches its start), and places a gpu.barrier before an
// access that would otherwise race: reading a slot written since the last
// barrier (RAW), or writing one read or written since then (WAR, WAW).
// Writers are fa.copy_tile, fa.stage_tile and fa.write_tile; readers are
// fa.lds_dot. fa.fetch_tile touches no LDS.
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/LdsSync.h"

#include "dialect/FaOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "llvm/ADT/StringSet.h"

using namespace mlir;
using namespace mlir::fa;

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

StringRef mlir::fa::ldsStorageOf(Value buffer) {
  if (auto def = buffer.getDefiningOp<LdsBufferOp>())
    return def.getStorage();
  return "";
}

void mlir::fa::ldsAccesses(Operation *op, SmallVectorImpl<StringRef> &reads,
                           SmallVectorImpl<StringRef> &writes) {
  if (auto copy = dyn_cast<CopyTileOp>(op))
    writes.push_back(ldsStorageOf(copy.getDest()));
  else if (auto stage = dyn_cast<StageTileOp>(op))
    writes.push_back(ldsStorageOf(stage.getDest()));
  else if (auto write = dyn_cast<WriteTileOp>(op))
    writes.push_back(ldsStorageOf(write.getDest()));
  else if (auto dot = dyn_cast<LdsDotOp>(op))
    reads.append({ldsStorageOf(dot.getLhs()), ldsStorageOf(dot.getRhs())});
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

int64_t mlir::fa::placeLdsBarriers(Block &block) {
  int64_t barriers = 0;
  syncBlock(block, SyncState(), /*insert=*/true, barriers);
  return barriers;
}
