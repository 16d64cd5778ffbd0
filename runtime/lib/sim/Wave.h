//===- Wave.h - The state of one simulated gfx906 wave ----------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. A wave64's architectural state as the simulator keeps it:
//   - the scalar operand space as one array indexed by the 8-bit operand
//     code (s0..s101, FLAT_SCRATCH 102-103, XNACK_MASK 104-105, VCC
//     106-107, TTMP 108-123, M0 124, EXEC 126-127), so an SGPR operand is
//     one load whatever register it names;
//   - the VGPRs register-major, 64 lanes contiguous (`v[r * 64 + lane]`),
//     so a VALU operation is a loop over one array;
//   - SCC, the pc, and the float mode from COMPUTE_PGM_RSRC1;
//   - what the s_waitcnt model needs: per register, the sequence number of
//     the load that will write it, and per counter how many have completed.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_SIM_WAVE_H
#define FA_LIB_SIM_WAVE_H

#include <cstdint>
#include <cstring>
#include <vector>

namespace fa {
namespace sim {

constexpr unsigned kWaveLanes = 64;
/// VGPRs past the kernel's own that the engine uses for SDWA and DPP
/// operands.
constexpr unsigned kScratchVgprs = 3;

/// Scalar operand codes (the SSRC/SDST encoding of GFX9).
enum ScalarReg : unsigned {
  kSgprLimit = 102, ///< s0..s101
  kFlatScratchLo = 102,
  kXnackMaskLo = 104,
  kVccLo = 106,
  kVccHi = 107,
  kTtmp0 = 108,
  kM0 = 124,
  kExecLo = 126,
  kExecHi = 127,
  kScalarRegs = 128,
};

/// The memory counters s_waitcnt waits on.
enum Counter : unsigned { kVmCnt = 0, kLgkmCnt = 1, kExpCnt = 2, kCounters };

/// One outstanding memory operation's hold on a register: the operation's
/// sequence number in its counter (0: none).
struct PendingWrite {
  uint32_t seq = 0;
  uint8_t counter = 0;
  bool outOfOrder = false; ///< SMEM: only a wait for 0 covers it
  uint64_t pc = 0;         ///< the load, for the report
};

struct Wave {
  enum class State : uint8_t { Running, AtBarrier, Ended };

  /// Four dwords of slack past EXEC_HI: a 64-bit or buffer-descriptor read
  /// starting at a high operand code (only a damaged encoding names one)
  /// stays inside the array.
  uint32_t s[kScalarRegs + 4] = {};
  std::vector<uint32_t> v; ///< numVgprs * 64
  unsigned numVgprs = 0;
  unsigned numSgprs = 0;
  bool scc = false;
  uint64_t pc = 0;
  int64_t at = 0; ///< the index of the instruction at pc (sim::Program)
  State state = State::Running;
  unsigned id = 0;       ///< wave index within its workgroup
  uint64_t executed = 0; ///< instructions issued
  uint64_t laneOps = 0;  ///< lane-instructions (active lanes summed)

  // The float mode (COMPUTE_PGM_RSRC1, MODE register).
  bool ieeeMode = true;
  bool dx10Clamp = true;
  bool denorm32 = true;   ///< f32 denormals kept (mode 3), else flushed
  bool denorm1664 = true; ///< f16/f64 denormals kept

  // s_waitcnt model (only when hazard checking is on).
  std::vector<PendingWrite> pendingV; ///< per VGPR
  PendingWrite pendingS[kScalarRegs];
  uint32_t issued[kCounters] = {};       ///< operations issued per counter
  uint32_t completed[kCounters] = {};    ///< all with seq <= this are done
  uint32_t completedAll[kCounters] = {}; ///< issued at the last wait for 0

  uint64_t exec() const { return s[kExecLo] | uint64_t(s[kExecHi]) << 32; }
  void setExec(uint64_t e) {
    s[kExecLo] = uint32_t(e);
    s[kExecHi] = uint32_t(e >> 32);
  }
  uint64_t vcc() const { return s[kVccLo] | uint64_t(s[kVccHi]) << 32; }
  void setVcc(uint64_t m) {
    s[kVccLo] = uint32_t(m);
    s[kVccHi] = uint32_t(m >> 32);
  }
  uint64_t sgpr64(unsigned r) const { return s[r] | uint64_t(s[r + 1]) << 32; }
  void setSgpr64(unsigned r, uint64_t x) {
    s[r] = uint32_t(x);
    s[r + 1] = uint32_t(x >> 32);
  }
  uint32_t *vgpr(unsigned r) { return v.data() + size_t(r) * kWaveLanes; }
  const uint32_t *vgpr(unsigned r) const {
    return v.data() + size_t(r) * kWaveLanes;
  }

  /// Sizes the register files and clears every register.
  void reset(unsigned vgprs, unsigned sgprs) {
    numVgprs = vgprs;
    numSgprs = sgprs;
    v.assign(size_t(vgprs + kScratchVgprs) * kWaveLanes, 0);
    std::memset(s, 0, sizeof(s));
    scc = false;
    state = State::Running;
    executed = laneOps = 0;
    pendingV.assign(vgprs, PendingWrite());
    for (PendingWrite &p : pendingS)
      p = PendingWrite();
    for (unsigned c = 0; c < kCounters; ++c)
      issued[c] = completed[c] = completedAll[c] = 0;
  }
};

} // namespace sim
} // namespace fa

#endif // FA_LIB_SIM_WAVE_H
