//===- LdsBudget.h - The seed's LDS budget model ----------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The seed's rule 1: budget = BM·d·Q + BN·d·(K+V)·stages + BM·BN·(S+P)
// + BM·d·O + statistics, plus padding, with a 10-20% margin. Each term is
// accounted where the generated kernel keeps it: Q, K, V and P blocks in LDS;
// S and O fragments and the statistics in registers (the register estimate).
// The second stage is register-staged (fa-double-buffer): the K/V tiles of
// block n+1 are in registers while block n is computed, so stages = 2 adds
// registers, not LDS.
// Tile selection, the over-budget error and the `report` table all come from
// this one model.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_ANALYSIS_LDS_BUDGET_H
#define FA_COMPILER_ANALYSIS_LDS_BUDGET_H

#include "compiler/Analysis/TargetDesc.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace mlir::fa {

/// How the threads of one workgroup cover the tiles. The S tile [BM, BN] and
/// the O tile [BM, D] are split over a TR x TC thread grid: thread (tr, tc)
/// owns rows tr*RM .. tr*RM+RM-1 and columns tc, tc+TC, ... (RN of S, DC of
/// O). The TC threads of a row are consecutive lanes, so row reductions are
/// lane shuffles; where TC is more than a wave (the rows of a decode tile
/// over every thread of the workgroup) the waves of a row then combine
/// their partial results through LDS.
struct ThreadMapping {
  int64_t threads = 0, tr = 0, tc = 0, rm = 0, rn = 0, dc = 0;
  /// Waves per thread row (TC / wave size, at least 1).
  int64_t wavesPerRow(int64_t waveSize) const {
    return tc > waveSize ? tc / waveSize : 1;
  }
};

/// The most rows a tile may have for every thread to hold all of them
/// (decode tiles: a few packed query rows against many keys).
constexpr int64_t kMaxRowsPerThread = 16;

/// Picks the thread grid for a configuration, or nothing when the tiles do
/// not divide over the threads. Rows of at most kMaxRowsPerThread with
/// BLOCK_N and D multiples of the threads (a wave or more) take every
/// thread in one thread row (TR = 1): each thread owns all the rows of its
/// key column and of its D columns, so a K or V element is read from LDS by
/// one thread instead of by one thread per row; over more than one wave the
/// waves combine their parts of each row through LDS.
std::optional<ThreadMapping> chooseThreadMapping(int64_t blockM, int64_t blockN,
                                                 int64_t headDim,
                                                 int64_t threads,
                                                 int64_t waveSize);

struct TileConfig {
  int64_t blockM = 0, blockN = 0, waves = 0, stages = 1, ldsPad = 0;
  /// K and V take turns in one LDS slot (fa-promote places the barriers).
  bool kvShared = false;
};

struct BudgetTerm {
  std::string name;
  bool inLds;
  int64_t bytes;
};

struct Budget {
  std::vector<BudgetTerm> terms;
  int64_t ldsBytes = 0;        ///< Sum of the LDS terms (with padding).
  int64_t ldsWithMargin = 0;   ///< ldsBytes * (1 + margin), rounded up.
  int64_t regsPerThread = 0;   ///< Estimate, 32-bit registers.
  int64_t prefetchRegs = 0;    ///< Of which the second stage's fetched tiles.
  int64_t regWavesPerSimd = 0; ///< Occupancy the register estimate allows.
  /// Occupancy the LDS allows (AMD: a CU's LDS shared by its workgroups);
  /// 0 where LDS does not limit it in this model (NVIDIA).
  int64_t ldsWavesPerSimd = 0;
  int64_t wavesPerSimd = 0; ///< The smaller of the two.
  ThreadMapping mapping;
  bool fitsLds = false, fitsRegs = false, mappable = false;
};

/// The margin the seed asks for (10-20%); fa uses the lower end so that the
/// seed's recommended gfx906 D=128 configuration (64x64) fits.
constexpr double kLdsMargin = 0.10;

/// Evaluates the model for one configuration. `elementBytes` is the size
/// of an element in LDS, `sourceBytes` (0: the same) in global memory,
/// which is what the second stage holds in registers.
Budget computeBudget(const TargetDesc &target, const TileConfig &config,
                     int64_t headDim, int64_t elementBytes,
                     int64_t sourceBytes = 0);

/// Waves per SIMD that LDS alone allows on an AMD target (one CU shares
/// `target.ldsBytes` among its workgroups, spread over 4 SIMDs), or 0 where
/// LDS is not what limits occupancy in practice (NVIDIA: shared memory per
/// SM is a multiple of the per-block limit).
int64_t ldsWavesPerSimd(const TargetDesc &target, int64_t ldsBytes,
                        int64_t threads);

/// Row padding (elements) the chooser reserves for fa-pad-lds: one 32-bit
/// word per row, the padding that breaks a power-of-two row stride.
int64_t reservedLdsPad(int64_t elementBytes);

/// The configuration that fits the target's LDS and registers with the
/// highest occupancy up to the target's goal, then the largest BM*BN, then
/// separate K/V slots, balanced, larger BM; or nothing. The budget reserves
/// reservedLdsPad() per row so that fa-pad-lds has room.
std::optional<TileConfig>
chooseTileConfig(const TargetDesc &target, int64_t headDim,
                 int64_t elementBytes, int64_t stages, int64_t waves,
                 std::optional<bool> kvShared = {}, int64_t sourceBytes = 0);

/// The occupancy (waves per SIMD) the chooser credits `budget` with, up to
/// the target's goal: the register estimate where it binds, else LDS.
int64_t creditedOccupancy(const TargetDesc &target, const Budget &budget);

/// The budget as a human-readable table (the `report` output).
std::string formatBudget(const TargetDesc &target, const TileConfig &config,
                         const Budget &budget, int64_t headDim,
                         llvm::StringRef elementType);

} // namespace mlir::fa

#endif // FA_COMPILER_ANALYSIS_LDS_BUDGET_H
