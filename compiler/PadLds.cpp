//===- PadLds.cpp - fa-pad-lds: LDS padding chosen by bank analysis -------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements `fa-pad-lds`:
//
//   1. For each tile grid, rebuild the thread mapping fa-lower-to-gpu will
//      use (chooseThreadMapping) and describe the inner-loop LDS reads of
//      wave 0 as lane -> (row, column) patterns: Q and P rows as element
//      pairs (a thread row shares them), K rows as pairs per thread column,
//      V down a column.
//   2. Evaluate each pattern's conflict degree with the target's bank model
//      for every candidate padding (multiples of 2 elements up to max-pad).
//   3. Keep the smallest padding with the lowest worst degree whose LDS
//      budget still fits, and write it into `#fa.tile`'s lds_pad.
//
//===----------------------------------------------------------------------===//

#include "compiler/BankConflicts.h"
#include "compiler/LdsBudget.h"
#include "compiler/Passes.h"

#include "llvm/Support/raw_ostream.h"

namespace mlir::fa {
#define GEN_PASS_DEF_FAPADLDSPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

namespace {
/// One inner-loop LDS read: the pattern and the row length of its tile.
struct LdsRead {
  const char *what;
  int64_t columns;
  std::function<std::pair<int64_t, int64_t>(int64_t)> element;
  int64_t accessBytes;
};
} // namespace

/// The inner-loop reads of one grid, for wave 0 (lane = thread id).
static std::vector<LdsRead> innerLoopReads(const ThreadMapping &m, int64_t bn,
                                           int64_t d, int64_t eltBytes) {
  const int64_t tc = m.tc, rm = m.rm;
  // Rows are read along the reduction dimension in pairs when it is even.
  const int64_t pairD = (d % 2 ? 1 : 2) * eltBytes;
  const int64_t pairN = (bn % 2 ? 1 : 2) * eltBytes;
  auto tr = [tc](int64_t lane) { return lane / tc; };
  auto tcOf = [tc](int64_t lane) { return lane % tc; };
  return {
      {"Q (Q·Kᵀ lhs, row pairs)", d,
       [=](int64_t l) { return std::make_pair(tr(l) * rm, int64_t(0)); },
       pairD},
      {"K (Q·Kᵀ rhs, row pairs per thread column)", d,
       [=](int64_t l) { return std::make_pair(tcOf(l), int64_t(0)); }, pairD},
      {"P (P·V lhs, row pairs)", bn,
       [=](int64_t l) { return std::make_pair(tr(l) * rm, int64_t(0)); },
       pairN},
      {"V (P·V rhs, down a column)", d,
       [=](int64_t l) { return std::make_pair(int64_t(0), tcOf(l)); },
       eltBytes},
  };
}

/// Waves per SIMD that LDS alone allows on an AMD target (one CU shares
/// `target.ldsBytes` among its workgroups, 4 SIMDs), or 0 where LDS is not
/// what limits occupancy in practice (NVIDIA: shared memory per SM is a
/// multiple of the per-block limit).
static int64_t ldsWavesPerSimd(const TargetDesc &target, int64_t ldsBytes,
                               int64_t threads) {
  if (target.waveSize != 64 || ldsBytes <= 0)
    return 0;
  int64_t groups = target.ldsBytes / ldsBytes;
  int64_t waves = groups * ((threads + 63) / 64) / 4;
  return std::min<int64_t>(waves, target.maxWavesPerSimd);
}

namespace {
struct FaPadLdsPass : public mlir::fa::impl::FaPadLdsPassBase<FaPadLdsPass> {
  using FaPadLdsPassBase::FaPadLdsPassBase;
  void runOnOperation() override;
};
} // namespace

void FaPadLdsPass::runOnOperation() {
  getOperation().walk([&](scf::ForallOp grid) {
    auto config = grid->getAttrOfType<TileConfigAttr>("fa.tile");
    auto roles = grid->getAttrOfType<DenseI64ArrayAttr>("fa.args");
    auto func = grid->getParentOfType<func::FuncOp>();
    if (!config || !roles || roles.size() < 1 || !func || roles[0] < 0 ||
        roles[0] >= int64_t(func.getNumArguments()))
      return;
    auto q = dyn_cast<MemRefType>(func.getArgument(roles[0]).getType());
    const TargetDesc *target = lookupTarget(config.getTarget().getValue());
    if (!q || q.getRank() != 4 || ShapedType::isDynamic(q.getShape()[3]) ||
        !target)
      return;
    if (config.getLdsPad() != 0) {
      if (remarks)
        grid.emitRemark() << "fa-pad-lds: lds_pad=" << config.getLdsPad()
                          << " was set explicitly; left as it is";
      return;
    }
    const int64_t d = q.getShape()[3];
    const int64_t eltBytes = q.getElementTypeBitWidth() / 8;
    auto mapping =
        chooseThreadMapping(config.getBlockM(), config.getBlockN(), d,
                            config.getThreads(), config.getWaveSize());
    if (!mapping)
      return; // fa-lower-to-gpu reports the unmappable configuration
    BankModel model = bankModelFor(*target);
    model.lanes = std::min(model.lanes, config.getThreads());
    std::vector<LdsRead> reads =
        innerLoopReads(*mapping, config.getBlockN(), d, eltBytes);
    auto degrees = [&](int64_t pad) {
      std::vector<int64_t> out;
      for (const LdsRead &r : reads)
        out.push_back(conflictDegree(model,
                                     TileAccess{r.element, r.accessBytes},
                                     r.columns + pad, eltBytes));
      return out;
    };
    auto worst = [](const std::vector<int64_t> &v) {
      return *std::max_element(v.begin(), v.end());
    };
    TileConfig tc{config.getBlockM(), config.getBlockN(), config.getWaves(),
                  config.getStages(), 0};
    std::vector<int64_t> before = degrees(0);
    int64_t bestPad = 0, bestWorst = worst(before);
    bool budgetBound = false;   // a padding was refused for lack of LDS
    int64_t occupancyLimit = 0; // waves/SIMD a refused padding would leave
    const int64_t unpaddedWaves = ldsWavesPerSimd(
        *target, computeBudget(*target, tc, d, eltBytes).ldsBytes,
        config.getThreads());
    for (int64_t pad = 2; pad <= maxPad && bestWorst > 1; pad += 2) {
      tc.ldsPad = pad;
      Budget budget = computeBudget(*target, tc, d, eltBytes);
      if (!budget.fitsLds) {
        budgetBound = true;
        break; // more padding only costs more
      }
      // Padding must not cost the LDS-bound occupancy the seed asks for (2
      // waves per SIMD): on gfx906 a 256-thread workgroup above 32 KiB gets
      // a CU to itself. (An XOR swizzle would remove the conflicts without
      // LDS; not implemented.)
      int64_t waves =
          ldsWavesPerSimd(*target, budget.ldsBytes, config.getThreads());
      if (waves < unpaddedWaves && waves < 2) {
        occupancyLimit = waves;
        break;
      }
      int64_t w = worst(degrees(pad));
      if (w < bestWorst) {
        bestPad = pad;
        bestWorst = w;
      }
    }
    std::vector<int64_t> after = degrees(bestPad);
    tc.ldsPad = bestPad;
    int64_t ldsBytes = computeBudget(*target, tc, d, eltBytes).ldsBytes;
    if (remarks) {
      std::string text;
      llvm::raw_string_ostream os(text);
      os << "fa-pad-lds: " << target->name << " " << model.lanes
         << " lanes per wave, thread grid " << mapping->tr << "x" << mapping->tc
         << ": lds_pad=" << bestPad
         << (bestPad       ? ""
             : budgetBound ? " (the LDS budget leaves no room for padding)"
             : occupancyLimit
                 ? " (padding would cut LDS occupancy from " +
                       std::to_string(unpaddedWaves) + " to " +
                       std::to_string(occupancyLimit) + " waves per SIMD)"
                 : " (no padding lowers the worst degree)")
         << ", LDS " << ldsBytes << " bytes\n";
      for (size_t i = 0; i < reads.size(); ++i)
        os << "  " << reads[i].what << ", " << reads[i].accessBytes
           << " B per lane: degree " << before[i] << " -> " << after[i] << "\n";
      grid.emitRemark() << text;
    }
    if (bestPad == 0)
      return;
    grid->setAttr("fa.tile",
                  TileConfigAttr::get(grid.getContext(), config.getTarget(),
                                      config.getBlockM(), config.getBlockN(),
                                      config.getWaves(), config.getWaveSize(),
                                      config.getStages(), bestPad));
  });
}
