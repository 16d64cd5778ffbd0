//===- Mi50Model.cpp - gfx906 occupancy and MI50 estimate -----------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file holds the machine model of the report: waves per SIMD from a
// kernel's registers and LDS (gfx906's allocation rules), the static
// VALU/LDS-bound throughput estimate of the KV loop on an MI50
// (docs/mi50-throughput-model.md), and the report text that labels both
// as estimates.
//
//===----------------------------------------------------------------------===//

#include "compiler/Targets/Gfx906/Mi50Model.h"
#include "compiler/Targets/Gfx906/LoopAnalysis.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>

using namespace mlir;

int64_t fa::gfx906WorkgroupsPerCu(const AmdgpuResources &r, int64_t threads) {
  auto roundUp = [](int64_t x, int64_t g) { return (x + g - 1) / g * g; };
  int64_t wavesPerGroup = std::max<int64_t>(1, (threads + 63) / 64);
  // Waves per SIMD by each register file; a group's waves spread over the
  // CU's 4 SIMDs.
  int64_t byVgpr = r.vgprs ? 256 / roundUp(r.vgprs, 4) : 10;
  int64_t bySgpr = r.sgprs ? 800 / roundUp(r.sgprs, 16) : 10;
  int64_t byWaves = 4 * std::min<int64_t>({10, byVgpr, bySgpr}) / wavesPerGroup;
  int64_t byLds = r.ldsBytes ? 65536 / r.ldsBytes : byWaves;
  return std::min(byWaves, byLds);
}

int64_t fa::gfx906WavesPerSimd(const AmdgpuResources &r, int64_t threads,
                               std::string *limitedBy) {
  // gfx906: 256 VGPRs (granule 4) and 800 SGPRs (granule 16) per SIMD lane
  // file, 64 KiB LDS per CU shared by its 4 SIMDs, at most 10 waves/SIMD.
  auto roundUp = [](int64_t x, int64_t g) { return (x + g - 1) / g * g; };
  int64_t byVgpr = r.vgprs ? 256 / roundUp(r.vgprs, 4) : 10;
  int64_t bySgpr = r.sgprs ? 800 / roundUp(r.sgprs, 16) : 10;
  int64_t wavesPerGroup = std::max<int64_t>(1, (threads + 63) / 64);
  int64_t groupsByLds = r.ldsBytes ? 65536 / r.ldsBytes : 40;
  // The groups' waves spread over the 4 SIMDs: 3 one-wave groups are 1
  // wave on 3 of them (rounded up, not down to 0).
  int64_t byLds = (groupsByLds * wavesPerGroup + 3) / 4;
  int64_t waves = std::min<int64_t>({10, byVgpr, bySgpr, byLds});
  if (limitedBy) {
    *limitedBy = waves == byVgpr   ? "VGPRs"
                 : waves == byLds  ? "LDS"
                 : waves == bySgpr ? "SGPRs"
                                   : "the 10-wave limit";
  }
  return waves;
}

fa::Mi50Estimate fa::estimateMi50Throughput(const AmdgpuLoopStats &loop,
                                            int64_t blockM, int64_t blockN,
                                            int64_t headDim, int64_t threads,
                                            int64_t wavesPerSimd) {
  Mi50Estimate e;
  e.wavesPerGroup = std::max<int64_t>(1, (threads + 63) / 64);
  // With at least one wave on every SIMD all four issue; otherwise (fewer
  // than 4 waves resident per CU) one workgroup's waves are all there is.
  e.simdsBusy = wavesPerSimd >= 1
                    ? Mi50Estimate::simdsPerCu
                    : std::min(Mi50Estimate::simdsPerCu, e.wavesPerGroup);
  // Two GEMMs (S = Q·Kᵀ, O += P·V) of BLOCK_M x BLOCK_N x D MACs each.
  e.flopsPerIteration = 4 * blockM * blockN * headDim;
  if (e.flopsPerIteration > 0)
    e.macCoverage = double(loop.macFlopsPerLane * 64 * e.wavesPerGroup) /
                    e.flopsPerIteration;
  e.valuCycles =
      double(e.wavesPerGroup * loop.valu * Mi50Estimate::valuCyclesPerOp) /
      e.simdsBusy;
  e.ldsCycles =
      double(e.wavesPerGroup * 64 * (loop.ldsReadBytes + loop.ldsWriteBytes)) /
      Mi50Estimate::ldsBytesPerCycle;
  auto tflops = [&](double cycles) {
    return cycles > 0 ? Mi50Estimate::cus * Mi50Estimate::clockHz *
                            e.flopsPerIteration / cycles / 1e12
                      : 0.0;
  };
  e.valuBoundTflops = tflops(e.valuCycles);
  e.ldsBoundTflops = tflops(e.ldsCycles);
  e.ldsBound = e.ldsCycles > e.valuCycles;
  e.tflops = tflops(std::max(e.valuCycles, e.ldsCycles));
  return e;
}

std::string fa::formatAmdgpuResources(const AmdgpuResources &r, int64_t threads,
                                      int64_t blockM, int64_t blockN,
                                      int64_t headDim) {
  std::string out;
  llvm::raw_string_ostream os(out);
  std::string limit;
  int64_t waves = gfx906WavesPerSimd(r, threads, &limit);
  os << "gfx906 resources of " << r.kernel
     << " (from the AMDGPU backend, compile time):\n";
  os << "  VGPRs " << r.vgprs << " (spilled " << r.vgprSpills << "), SGPRs "
     << r.sgprs << " (spilled " << r.sgprSpills << "), LDS " << r.ldsBytes
     << " bytes, scratch " << r.scratchBytes << " bytes per lane";
  if (r.scratchBytes > 0 && scratchAccesses(r) == 0)
    os << " (reserved by the backend; no instruction reads or writes it)";
  else if (r.scratchBytes > 0)
    os << " (" << scratchAccesses(r) << " scratch instructions)";
  os << "\n";
  os << "  occupancy (estimate): " << waves << " waves per SIMD, limited by "
     << limit << "\n";
  os << "  instruction mix (whole kernel):";
  for (const auto &[name, count] : r.mix)
    os << " " << name << "=" << count;
  if (!r.kvLoop) {
    os << "\n  no KV loop found in the assembly";
    return out;
  }
  const AmdgpuLoopStats &l = *r.kvLoop;
  auto percent = [](int64_t part, int64_t whole) {
    return whole ? 100 * part / whole : 0;
  };
  // `.LBB0_20 x8, .LBB0_16 x?`: inner loops and their trip counts.
  auto innerLoops = [&](const AmdgpuLoopStats &loop) {
    int64_t unknown = 0;
    for (const AmdgpuInnerLoop &i : loop.inner) {
      os << (&i == &loop.inner.front() ? "" : ",") << " " << i.header << " x";
      if (i.trips)
        os << i.trips;
      else
        os << "?";
      unknown += i.trips == 0;
    }
    return unknown;
  };
  os << "\n  KV loop body (per iteration, loop " << l.header;
  int64_t unknownTrips = 0;
  if (!l.inner.empty()) {
    os << "; inner loops";
    unknownTrips = innerLoops(l);
    if (unknownTrips)
      os << "; x?: trip count not static, counted once";
  }
  os << "): VALU " << l.valu << " (v_dot2 " << l.dot2 << " = "
     << percent(l.dot2, l.valu) << "% of VALU issue slots), SALU " << l.salu
     << ", LDS " << l.lds << " (reads " << l.ldsReads << ": " << l.ldsReadBytes
     << " B per lane, writes " << l.ldsWrites << ": " << l.ldsWriteBytes
     << " B per lane), global " << l.global << ", s_barrier " << l.barriers
     << "\n";
  os << "  KV loop mix:";
  for (const auto &[name, count] : l.mix)
    os << " " << name << "=" << count;
  for (const AmdgpuLoopStats &o : r.otherMacLoops) {
    os << "\n  another loop with multiply-accumulates (not estimated): "
       << o.header << ": VALU " << o.valu << " (v_dot2 " << o.dot2 << " = "
       << percent(o.dot2, o.valu) << "%), LDS " << o.lds << ", s_barrier "
       << o.barriers;
    if (!o.inner.empty()) {
      os << "; inner loops";
      innerLoops(o);
    }
  }
  Mi50Estimate e =
      estimateMi50Throughput(l, blockM, blockN, headDim, threads, waves);
  os << "\n  MI50 throughput (static estimate, docs/mi50-throughput-model.md): "
     << e.flopsPerIteration << " FLOP per iteration per workgroup; VALU "
     << llvm::format("%.0f", e.valuCycles) << " cycles per CU -> "
     << llvm::format("%.2f", e.valuBoundTflops) << " TFLOP/s VALU-bound; LDS "
     << llvm::format("%.0f", e.ldsCycles) << " cycles -> "
     << llvm::format("%.2f", e.ldsBoundTflops) << " TFLOP/s LDS-bound; "
     << (e.ldsBound ? "LDS" : "VALU")
     << "-limited: " << llvm::format("%.2f", e.tflops) << " TFLOP/s ("
     << llvm::format("%.0f", 100 * e.tflops / Mi50Estimate::dot2PeakTflops)
     << "% of the " << llvm::format("%.1f", Mi50Estimate::dot2PeakTflops)
     << " TFLOP/s dot2 peak; fp32 FMA peak "
     << llvm::format("%.2f", Mi50Estimate::fp32PeakTflops)
     << "); an upper bound with latency hidden, occupancy (" << waves
     << " waves/SIMD) not modelled";
  if (e.macCoverage < 1)
    os << "; not valid: the loop's multiply-accumulate instructions, as "
          "counted, do "
       << llvm::format("%.0f", 100 * e.macCoverage)
       << "% of an iteration's FLOP (inner loops run more often than "
          "counted), so the bounds are too high";
  else if (unknownTrips)
    os << "; " << unknownTrips
       << " inner loops counted once: too high by their further trips";
  return out;
}
