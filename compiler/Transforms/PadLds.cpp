//===- PadLds.cpp - fa-pad-lds: LDS padding chosen by bank analysis -------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements `fa-pad-lds`, a pass over the memory level
// (fa-promote):
//
//   1. For each tile grid, rebuild the thread mapping fa-lower-to-gpu will
//      use (chooseThreadMapping) and describe every LDS access of the KV
//      loop for one wave as lane -> (row, column) patterns, per buffer:
//      lds_dot operands (lhs rows as pairs shared by a thread row, a
//      transposed rhs as pairs per thread column, a row-major rhs down a
//      column, a pair-interleaved rhs as one word per column), the
//      write_tile of P and the cooperative copies.
//   2. Evaluate each pattern's conflict degree with the target's bank model
//      for every candidate padding (multiples of 2 elements, or of the
//      target's ldsPadBytes, up to max-pad):
//      each buffer gets the smallest padding with its lowest worst degree.
//   3. Keep the paddings, most useful first, while the LDS budget fits and
//      the LDS-bound occupancy stays at the target's goal; rewrite each
//      buffer's memref type (its row stride) and record the largest
//      padding in `#fa.tile`'s lds_pad.
//   4. Record every access's prediction on the grid (`fa.lds_accesses`,
//      KernelInfo.h), which fa-lower-to-gpu carries to the kernel and fac
//      --report prints with the LDS layout. With apply=false only this
//      and the remark: the degrees of the layout as it is.
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/BankConflicts.h"
#include "compiler/Analysis/LdsBudget.h"
#include "compiler/Transforms/PassDetail.h"

#include "llvm/ADT/MapVector.h"
#include "llvm/Support/raw_ostream.h"

#include <functional>

namespace mlir::fa {
#define GEN_PASS_DEF_FAPADLDSPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

namespace {
/// Lane l -> (row, column) of every pattern the pass models: with
/// i = l / q and j = l % q, row = rowI·i + rowJ·j, column = colI·i + colJ·j.
struct LanePattern {
  int64_t q, rowI, rowJ, colI, colJ;
  std::pair<int64_t, int64_t> operator()(int64_t l) const {
    int64_t i = l / q, j = l % q;
    return {rowI * i + rowJ * j, colI * i + colJ * j};
  }
};

/// One KV-loop LDS access of a buffer, for the lanes of one wave: the
/// logical element each lane starts at, and its width.
struct LdsAccess {
  std::string what;
  bool write;
  LanePattern element;
  int64_t accessBytes;
};

struct BufferPlan {
  LdsBufferOp op;
  LdsLayout layout;
  std::vector<LdsAccess> accesses;
  std::vector<int64_t> before, after;
  int64_t pad = 0;
};
} // namespace

/// The conflict degree of `a` on `layout` padded by `pad` elements per row.
static int64_t degree(const BankModel &model, const LdsLayout &layout,
                      const LdsAccess &a, int64_t pad) {
  const int64_t eltBytes = layout.elementType.getIntOrFloatBitWidth() / 8;
  if (!layout.pairs)
    return conflictDegree(model, TileAccess{a.element, a.accessBytes},
                          layout.cols + pad, eltBytes);
  // Pair-interleaved: logical (r, c) is element (r/2, 2c + r%2) of a
  // row-major tile with pair-rows of 2(cols + pad) elements.
  auto element = [&](int64_t lane) {
    auto [r, c] = a.element(lane);
    return std::make_pair(r / 2, 2 * c + r % 2);
  };
  return conflictDegree(model, TileAccess{element, a.accessBytes},
                        2 * (layout.cols + pad), eltBytes);
}

/// The KV-loop accesses of each buffer of `grid` under mapping `m`.
static void collectAccesses(scf::ForallOp grid, const ThreadMapping &m,
                            llvm::MapVector<Value, BufferPlan> &plans) {
  const int64_t tc = m.tc, rm = m.rm;
  // Thread row lane / tc, thread column lane % tc.
  auto byThread = [tc](int64_t rowI, int64_t rowJ, int64_t colI, int64_t colJ) {
    return LanePattern{tc, rowI, rowJ, colI, colJ};
  };
  auto bytesOf = [](const LdsLayout &l) {
    return l.elementType.getIntOrFloatBitWidth() / 8;
  };
  // Only the grid's own fa.lds_buffer ops are planned; an access to any
  // other LDS memref is left to fa-lower-to-gpu, which reports it.
  auto planOf = [&](Value v) -> BufferPlan * {
    auto it = plans.find(v);
    return it == plans.end() ? nullptr : &it->second;
  };
  grid.walk([&](Operation *op) {
    if (auto dot = dyn_cast<LdsDotOp>(op)) {
      BufferPlan *lhs = planOf(dot.getLhs()), *rhs = planOf(dot.getRhs());
      if (!lhs || !rhs)
        return;
      // The reduction runs in pairs when its length is even.
      const int64_t k = lhs->layout.cols;
      const int64_t pair = (k % 2 ? 1 : 2) * bytesOf(lhs->layout);
      lhs->accesses.push_back(
          {"lhs of a product, row pairs (one per thread row)", false,
           byThread(rm, 0, 0, 0), pair});
      if (dot.getTransposeRhs())
        rhs->accesses.push_back(
            {"rhs of a product (transposed), row pairs per thread column",
             false, byThread(0, 1, 0, 0), pair});
      else if (rhs->layout.pairs)
        rhs->accesses.push_back(
            {"rhs of a product, key pairs (one word per column)", false,
             byThread(0, 0, 0, 1), 2 * bytesOf(rhs->layout)});
      else
        rhs->accesses.push_back({"rhs of a product, down a column", false,
                                 byThread(0, 0, 0, 1), bytesOf(rhs->layout)});
      return;
    }
    if (auto write = dyn_cast<WriteTileOp>(op)) {
      BufferPlan *p = planOf(write.getDest());
      if (!p)
        return;
      p->accesses.push_back({"write of a register tile (element per lane)",
                             true, byThread(rm, 0, 0, 1), bytesOf(p->layout)});
      return;
    }
    if (auto copy = dyn_cast<CopyTileOp>(op)) {
      BufferPlan *p = planOf(copy.getDest());
      if (!p)
        return;
      // 16-byte units, consecutive lanes along a row (the aligned path).
      const int64_t width = 16 / bytesOf(p->layout);
      if (p->layout.cols % width)
        return;
      const int64_t perRow = p->layout.cols / width;
      if (p->layout.pairs) {
        // Two rows interleaved: 32 bytes per lane, stored as two 16-byte
        // halves; the first half is the pattern.
        p->accesses.push_back(
            {"copy from global memory (two rows interleaved, 16 B stores)",
             true, LanePattern{perRow, 2, 0, 0, width}, 16});
      } else {
        p->accesses.push_back({"copy from global memory (16 B per lane)", true,
                               LanePattern{perRow, 1, 0, 0, width}, 16});
      }
    }
  });
}

/// Each buffer's padding and its accesses' degrees, unpadded -> as chosen.
static void describePlans(llvm::raw_ostream &os,
                          const llvm::MapVector<Value, BufferPlan> &plans) {
  for (auto &[value, p] : plans) {
    os << "  " << LdsBufferOp(p.op).getName() << ": pad " << p.pad;
    if (p.layout.pairs)
      os << " (pair-interleaved)";
    os << "\n";
    for (auto [a, access] : llvm::enumerate(p.accesses))
      os << "    " << access.what << ", " << access.accessBytes
         << " B per lane: degree " << p.before[a] << " -> " << p.after[a]
         << "\n";
  }
}

/// `fa.lds_accesses` on the grid (KernelInfo.h): per buffer name, its
/// accesses with their lane pattern and degrees.
static void recordPredictions(scf::ForallOp grid,
                              const llvm::MapVector<Value, BufferPlan> &plans) {
  Builder b(grid.getContext());
  SmallVector<NamedAttribute> buffers;
  for (auto &[value, p] : plans) {
    SmallVector<Attribute> accesses;
    for (auto [a, access] : llvm::enumerate(p.accesses)) {
      const LanePattern &l = access.element;
      accesses.push_back(b.getDictionaryAttr({
          b.getNamedAttr("what", b.getStringAttr(access.what)),
          b.getNamedAttr("write", b.getBoolAttr(access.write)),
          b.getNamedAttr("bytes", b.getI64IntegerAttr(access.accessBytes)),
          b.getNamedAttr("lanes", b.getDenseI64ArrayAttr(
                                      {l.q, l.rowI, l.rowJ, l.colI, l.colJ})),
          b.getNamedAttr("unpadded", b.getI64IntegerAttr(p.before[a])),
          b.getNamedAttr("degree", b.getI64IntegerAttr(p.after[a])),
      }));
    }
    buffers.push_back(
        b.getNamedAttr(LdsBufferOp(p.op).getName(), b.getArrayAttr(accesses)));
  }
  grid->setAttr("fa.lds_accesses", b.getDictionaryAttr(buffers));
}

namespace {
struct FaPadLdsPass : public mlir::fa::impl::FaPadLdsPassBase<FaPadLdsPass> {
  using FaPadLdsPassBase::FaPadLdsPassBase;
  void runOnOperation() override;

private:
  void padGrid(scf::ForallOp grid, TileConfigAttr config,
               const TargetDesc &target);
};
} // namespace

/// LDS bytes of the grid's storage with the given paddings (a slot is as
/// large as its largest buffer; 16-byte alignment between storages, as
/// KernelInfo lays them out).
static int64_t ldsBytes(const llvm::MapVector<Value, BufferPlan> &plans,
                        ArrayRef<int64_t> pads) {
  llvm::MapVector<StringRef, int64_t> slots;
  for (auto [i, entry] : llvm::enumerate(plans)) {
    LdsLayout l = entry.second.layout;
    l.pad = pads[i];
    int64_t &bytes = slots[LdsBufferOp(entry.second.op).getStorage()];
    bytes = std::max(bytes, l.bytes());
  }
  int64_t total = 0;
  for (auto &[name, bytes] : slots)
    total += (bytes + 15) / 16 * 16;
  return total;
}

void FaPadLdsPass::padGrid(scf::ForallOp grid, TileConfigAttr config,
                           const TargetDesc &target) {
  llvm::MapVector<Value, BufferPlan> plans;
  grid.walk([&](LdsBufferOp op) {
    BufferPlan p;
    p.op = op;
    p.layout = *getLdsLayout(op.getResult().getType());
    plans[op.getResult()] = std::move(p);
  });
  if (plans.empty()) {
    if (remarks)
      grid.emitRemark() << "fa-pad-lds: no LDS buffers (run fa-promote "
                           "first); nothing to pad";
    return;
  }
  if (config.getLdsPad() != 0) {
    if (remarks)
      grid.emitRemark() << "fa-pad-lds: lds_pad=" << config.getLdsPad()
                        << " was set explicitly; left as it is";
    return;
  }
  const int64_t d = plans.front().second.layout.cols;
  auto mapping = chooseThreadMapping(config.getBlockM(), config.getBlockN(), d,
                                     config.getThreads(), config.getWaveSize());
  if (!mapping)
    return; // fa-lower-to-gpu reports the unmappable configuration
  collectAccesses(grid, *mapping, plans);
  BankModel model = bankModelFor(target);
  model.lanes = std::min(model.lanes, config.getThreads());
  if (!apply) {
    // The degrees of the layout as it is, recorded and reported.
    for (auto &[value, p] : plans) {
      p.pad = p.layout.pad;
      for (const LdsAccess &a : p.accesses)
        p.before.push_back(degree(model, p.layout, a, p.pad));
      p.after = p.before;
    }
    recordPredictions(grid, plans);
    if (remarks) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "fa-pad-lds: " << target.name << " " << model.lanes
         << " lanes per wave, thread grid " << mapping->tr << "x" << mapping->tc
         << ", analysis only (apply=false): no padding\n";
      describePlans(os, plans);
      grid.emitRemark() << text;
    }
    return;
  }

  // Each buffer's own best padding: the smallest with its lowest worst
  // degree, in multiples of 2 elements, so that pair loads (4 bytes for
  // 16-bit types, 8 for f32) stay aligned, or of the target's ldsPadBytes
  // (gfx906: 16, so that the backend still merges a thread's consecutive
  // pairs into ds_read_b128).
  const int64_t padBytes = unitBytes >= 0 ? unitBytes : target.ldsPadBytes;
  auto unitOf = [&](const BufferPlan &p) {
    const int64_t eltBytes = p.layout.elementType.getIntOrFloatBitWidth() / 8;
    return std::max<int64_t>(2, padBytes / eltBytes);
  };
  auto worstAt = [&](BufferPlan &p, int64_t pad, std::vector<int64_t> *out) {
    int64_t worst = 1;
    for (const LdsAccess &a : p.accesses) {
      int64_t deg = degree(model, p.layout, a, pad);
      if (out)
        out->push_back(deg);
      worst = std::max(worst, deg);
    }
    return worst;
  };
  SmallVector<int64_t> wanted, none(plans.size(), 0);
  SmallVector<std::pair<double, size_t>> order;
  for (auto [i, entry] : llvm::enumerate(plans)) {
    BufferPlan &p = entry.second;
    int64_t base = worstAt(p, 0, &p.before), best = 0, bestWorst = base;
    const int64_t unit = unitOf(p);
    for (int64_t pad = unit; pad <= maxPad && bestWorst > 1; pad += unit) {
      int64_t w = worstAt(p, pad, nullptr);
      if (w < bestWorst) {
        best = pad;
        bestWorst = w;
      }
    }
    wanted.push_back(best);
    order.push_back({double(base) / bestWorst, i});
  }
  // Most useful first; keep a padding only while the budget fits and LDS
  // still gives the occupancy the goal asks for (or what it gave unpadded).
  llvm::stable_sort(order, [](auto &x, auto &y) { return x.first > y.first; });
  const int64_t threads = config.getThreads();
  const int64_t unpadded = ldsBytes(plans, none);
  const int64_t unpaddedWaves = ldsWavesPerSimd(target, unpadded, threads);
  const int64_t goal = std::min(unpaddedWaves, target.occupancyGoal);
  SmallVector<int64_t> pads(plans.size(), 0);
  std::string refused;
  for (auto [gain, i] : order) {
    if (wanted[i] == 0)
      continue;
    pads[i] = wanted[i];
    int64_t bytes = ldsBytes(plans, pads);
    int64_t waves = ldsWavesPerSimd(target, bytes, threads);
    bool fits = std::ceil(bytes * (1.0 + kLdsMargin)) <= target.ldsBytes;
    if (!fits || (unpaddedWaves && waves < goal)) {
      StringRef name = (plans.begin() + i)->second.op.getName();
      refused += (refused.empty() ? "" : ", ") + name.str() +
                 (fits ? " (would cut LDS occupancy to " +
                             std::to_string(waves) + " waves per SIMD)"
                       : " (the LDS budget leaves no room)");
      pads[i] = 0;
    }
  }
  int64_t maxPadChosen = 0;
  for (auto [i, entry] : llvm::enumerate(plans)) {
    BufferPlan &p = entry.second;
    p.pad = pads[i];
    worstAt(p, p.pad, &p.after);
    maxPadChosen = std::max(maxPadChosen, p.pad);
  }
  recordPredictions(grid, plans);
  if (remarks) {
    std::string text;
    llvm::raw_string_ostream os(text);
    const int64_t bytes = ldsBytes(plans, pads);
    os << "fa-pad-lds: " << target.name << " " << model.lanes
       << " lanes per wave, thread grid " << mapping->tr << "x" << mapping->tc
       << ", LDS " << unpadded << " -> " << bytes << " bytes";
    if (unpaddedWaves)
      os << " (" << ldsWavesPerSimd(target, bytes, threads)
         << " waves per SIMD by LDS)";
    if (!refused.empty())
      os << "; not padded: " << refused;
    os << "\n";
    describePlans(os, plans);
    grid.emitRemark() << text;
  }
  if (maxPadChosen == 0)
    return;
  for (auto &[value, p] : plans) {
    LdsLayout l = p.layout;
    l.pad = p.pad;
    value.setType(l.type(grid.getContext()));
  }
  grid->setAttr("fa.tile",
                TileConfigAttr::get(
                    grid.getContext(), config.getTarget(), config.getBlockM(),
                    config.getBlockN(), config.getWaves(), config.getWaveSize(),
                    config.getStages(), maxPadChosen, config.getKvShared()));
}

void FaPadLdsPass::runOnOperation() {
  getOperation().walk([&](scf::ForallOp grid) {
    auto config = grid->getAttrOfType<TileConfigAttr>("fa.tile");
    if (!config)
      return;
    const TargetDesc *target = lookupTarget(config.getTarget().getValue());
    if (!target)
      return;
    padGrid(grid, config, *target);
  });
}
