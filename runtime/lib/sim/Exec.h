//===- Exec.h - What the instruction semantics share ------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. The execution engine's common pieces: the per-workgroup context
// an instruction runs in (LDS, memory map, checks, the error), the handler
// type of the dispatch table (one function per Op, filled by the Exec*.cpp
// files by family), and operand access. Operands are resolved per
// instruction, not per lane: a VALU source becomes a pointer to 64 lane
// values (the VGPR itself, or a broadcast scalar in a scratch array), so
// every handler's inner loop is over plain arrays.
//
// A handler returns false when the instruction cannot complete (a memcheck
// error, an unimplemented modifier, a hazard); it has put the error in
// `ExecContext::error`, naming the pc and the instruction.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_SIM_EXEC_H
#define FA_LIB_SIM_EXEC_H

#include "sim/Decoder.h"
#include "sim/Memory.h"
#include "sim/Wave.h"

#include "fa/Status.h"

#include <cstdint>
#include <cstring>
#include <string>

namespace fa {
namespace sim {

class LdsRaceTracker;
struct ProfileCounters;
struct ExecContext;
struct TraceEntry;

/// One Op's semantics.
using ExecFn = bool (*)(Wave &w, const Instruction &in, ExecContext &ctx);

/// What the simulator checks beyond executing.
struct SimChecks {
  bool races = false;  ///< LDS accesses of different waves between barriers
  bool waitcnt = true; ///< registers read before s_waitcnt covers their load
  uint64_t waveBudget = uint64_t(1) << 28; ///< instructions per wave
  size_t maxReports = 16;
};

/// The state of one workgroup's execution that instructions reach.
struct ExecContext {
  const MemoryMap *memory = nullptr;
  const Region *hint = nullptr; ///< the last region hit
  uint8_t *lds = nullptr;
  uint32_t ldsBytes = 0;
  /// Scratch: per wave, 64 lanes of `scratchPerLane` bytes, lane-major.
  uint8_t *scratch = nullptr;
  uint32_t scratchPerLane = 0;
  LdsRaceTracker *races = nullptr;
  /// Execution counts (sim/Profile.h); nullptr: not profiling.
  ProfileCounters *profile = nullptr;
  /// The running wave's instruction stream for the timing model
  /// (sim/Timing.h); nullptr: this workgroup is not recorded.
  std::vector<TraceEntry> *trace = nullptr;
  const SimChecks *checks = nullptr;
  const char *kernel = "";
  uint32_t wg[3] = {0, 0, 0};
  /// The pc the next instruction is fetched from; handlers of branches set
  /// it (it starts as pc + size).
  uint64_t nextPc = 0;
  Status error;

  /// Records an error for the instruction `in` of wave `w` and returns false.
  bool fail(const Wave &w, const Instruction &in, ErrorCode code,
            const std::string &what);
};

/// "v_dot2_f32_f16 at pc 0x1d40 (wave 2 of workgroup (1,0,0))".
std::string where(const Wave &w, const Instruction &in, const ExecContext &c);

/// The dispatch table, indexed by Op (nullptr: not implemented).
const ExecFn *execTable();

/// An SDWA instruction: its sources' selected bytes or words (zero or sign
/// extended) in scratch VGPRs, the Op's handler, the result placed by
/// dst_sel / dst_unused.
bool execSdwa(Wave &w, const Instruction &in, ExecContext &ctx);

/// A DPP instruction (ExecDpp.cpp): src0 gathered from other lanes per
/// dpp_ctrl into a scratch VGPR, the Op's handler run on the lanes that
/// row_mask, bank_mask and bound_ctrl let it write.
bool execDpp(Wave &w, const Instruction &in, ExecContext &ctx);

/// The lane whose src0 lane `n` reads under DPP control `ctrl`, or -1 where
/// the source lane is invalid (out of its row, past the wave's end, the
/// first row(s) of a broadcast; reserved controls).
int dppSourceLane(unsigned ctrl, unsigned n);

/// The lanes that row_mask and bank_mask let a DPP instruction write.
uint64_t dppWriteMask(unsigned rowMask, unsigned bankMask);

// Per-family registration (Exec*.cpp).
void registerSalu(ExecFn *table);
void registerSopp(ExecFn *table);
void registerValu(ExecFn *table);
void registerValuFloat(ExecFn *table);
void registerMemory(ExecFn *table);

//===----------------------------------------------------------------------===//
// Operands
//===----------------------------------------------------------------------===//

/// The s[] index of a scalar register operand (SGPR, VCC, EXEC, M0, TTMP,
/// FLAT_SCRATCH, XNACK_MASK), or -1.
inline int scalarIndex(const Operand &o) {
  switch (o.kind) {
  case OperandKind::SGPR:
    return o.index;
  case OperandKind::VCC:
    return kVccLo + o.index;
  case OperandKind::EXEC:
    return kExecLo + o.index;
  case OperandKind::M0:
    return kM0;
  case OperandKind::TTMP:
    return kTtmp0 + o.index;
  case OperandKind::FlatScratch:
    return kFlatScratchLo + o.index;
  case OperandKind::Xnack:
    return kXnackMaskLo + o.index;
  default:
    return -1;
  }
}

/// The flat apertures: a FLAT address in [base, base + kApertureBytes) is
/// LDS or the lane's private segment at offset address - base. The bases
/// are the ones Linux's amdkfd gives GFX9 processes (kfd_flat_memory.c:
/// LDS 1 << 48, scratch 2 << 48), outside any host allocation.
constexpr uint64_t kSharedAperture = uint64_t(1) << 48;
constexpr uint64_t kPrivateAperture = uint64_t(2) << 48;
constexpr uint64_t kApertureBytes = uint64_t(1) << 32;

/// src_shared_base/limit, src_private_base/limit (operand fields 235-238)
/// as 64-bit values; src_pops_exiting_wave_id (239) is 0. A 32-bit read
/// gets the low dword (LLVM reads the 64-bit register and takes its high
/// half, noting that the 32-bit read does not give it).
inline uint64_t apertureValue(const Operand &o) {
  switch (o.index) {
  case 235:
    return kSharedAperture;
  case 236:
    return kSharedAperture + kApertureBytes - 1;
  case 237:
    return kPrivateAperture;
  case 238:
    return kPrivateAperture + kApertureBytes - 1;
  default:
    return 0;
  }
}

/// A scalar operand's low dword (registers, constants, SCC/VCCZ/EXECZ).
inline uint32_t scalar32(const Wave &w, const Operand &o) {
  int r = scalarIndex(o);
  if (r >= 0)
    return w.s[r];
  switch (o.kind) {
  case OperandKind::SCC:
    return w.scc;
  case OperandKind::VCCZ:
    return w.vcc() == 0;
  case OperandKind::EXECZ:
    return w.exec() == 0;
  case OperandKind::ApertureSrc:
    return uint32_t(apertureValue(o));
  default:
    return uint32_t(o.imm);
  }
}

/// A 64-bit scalar operand (register pairs, 64-bit constants).
inline uint64_t scalar64(const Wave &w, const Operand &o) {
  int r = scalarIndex(o);
  if (r >= 0)
    return w.s[r] | uint64_t(w.s[r + 1]) << 32;
  if (o.isConstant())
    return o.imm;
  if (o.kind == OperandKind::ApertureSrc)
    return apertureValue(o);
  return scalar32(w, o);
}

/// Lane `l`'s address of a GLOBAL/FLAT instruction (saddr + 32-bit vaddr,
/// or a 64-bit vaddr; plus the offset).
inline uint64_t globalAddress(const Wave &w, const Instruction &in,
                              unsigned l) {
  const Operand &vaddr = in.src[0], &saddr = in.src[2];
  if (saddr.kind != OperandKind::None)
    return scalar64(w, saddr) + w.vgpr(vaddr.index)[l] + int64_t(in.offset);
  return (w.vgpr(vaddr.index)[l] | uint64_t(w.vgpr(vaddr.index + 1)[l]) << 32) +
         int64_t(in.offset);
}

/// Writes a scalar destination's dword `i`.
inline void setScalar(Wave &w, const Operand &o, unsigned i, uint32_t x) {
  int r = scalarIndex(o);
  if (r >= 0 && r + i < kScalarRegs)
    w.s[r + i] = x;
}
inline void setScalar64(Wave &w, const Operand &o, uint64_t x) {
  setScalar(w, o, 0, uint32_t(x));
  setScalar(w, o, 1, uint32_t(x >> 32));
}

/// 64 lanes of a 32-bit VALU source: the VGPR itself or `tmp` filled with
/// the scalar value.
inline const uint32_t *vsrc32(const Wave &w, const Operand &o, uint32_t *tmp) {
  if (o.kind == OperandKind::VGPR)
    return w.vgpr(o.index);
  uint32_t x = scalar32(w, o);
  for (unsigned l = 0; l < kWaveLanes; ++l)
    tmp[l] = x;
  return tmp;
}

/// 64 lanes of a 64-bit VALU source, gathered into `tmp`.
inline void vsrc64(const Wave &w, const Operand &o, uint64_t *tmp) {
  if (o.kind == OperandKind::VGPR) {
    const uint32_t *lo = w.vgpr(o.index), *hi = w.vgpr(o.index + 1);
    for (unsigned l = 0; l < kWaveLanes; ++l)
      tmp[l] = lo[l] | uint64_t(hi[l]) << 32;
    return;
  }
  uint64_t x = scalar64(w, o);
  for (unsigned l = 0; l < kWaveLanes; ++l)
    tmp[l] = x;
}

/// A lane mask source (VCC, an SGPR pair; a constant as 64 bits).
inline uint64_t maskSrc(const Wave &w, const Operand &o) {
  return scalar64(w, o);
}

inline float asFloat(uint32_t x) {
  float f;
  std::memcpy(&f, &x, 4);
  return f;
}
inline uint32_t asBits(float f) {
  uint32_t x;
  std::memcpy(&x, &f, 4);
  return x;
}
inline double asDouble(uint64_t x) {
  double d;
  std::memcpy(&d, &x, 8);
  return d;
}
inline uint64_t asBits64(double d) {
  uint64_t x;
  std::memcpy(&x, &d, 8);
  return x;
}

/// Checks that every register the instruction names lies in the wave's
/// register files (the descriptor's VGPR count): a kernel touching a VGPR
/// it did not allocate reads another wave's registers on hardware.
bool checkRegisters(const Wave &w, const Instruction &in, ExecContext &ctx);

} // namespace sim
} // namespace fa

#endif // FA_LIB_SIM_EXEC_H
