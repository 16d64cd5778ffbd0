//===- ExecVector.cpp - VALU integer, compare and lane semantics ----------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the vector ALU's integer, bitwise, compare, select,
// carry and cross-lane instructions (VOP1, VOP2, VOPC, VOP3A/B), the VOP3P
// integer operations on 16-bit halves and the integer dot products, from
// the Vega 7nm ISA reference's definitions. Each handler resolves its
// operands once (sim/Exec.h) and loops over the EXEC lanes; a family shares
// one handler whose switch on the Op sits outside the lane loop.
//
// Integer instructions take no input or output modifiers: a VOP3 encoding
// with neg/abs/omod/clamp/op_sel set on one of them is reported as not
// implemented rather than run with the bits ignored (v_add/sub_i16's clamp
// and op_sel and the VOP3P op_sel/op_sel_hi are implemented).
//
//===----------------------------------------------------------------------===//

#include "sim/Exec.h"
#include "sim/VectorUtil.h"

using namespace fa;
using namespace fa::sim;

namespace {

/// The lanes below lane `l` as a 64-bit mask, and its bits 31:0.
uint64_t lanesBelow64(unsigned l) { return (uint64_t(1) << l) - 1; }
uint32_t lanesBelow(unsigned l) { return uint32_t(lanesBelow64(l)); }

bool noModifiers(const Wave &w, const Instruction &in, ExecContext &ctx) {
  if (in.neg | in.abs | in.negHi | in.opSel | in.omod | in.clamp)
    return ctx.fail(w, in, ErrorCode::Unsupported,
                    "input/output modifiers on an integer instruction are "
                    "not implemented by gfx906-sim");
  return true;
}

/// Two- and three-source 32-bit integer operations.
bool vInt(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (!noModifiers(w, in, ctx))
    return false;
  uint32_t t0[kWaveLanes], t1[kWaveLanes], t2[kWaveLanes];
  const uint32_t *a = vsrc32(w, in.src[0], t0);
  const uint32_t *b = in.numSrc > 1 ? vsrc32(w, in.src[1], t1) : t1;
  const uint32_t *c = in.numSrc > 2 ? vsrc32(w, in.src[2], t2) : t2;
  uint32_t *d = w.vgpr(in.dst[0].index);
  uint64_t exec = w.exec();
#define LANES(expr)                                                            \
  forLanes(exec, [&](unsigned l) {                                             \
    uint32_t A = a[l], B = b[l], C = c[l];                                     \
    (void)A, (void)B, (void)C;                                                 \
    d[l] = (expr);                                                             \
  });                                                                          \
  return true
  switch (in.op) {
  case Op::V_ADD_U32:
    LANES(A + B);
  case Op::V_SUB_U32:
    LANES(A - B);
  case Op::V_SUBREV_U32:
    LANES(B - A);
  case Op::V_MUL_I32_I24:
    LANES(uint32_t(int64_t(sext24(A)) * sext24(B)));
  case Op::V_MUL_HI_I32_I24:
    LANES(uint32_t((int64_t(sext24(A)) * sext24(B)) >> 32));
  case Op::V_MUL_U32_U24:
    LANES(uint32_t(uint64_t(A & 0xffffff) * (B & 0xffffff)));
  case Op::V_MUL_HI_U32_U24:
    LANES(uint32_t((uint64_t(A & 0xffffff) * (B & 0xffffff)) >> 32));
  case Op::V_MIN_I32:
    LANES(int32_t(A) < int32_t(B) ? A : B);
  case Op::V_MAX_I32:
    LANES(int32_t(A) > int32_t(B) ? A : B);
  case Op::V_MIN_U32:
    LANES(A < B ? A : B);
  case Op::V_MAX_U32:
    LANES(A > B ? A : B);
  // The *rev shifts take the shift amount in src0.
  case Op::V_LSHRREV_B32:
    LANES(B >> (A & 31));
  case Op::V_ASHRREV_I32:
    LANES(uint32_t(int32_t(B) >> (A & 31)));
  case Op::V_LSHLREV_B32:
    LANES(B << (A & 31));
  case Op::V_AND_B32:
    LANES(A & B);
  case Op::V_OR_B32:
    LANES(A | B);
  case Op::V_XOR_B32:
    LANES(A ^ B);
  case Op::V_XNOR_B32:
    LANES(~(A ^ B));
  case Op::V_NOT_B32:
    LANES(~A);
  case Op::V_BFREV_B32:
    LANES(bitReverse(A));
  case Op::V_FFBH_U32:
    LANES(A ? uint32_t(__builtin_clz(A)) : 0xffffffffu);
  case Op::V_FFBL_B32:
    LANES(A ? uint32_t(__builtin_ctz(A)) : 0xffffffffu);
  case Op::V_FFBH_I32:
    LANES(A == 0 || A == 0xffffffffu
              ? 0xffffffffu
              : uint32_t(__builtin_clz(int32_t(A) < 0 ? ~A : A)) - 1);
  case Op::V_MUL_LO_U32:
    LANES(A * B);
  case Op::V_MUL_HI_U32:
    LANES(uint32_t((uint64_t(A) * B) >> 32));
  case Op::V_MUL_HI_I32:
    LANES(uint32_t((int64_t(int32_t(A)) * int32_t(B)) >> 32));
  case Op::V_BCNT_U32_B32:
    LANES(uint32_t(__builtin_popcount(A)) + B);
  // The set bits of S0 in the lanes below this one (bits 31:0 of the
  // mask for _lo, 63:32 for _hi), plus S1: v_mbcnt_hi(m.hi, v_mbcnt_lo(m.lo,
  // 0)) is the lane's rank among the lanes of m, HIP's lane id with m = ~0.
  case Op::V_MBCNT_LO_U32_B32:
    LANES(uint32_t(__builtin_popcount(A & lanesBelow(l))) + B);
  case Op::V_MBCNT_HI_U32_B32:
    LANES(uint32_t(__builtin_popcount(A & uint32_t(lanesBelow64(l) >> 32))) +
          B);
  case Op::V_BFM_B32:
    LANES(((uint32_t(1) << (A & 31)) - 1) << (B & 31));
  case Op::V_MAD_I32_I24:
    LANES(uint32_t(int64_t(sext24(A)) * sext24(B) + int32_t(C)));
  case Op::V_MAD_U32_U24:
    LANES(uint32_t(uint64_t(A & 0xffffff) * (B & 0xffffff) + C));
  case Op::V_BFE_U32:
    LANES(bfe(A, B & 31, C & 31, false));
  case Op::V_BFE_I32:
    LANES(bfe(A, B & 31, C & 31, true));
  case Op::V_BFI_B32:
    LANES((A & B) | (~A & C));
  case Op::V_ALIGNBIT_B32:
    LANES(uint32_t(((uint64_t(A) << 32) | B) >> (C & 31)));
  case Op::V_MIN3_I32:
    LANES(uint32_t(std::min({int32_t(A), int32_t(B), int32_t(C)})));
  case Op::V_MAX3_I32:
    LANES(uint32_t(std::max({int32_t(A), int32_t(B), int32_t(C)})));
  case Op::V_MIN3_U32:
    LANES(std::min({A, B, C}));
  case Op::V_MAX3_U32:
    LANES(std::max({A, B, C}));
  case Op::V_MED3_I32:
    LANES(uint32_t(med3(int32_t(A), int32_t(B), int32_t(C))));
  case Op::V_MED3_U32:
    LANES(med3(A, B, C));
  case Op::V_PERM_B32:
    LANES(bytePerm(A, B, C));
  case Op::V_LSHL_ADD_U32:
    LANES((A << (B & 31)) + C);
  case Op::V_ADD_LSHL_U32:
    LANES((A + B) << (C & 31));
  case Op::V_ADD3_U32:
    LANES(A + B + C);
  case Op::V_LSHL_OR_B32:
    LANES((A << (B & 31)) | C);
  case Op::V_AND_OR_B32:
    LANES((A & B) | C);
  case Op::V_OR3_B32:
    LANES(A | B | C);
  case Op::V_CVT_PK_U16_U32:
    LANES((A & 0xffff) | (B << 16));
  default:
    break;
  }
#undef LANES
  return ctx.fail(w, in, ErrorCode::Internal, "no integer semantics");
}

bool vMov(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (!noModifiers(w, in, ctx))
    return false;
  uint32_t t0[kWaveLanes];
  const uint32_t *a = vsrc32(w, in.src[0], t0);
  uint32_t *d = w.vgpr(in.dst[0].index);
  forLanes(w.exec(), [&](unsigned l) { d[l] = a[l]; });
  return true;
}

bool vNop(Wave &, const Instruction &, ExecContext &) { return true; }

/// v_cndmask_b32: D = mask[lane] ? S1 : S0. The VOP3 form may carry abs/neg
/// on its sources (a select of negated floats); they act on the bits.
bool vCndmask(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (in.opSel | in.omod | in.clamp)
    return noModifiers(w, in, ctx);
  uint32_t t0[kWaveLanes], t1[kWaveLanes];
  const uint32_t *a = vsrc32(w, in.src[0], t0);
  const uint32_t *b = vsrc32(w, in.src[1], t1);
  uint64_t mask = maskSrc(w, in.src[2]);
  uint32_t am = (in.abs & 1) ? 0x7fffffffu : ~0u, xm = (in.neg & 1) << 31;
  uint32_t bm = (in.abs & 2) ? 0x7fffffffu : ~0u, ym = ((in.neg >> 1) & 1)
                                                       << 31;
  uint32_t *d = w.vgpr(in.dst[0].index);
  forLanes(w.exec(), [&](unsigned l) {
    d[l] = (mask >> l) & 1 ? (b[l] & bm) ^ ym : (a[l] & am) ^ xm;
  });
  return true;
}

/// The carry family: D = S0 op S1 [op carry-in]; carry-out per lane into
/// dst[1] (VCC or an SGPR pair). Lanes outside EXEC get a 0 carry bit, as
/// VOPC results do.
bool vCarry(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (!noModifiers(w, in, ctx))
    return false;
  uint32_t t0[kWaveLanes], t1[kWaveLanes];
  const uint32_t *a = vsrc32(w, in.src[0], t0);
  const uint32_t *b = vsrc32(w, in.src[1], t1);
  bool carryIn = in.info().flags & OF_CarryIn;
  uint64_t cin = carryIn ? maskSrc(w, in.src[2]) : 0;
  uint32_t *d = w.vgpr(in.dst[0].index);
  uint64_t cout = 0;
  Op op = in.op;
  forLanes(w.exec(), [&](unsigned l) {
    uint64_t A = a[l], B = b[l], C = (cin >> l) & 1;
    uint64_t r;
    bool carry;
    switch (op) {
    case Op::V_ADD_CO_U32:
    case Op::V_ADDC_CO_U32:
      r = A + B + C;
      carry = r >> 32;
      break;
    case Op::V_SUB_CO_U32:
    case Op::V_SUBB_CO_U32:
      r = A - B - C;
      carry = B + C > A;
      break;
    default: // V_SUBREV_CO_U32, V_SUBBREV_CO_U32
      r = B - A - C;
      carry = A + C > B;
      break;
    }
    d[l] = uint32_t(r);
    cout |= uint64_t(carry) << l;
  });
  setScalar64(w, in.dst[1], cout);
  return true;
}

/// v_mad_u64_u32 / v_mad_i64_i32: D64 = S0 * S1 + S2 (64-bit); the carry of
/// the 64-bit addition goes to dst[1].
template <bool Signed>
bool vMad64(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (in.clamp)
    return noModifiers(w, in, ctx);
  uint32_t t0[kWaveLanes], t1[kWaveLanes];
  uint64_t c[kWaveLanes];
  const uint32_t *a = vsrc32(w, in.src[0], t0);
  const uint32_t *b = vsrc32(w, in.src[1], t1);
  vsrc64(w, in.src[2], c);
  uint32_t *lo = w.vgpr(in.dst[0].index), *hi = w.vgpr(in.dst[0].index + 1);
  uint64_t cout = 0;
  forLanes(w.exec(), [&](unsigned l) {
    unsigned __int128 p, r;
    bool carry;
    if (Signed) {
      __int128 sp = __int128(int64_t(int32_t(a[l]))) * int32_t(b[l]);
      __int128 sr = sp + __int128(int64_t(c[l]));
      r = (unsigned __int128)sr;
      carry = sr != __int128(int64_t(uint64_t(sr)));
    } else {
      p = (unsigned __int128)uint64_t(a[l]) * b[l];
      r = p + c[l];
      carry = (r >> 64) != 0;
    }
    lo[l] = uint32_t(uint64_t(r));
    hi[l] = uint32_t(uint64_t(r) >> 32);
    cout |= uint64_t(carry) << l;
  });
  setScalar64(w, in.dst[1], cout);
  return true;
}

/// v_lshlrev_b64 and friends: D64 = S1 (64-bit) shifted by S0[5:0].
bool vShift64(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (!noModifiers(w, in, ctx))
    return false;
  uint32_t t0[kWaveLanes];
  uint64_t b[kWaveLanes];
  const uint32_t *a = vsrc32(w, in.src[0], t0);
  vsrc64(w, in.src[1], b);
  uint32_t *lo = w.vgpr(in.dst[0].index), *hi = w.vgpr(in.dst[0].index + 1);
  Op op = in.op;
  forLanes(w.exec(), [&](unsigned l) {
    unsigned n = a[l] & 63;
    uint64_t r = op == Op::V_LSHLREV_B64   ? b[l] << n
                 : op == Op::V_LSHRREV_B64 ? b[l] >> n
                                           : uint64_t(int64_t(b[l]) >> n);
    lo[l] = uint32_t(r);
    hi[l] = uint32_t(r >> 32);
  });
  return true;
}

/// v_readfirstlane_b32: the first active lane's value (lane 0 if none).
bool vReadfirstlane(Wave &w, const Instruction &in, ExecContext &) {
  uint32_t t0[kWaveLanes];
  const uint32_t *a = vsrc32(w, in.src[0], t0);
  uint64_t exec = w.exec();
  setScalar(w, in.dst[0], 0, a[exec ? __builtin_ctzll(exec) : 0]);
  return true;
}

bool vReadlane(Wave &w, const Instruction &in, ExecContext &) {
  uint32_t t0[kWaveLanes];
  const uint32_t *a = vsrc32(w, in.src[0], t0);
  setScalar(w, in.dst[0], 0, a[scalar32(w, in.src[1]) & 63]);
  return true;
}

/// v_writelane_b32: D[S1 lane] = S0 (a scalar), whatever EXEC says.
bool vWritelane(Wave &w, const Instruction &in, ExecContext &) {
  w.vgpr(in.dst[0].index)[scalar32(w, in.src[1]) & 63] = scalar32(w, in.src[0]);
  return true;
}

/// Integer compares (VOPC): a bit per EXEC lane into VCC or an SGPR pair;
/// inactive lanes get 0. Kind: 0 lt, 1 eq, 2 le, 3 gt, 4 ne, 5 ge.
template <int Kind, typename T>
bool vCmpInt(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (!noModifiers(w, in, ctx))
    return false;
  uint64_t mask = 0, exec = w.exec();
  auto test = [](T A, T B) {
    switch (Kind) {
    case 0:
      return A < B;
    case 1:
      return A == B;
    case 2:
      return A <= B;
    case 3:
      return A > B;
    case 4:
      return A != B;
    default:
      return A >= B;
    }
  };
  if (sizeof(T) == 8) {
    uint64_t a[kWaveLanes], b[kWaveLanes];
    vsrc64(w, in.src[0], a);
    vsrc64(w, in.src[1], b);
    forLanes(exec, [&](unsigned l) {
      mask |= uint64_t(test(T(a[l]), T(b[l]))) << l;
    });
  } else {
    uint32_t t0[kWaveLanes], t1[kWaveLanes];
    const uint32_t *a = vsrc32(w, in.src[0], t0);
    const uint32_t *b = vsrc32(w, in.src[1], t1);
    forLanes(exec, [&](unsigned l) {
      mask |= uint64_t(test(T(a[l]), T(b[l]))) << l;
    });
  }
  setScalar64(w, in.dst[0], mask);
  return true;
}

/// SDWA select: 0-3 byte, 4-5 word, 6 dword.
uint32_t sdwaSelect(uint32_t x, unsigned sel, bool sext) {
  if (sel < 4) {
    uint32_t b = (x >> (8 * sel)) & 0xff;
    return sext ? uint32_t(int32_t(int8_t(b))) : b;
  }
  if (sel < 6) {
    uint32_t h = (x >> (16 * (sel - 4))) & 0xffff;
    return sext ? uint32_t(int32_t(int16_t(h))) : h;
  }
  return x;
}

/// SDWA dst_sel / dst_unused: the result's low byte or word goes to the
/// selected part of D; the other bits are 0 (UNUSED_PAD), the sign
/// extension of the part above it (UNUSED_SEXT) or D's old bits
/// (UNUSED_PRESERVE).
uint32_t sdwaPlace(uint32_t r, uint32_t old, unsigned sel, unsigned unused) {
  if (sel == 6)
    return r;
  unsigned shift = sel < 4 ? 8 * sel : 16 * (sel - 4);
  unsigned width = sel < 4 ? 8 : 16;
  uint32_t field = (uint32_t(1) << width) - 1;
  uint32_t mask = field << shift;
  uint32_t placed = (r & field) << shift;
  if (unused == 2)
    return (old & ~mask) | placed;
  if (unused == 1 && ((r >> (width - 1)) & 1) && shift + width < 32)
    placed |= ~uint32_t(0) << (shift + width);
  return placed;
}

} // namespace

bool fa::sim::execSdwa(Wave &w, const Instruction &in, ExecContext &ctx) {
  ExecFn base = execTable()[unsigned(in.op)];
  Instruction t = in;
  t.sdwa = false;
  const unsigned scratch = w.numVgprs;
  for (unsigned i = 0; i < in.numSrc && i < 2; ++i) {
    unsigned sel = in.sdwaCtl.srcSel[i];
    if (sel == 6)
      continue;
    uint32_t tmp[kWaveLanes];
    const uint32_t *s = vsrc32(w, in.src[i], tmp);
    uint32_t *d = w.vgpr(scratch + i);
    for (unsigned l = 0; l < kWaveLanes; ++l)
      d[l] = sdwaSelect(s[l], sel, in.sdwaCtl.srcSext[i]);
    t.src[i].kind = OperandKind::VGPR;
    t.src[i].index = uint16_t(scratch + i);
    t.src[i].count = 1;
  }
  bool whole = in.enc == Encoding::VOPC ||
               (in.sdwaCtl.dstSel == 6 && in.sdwaCtl.dstUnused == 0);
  if (!whole)
    t.dst[0].index = uint16_t(scratch + 2);
  if (!base(w, t, ctx))
    return false;
  if (!whole) {
    const uint32_t *r = w.vgpr(scratch + 2);
    uint32_t *d = w.vgpr(in.dst[0].index);
    forLanes(w.exec(), [&](unsigned l) {
      d[l] = sdwaPlace(r[l], d[l], in.sdwaCtl.dstSel, in.sdwaCtl.dstUnused);
    });
  }
  return true;
}

namespace {

/// 16-bit integer operations (VOP2, gfx9): the result in bits 15:0, bits
/// 31:16 zeroed (gfx9 has no op_sel for these; gfx10 would preserve).
bool vInt16(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (!noModifiers(w, in, ctx))
    return false;
  uint32_t t0[kWaveLanes], t1[kWaveLanes];
  const uint32_t *a = vsrc32(w, in.src[0], t0);
  const uint32_t *b = vsrc32(w, in.src[1], t1);
  uint32_t *d = w.vgpr(in.dst[0].index);
  Op op = in.op;
  forLanes(w.exec(), [&](unsigned l) {
    uint16_t A = uint16_t(a[l]), B = uint16_t(b[l]);
    uint32_t r;
    switch (op) {
    case Op::V_ADD_U16:
      r = A + B;
      break;
    case Op::V_SUB_U16:
      r = A - B;
      break;
    case Op::V_MUL_LO_U16:
      r = uint32_t(A) * B;
      break;
    // The *rev shifts: the amount (4 bits) in src0.
    case Op::V_LSHLREV_B16:
      r = uint32_t(B) << (A & 15);
      break;
    case Op::V_LSHRREV_B16:
      r = B >> (A & 15);
      break;
    case Op::V_ASHRREV_I16:
      r = uint32_t(int32_t(int16_t(B)) >> (A & 15));
      break;
    case Op::V_MAX_U16:
      r = std::max(A, B);
      break;
    case Op::V_MIN_U16:
      r = std::min(A, B);
      break;
    case Op::V_MAX_I16:
      r = uint16_t(std::max(int16_t(A), int16_t(B)));
      break;
    default: // V_MIN_I16
      r = uint16_t(std::min(int16_t(A), int16_t(B)));
      break;
    }
    d[l] = r & 0xffff;
  });
  return true;
}

/// v_add_i16 / v_sub_i16 (VOP3 only): D.i16 = S0.i16 +/- S1.i16, op_sel
/// bits 0 and 1 taking a source's high half, clamp saturating to the i16
/// range; the result goes to bits 15:0 with bits 31:16 zeroed, or with
/// op_sel bit 3 to bits 31:16 with bits 15:0 kept.
bool vAddSubI16(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (in.neg | in.abs | in.negHi | in.omod | (in.opSel & 4))
    return noModifiers(w, in, ctx);
  uint32_t t0[kWaveLanes], t1[kWaveLanes];
  const uint32_t *a = vsrc32(w, in.src[0], t0);
  const uint32_t *b = vsrc32(w, in.src[1], t1);
  uint32_t *d = w.vgpr(in.dst[0].index);
  const bool sub = in.op == Op::V_SUB_I16, clamp = in.clamp;
  const unsigned sa = in.opSel & 1 ? 16 : 0, sb = in.opSel & 2 ? 16 : 0;
  const bool hi = in.opSel & 8;
  forLanes(w.exec(), [&](unsigned l) {
    int32_t A = int16_t(a[l] >> sa), B = int16_t(b[l] >> sb);
    int32_t r = sub ? A - B : A + B;
    if (clamp)
      r = std::min(32767, std::max(-32768, r));
    uint32_t r16 = uint32_t(r) & 0xffff;
    d[l] = hi ? (d[l] & 0xffff) | r16 << 16 : r16;
  });
  return true;
}

/// The VOP3P integer operations on two 16-bit halves: for result half h
/// (0 low, 1 high) source i gives its high half where bit i of op_sel
/// (h = 0) or op_sel_hi (h = 1) is set. The *rev shifts take the amount
/// (4 bits) in src0. clamp (saturation) is not implemented.
bool vPkInt16(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (in.neg | in.abs | in.negHi | in.omod | in.clamp)
    return ctx.fail(w, in, ErrorCode::Unsupported,
                    "neg/abs/omod/clamp on a packed integer instruction are "
                    "not implemented by gfx906-sim");
  uint32_t t0[kWaveLanes], t1[kWaveLanes], t2[kWaveLanes];
  const uint32_t *a = vsrc32(w, in.src[0], t0);
  const uint32_t *b = vsrc32(w, in.src[1], t1);
  const uint32_t *c = in.numSrc > 2 ? vsrc32(w, in.src[2], t2) : b;
  uint32_t *d = w.vgpr(in.dst[0].index);
  const Op op = in.op;
  auto half = [](uint32_t x, unsigned sel, unsigned i) -> uint16_t {
    return uint16_t((sel >> i) & 1 ? x >> 16 : x);
  };
  forLanes(w.exec(), [&](unsigned l) {
    uint32_t out = 0;
    for (unsigned h = 0; h < 2; ++h) {
      const unsigned sel = h ? in.opSelHi : in.opSel;
      const uint16_t A = half(a[l], sel, 0), B = half(b[l], sel, 1),
                     C = half(c[l], sel, 2);
      uint32_t r;
      switch (op) {
      case Op::V_PK_MAD_I16:
      case Op::V_PK_MAD_U16:
        r = uint32_t(A) * B + C; // the low 16 bits agree signed or not
        break;
      case Op::V_PK_MUL_LO_U16:
        r = uint32_t(A) * B;
        break;
      case Op::V_PK_ADD_I16:
      case Op::V_PK_ADD_U16:
        r = uint32_t(A) + B;
        break;
      case Op::V_PK_SUB_I16:
      case Op::V_PK_SUB_U16:
        r = uint32_t(A) - B;
        break;
      case Op::V_PK_LSHLREV_B16:
        r = uint32_t(B) << (A & 15);
        break;
      case Op::V_PK_LSHRREV_B16:
        r = B >> (A & 15);
        break;
      case Op::V_PK_ASHRREV_I16:
        r = uint32_t(int32_t(int16_t(B)) >> (A & 15));
        break;
      case Op::V_PK_MAX_I16:
        r = uint16_t(std::max(int16_t(A), int16_t(B)));
        break;
      case Op::V_PK_MIN_I16:
        r = uint16_t(std::min(int16_t(A), int16_t(B)));
        break;
      case Op::V_PK_MAX_U16:
        r = std::max(A, B);
        break;
      default: // V_PK_MIN_U16
        r = std::min(A, B);
        break;
      }
      out |= (r & 0xffff) << (16 * h);
    }
    d[l] = out;
  });
  return true;
}

/// The integer dot products: D = S2 + the sum over the packed elements of
/// S0[i] * S1[i] (2 x 16, 4 x 8 or 8 x 4 bits, signed or not), modulo
/// 2^32. v_dot4_i32_i8 is HIP's __dp4a (ggml's quantized matrix products).
/// Only the default op_sel (0) and op_sel_hi (1 for both sources); clamp
/// (saturation) is not implemented.
bool vDotInt(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (in.neg | in.abs | in.negHi | in.omod | in.clamp | in.opSel ||
      (in.opSelHi & 3) != 3)
    return ctx.fail(w, in, ErrorCode::Unsupported,
                    "modifiers, op_sel or clamp on an integer dot product are "
                    "not implemented by gfx906-sim");
  uint32_t t0[kWaveLanes], t1[kWaveLanes], t2[kWaveLanes];
  const uint32_t *a = vsrc32(w, in.src[0], t0);
  const uint32_t *b = vsrc32(w, in.src[1], t1);
  const uint32_t *c = vsrc32(w, in.src[2], t2);
  uint32_t *d = w.vgpr(in.dst[0].index);
  unsigned bits;
  bool sign;
  switch (in.op) {
  case Op::V_DOT2_I32_I16:
  case Op::V_DOT2_U32_U16:
    bits = 16, sign = in.op == Op::V_DOT2_I32_I16;
    break;
  case Op::V_DOT4_I32_I8:
  case Op::V_DOT4_U32_U8:
    bits = 8, sign = in.op == Op::V_DOT4_I32_I8;
    break;
  default: // V_DOT8_I32_I4, V_DOT8_U32_U4
    bits = 4, sign = in.op == Op::V_DOT8_I32_I4;
    break;
  }
  auto element = [&](uint32_t x, unsigned i) -> int64_t {
    uint32_t e = (x >> (i * bits)) & ((1u << bits) - 1);
    if (sign && (e >> (bits - 1)))
      return int64_t(e) - (int64_t(1) << bits);
    return e;
  };
  forLanes(w.exec(), [&](unsigned l) {
    int64_t sum = sign ? int64_t(int32_t(c[l])) : int64_t(c[l]);
    for (unsigned i = 0; i < 32 / bits; ++i)
      sum += element(a[l], i) * element(b[l], i);
    d[l] = uint32_t(sum);
  });
  return true;
}

} // namespace

void fa::sim::registerValu(ExecFn *t) {
  auto set = [&](Op op, ExecFn fn) { t[unsigned(op)] = fn; };
  for (Op op :
       {Op::V_ADD_U32,        Op::V_SUB_U32,        Op::V_SUBREV_U32,
        Op::V_MUL_I32_I24,    Op::V_MUL_HI_I32_I24, Op::V_MUL_U32_U24,
        Op::V_MUL_HI_U32_U24, Op::V_MIN_I32,        Op::V_MAX_I32,
        Op::V_MIN_U32,        Op::V_MAX_U32,        Op::V_LSHRREV_B32,
        Op::V_ASHRREV_I32,    Op::V_LSHLREV_B32,    Op::V_AND_B32,
        Op::V_OR_B32,         Op::V_XOR_B32,        Op::V_XNOR_B32,
        Op::V_NOT_B32,        Op::V_BFREV_B32,      Op::V_FFBH_U32,
        Op::V_FFBL_B32,       Op::V_FFBH_I32,       Op::V_MUL_LO_U32,
        Op::V_MUL_HI_U32,     Op::V_MUL_HI_I32,     Op::V_BCNT_U32_B32,
        Op::V_BFM_B32,        Op::V_MAD_I32_I24,    Op::V_MAD_U32_U24,
        Op::V_BFE_U32,        Op::V_BFE_I32,        Op::V_BFI_B32,
        Op::V_ALIGNBIT_B32,   Op::V_MIN3_I32,       Op::V_MAX3_I32,
        Op::V_MIN3_U32,       Op::V_MAX3_U32,       Op::V_MED3_I32,
        Op::V_MED3_U32,       Op::V_PERM_B32,       Op::V_LSHL_ADD_U32,
        Op::V_ADD_LSHL_U32,   Op::V_ADD3_U32,       Op::V_LSHL_OR_B32,
        Op::V_AND_OR_B32,     Op::V_OR3_B32,        Op::V_CVT_PK_U16_U32})
    set(op, vInt);
  set(Op::V_MBCNT_LO_U32_B32, vInt);
  set(Op::V_MBCNT_HI_U32_B32, vInt);
  set(Op::V_ADD_I16, vAddSubI16);
  set(Op::V_SUB_I16, vAddSubI16);
  for (Op op : {Op::V_PK_MAD_I16, Op::V_PK_MUL_LO_U16, Op::V_PK_ADD_I16,
                Op::V_PK_SUB_I16, Op::V_PK_LSHLREV_B16, Op::V_PK_LSHRREV_B16,
                Op::V_PK_ASHRREV_I16, Op::V_PK_MAX_I16, Op::V_PK_MIN_I16,
                Op::V_PK_MAD_U16, Op::V_PK_ADD_U16, Op::V_PK_SUB_U16,
                Op::V_PK_MAX_U16, Op::V_PK_MIN_U16})
    set(op, vPkInt16);
  for (Op op : {Op::V_DOT2_I32_I16, Op::V_DOT2_U32_U16, Op::V_DOT4_I32_I8,
                Op::V_DOT4_U32_U8, Op::V_DOT8_I32_I4, Op::V_DOT8_U32_U4})
    set(op, vDotInt);
  for (Op op : {Op::V_ADD_U16, Op::V_SUB_U16, Op::V_MUL_LO_U16,
                Op::V_LSHLREV_B16, Op::V_LSHRREV_B16, Op::V_ASHRREV_I16,
                Op::V_MAX_U16, Op::V_MIN_U16, Op::V_MAX_I16, Op::V_MIN_I16})
    set(op, vInt16);
  set(Op::V_MOV_B32, vMov);
  set(Op::V_NOP, vNop);
  set(Op::V_CNDMASK_B32, vCndmask);
  for (Op op : {Op::V_ADD_CO_U32, Op::V_SUB_CO_U32, Op::V_SUBREV_CO_U32,
                Op::V_ADDC_CO_U32, Op::V_SUBB_CO_U32, Op::V_SUBBREV_CO_U32})
    set(op, vCarry);
  set(Op::V_MAD_U64_U32, vMad64<false>);
  set(Op::V_MAD_I64_I32, vMad64<true>);
  set(Op::V_LSHLREV_B64, vShift64);
  set(Op::V_LSHRREV_B64, vShift64);
  set(Op::V_ASHRREV_I64, vShift64);
  set(Op::V_READFIRSTLANE_B32, vReadfirstlane);
  set(Op::V_READLANE_B32, vReadlane);
  set(Op::V_WRITELANE_B32, vWritelane);
#define CMP_FAMILY(SUFFIX, T)                                                  \
  set(Op::V_CMP_LT_##SUFFIX, vCmpInt<0, T>);                                   \
  set(Op::V_CMP_EQ_##SUFFIX, vCmpInt<1, T>);                                   \
  set(Op::V_CMP_LE_##SUFFIX, vCmpInt<2, T>);                                   \
  set(Op::V_CMP_GT_##SUFFIX, vCmpInt<3, T>);                                   \
  set(Op::V_CMP_NE_##SUFFIX, vCmpInt<4, T>);                                   \
  set(Op::V_CMP_GE_##SUFFIX, vCmpInt<5, T>);
  CMP_FAMILY(I16, int16_t)
  CMP_FAMILY(U16, uint16_t)
  CMP_FAMILY(I32, int32_t)
  CMP_FAMILY(U32, uint32_t)
  CMP_FAMILY(I64, int64_t)
  CMP_FAMILY(U64, uint64_t)
#undef CMP_FAMILY
}
