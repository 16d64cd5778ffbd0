//===- BankConflicts.cpp - LDS bank-conflict analysis ---------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the bank model and conflict degree of
// BankConflicts.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/BankConflicts.h"

#include <algorithm>
#include <map>
#include <set>
#include <vector>

using namespace mlir::fa;

int64_t BankModel::phaseLanes(int64_t accessBytes) const {
  // Each phase moves banks * bankBytes bytes: 32 lanes of b32, 16 of b64,
  // 8 of b128 (sub-dword accesses are served like b32).
  int64_t bytes = std::max<int64_t>(accessBytes, bankBytes);
  return std::max<int64_t>(1, std::min(lanes, banks * bankBytes / bytes));
}

BankModel mlir::fa::bankModelFor(const TargetDesc &target) {
  BankModel m;
  m.lanes = target.waveSize;
  m.banks = target.ldsBanks;
  m.bankBytes = target.bankBytes;
  return m;
}

int64_t mlir::fa::conflictDegree(const BankModel &model,
                                 llvm::ArrayRef<int64_t> laneAddresses,
                                 int64_t accessBytes) {
  const int64_t phase = model.phaseLanes(accessBytes);
  int64_t worst = 0;
  for (int64_t first = 0; first < int64_t(laneAddresses.size());
       first += phase) {
    // bank -> distinct dwords it serves in this phase
    std::map<int64_t, std::set<int64_t>> dwords;
    int64_t last = std::min<int64_t>(first + phase, laneAddresses.size());
    for (int64_t lane = first; lane < last; ++lane) {
      int64_t address = laneAddresses[lane];
      if (address < 0)
        continue;
      for (int64_t byte = 0; byte < accessBytes; byte += model.bankBytes) {
        int64_t dword = (address + byte) / model.bankBytes;
        dwords[dword % model.banks].insert(dword);
      }
    }
    for (const auto &[bank, set] : dwords)
      worst = std::max<int64_t>(worst, set.size());
  }
  return worst;
}

int64_t mlir::fa::conflictDegree(const BankModel &model,
                                 const TileAccess &access, int64_t rowElements,
                                 int64_t elementBytes) {
  std::vector<int64_t> addresses(model.lanes);
  for (int64_t lane = 0; lane < model.lanes; ++lane) {
    auto [row, col] = access.element(lane);
    addresses[lane] = row < 0 ? -1 : (row * rowElements + col) * elementBytes;
  }
  return conflictDegree(model, addresses, access.accessBytes);
}

int64_t mlir::fa::choosePadding(const BankModel &model,
                                llvm::ArrayRef<TileAccess> accesses,
                                int64_t columns, int64_t elementBytes,
                                int64_t alignElements, int64_t maxPad) {
  auto worst = [&](int64_t pad) {
    int64_t w = 0;
    for (const TileAccess &a : accesses)
      w = std::max(w, conflictDegree(model, a, columns + pad, elementBytes));
    return w;
  };
  int64_t best = 0, bestDegree = worst(0);
  for (int64_t pad = alignElements; pad <= maxPad; pad += alignElements) {
    int64_t d = worst(pad);
    if (d < bestDegree) {
      best = pad;
      bestDegree = d;
    }
  }
  return best;
}
