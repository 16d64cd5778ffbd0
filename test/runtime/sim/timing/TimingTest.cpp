//===- TimingTest.cpp - Microbenchmarks of the MI50 timing model ----------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Issue 20's microbenchmarks: gfx906 kernels written in assembly (valu.s,
// lds.s, hbm.s, model.s next to this file, assembled by llvm-mc at build
// time) run on the simulator with a TimingRequest, and the timing model
// (sim/Timing.h) estimates their time on an MI50. Two kinds of test:
//   - Mi50Figures: each published MI50 figure of issue 20's list computed
//     from the model's estimate of the kernel that measures it, within 15%
//     of the published value;
//   - ModelRules: small kernels whose time follows from the rules Timing.h
//     states (issue turns, VALU latency, LDS and global latency, barriers)
//     worked out by hand from TimingParams' values, within 5% (exact to a
//     turn's alignment).
// Every figure is printed with its error; `--table FILE` writes them as a
// markdown table (docs/mi50-timing-model.md includes it). The figures are
// estimates of the model, not measurements: no GPU runs these kernels here.
//
//===----------------------------------------------------------------------===//

#include "sim/Timing.h"
#include "sim/CodeObject.h"
#include "sim/Decoder.h"
#include "sim/Dispatch.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace fa;
using namespace fa::sim;

namespace {

/// One line of the table.
struct Row {
  std::string figure;  ///< what is measured
  std::string kernel;  ///< kernel and launch
  std::string unit;    ///< of published and model
  double expected = 0; ///< the published figure or the hand-worked value
  double model = 0;    ///< the model's
  std::string source;  ///< "published" or "hand-worked"
  std::string limit;   ///< TimingEstimate::limitedBy
  double errorPct() const { return 100.0 * (model - expected) / expected; }
};

std::vector<Row> &rows() {
  static std::vector<Row> r;
  return r;
}

std::string &tablePath() {
  static std::string p;
  return p;
}

/// Prints the row and checks it within `tolerance` (a fraction).
void report(Row row, double tolerance = 0.15) {
  std::printf("[timing] %-44s %-10s %s %10.4g  model %10.4g  %+6.1f%%  "
              "(%s; limited by %s)\n",
              row.figure.c_str(), row.unit.c_str(), row.source.c_str(),
              row.expected, row.model, row.errorPct(), row.kernel.c_str(),
              row.limit.c_str());
  EXPECT_NEAR(row.model, row.expected, tolerance * row.expected)
      << row.figure << ": " << row.source << " " << row.expected << " "
      << row.unit << ", the model " << row.model << " (" << row.errorPct()
      << "%), kernel " << row.kernel;
  rows().push_back(std::move(row));
}

/// The code objects built from the .s files, loaded once.
const SimModule &module(const std::string &name) {
  static std::map<std::string, std::unique_ptr<SimModule>> cache;
  auto it = cache.find(name);
  if (it != cache.end())
    return *it->second;
  std::string path = std::string(FA_SIM_TIMING_KERNEL_DIR) + "/" + name;
  std::ifstream f(path, std::ios::binary);
  EXPECT_TRUE(f.good()) << "cannot read " << path;
  std::vector<uint8_t> bytes(std::istreambuf_iterator<char>(f), {});
  Expected<std::unique_ptr<SimModule>> m = SimModule::load(bytes);
  if (!m) {
    ADD_FAILURE() << path << ": " << m.status().message();
    std::abort();
  }
  return *(cache[name] = m.take());
}

/// Device memory for a kernel: `bytes` not initialised (untouched pages
/// cost nothing; only the sampled workgroups' parts are read).
struct Buffer {
  // 256-byte aligned, as a device allocation is (v2 counts 64-byte lines).
  explicit Buffer(size_t bytes) : bytes(bytes) {
    data = static_cast<uint8_t *>(std::aligned_alloc(256, (bytes + 255) & ~size_t(255)));
  }
  ~Buffer() { std::free(data); }
  uint64_t addr() const { return uint64_t(reinterpret_cast<uintptr_t>(data)); }
  Region region(bool writable, const char *what) const {
    return Region{addr(), addr() + bytes, writable, what};
  }
  uint8_t *data;
  size_t bytes;
};

/// Little-endian packing of the kernarg segment.
struct Kernarg {
  std::vector<uint8_t> bytes;
  Kernarg &u32(uint32_t x) {
    put(&x, 4);
    return *this;
  }
  Kernarg &u64(uint64_t x) {
    while (bytes.size() % 8)
      bytes.push_back(0);
    put(&x, 8);
    return *this;
  }
  void put(const void *p, size_t n) {
    const uint8_t *b = static_cast<const uint8_t *>(p);
    bytes.insert(bytes.end(), b, b + n);
  }
};

/// What one estimated launch gives the tests.
struct Result {
  TimingEstimate est;
  /// Executed wave-instructions by mnemonic in the first sample, summed
  /// over its waves (checks that the kernel ran the loop it was meant to).
  std::map<std::string, uint64_t> counts;
  unsigned waves = 0; ///< of the first sample
};

/// Runs `kernel` of `file` on the simulator, recording `samples` workgroups
/// (only those run), and estimates the launch.
/// Version 1's calibration: the figures and rules below that do not name a
/// version are version 1's (docs/mi50-timing-model.md).
const TimingParams kParams(1);

Result estimate(const std::string &file, const std::string &kernel,
                uint32_t gridX, uint32_t blockX, const Kernarg &args,
                std::vector<Region> memory = {}, unsigned samples = 3,
                const TimingParams &params = kParams, uint32_t gridY = 1,
                uint32_t gridZ = 1, bool probeYZ = true) {
  const SimModule &m = module(file);
  const CodeObjectKernel *k = m.co.find(kernel);
  Result r;
  if (!k) {
    ADD_FAILURE() << file << " has no kernel " << kernel;
    return r;
  }
  TimingRequest req;
  req.samplesX = TimingRequest::spread(gridX, samples);
  req.probeYZ = probeYZ;
  req.onlyRecorded = true;
  SimDispatch d;
  d.module = &m;
  d.kernel = k;
  d.kernelName = kernel;
  d.grid[0] = gridX;
  d.grid[1] = gridY;
  d.grid[2] = gridZ;
  d.block[0] = blockX;
  d.kernarg = args.bytes;
  d.memory = std::move(memory);
  d.timing = &req;
  Status s = dispatch(d);
  if (!s.ok()) {
    ADD_FAILURE() << kernel << ": " << s.message();
    return r;
  }
  if (req.traces.empty()) {
    ADD_FAILURE() << kernel << ": no workgroup was recorded";
    return r;
  }
  r.waves = unsigned(req.traces[0].waves.size());
  for (const std::vector<TraceEntry> &wave : req.traces[0].waves)
    for (const TraceEntry &e : wave)
      ++r.counts[m.program.insts[e.index].info().mnemonic];
  r.est = estimateTiming(m.program, k->kd, d.grid, d.block,
                         k->kd.groupSegmentFixedSize, std::move(req.traces),
                         params);
  r.est.kernel = kernel;
  std::printf("%s\n", r.est.text().c_str());
  return r;
}

// --- Published MI50 figures ------------------------------------------------

// 60 CUs x 4 SIMDs: 240 workgroups of one wave are one wave per SIMD.
constexpr uint32_t kOneWavePerSimd = 240;
constexpr uint32_t kTwoWavesPerSimd = 480;
constexpr uint32_t kValuTrips = 256; // x 64 VALU instructions per trip

/// T MAC/s of a VALU kernel: 2 MACs per lane per instruction (v_dot2: two
/// f16 products; v_pk_fma_f16: two f16 FMAs), 64 per trip.
double valuMacs(const Result &r, uint32_t gridX, const char *mnemonic) {
  uint64_t perWave = uint64_t(64) * kValuTrips;
  EXPECT_EQ(r.counts.count(mnemonic) ? r.counts.at(mnemonic) : 0,
            perWave * r.waves)
      << mnemonic << " executed per workgroup";
  return double(gridX) * r.waves * perWave * 64 * 2 / r.est.seconds / 1e12;
}

void valuFigure(const char *figure, const char *kernel, uint32_t gridX,
                const char *mnemonic, double published) {
  Result r =
      estimate("valu.hsaco", kernel, gridX, 64, Kernarg().u32(kValuTrips));
  if (r.est.seconds <= 0)
    return;
  report({figure,
          std::string(kernel) + ", " + std::to_string(gridX) + "x64, " +
              std::to_string(gridX / 240) +
              (gridX / 240 == 1 ? " wave/SIMD" : " waves/SIMD"),
          "T MAC/s", published, valuMacs(r, gridX, mnemonic), "published",
          r.est.limitedBy});
}

TEST(Mi50Figures, Dot2OneDependentChain) {
  valuFigure("v_dot2_f32_f16, 1 dependent chain", "dot2_chain1",
             kOneWavePerSimd, "v_dot2_f32_f16", 3.35);
}

TEST(Mi50Figures, Dot2FourChainsOneWavePerSimd) {
  valuFigure("v_dot2_f32_f16, 4 chains", "dot2_chain4", kOneWavePerSimd,
             "v_dot2_f32_f16", 10.0);
}

TEST(Mi50Figures, Dot2TwoChainsTwoWavesPerSimd) {
  valuFigure("v_dot2_f32_f16, 2 chains", "dot2_chain2", kTwoWavesPerSimd,
             "v_dot2_f32_f16", 10.0);
}

// At two waves per SIMD one wave's loop instructions (3 scalar, a taken
// branch) issue in the turns the other's VALU work fills; at one they
// cost their turns (about 6% of 64 v_pk_fma_f16 per trip).
TEST(Mi50Figures, PkFmaF16TwoWavesPerSimd) {
  valuFigure("v_pk_fma_f16, 4 chains", "pk_fma_chain4", kTwoWavesPerSimd,
             "v_pk_fma_f16", 13.2);
}

TEST(Mi50Figures, PkFmaF16OneWavePerSimd) {
  valuFigure("v_pk_fma_f16, 4 chains", "pk_fma_chain4", kOneWavePerSimd,
             "v_pk_fma_f16", 13.2);
}

/// ds_read_b128 at lane stride `stride` bytes: 240 workgroups of 256 lanes
/// (4 waves per SIMD), 8 reads of 1 KiB per wave per trip.
void ldsFigure(const char *figure, uint32_t stride, double published) {
  const uint32_t trips = 64, gridX = 240;
  Result r = estimate("lds.hsaco", "lds_read_b128", gridX, 256,
                      Kernarg().u32(trips).u32(stride));
  if (r.est.seconds <= 0)
    return;
  EXPECT_EQ(r.counts["ds_read_b128"], uint64_t(8) * trips * r.waves);
  double bytes = double(gridX) * r.waves * 8 * trips * 1024;
  report({figure,
          "lds_read_b128 stride " + std::to_string(stride) +
              " B, 240x256, 4 waves/SIMD",
          "TB/s", published, bytes / r.est.seconds / 1e12, "published",
          r.est.limitedBy});
}

TEST(Mi50Figures, LdsReadB128Contiguous) {
  ldsFigure("ds_read_b128 contiguous", 16, 4.26);
}

TEST(Mi50Figures, LdsReadB128Stride32) {
  ldsFigure("ds_read_b128 column, 32-dword rows", 128, 1.87);
}

TEST(Mi50Figures, LdsReadB128Stride33) {
  ldsFigure("ds_read_b128 column, 33-dword rows", 132, 3.97);
}

// HBM: 240 workgroups of 256 lanes (4 waves per SIMD), each streaming 1 MiB
// (64 trips of 16 KiB): 240 MiB.
constexpr uint32_t kHbmTrips = 64, kHbmGrid = 240;
constexpr size_t kHbmBytes = size_t(kHbmGrid) * kHbmTrips * 16384;

TEST(Mi50Figures, HbmRead) {
  Buffer src(kHbmBytes);
  Result r = estimate("hbm.hsaco", "hbm_read", kHbmGrid, 256,
                      Kernarg().u64(src.addr()).u32(kHbmTrips),
                      {src.region(false, "src")});
  if (r.est.seconds <= 0)
    return;
  EXPECT_EQ(r.counts["global_load_dwordx4"], uint64_t(4) * kHbmTrips * r.waves);
  // Published: 800-890 GB/s; checked against the middle, 850.
  report({"HBM read (800-890 GB/s)", "hbm_read, 240x256, 240 MiB", "GB/s", 850,
          double(kHbmBytes) / r.est.seconds / 1e9, "published",
          r.est.limitedBy});
}

TEST(Mi50Figures, HbmCopy) {
  Buffer src(kHbmBytes), dst(kHbmBytes);
  // The sampled workgroups (the only ones run) copy their chunks: a pattern
  // there, checked in dst afterwards.
  const size_t chunk = size_t(kHbmTrips) * 16384;
  const std::vector<uint32_t> xs = TimingRequest::spread(kHbmGrid, 3);
  for (uint32_t x : xs)
    for (size_t i = 0; i < chunk; ++i)
      src.data[x * chunk + i] = uint8_t(i * 7 + x);
  Result r = estimate("hbm.hsaco", "hbm_copy", kHbmGrid, 256,
                      Kernarg().u64(src.addr()).u64(dst.addr()).u32(kHbmTrips),
                      {src.region(false, "src"), dst.region(true, "dst")});
  if (r.est.seconds <= 0)
    return;
  for (uint32_t x : xs)
    EXPECT_EQ(std::memcmp(dst.data + x * chunk, src.data + x * chunk, chunk), 0)
        << "workgroup " << x << " did not copy its chunk";
  EXPECT_EQ(r.counts["global_store_dwordx4"],
            uint64_t(4) * kHbmTrips * r.waves);
  // The copy figure counts bytes read + bytes written over the time, as
  // TimingParams' write rate was fit (2 / 715 = 1 / 850 + 1 / 617).
  report({"HBM copy (read + write bytes)", "hbm_copy, 240x256, 2x240 MiB",
          "GB/s", 715, 2.0 * double(kHbmBytes) / r.est.seconds / 1e9,
          "published", r.est.limitedBy});
}

// --- Hand-worked rules of the model ------------------------------------------
//
// One workgroup on one CU; cycles are TimingEstimate::cycles. The expected
// values follow from Timing.h's rules and TimingParams, by hand: a wave
// issues at most one instruction per turn of its SIMD (every `turn` = 4
// cycles), s_endpgm included, and a wave ends a turn after its s_endpgm
// issues. They are exact to within a turn's alignment, so they are checked
// within 5%, not the published figures' 15%: a rate wrong by 10% shows.

constexpr double kTurn = 4;
constexpr double kRuleTolerance = 0.05;

Result one(const char *kernel, uint32_t blockX = 64, Kernarg args = {},
           std::vector<Region> memory = {}) {
  return estimate("model.hsaco", kernel, 1, blockX, args, std::move(memory), 1);
}

void rule(const char *figure, const char *kernel, double expected, double model,
          const std::string &limit) {
  report({figure, kernel, "cycles", expected, model, "hand-worked", limit},
         kRuleTolerance);
}

/// The first turn at or after `t` (t >= 0, turns at multiples of 4).
double turnAfter(double t) { return kTurn * std::ceil(t / kTurn - 1e-9); }

TEST(ModelRules, IndependentAdds) {
  // 1024 v_add_f32 with no dependence: one per turn (valuCycles = 4 keeps
  // the VALU no busier than that); s_endpgm the turn after the last.
  Result r = one("add_indep");
  rule("1024 independent v_add_f32, 1 wave", "add_indep",
       1023 * std::max(kParams.valuCycles, kTurn) + 2 * kTurn, r.est.cycles,
       r.est.limitedBy);
}

TEST(ModelRules, DependentDot2) {
  // 256 v_dot2 on one chain: each issues dot2Latency after the previous;
  // s_endpgm (no dependence) the turn after the last.
  Result r = one("dot2_dep");
  rule("256 dependent v_dot2_f32_f16, 1 wave", "dot2_dep",
       255 * kParams.dot2Latency + 2 * kTurn, r.est.cycles, r.est.limitedBy);
}

TEST(ModelRules, IndependentDot2) {
  // 256 v_dot2 on four chains: the VALU is busy dot2Cycles per v_dot2 and
  // 4 * dot2Cycles >= dot2Latency, so the VALU's rate limits: the last one
  // issues after 255 * dot2Cycles.
  Result r = one("dot2_indep");
  rule("256 v_dot2_f32_f16 on 4 chains, 1 wave", "dot2_indep",
       255 * kParams.dot2Cycles + 2 * kTurn, r.est.cycles, r.est.limitedBy);
}

TEST(ModelRules, BarrierWaitsForTheSlowestWave) {
  // Two waves (on two SIMDs): wave 0 runs 64 + 512 v_add_f32, wave 1 (its
  // branch taken) 512 + 64. Both first spend 4 turns (v_readfirstlane,
  // s_lshr, s_cmp, s_cbranch); wave 1 also takenBranchCycles. With a
  // barrier, wave 0 resumes barrierCycles after wave 1 arrives and runs its
  // 512; without, each wave runs its 576 on its own SIMD.
  Result with = one("skew_barrier", 128);
  Result without = one("skew_no_barrier", 128);
  const double add = std::max(kParams.valuCycles, kTurn);
  const double prologue = 4 * kTurn + kParams.takenBranchCycles;
  rule("barrier: waves of 64+512 and 512+64 v_add", "skew_barrier, 2 waves",
       prologue + 512 * add + kParams.barrierCycles + 512 * add + kTurn,
       with.est.cycles, with.est.limitedBy);
  rule("no barrier: the same waves", "skew_no_barrier, 2 waves",
       prologue + 576 * add + kTurn, without.est.cycles, without.est.limitedBy);
}

TEST(ModelRules, LdsLatencyExposedByWait) {
  // ds_read_b32 of 64 lanes x 4 bytes issued at turn T: the LDS serves it
  // in s = max(256 / ldsBytesPerCycle, 2 passes x ldsPassCycles), its data
  // is back at T + s + ldsLatency. lds_wait: s_waitcnt at T + 4, the adds
  // from the first turn after the data. lds_nowait: the adds from T + 4,
  // then its s_waitcnt (satisfied) takes one more turn. The difference:
  // turnAfter(s + ldsLatency) - 2 turns.
  Result wait = one("lds_wait");
  Result nowait = one("lds_nowait");
  double s =
      std::max(256 / kParams.ldsBytesPerCycle, 2 * kParams.ldsPassCycles);
  rule("s_waitcnt after ds_read_b32: added cycles", "lds_wait - lds_nowait",
       turnAfter(s + kParams.ldsLatency) - 2 * kTurn,
       wait.est.cycles - nowait.est.cycles, wait.est.limitedBy);
}

TEST(ModelRules, GlobalLatencyExposedByWait) {
  // global_load_dword of 64 lanes x 4 bytes, waited for at once, or after
  // 256 adds (1024 cycles > globalLatency). One CU has work, so its share
  // of the HBM is all of it: the transfer (256 bytes at 493 bytes a cycle)
  // is shorter than the vmemIssueCycles of the address; the data is back
  // globalLatency after that. The difference as for the LDS.
  Buffer src(256);
  auto args = [&] { return Kernarg().u64(src.addr()); };
  Result wait = one("global_wait", 64, args(), {src.region(false, "src")});
  Result nowait = one("global_nowait", 64, args(), {src.region(false, "src")});
  double s = std::max(kParams.vmemIssueCycles,
                      256 / (kParams.hbmReadBytesPerSecond / kParams.clockHz));
  rule("s_waitcnt after global_load_dword: added cycles",
       "global_wait - global_nowait",
       turnAfter(s + kParams.globalLatency) - 2 * kTurn,
       wait.est.cycles - nowait.est.cycles, wait.est.limitedBy);
}

// --- Version 2's mechanisms (docs/gfx906-timing.md), hand-worked ---------

/// Version 2 with `changes` applied.
TimingParams v2(const char *changes = "") {
  TimingParams p(2);
  std::string why = p.apply(changes);
  EXPECT_EQ(why, "");
  return p;
}

TEST(TimingV2, VersionsAndKeys) {
  EXPECT_EQ(TimingParams().name(), "fa-mi50-timing v2");
  EXPECT_EQ(TimingParams(1).name(), "fa-mi50-timing v1");
  TimingParams p;
  // version=1 resets to v1 first, wherever it stands.
  EXPECT_EQ(p.apply("lds_pass_cycles=1 version=1"), "");
  EXPECT_EQ(p.version, 1u);
  EXPECT_EQ(p.ldsPassCycles, 1.0);
  EXPECT_EQ(p.ldsBroadcast, 0u);
  EXPECT_EQ(p.ldsBytesPerCycle, 41.2);
  EXPECT_EQ(p.apply("version=2"), "");
  EXPECT_EQ(p.ldsBroadcast, 1u);
  EXPECT_EQ(p.apply("l2_bytes=0 vmem_in_flight=0"), "");
  EXPECT_NE(p.apply("lds_pass_cycles=0"), "");
  EXPECT_NE(p.apply("version=3"), "");
  EXPECT_NE(p.describe().find("version=2 "), std::string::npos);
}

TEST(TimingV2, QuarterRateIntegerMultiplies) {
  // 256 independent v_mul_lo_u32: v2 keeps the VALU busy
  // quarterRateCycles (16) per op, so the last issues after 255 * 16 and
  // s_endpgm the turn after; v1 charged them as any VALU op (one a turn).
  TimingParams p = v2();
  EXPECT_EQ(p.quarterRateCycles, 16.0);
  Result r = estimate("model.hsaco", "mul_lo_indep", 1, 64, {}, {}, 1, p);
  rule("v2: 256 independent v_mul_lo_u32, 1 wave", "mul_lo_indep",
       255 * p.quarterRateCycles + 2 * kTurn, r.est.cycles, r.est.limitedBy);
  Result r1 = one("mul_lo_indep");
  rule("v1: the same", "mul_lo_indep", 255 * kTurn + 2 * kTurn, r1.est.cycles,
       r1.est.limitedBy);
}

/// The LDS's busy cycles of sample 0 per ds_read_b128 executed there.
double ldsCyclesPerRead(const Result &r, uint32_t trips) {
  const SampleTiming &s = r.est.samples.at(0);
  double reads = double(s.resident) * r.waves * 8 * trips;
  EXPECT_EQ(r.counts.at("ds_read_b128"), uint64_t(8) * trips * r.waves);
  return s.busy.lds / reads;
}

TEST(TimingV2, LdsBroadcastChargesDistinctDwords) {
  // ds_read_b128 with every lane at one address (stride 0): 8 phases of 8
  // lanes, each phase touching the same 4 dwords in 4 banks: 32 distinct
  // dwords (128 bytes), 8 bank passes. With lds_pass_cycles=0.1 the byte
  // term decides: 128 / 128 = 1 cycle per read (without broadcast, 64
  // lanes x 16 bytes = 1024 bytes: 8 cycles).
  const uint32_t trips = 16;
  TimingParams p = v2("lds_pass_cycles=0.1");
  Result r = estimate("lds.hsaco", "lds_read_b128", 60, 256,
                      Kernarg().u32(trips).u32(0), {}, 1, p);
  rule("v2: broadcast ds_read_b128 (stride 0)", "lds_read_b128, LDS cycles",
       std::max(128 / p.ldsBytesPerCycle, 8 * p.ldsPassCycles),
       ldsCyclesPerRead(r, trips), r.est.limitedBy);
  // Contiguous (stride 16): 256 distinct dwords, 1024 bytes: 8 cycles.
  Result c = estimate("lds.hsaco", "lds_read_b128", 60, 256,
                      Kernarg().u32(trips).u32(16), {}, 1, p);
  rule("v2: contiguous ds_read_b128", "lds_read_b128, LDS cycles",
       1024 / p.ldsBytesPerCycle, ldsCyclesPerRead(c, trips), c.est.limitedBy);
  // v1 charges every lane: 1024 / 41.2 for either.
  Result one = estimate("lds.hsaco", "lds_read_b128", 60, 256,
                        Kernarg().u32(trips).u32(0), {}, 1, kParams);
  rule("v1: broadcast ds_read_b128 (stride 0)", "lds_read_b128, LDS cycles",
       1024 / kParams.ldsBytesPerCycle, ldsCyclesPerRead(one, trips),
       one.est.limitedBy);
}

TEST(TimingV2, RequestsInFlightCapTheCu) {
  // hbm_read, one workgroup of 4 waves per CU, 8 trips: 128 loads of 1 KiB
  // per CU. With one request in flight each waits for the previous one's
  // data: its transfer (1024 bytes at the CU's share of the HBM) plus
  // globalLatency; the L2 model off. The kernarg load and the first
  // instructions add a few hundred cycles: within the 5%.
  const uint32_t trips = 8, grid = 60;
  Buffer src(size_t(grid) * trips * 16384);
  TimingParams p = v2("vmem_in_flight=1 l2_bytes=0");
  Result r = estimate("hbm.hsaco", "hbm_read", grid, 256,
                      Kernarg().u64(src.addr()).u32(trips),
                      {src.region(false, "src")}, 3, p);
  const double share =
      p.hbmEfficiency * p.hbmReadBytesPerSecond / grid / p.clockHz;
  const double perLoad =
      std::max(p.vmemIssueCycles, 1024 / share) + p.globalLatency;
  rule("v2: 1 request in flight, 128 loads of 1 KiB", "hbm_read, 60x256",
       128 * perLoad, r.est.cycles, r.est.limitedBy);
}

TEST(TimingV2, GlobalLoadsChargeAtMostTheirLines) {
  // hbm_read_quad: four lanes on each 16 bytes, so a global_load_dwordx4
  // of 64 lanes touches 4 lines of 64 bytes (256 bytes) where every lane's
  // bytes are 1 KiB. 60 workgroups, one per CU: each CU's HBM share is a
  // 60th, under which a load's transfer (256 or 1024 bytes) exceeds
  // vmemIssueCycles, so the VMEM unit's busy cycles per load are the
  // transfer's (the L2 model off: nothing is shared). hbm_read's
  // contiguous loads touch 16 whole lines: the same charge either way;
  // hbm_read_spread's 64 lines a load are charged the lanes' 1 KiB, not
  // 4 KiB (the rest of each line is other loads' data).
  const uint32_t trips = 8, grid = 60;
  Buffer src(size_t(grid) * trips * 16384 + 16384);
  auto perLoad = [&](const char *kernel, const char *changes) {
    TimingParams p = v2(changes);
    Result r = estimate("hbm.hsaco", kernel, grid, 256,
                        Kernarg().u64(src.addr()).u32(trips),
                        {src.region(false, "src")}, 1, p);
    const SampleTiming &s = r.est.samples.at(0);
    EXPECT_EQ(r.counts.at("global_load_dwordx4"),
              uint64_t(4) * trips * r.waves);
    return s.busy.vmem / double(s.resident * 4 * 4 * trips);
  };
  const TimingParams p = v2();
  EXPECT_EQ(p.globalLines, 1u);
  const double share =
      p.hbmEfficiency * p.hbmReadBytesPerSecond / grid / p.clockHz;
  struct Case {
    const char *figure, *kernel, *changes;
    double bytes; // charged per load
  };
  for (const Case &c : {
           Case{"v2: global_load_dwordx4, 4 lanes a 16 bytes",
                "hbm_read_quad", "l2_bytes=0", 256},
           Case{"v2 global_lines=0: the same loads", "hbm_read_quad",
                "l2_bytes=0 global_lines=0", 1024},
           Case{"v2: contiguous global_load_dwordx4", "hbm_read",
                "l2_bytes=0", 1024},
           Case{"v2: global_load_dwordx4, lanes 64 bytes apart",
                "hbm_read_spread", "l2_bytes=0", 1024},
       })
    rule(c.figure, c.kernel, std::max(p.vmemIssueCycles, c.bytes / share),
         perLoad(c.kernel, c.changes), "vmem");
}

TEST(TimingV2, L2HitsOfSharedData) {
  // 240 workgroups of 4 waves, 4 per CU: all 240 resident at once. With
  // hbm_read_shared every workgroup reads the same lines: the first reader
  // misses, the 239 others hit (one group, the footprint fits). With
  // hbm_read nothing is shared.
  const uint32_t trips = 4, grid = 240;
  Buffer src(size_t(grid) * trips * 16384);
  auto args = [&] { return Kernarg().u64(src.addr()).u32(trips); };
  Result shared = estimate("hbm.hsaco", "hbm_read_shared", grid, 256, args(),
                           {src.region(false, "src")}, 3, v2());
  EXPECT_EQ(shared.est.workgroupsPerCu, 4u);
  EXPECT_NEAR(shared.est.l2Hit, 239.0 / 240.0, 1e-9);
  Result own = estimate("hbm.hsaco", "hbm_read", grid, 256, args(),
                        {src.region(false, "src")}, 3, v2());
  EXPECT_EQ(own.est.l2Hit, 0.0);
  // A footprint 4x the L2 (as if it held 1/4 of the 64 KiB read): one
  // group still, so the hits stay; the capacity only matters across
  // groups (more workgroups than slots).
  Result small = estimate("hbm.hsaco", "hbm_read_shared", grid, 256, args(),
                          {src.region(false, "src")}, 3, v2("l2_bytes=16384"));
  EXPECT_NEAR(small.est.l2Hit, 239.0 / 240.0, 1e-9);
  // 1200 workgroups, 600 slots (24 VGPRs: 10 waves per SIMD, 10
  // workgroups per CU): two groups; the second hits only as far as the
  // footprint (64 KiB) fits in the L2 (16 KiB): (1200 - 2 + 0.25) / 1200.
  Buffer big(size_t(trips) * 16384);
  Result two = estimate("hbm.hsaco", "hbm_read_shared", 1200, 256,
                        Kernarg().u64(big.addr()).u32(trips),
                        {big.region(false, "src")}, 3, v2("l2_bytes=16384"));
  EXPECT_EQ(two.est.workgroupsPerCu, 10u);
  EXPECT_NEAR(two.est.l2Hit, (1200 - 2 + 0.25) / 1200.0, 1e-9);
}

TEST(TimingV2, L2HitsOfDataSharedAlongYAndZ) {
  // 240 workgroups along z (or y), one along x: a single sample, so only
  // the probe one step along z (y) shows that every workgroup reads the
  // same lines: 240 readers, all resident together (4 per CU), 239 hit.
  // Without the probe nothing is seen shared.
  const uint32_t trips = 4;
  Buffer src(size_t(trips) * 16384);
  auto args = [&] { return Kernarg().u64(src.addr()).u32(trips); };
  Result z = estimate("hbm.hsaco", "hbm_read_shared", 1, 256, args(),
                      {src.region(false, "src")}, 3, v2(), 1, 240);
  EXPECT_EQ(z.est.samples.size(), 1u);
  EXPECT_NEAR(z.est.l2Hit, 239.0 / 240.0, 1e-9);
  Result y = estimate("hbm.hsaco", "hbm_read_shared", 1, 256, args(),
                      {src.region(false, "src")}, 3, v2(), 240, 1);
  EXPECT_NEAR(y.est.l2Hit, 239.0 / 240.0, 1e-9);
  Result blind = estimate("hbm.hsaco", "hbm_read_shared", 1, 256, args(),
                          {src.region(false, "src")}, 3, v2(), 1, 240, false);
  EXPECT_EQ(blind.est.l2Hit, 0.0);
  Result off =
      estimate("hbm.hsaco", "hbm_read_shared", 1, 256, args(),
               {src.region(false, "src")}, 3, v2("l2_share_yz=0"), 1, 240);
  EXPECT_EQ(off.est.l2Hit, 0.0);
  // 2 x 600 workgroups, 600 slots (10 per CU): lines shared along x and z
  // read by all 1200; a window of 600 slots holds 2 x 300 of them: two
  // groups, the second hitting as far as the 64 KiB footprint fits in 16
  // KiB of L2: (1200 - 2 + 0.25) / 1200, as for 1200 along x alone.
  Result two =
      estimate("hbm.hsaco", "hbm_read_shared", 2, 256, args(),
               {src.region(false, "src")}, 3, v2("l2_bytes=16384"), 1, 600);
  EXPECT_EQ(two.est.workgroupsPerCu, 10u);
  EXPECT_NEAR(two.est.l2Hit, (1200 - 2 + 0.25) / 1200.0, 1e-9);
}

/// The index of the first instruction named `mnemonic` at or after `from`
/// in `m`'s program (a test failure if there is none).
static uint32_t firstInst(const SimModule &m, const char *mnemonic,
                          size_t from = 0) {
  for (size_t i = from; i < m.program.insts.size(); ++i)
    if (!std::strcmp(m.program.insts[i].info().mnemonic, mnemonic))
      return uint32_t(i);
  ADD_FAILURE() << "no " << mnemonic;
  return 0;
}

TEST(TimingV2, ScratchHitsInL1AndL2WhereItFits) {
  // scratch_probe's stream by hand: one wave issues buffer_load_dword (64
  // lanes) at cycle 0, s_waitcnt at 4, s_endpgm once the data is back.
  // With the private segment of every resident wave inside the L2 the
  // load's data comes back after l2Latency, else after globalLatency (one
  // CU: its HBM share is all of it; the transfer is under
  // vmemIssueCycles). The difference is the two latencies' (to a turn).
  const SimModule &m = module("model.hsaco");
  const CodeObjectKernel *k = m.co.find("scratch_probe");
  ASSERT_TRUE(k);
  const int64_t start = m.program.indexOf(k->entry);
  ASSERT_GE(start, 0);
  auto indexOf = [&](const char *mnemonic) {
    return firstInst(m, mnemonic, size_t(start));
  };
  WorkgroupTrace wg;
  wg.waves.resize(1);
  for (const char *mn : {"buffer_load_dword", "s_waitcnt", "s_endpgm"}) {
    TraceEntry e;
    e.index = indexOf(mn);
    e.lanes = 64;
    wg.waves[0].push_back(e);
  }
  // The L2 rules without the vector L1 (l1_bytes=0), the L1's with it.
  const TimingParams p = v2(), noL1 = v2("l1_bytes=0");
  auto cycles = [&](uint32_t scratchPerLane, const TimingParams &params) {
    KernelDescriptor kd = k->kd;
    kd.privateSegmentFixedSize = scratchPerLane;
    const uint32_t grid[3] = {1, 1, 1}, block[3] = {64, 1, 1};
    return estimateTiming(m.program, kd, grid, block, 0, {wg}, params).cycles;
  };
  // 4 KiB per lane x 64 lanes fits the 4 MiB L2; 128 KiB per lane does not.
  rule("v2: scratch load in L2 vs HBM: added cycles", "scratch_probe",
       p.globalLatency - p.l2Latency,
       cycles(128 * 1024, noL1) - cycles(4096, noL1), "latency");
  // The vector L1 (16 KiB): 64 bytes a lane (4 KiB for the wave) fit, the
  // load hits and comes back after l1Latency instead of l2Latency; 512
  // bytes a lane (32 KiB) half fit: half the load hits, the latency the
  // two's mean.
  EXPECT_EQ(p.l1Bytes, 16384);
  rule("v2: scratch load in L1 vs L2: cycles saved", "scratch_probe",
       p.l2Latency - p.l1Latency, cycles(64, noL1) - cycles(64, p),
       "latency");
  rule("v2: scratch load half in L1: cycles saved", "scratch_probe",
       (p.l2Latency - p.l1Latency) / 2, cycles(512, noL1) - cycles(512, p),
       "latency");

  // Scratch that does not fit goes to HBM even where the launch's other
  // loads hit in L2: two sampled workgroups (grid x = 2) each first load
  // the same global line (key 1: one misses, one hits, l2Hit = 1/2), wait,
  // then the scratch load, wait. The global part is the same at either
  // scratch size; the scratch load adds l2Latency in L2 and globalLatency
  // outside it (at the K/V hit rate it would add their average).
  const uint32_t global = firstInst(m, "global_load_dword");
  auto withShared = [&](uint32_t scratchPerLane) {
    std::vector<WorkgroupTrace> wgs(2);
    for (uint32_t x = 0; x < 2; ++x) {
      wgs[x].wg[0] = x;
      wgs[x].waves.resize(1);
      TraceEntry load;
      load.index = global;
      load.lanes = 64;
      load.extra = 1;
      wgs[x].waves[0].push_back(load);
      for (const char *mn :
           {"s_waitcnt", "buffer_load_dword", "s_waitcnt", "s_endpgm"}) {
        TraceEntry e;
        e.index = indexOf(mn);
        e.lanes = 64;
        wgs[x].waves[0].push_back(e);
      }
    }
    KernelDescriptor kd = k->kd;
    kd.privateSegmentFixedSize = scratchPerLane;
    const uint32_t grid[3] = {2, 1, 1}, block[3] = {64, 1, 1};
    return estimateTiming(m.program, kd, grid, block, 0, wgs, noL1);
  };
  TimingEstimate fits = withShared(4096), over = withShared(128 * 1024);
  EXPECT_NEAR(fits.l2Hit, 0.5, 1e-9);
  EXPECT_NEAR(over.l2Hit, 0.5, 1e-9);
  rule("v2: scratch over L2 beside K/V hits: added cycles",
       "global_load (shared) + scratch_probe, 2 workgroups",
       p.globalLatency - p.l2Latency, over.cycles - fits.cycles, "latency");
}

// A split-KV grid (x = tile * S + split) sampled per split. Synthetic
// workgroups of one wave: n independent v_add_f32, n growing with the tile
// (a causal launch's longer rows) and the last split short (the remainder
// of the keys). Sampled per split, every workgroup's time is interpolated
// from samples of its own split, exact here (n linear in the tile), so the
// estimate equals the one from every workgroup; spread along x alone, the
// short split's samples are smeared over their neighbours and the estimate
// is off (seen: 7% at these sizes).
TEST(TimingSampling, SplitKvGridsSampledPerSplit) {
  TimingRequest r;
  r.sample(32, 8, 4); // 8 tiles of 4 splits, 8 samples: 2 whole tiles
  EXPECT_EQ(r.samplesX, (std::vector<uint32_t>{0, 1, 2, 3, 28, 29, 30, 31}));
  EXPECT_EQ(r.periodX, 4u);
  r.sample(32, 7, 4); // fewer than two tiles' worth: along x
  EXPECT_EQ(r.samplesX, TimingRequest::spread(32, 7));
  EXPECT_EQ(r.periodX, 1u);
  r.sample(30, 8, 4); // 4 does not divide 30
  EXPECT_EQ(r.periodX, 1u);
  r.sample(8, 8, 4); // every workgroup a sample already
  EXPECT_EQ(r.samplesX, TimingRequest::spread(8, 8));
  EXPECT_EQ(r.periodX, 1u);

  const SimModule &m = module("model.hsaco");
  const CodeObjectKernel *k = m.co.find("add_indep");
  ASSERT_TRUE(k);
  const size_t entry = size_t(m.program.indexOf(k->entry));
  const uint32_t add = firstInst(m, "v_add_f32", entry),
                 end = firstInst(m, "s_endpgm", entry);
  constexpr uint32_t kSplits = 4, kTiles = 16;
  auto trace = [&](uint32_t x) {
    WorkgroupTrace t;
    t.wg[0] = x;
    t.waves.resize(1);
    const uint32_t tile = x / kSplits, split = x % kSplits;
    const uint32_t n = (split + 1 == kSplits ? 20 : 200) + 10 * tile;
    TraceEntry e;
    e.lanes = 64;
    e.index = add;
    t.waves[0].assign(n, e);
    e.index = end;
    t.waves[0].push_back(e);
    return t;
  };
  const uint32_t grid[3] = {kTiles * kSplits, 40, 1}, block[3] = {64, 1, 1};
  auto run = [&](const std::vector<uint32_t> &xs, uint32_t period) {
    std::vector<WorkgroupTrace> ts;
    for (uint32_t x : xs)
      ts.push_back(trace(x));
    return estimateTiming(m.program, k->kd, grid, block, 0, std::move(ts),
                          v2(), period);
  };
  std::vector<uint32_t> all(grid[0]);
  for (uint32_t x = 0; x < grid[0]; ++x)
    all[x] = x;
  const double exact = run(all, 1).cycles;
  r.sample(grid[0], 16, kSplits);
  ASSERT_EQ(r.periodX, kSplits);
  const TimingEstimate perSplit = run(r.samplesX, r.periodX);
  EXPECT_EQ(perSplit.periodX, kSplits);
  EXPECT_NEAR(perSplit.cycles, exact, 1e-9 * exact);
  const double alongX = run(TimingRequest::spread(grid[0], 16), 1).cycles;
  EXPECT_GT(std::abs(alongX - exact), 0.03 * exact)
      << "along x alone: " << alongX << ", every workgroup: " << exact;
  // Samples not taken per split (a split without one): along x, as before.
  EXPECT_EQ(run(TimingRequest::spread(grid[0], 3), kSplits).periodX, 1u);
}

// A split-KV attention's estimate: each launch, then the total, which is
// what a user compares; one launch reads as before.
TEST(EstimateOutput, SplitKvLaunchesAddUp) {
  TimingEstimate split, combine;
  split.model = combine.model = "m";
  split.kernel = "split";
  combine.kernel = "combine";
  split.seconds = 3e-6;
  split.cycles = 5400;
  split.valuUse = 0.5;
  split.limitedBy = "VALU";
  combine.seconds = 1e-6;
  combine.cycles = 1800;
  combine.vmemUse = 0.8;
  combine.limitedBy = "HBM";
  EXPECT_EQ(estimatesJson({split}, 6e6), [&] {
    TimingEstimate e = split;
    e.flops = 6e6;
    return e.json();
  }());
  EXPECT_EQ(estimatesText({}, 0), "");

  std::string json = estimatesJson({split, combine}, 8e6);
  EXPECT_EQ(json.rfind("{\"estimate\": true, \"model\": \"m\", \"params\": "
                       "\"\", \"kernel\": \"split\", \"cycles\": 7200, "
                       "\"seconds\": 4e-06, \"flops\": 8000000, \"tflops\": "
                       "2, \"valu_use\": 0.375, \"lds_use\": 0, "
                       "\"hbm_use\": 0.2, \"limited_by\": \"VALU\", "
                       "\"limited_by_kernel\": \"split\", \"launches\": [{",
                       0),
            0u)
      << json;
  EXPECT_NE(json.find("\"kernel\": \"combine\""), std::string::npos);
  std::string text = estimatesText({split, combine}, 8e6);
  EXPECT_EQ(text.rfind("launch 1 of 2: MI50 timing", 0), 0u) << text;
  EXPECT_NE(text.find("\nlaunch 2 of 2: MI50 timing"), std::string::npos);
  EXPECT_NE(text.find("\ntotal of the 2 launches: 4.00 us; 2.00 TFLOP/s (7% "
                      "of the 26.8 TFLOP/s packed-fp16 peak); limited by "
                      "VALU (in kernel split)\n"),
            std::string::npos)
      << text;
  // The parts give no TFLOP/s of their own: the FLOPs are the call's.
  EXPECT_EQ(text.find("TFLOP/s ("), text.rfind("TFLOP/s ("));
}

/// The table, markdown.
void writeTable(const std::string &path) {
  std::FILE *f = std::fopen(path.c_str(), "w");
  if (!f) {
    std::fprintf(stderr, "cannot write %s\n", path.c_str());
    return;
  }
  std::fprintf(f,
               "Estimates of %s, and of %s in the rows that start "
               "\"v2:\" (test/runtime/sim/timing, fa-sim-timing-tests); "
               "not measurements.\n\n",
               kParams.name().c_str(), TimingParams(2).name().c_str());
  std::fprintf(f,
               "| figure | kernel | unit | %s | model | error | limited "
               "by |\n|---|---|---|---:|---:|---:|---|\n",
               "published / hand-worked");
  for (const Row &r : rows())
    std::fprintf(f, "| %s | %s | %s | %.4g (%s) | %.4g | %+.1f%% | %s |\n",
                 r.figure.c_str(), r.kernel.c_str(), r.unit.c_str(), r.expected,
                 r.source.c_str(), r.model, r.errorPct(), r.limit.c_str());
  std::fclose(f);
  std::printf("[timing] table written to %s\n", path.c_str());
}

} // namespace

int main(int argc, char **argv) {
  // --describe-model N: version N's parameters (check_calibration.py
  // compares them with those of the committed calibration).
  if (argc == 3 && !std::strcmp(argv[1], "--describe-model")) {
    std::printf("%s\n",
                TimingParams(unsigned(std::atoi(argv[2]))).describe().c_str());
    return 0;
  }
  ::testing::InitGoogleTest(&argc, argv);
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--table") && i + 1 < argc)
      tablePath() = argv[++i];
    else if (!std::strncmp(argv[i], "--table=", 8))
      tablePath() = argv[i] + 8;
  }
  std::printf("[timing] model %s: %s\n", kParams.name().c_str(),
              kParams.describe().c_str());
  int rc = RUN_ALL_TESTS();
  if (!tablePath().empty())
    writeTable(tablePath());
  return rc;
}
