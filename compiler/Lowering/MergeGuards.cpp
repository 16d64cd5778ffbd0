//===- MergeGuards.cpp - fa-merge-guards: one branch per guard ------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements `fa-merge-guards`, a pass over the gpu dialect
// (after fa-lower-to-gpu and CSE): scf.if ops of one block that test the
// same condition become one.
//
// fa-lower-to-gpu guards every tile load with the bound of its rows (an
// scf.if per load_tile, the row's elements or zeros); a split-KV combine
// trip loads each split's LSE and O under the same bound, 16 guards a trip
// at 8 splits, and gfx906 pays each with s_and_saveexec, s_cbranch_execz
// and s_or_b64 around one load. Merged, one guard covers all of a trip's
// loads.
//
// For each scf.if A, the later ops of its block are scanned. An scf.if B
// with A's condition (the same SSA value: CSE has run) joins A when every
// value B's regions use from outside is defined above A, or by ops between
// A and B that have no memory effects, no regions and do not depend on A:
// those move above A, in order. The scan stops at the first op between
// them that may write memory (a store, a barrier) or whose effects are
// unknown; B moves above ops that read memory only if B itself writes
// nothing. A's then ops come first in the merged then block, B's after
// them (each region keeps its order), the results A's then B's.
//
//===----------------------------------------------------------------------===//

#include "compiler/Lowering/PassDetail.h"

#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::fa {
#define GEN_PASS_DEF_FAMERGEGUARDSPASS
#include "compiler/Lowering/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;

namespace {
/// What `op` (with its regions) may do to memory.
struct Effects {
  bool known = true, reads = false, writes = false;
};

Effects effectsOf(Operation *op) {
  Effects e;
  std::optional<SmallVector<MemoryEffects::EffectInstance>> all =
      getEffectsRecursively(op);
  if (!all) {
    e.known = false;
    return e;
  }
  for (const MemoryEffects::EffectInstance &it : *all) {
    if (isa<MemoryEffects::Read>(it.getEffect()))
      e.reads = true;
    else
      e.writes = true; // write, allocate, free
  }
  return e;
}

/// The ops between `a` and `b` (one block) that `b`'s regions depend on,
/// in block order, or failure where one of them cannot move above `a`.
FailureOr<SmallVector<Operation *>> hoistable(scf::IfOp a, scf::IfOp b) {
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(b->getRegions(), used);
  SmallVector<Value> work(used.begin(), used.end());
  llvm::SetVector<Operation *> slice;
  Block *block = a->getBlock();
  while (!work.empty()) {
    Operation *def = work.pop_back_val().getDefiningOp();
    if (!def || def->getBlock() != block || def->isBeforeInBlock(a) ||
        slice.contains(def))
      continue; // a block argument, or above `a`, or already taken
    if (def == a.getOperation() || def->getNumRegions() != 0 ||
        !isMemoryEffectFree(def))
      return failure();
    slice.insert(def);
    llvm::append_range(work, def->getOperands());
  }
  SmallVector<Operation *> ordered(slice.begin(), slice.end());
  llvm::sort(ordered, [](Operation *x, Operation *y) {
    return x->isBeforeInBlock(y);
  });
  return ordered;
}

/// Moves the ops of `from` but its terminator to the end of `to`, and
/// returns the terminator's operands.
SmallVector<Value> spliceBody(Block *from, Block *to) {
  SmallVector<Value> yielded;
  if (!from)
    return yielded;
  Operation *term = from->getTerminator();
  llvm::append_range(yielded, term->getOperands());
  to->getOperations().splice(to->end(), from->getOperations(), from->begin(),
                             Block::iterator(term));
  return yielded;
}

/// `a` and `b` (same condition, `b`'s dependences above `a`) as one scf.if
/// at `a`'s place.
scf::IfOp merge(scf::IfOp a, scf::IfOp b) {
  OpBuilder builder(a);
  SmallVector<Type> types(a.getResultTypes());
  llvm::append_range(types, b.getResultTypes());
  const bool withElse = a.elseBlock() || b.elseBlock();
  auto merged = scf::IfOp::create(builder, a.getLoc(), types,
                                  a.getCondition(), withElse);
  auto fill = [&](Block *to, Block *fromA, Block *fromB) {
    // The builder gives a result-less scf.if its yields; drop them.
    if (!to->empty() && to->back().hasTrait<OpTrait::IsTerminator>())
      to->back().erase();
    SmallVector<Value> yielded = spliceBody(fromA, to);
    llvm::append_range(yielded, spliceBody(fromB, to));
    OpBuilder end = OpBuilder::atBlockEnd(to);
    scf::YieldOp::create(end, a.getLoc(), yielded);
  };
  fill(merged.thenBlock(), a.thenBlock(), b.thenBlock());
  if (withElse)
    fill(merged.elseBlock(), a.elseBlock(), b.elseBlock());
  const unsigned na = a.getNumResults();
  for (auto [i, r] : llvm::enumerate(a.getResults()))
    r.replaceAllUsesWith(merged.getResult(i));
  for (auto [i, r] : llvm::enumerate(b.getResults()))
    r.replaceAllUsesWith(merged.getResult(na + i));
  a.erase();
  b.erase();
  return merged;
}

/// Merges the guards of `block` (not of nested blocks).
void mergeInBlock(Block &block) {
  for (Operation *op = block.empty() ? nullptr : &block.front(); op;
       op = op->getNextNode()) {
    auto a = dyn_cast<scf::IfOp>(op);
    if (!a)
      continue;
    bool sawRead = false;
    for (Operation *next = a->getNextNode(); next;) {
      Operation *after = next->getNextNode();
      auto b = dyn_cast<scf::IfOp>(next);
      if (b && b.getCondition() == a.getCondition() &&
          !(sawRead && effectsOf(b).writes)) {
        FailureOr<SmallVector<Operation *>> deps = hoistable(a, b);
        if (succeeded(deps)) {
          for (Operation *dep : *deps)
            dep->moveBefore(a);
          a = merge(a, b);
          next = after;
          continue;
        }
      }
      // `next` stays between `a` and what follows.
      Effects e = effectsOf(next);
      if (!e.known || e.writes || next->hasTrait<OpTrait::IsTerminator>())
        break;
      sawRead |= e.reads;
      next = after;
    }
    op = a;
  }
}

struct FaMergeGuardsPass
    : public mlir::fa::impl::FaMergeGuardsPassBase<FaMergeGuardsPass> {
  void runOnOperation() override {
    SmallVector<Block *> blocks;
    // Inner blocks first: merging erases the guards' own blocks, which
    // are then done.
    getOperation()->walk<WalkOrder::PostOrder>(
        [&](Block *block) { blocks.push_back(block); });
    for (Block *block : blocks)
      mergeInBlock(*block);
  }
};
} // namespace
