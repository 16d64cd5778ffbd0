//===- Timing.h - An MI50 timing model over executed instructions -*- C++
//-*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. Issue 20's timing model: the gfx906 simulator records, for a
// sample of a launch's workgroups, every instruction each wave executed (its
// index in the Program, its active lanes, its LDS bank passes), and this
// model replays those streams on one modelled MI50 compute unit, cycle by
// cycle, to estimate how long the launch would take on an MI50. Everything
// it prints is an ESTIMATE of the model named by TimingParams::name(), not a
// measurement: no AMD GPU ran it.
//
// The compute unit (docs/mi50-timing-model.md has the derivations):
//   - 4 SIMDs; SIMD s gets an issue turn every 4 cycles (cycle % 4 == s); in
//     its turn it issues at most one instruction per unit (VALU, SALU/SMEM,
//     LDS, vector memory, branch), each from a different wave, the oldest
//     ready wave first; a wave issues at most one instruction per turn;
//   - VALU: a wave64 instruction occupies its SIMD's VALU for issue cycles
//     (4; v_dot2_f32_f16 16/3, from the 10 T MAC/s measured with independent
//     chains; transcendental 16; f64 8) and its VGPR results are ready
//     `latency` cycles after issue (v_dot2 16, from the 3.35 T MAC/s of one
//     dependent chain; 4 otherwise: the next turn);
//   - LDS: one per CU, serving instructions in order; an instruction takes
//     max(bytes / LDS bytes per cycle, bank passes * cycles per pass) and its
//     data returns `ldsLatency` after its service ends (lgkmcnt);
//   - global memory: the CU's share of the HBM bandwidth (all CUs busy: the
//     total over the CUs that have work), reads and writes at their own
//     rates, data back `globalLatency` after its transfer (vmcnt, in order);
//     scalar loads `smemLatency` (lgkmcnt);
//   - s_waitcnt blocks a wave until the counter's outstanding operations are
//     at most N; s_barrier until every wave of its workgroup arrived; a taken
//     branch costs the wave `takenBranchCycles` more before its next issue.
// A launch: the workgroups that differ only in grid y and z are taken to
// take the same time (fa's grids: y is the head, z the batch); along x the
// sampled workgroups' times are interpolated (a split-KV grid's per split,
// TimingRequest::periodX). Each sample is replayed as
// `resident` copies sharing one CU (the workgroups per CU the descriptor,
// the LDS and the grid allow), and the grid's workgroups are dispatched in
// order to the earliest free slot of the CUs.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_SIM_TIMING_H
#define FA_LIB_SIM_TIMING_H

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

namespace fa {
namespace sim {

class Program;
struct KernelDescriptor;

/// The model's parameters. Two calibrations (docs/gfx906-timing.md has
/// every value's source): version 1 (docs/mi50-timing-model.md: fa's own
/// microbenchmark targets) and version 2, the default (version 1's
/// instruction costs plus LDS broadcast, the LDS datapath width fit to
/// llama.cpp's real MI50 results, HBM efficiency, a cap on the vector
/// memory requests in flight per CU and L2 hits of re-read data).
struct TimingParams {
  static constexpr const char *kModel = "fa-mi50-timing";
  static constexpr unsigned kLatestVersion = 2;

  /// The calibration `version` (1 or 2; anything else: the latest).
  explicit TimingParams(unsigned version = kLatestVersion);

  unsigned version = kLatestVersion;
  unsigned cus = 60;
  double clockHz = 1.725e9;
  unsigned simdsPerCu = 4;
  unsigned maxWavesPerCu = 40;
  unsigned maxWorkgroupsPerCu = 16;

  double valuCycles = 4;          ///< issue cycles of a wave64 VALU op
  double dot2Cycles = 16.0 / 3.0; ///< v_dot2_f32_f16 (10 T MAC/s)
  double transCycles = 16;        ///< v_exp/log/rcp/rsq/sqrt/sin/cos
  double f64Cycles = 8;           ///< f64 FMA at half the f32 rate
  /// v2: the VALU ops GCN issues at a quarter of the rate (16 cycles a
  /// wave64; third-party GCN timing tables, CLRX's GcnTimings, and LLVM's
  /// AMDGPU scheduling model agree): 32-bit integer multiplies
  /// (v_mul_lo/hi_u32/i32, v_mad_u64_u32, v_mad_i64_i32) and the f32
  /// division steps (v_div_scale/fmas/fixup_f32). v1 charged them 4.
  double quarterRateCycles = 4;
  double valuLatency = 4;         ///< result to a dependent VALU op
  double dot2Latency = 16;        ///< v_dot2 result (3.35 T MAC/s chain)
  double transLatency = 16;

  double ldsBytesPerCycle = 41.2; ///< per CU (v1: 4.26 TB/s ds_read_b128)
  double ldsPassCycles = 0.886;   ///< per bank pass (1.87 TB/s at 32-way)
  double ldsLatency = 64;         ///< assumption
  double smemLatency = 150;       ///< assumption
  /// v2: 1 = a DS access is charged the distinct dwords it touches (lanes
  /// reading one dword are served together), 0 = every lane's bytes.
  unsigned ldsBroadcast = 0;
  /// v2: 1 = a global load or store moves at most the distinct 64-byte
  /// lines its lanes touch (lanes reading one line share it), 0 = every
  /// lane's bytes. Scratch keeps the lanes' bytes.
  unsigned globalLines = 0;

  double hbmReadBytesPerSecond = 850e9;  ///< 800-890 GB/s measured
  double hbmWriteBytesPerSecond = 617e9; ///< fit to the 715 GB/s copy
  /// v2: the share of the HBM rates above that a kernel's access stream
  /// gets (1: all of it).
  double hbmEfficiency = 1;
  double globalLatency = 500; ///< assumption
  double vmemIssueCycles = 4; ///< address cycles per vector op
  /// v2: vector memory instructions in flight per CU (issued, data not yet
  /// back); a wave's next one waits for one to return. 0: no limit.
  unsigned vmemInFlight = 0;
  /// v2: L2 capacity (0: no L2 model), its bandwidth (whole chip) and hit
  /// latency. Loads of data other workgroups of the launch also read hit
  /// in L2 (Timing.cpp, l2HitRate).
  double l2Bytes = 0;
  double l2BytesPerCycle = 1024;
  double l2Latency = 300;
  /// v2: 1 = the L2 model also sees data shared along grid y and z (the
  /// probe workgroups of TimingRequest::probeYZ), 0 = along x only.
  unsigned l2ShareYZ = 0;
  /// v2: the CU's vector L1 (0: none), its bandwidth and hit latency, for
  /// private (scratch) loads: the share of them that hits is the share of
  /// the resident waves' private segments that fits in it; stores write
  /// through to L2 or HBM and leave the line valid (Timing.cpp).
  double l1Bytes = 0;
  double l1BytesPerCycle = 64;
  double l1Latency = 120;

  double barrierCycles = 4;     ///< release after the last arrival
  double takenBranchCycles = 4; ///< assumption: one turn to refetch

  /// "fa-mi50-timing v2" (the version's).
  std::string name() const;
  /// The parameters, one "key=value" list (printed with every estimate).
  std::string describe() const;
  /// Applies "key=value[ key=value...]" (describe()'s keys; spaces or
  /// commas between); why not, if a key is unknown or a value is not a
  /// positive number (0 is allowed for the v2 switches that take it).
  /// `version=N` first resets every parameter to version N's calibration,
  /// wherever it stands in the list.
  std::string apply(const std::string &assignments);
};

/// One executed wave-instruction.
struct TraceEntry {
  uint32_t index = 0;  ///< in the Program
  uint16_t lanes = 0;  ///< EXEC lanes when it issued
  uint16_t passes = 0; ///< LDS bank passes (ldsConflictDegree); else 0
  /// DS with a bank access: the distinct dwords it touched, summed over its
  /// phases (ldsConflictDegree); global/flat loads: the 64-byte line of the
  /// first active lane's address, truncated to 32 bits (which data it is,
  /// for the L2 model); else 0.
  uint32_t extra = 0;
  /// Global/flat loads and stores: the distinct 64-byte lines its active
  /// lanes touch (v2's `global_lines`); else 0.
  uint16_t lines = 0;
};

struct WorkgroupTrace {
  uint32_t wg[3] = {0, 0, 0};
  std::vector<std::vector<TraceEntry>> waves;
};

/// What a launch asks the simulator to record (SimLaunch::timing). The
/// simulator fills `traces` (under `mutex`) for the workgroups `record`
/// selects; with `onlyRecorded` it runs no other workgroup (an estimate
/// without the launch's full results: the caller must not validate them).
struct TimingRequest {
  /// The grid x indices to record (at y = 0, z = 0).
  std::vector<uint32_t> samplesX;
  /// Also record the workgroups one step along y and along z from the
  /// middle sample (where the grid has them): not timed, they show v2's L2
  /// model the data shared along y and z (GQA heads, batch, splits).
  bool probeYZ = true;
  bool onlyRecorded = false;

  std::mutex mutex;
  std::vector<WorkgroupTrace> traces;

  /// Grid x is tile * periodX + split (LaunchGeometry::periodX): the
  /// samples are whole tiles and a workgroup's time is interpolated from
  /// the samples of its split (1: from its neighbours along x).
  uint32_t periodX = 1;

  /// `samples` x indices spread evenly over [0, gridX) with both ends.
  static std::vector<uint32_t> spread(uint32_t gridX, unsigned samples);
  /// Sets samplesX and periodX: with `period` > 1 dividing gridX and at
  /// least two tiles' worth of samples, every split of samples / period
  /// tiles spread over the gridX / period tiles; else spread(gridX,
  /// samples) and period 1. At most `samples` workgroups either way.
  void sample(uint32_t gridX, unsigned samples, uint32_t period = 1);
  bool records(const uint32_t wg[3]) const;
};

/// Per unit of the modelled CU: busy cycles over the replay.
struct UnitUse {
  double valu = 0; ///< summed over the SIMDs' VALUs
  double lds = 0;
  double vmem = 0; ///< the CU's HBM share
  double salu = 0;
};

/// Why the waves did not issue, in wave-cycles (summed over the waves).
struct Stalls {
  double waitLgkm = 0, waitVm = 0, barrier = 0, dependency = 0, valuBusy = 0,
         branch = 0;
};

struct SampleTiming {
  uint32_t x = 0;            ///< grid x of the sampled workgroup
  unsigned resident = 0;     ///< copies replayed together on one CU
  double cycles = 0;         ///< until the last of them ended
  uint64_t instructions = 0; ///< wave-instructions of one copy
  UnitUse busy;              ///< over the replay, all copies
  Stalls stalls;             ///< over the replay, all copies
};

struct TimingEstimate {
  std::string model;  ///< TimingParams::name()
  double l2Hit = 0;   ///< share of the loads' bytes that hit in L2 (v2)
  std::string params; ///< TimingParams::describe()
  std::string kernel;
  uint32_t grid[3] = {1, 1, 1};
  uint32_t periodX = 1; ///< samples taken per split (TimingRequest)
  unsigned wavesPerWorkgroup = 0;
  unsigned workgroupsPerCu = 0; ///< resident per CU (occupancy)
  std::string residentLimit;    ///< what limits them
  unsigned activeCus = 0;
  std::vector<SampleTiming> samples;
  double cycles = 0;  ///< the grid's makespan, CU cycles
  double seconds = 0; ///< cycles / clock
  /// Utilisation of each unit over the replays (busy / capacity), 0..1.
  double valuUse = 0, ldsUse = 0, vmemUse = 0;
  std::string limitedBy; ///< the most used unit, or "latency"
  double flops = 0;      ///< set by the caller (0: unknown)

  std::string text() const;
  std::string json() const;
};

/// The estimate of one attention call made of `parts` launches run one
/// after another (a split-KV attention: the split kernel, then the combine
/// kernel), `flops` for all of them. One part reads as its own text() and
/// json(). Several: each part without TFLOP/s, then the total time and
/// TFLOP/s; the JSON object has the total's "cycles", "seconds", "flops",
/// "tflops", the time-weighted "valu_use", "lds_use", "hbm_use", the
/// longest part's "limited_by" (and its kernel, "limited_by_kernel"), and
/// the parts under "launches".
std::string estimatesText(const std::vector<TimingEstimate> &parts,
                          double flops);
std::string estimatesJson(const std::vector<TimingEstimate> &parts,
                          double flops);

/// Replays `traces` (one WorkgroupTrace per sample) on the model. `ldsBytes`
/// per workgroup (static + dynamic); the occupancy follows the descriptor's
/// VGPR/SGPR counts. `periodX` as TimingRequest's: a workgroup's time is
/// interpolated between the samples with its x mod periodX.
TimingEstimate estimateTiming(const Program &program,
                              const KernelDescriptor &kd,
                              const uint32_t grid[3], const uint32_t block[3],
                              uint32_t ldsBytes,
                              std::vector<WorkgroupTrace> traces,
                              const TimingParams &params = TimingParams(),
                              uint32_t periodX = 1);

} // namespace sim
} // namespace fa

#endif // FA_LIB_SIM_TIMING_H
