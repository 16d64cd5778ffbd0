//===- ExecScalar.cpp - SALU, program control and SMEM semantics ----------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the scalar instructions (SOP1, SOP2, SOPK, SOPC),
// program control (SOPP: branches, s_barrier, s_endpgm, s_waitcnt) and
// scalar memory loads (SMEM), from the Vega 7nm ISA reference's
// definitions. SCC is written exactly where the ISA text says (carry or
// borrow for the 32-bit add/sub family, signed overflow for the _i32 forms,
// "result != 0" for the bitwise and shift operations, nothing for s_mul,
// s_cselect, s_mov, s_bfm).
//
//===----------------------------------------------------------------------===//

#include "sim/Exec.h"
#include "sim/LdsRaces.h"

#include <algorithm>

using namespace fa;
using namespace fa::sim;

namespace {

inline uint32_t S0(const Wave &w, const Instruction &in) {
  return scalar32(w, in.src[0]);
}
inline uint32_t S1(const Wave &w, const Instruction &in) {
  return scalar32(w, in.src[1]);
}
inline uint64_t S0_64(const Wave &w, const Instruction &in) {
  return scalar64(w, in.src[0]);
}
inline uint64_t S1_64(const Wave &w, const Instruction &in) {
  return scalar64(w, in.src[1]);
}
inline void D(Wave &w, const Instruction &in, uint32_t x) {
  setScalar(w, in.dst[0], 0, x);
}
inline void D64(Wave &w, const Instruction &in, uint64_t x) {
  setScalar64(w, in.dst[0], x);
}

//===----------------------------------------------------------------------===//
// SOP2
//===----------------------------------------------------------------------===//

template <int Kind> bool addSub(Wave &w, const Instruction &in, ExecContext &) {
  uint64_t a = S0(w, in), b = S1(w, in);
  uint64_t r;
  switch (Kind) {
  case 0: // s_add_u32: SCC = carry out
    r = a + b;
    w.scc = r >> 32;
    break;
  case 1: // s_sub_u32: SCC = borrow
    r = a - b;
    w.scc = b > a;
    break;
  case 2: // s_addc_u32
    r = a + b + w.scc;
    w.scc = r >> 32;
    break;
  default: // s_subb_u32
    r = a - b - w.scc;
    w.scc = b + w.scc > a;
    break;
  }
  D(w, in, uint32_t(r));
  return true;
}

template <bool Sub>
bool addSubI32(Wave &w, const Instruction &in, ExecContext &) {
  int64_t a = int32_t(S0(w, in)), b = int32_t(S1(w, in));
  int64_t r = Sub ? a - b : a + b;
  // SCC = signed overflow.
  w.scc = r != int64_t(int32_t(r));
  D(w, in, uint32_t(r));
  return true;
}

template <typename T, bool Max>
bool minMax(Wave &w, const Instruction &in, ExecContext &) {
  T a = T(S0(w, in)), b = T(S1(w, in));
  bool pickA = Max ? a > b : a < b;
  w.scc = pickA;
  D(w, in, uint32_t(pickA ? a : b));
  return true;
}

template <bool Wide>
bool cselect(Wave &w, const Instruction &in, ExecContext &) {
  if (Wide)
    D64(w, in, w.scc ? S0_64(w, in) : S1_64(w, in));
  else
    D(w, in, w.scc ? S0(w, in) : S1(w, in));
  return true;
}

enum BitOp { And, Or, Xor, Andn2, Orn2, Nand, Nor, Xnor };

template <typename T> T bitOp(BitOp op, T a, T b) {
  switch (op) {
  case And:
    return a & b;
  case Or:
    return a | b;
  case Xor:
    return a ^ b;
  case Andn2:
    return a & ~b;
  case Orn2:
    return a | ~b;
  case Nand:
    return ~(a & b);
  case Nor:
    return ~(a | b);
  default:
    return ~(a ^ b);
  }
}

template <BitOp Op, bool Wide>
bool bitwise(Wave &w, const Instruction &in, ExecContext &) {
  if (Wide) {
    uint64_t r = bitOp<uint64_t>(Op, S0_64(w, in), S1_64(w, in));
    D64(w, in, r);
    w.scc = r != 0;
  } else {
    uint32_t r = bitOp<uint32_t>(Op, S0(w, in), S1(w, in));
    D(w, in, r);
    w.scc = r != 0;
  }
  return true;
}

enum ShiftOp { Shl, Shr, Sar };

template <ShiftOp Op, bool Wide>
bool shift(Wave &w, const Instruction &in, ExecContext &) {
  uint32_t n = S1(w, in);
  if (Wide) {
    uint64_t a = S0_64(w, in), r;
    n &= 63;
    r = Op == Shl ? a << n : Op == Shr ? a >> n : uint64_t(int64_t(a) >> n);
    D64(w, in, r);
    w.scc = r != 0;
  } else {
    uint32_t a = S0(w, in), r;
    n &= 31;
    r = Op == Shl ? a << n : Op == Shr ? a >> n : uint32_t(int32_t(a) >> n);
    D(w, in, r);
    w.scc = r != 0;
  }
  return true;
}

bool sBfm(Wave &w, const Instruction &in, ExecContext &) {
  uint32_t width = S0(w, in) & 31, off = S1(w, in) & 31;
  D(w, in, ((uint32_t(1) << width) - 1) << off);
  return true;
}

/// s_bfe_*: S1[22:16] bits of S0 from bit S1[4:0] (S1[5:0] for 64 bits),
/// zero- or sign-extended; a width of 0 gives 0. SCC = D != 0.
template <bool Signed, bool Wide>
bool sBfe(Wave &w, const Instruction &in, ExecContext &) {
  constexpr unsigned bits = Wide ? 64 : 32;
  uint64_t a = Wide ? S0_64(w, in) : S0(w, in);
  uint32_t ctl = S1(w, in);
  unsigned off = ctl & (bits - 1), width = (ctl >> 16) & 0x7f;
  uint64_t r = 0;
  if (width != 0) {
    // Bits past the operand's top read as 0.
    uint64_t keep = width >= 64 ? ~uint64_t(0) : (uint64_t(1) << width) - 1;
    r = (a >> off) & keep;
    if (Signed && width < bits && (r >> (width - 1)) & 1)
      r |= ~keep;
  }
  if (Wide) {
    D64(w, in, r);
  } else {
    D(w, in, uint32_t(r));
    r = uint32_t(r);
  }
  w.scc = r != 0;
  return true;
}

bool sMulI32(Wave &w, const Instruction &in, ExecContext &) {
  D(w, in, S0(w, in) * S1(w, in));
  return true;
}

template <bool Signed>
bool sMulHi(Wave &w, const Instruction &in, ExecContext &) {
  if (Signed)
    D(w, in,
      uint32_t((int64_t(int32_t(S0(w, in))) * int32_t(S1(w, in))) >> 32));
  else
    D(w, in, uint32_t((uint64_t(S0(w, in)) * S1(w, in)) >> 32));
  return true;
}

template <int N> bool sLshlAdd(Wave &w, const Instruction &in, ExecContext &) {
  // D = (S0 << N) + S1; SCC = the sum does not fit in 32 bits.
  uint64_t r = (uint64_t(S0(w, in)) << N) + S1(w, in);
  D(w, in, uint32_t(r));
  w.scc = r >> 32;
  return true;
}

//===----------------------------------------------------------------------===//
// SOPK
//===----------------------------------------------------------------------===//

bool sMovk(Wave &w, const Instruction &in, ExecContext &) {
  D(w, in, uint32_t(int32_t(in.simm16)));
  return true;
}

enum Cmp { Eq, Lg, Gt, Ge, Lt, Le };

template <typename T> bool compare(Cmp c, T a, T b) {
  switch (c) {
  case Eq:
    return a == b;
  case Lg:
    return a != b;
  case Gt:
    return a > b;
  case Ge:
    return a >= b;
  case Lt:
    return a < b;
  default:
    return a <= b;
  }
}

template <Cmp C, bool Signed>
bool sCmpk(Wave &w, const Instruction &in, ExecContext &) {
  uint32_t a = S0(w, in);
  if (Signed)
    w.scc = compare<int32_t>(C, int32_t(a), int32_t(in.simm16));
  else
    w.scc = compare<uint32_t>(C, a, uint32_t(uint16_t(in.simm16)));
  return true;
}

bool sAddk(Wave &w, const Instruction &in, ExecContext &) {
  int64_t a = int32_t(scalar32(w, in.dst[0])), r = a + in.simm16;
  w.scc = r != int64_t(int32_t(r));
  D(w, in, uint32_t(r));
  return true;
}

bool sMulk(Wave &w, const Instruction &in, ExecContext &) {
  D(w, in, scalar32(w, in.dst[0]) * uint32_t(int32_t(in.simm16)));
  return true;
}

//===----------------------------------------------------------------------===//
// SOP1
//===----------------------------------------------------------------------===//

template <bool Wide, bool Conditional>
bool sMov(Wave &w, const Instruction &in, ExecContext &) {
  if (Conditional && !w.scc)
    return true;
  if (Wide)
    D64(w, in, S0_64(w, in));
  else
    D(w, in, S0(w, in));
  return true;
}

template <bool Wide> bool sNot(Wave &w, const Instruction &in, ExecContext &) {
  if (Wide) {
    uint64_t r = ~S0_64(w, in);
    D64(w, in, r);
    w.scc = r != 0;
  } else {
    uint32_t r = ~S0(w, in);
    D(w, in, r);
    w.scc = r != 0;
  }
  return true;
}

bool sBrev(Wave &w, const Instruction &in, ExecContext &) {
  uint32_t a = S0(w, in), r = 0;
  for (int i = 0; i < 32; ++i)
    r |= ((a >> i) & 1) << (31 - i);
  D(w, in, r);
  return true;
}

template <bool Wide> bool sFf1(Wave &w, const Instruction &in, ExecContext &) {
  uint64_t a = Wide ? S0_64(w, in) : S0(w, in);
  D(w, in, a ? uint32_t(__builtin_ctzll(a)) : 0xffffffffu);
  return true;
}

bool sFlbit(Wave &w, const Instruction &in, ExecContext &) {
  uint32_t a = S0(w, in);
  D(w, in, a ? uint32_t(__builtin_clz(a)) : 0xffffffffu);
  return true;
}

template <int Bits> bool sSext(Wave &w, const Instruction &in, ExecContext &) {
  uint32_t a = S0(w, in);
  D(w, in,
    Bits == 8 ? uint32_t(int32_t(int8_t(a))) : uint32_t(int32_t(int16_t(a))));
  return true;
}

bool sGetpc(Wave &w, const Instruction &in, ExecContext &) {
  D64(w, in, uint64_t(in.pc) + in.size);
  return true;
}

bool sSetpc(Wave &w, const Instruction &in, ExecContext &ctx) {
  ctx.nextPc = S0_64(w, in);
  return true;
}

bool sSwappc(Wave &w, const Instruction &in, ExecContext &ctx) {
  uint64_t target = S0_64(w, in);
  D64(w, in, uint64_t(in.pc) + in.size);
  ctx.nextPc = target;
  return true;
}

/// s_*_saveexec_b64: D = EXEC; EXEC = op(S0, EXEC); SCC = EXEC != 0.
template <BitOp Op>
bool sSaveexec(Wave &w, const Instruction &in, ExecContext &) {
  uint64_t exec = w.exec(), s0 = S0_64(w, in);
  uint64_t e = bitOp<uint64_t>(Op, s0, exec);
  D64(w, in, exec);
  w.setExec(e);
  w.scc = e != 0;
  return true;
}

bool sAbs(Wave &w, const Instruction &in, ExecContext &) {
  int32_t a = int32_t(S0(w, in));
  uint32_t r = a < 0 ? uint32_t(0) - uint32_t(a) : uint32_t(a);
  D(w, in, r);
  w.scc = r != 0;
  return true;
}

//===----------------------------------------------------------------------===//
// SOPC
//===----------------------------------------------------------------------===//

template <Cmp C, int Kind> // 0 i32, 1 u32, 2 u64
bool sCmp(Wave &w, const Instruction &in, ExecContext &) {
  if (Kind == 2)
    w.scc = compare<uint64_t>(C, S0_64(w, in), S1_64(w, in));
  else if (Kind == 1)
    w.scc = compare<uint32_t>(C, S0(w, in), S1(w, in));
  else
    w.scc = compare<int32_t>(C, int32_t(S0(w, in)), int32_t(S1(w, in)));
  return true;
}

template <bool One>
bool sBitcmp(Wave &w, const Instruction &in, ExecContext &) {
  bool bit = (S0(w, in) >> (S1(w, in) & 31)) & 1;
  w.scc = One ? bit : !bit;
  return true;
}

//===----------------------------------------------------------------------===//
// SOPP
//===----------------------------------------------------------------------===//

bool sNop(Wave &, const Instruction &, ExecContext &) { return true; }

bool sEndpgm(Wave &w, const Instruction &, ExecContext &) {
  w.state = Wave::State::Ended;
  return true;
}

bool sBarrier(Wave &w, const Instruction &, ExecContext &) {
  w.state = Wave::State::AtBarrier;
  return true;
}

enum BranchCond { Always, Scc0, Scc1, Vccz, Vccnz, Execz, Execnz };

template <BranchCond C>
bool sBranch(Wave &w, const Instruction &in, ExecContext &ctx) {
  bool taken;
  switch (C) {
  case Always:
    taken = true;
    break;
  case Scc0:
    taken = !w.scc;
    break;
  case Scc1:
    taken = w.scc;
    break;
  case Vccz:
    taken = w.vcc() == 0;
    break;
  case Vccnz:
    taken = w.vcc() != 0;
    break;
  case Execz:
    taken = w.exec() == 0;
    break;
  default:
    taken = w.exec() != 0;
    break;
  }
  if (taken)
    ctx.nextPc = in.branchTarget;
  return true;
}

/// s_waitcnt: waits until at most N operations of each counter are
/// outstanding. The simulator completes memory operations at issue; what it
/// models is which destinations the program may read (Wave.h).
bool sWaitcnt(Wave &w, const Instruction &in, ExecContext &) {
  auto wait = [&](unsigned c, uint32_t n) {
    if (w.issued[c] >= n)
      w.completed[c] = std::max(w.completed[c], w.issued[c] - n);
    if (n == 0)
      w.completedAll[c] = w.issued[c];
    // In-order counters: everything up to `completed` is done.
    if (c != kLgkmCnt || w.completedAll[c] >= w.issued[c])
      w.completedAll[c] = std::max(w.completedAll[c], w.completed[c]);
  };
  wait(kVmCnt, in.vmcnt);
  wait(kLgkmCnt, in.lgkmcnt);
  wait(kExpCnt, in.expcnt);
  return true;
}

bool sTrap(Wave &w, const Instruction &in, ExecContext &ctx) {
  return ctx.fail(w, in, ErrorCode::LaunchFailed,
                  "s_trap " + std::to_string(in.simm16 & 0xff) +
                      " (the kernel trapped: an abort or assertion)");
}

//===----------------------------------------------------------------------===//
// SMEM
//===----------------------------------------------------------------------===//

template <unsigned Dwords, bool Buffer>
bool sLoad(Wave &w, const Instruction &in, ExecContext &ctx) {
  uint64_t base;
  uint64_t limit = UINT64_MAX;
  int r = scalarIndex(in.src[0]);
  if (r < 0)
    return ctx.fail(w, in, ErrorCode::Unsupported, "sbase is not an SGPR");
  if (Buffer) {
    // V# words 0-1: base (47:0); word 2: num_records (bytes, stride 0).
    base = (w.s[r] | uint64_t(w.s[r + 1]) << 32) & 0xffffffffffffull;
    limit = w.s[r + 2];
  } else {
    base = w.s[r] | uint64_t(w.s[r + 1]) << 32;
  }
  uint64_t off = 0;
  if (in.smemImm)
    off += uint32_t(in.offset);
  if (in.smemSoffset)
    off += scalar32(w, in.src[1]);
  // The ISA ignores the two low address bits of dword loads.
  uint64_t addr = (base + off) & ~uint64_t(3);
  uint64_t bytes = 4 * Dwords;
  const Region *region = nullptr;
  if (Buffer && off + bytes > limit)
    region = nullptr; // out of the buffer's range: report below
  else
    region = ctx.memory->find(addr, bytes, ctx.hint);
  if (!region)
    return ctx.fail(w, in, ErrorCode::LaunchFailed,
                    "out-of-bounds scalar load: " + std::to_string(bytes) +
                        " bytes at address " + std::to_string(addr) +
                        " are not inside one allocation");
  const uint32_t *p = reinterpret_cast<const uint32_t *>(uintptr_t(addr));
  for (unsigned i = 0; i < Dwords; ++i)
    setScalar(w, in.dst[0], i, p[i]);
  if (ctx.checks->waitcnt) {
    uint32_t seq = ++w.issued[kLgkmCnt];
    int d = scalarIndex(in.dst[0]);
    for (unsigned i = 0; d >= 0 && i < Dwords && d + i < kScalarRegs; ++i)
      w.pendingS[d + i] = PendingWrite{seq, kLgkmCnt, true, in.pc};
  }
  return true;
}

} // namespace

void fa::sim::registerSalu(ExecFn *t) {
  auto set = [&](Op op, ExecFn fn) { t[unsigned(op)] = fn; };
  set(Op::S_ADD_U32, addSub<0>);
  set(Op::S_SUB_U32, addSub<1>);
  set(Op::S_ADDC_U32, addSub<2>);
  set(Op::S_SUBB_U32, addSub<3>);
  set(Op::S_ADD_I32, addSubI32<false>);
  set(Op::S_SUB_I32, addSubI32<true>);
  set(Op::S_MIN_I32, minMax<int32_t, false>);
  set(Op::S_MIN_U32, minMax<uint32_t, false>);
  set(Op::S_MAX_I32, minMax<int32_t, true>);
  set(Op::S_MAX_U32, minMax<uint32_t, true>);
  set(Op::S_CSELECT_B32, cselect<false>);
  set(Op::S_CSELECT_B64, cselect<true>);
  set(Op::S_AND_B32, bitwise<And, false>);
  set(Op::S_AND_B64, bitwise<And, true>);
  set(Op::S_OR_B32, bitwise<Or, false>);
  set(Op::S_OR_B64, bitwise<Or, true>);
  set(Op::S_XOR_B32, bitwise<Xor, false>);
  set(Op::S_XOR_B64, bitwise<Xor, true>);
  set(Op::S_ANDN2_B32, bitwise<Andn2, false>);
  set(Op::S_ANDN2_B64, bitwise<Andn2, true>);
  set(Op::S_ORN2_B32, bitwise<Orn2, false>);
  set(Op::S_ORN2_B64, bitwise<Orn2, true>);
  set(Op::S_LSHL_B32, shift<Shl, false>);
  set(Op::S_LSHL_B64, shift<Shl, true>);
  set(Op::S_LSHR_B32, shift<Shr, false>);
  set(Op::S_LSHR_B64, shift<Shr, true>);
  set(Op::S_ASHR_I32, shift<Sar, false>);
  set(Op::S_ASHR_I64, shift<Sar, true>);
  set(Op::S_BFM_B32, sBfm);
  set(Op::S_MUL_I32, sMulI32);
  set(Op::S_BFE_U32, sBfe<false, false>);
  set(Op::S_BFE_I32, sBfe<true, false>);
  set(Op::S_BFE_U64, sBfe<false, true>);
  set(Op::S_BFE_I64, sBfe<true, true>);
  set(Op::S_MUL_HI_U32, sMulHi<false>);
  set(Op::S_MUL_HI_I32, sMulHi<true>);
  set(Op::S_LSHL1_ADD_U32, sLshlAdd<1>);
  set(Op::S_LSHL2_ADD_U32, sLshlAdd<2>);
  set(Op::S_LSHL3_ADD_U32, sLshlAdd<3>);
  set(Op::S_LSHL4_ADD_U32, sLshlAdd<4>);

  set(Op::S_MOVK_I32, sMovk);
  set(Op::S_CMPK_EQ_I32, sCmpk<Eq, true>);
  set(Op::S_CMPK_LG_I32, sCmpk<Lg, true>);
  set(Op::S_CMPK_GT_I32, sCmpk<Gt, true>);
  set(Op::S_CMPK_GE_I32, sCmpk<Ge, true>);
  set(Op::S_CMPK_LT_I32, sCmpk<Lt, true>);
  set(Op::S_CMPK_LE_I32, sCmpk<Le, true>);
  set(Op::S_CMPK_EQ_U32, sCmpk<Eq, false>);
  set(Op::S_CMPK_LG_U32, sCmpk<Lg, false>);
  set(Op::S_CMPK_GT_U32, sCmpk<Gt, false>);
  set(Op::S_CMPK_GE_U32, sCmpk<Ge, false>);
  set(Op::S_CMPK_LT_U32, sCmpk<Lt, false>);
  set(Op::S_CMPK_LE_U32, sCmpk<Le, false>);
  set(Op::S_ADDK_I32, sAddk);
  set(Op::S_MULK_I32, sMulk);

  set(Op::S_MOV_B32, sMov<false, false>);
  set(Op::S_MOV_B64, sMov<true, false>);
  set(Op::S_CMOV_B32, sMov<false, true>);
  set(Op::S_CMOV_B64, sMov<true, true>);
  set(Op::S_NOT_B32, sNot<false>);
  set(Op::S_NOT_B64, sNot<true>);
  set(Op::S_BREV_B32, sBrev);
  set(Op::S_FF1_I32_B32, sFf1<false>);
  set(Op::S_FF1_I32_B64, sFf1<true>);
  set(Op::S_FLBIT_I32_B32, sFlbit);
  set(Op::S_SEXT_I32_I8, sSext<8>);
  set(Op::S_SEXT_I32_I16, sSext<16>);
  set(Op::S_GETPC_B64, sGetpc);
  set(Op::S_SETPC_B64, sSetpc);
  set(Op::S_SWAPPC_B64, sSwappc);
  set(Op::S_AND_SAVEEXEC_B64, sSaveexec<And>);
  set(Op::S_OR_SAVEEXEC_B64, sSaveexec<Or>);
  set(Op::S_XOR_SAVEEXEC_B64, sSaveexec<Xor>);
  set(Op::S_ANDN2_SAVEEXEC_B64, sSaveexec<Andn2>);
  set(Op::S_ABS_I32, sAbs);

  set(Op::S_CMP_EQ_I32, sCmp<Eq, 0>);
  set(Op::S_CMP_LG_I32, sCmp<Lg, 0>);
  set(Op::S_CMP_GT_I32, sCmp<Gt, 0>);
  set(Op::S_CMP_GE_I32, sCmp<Ge, 0>);
  set(Op::S_CMP_LT_I32, sCmp<Lt, 0>);
  set(Op::S_CMP_LE_I32, sCmp<Le, 0>);
  set(Op::S_CMP_EQ_U32, sCmp<Eq, 1>);
  set(Op::S_CMP_LG_U32, sCmp<Lg, 1>);
  set(Op::S_CMP_GT_U32, sCmp<Gt, 1>);
  set(Op::S_CMP_GE_U32, sCmp<Ge, 1>);
  set(Op::S_CMP_LT_U32, sCmp<Lt, 1>);
  set(Op::S_CMP_LE_U32, sCmp<Le, 1>);
  set(Op::S_BITCMP0_B32, sBitcmp<false>);
  set(Op::S_BITCMP1_B32, sBitcmp<true>);
  set(Op::S_CMP_EQ_U64, sCmp<Eq, 2>);
  set(Op::S_CMP_LG_U64, sCmp<Lg, 2>);

  set(Op::S_LOAD_DWORD, sLoad<1, false>);
  set(Op::S_LOAD_DWORDX2, sLoad<2, false>);
  set(Op::S_LOAD_DWORDX4, sLoad<4, false>);
  set(Op::S_LOAD_DWORDX8, sLoad<8, false>);
  set(Op::S_LOAD_DWORDX16, sLoad<16, false>);
  set(Op::S_BUFFER_LOAD_DWORD, sLoad<1, true>);
  set(Op::S_BUFFER_LOAD_DWORDX2, sLoad<2, true>);
  set(Op::S_BUFFER_LOAD_DWORDX4, sLoad<4, true>);
}

void fa::sim::registerSopp(ExecFn *t) {
  auto set = [&](Op op, ExecFn fn) { t[unsigned(op)] = fn; };
  set(Op::S_NOP, sNop);
  set(Op::S_ENDPGM, sEndpgm);
  set(Op::S_BRANCH, sBranch<Always>);
  set(Op::S_CBRANCH_SCC0, sBranch<Scc0>);
  set(Op::S_CBRANCH_SCC1, sBranch<Scc1>);
  set(Op::S_CBRANCH_VCCZ, sBranch<Vccz>);
  set(Op::S_CBRANCH_VCCNZ, sBranch<Vccnz>);
  set(Op::S_CBRANCH_EXECZ, sBranch<Execz>);
  set(Op::S_CBRANCH_EXECNZ, sBranch<Execnz>);
  set(Op::S_BARRIER, sBarrier);
  set(Op::S_WAITCNT, sWaitcnt);
  set(Op::S_SLEEP, sNop);
  set(Op::S_SETPRIO, sNop);
  set(Op::S_TRAP, sTrap);
}
