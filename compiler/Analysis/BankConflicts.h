//===- BankConflicts.h - LDS bank-conflict analysis -------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The bank model of workgroup memory (docs/bank-conflicts.md) and the
// conflict degree of one wave's access: both targets have 32 banks of 4
// bytes. A wave's access is served in phases by its width per lane — on
// gfx906 (wave64) b32: lanes 0-31 then 32-63; b64: groups of 16 lanes;
// b128: groups of 8 lanes; on sm_90 (warp32) likewise 32 / 16 / 8 lanes.
// Within a phase a bank serves one dword per cycle; lanes that read the
// same dword are served together (broadcast). The degree of an access is
// the largest number of distinct dwords one bank must serve in one phase
// (1 = conflict-free), over all phases.
//
// `choosePadding` is what a padding pass asks: the smallest row padding that
// brings every given access of a row-major buffer to its minimal degree,
// keeping the rows aligned for the widest access.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_ANALYSIS_BANK_CONFLICTS_H
#define FA_COMPILER_ANALYSIS_BANK_CONFLICTS_H

#include "compiler/Analysis/TargetDesc.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <utility>

namespace mlir::fa {

struct BankModel {
  int64_t lanes = 64;    ///< lanes of one wave / warp
  int64_t banks = 32;    ///< banks
  int64_t bankBytes = 4; ///< bytes per bank word

  /// Lanes served together for an access of `accessBytes` per lane.
  int64_t phaseLanes(int64_t accessBytes) const;
};

/// The bank model of `target`.
BankModel bankModelFor(const TargetDesc &target);

/// Conflict degree of one wave's access: `laneAddresses[i]` is lane i's
/// byte address (a negative address: the lane is inactive), each lane
/// accessing `accessBytes` (4, 8 or 16) contiguous bytes.
int64_t conflictDegree(const BankModel &model,
                       llvm::ArrayRef<int64_t> laneAddresses,
                       int64_t accessBytes);

/// One access pattern of a row-major buffer: lane -> (row, column in
/// elements), or {-1, -1} for an inactive lane.
struct TileAccess {
  llvm::function_ref<std::pair<int64_t, int64_t>(int64_t lane)> element;
  int64_t accessBytes; ///< bytes per lane: 2 (f16), 4, 8 or 16
};

/// Degree of `access` on a buffer whose rows are `rowElements` elements of
/// `elementBytes` bytes.
int64_t conflictDegree(const BankModel &model, const TileAccess &access,
                       int64_t rowElements, int64_t elementBytes);

/// The smallest padding (in elements, a multiple of `alignElements`, at most
/// `maxPad`) that minimises the worst degree over `accesses` of a buffer with
/// `columns` elements per row; ties go to the smaller padding.
int64_t choosePadding(const BankModel &model,
                      llvm::ArrayRef<TileAccess> accesses, int64_t columns,
                      int64_t elementBytes, int64_t alignElements,
                      int64_t maxPad);

} // namespace mlir::fa

#endif // FA_COMPILER_ANALYSIS_BANK_CONFLICTS_H
