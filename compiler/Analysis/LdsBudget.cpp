//===- LdsBudget.cpp - The seed's LDS budget model ------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/LdsBudget.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <tuple>

using namespace mlir::fa;

static bool isPowerOf2(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

std::optional<ThreadMapping>
mlir::fa::chooseThreadMapping(int64_t blockM, int64_t blockN, int64_t headDim,
                              int64_t threads, int64_t waveSize) {
  if (threads >= waveSize && blockM <= kMaxRowsPerThread && blockN > 0 &&
      blockN % threads == 0 && headDim % threads == 0)
    return ThreadMapping{threads,       1, threads, blockM, blockN / threads,
                         headDim / threads};
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

int64_t mlir::fa::ldsWavesPerSimd(const TargetDesc &target, int64_t ldsBytes,
                                  int64_t threads) {
  if (target.waveSize != 64 || ldsBytes <= 0)
    return 0;
  int64_t groups = target.ldsBytes / ldsBytes;
  int64_t waves = groups * ((threads + 63) / 64) / 4;
  return std::min<int64_t>(waves, target.maxWavesPerSimd);
}

int64_t mlir::fa::reservedLdsPad(int64_t elementBytes) {
  return std::max<int64_t>(1, 4 / elementBytes);
}

Budget mlir::fa::computeBudget(const TargetDesc &target,
                               const TileConfig &config, int64_t headDim,
                               int64_t elementBytes, int64_t sourceBytes) {
  Budget b;
  if (sourceBytes == 0)
    sourceBytes = elementBytes;
  const int64_t bm = config.blockM, bn = config.blockN, d = headDim;
  const int64_t pad = config.ldsPad; // elements per LDS row
  // A second stage is register-staged (fa-double-buffer): one K or V tile
  // of the next block in flight at a time (K is fetched while P·V runs, V
  // while Q·Kᵀ runs), in the source type.
  const int64_t prefetch = config.stages >= 2 ? bn * d * sourceBytes : 0;
  if (config.kvShared)
    b.terms = {{"Q block", true, bm * d * elementBytes},
               {"K/V block (one slot)", true, bn * d * elementBytes}};
  else
    b.terms = {{"Q block", true, bm * d * elementBytes},
               {"K block", true, bn * d * elementBytes},
               {"V block", true, bn * d * elementBytes}};
  const int64_t kvRows = bn * (config.kvShared ? 1 : 2);
  b.terms.insert(b.terms.end(),
                 {
                     {"S block (f32)", false, bm * bn * 4},
                     {"P block", true, bm * bn * elementBytes},
                     {"O block (f32)", false, bm * d * 4},
                     {"statistics m, l (f32)", false, 2 * bm * 4},
                     {"padding", true, pad * elementBytes * (bm + kvRows + bm)},
                 });
  // Where copies are asynchronous (cp.async) the fetched K and V tiles wait
  // in shared staging areas (one per buffer) instead of registers.
  if (prefetch && target.asyncCopy)
    b.terms.push_back({"K, V staging (cp.async)", true, 2 * prefetch});
  else if (prefetch)
    b.terms.push_back({"K or V block n+1", false, prefetch});
  // Rows over several waves combine the waves' partial row maxima and sums
  // through LDS: one f32 per row and wave.
  const int64_t threads = config.waves * target.waveSize;
  auto mapping = chooseThreadMapping(bm, bn, d, threads, target.waveSize);
  if (mapping && mapping->wavesPerRow(target.waveSize) > 1)
    b.terms.push_back({"row reduction across waves (f32)", true,
                       bm * mapping->wavesPerRow(target.waveSize) * 4});
  for (const BudgetTerm &t : b.terms)
    if (t.inLds)
      b.ldsBytes += t.bytes;
  b.ldsWithMargin =
      static_cast<int64_t>(std::ceil(b.ldsBytes * (1.0 + kLdsMargin)));
  b.fitsLds = b.ldsWithMargin <= target.ldsBytes;

  b.ldsWavesPerSimd = ldsWavesPerSimd(target, b.ldsBytes, threads);
  if (auto m = mapping) {
    b.mapping = *m;
    b.mappable = threads <= target.maxThreads;
    // Live f32 values per thread: the S and O fragments, m/l/alpha per row
    // and one K operand per S column. LLVM 22 allocates about twice that
    // plus 8 for the memory-level lowering (dot loops kept rolled, loops
    // versioned on copy alignment), asked for 2 waves per SIMD; calibrated
    // on gfx906, docs/register-model.md. An estimate: the backend's resource
    // report is the authority.
    int64_t live = m->rm * m->rn + m->rm * m->dc + 3 * m->rm + m->rn;
    b.regsPerThread = 2 * live + 8;
    // The fetched tiles of the next block stay live across the products.
    b.prefetchRegs =
        target.asyncCopy ? 0 : (prefetch + 4 * threads - 1) / (4 * threads);
    b.regsPerThread += b.prefetchRegs;
    int64_t g = target.regGranule;
    b.regsPerThread = (b.regsPerThread + g - 1) / g * g;
    b.fitsRegs = b.regsPerThread <= target.maxRegsPerLane;
    b.regWavesPerSimd = std::min<int64_t>(
        target.maxWavesPerSimd,
        target.maxRegsPerLane / std::max<int64_t>(1, b.regsPerThread));
    b.wavesPerSimd = b.ldsWavesPerSimd
                         ? std::min(b.regWavesPerSimd, b.ldsWavesPerSimd)
                         : b.regWavesPerSimd;
  }
  return b;
}

int64_t mlir::fa::creditedOccupancy(const TargetDesc &target,
                                    const Budget &budget) {
  // Where the register estimate does not bind (NVIDIA: ptxas judges), only
  // LDS counts towards the occupancy goal.
  int64_t occupancy = target.registerEstimateBinds ? budget.wavesPerSimd
                      : budget.ldsWavesPerSimd     ? budget.ldsWavesPerSimd
                                                   : target.occupancyGoal;
  return std::min(occupancy, target.occupancyGoal);
}

std::optional<TileConfig>
mlir::fa::chooseTileConfig(const TargetDesc &target, int64_t headDim,
                           int64_t elementBytes, int64_t stages, int64_t waves,
                           std::optional<bool> kvShared, int64_t sourceBytes) {
  if (waves == 0)
    waves = std::max<int64_t>(1, 256 / target.waveSize);
  std::optional<TileConfig> best;
  std::tuple<bool, int64_t, int64_t, bool, int64_t, int64_t> bestKey;
  for (int64_t bm : {128, 64, 32, 16}) {
    for (int64_t bn : {128, 64, 32, 16}) {
      if ((target.maxBlockM && bm > target.maxBlockM) ||
          (target.maxBlockN && bn > target.maxBlockN))
        continue;
      for (bool shared : {false, true}) {
        if (kvShared && *kvShared != shared)
          continue;
        TileConfig c{bm,    bn, waves, stages, reservedLdsPad(elementBytes),
                     shared};
        Budget b = computeBudget(target, c, headDim, elementBytes, sourceBytes);
        if (!b.fitsLds || !b.mappable ||
            (!b.fitsRegs && target.registerEstimateBinds))
          continue;
        // Where the register estimate binds (gfx906, its host emulation):
        // a thread with one S column reads a K pair per MAC pair plus its
        // Q pairs (1.5 LDS dwords per v_dot2 at 2 rows), which leaves
        // Q·Kᵀ LDS-bound; two or more columns first, then occupancy (the
        // MI50 timing model v2, D=256 1,8,8,512,4096: 32x16 at 2 waves/SIMD
        // 3.61 ms, 32x32 at 1 wave 2.83 ms).
        const bool columns = !target.registerEstimateBinds || b.mapping.rn > 1;
        auto key = std::make_tuple(columns, creditedOccupancy(target, b),
                                   bm * bn,
                                   !shared, -std::abs(bm - bn), bm);
        if (!best || key > bestKey) {
          best = c;
          bestKey = key;
        }
      }
    }
  }
  if (best)
    best->ldsPad = 0; // fa-pad-lds chooses it
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
     << (config.stages >= 2
             ? (target.asyncCopy ? " (cp.async-staged)" : " (register-staged)")
         : target.defaultStages == 1
             ? " (the target's default: stages=2 measured no faster)"
             : "")
     << " lds_pad=" << config.ldsPad
     << (config.kvShared ? " (K and V share one LDS slot)" : "") << "\n";
  os << "  thread grid " << m.tr << "x" << m.tc << ", per thread " << m.rm
     << "x" << m.rn << " of S and " << m.rm << "x" << m.dc << " of O\n";
  for (const BudgetTerm &t : budget.terms)
    os << llvm::format("  %-24s %-10s %8lld\n", t.name.c_str(),
                       t.inLds ? "LDS" : "registers", (long long)t.bytes);
  os << llvm::format("  %-24s %-10s %8lld (+%d%% margin = %lld of %lld)\n",
                     "LDS total", "", (long long)budget.ldsBytes,
                     (int)(kLdsMargin * 100), (long long)budget.ldsWithMargin,
                     (long long)target.ldsBytes);
  os << "  registers per thread (estimate): " << budget.regsPerThread;
  if (budget.prefetchRegs)
    os << " (" << budget.prefetchRegs << " hold block n+1: register-staged)";
  os << " of " << target.maxRegsPerLane << " -> " << budget.regWavesPerSimd
     << " waves per SIMD (estimate)"
     << (target.registerEstimateBinds ? ""
                                      : "; not binding here, ptxas decides");
  if (budget.ldsWavesPerSimd)
    os << "\n  LDS allows " << budget.ldsWavesPerSimd << " waves per SIMD ("
       << target.ldsBytes / budget.ldsBytes << " workgroups per CU)";
  return out;
}
