//===- Profile.h - Execution counts of a gfx906-sim launch ------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. The execution profile (issue 20, first bullet): execution counts
// from the gfx906 simulator, not timing.
//   ProfileCounters  what the dispatch loop collects when a launch asks for
//                    a profile (ExecContext::profile set): per instruction
//                    of the Program how often a wave issued it, per DS
//                    instruction a histogram of its LDS bank-conflict
//                    degrees, the global bytes read and written. One per
//                    worker thread, summed at the end of the launch.
//                    Per DS instruction with a bank access also the LDS
//                    bytes it touched (lowest and highest address over all
//                    executions) and its lanes' address pattern (each
//                    lane's address less the lowest active lane's, where
//                    every execution had the same).
//   SimProfile       the counters by instruction class (VALU with
//                    v_dot2_f32_f16, v_pk_* and v_exp_f32 apart, SALU, LDS
//                    reads / writes / swizzles, global, s_barrier,
//                    s_waitcnt), summed over waves and per wave, the
//                    conflict histograms per DS mnemonic and per DS
//                    instruction (`ds`: pc, histogram, bytes touched, lane
//                    pattern), the waves per
//                    SIMD the kernel descriptor allows, and per backward
//                    branch taken at least once (a loop: the instructions
//                    at pcs [target, branch]) its iterations and its class
//                    counts; `loop` is the most executed one.
//
// The conflict degree is docs/bank-conflicts.md's: 32 banks of 4 bytes; the
// active lanes are served in phases by the access's width per lane (b32 and
// narrower: 32 lanes, b64: 16, b96/b128: 8); within a phase the degree is
// the largest number of distinct dwords that map to one bank (a multi-dword
// access counts each of its dwords), maximised over the phases.
// ds_swizzle_b32, ds_permute_b32 and ds_bpermute_b32 touch no bank and get
// no degree.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_SIM_PROFILE_H
#define FA_LIB_SIM_PROFILE_H

#include "sim/Decoder.h"
#include "sim/Wave.h"

#include <cstdint>
#include <string>
#include <vector>

namespace fa {
namespace sim {

struct KernelDescriptor;
class Program;

/// Degrees 0..32 (0: no active lane).
constexpr unsigned kMaxConflictDegree = 32;
constexpr unsigned kDegreeSlots = kMaxConflictDegree + 1;

/// Where one DS instruction with a bank access went, over its executions.
struct DsAccessRecord {
  uint32_t lowest = UINT32_MAX; ///< lowest LDS byte address touched
  uint32_t highest = 0;         ///< highest LDS byte address touched
  /// Per lane: the lowest and highest of (its address register - the lowest
  /// active lane's) over the executions it was active in; lowDelta >
  /// highDelta: never active.
  int32_t lowDelta[kWaveLanes], highDelta[kWaveLanes];
  DsAccessRecord() {
    for (unsigned l = 0; l < kWaveLanes; ++l) {
      lowDelta[l] = INT32_MAX;
      highDelta[l] = INT32_MIN;
    }
  }
  void add(const DsAccessRecord &o);
};

/// The raw counters of one worker thread (or of the tests' one wave).
struct ProfileCounters {
  std::vector<uint64_t> executed; ///< per instruction index of the Program
  std::vector<uint64_t> degrees;  ///< per instruction index, kDegreeSlots
  std::vector<uint64_t> taken;    ///< per instruction index: jumps taken
  /// Per instruction index: its record in `ds` (UINT32_MAX: none yet),
  /// made at its first execution with a bank access.
  std::vector<uint32_t> dsRecord;
  std::vector<DsAccessRecord> ds;
  uint64_t globalBytesRead = 0, globalBytesWritten = 0;
  uint64_t waves = 0; ///< waves that ran (added by the workgroup runner)

  void reset(size_t numInstructions) {
    executed.assign(numInstructions, 0);
    degrees.assign(numInstructions * kDegreeSlots, 0);
    taken.assign(numInstructions, 0);
    dsRecord.assign(numInstructions, UINT32_MAX);
    ds.clear();
    globalBytesRead = globalBytesWritten = 0;
    waves = 0;
  }
  void add(const ProfileCounters &o);
  /// `index`'s record, made if it has none.
  DsAccessRecord &dsRecordOf(size_t index);
};

/// Counts instruction `index` (`in`) issued by `w`, before it executes (its
/// address registers as the access sees them).
void profileInstruction(ProfileCounters &p, const Wave &w,
                        const Instruction &in, size_t index);

/// Bytes one lane moves: a DS instruction's elements (ds_read2_b32: 8; 0
/// for swizzles and permutes), a GLOBAL/FLAT/SCRATCH one's; 0 otherwise.
unsigned dsBytesPerLane(Op op);
unsigned memoryBytesPerLane(const Instruction &in);

/// The LDS bank-conflict degree of DS instruction `in` with `w`'s active
/// lanes' addresses; -1 for one that touches no bank (swizzle, permute).
/// With `passes`, also the bank cycles the access needs: the sum over its
/// phases of each phase's degree (0 for one that touches no bank).
int ldsConflictDegree(const Wave &w, const Instruction &in,
                      unsigned *passes = nullptr, unsigned *dwords = nullptr);

/// What the timing model records of a memory instruction `in` as wave `w`
/// issues it: `passes` (the bank passes) and `extra` (the distinct dwords
/// of a DS access, the first active lane's 64-byte line of a global or flat
/// load), in the TraceEntry `e` (sim/Timing.h).
struct TraceEntry;
void traceMemoryAccess(TraceEntry &e, const Wave &w, const Instruction &in);

enum class ProfileClass : uint8_t {
  ValuDot2,   ///< v_dot2_f32_f16
  ValuPk,     ///< v_pk_*
  ValuExp,    ///< v_exp_f32
  ValuOther,  ///< every other VALU instruction
  Salu,       ///< SOP1, SOP2, SOPK, SOPC
  Branch,     ///< s_branch, s_cbranch_*
  Barrier,    ///< s_barrier
  Waitcnt,    ///< s_waitcnt
  SoppOther,  ///< s_nop, s_endpgm, ...
  Smem,       ///< s_load_*
  LdsRead,    ///< ds_read*
  LdsWrite,   ///< ds_write*
  LdsSwizzle, ///< ds_swizzle_b32, ds_permute_b32, ds_bpermute_b32
  LdsAtomic,  ///< ds_add_u32
  GlobalLoad, ///< global_load_*, flat_load_*
  GlobalStore,
  Scratch, ///< scratch_*, buffer_* (private memory)
  Count
};
constexpr unsigned kProfileClasses = unsigned(ProfileClass::Count);

ProfileClass profileClassOf(Op op);
/// "valu.v_dot2_f32_f16", "lds.read", ... (the JSON keys).
const char *profileClassName(ProfileClass c);

/// A launch's profile, summarised.
struct SimProfile {
  std::string kernel;
  uint64_t workgroups = 0, waves = 0;
  uint32_t threadsPerWorkgroup = 0;
  uint64_t instructions = 0; ///< wave-instructions
  uint64_t classes[kProfileClasses] = {};
  uint64_t globalBytesRead = 0, globalBytesWritten = 0;

  struct Conflicts {
    std::string mnemonic;
    uint64_t executed = 0;
    uint64_t histogram[kDegreeSlots] = {}; ///< executions by degree
  };
  std::vector<Conflicts> conflicts; ///< per DS mnemonic with a bank access

  /// One executed DS instruction with a bank access.
  struct DsInstruction {
    uint32_t pc = 0;
    std::string mnemonic;
    unsigned elementBytes = 0; ///< bytes of each element per lane
    /// The elements' byte offsets from the lane's address (one, or two for
    /// ds_read2 / ds_write2).
    std::vector<uint32_t> elementOffsets;
    uint64_t executed = 0;
    uint64_t histogram[kDegreeSlots] = {}; ///< executions by degree
    uint32_t lowest = 0, highest = 0;      ///< LDS bytes touched
    /// Per lane: its address less the lowest active lane's, the same in
    /// every execution it was active in (`active[l]`: active in one at
    /// least); both empty where some lane's varied.
    std::vector<int64_t> lanes;
    std::vector<bool> active;
    unsigned maxDegree() const;
  };
  std::vector<DsInstruction> ds; ///< by pc

  // Occupancy from the descriptor (the runtime's own derivation of the
  // compiler's gfx906WavesPerSimd).
  unsigned vgprs = 0, sgprs = 0; ///< allocated per wave (descriptor)
  uint32_t ldsBytes = 0;         ///< per workgroup, static + dynamic
  unsigned wavesPerSimd = 0;
  unsigned byVgpr = 0, bySgpr = 0, byLds = 0;
  std::string limitedBy;

  // The most executed backward branch.
  bool haveLoop = false;
  uint32_t loopHeadPc = 0, loopBranchPc = 0;
  uint64_t loopIterations = 0; ///< executions of the branch, all waves
  uint64_t loopClasses[kProfileClasses] = {};

  /// A backward branch taken at least once: the loop [headPc, branchPc].
  /// iterations = executions of the instruction at headPc (the loop's
  /// entries plus its taken back edges), over all waves; classes counts
  /// the executions of the instructions whose pc is in [headPc, branchPc],
  /// inner loops included, so classes / iterations is the per-iteration
  /// per-wave count a static count of the body (inner loops times their
  /// trips) gives.
  struct Loop {
    uint32_t headPc = 0, branchPc = 0;
    uint64_t iterations = 0;
    uint64_t branchExecutions = 0; ///< the branch, taken or not
    uint64_t taken = 0;            ///< the back edge, taken
    uint64_t classes[kProfileClasses] = {};
  };
  std::vector<Loop> loops; ///< by head pc, then branch pc

  std::string text() const;
  std::string json() const;
};

/// Waves per SIMD on gfx906 for `vgprs`/`sgprs` per wave (granules 4 and
/// 16 of 256 and 800), `ldsBytes` per workgroup (64 KiB per CU shared by
/// its 4 SIMDs) and `threads` per workgroup; at most 10. `p`'s occupancy
/// fields are set.
void setOccupancy(SimProfile &p, unsigned vgprs, unsigned sgprs,
                  uint32_t ldsBytes, uint32_t threads);

/// Sums `c` by class, conflicts by mnemonic, finds the loop.
SimProfile summarizeProfile(const Program &program, const ProfileCounters &c);

} // namespace sim
} // namespace fa

#endif // FA_LIB_SIM_PROFILE_H
