//===- Target.cpp - Target descriptions -----------------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Numbers from DESIGN.md's hardware table. `host` mirrors gfx906's limits so
// that the emulated kernel is the kernel gfx906 gets (wave64, 64 KiB LDS).
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/TargetDesc.h"

using namespace mlir::fa;

static const TargetDesc kTargets[] = {
    {"gfx906",
     "AMD MI50/MI60 (gfx906)",
     /*waveSize=*/64,
     /*ldsBytes=*/65536,
     /*ldsBanks=*/32,
     /*bankBytes=*/4,
     /*maxRegsPerLane=*/256,
     /*regGranule=*/4,
     /*maxWavesPerSimd=*/10,
     /*computeUnits=*/60,
     /*maxThreads=*/1024,
     /*nativeBf16=*/false,
     /*hasMatrixUnits=*/false,
     /*hasDot2F16=*/true,
     /*registerEstimateBinds=*/true,
     /*occupancyGoal=*/2,
     /*maxBlockM=*/0,
     /*maxBlockN=*/0,
     /*widenLds=*/false,
     /*asyncCopy=*/false,
     /*defaultStages=*/2,
     /*shareRows=*/false,
     /*decodeBlockM=*/4,
     /*decodeBlockN=*/32,
     /*decodeWaves=*/1,
     /*decodeStages=*/2,
     /*decodeWidenLds=*/false,
     /*prefillKvSplits=*/true,
     /*decodeKvShared=*/false,
     /*ldsPadBytes=*/16,
     /*mergeGuards=*/true,
     /*mergeSplits=*/true,
     /*partialRowSums=*/true},
    {"sm_90",
     "NVIDIA H100/H200 (sm_90)",
     /*waveSize=*/32,
     /*ldsBytes=*/232448,
     /*ldsBanks=*/32,
     /*bankBytes=*/4,
     /*maxRegsPerLane=*/255,
     /*regGranule=*/8,
     /*maxWavesPerSimd=*/16,
     /*computeUnits=*/132,
     /*maxThreads=*/1024,
     /*nativeBf16=*/true,
     /*hasMatrixUnits=*/true,
     /*hasDot2F16=*/false,
     /*registerEstimateBinds=*/false,
     /*occupancyGoal=*/1,
     /*maxBlockM=*/128,
     /*maxBlockN=*/64,
     /*widenLds=*/true,
     /*asyncCopy=*/true,
     /*defaultStages=*/1,
     /*shareRows=*/false,
     /*decodeBlockM=*/4,
     /*decodeBlockN=*/32,
     /*decodeWaves=*/1,
     /*decodeStages=*/2,
     /*decodeWidenLds=*/false,
     /*prefillKvSplits=*/false,
     /*decodeKvShared=*/true,
     /*ldsPadBytes=*/0,
     /*mergeGuards=*/true,
     /*mergeSplits=*/true,
     /*partialRowSums=*/false},
    {"sm_80",
     "NVIDIA A100 (sm_80)",
     /*waveSize=*/32,
     /*ldsBytes=*/166912,
     /*ldsBanks=*/32,
     /*bankBytes=*/4,
     /*maxRegsPerLane=*/255,
     /*regGranule=*/8,
     /*maxWavesPerSimd=*/16,
     /*computeUnits=*/108,
     /*maxThreads=*/1024,
     /*nativeBf16=*/true,
     /*hasMatrixUnits=*/true,
     /*hasDot2F16=*/false,
     /*registerEstimateBinds=*/false,
     /*occupancyGoal=*/1,
     /*maxBlockM=*/128,
     /*maxBlockN=*/64,
     /*widenLds=*/true,
     /*asyncCopy=*/true,
     /*defaultStages=*/1,
     /*shareRows=*/false,
     /*decodeBlockM=*/4,
     /*decodeBlockN=*/32,
     /*decodeWaves=*/4},
    {"host",
     "host emulation of gfx906's kernel (x86-64)",
     /*waveSize=*/64,
     /*ldsBytes=*/65536,
     /*ldsBanks=*/32,
     /*bankBytes=*/4,
     /*maxRegsPerLane=*/256,
     /*regGranule=*/4,
     /*maxWavesPerSimd=*/10,
     /*computeUnits=*/60,
     /*maxThreads=*/1024,
     /*nativeBf16=*/true,
     /*hasMatrixUnits=*/false,
     /*hasDot2F16=*/false,
     /*registerEstimateBinds=*/true,
     /*occupancyGoal=*/2,
     /*maxBlockM=*/0,
     /*maxBlockN=*/0,
     /*widenLds=*/false,
     /*asyncCopy=*/false,
     /*defaultStages=*/2,
     /*shareRows=*/false,
     /*decodeBlockM=*/4,
     /*decodeBlockN=*/32,
     /*decodeWaves=*/1,
     /*decodeStages=*/2,
     /*decodeWidenLds=*/false,
     /*prefillKvSplits=*/false,
     /*decodeKvShared=*/false,
     /*ldsPadBytes=*/16,
     /*mergeGuards=*/true,
     /*mergeSplits=*/true,
     /*partialRowSums=*/true},
};

const TargetDesc *mlir::fa::lookupTarget(llvm::StringRef name) {
  for (const TargetDesc &t : kTargets)
    if (name == t.name)
      return &t;
  return nullptr;
}

std::string mlir::fa::knownTargetNames() {
  std::string names;
  for (const TargetDesc &t : kTargets) {
    if (!names.empty())
      names += ", ";
    names += t.name;
  }
  return names;
}
