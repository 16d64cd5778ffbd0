//===- Profile.cpp - Execution counts of a gfx906-sim launch --------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements sim/Profile.h: counting an issued instruction (its
// LDS bank-conflict degree from the active lanes' addresses, its global
// bytes), the classes, the occupancy and the summary's text and JSON.
//
//===----------------------------------------------------------------------===//

#include "sim/Profile.h"
#include "sim/Exec.h"
#include "sim/Simulator.h"
#include "sim/Timing.h"

#include "fa/Json.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>

using namespace fa;
using namespace fa::sim;

void DsAccessRecord::add(const DsAccessRecord &o) {
  lowest = std::min(lowest, o.lowest);
  highest = std::max(highest, o.highest);
  for (unsigned l = 0; l < kWaveLanes; ++l) {
    lowDelta[l] = std::min(lowDelta[l], o.lowDelta[l]);
    highDelta[l] = std::max(highDelta[l], o.highDelta[l]);
  }
}

DsAccessRecord &ProfileCounters::dsRecordOf(size_t index) {
  if (dsRecord.size() <= index)
    dsRecord.resize(index + 1, UINT32_MAX);
  if (dsRecord[index] == UINT32_MAX) {
    dsRecord[index] = uint32_t(ds.size());
    ds.emplace_back();
  }
  return ds[dsRecord[index]];
}

void ProfileCounters::add(const ProfileCounters &o) {
  if (executed.size() < o.executed.size()) {
    executed.resize(o.executed.size(), 0);
    degrees.resize(o.degrees.size(), 0);
  }
  for (size_t i = 0; i < o.dsRecord.size(); ++i)
    if (o.dsRecord[i] != UINT32_MAX)
      dsRecordOf(i).add(o.ds[o.dsRecord[i]]);
  if (taken.size() < o.taken.size())
    taken.resize(o.taken.size(), 0);
  for (size_t i = 0; i < o.taken.size(); ++i)
    taken[i] += o.taken[i];
  for (size_t i = 0; i < o.executed.size(); ++i)
    executed[i] += o.executed[i];
  for (size_t i = 0; i < o.degrees.size(); ++i)
    degrees[i] += o.degrees[i];
  globalBytesRead += o.globalBytesRead;
  globalBytesWritten += o.globalBytesWritten;
  waves += o.waves;
}

namespace {

/// A DS instruction's elements per lane: `count` (1 or 2) of `bytes` each,
/// at addr + offset (one) or addr + offset0/1 * scale (two).
struct DsShape {
  unsigned bytes = 0, count = 0, scale = 0;
};

DsShape dsShape(Op op) {
  switch (op) {
  case Op::DS_READ_I8:
  case Op::DS_READ_U8:
  case Op::DS_READ_U8_D16:
  case Op::DS_READ_U8_D16_HI:
  case Op::DS_WRITE_B8:
  case Op::DS_WRITE_B8_D16_HI:
    return {1, 1, 0};
  case Op::DS_READ_I16:
  case Op::DS_READ_U16:
  case Op::DS_READ_U16_D16:
  case Op::DS_READ_U16_D16_HI:
  case Op::DS_WRITE_B16:
  case Op::DS_WRITE_B16_D16_HI:
    return {2, 1, 0};
  case Op::DS_READ_B32:
  case Op::DS_WRITE_B32:
  case Op::DS_ADD_U32:
    return {4, 1, 0};
  case Op::DS_READ_B64:
  case Op::DS_WRITE_B64:
    return {8, 1, 0};
  case Op::DS_READ_B96:
  case Op::DS_WRITE_B96:
    return {12, 1, 0};
  case Op::DS_READ_B128:
  case Op::DS_WRITE_B128:
    return {16, 1, 0};
  case Op::DS_READ2_B32:
  case Op::DS_WRITE2_B32:
    return {4, 2, 4};
  case Op::DS_READ2ST64_B32:
  case Op::DS_WRITE2ST64_B32:
    return {4, 2, 4 * 64};
  case Op::DS_READ2_B64:
  case Op::DS_WRITE2_B64:
    return {8, 2, 8};
  case Op::DS_READ2ST64_B64:
  case Op::DS_WRITE2ST64_B64:
    return {8, 2, 8 * 64};
  default:
    return {}; // swizzle, permute: no bank access
  }
}

/// docs/bank-conflicts.md's phases: lanes per phase by bytes per lane.
unsigned phaseLanes(unsigned bytesPerLane) {
  return bytesPerLane <= 4 ? 32 : bytesPerLane <= 8 ? 16 : 8;
}

} // namespace

/// Bytes per lane of a GLOBAL/FLAT/SCRATCH opcode (Opcodes.def's FA_SIM_MEM).
static unsigned globalBytes(uint16_t opcode) {
  switch (opcode) {
  case 0x10:
  case 0x11:
  case 0x18:
  case 0x19:
  case 0x20:
  case 0x21:
    return 1;
  case 0x12:
  case 0x13:
  case 0x1a:
  case 0x1b:
  case 0x24:
  case 0x25:
    return 2;
  case 0x14:
  case 0x1c:
    return 4;
  case 0x15:
  case 0x1d:
    return 8;
  case 0x16:
  case 0x1e:
    return 12;
  case 0x17:
  case 0x1f:
    return 16;
  default:
    // Atomics: a dword (0x40-0x4c) or a qword (0x60-0x6c) per lane.
    if (opcode >= 0x40 && opcode <= 0x4c)
      return 4;
    if (opcode >= 0x60 && opcode <= 0x6c)
      return 8;
    return 0;
  }
}

unsigned fa::sim::dsBytesPerLane(Op op) {
  DsShape s = dsShape(op);
  return s.bytes * s.count;
}

unsigned fa::sim::memoryBytesPerLane(const Instruction &in) {
  switch (in.enc) {
  case Encoding::DS:
    return dsBytesPerLane(in.op);
  case Encoding::GLOBAL:
  case Encoding::FLAT:
  case Encoding::SCRATCH:
    return globalBytes(in.info().opcode);
  default:
    return 0;
  }
}

int fa::sim::ldsConflictDegree(const Wave &w, const Instruction &in,
                               unsigned *passes, unsigned *dwords) {
  DsShape s = dsShape(in.op);
  if (!s.count)
    return -1;
  const uint32_t *addr = w.vgpr(in.src[0].index);
  const uint64_t exec = w.exec();
  const unsigned lanesPerPhase = phaseLanes(s.bytes * s.count);
  int degree = 0;
  if (passes)
    *passes = 0;
  if (dwords)
    *dwords = 0;
  // At most 32 lanes x 2 elements x 5 dwords (an unaligned b128).
  uint32_t words[32 * 2 * 5];
  for (unsigned first = 0; first < kWaveLanes; first += lanesPerPhase) {
    unsigned n = 0;
    for (unsigned l = first; l < first + lanesPerPhase; ++l) {
      if (!((exec >> l) & 1))
        continue;
      for (unsigned k = 0; k < s.count; ++k) {
        uint64_t a =
            uint64_t(addr[l]) +
            (s.count == 1 ? uint64_t(uint32_t(in.offset))
                          : uint64_t(k ? in.offset1 : in.offset0) * s.scale);
        for (uint64_t d = a / 4; d <= (a + s.bytes - 1) / 4; ++d)
          words[n++] = uint32_t(d);
      }
    }
    if (!n)
      continue;
    std::sort(words, words + n);
    n = unsigned(std::unique(words, words + n) - words);
    if (dwords)
      *dwords += n;
    unsigned perBank[32] = {};
    unsigned phase = 0;
    for (unsigned i = 0; i < n; ++i)
      phase = std::max(phase, ++perBank[words[i] % 32]);
    degree = std::max<int>(degree, int(phase));
    if (passes)
      *passes += phase;
  }
  return degree;
}

void fa::sim::traceMemoryAccess(TraceEntry &e, const Wave &w,
                                const Instruction &in) {
  if (in.enc == Encoding::DS) {
    unsigned passes = 0, dwords = 0;
    ldsConflictDegree(w, in, &passes, &dwords);
    e.passes = uint16_t(passes);
    e.extra = dwords;
    return;
  }
  const uint64_t exec = w.exec();
  if ((in.enc != Encoding::GLOBAL && in.enc != Encoding::FLAT) || !exec)
    return;
  // The distinct 64-byte lines of the active lanes' accesses (an access
  // of up to 16 bytes spans at most two); lanes are sorted by line in
  // small runs, so a short list of the lines seen is enough.
  const unsigned bytes = std::max(1u, memoryBytesPerLane(in));
  uint64_t seen[2 * kWaveLanes];
  unsigned lines = 0;
  auto note = [&](uint64_t line) {
    for (unsigned i = lines; i-- > 0;)
      if (seen[i] == line)
        return;
    seen[lines++] = line;
  };
  uint64_t first = 0;
  for (uint64_t m = exec; m; m &= m - 1) {
    const uint64_t a = globalAddress(w, in, unsigned(__builtin_ctzll(m)));
    if (m == exec)
      first = a;
    note(a >> 6);
    if ((a + bytes - 1) >> 6 != a >> 6)
      note((a + bytes - 1) >> 6);
  }
  e.lines = uint16_t(lines);
  if (in.info().flags & OF_NoDst)
    return; // a store: no data for the L2 model
  // The first active lane's line: 0 reads as "no line"; a line 0 access is
  // not shared data anyway.
  e.extra = uint32_t(first >> 6);
}

/// The bytes `in` touches and its lanes' address pattern, into `r`.
static void recordDsAccess(DsAccessRecord &r, const Wave &w,
                           const Instruction &in, const DsShape &s) {
  const uint64_t exec = w.exec();
  if (!exec)
    return;
  const uint32_t *addr = w.vgpr(in.src[0].index);
  uint64_t first = s.count == 1
                       ? uint32_t(in.offset)
                       : uint64_t(std::min(in.offset0, in.offset1)) * s.scale;
  uint64_t last =
      (s.count == 1 ? uint32_t(in.offset)
                    : uint64_t(std::max(in.offset0, in.offset1)) * s.scale) +
      s.bytes - 1;
  const uint32_t base = addr[__builtin_ctzll(exec)];
  for (uint64_t m = exec; m; m &= m - 1) {
    unsigned l = unsigned(__builtin_ctzll(m));
    r.lowest = uint32_t(std::min<uint64_t>(r.lowest, addr[l] + first));
    r.highest = uint32_t(std::max<uint64_t>(r.highest, addr[l] + last));
    int32_t d = int32_t(int64_t(addr[l]) - int64_t(base));
    r.lowDelta[l] = std::min(r.lowDelta[l], d);
    r.highDelta[l] = std::max(r.highDelta[l], d);
  }
}

void fa::sim::profileInstruction(ProfileCounters &p, const Wave &w,
                                 const Instruction &in, size_t index) {
  ++p.executed[index];
  switch (in.enc) {
  case Encoding::DS: {
    int d = ldsConflictDegree(w, in);
    if (d >= 0) {
      ++p.degrees[index * kDegreeSlots + unsigned(d)];
      recordDsAccess(p.dsRecordOf(index), w, in, dsShape(in.op));
    }
    break;
  }
  case Encoding::GLOBAL:
  case Encoding::FLAT: {
    uint64_t bytes = uint64_t(globalBytes(in.info().opcode)) *
                     unsigned(__builtin_popcountll(w.exec()));
    if (in.info().flags & OF_NoDst)
      p.globalBytesWritten += bytes;
    else
      p.globalBytesRead += bytes;
    break;
  }
  default:
    break;
  }
}

ProfileClass fa::sim::profileClassOf(Op op) {
  const OpInfo &i = opInfo(op);
  const char *m = i.mnemonic;
  switch (i.enc) {
  case Encoding::SOP1:
  case Encoding::SOP2:
  case Encoding::SOPK:
  case Encoding::SOPC:
    return ProfileClass::Salu;
  case Encoding::SOPP:
    if (!std::strcmp(m, "s_barrier"))
      return ProfileClass::Barrier;
    if (!std::strcmp(m, "s_waitcnt"))
      return ProfileClass::Waitcnt;
    if (i.flags & OF_Branch)
      return ProfileClass::Branch;
    return ProfileClass::SoppOther;
  case Encoding::SMEM:
    return ProfileClass::Smem;
  case Encoding::DS:
    if (!dsShape(op).count)
      return ProfileClass::LdsSwizzle;
    if (!std::strncmp(m, "ds_read", 7))
      return ProfileClass::LdsRead;
    if (!std::strncmp(m, "ds_write", 8))
      return ProfileClass::LdsWrite;
    return ProfileClass::LdsAtomic;
  case Encoding::GLOBAL:
  case Encoding::FLAT:
    return (i.flags & OF_NoDst) ? ProfileClass::GlobalStore
                                : ProfileClass::GlobalLoad;
  case Encoding::SCRATCH:
  case Encoding::MUBUF:
    return ProfileClass::Scratch;
  default:
    if (!std::strcmp(m, "v_dot2_f32_f16"))
      return ProfileClass::ValuDot2;
    if (!std::strncmp(m, "v_pk_", 5))
      return ProfileClass::ValuPk;
    if (!std::strcmp(m, "v_exp_f32"))
      return ProfileClass::ValuExp;
    return ProfileClass::ValuOther;
  }
}

const char *fa::sim::profileClassName(ProfileClass c) {
  static const char *const names[kProfileClasses] = {"valu.v_dot2_f32_f16",
                                                     "valu.v_pk",
                                                     "valu.v_exp_f32",
                                                     "valu.other",
                                                     "salu",
                                                     "branch",
                                                     "s_barrier",
                                                     "s_waitcnt",
                                                     "sopp.other",
                                                     "smem",
                                                     "lds.read",
                                                     "lds.write",
                                                     "lds.swizzle",
                                                     "lds.atomic",
                                                     "global.load",
                                                     "global.store",
                                                     "scratch"};
  return names[unsigned(c)];
}

void fa::sim::setOccupancy(SimProfile &p, unsigned vgprs, unsigned sgprs,
                           uint32_t ldsBytes, uint32_t threads) {
  auto roundUp = [](unsigned x, unsigned g) { return (x + g - 1) / g * g; };
  p.vgprs = vgprs;
  p.sgprs = sgprs;
  p.ldsBytes = ldsBytes;
  p.byVgpr = vgprs ? 256 / roundUp(vgprs, 4) : 10;
  p.bySgpr = sgprs ? 800 / roundUp(sgprs, 16) : 10;
  unsigned wavesPerGroup = std::max(1u, (threads + 63) / 64);
  unsigned groupsByLds = ldsBytes ? 65536 / ldsBytes : 40;
  p.byLds = groupsByLds * wavesPerGroup / 4;
  p.wavesPerSimd = std::min({10u, p.byVgpr, p.bySgpr, p.byLds});
  p.limitedBy = p.wavesPerSimd == p.byVgpr   ? "VGPRs"
                : p.wavesPerSimd == p.byLds  ? "LDS"
                : p.wavesPerSimd == p.bySgpr ? "SGPRs"
                                             : "the 10-wave limit";
}

unsigned SimProfile::DsInstruction::maxDegree() const {
  for (unsigned d = kMaxConflictDegree; d > 0; --d)
    if (histogram[d])
      return d;
  return 0;
}

/// One DS instruction's summary: `degrees` is its histogram, `r` its
/// record (null: no execution had an active lane).
static SimProfile::DsInstruction dsInstruction(const Instruction &in,
                                               uint64_t executed,
                                               const uint64_t *degrees,
                                               const DsAccessRecord *r) {
  SimProfile::DsInstruction k;
  DsShape s = dsShape(in.op);
  k.pc = in.pc;
  k.mnemonic = in.info().mnemonic;
  k.elementBytes = s.bytes;
  if (s.count == 1)
    k.elementOffsets = {uint32_t(in.offset)};
  else
    k.elementOffsets = {uint32_t(in.offset0) * s.scale,
                        uint32_t(in.offset1) * s.scale};
  k.executed = executed;
  std::copy(degrees, degrees + kDegreeSlots, k.histogram);
  if (!r || r->lowest > r->highest)
    return k;
  k.lowest = r->lowest;
  k.highest = r->highest;
  bool stable = true;
  for (unsigned l = 0; l < kWaveLanes; ++l)
    stable &= r->lowDelta[l] >= r->highDelta[l];
  if (!stable)
    return k;
  for (unsigned l = 0; l < kWaveLanes; ++l) {
    bool active = r->lowDelta[l] == r->highDelta[l];
    k.active.push_back(active);
    k.lanes.push_back(active ? r->lowDelta[l] : 0);
  }
  return k;
}

SimProfile fa::sim::summarizeProfile(const Program &program,
                                     const ProfileCounters &c) {
  SimProfile p;
  p.waves = c.waves;
  p.globalBytesRead = c.globalBytesRead;
  p.globalBytesWritten = c.globalBytesWritten;
  std::map<std::string, SimProfile::Conflicts> byMnemonic;
  size_t best = SIZE_MAX;
  for (size_t i = 0; i < c.executed.size() && i < program.insts.size(); ++i) {
    uint64_t n = c.executed[i];
    if (!n)
      continue;
    const Instruction &in = program.insts[i];
    p.instructions += n;
    p.classes[unsigned(profileClassOf(in.op))] += n;
    if (in.enc == Encoding::DS && dsShape(in.op).count) {
      SimProfile::Conflicts &k = byMnemonic[in.info().mnemonic];
      k.mnemonic = in.info().mnemonic;
      k.executed += n;
      for (unsigned d = 0; d < kDegreeSlots; ++d)
        k.histogram[d] += c.degrees[i * kDegreeSlots + d];
      p.ds.push_back(
          dsInstruction(in, n, &c.degrees[i * kDegreeSlots],
                        i < c.dsRecord.size() && c.dsRecord[i] != UINT32_MAX
                            ? &c.ds[c.dsRecord[i]]
                            : nullptr));
    }
    if ((in.info().flags & OF_Branch) && in.branchTarget <= in.pc &&
        (best == SIZE_MAX || n > c.executed[best]))
      best = i;
  }
  for (auto &[name, k] : byMnemonic)
    p.conflicts.push_back(k);
  // Every backward branch taken at least once (the dispatch loop counts
  // the jumps taken per instruction).
  std::map<uint32_t, size_t> indexOfPc;
  for (size_t i = 0; i < program.insts.size(); ++i)
    indexOfPc[program.insts[i].pc] = i;
  size_t counted = std::min(c.executed.size(), program.insts.size());
  for (size_t b = 0; b < counted; ++b) {
    const Instruction &br = program.insts[b];
    if (!(br.info().flags & OF_Branch) || br.branchTarget > br.pc ||
        b >= c.taken.size() || !c.taken[b])
      continue;
    auto head = indexOfPc.find(br.branchTarget);
    if (head == indexOfPc.end() || head->second >= counted)
      continue;
    SimProfile::Loop l;
    l.headPc = br.branchTarget;
    l.branchPc = br.pc;
    l.iterations = c.executed[head->second];
    l.branchExecutions = c.executed[b];
    l.taken = c.taken[b];
    for (size_t i = head->second; i <= b; ++i)
      l.classes[unsigned(profileClassOf(program.insts[i].op))] += c.executed[i];
    p.loops.push_back(l);
  }
  std::sort(p.loops.begin(), p.loops.end(),
            [](const SimProfile::Loop &a, const SimProfile::Loop &b) {
              return a.headPc != b.headPc ? a.headPc < b.headPc
                                          : a.branchPc < b.branchPc;
            });
  if (best != SIZE_MAX) {
    const Instruction &br = program.insts[best];
    p.haveLoop = true;
    p.loopHeadPc = br.branchTarget;
    p.loopBranchPc = br.pc;
    p.loopIterations = c.executed[best];
    for (size_t i = 0; i < c.executed.size() && i < program.insts.size(); ++i) {
      const Instruction &in = program.insts[i];
      if (in.pc >= br.branchTarget && in.pc <= br.pc)
        p.loopClasses[unsigned(profileClassOf(in.op))] += c.executed[i];
    }
  }
  return p;
}

static std::string fmt(const char *f, double x) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), f, x);
  return buf;
}

static std::string hexPc(uint32_t pc) {
  char buf[16];
  std::snprintf(buf, sizeof(buf), "0x%x", pc);
  return buf;
}

static const char *kLabel =
    "execution counts from the gfx906 simulator (not timing)";

std::string SimProfile::text() const {
  std::string o;
  auto perWave = [&](uint64_t n) {
    return waves ? fmt("%.1f", double(n) / double(waves)) : std::string("-");
  };
  o += "execution profile of kernel '" + kernel + "': " + kLabel + "\n";
  o += "  launch        " + std::to_string(workgroups) + " workgroups x " +
       std::to_string(threadsPerWorkgroup) + " threads, " +
       std::to_string(waves) + " waves, " + std::to_string(instructions) +
       " wave-instructions (" + perWave(instructions) + " per wave)\n";
  char line[160];
  std::snprintf(line, sizeof(line), "  %-22s %14s %12s\n", "class", "total",
                "per wave");
  o += line;
  for (unsigned c = 0; c < kProfileClasses; ++c) {
    std::snprintf(line, sizeof(line), "  %-22s %14llu %12s\n",
                  profileClassName(ProfileClass(c)),
                  (unsigned long long)classes[c], perWave(classes[c]).c_str());
    o += line;
  }
  o += "  global bytes  read " + std::to_string(globalBytesRead) +
       ", written " + std::to_string(globalBytesWritten) + "\n";
  o += "  lds bank conflicts (degree:executions; 1 = conflict-free; 32 banks "
       "of 4 bytes, docs/bank-conflicts.md)\n";
  for (const Conflicts &k : conflicts) {
    std::snprintf(line, sizeof(line), "    %-20s", k.mnemonic.c_str());
    o += line;
    for (unsigned d = 0; d < kDegreeSlots; ++d)
      if (k.histogram[d])
        o += " " + std::to_string(d) + ":" + std::to_string(k.histogram[d]);
    o += "\n";
  }
  if (!ds.empty())
    o += "  lds by pc     (executions, LDS bytes touched, degree:executions; "
         "lanes: the address pattern is the same in every execution)\n";
  for (const DsInstruction &k : ds) {
    std::snprintf(line, sizeof(line), "    %-8s %-20s %10llu  [%u, %u]",
                  hexPc(k.pc).c_str(), k.mnemonic.c_str(),
                  (unsigned long long)k.executed, k.lowest, k.highest);
    o += line;
    for (unsigned d = 0; d < kDegreeSlots; ++d)
      if (k.histogram[d])
        o += " " + std::to_string(d) + ":" + std::to_string(k.histogram[d]);
    o += k.lanes.empty() ? "" : "  lanes";
    o += "\n";
  }
  o += "  occupancy     " + std::to_string(wavesPerSimd) +
       " waves per SIMD, limited by " + limitedBy +
       " (descriptor: " + std::to_string(vgprs) + " VGPRs -> " +
       std::to_string(byVgpr) + ", " + std::to_string(sgprs) + " SGPRs -> " +
       std::to_string(bySgpr) + ", LDS " + std::to_string(ldsBytes) +
       " bytes per workgroup -> " + std::to_string(byLds) + ")\n";
  if (haveLoop) {
    o += "  loop          most executed backward branch at pc " +
         hexPc(loopBranchPc) + " (to " + hexPc(loopHeadPc) +
         "): " + std::to_string(loopIterations) +
         " iterations over all waves (" + perWave(loopIterations) +
         " per wave); per iteration per wave:";
    for (unsigned c = 0; c < kProfileClasses; ++c)
      if (loopClasses[c])
        o += std::string(" ") + profileClassName(ProfileClass(c)) + "=" +
             fmt("%.2f", double(loopClasses[c]) / double(loopIterations));
    o += "\n";
  }
  if (!loops.empty())
    o += "  loops         backward branches taken (head..branch: iterations "
         "per wave = executions of the head; per iteration per wave)\n";
  for (const Loop &l : loops) {
    o += "    " + hexPc(l.headPc) + ".." + hexPc(l.branchPc) + ": " +
         perWave(l.iterations) + ";";
    for (unsigned c = 0; c < kProfileClasses; ++c)
      if (l.classes[c])
        o += std::string(" ") + profileClassName(ProfileClass(c)) + "=" +
             fmt("%.2f", double(l.classes[c]) / double(l.iterations));
    o += "\n";
  }
  return o;
}

/// A degree histogram as JSON members, "degree": executions, zeros left
/// out (the braces are the caller's).
static std::string degreesJson(const uint64_t *histogram) {
  std::string o;
  for (unsigned d = 0; d < kDegreeSlots; ++d)
    if (histogram[d])
      o += std::string(o.empty() ? "" : ", ") + "\"" + std::to_string(d) +
           "\": " + std::to_string(histogram[d]);
  return o;
}

std::string SimProfile::json() const {
  auto classesJson = [](const uint64_t *counts) {
    std::string o = "{";
    for (unsigned c = 0; c < kProfileClasses; ++c)
      o += std::string(c ? ", " : "") + "\"" +
           profileClassName(ProfileClass(c)) +
           "\": " + std::to_string(counts[c]);
    return o + "}";
  };
  std::string o =
      "{\"label\": " + jsonQuote(kLabel) +
      ", \"kernel\": " + jsonQuote(kernel) +
      ", \"workgroups\": " + std::to_string(workgroups) +
      ", \"threads_per_workgroup\": " + std::to_string(threadsPerWorkgroup) +
      ", \"waves\": " + std::to_string(waves) +
      ", \"instructions\": " + std::to_string(instructions) +
      ", \"classes\": " + classesJson(classes) +
      ", \"global_bytes_read\": " + std::to_string(globalBytesRead) +
      ", \"global_bytes_written\": " + std::to_string(globalBytesWritten) +
      ", \"lds_conflicts\": {";
  for (size_t i = 0; i < conflicts.size(); ++i) {
    const Conflicts &k = conflicts[i];
    o += std::string(i ? ", " : "") + jsonQuote(k.mnemonic) +
         ": {\"executed\": " + std::to_string(k.executed) + ", \"degrees\": {";
    o += degreesJson(k.histogram);
    o += "}}";
  }
  o += "}, \"ds\": [";
  for (size_t i = 0; i < ds.size(); ++i) {
    const DsInstruction &k = ds[i];
    o += std::string(i ? ", " : "") + "{\"pc\": " + std::to_string(k.pc) +
         ", \"mnemonic\": " + jsonQuote(k.mnemonic) +
         ", \"element_bytes\": " + std::to_string(k.elementBytes) +
         ", \"element_offsets\": [";
    for (size_t e = 0; e < k.elementOffsets.size(); ++e)
      o += std::string(e ? ", " : "") + std::to_string(k.elementOffsets[e]);
    o += "], \"executed\": " + std::to_string(k.executed) +
         ", \"lds_lowest\": " + std::to_string(k.lowest) +
         ", \"lds_highest\": " + std::to_string(k.highest) +
         ", \"max_degree\": " + std::to_string(k.maxDegree()) +
         ", \"degrees\": {";
    o += degreesJson(k.histogram);
    // Lanes never active: null.
    o += "}, \"lanes\": ";
    if (k.lanes.empty()) {
      o += "null";
    } else {
      o += "[";
      for (size_t l = 0; l < k.lanes.size(); ++l)
        o += std::string(l ? ", " : "") +
             (k.active[l] ? std::to_string(k.lanes[l]) : std::string("null"));
      o += "]";
    }
    o += "}";
  }
  o += "], \"occupancy\": {\"vgprs\": " + std::to_string(vgprs) +
       ", \"sgprs\": " + std::to_string(sgprs) +
       ", \"lds_bytes\": " + std::to_string(ldsBytes) +
       ", \"by_vgpr\": " + std::to_string(byVgpr) +
       ", \"by_sgpr\": " + std::to_string(bySgpr) +
       ", \"by_lds\": " + std::to_string(byLds) +
       ", \"waves_per_simd\": " + std::to_string(wavesPerSimd) +
       ", \"limited_by\": " + jsonQuote(limitedBy) + "}";
  if (haveLoop)
    o += ", \"loop\": {\"branch_pc\": " + std::to_string(loopBranchPc) +
         ", \"head_pc\": " + std::to_string(loopHeadPc) +
         ", \"iterations\": " + std::to_string(loopIterations) +
         ", \"classes\": " + classesJson(loopClasses) + "}";
  o += ", \"loops\": [";
  for (size_t i = 0; i < loops.size(); ++i) {
    const Loop &l = loops[i];
    o += std::string(i ? ", " : "") +
         "{\"head_pc\": " + std::to_string(l.headPc) +
         ", \"branch_pc\": " + std::to_string(l.branchPc) +
         ", \"iterations\": " + std::to_string(l.iterations) +
         ", \"branch_executions\": " + std::to_string(l.branchExecutions) +
         ", \"taken\": " + std::to_string(l.taken) +
         ", \"classes\": " + classesJson(l.classes) + "}";
  }
  o += "]";
  return o + "}\n";
}
