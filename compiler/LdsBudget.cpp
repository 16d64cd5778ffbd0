//===- LdsBudget.cpp - The seed's LDS budget model ------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "compiler/LdsBudget.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdlib>

using namespace mlir::fa;

static bool isPowerOf2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

std::optional<ThreadMapping>
mlir::fa::chooseThreadMapping(int64_t blockM, int64_t blockN, int64_t headDim,
                              int64_t threads, int64_t waveSize) {
  std::optional<ThreadMapping> best;
  for (int64_t tc = 1; tc <= waveSize && tc <= threads; tc *= 2) {
    if (threads % tc || blockN % tc || headDim % tc)
      continue;
    int64_t tr = threads / tc;
    if (tr > blockM || blockM % tr)
      continue;
    ThreadMapping m{threads, tr, tc, blockM / tr, blockN / tc, headDim / tc};
    // Balanced register blocks read the fewest LDS bytes per FMA.
    auto cost = [](const ThreadMapping &x) { return std::abs(x.rm - x.rn); };
    if (!best || cost(m) <= cost(*best))
      best = m;
  }
  return best;
}

Budget mlir::fa::computeBudget(const TargetDesc &target,
                               const TileConfig &config, int64_t headDim,
                               int64_t elementBytes) {
  Budget b;
  const int64_t bm = config.blockM, bn = config.blockN, d = headDim;
  const int64_t pad = config.ldsPad; // elements per LDS row
  b.terms = {
      {"Q block", true, bm * d * elementBytes},
      {"K block x" + std::to_string(config.stages), true,
       bn * d * elementBytes * config.stages},
      {"V block x" + std::to_string(config.stages), true,
       bn * d * elementBytes * config.stages},
      {"S block (f32)", false, bm * bn * 4},
      {"P block", true, bm * bn * elementBytes},
      {"O block (f32)", false, bm * d * 4},
      {"statistics m, l (f32)", false, 2 * bm * 4},
      {"padding", true,
       pad * elementBytes * (bm + 2 * bn * config.stages + bm)},
  };
  for (const BudgetTerm &t : b.terms)
    if (t.inLds)
      b.ldsBytes += t.bytes;
  b.ldsWithMargin =
      static_cast<int64_t>(std::ceil(b.ldsBytes * (1.0 + kLdsMargin)));
  b.fitsLds = b.ldsWithMargin <= target.ldsBytes;

  int64_t threads = config.waves * target.waveSize;
  if (auto m = chooseThreadMapping(bm, bn, d, threads, target.waveSize)) {
    b.mapping = *m;
    b.mappable = threads <= target.maxThreads;
    // Live f32 values per thread: the S and O fragments, m/l/alpha per row
    // and one K operand per S column. What LLVM 22 allocates for today's
    // lowering is about 2.5x that plus 80 (addresses, indices, unrolled
    // loads); calibrated on gfx906, docs/register-model.md. An estimate: the
    // backend's resource report is the authority.
    int64_t live = m->rm * m->rn + m->rm * m->dc + 3 * m->rm + m->rn;
    b.regsPerThread = (5 * live + 1) / 2 + 80;
    int64_t g = target.regGranule;
    b.regsPerThread = (b.regsPerThread + g - 1) / g * g;
    b.fitsRegs = b.regsPerThread <= target.maxRegsPerLane;
    b.wavesPerSimd = std::min<int64_t>(
        target.maxWavesPerSimd,
        target.maxRegsPerLane / std::max<int64_t>(1, b.regsPerThread));
  }
  return b;
}

std::optional<TileConfig> mlir::fa::chooseTileConfig(const TargetDesc &target,
                                                     int64_t headDim,
                                                     int64_t elementBytes,
                                                     int64_t stages,
                                                     int64_t waves) {
  if (waves == 0)
    waves = std::max<int64_t>(1, 256 / target.waveSize);
  std::optional<TileConfig> best;
  for (int64_t bm : {128, 64, 32, 16}) {
    for (int64_t bn : {128, 64, 32, 16}) {
      TileConfig c{bm, bn, waves, stages, 0};
      Budget b = computeBudget(target, c, headDim, elementBytes);
      if (!b.fitsLds || !b.fitsRegs || !b.mappable)
        continue;
      auto key = [](const TileConfig &x) {
        return std::make_tuple(x.blockM * x.blockN,
                               -std::abs(x.blockM - x.blockN), x.blockM);
      };
      if (!best || key(c) > key(*best))
        best = c;
    }
  }
  return best;
}

std::string mlir::fa::formatBudget(const TargetDesc &target,
                                   const TileConfig &config,
                                   const Budget &budget, int64_t headDim,
                                   llvm::StringRef elementType) {
  std::string out;
  llvm::raw_string_ostream os(out);
  const ThreadMapping &m = budget.mapping;
  os << "tile config for " << target.name << ": D=" << headDim << " "
     << elementType << " BLOCK_M=" << config.blockM
     << " BLOCK_N=" << config.blockN << " waves=" << config.waves << " ("
     << config.waves * target.waveSize << " threads) stages=" << config.stages
     << " lds_pad=" << config.ldsPad << "\n";
  os << "  thread grid " << m.tr << "x" << m.tc << ", per thread " << m.rm
     << "x" << m.rn << " of S and " << m.rm << "x" << m.dc << " of O\n";
  for (const BudgetTerm &t : budget.terms)
    os << llvm::format("  %-24s %-10s %8lld\n", t.name.c_str(),
                       t.inLds ? "LDS" : "registers", (long long)t.bytes);
  os << llvm::format("  %-24s %-10s %8lld (+%d%% margin = %lld of %lld)\n",
                     "LDS total", "", (long long)budget.ldsBytes,
                     (int)(kLdsMargin * 100), (long long)budget.ldsWithMargin,
                     (long long)target.ldsBytes);
  os << "  registers per thread (estimate): " << budget.regsPerThread << " of "
     << target.maxRegsPerLane << " -> " << budget.wavesPerSimd
     << " waves per SIMD (estimate)";
  return out;
}
