//===- Timing.cpp - An MI50 timing model over executed instructions -------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The replay of recorded instruction streams on one modelled compute unit
// (Timing.h has the rules, docs/mi50-timing-model.md the calibration):
//   1. each Program instruction gets its static timing class once (unit,
//      issue cycles, result latency, VGPR operands, s_waitcnt fields);
//   2. `resident` copies of a sampled workgroup's waves share the CU; cycle
//      by cycle, SIMD (cycle % 4) takes its turn: its waves, oldest first,
//      issue at most one instruction each and one per unit; a wave that
//      cannot issue records why (its stall);
//   3. when no wave can issue before some later time, the clock jumps there;
//   4. the grid: every workgroup takes the time of the sampled ones at its
//      grid x (interpolated), dispatched in order to the earliest free slot.
//
//===----------------------------------------------------------------------===//

#include "sim/Timing.h"
#include "sim/CodeObject.h"
#include "sim/Profile.h"
#include "sim/Simulator.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <map>
#include <queue>
#include <type_traits>

using namespace fa;
using namespace fa::sim;

TimingParams::TimingParams(unsigned v) {
  version = v == 1 ? 1 : kLatestVersion;
  if (version == 1)
    return; // the member initialisers are version 1's
  // Version 2 (docs/gfx906-timing.md has each value's source).
  ldsBroadcast = 1;
  globalLines = 1;
  ldsBytesPerCycle = 128;
  hbmReadBytesPerSecond = 1024e9;
  hbmWriteBytesPerSecond = 743e9;
  hbmEfficiency = 0.83;
  quarterRateCycles = 16;
  vmemInFlight = 64;
  l2Bytes = 4 * 1024 * 1024;
  l2BytesPerCycle = 1024;
  l2Latency = 300;
  l2ShareYZ = 1;
  l1Bytes = 16 * 1024;
}

std::string TimingParams::name() const {
  return std::string(kModel) + " v" + std::to_string(version);
}

static std::string num(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.4g", x);
  return buf;
}

/// Every parameter with its key, for describe() and apply().
template <typename P, typename F> static void forEachParam(P &p, F f) {
  f("version", p.version);
  f("cus", p.cus);
  f("clock_hz", p.clockHz);
  f("simds_per_cu", p.simdsPerCu);
  f("valu_cycles", p.valuCycles);
  f("dot2_cycles", p.dot2Cycles);
  f("trans_cycles", p.transCycles);
  f("f64_cycles", p.f64Cycles);
  f("quarter_rate_cycles", p.quarterRateCycles);
  f("valu_latency", p.valuLatency);
  f("dot2_latency", p.dot2Latency);
  f("trans_latency", p.transLatency);
  f("lds_bytes_per_cycle", p.ldsBytesPerCycle);
  f("lds_pass_cycles", p.ldsPassCycles);
  f("lds_latency", p.ldsLatency);
  f("smem_latency", p.smemLatency);
  f("lds_broadcast", p.ldsBroadcast);
  f("global_lines", p.globalLines);
  f("hbm_read_bytes_per_s", p.hbmReadBytesPerSecond);
  f("hbm_write_bytes_per_s", p.hbmWriteBytesPerSecond);
  f("hbm_efficiency", p.hbmEfficiency);
  f("global_latency", p.globalLatency);
  f("vmem_issue_cycles", p.vmemIssueCycles);
  f("vmem_in_flight", p.vmemInFlight);
  f("l2_bytes", p.l2Bytes);
  f("l2_bytes_per_cycle", p.l2BytesPerCycle);
  f("l2_latency", p.l2Latency);
  f("l2_share_yz", p.l2ShareYZ);
  f("l1_bytes", p.l1Bytes);
  f("l1_bytes_per_cycle", p.l1BytesPerCycle);
  f("l1_latency", p.l1Latency);
  f("barrier_cycles", p.barrierCycles);
  f("taken_branch_cycles", p.takenBranchCycles);
}

std::string TimingParams::describe() const {
  std::string s;
  forEachParam(*this, [&](const char *k, auto v) {
    s += (s.empty() ? "" : " ") + std::string(k) + "=" + num(double(v));
  });
  return s;
}

/// The keys whose value may be 0 (a v2 mechanism switched off).
static bool mayBeZero(const std::string &key) {
  return key == "lds_broadcast" || key == "global_lines" ||
         key == "vmem_in_flight" ||
         key == "l2_bytes" || key == "l2_share_yz" || key == "l1_bytes";
}

std::string TimingParams::apply(const std::string &assignments) {
  std::string text = assignments;
  std::replace(text.begin(), text.end(), ',', ' ');
  // version=N resets to that calibration before any other key applies.
  for (size_t at = 0; (at = text.find("version=", at)) != std::string::npos;
       ++at) {
    if (at && text[at - 1] != ' ')
      continue;
    size_t end = text.find(' ', at);
    std::string value = text.substr(
        at + 8, end == std::string::npos ? std::string::npos : end - at - 8);
    if (value != "1" && value != "2")
      return "the value of 'version' is not 1 or 2: '" + value + "'";
    *this = TimingParams(unsigned(value[0] - '0'));
  }
  size_t at = 0;
  while (at < text.size()) {
    size_t end = text.find(' ', at);
    if (end == std::string::npos)
      end = text.size();
    std::string item = text.substr(at, end - at);
    at = end + 1;
    if (item.empty())
      continue;
    size_t eq = item.find('=');
    if (eq == std::string::npos)
      return "'" + item + "' is not key=value";
    std::string key = item.substr(0, eq), value = item.substr(eq + 1);
    char *rest = nullptr;
    double v = std::strtod(value.c_str(), &rest);
    if (value.empty() || *rest || !(v > 0 || (v == 0 && mayBeZero(key))) ||
        !std::isfinite(v))
      return "the value of '" + key + "' is not a positive number: '" + value +
             "'";
    bool found = false;
    forEachParam(*this, [&](const char *k, auto &field) {
      if (key == k) {
        using T = std::remove_reference_t<decltype(field)>;
        if (std::is_integral_v<T> && v != std::floor(v))
          return;
        field = T(v);
        found = true;
      }
    });
    if (!found)
      return "unknown timing parameter '" + key + "' (or not an integer)";
  }
  return {};
}

std::vector<uint32_t> TimingRequest::spread(uint32_t gridX, unsigned samples) {
  std::vector<uint32_t> xs;
  if (gridX == 0)
    return xs;
  if (samples < 2 || gridX <= samples) {
    for (uint32_t x = 0; x < gridX && (samples >= 2 || x < 1); ++x)
      xs.push_back(x);
    return xs;
  }
  for (unsigned i = 0; i < samples; ++i)
    xs.push_back(uint32_t(uint64_t(gridX - 1) * i / (samples - 1)));
  xs.erase(std::unique(xs.begin(), xs.end()), xs.end());
  return xs;
}

void TimingRequest::sample(uint32_t gridX, unsigned samples,
                           uint32_t period) {
  periodX = 1;
  if (period > 1 && gridX % period == 0 && samples / period >= 2 &&
      gridX > samples) {
    samplesX.clear();
    for (uint32_t tile : spread(gridX / period, samples / period))
      for (uint32_t s = 0; s < period; ++s)
        samplesX.push_back(tile * period + s);
    periodX = period;
    return;
  }
  samplesX = spread(gridX, samples);
}

bool TimingRequest::records(const uint32_t wg[3]) const {
  if (wg[1] == 0 && wg[2] == 0)
    return std::binary_search(samplesX.begin(), samplesX.end(), wg[0]);
  return probeYZ && !samplesX.empty() &&
         wg[0] == samplesX[samplesX.size() / 2] && wg[1] + wg[2] == 1;
}

//===----------------------------------------------------------------------===//
// Static classes
//===----------------------------------------------------------------------===//

namespace {

enum class Unit : uint8_t {
  Valu,
  Salu,
  Smem,
  Lds,
  Vmem,
  Branch,
  Waitcnt,
  Barrier,
  End,
  Internal, ///< s_nop and the other SOPP that need no unit
};

struct RegRange {
  uint16_t first = 0, count = 0;
};

struct InstTiming {
  Unit unit = Unit::Internal;
  double issue = 4;     ///< VALU cycles
  double latency = 4;   ///< VGPR results, VALU
  bool store = false;   ///< VMEM without a result
  bool scratch = false; ///< VMEM to the private segment (SCRATCH, MUBUF)
  unsigned bytesPerLane = 0;
  unsigned nopCycles = 0;
  uint8_t vmcnt = 0, lgkmcnt = 0;
  uint8_t numSrc = 0, numDst = 0;
  RegRange src[4], dst[2];
};

bool startsWith(const char *s, const char *p) {
  return std::strncmp(s, p, std::strlen(p)) == 0;
}

/// The VALU ops GCN issues at a quarter of the rate besides the
/// transcendentals (TimingParams::quarterRateCycles).
bool isQuarterRate(const char *m) {
  static const char *const names[] = {
      "v_mul_lo_u32",  "v_mul_hi_u32",    "v_mul_lo_i32",    "v_mul_hi_i32",
      "v_mad_u64_u32", "v_mad_i64_i32",   "v_div_scale_f32", "v_div_fmas_f32",
      "v_div_fixup_f32"};
  for (const char *n : names)
    if (!std::strcmp(m, n))
      return true;
  return false;
}

bool isTranscendental(const char *m) {
  static const char *const names[] = {
      "v_exp_", "v_log_", "v_rcp_",      "v_rsq_",       "v_sqrt_",
      "v_sin_", "v_cos_", "v_rcp_iflag", "v_exp_legacy", "v_log_legacy"};
  for (const char *n : names)
    if (startsWith(m, n))
      return true;
  return false;
}

InstTiming classify(const Instruction &in, const TimingParams &p) {
  InstTiming t;
  const OpInfo &info = in.info();
  const char *m = info.mnemonic;
  auto vgprs = [](const Operand &o, RegRange &r) {
    if (o.kind != OperandKind::VGPR)
      return false;
    r.first = o.index;
    r.count = std::max<uint16_t>(o.count, 1);
    return true;
  };
  for (unsigned i = 0; i < in.numSrc && t.numSrc < 4; ++i)
    if (vgprs(in.src[i], t.src[t.numSrc]))
      ++t.numSrc;
  for (unsigned i = 0; i < in.numDst && t.numDst < 2; ++i)
    if (vgprs(in.dst[i], t.dst[t.numDst]))
      ++t.numDst;
  switch (in.enc) {
  case Encoding::SOP1:
  case Encoding::SOP2:
  case Encoding::SOPK:
  case Encoding::SOPC:
    t.unit = Unit::Salu;
    break;
  case Encoding::SMEM:
    t.unit = Unit::Smem;
    break;
  case Encoding::SOPP:
    if (!std::strcmp(m, "s_waitcnt")) {
      t.unit = Unit::Waitcnt;
      t.vmcnt = in.vmcnt;
      t.lgkmcnt = in.lgkmcnt;
    } else if (!std::strcmp(m, "s_barrier")) {
      t.unit = Unit::Barrier;
    } else if (!std::strcmp(m, "s_endpgm")) {
      t.unit = Unit::End;
    } else if (info.flags & OF_Branch) {
      t.unit = Unit::Branch;
    } else {
      t.unit = Unit::Internal;
      if (!std::strcmp(m, "s_nop"))
        t.nopCycles = unsigned(in.simm16 & 0xf) + 1;
    }
    break;
  case Encoding::DS:
    t.unit = Unit::Lds;
    t.bytesPerLane = dsBytesPerLane(in.op);
    if (!t.bytesPerLane)
      t.bytesPerLane = 4; // swizzle, permute: a dword per lane
    break;
  case Encoding::GLOBAL:
  case Encoding::FLAT:
  case Encoding::SCRATCH:
  case Encoding::MUBUF:
    t.unit = Unit::Vmem;
    t.bytesPerLane = memoryBytesPerLane(in);
    if (!t.bytesPerLane)
      t.bytesPerLane = 4;
    t.store = (info.flags & OF_NoDst) != 0;
    // HIP code reaches global memory through GLOBAL/FLAT; its MUBUF and
    // SCRATCH accesses are the private segment (register arrays in scratch).
    t.scratch = in.enc == Encoding::SCRATCH || in.enc == Encoding::MUBUF;
    break;
  default:
    t.unit = Unit::Valu;
    t.issue = p.valuCycles;
    t.latency = p.valuLatency;
    if (!std::strcmp(m, "v_dot2_f32_f16")) {
      t.issue = p.dot2Cycles;
      t.latency = p.dot2Latency;
    } else if (isTranscendental(m)) {
      t.issue = p.transCycles;
      t.latency = p.transLatency;
    } else if (isQuarterRate(m)) {
      t.issue = p.quarterRateCycles;
      t.latency = std::max(p.valuLatency, p.quarterRateCycles);
    } else if (std::strstr(m, "_f64")) {
      t.issue = p.f64Cycles;
      t.latency = p.f64Cycles;
    }
    break;
  }
  return t;
}

//===----------------------------------------------------------------------===//
// The compute unit
//===----------------------------------------------------------------------===//

enum Reason : uint8_t {
  RNone,
  RLgkm,
  RVm,
  RBarrier,
  RDependency,
  RValuBusy,
  RBranch
};

struct ModelWave {
  const std::vector<TraceEntry> *trace = nullptr;
  size_t at = 0;
  unsigned simd = 0;
  unsigned group = 0; ///< the copy (resident workgroup) it belongs to
  double readyAt = 0; ///< earliest cycle it may issue
  bool done = false, atBarrier = false;
  double arrived = 0;
  std::vector<double> vgprReady;
  std::vector<double> vm;   ///< completion times of outstanding vmcnt ops
  std::vector<double> lgkm; ///< of outstanding lgkmcnt ops
  double lastLds = 0, lastVm = 0;
};

/// The time at which at most `n` of `q`'s operations are outstanding; drops
/// those completed by then.
double waitFor(std::vector<double> &q, unsigned n) {
  if (q.size() <= n)
    return 0;
  std::sort(q.begin(), q.end());
  double t = q[q.size() - n - 1];
  q.erase(q.begin(), q.begin() + long(q.size() - n));
  return t;
}

struct CuReplay {
  const std::vector<InstTiming> &classes;
  const TimingParams &p;
  double hbmReadPerCycle = 0, hbmWritePerCycle = 0;
  /// v2: the CU's share of the L2 bandwidth; the share of the loads'
  /// bytes that hit in L2.
  double l2PerCycle = 0, l2Hit = 0;
  /// v2: the launch's scratch fits in L2: private accesses hit there.
  bool scratchInL2 = false;
  /// v2: the share of private loads that hit in the CU's vector L1.
  double scratchL1Hit = 0;

  SampleTiming run(const WorkgroupTrace &wg, unsigned copies);
};

SampleTiming CuReplay::run(const WorkgroupTrace &wg, unsigned copies) {
  SampleTiming out;
  out.resident = copies;
  const unsigned W = unsigned(wg.waves.size());
  std::vector<ModelWave> waves(size_t(W) * copies);
  for (unsigned c = 0; c < copies; ++c)
    for (unsigned i = 0; i < W; ++i) {
      ModelWave &w = waves[c * W + i];
      w.trace = &wg.waves[i];
      w.simd = (c * W + i) % p.simdsPerCu;
      w.group = c;
      w.vgprReady.assign(256, 0);
      w.done = w.trace->empty();
    }
  for (unsigned i = 0; i < W; ++i)
    out.instructions += wg.waves[i].size();
  std::vector<double> valuFree(p.simdsPerCu, 0);
  double ldsFree = 0, vmemFree = 0;
  // v2: completion times of the CU's vector memory ops in flight.
  std::priority_queue<double, std::vector<double>, std::greater<double>>
      inFlight;
  const double turn = double(p.simdsPerCu);
  // Waves of each SIMD, oldest first.
  std::vector<std::vector<ModelWave *>> bySimd(p.simdsPerCu);
  for (ModelWave &w : waves)
    bySimd[w.simd].push_back(&w);
  std::vector<size_t> rr(p.simdsPerCu, 0);
  unsigned left = 0;
  for (ModelWave &w : waves)
    left += !w.done;

  // A wave blocked from `from` to `to` for `why`.
  auto stall = [&](Reason why, double from, double to) {
    if (to <= from)
      return;
    double d = to - from;
    switch (why) {
    case RLgkm:
      out.stalls.waitLgkm += d;
      break;
    case RVm:
      out.stalls.waitVm += d;
      break;
    case RBarrier:
      out.stalls.barrier += d;
      break;
    case RDependency:
      out.stalls.dependency += d;
      break;
    case RValuBusy:
      out.stalls.valuBusy += d;
      break;
    case RBranch:
      out.stalls.branch += d;
      break;
    case RNone:
      break;
    }
  };
  // The barrier of copy c: released once every live wave arrived.
  auto tryRelease = [&](unsigned group, double now) {
    double last = 0;
    for (ModelWave &w : waves) {
      if (w.group != group || w.done)
        continue;
      if (!w.atBarrier)
        return;
      last = std::max(last, w.arrived);
    }
    for (ModelWave &w : waves)
      if (w.group == group && !w.done && w.atBarrier) {
        w.atBarrier = false;
        w.readyAt = std::max(now, last + p.barrierCycles);
        stall(RBarrier, w.arrived, w.readyAt);
      }
  };

  double t = 0, end = 0;
  double lastIssue = 0; // of any wave, to detect idle rounds
  while (left) {
    const unsigned s = unsigned(uint64_t(t) % p.simdsPerCu);
    unsigned usedUnits = 0;
    // Round robin among the SIMD's waves, from the one after the last that
    // issued (strict oldest-first would starve the youngest of identical
    // waves and leave it a tail to run alone).
    const std::vector<ModelWave *> &mine = bySimd[s];
    const size_t n = mine.size();
    size_t firstIssuer = SIZE_MAX;
    for (size_t j = 0; j < n; ++j) {
      const size_t slot = (rr[s] + j) % n;
      ModelWave &w = *mine[slot];
      if (w.done || w.atBarrier || w.readyAt > t)
        continue;
      const TraceEntry &e = (*w.trace)[w.at];
      const InstTiming &k = classes[e.index];
      const unsigned unitBit = 1u << unsigned(k.unit);
      const bool needsUnit = k.unit == Unit::Valu || k.unit == Unit::Salu ||
                             k.unit == Unit::Smem || k.unit == Unit::Lds ||
                             k.unit == Unit::Vmem || k.unit == Unit::Branch;
      // Salu and Smem share the scalar unit.
      const unsigned bit =
          k.unit == Unit::Smem ? (1u << unsigned(Unit::Salu)) : unitBit;
      if (needsUnit && (usedUnits & bit))
        continue;
      double ready = t;
      Reason why = RNone;
      if (k.unit == Unit::Waitcnt) {
        double a = waitFor(w.vm, k.vmcnt);
        double b = waitFor(w.lgkm, k.lgkmcnt);
        if (a > ready) {
          ready = a;
          why = RVm;
        }
        if (b > ready) {
          ready = b;
          why = RLgkm;
        }
        if (ready > t) {
          // Satisfied at `ready`: the wave issues past it then.
          stall(why, t, ready);
          w.readyAt = ready;
          w.at++;
          // The wait itself is done; the wave resumes at `ready`.
          if (w.at >= w.trace->size()) {
            w.done = true;
            --left;
            end = std::max(end, ready);
          }
          continue;
        }
      }
      if (k.unit == Unit::Valu || k.unit == Unit::Lds || k.unit == Unit::Vmem) {
        for (unsigned i = 0; i < k.numSrc; ++i)
          for (unsigned r = 0; r < k.src[i].count; ++r) {
            unsigned v = k.src[i].first + r;
            if (v < 256 && w.vgprReady[v] > ready) {
              ready = w.vgprReady[v];
              why = RDependency;
            }
          }
      }
      // v2: a vector memory op waits for a free request slot of the CU.
      if (k.unit == Unit::Vmem && p.vmemInFlight) {
        while (!inFlight.empty() && inFlight.top() <= t)
          inFlight.pop();
        if (inFlight.size() >= p.vmemInFlight && inFlight.top() > ready) {
          ready = inFlight.top();
          why = RVm;
        }
      }
      // The VALU takes an instruction in a turn before which it frees: a
      // 16/3-cycle v_dot2 issues 3 per 16 cycles.
      if (k.unit == Unit::Valu && valuFree[s] >= t + turn - 1e-9 &&
          valuFree[s] - turn + 1e-6 > ready) {
        ready = valuFree[s] - turn + 1e-6;
        why = RValuBusy;
      }
      if (ready > t) {
        stall(why, t, ready);
        w.readyAt = ready;
        continue;
      }
      // Issue at t.
      usedUnits |= needsUnit ? bit : 0;
      if (firstIssuer == SIZE_MAX)
        firstIssuer = slot;
      lastIssue = t;
      double next = t + turn;
      switch (k.unit) {
      case Unit::Valu: {
        double start = std::max(valuFree[s], t);
        valuFree[s] = start + k.issue;
        out.busy.valu += k.issue;
        for (unsigned i = 0; i < k.numDst; ++i)
          for (unsigned r = 0; r < k.dst[i].count; ++r) {
            unsigned v = k.dst[i].first + r;
            if (v < 256)
              w.vgprReady[v] = t + k.latency;
          }
        break;
      }
      case Unit::Salu:
        out.busy.salu += turn;
        break;
      case Unit::Smem:
        out.busy.salu += turn;
        w.lgkm.push_back(t + p.smemLatency);
        break;
      case Unit::Lds: {
        // v2: lanes that read one dword share its bytes (broadcast).
        double bytes = p.ldsBroadcast && e.extra
                           ? 4.0 * e.extra
                           : double(e.lanes) * k.bytesPerLane;
        double service = std::max(bytes / p.ldsBytesPerCycle,
                                  double(e.passes) * p.ldsPassCycles);
        double start = std::max(t, ldsFree);
        ldsFree = start + service;
        out.busy.lds += service;
        double done = std::max(ldsFree + p.ldsLatency, w.lastLds);
        w.lastLds = done;
        w.lgkm.push_back(done);
        break;
      }
      case Unit::Vmem: {
        // v2: lanes that read one line share it: at most the distinct
        // lines the lanes touch move (64 bytes each); a line only partly
        // used is charged the lanes' bytes, its rest left to the other
        // instructions that read it (as v1 charges every access).
        double bytes = double(e.lanes) * k.bytesPerLane;
        if (p.globalLines && e.lines && !k.scratch)
          bytes = std::min(bytes, 64.0 * e.lines);
        double xfer = bytes / (k.store ? hbmWritePerCycle : hbmReadPerCycle);
        double latency = p.globalLatency;
        if (k.scratch && scratchInL2) {
          // v2: the private segment stays in L2 (write-back): L2 bandwidth
          // and latency, no HBM.
          xfer = bytes / l2PerCycle;
          latency = p.l2Latency;
        } else if (!k.store && !k.scratch && l2PerCycle > 0) {
          // v2: hits cost L2 bandwidth only, misses HBM's too. Scratch that
          // does not fit in L2 goes to HBM (v1's rule), not at K/V's rate.
          xfer = std::max(xfer * (1 - l2Hit), bytes / l2PerCycle);
          latency = l2Hit * p.l2Latency + (1 - l2Hit) * p.globalLatency;
        }
        if (k.scratch && !k.store && scratchL1Hit > 0) {
          // v2: private loads that hit in the vector L1 take its bandwidth
          // and latency; the others go on as above.
          const double h = scratchL1Hit;
          xfer = h * bytes / p.l1BytesPerCycle + (1 - h) * xfer;
          latency = h * p.l1Latency + (1 - h) * latency;
        }
        double start = std::max(t, vmemFree);
        double service = std::max(p.vmemIssueCycles, xfer);
        vmemFree = start + service;
        out.busy.vmem += service;
        double done = std::max(vmemFree + latency, w.lastVm);
        if (p.vmemInFlight)
          inFlight.push(done);
        w.lastVm = done;
        w.vm.push_back(done);
        break;
      }
      case Unit::Branch: {
        bool taken = w.at + 1 < w.trace->size() &&
                     (*w.trace)[w.at + 1].index != e.index + 1;
        if (taken) {
          next += p.takenBranchCycles;
          stall(RBranch, t + turn, next);
        }
        break;
      }
      case Unit::Barrier:
        w.atBarrier = true;
        w.arrived = t;
        break;
      case Unit::Internal:
        next = std::max(next, t + double(k.nopCycles));
        break;
      case Unit::Waitcnt:
      case Unit::End:
        break;
      }
      w.at++;
      w.readyAt = next;
      if (k.unit == Unit::End || w.at >= w.trace->size()) {
        w.done = true;
        w.atBarrier = false;
        --left;
        end = std::max(end, t + turn);
        tryRelease(w.group, t);
        continue;
      }
      if (k.unit == Unit::Barrier)
        tryRelease(w.group, t);
    }
    if (firstIssuer != SIZE_MAX && n)
      rr[s] = (firstIssuer + 1) % n;
    // Next turn; after a whole round without an issue, jump to the
    // earliest time a wave may issue.
    t += 1;
    if (t - lastIssue > turn) {
      double soonest = std::numeric_limits<double>::infinity();
      for (ModelWave &w : waves)
        if (!w.done && !w.atBarrier)
          soonest = std::min(soonest, w.readyAt);
      if (!std::isfinite(soonest))
        break; // every live wave waits at a barrier: cannot happen
      if (soonest > t) {
        t = std::ceil(soonest);
        lastIssue = t - 1;
      }
    }
  }
  out.cycles = std::max(end, t);
  return out;
}

} // namespace

/// The (instruction, first-lane line) keys of a trace's loads (v2's L2
/// model: the data a load shares with other workgroups), sorted.
static std::vector<uint64_t> loadKeys(const std::vector<InstTiming> &classes,
                                      const WorkgroupTrace &t) {
  std::vector<uint64_t> keys;
  for (const auto &wave : t.waves)
    for (const TraceEntry &e : wave) {
      const InstTiming &k = classes[e.index];
      if (k.unit == Unit::Vmem && !k.store && !k.scratch && e.extra)
        keys.push_back(uint64_t(e.index) << 32 | e.extra);
    }
  std::sort(keys.begin(), keys.end());
  return keys;
}

/// v2's L2 model: the share of a launch's load bytes that hit in L2.
/// A load is shared along x when another sample (workgroups at y = z = 0
/// that differ in x) issued the same instruction at the same first-lane
/// line; along y or z when the probe workgroup one step along y or z
/// (TimingRequest::probeYZ, at the middle sample's x) loads the lines of
/// that instruction that the sample at its x loads (more than half of
/// them). A line shared along a set of dimensions is read by the product
/// of their grid sizes, `m` workgroups; of those, the ones resident
/// together (dispatched x fastest into `slots`) miss once and hit
/// otherwise; a later group of them hits only if the shared footprint in
/// flight fits in `l2Bytes`.
static double l2HitRate(const std::vector<InstTiming> &classes,
                        const std::vector<WorkgroupTrace> &samples,
                        const std::vector<WorkgroupTrace> &probes,
                        const uint32_t grid[3], uint64_t slots,
                        double l2Bytes) {
  if (samples.empty())
    return 0;
  std::vector<std::vector<uint64_t>> keys;
  for (const WorkgroupTrace &t : samples)
    keys.push_back(loadKeys(classes, t));
  // Per instruction, whether the probe along y (d = 1) or z (d = 2) loads
  // the lines its x's sample loads.
  std::map<uint32_t, std::array<double, 2>> along[3];
  for (const WorkgroupTrace &probe : probes) {
    const int d = probe.wg[1] ? 1 : 2;
    const std::vector<uint64_t> theirs = loadKeys(classes, probe);
    for (size_t s = 0; s < samples.size(); ++s) {
      if (samples[s].wg[0] != probe.wg[0])
        continue;
      for (uint64_t key : keys[s]) {
        auto &n = along[d][uint32_t(key >> 32)];
        n[0] += 1;
        n[1] += std::binary_search(theirs.begin(), theirs.end(), key);
      }
    }
  }
  auto sharedAlong = [&](int d, uint32_t index) {
    auto it = along[d].find(index);
    return it != along[d].end() && it->second[1] * 2 > it->second[0];
  };
  // Bytes per sharing class (bit d: shared along dimension d).
  double bytes[8] = {}, total = 0;
  for (size_t s = 0; s < samples.size(); ++s)
    for (const auto &wave : samples[s].waves)
      for (const TraceEntry &e : wave) {
        const InstTiming &k = classes[e.index];
        if (k.unit != Unit::Vmem || k.store || k.scratch)
          continue;
        const double b = double(e.lanes) * k.bytesPerLane;
        total += b;
        if (!e.extra)
          continue;
        const uint64_t key = uint64_t(e.index) << 32 | e.extra;
        unsigned c = 0;
        for (size_t o = 0; o < samples.size() && grid[0] > 1; ++o)
          if (o != s &&
              std::binary_search(keys[o].begin(), keys[o].end(), key)) {
            c |= 1;
            break;
          }
        c |= sharedAlong(1, e.index) && grid[1] > 1 ? 2 : 0;
        c |= sharedAlong(2, e.index) && grid[2] > 1 ? 4 : 0;
        bytes[c] += b;
      }
  if (total <= 0)
    return 0;
  const double X = grid[0], Y = grid[1], Z = grid[2], S = double(slots);
  double m[8], together[8], footprint = 0;
  for (unsigned c = 1; c < 8; ++c) {
    m[c] = (c & 1 ? X : 1) * (c & 2 ? Y : 1) * (c & 4 ? Z : 1);
    // Of the m readers, those within one window of `slots` workgroups.
    together[c] = (c & 1 ? std::min(X, std::max(1.0, S)) : 1) *
                  (c & 2 ? std::clamp(std::floor(S / X), 1.0, Y) : 1) *
                  (c & 4 ? std::clamp(std::floor(S / (X * Y)), 1.0, Z) : 1);
    // Distinct shared bytes in flight: one copy per `together` readers.
    footprint +=
        bytes[c] / double(samples.size()) * std::max(1.0, S / together[c]);
  }
  const double fits = footprint > 0 ? std::min(1.0, l2Bytes / footprint) : 1;
  double hits = 0;
  for (unsigned c = 1; c < 8; ++c) {
    if (bytes[c] <= 0)
      continue;
    const double groups = std::ceil(m[c] / together[c]);
    hits += bytes[c] * ((m[c] - groups) + (groups - 1) * fits) / m[c];
  }
  return hits / total;
}

//===----------------------------------------------------------------------===//
// The launch
//===----------------------------------------------------------------------===//

TimingEstimate
fa::sim::estimateTiming(const Program &program, const KernelDescriptor &kd,
                        const uint32_t grid[3], const uint32_t block[3],
                        uint32_t ldsBytes, std::vector<WorkgroupTrace> traces,
                        const TimingParams &p, uint32_t periodX) {
  TimingEstimate est;
  est.model = p.name();
  est.params = p.describe();
  for (int i = 0; i < 3; ++i)
    est.grid[i] = grid[i];
  const uint32_t threads = block[0] * block[1] * block[2];
  est.wavesPerWorkgroup = std::max(1u, (threads + 63) / 64);
  const uint64_t total = uint64_t(grid[0]) * grid[1] * grid[2];

  // Workgroups per CU.
  SimProfile occ;
  setOccupancy(occ, kd.vgprCount(), kd.sgprCount(), ldsBytes, threads);
  unsigned byWaves =
      std::min(occ.byVgpr, occ.bySgpr) * p.simdsPerCu / est.wavesPerWorkgroup;
  byWaves = std::min(byWaves, p.maxWavesPerCu / est.wavesPerWorkgroup);
  unsigned byLds = ldsBytes ? unsigned(65536 / ldsBytes) : p.maxWorkgroupsPerCu;
  unsigned k = std::min({byWaves, byLds, p.maxWorkgroupsPerCu});
  est.residentLimit = k == byLds && byLds < byWaves ? "LDS"
                      : k == p.maxWorkgroupsPerCu && k < byWaves
                          ? "the workgroup limit"
                          : (occ.byVgpr <= occ.bySgpr ? "VGPRs" : "SGPRs");
  k = std::max(1u, k);
  est.activeCus = unsigned(std::min<uint64_t>(p.cus, total));
  const uint64_t perCu =
      (total + est.activeCus - 1) / std::max(1u, est.activeCus);
  if (perCu < k) {
    k = unsigned(perCu);
    est.residentLimit = "the grid";
  }
  est.workgroupsPerCu = k;

  // Probe workgroups (y or z above 0, TimingRequest::probeYZ) only tell the
  // L2 model what is shared along y and z; the samples are replayed.
  auto probeAt = std::stable_partition(
      traces.begin(), traces.end(),
      [](const WorkgroupTrace &t) { return t.wg[1] == 0 && t.wg[2] == 0; });
  std::vector<WorkgroupTrace> probes(std::make_move_iterator(probeAt),
                                     std::make_move_iterator(traces.end()));
  traces.erase(probeAt, traces.end());
  if (!p.l2ShareYZ)
    probes.clear();

  std::vector<InstTiming> classes;
  classes.reserve(program.insts.size());
  for (const Instruction &in : program.insts)
    classes.push_back(classify(in, p));
  CuReplay cu{classes, p};
  cu.hbmReadPerCycle =
      p.hbmEfficiency * p.hbmReadBytesPerSecond / est.activeCus / p.clockHz;
  cu.hbmWritePerCycle =
      p.hbmEfficiency * p.hbmWriteBytesPerSecond / est.activeCus / p.clockHz;
  // The private segments of one CU's resident waves: bytes a lane x 64
  // lanes x waves.
  const double scratchPerCu =
      double(kd.privateSegmentFixedSize) * 64 * est.wavesPerWorkgroup * k;
  if (p.l2Bytes > 0) {
    cu.l2PerCycle = p.l2BytesPerCycle / est.activeCus;
    cu.l2Hit = l2HitRate(classes, traces, probes, grid,
                         uint64_t(est.activeCus) * k, p.l2Bytes);
    est.l2Hit = cu.l2Hit;
    // Scratch of every resident wave of the chip.
    cu.scratchInL2 = scratchPerCu * est.activeCus <= p.l2Bytes;
  }
  // v2: the share of one CU's private segments its vector L1 holds.
  if (p.l1Bytes > 0 && scratchPerCu > 0)
    cu.scratchL1Hit = std::min(1.0, p.l1Bytes / scratchPerCu);

  std::sort(traces.begin(), traces.end(),
            [](const WorkgroupTrace &a, const WorkgroupTrace &b) {
              return a.wg[0] < b.wg[0];
            });
  double busyValu = 0, busyLds = 0, busyVmem = 0, replayCycles = 0;
  for (const WorkgroupTrace &tr : traces) {
    SampleTiming s = cu.run(tr, k);
    s.x = tr.wg[0];
    busyValu += s.busy.valu;
    busyLds += s.busy.lds;
    busyVmem += s.busy.vmem;
    replayCycles += s.cycles;
    est.samples.push_back(s);
  }
  if (replayCycles > 0) {
    est.valuUse = busyValu / (replayCycles * p.simdsPerCu);
    est.ldsUse = busyLds / replayCycles;
    est.vmemUse = busyVmem / replayCycles;
  }
  double top = std::max({est.valuUse, est.ldsUse, est.vmemUse});
  est.limitedBy = top < 0.7            ? "latency"
                  : top == est.valuUse ? "VALU"
                  : top == est.ldsUse  ? "LDS"
                                       : "HBM";
  if (est.samples.empty())
    return est;

  // A workgroup's time: the samples' at its grid x, interpolated (with a
  // period, between the samples of its split: x mod periodX).
  std::vector<std::vector<const SampleTiming *>> bySplit(periodX ? periodX
                                                                 : 1);
  for (const SampleTiming &s : est.samples)
    bySplit[s.x % bySplit.size()].push_back(&s);
  for (const auto &v : bySplit)
    if (v.empty()) { // samples not taken per split: along x only
      bySplit.assign(1, {});
      for (const SampleTiming &s : est.samples)
        bySplit[0].push_back(&s);
      break;
    }
  est.periodX = uint32_t(bySplit.size());
  auto timeAt = [&](uint32_t x) {
    const auto &S = bySplit[x % bySplit.size()];
    if (x <= S.front()->x)
      return S.front()->cycles;
    if (x >= S.back()->x)
      return S.back()->cycles;
    size_t hi = 1;
    while (S[hi]->x < x)
      ++hi;
    const SampleTiming &a = *S[hi - 1], &b = *S[hi];
    double f = double(x - a.x) / double(b.x - a.x);
    return a.cycles + f * (b.cycles - a.cycles);
  };
  // In dispatch order to the earliest free of activeCus * k slots.
  std::priority_queue<double, std::vector<double>, std::greater<double>> slots;
  for (uint64_t i = 0; i < uint64_t(est.activeCus) * k; ++i)
    slots.push(0);
  double makespan = 0;
  for (uint64_t i = 0; i < total; ++i) {
    double start = slots.top();
    slots.pop();
    double finish = start + timeAt(uint32_t(i % grid[0]));
    makespan = std::max(makespan, finish);
    slots.push(finish);
  }
  est.cycles = makespan;
  est.seconds = makespan / p.clockHz;
  return est;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

static std::string pct(double x) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "%.0f%%", 100 * x);
  return buf;
}

std::string TimingEstimate::text() const {
  std::string o = "MI50 timing: an ESTIMATE of the model " + model +
                  " (docs/gfx906-timing.md), not a measurement\n";
  o += "  kernel " + kernel + ", grid " + std::to_string(grid[0]) + "x" +
       std::to_string(grid[1]) + "x" + std::to_string(grid[2]) + ", " +
       std::to_string(wavesPerWorkgroup) + " waves per workgroup, " +
       std::to_string(workgroupsPerCu) + " workgroups per CU (limited by " +
       residentLimit + "), " + std::to_string(activeCus) + " CUs with work" +
       (periodX > 1 ? "; sampled per K/V split (grid x = tile * " +
                          std::to_string(periodX) + " + split)"
                    : "") +
       "\n";
  char buf[160];
  std::snprintf(buf, sizeof(buf), "  time %.2f us (%.0f cycles at %.0f MHz)",
                seconds * 1e6, cycles, cycles / seconds / 1e6);
  o += buf;
  if (flops > 0 && seconds > 0) {
    double tf = flops / seconds / 1e12;
    std::snprintf(buf, sizeof(buf),
                  "; %.2f TFLOP/s (%.0f%% of the 26.8 TFLOP/s packed-fp16 "
                  "peak)",
                  tf, 100 * tf / 26.8);
    o += buf;
  }
  o += "\n  units (busy share over the replays): VALU " + pct(valuUse) +
       ", LDS " + pct(ldsUse) + ", HBM " + pct(vmemUse) + ": limited by " +
       limitedBy +
       (l2Hit > 0 ? "; L2 hits " + pct(l2Hit) + " of the loads" : "") + "\n";
  for (const SampleTiming &s : samples) {
    double waves = double(s.resident) * wavesPerWorkgroup * s.cycles;
    std::snprintf(
        buf, sizeof(buf),
        "  sample x=%u: %u resident, %.0f cycles, %llu wave-instructions;"
        " stalls per wave",
        s.x, s.resident, s.cycles, (unsigned long long)s.instructions);
    o += buf;
    o += ": lgkmcnt " + pct(s.stalls.waitLgkm / waves) + ", vmcnt " +
         pct(s.stalls.waitVm / waves) + ", barrier " +
         pct(s.stalls.barrier / waves) + ", dependency " +
         pct(s.stalls.dependency / waves) + ", VALU busy " +
         pct(s.stalls.valuBusy / waves) + ", branch " +
         pct(s.stalls.branch / waves) + "\n";
  }
  o += "  parameters: " + params + "\n";
  return o;
}

static std::string jnum(double x) {
  if (!std::isfinite(x))
    return "null";
  char buf[40];
  std::snprintf(buf, sizeof(buf), "%.9g", x);
  return buf;
}

std::string TimingEstimate::json() const {
  std::string o =
      "{\"estimate\": true, \"model\": \"" + model + "\", \"params\": \"" +
      params + "\", \"kernel\": \"" + kernel + "\", \"grid\": [" +
      std::to_string(grid[0]) + ", " + std::to_string(grid[1]) + ", " +
      std::to_string(grid[2]) + "], \"period_x\": " + std::to_string(periodX) +
      ", \"waves_per_workgroup\": " + std::to_string(wavesPerWorkgroup) +
      ", \"workgroups_per_cu\": " + std::to_string(workgroupsPerCu) +
      ", \"resident_limit\": \"" + residentLimit +
      "\", \"active_cus\": " + std::to_string(activeCus) +
      ", \"cycles\": " + jnum(cycles) + ", \"seconds\": " + jnum(seconds) +
      ", \"flops\": " + jnum(flops) + ", \"tflops\": " +
      jnum(flops > 0 && seconds > 0 ? flops / seconds / 1e12 : 0) +
      ", \"valu_use\": " + jnum(valuUse) + ", \"lds_use\": " + jnum(ldsUse) +
      ", \"hbm_use\": " + jnum(vmemUse) + ", \"l2_hit\": " + jnum(l2Hit) +
      ", \"limited_by\": \"" + limitedBy + "\", \"samples\": [";
  for (size_t i = 0; i < samples.size(); ++i) {
    const SampleTiming &s = samples[i];
    o += std::string(i ? ", " : "") + "{\"x\": " + std::to_string(s.x) +
         ", \"resident\": " + std::to_string(s.resident) +
         ", \"cycles\": " + jnum(s.cycles) +
         ", \"instructions\": " + std::to_string(s.instructions) +
         ", \"busy\": {\"valu\": " + jnum(s.busy.valu) +
         ", \"lds\": " + jnum(s.busy.lds) + ", \"hbm\": " + jnum(s.busy.vmem) +
         ", \"salu\": " + jnum(s.busy.salu) +
         "}, \"stalls\": {\"lgkmcnt\": " + jnum(s.stalls.waitLgkm) +
         ", \"vmcnt\": " + jnum(s.stalls.waitVm) +
         ", \"barrier\": " + jnum(s.stalls.barrier) +
         ", \"dependency\": " + jnum(s.stalls.dependency) +
         ", \"valu_busy\": " + jnum(s.stalls.valuBusy) +
         ", \"branch\": " + jnum(s.stalls.branch) + "}}";
  }
  o += "]}";
  return o;
}

namespace {
/// What several launches of one call add up to.
struct EstimateTotal {
  double cycles = 0, seconds = 0, valu = 0, lds = 0, hbm = 0;
  std::string limitedBy, limitedKernel; ///< of the longest launch
  explicit EstimateTotal(const std::vector<TimingEstimate> &parts) {
    double longest = -1;
    for (const TimingEstimate &e : parts) {
      cycles += e.cycles;
      seconds += e.seconds;
      valu += e.valuUse * e.seconds;
      lds += e.ldsUse * e.seconds;
      hbm += e.vmemUse * e.seconds;
      if (e.seconds > longest) {
        longest = e.seconds;
        limitedBy = e.limitedBy;
        limitedKernel = e.kernel;
      }
    }
    if (seconds > 0) {
      valu /= seconds;
      lds /= seconds;
      hbm /= seconds;
    }
  }
};
} // namespace

std::string fa::sim::estimatesText(const std::vector<TimingEstimate> &parts,
                                   double flops) {
  if (parts.empty())
    return {};
  if (parts.size() == 1) {
    TimingEstimate e = parts.front();
    e.flops = flops;
    return e.text();
  }
  std::string o;
  for (size_t i = 0; i < parts.size(); ++i) {
    TimingEstimate e = parts[i];
    e.flops = 0; // the call's FLOPs belong to the total
    o += "launch " + std::to_string(i + 1) + " of " +
         std::to_string(parts.size()) + ": " + e.text();
  }
  EstimateTotal t(parts);
  char buf[160];
  std::snprintf(buf, sizeof(buf), "total of the %zu launches: %.2f us",
                parts.size(), t.seconds * 1e6);
  o += buf;
  if (flops > 0 && t.seconds > 0) {
    double tf = flops / t.seconds / 1e12;
    std::snprintf(buf, sizeof(buf),
                  "; %.2f TFLOP/s (%.0f%% of the 26.8 TFLOP/s packed-fp16 "
                  "peak)",
                  tf, 100 * tf / 26.8);
    o += buf;
  }
  o += "; limited by " + t.limitedBy + " (in kernel " + t.limitedKernel + ")\n";
  return o;
}

std::string fa::sim::estimatesJson(const std::vector<TimingEstimate> &parts,
                                   double flops) {
  if (parts.empty())
    return {};
  if (parts.size() == 1) {
    TimingEstimate e = parts.front();
    e.flops = flops;
    return e.json();
  }
  EstimateTotal t(parts);
  const TimingEstimate &first = parts.front();
  std::string o =
      "{\"estimate\": true, \"model\": \"" + first.model +
      "\", \"params\": \"" + first.params + "\", \"kernel\": \"" +
      first.kernel + "\", \"cycles\": " + jnum(t.cycles) +
      ", \"seconds\": " + jnum(t.seconds) + ", \"flops\": " + jnum(flops) +
      ", \"tflops\": " +
      jnum(flops > 0 && t.seconds > 0 ? flops / t.seconds / 1e12 : 0) +
      ", \"valu_use\": " + jnum(t.valu) + ", \"lds_use\": " + jnum(t.lds) +
      ", \"hbm_use\": " + jnum(t.hbm) + ", \"limited_by\": \"" + t.limitedBy +
      "\", \"limited_by_kernel\": \"" + t.limitedKernel + "\", \"launches\": [";
  for (size_t i = 0; i < parts.size(); ++i)
    o += (i ? ", " : "") + parts[i].json();
  return o + "]}";
}
