//===- Simulator.cpp - Workgroups, waves and the dispatch loop ------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements Program (decoding once), the per-wave dispatch loop,
// the workgroup runner and the launch:
//   1. a workgroup's waves get the initial register state the descriptor's
//      enable bits ask for (AMDGPUUsage "Initial Kernel Execution State":
//      user SGPRs in order private segment buffer, dispatch ptr, queue ptr,
//      kernarg ptr, dispatch id, flat scratch init, private segment size;
//      then at USER_SGPR_COUNT the workgroup IDs X/Y/Z, workgroup info and
//      the scratch wave offset; v0/v1/v2 the work-item IDs, unpacked on
//      gfx906), EXEC set to the lanes that hold work-items;
//   2. each wave runs until s_barrier, s_endpgm, an error or its instruction
//      budget; once every wave waits at the barrier all are released; a
//      wave that ended while others wait is a divergence error (hardware
//      would release the others; fa's kernels never do this, so it is
//      reported as the bug it almost always is);
//   3. workgroups are taken from an atomic counter by worker threads; the
//      first error stops the launch and the lowest failing workgroup's error
//      is the one returned, so a failing launch reports the same thing each
//      time.
//
//===----------------------------------------------------------------------===//

#include "sim/Simulator.h"
#include "sim/LdsRaces.h"
#include "sim/Profile.h"
#include "sim/Timing.h"
#ifdef FA_SIM_TRACE
#include "sim/Disassembler.h"
#endif

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>

using namespace fa;
using namespace fa::sim;

static std::string hex(uint64_t x) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)x);
  return buf;
}

std::string fa::sim::where(const Wave &w, const Instruction &in,
                           const ExecContext &c) {
  const char *name = in.op == Op::Invalid ? "<undecoded>" : in.info().mnemonic;
  return std::string(name) + " at pc " + hex(in.pc) + " (wave " +
         std::to_string(w.id) + " of workgroup (" + std::to_string(c.wg[0]) +
         "," + std::to_string(c.wg[1]) + "," + std::to_string(c.wg[2]) +
         ") of kernel '" + c.kernel + "')";
}

bool ExecContext::fail(const Wave &w, const Instruction &in, ErrorCode code,
                       const std::string &what) {
  if (error.ok())
    error = Status::error(code, what + ": " + where(w, in, *this))
                .withKernel(kernel);
  return false;
}

void LdsRaceTracker::report(unsigned wave, uint32_t pc, uint32_t byte,
                            const char *verb, unsigned other, uint32_t otherPc,
                            const char *otherVerb, const char *mnemonic) {
  ++total;
  if (reports.size() >= maxReports)
    return;
  reports.push_back(
      "workgroup (" + std::to_string(wg[0]) + "," + std::to_string(wg[1]) +
      "," + std::to_string(wg[2]) + ") barrier epoch " +
      std::to_string(epoch - startEpoch) + ": wave " + std::to_string(wave) +
      " (" + mnemonic + " at pc " + hex(pc) + ") " + verb + " lds byte " +
      std::to_string(byte) + " after wave " + std::to_string(other) + " (pc " +
      hex(otherPc) + ") " + otherVerb +
      " it, with no s_barrier "
      "between");
}

//===----------------------------------------------------------------------===//
// Program
//===----------------------------------------------------------------------===//

Program Program::decode(const CodeObject &co) {
  Program p;
  p.base = co.codeBegin;
  uint64_t size = co.codeEnd - co.codeBegin;
  p.wordIndex.assign(size / 4, -1);
  const ExecFn *table = execTable();
  for (uint64_t off = 0; off + 4 <= size;) {
    uint64_t pc = co.codeBegin + off;
    Expected<Instruction> in =
        sim::decode(co.image.data() + pc, size - off, uint32_t(pc));
    p.wordIndex[off / 4] = int64_t(p.insts.size());
    if (!in) {
      // Kept as an error to report if it is ever executed: text past the
      // last kernel (padding) need not decode.
      Instruction bad;
      bad.pc = uint32_t(pc);
      bad.size = 4;
      p.insts.push_back(bad);
      p.fns.push_back(nullptr);
      p.decodeErrors.push_back(in.status().message());
      off += 4;
      continue;
    }
    ExecFn fn = table[unsigned(in->op)];
    // SDWA operands are selected, DPP ones gathered from other lanes,
    // around the instruction's own handler.
    if (in->sdwa && fn)
      fn = execSdwa;
    if (in->dpp && fn)
      fn = execDpp;
    p.insts.push_back(*in);
    p.fns.push_back(fn);
    p.decodeErrors.emplace_back();
    off += std::max<unsigned>(in->size, 4);
  }
  return p;
}

//===----------------------------------------------------------------------===//
// The s_waitcnt model
//===----------------------------------------------------------------------===//

static const char *counterName(unsigned c) {
  return c == kVmCnt ? "vmcnt" : c == kLgkmCnt ? "lgkmcnt" : "expcnt";
}

static bool resolved(const Wave &w, const PendingWrite &p) {
  if (!p.seq)
    return true;
  return p.outOfOrder ? p.seq <= w.completedAll[p.counter]
                      : p.seq <= w.completed[p.counter];
}

static bool anyPending(const Wave &w) {
  for (unsigned c = 0; c < kCounters; ++c)
    if (w.issued[c] != w.completedAll[c])
      return true;
  return false;
}

/// The in-order counter a vector memory instruction returns its data on
/// (VMEM loads on vmcnt, LDS on lgkmcnt), or -1.
static int inOrderCounter(const Instruction &in) {
  switch (in.enc) {
  case Encoding::GLOBAL:
  case Encoding::FLAT:
  case Encoding::SCRATCH:
  case Encoding::MUBUF:
    return kVmCnt;
  case Encoding::DS:
    return kLgkmCnt;
  default:
    return -1;
  }
}

/// Reports an operand register whose load has not been waited for.
static bool checkOperandHazards(Wave &w, const Instruction &in,
                                ExecContext &ctx) {
  const int sameCounter = inOrderCounter(in);
  auto check = [&](const Operand &o, bool isWrite) {
    if (o.kind == OperandKind::VGPR) {
      for (unsigned i = 0; i < std::max<unsigned>(o.count, 1); ++i) {
        unsigned r = o.index + i;
        if (r >= w.pendingV.size())
          continue;
        PendingWrite &p = w.pendingV[r];
        if (resolved(w, p)) {
          p.seq = 0;
          continue;
        }
        // A later load on the same in-order counter writes after the
        // outstanding one: no hazard (its own mark replaces this one).
        if (isWrite && !p.outOfOrder && int(p.counter) == sameCounter)
          continue;
        return ctx.fail(w, in, ErrorCode::LaunchFailed,
                        std::string("s_waitcnt hazard: ") +
                            (isWrite ? "overwrites" : "reads") + " v" +
                            std::to_string(r) + " while the load at pc " +
                            hex(p.pc) +
                            " that writes it is outstanding (no s_waitcnt " +
                            counterName(p.counter) +
                            " covers it; the GPU would give stale data)");
      }
      return true;
    }
    int base = scalarIndex(o);
    if (base < 0)
      return true;
    for (unsigned i = 0; i < std::max<unsigned>(o.count, 1); ++i) {
      unsigned r = unsigned(base) + i;
      if (r >= kScalarRegs)
        break;
      PendingWrite &p = w.pendingS[r];
      if (resolved(w, p)) {
        p.seq = 0;
        continue;
      }
      return ctx.fail(w, in, ErrorCode::LaunchFailed,
                      std::string("s_waitcnt hazard: ") +
                          (isWrite ? "overwrites" : "reads") + " s" +
                          std::to_string(r) + " while the load at pc " +
                          hex(p.pc) + " that writes it is outstanding (no " +
                          "s_waitcnt " + counterName(p.counter) +
                          " covers it)");
    }
    return true;
  };
  for (unsigned i = 0; i < in.numSrc; ++i)
    if (!check(in.src[i], false))
      return false;
  for (unsigned i = 0; i < in.numDst; ++i)
    if (!check(in.dst[i], true))
      return false;
  return true;
}

//===----------------------------------------------------------------------===//
// Waves and workgroups
//===----------------------------------------------------------------------===//

namespace {

/// What one worker thread reuses from workgroup to workgroup.
struct Worker {
  std::vector<Wave> waves;
  std::vector<uint8_t> lds;
  std::vector<uint8_t> scratch;
  LdsRaceTracker races;
  ProfileCounters profile;
  std::vector<std::vector<TraceEntry>> trace; ///< per wave, when recorded
  uint64_t instructions = 0, laneOps = 0;
};

unsigned maxVgprOf(const Instruction &in) {
  unsigned top = 0;
  auto see = [&](const Operand &o) {
    if (o.kind == OperandKind::VGPR)
      top = std::max<unsigned>(top, o.index + std::max<unsigned>(o.count, 1));
  };
  for (unsigned i = 0; i < in.numDst; ++i)
    see(in.dst[i]);
  for (unsigned i = 0; i < in.numSrc; ++i)
    see(in.src[i]);
  return top;
}

} // namespace

bool fa::sim::checkRegisters(const Wave &w, const Instruction &in,
                             ExecContext &ctx) {
  unsigned top = maxVgprOf(in);
  if (top <= w.numVgprs)
    return true;
  return ctx.fail(w, in, ErrorCode::LaunchFailed,
                  "uses v" + std::to_string(top - 1) +
                      " but the kernel "
                      "descriptor allocates " +
                      std::to_string(w.numVgprs) + " VGPRs");
}

bool fa::sim::runWave(Wave &w, const Program &p, ExecContext &ctx) {
  const SimChecks &checks = *ctx.checks;
  const int64_t count = int64_t(p.insts.size());
  while (true) {
    if (w.at < 0 || w.at >= count) {
      Instruction none;
      none.pc = uint32_t(w.pc);
      return ctx.fail(w, none, ErrorCode::LaunchFailed,
                      "the wave's pc left the code");
    }
    const Instruction &in = p.insts[size_t(w.at)];
    ExecFn fn = p.fns[size_t(w.at)];
    if (!fn) {
      if (!p.decodeErrors[size_t(w.at)].empty())
        return ctx.fail(w, in, ErrorCode::LaunchFailed,
                        "cannot execute an undecodable instruction (" +
                            p.decodeErrors[size_t(w.at)] + ")");
      return ctx.fail(w, in, ErrorCode::Unsupported,
                      std::string("instruction not implemented by "
                                  "gfx906-sim") +
                          (in.sdwa  ? " (SDWA form)"
                           : in.dpp ? " (DPP form)"
                                    : ""));
    }
    if (w.executed >= checks.waveBudget)
      return ctx.fail(w, in, ErrorCode::LaunchFailed,
                      "the wave exceeded its budget of " +
                          std::to_string(checks.waveBudget) +
                          " instructions (a loop that never ends?)");
    if (!checkRegisters(w, in, ctx))
      return false;
    if (checks.waitcnt && anyPending(w) && !checkOperandHazards(w, in, ctx))
      return false;
    uint64_t fallThrough = uint64_t(in.pc) + in.size;
    ctx.nextPc = fallThrough;
    uint64_t exec = w.exec();
    // Execution profile: one branch per instruction when off.
    if (ctx.profile)
      profileInstruction(*ctx.profile, w, in, size_t(w.at));
    if (ctx.trace) {
      TraceEntry e;
      e.index = uint32_t(w.at);
      e.lanes = uint16_t(__builtin_popcountll(exec));
      traceMemoryAccess(e, w, in);
      ctx.trace->push_back(e);
    }
    if (!fn(w, in, ctx))
      return false;
#ifdef FA_SIM_TRACE
    // A developer's trace of wave 0 of workgroup (0,0,0) (build with
    // -DFA_SIM_TRACE): each instruction as disassembled, its first result.
    if (w.id == 0 && ctx.wg[0] == 0 && ctx.wg[1] == 0 && ctx.wg[2] == 0) {
      std::fprintf(stderr, "%6llx %-60s", (unsigned long long)in.pc,
                   disassemble(in).c_str());
      if (in.numDst && in.dst[0].kind == OperandKind::VGPR)
        std::fprintf(stderr, " = %08x %08x", w.vgpr(in.dst[0].index)[0],
                     w.vgpr(in.dst[0].index)[1]);
      else if (in.numDst && scalarIndex(in.dst[0]) >= 0)
        std::fprintf(stderr, " = %08x", w.s[scalarIndex(in.dst[0])]);
      std::fprintf(stderr, " exec=%016llx scc=%d\n",
                   (unsigned long long)w.exec(), w.scc);
    }
#endif
    ++w.executed;
    // Lane-instructions: the EXEC lanes of vector instructions (the scalar
    // ones run once per wave).
    if (in.enc >= Encoding::VOP1)
      w.laneOps += uint64_t(__builtin_popcountll(exec));
    if (ctx.nextPc == fallThrough) {
      ++w.at;
    } else {
      // A taken branch (the jump path only: the fall-through is unchanged).
      if (ctx.profile)
        ++ctx.profile->taken[size_t(w.at)];
      w.at = p.indexOf(ctx.nextPc);
      if (w.at < 0)
        return ctx.fail(w, in, ErrorCode::LaunchFailed,
                        "branch to " + hex(ctx.nextPc) +
                            ", which is not the start of an instruction");
    }
    w.pc = ctx.nextPc;
    if (w.state != Wave::State::Running)
      return true;
  }
}

/// Sets up the waves of workgroup `wg` as the hardware would.
static void initWaves(const SimLaunch &L, const uint32_t wg[3], Worker &wk) {
  const KernelDescriptor &kd = L.kernel->kd;
  uint32_t threads = L.block[0] * L.block[1] * L.block[2];
  unsigned numWaves = (threads + kWaveLanes - 1) / kWaveLanes;
  wk.waves.resize(numWaves);
  for (unsigned wi = 0; wi < numWaves; ++wi) {
    Wave &w = wk.waves[wi];
    w.reset(kd.vgprCount(), kd.sgprCount());
    w.id = wi;
    w.ieeeMode = kd.ieeeMode();
    w.dx10Clamp = kd.dx10Clamp();
    w.denorm32 = kd.floatDenormMode32() == 3;
    w.denorm1664 = kd.floatDenormMode1664() == 3;
    unsigned s = 0;
    if (kd.privateSegmentBuffer()) {
      // The scratch resource: base 0, so that a MUBUF address is the lane's
      // offset in its private segment (Exec of MUBUF maps it to the wave's
      // scratch); stride and swizzle as ROCm sets them.
      w.s[s + 0] = 0;
      w.s[s + 1] = 0;
      w.s[s + 2] = 0xffffffff;
      w.s[s + 3] = 0x00e00000;
      s += 4;
    }
    if (kd.dispatchPtr()) {
      w.setSgpr64(s, L.dispatchPacketAddr);
      s += 2;
    }
    if (kd.queuePtr()) {
      w.setSgpr64(s, L.queueAddr);
      s += 2;
    }
    if (kd.kernargSegmentPtr()) {
      w.setSgpr64(s, L.kernargAddr);
      s += 2;
    }
    if (kd.dispatchId()) {
      w.setSgpr64(s, 0);
      s += 2;
    }
    if (kd.flatScratchInit()) {
      w.setSgpr64(s, 0);
      s += 2;
    }
    if (kd.privateSegmentSize())
      w.s[s++] = kd.privateSegmentFixedSize;
    s = kd.userSgprCount();
    for (int d = 0; d < 3; ++d)
      if (kd.workgroupId(d))
        w.s[s++] = wg[d];
    if (kd.workgroupInfo())
      w.s[s++] = 0;
    if (kd.privateSegmentWaveOffset())
      w.s[s++] = 0; // each wave has its own scratch (see ExecMemory.cpp)

    uint64_t exec = 0;
    unsigned dims = kd.workItemIdDims();
    uint32_t *vx = w.vgpr(0);
    uint32_t *vy = dims >= 1 && w.numVgprs > 1 ? w.vgpr(1) : nullptr;
    uint32_t *vz = dims >= 2 && w.numVgprs > 2 ? w.vgpr(2) : nullptr;
    for (unsigned l = 0; l < kWaveLanes; ++l) {
      uint32_t t = wi * kWaveLanes + l;
      if (t >= threads)
        continue;
      exec |= uint64_t(1) << l;
      vx[l] = t % L.block[0];
      if (vy)
        vy[l] = (t / L.block[0]) % L.block[1];
      if (vz)
        vz[l] = t / (L.block[0] * L.block[1]);
    }
    w.setExec(exec);
    w.pc = L.kernel->entry;
    w.at = L.program->indexOf(w.pc);
  }
}

/// Runs workgroup `wg` to completion.
static Status runWorkgroup(const SimLaunch &L, const uint32_t wg[3],
                           Worker &wk) {
  initWaves(L, wg, wk);
  wk.lds.assign(L.ldsBytes, L.poisonLds ? 0xff : 0);
  uint32_t perLane = L.kernel->kd.privateSegmentFixedSize;
  wk.scratch.assign(size_t(perLane) * kWaveLanes * wk.waves.size(), 0);
  ExecContext ctx;
  ctx.memory = &L.memory;
  ctx.lds = wk.lds.data();
  ctx.ldsBytes = L.ldsBytes;
  ctx.scratchPerLane = perLane;
  ctx.checks = &L.checks;
  ctx.kernel = L.kernelName.c_str();
  for (int i = 0; i < 3; ++i)
    ctx.wg[i] = wg[i];
  if (L.checks.races) {
    wk.races.maxReports = L.checks.maxReports;
    wk.races.beginWorkgroup(L.ldsBytes, wg);
    ctx.races = &wk.races;
  }
  if (L.profile) {
    ctx.profile = &wk.profile;
    wk.profile.waves += wk.waves.size();
  }
  unsigned numWaves = unsigned(wk.waves.size());
  const bool record = L.timing && L.timing->records(wg);
  if (record)
    wk.trace.assign(numWaves, {});
  while (true) {
    for (Wave &w : wk.waves) {
      if (w.state != Wave::State::Running)
        continue;
      ctx.scratch = wk.scratch.data() + size_t(w.id) * perLane * kWaveLanes;
      if (record)
        ctx.trace = &wk.trace[w.id];
      if (!runWave(w, *L.program, ctx))
        return ctx.error;
    }
    unsigned ended = 0;
    for (const Wave &w : wk.waves) {
      ended += w.state == Wave::State::Ended;
    }
    if (ended == numWaves)
      break;
    if (ended) {
      std::string at, gone;
      for (const Wave &w : wk.waves)
        (w.state == Wave::State::Ended ? gone : at) +=
            (w.state == Wave::State::Ended ? gone : at).empty()
                ? std::to_string(w.id)
                : "," + std::to_string(w.id);
      return Status::error(
                 ErrorCode::BarrierDivergence,
                 "barrier divergence in workgroup (" + std::to_string(wg[0]) +
                     "," + std::to_string(wg[1]) + "," + std::to_string(wg[2]) +
                     ") of kernel '" + L.kernelName + "': waves [" + at +
                     "] wait at s_barrier, waves [" + gone +
                     "] reached s_endpgm")
          .withKernel(L.kernelName);
    }
    for (Wave &w : wk.waves)
      w.state = Wave::State::Running;
    if (ctx.races)
      ctx.races->barrier();
  }
  for (const Wave &w : wk.waves) {
    wk.instructions += w.executed;
    wk.laneOps += w.laneOps;
  }
  if (record) {
    WorkgroupTrace t;
    for (int i = 0; i < 3; ++i)
      t.wg[i] = wg[i];
    t.waves = std::move(wk.trace);
    wk.trace.clear();
    std::lock_guard<std::mutex> lock(L.timing->mutex);
    L.timing->traces.push_back(std::move(t));
  }
  return Status::success();
}

Status fa::sim::runLaunch(const SimLaunch &L) {
  auto start = std::chrono::steady_clock::now();
  if (!L.program || !L.kernel)
    return Status::error(ErrorCode::Internal,
                         "gfx906-sim: launch without code");
  if (L.program->indexOf(L.kernel->entry) < 0)
    return Status::error(ErrorCode::CorruptCodeObject,
                         "kernel '" + L.kernelName + "': entry " +
                             hex(L.kernel->entry) +
                             " is not the start of an instruction")
        .withKernel(L.kernelName);
  uint64_t threads = uint64_t(L.block[0]) * L.block[1] * L.block[2];
  if (threads == 0 || threads > 1024)
    return Status::error(
        ErrorCode::InvalidArgument,
        "gfx906-sim: " + std::to_string(threads) +
            " work-items per workgroup, gfx906 runs 1 to 1024");
  uint64_t total = uint64_t(L.grid[0]) * L.grid[1] * L.grid[2];
  unsigned workers =
      L.workers ? L.workers : std::thread::hardware_concurrency();
  workers = unsigned(std::max<uint64_t>(1, std::min<uint64_t>(workers, total)));

  std::atomic<uint64_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;
  uint64_t failedAt = UINT64_MAX;
  Status failure;
  std::vector<std::string> raceReports;
  size_t raceTotal = 0;
  SimStats stats;

  auto work = [&] {
    Worker wk;
    if (L.profile)
      wk.profile.reset(L.program->insts.size());
    while (!stop.load(std::memory_order_relaxed)) {
      uint64_t i = next.fetch_add(1);
      if (i >= total)
        break;
      uint32_t wg[3] = {uint32_t(i % L.grid[0]),
                        uint32_t(i / L.grid[0] % L.grid[1]),
                        uint32_t(i / (uint64_t(L.grid[0]) * L.grid[1]))};
      if (L.timing && L.timing->onlyRecorded && !L.timing->records(wg))
        continue;
      Status s = runWorkgroup(L, wg, wk);
      if (!s.ok()) {
        std::lock_guard<std::mutex> lock(mutex);
        if (i < failedAt) {
          failedAt = i;
          failure = std::move(s);
        }
        stop = true;
      }
    }
    std::lock_guard<std::mutex> lock(mutex);
    for (std::string &r : wk.races.reports)
      if (raceReports.size() < L.checks.maxReports)
        raceReports.push_back(std::move(r));
    raceTotal += wk.races.total;
    stats.instructions += wk.instructions;
    stats.laneOps += wk.laneOps;
    if (L.profile)
      L.profile->add(wk.profile);
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < workers; ++t)
    pool.emplace_back(work);
  work();
  for (std::thread &t : pool)
    t.join();
  stats.seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  if (L.stats)
    *L.stats = stats;
  if (!failure.ok())
    return failure;
  if (raceTotal) {
    std::string log;
    for (const std::string &r : raceReports)
      log += "lds race in kernel '" + L.kernelName + "' " + r + "\n";
    return Status::error(ErrorCode::RaceDetected,
                         std::to_string(raceTotal) + " lds race" +
                             (raceTotal == 1 ? "" : "s") + " in kernel '" +
                             L.kernelName + "'; first: " + raceReports.front())
        .withKernel(L.kernelName)
        .withLog(log);
  }
  return Status::success();
}
