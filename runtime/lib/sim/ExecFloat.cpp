//===- ExecFloat.cpp - VALU floating-point semantics ----------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the vector ALU's floating-point instructions: f32
// and f64 arithmetic with the VOP3 input modifiers (abs, then neg) and
// output modifiers (omod, then clamp), compares, conversions, the
// transcendental approximations, the division sequence (v_div_scale,
// v_div_fmas, v_div_fixup), packed f16 (VOP3P), v_fma_mix* and
// v_dot2_f32_f16. Semantics are the Vega 7nm ISA reference's; where the
// hardware only promises an accuracy, what is modelled is written next to
// the instruction:
//   v_rcp_f32, v_rsq_f32, v_sqrt_f32: correctly rounded (the ISA: < 1 ulp);
//   v_exp_f32, v_log_f32: 2^x and log2(x) correctly rounded to f32, with
//     denormal inputs and results flushed to 0 (the ISA gives no bound;
//     LLVM scales around the flush when denormals matter), so validation
//     tolerances must cover the hardware's error, not this model's;
//   v_dot2_f32_f16: S2 + a.lo*b.lo + a.hi*b.hi evaluated exactly and rounded
//     once (the pseudocode has no intermediate rounding; gem5 rounds each
//     product to f16, which the ISA text does not say: the ISA text wins).
// Host arithmetic is IEEE binary32/64 with round to nearest even and
// denormals kept (the runtime never sets FTZ/DAZ), which is the kernels'
// float mode; a descriptor asking for flushed f32 denormals gets inputs and
// results flushed here.
//
//===----------------------------------------------------------------------===//

#include "fa/Half.h"
#include "sim/Exec.h"
#include "sim/VectorUtil.h"

#include <cmath>
#include <limits>

using namespace fa;
using namespace fa::sim;

namespace {

bool isSnan(float f) {
  uint32_t x = asBits(f);
  return (x & 0x7f800000) == 0x7f800000 && (x & 0x7fffff) && !(x & 0x400000);
}
float quiet(float f) { return asFloat(asBits(f) | 0x400000); }
bool isDenorm(float f) { return f != 0 && std::fpclassify(f) == FP_SUBNORMAL; }
float flushDenorm(float f) { return isDenorm(f) ? std::copysign(0.0f, f) : f; }

/// v_max_f32 / v_min_f32 in IEEE mode: a signalling NaN input gives a quiet
/// NaN; otherwise a NaN input gives the other operand (IEEE 754-2008
/// maxNum). -0 orders below +0.
float fmaxIeee(float a, float b, bool ieee) {
  if (ieee && (isSnan(a) || isSnan(b)))
    return quiet(isSnan(a) ? a : b);
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  if (a == b)
    return std::signbit(a) ? b : a;
  return a > b ? a : b;
}
float fminIeee(float a, float b, bool ieee) {
  if (ieee && (isSnan(a) || isSnan(b)))
    return quiet(isSnan(a) ? a : b);
  if (std::isnan(a))
    return b;
  if (std::isnan(b))
    return a;
  if (a == b)
    return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

/// The constants of v_div_scale's case table for f32 and f64: the exponent
/// gap that needs a scaling, the scale, and the numerator exponent below
/// which the numerator is scaled up.
template <typename T> struct DivScaleTraits;
template <> struct DivScaleTraits<float> {
  static constexpr int gap = 96, scale = 64, small = 23;
  static int exponent(float f) { return int((asBits(f) >> 23) & 0xff); }
};
template <> struct DivScaleTraits<double> {
  static constexpr int gap = 768, scale = 128, small = 53;
  static int exponent(double f) { return int((asBits64(f) >> 52) & 0x7ff); }
};

int exponentOf(float f) { return DivScaleTraits<float>::exponent(f); }
int exponentOf64(double f) { return DivScaleTraits<double>::exponent(f); }

/// v_div_scale_f32/f64 (S0 the value to scale, S1 the denominator, S2 the
/// numerator): the ISA's case table; `vcc` is set when the final v_div_fmas
/// must undo a scaling.
template <typename T> T divScale(T s0, T s1, T s2, bool &vcc) {
  using D = DivScaleTraits<T>;
  auto denorm = [](T x) {
    return x != 0 && std::fpclassify(x) == FP_SUBNORMAL;
  };
  vcc = false;
  if (s2 == 0 || s1 == 0)
    return std::numeric_limits<T>::quiet_NaN();
  if (D::exponent(s2) - D::exponent(s1) >= D::gap) {
    vcc = true;
    return s0 == s1 ? std::ldexp(s0, D::scale) : s0;
  }
  if (denorm(s1))
    return std::ldexp(s0, D::scale);
  T inv = T(1) / s1, q = s2 / s1;
  if (denorm(inv) && denorm(q)) {
    vcc = true;
    return s0 == s1 ? std::ldexp(s0, D::scale) : s0;
  }
  if (denorm(inv))
    return std::ldexp(s0, -D::scale);
  if (denorm(q)) {
    vcc = true;
    return s0 == s2 ? std::ldexp(s0, D::scale) : s0;
  }
  if (D::exponent(s2) <= D::small)
    return std::ldexp(s0, D::scale);
  return s0;
}

/// v_div_fixup_f32 (S0 the quotient, S1 the denominator, S2 the numerator):
/// the special cases of division, else the quotient with the right sign.
float divFixup(float q, float d, float n) {
  bool neg = std::signbit(d) != std::signbit(n);
  float inf = std::numeric_limits<float>::infinity();
  if (std::isnan(n))
    return quiet(n);
  if (std::isnan(d))
    return quiet(d);
  if (d == 0 && n == 0)
    return std::numeric_limits<float>::quiet_NaN();
  if (std::isinf(d) && std::isinf(n))
    return std::numeric_limits<float>::quiet_NaN();
  if (d == 0 || std::isinf(n))
    return neg ? -inf : inf;
  if (std::isinf(d) || n == 0)
    return neg ? -0.0f : 0.0f;
  if (std::isnan(q))
    return q;
  return neg ? -std::fabs(q) : std::fabs(q);
}

double divFixup64(double q, double d, double n) {
  bool neg = std::signbit(d) != std::signbit(n);
  double inf = std::numeric_limits<double>::infinity();
  if (std::isnan(n) || std::isnan(d))
    return std::isnan(n) ? n : d;
  if ((d == 0 && n == 0) || (std::isinf(d) && std::isinf(n)))
    return std::numeric_limits<double>::quiet_NaN();
  if (d == 0 || std::isinf(n))
    return neg ? -inf : inf;
  if (std::isinf(d) || n == 0)
    return neg ? -0.0 : 0.0;
  return neg ? -std::fabs(q) : std::fabs(q);
}

/// The per-source abs/neg of VOP3A as masks on the f32 bits.
struct Mods32 {
  uint32_t andMask[3], xorMask[3];
  explicit Mods32(const Instruction &in) {
    for (int i = 0; i < 3; ++i) {
      andMask[i] = (in.abs >> i) & 1 ? 0x7fffffffu : ~0u;
      xorMask[i] = uint32_t((in.neg >> i) & 1) << 31;
    }
  }
};

/// Output modifiers: omod (*2, *4, /2), then clamp to [0, 1] (NaN -> 0
/// under DX10_CLAMP).
float outMod(float r, const Instruction &in, const Wave &w) {
  if (in.omod)
    r *= in.omod == 1 ? 2.0f : in.omod == 2 ? 4.0f : 0.5f;
  if (in.clamp) {
    if (std::isnan(r))
      r = w.dx10Clamp ? 0.0f : r;
    else
      r = std::min(std::max(r, 0.0f), 1.0f);
  }
  return r;
}

float exp2Model(float x) {
  // Denormal input: treated as 0 (2^0 = 1); denormal result: 0.
  float r = float(std::exp2(double(x)));
  return isDenorm(r) ? 0.0f : r;
}
float log2Model(float x) {
  if (isDenorm(x))
    x = std::copysign(0.0f, x);
  return float(std::log2(double(x)));
}

/// f32 arithmetic, one to three sources, with VOP3 modifiers.
bool vF32(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (in.opSel)
    return ctx.fail(w, in, ErrorCode::Unsupported,
                    "op_sel on an f32 instruction");
  uint32_t t0[kWaveLanes], t1[kWaveLanes], t2[kWaveLanes];
  const uint32_t *a = vsrc32(w, in.src[0], t0);
  const uint32_t *b = in.numSrc > 1 ? vsrc32(w, in.src[1], t1) : t1;
  const uint32_t *c = in.numSrc > 2 ? vsrc32(w, in.src[2], t2) : t2;
  uint32_t *d = w.vgpr(in.dst[0].index);
  Mods32 m(in);
  bool ftz = !w.denorm32, ieee = w.ieeeMode;
  bool outMods = in.omod || in.clamp;
  uint64_t exec = w.exec();
  auto in32 = [&](const uint32_t *p, int i, unsigned l) {
    float f = asFloat((p[l] & m.andMask[i]) ^ m.xorMask[i]);
    return ftz ? flushDenorm(f) : f;
  };
#define LANES(expr)                                                            \
  forLanes(exec, [&](unsigned l) {                                             \
    float A = in32(a, 0, l), B = in32(b, 1, l), C = in32(c, 2, l);             \
    (void)A, (void)B, (void)C;                                                 \
    float R = (expr);                                                          \
    if (outMods)                                                               \
      R = outMod(R, in, w);                                                    \
    d[l] = asBits(ftz ? flushDenorm(R) : R);                                   \
  });                                                                          \
  return true
  switch (in.op) {
  case Op::V_ADD_F32:
    LANES(A + B);
  case Op::V_SUB_F32:
    LANES(A - B);
  case Op::V_SUBREV_F32:
    LANES(B - A);
  case Op::V_MUL_F32:
    LANES(A * B);
  case Op::V_MUL_LEGACY_F32:
    // 0 * anything (inf, NaN) = 0.
    LANES(A == 0 || B == 0 ? 0.0f : A * B);
  case Op::V_MIN_F32:
    LANES(fminIeee(A, B, ieee));
  case Op::V_MAX_F32:
    LANES(fmaxIeee(A, B, ieee));
  case Op::V_MIN3_F32:
    LANES(fminIeee(fminIeee(A, B, ieee), C, ieee));
  case Op::V_MAX3_F32:
    LANES(fmaxIeee(fmaxIeee(A, B, ieee), C, ieee));
  case Op::V_MED3_F32:
    LANES(std::isnan(A) || std::isnan(B) || std::isnan(C)
              ? fminIeee(fminIeee(A, B, ieee), C, ieee)
              : med3(A, B, C));
  case Op::V_FMA_F32:
    LANES(std::fma(A, B, C));
  case Op::V_MAD_F32:
  case Op::V_MADMK_F32: // the decoder puts K where the operation reads it
  case Op::V_MADAK_F32:
    // Unfused: the product is rounded before the add.
    LANES(float(A * B) + C);
  case Op::V_MAD_LEGACY_F32:
    LANES((A == 0 || B == 0 ? 0.0f : float(A * B)) + C);
  case Op::V_FMAC_F32: {
    const uint32_t *acc = d;
    forLanes(exec, [&](unsigned l) {
      float R = std::fma(in32(a, 0, l), in32(b, 1, l), asFloat(acc[l]));
      if (outMods)
        R = outMod(R, in, w);
      d[l] = asBits(ftz ? flushDenorm(R) : R);
    });
    return true;
  }
  case Op::V_MAC_F32: {
    const uint32_t *acc = d;
    forLanes(exec, [&](unsigned l) {
      float R = float(in32(a, 0, l) * in32(b, 1, l)) + asFloat(acc[l]);
      if (outMods)
        R = outMod(R, in, w);
      d[l] = asBits(ftz ? flushDenorm(R) : R);
    });
    return true;
  }
  case Op::V_LDEXP_F32:
    LANES(std::ldexp(A, int32_t(b[l])));
  case Op::V_EXP_F32:
    LANES(exp2Model(A));
  case Op::V_LOG_F32:
    LANES(log2Model(A));
  case Op::V_RCP_F32:
  case Op::V_RCP_IFLAG_F32:
    LANES(1.0f / A);
  case Op::V_RSQ_F32:
    LANES(float(1.0 / std::sqrt(double(A))));
  case Op::V_SQRT_F32:
    LANES(std::sqrt(A));
  case Op::V_FRACT_F32:
    // x - floor(x), kept below 1 (the ISA clamps to 0x3f7fffff).
    LANES(std::isinf(A) ? std::numeric_limits<float>::quiet_NaN()
                        : std::min(A - std::floor(A), 0x1.fffffep-1f));
  case Op::V_TRUNC_F32:
    LANES(std::trunc(A));
  case Op::V_CEIL_F32:
    LANES(std::ceil(A));
  case Op::V_FLOOR_F32:
    LANES(std::floor(A));
  case Op::V_RNDNE_F32:
    LANES(std::nearbyint(A));
  case Op::V_FREXP_MANT_F32:
    LANES(std::isinf(A) || std::isnan(A) ? A : [&] {
      int e;
      return std::frexp(A, &e);
    }());
  case Op::V_DIV_FIXUP_F32:
    LANES(divFixup(A, B, C));
  case Op::V_DIV_FMAS_F32: {
    uint64_t vcc = w.vcc();
    // VCC from v_div_scale: the quotient was computed on scaled operands;
    // scale the result back by 2^64 when it is large (the denominator was
    // scaled), by 2^-64 when it is small (the numerator was).
    LANES((vcc >> l) & 1
              ? std::ldexp(std::fma(A, B, C), exponentOf(C) >= 127 ? 64 : -64)
              : std::fma(A, B, C));
  }
  default:
    break;
  }
#undef LANES
  return ctx.fail(w, in, ErrorCode::Internal, "no f32 semantics");
}

bool vDivScale32(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (in.opSel || in.omod || in.clamp)
    return ctx.fail(w, in, ErrorCode::Unsupported,
                    "output modifiers on v_div_scale_f32");
  uint32_t t0[kWaveLanes], t1[kWaveLanes], t2[kWaveLanes];
  const uint32_t *a = vsrc32(w, in.src[0], t0);
  const uint32_t *b = vsrc32(w, in.src[1], t1);
  const uint32_t *c = vsrc32(w, in.src[2], t2);
  Mods32 m(in);
  uint32_t *d = w.vgpr(in.dst[0].index);
  uint64_t vcc = 0;
  forLanes(w.exec(), [&](unsigned l) {
    bool flag;
    float A = asFloat((a[l] & m.andMask[0]) ^ m.xorMask[0]);
    float B = asFloat((b[l] & m.andMask[1]) ^ m.xorMask[1]);
    float C = asFloat((c[l] & m.andMask[2]) ^ m.xorMask[2]);
    d[l] = asBits(divScale(A, B, C, flag));
    vcc |= uint64_t(flag) << l;
  });
  setScalar64(w, in.dst[1], vcc);
  return true;
}

/// f64 arithmetic (the fp64 device reference and LLVM's f64 division).
bool vF64(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (in.opSel)
    return ctx.fail(w, in, ErrorCode::Unsupported,
                    "op_sel on an f64 instruction");
  const OpInfo &info = in.info();
  uint64_t a[kWaveLanes], b[kWaveLanes], c[kWaveLanes];
  uint32_t ti[kWaveLanes];
  const uint32_t *bi = nullptr;
  vsrc64(w, in.src[0], a);
  if (in.numSrc > 1) {
    if (info.src1 == OperandType::B32)
      bi = vsrc32(w, in.src[1], ti);
    else
      vsrc64(w, in.src[1], b);
  }
  if (in.numSrc > 2)
    vsrc64(w, in.src[2], c);
  uint32_t *lo = w.vgpr(in.dst[0].index), *hi = w.vgpr(in.dst[0].index + 1);
  uint64_t exec = w.exec(), vcc = w.vcc();
  auto in64 = [&](const uint64_t *p, int i, unsigned l) {
    uint64_t x = p[l];
    if ((in.abs >> i) & 1)
      x &= ~(uint64_t(1) << 63);
    if ((in.neg >> i) & 1)
      x ^= uint64_t(1) << 63;
    return asDouble(x);
  };
  auto out = [&](unsigned l, double r) {
    if (in.omod)
      r *= in.omod == 1 ? 2.0 : in.omod == 2 ? 4.0 : 0.5;
    if (in.clamp)
      r = std::isnan(r) ? 0.0 : std::min(std::max(r, 0.0), 1.0);
    uint64_t x = asBits64(r);
    lo[l] = uint32_t(x);
    hi[l] = uint32_t(x >> 32);
  };
#define LANES(expr)                                                            \
  forLanes(exec, [&](unsigned l) {                                             \
    double A = in64(a, 0, l);                                                  \
    double B = bi ? 0.0 : in.numSrc > 1 ? in64(b, 1, l) : 0.0;                 \
    double C = in.numSrc > 2 ? in64(c, 2, l) : 0.0;                            \
    (void)B, (void)C;                                                          \
    out(l, (expr));                                                            \
  });                                                                          \
  return true
  switch (in.op) {
  case Op::V_ADD_F64:
    LANES(A + B);
  case Op::V_MUL_F64:
    LANES(A * B);
  case Op::V_MIN_F64:
    LANES(std::isnan(A) ? B : std::isnan(B) ? A : std::min(A, B));
  case Op::V_MAX_F64:
    LANES(std::isnan(A) ? B : std::isnan(B) ? A : std::max(A, B));
  case Op::V_LDEXP_F64:
    LANES(std::ldexp(A, int32_t(bi[l])));
  case Op::V_FMA_F64:
    LANES(std::fma(A, B, C));
  case Op::V_RCP_F64:
    LANES(1.0 / A);
  case Op::V_RSQ_F64:
    LANES(1.0 / std::sqrt(A));
  case Op::V_SQRT_F64:
    LANES(std::sqrt(A));
  case Op::V_TRUNC_F64:
    LANES(std::trunc(A));
  case Op::V_CEIL_F64:
    LANES(std::ceil(A));
  case Op::V_FLOOR_F64:
    LANES(std::floor(A));
  case Op::V_RNDNE_F64:
    LANES(std::nearbyint(A));
  case Op::V_FRACT_F64:
    LANES(std::isinf(A) ? std::numeric_limits<double>::quiet_NaN()
                        : std::min(A - std::floor(A), 0x1.fffffffffffffp-1));
  case Op::V_FREXP_MANT_F64:
    LANES(std::isinf(A) || std::isnan(A) ? A : [&] {
      int e;
      return std::frexp(A, &e);
    }());
  case Op::V_DIV_FIXUP_F64:
    LANES(divFixup64(A, B, C));
  case Op::V_DIV_FMAS_F64:
    LANES((vcc >> l) & 1 ? std::ldexp(std::fma(A, B, C),
                                      exponentOf64(C) >= 1023 ? 128 : -128)
                         : std::fma(A, B, C));
  default:
    break;
  }
#undef LANES
  return ctx.fail(w, in, ErrorCode::Internal, "no f64 semantics");
}

bool vDivScale64(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (in.abs || in.neg || in.omod || in.clamp)
    return ctx.fail(w, in, ErrorCode::Unsupported,
                    "modifiers on v_div_scale_f64");
  uint64_t a[kWaveLanes], b[kWaveLanes], c[kWaveLanes];
  vsrc64(w, in.src[0], a);
  vsrc64(w, in.src[1], b);
  vsrc64(w, in.src[2], c);
  uint32_t *lo = w.vgpr(in.dst[0].index), *hi = w.vgpr(in.dst[0].index + 1);
  uint64_t vcc = 0;
  forLanes(w.exec(), [&](unsigned l) {
    bool flag;
    uint64_t x = asBits64(
        divScale(asDouble(a[l]), asDouble(b[l]), asDouble(c[l]), flag));
    lo[l] = uint32_t(x);
    hi[l] = uint32_t(x >> 32);
    vcc |= uint64_t(flag) << l;
  });
  setScalar64(w, in.dst[1], vcc);
  return true;
}

/// Conversions and other instructions whose source and result types differ.
bool vConvert(Wave &w, const Instruction &in, ExecContext &ctx) {
  // v_cvt_f32_ubyte* take an integer source (no neg/abs, which the decoder
  // refuses) and give a float result, so clamp and omod apply to it.
  bool ubyte = in.op >= Op::V_CVT_F32_UBYTE0 && in.op <= Op::V_CVT_F32_UBYTE3;
  if (in.opSel || (in.omod && !ubyte) || in.neg || in.abs)
    return ctx.fail(w, in, ErrorCode::Unsupported,
                    "modifiers on a conversion are not implemented by "
                    "gfx906-sim");
  uint64_t exec = w.exec();
  uint32_t t0[kWaveLanes], t1[kWaveLanes];
  uint64_t wide[kWaveLanes];
  const OpInfo &info = in.info();
  bool wideSrc = info.src0 == OperandType::F64 || info.src0 == OperandType::B64;
  const uint32_t *a = nullptr;
  if (wideSrc)
    vsrc64(w, in.src[0], wide);
  else
    a = vsrc32(w, in.src[0], t0);
  uint32_t *d = w.vgpr(in.dst[0].index);
  uint32_t *dhi =
      info.dst == OperandType::F64 ? w.vgpr(in.dst[0].index + 1) : nullptr;
  auto toU32 = [](double x) -> uint32_t {
    if (std::isnan(x) || x <= 0)
      return 0;
    if (x >= 4294967295.0)
      return 0xffffffffu;
    return uint32_t(x);
  };
  auto toI32 = [](double x) -> uint32_t {
    if (std::isnan(x))
      return 0;
    if (x <= -2147483648.0)
      return 0x80000000u;
    if (x >= 2147483647.0)
      return 0x7fffffffu;
    return uint32_t(int32_t(x));
  };
  auto put64 = [&](unsigned l, double x) {
    uint64_t bits = asBits64(x);
    d[l] = uint32_t(bits);
    dhi[l] = uint32_t(bits >> 32);
  };
  if (ubyte) {
    // D.f32 = (float)S0[8n+7:8n] for v_cvt_f32_ubyte<n>.
    unsigned shift = 8 * (unsigned(in.op) - unsigned(Op::V_CVT_F32_UBYTE0));
    bool outMods = in.omod || in.clamp;
    forLanes(exec, [&](unsigned l) {
      float f = float((a[l] >> shift) & 0xff);
      d[l] = asBits(outMods ? outMod(f, in, w) : f);
    });
    return true;
  }
  switch (in.op) {
  case Op::V_CVT_F32_I32:
    forLanes(exec, [&](unsigned l) { d[l] = asBits(float(int32_t(a[l]))); });
    return true;
  case Op::V_CVT_F32_U32:
    forLanes(exec, [&](unsigned l) { d[l] = asBits(float(a[l])); });
    return true;
  case Op::V_CVT_U32_F32:
    forLanes(exec, [&](unsigned l) { d[l] = toU32(asFloat(a[l])); });
    return true;
  case Op::V_CVT_I32_F32:
    forLanes(exec, [&](unsigned l) { d[l] = toI32(asFloat(a[l])); });
    return true;
  case Op::V_CVT_F16_F32:
    // Round to nearest even; bits 31:16 are zeroed (gfx9 VOP1/VOP3 without
    // SDWA or op_sel).
    forLanes(exec, [&](unsigned l) {
      float f = asFloat(a[l]);
      if (in.clamp)
        f = outMod(f, in, w);
      d[l] = floatToHalf(f);
    });
    return true;
  case Op::V_CVT_F32_F16:
    forLanes(exec,
             [&](unsigned l) { d[l] = asBits(f16ToF32(uint16_t(a[l]))); });
    return true;
  // The 16-bit integer conversions: S0's bits 15:0; the result in bits
  // 15:0, bits 31:16 zeroed. To f16 rounds to nearest even (65520 and up
  // become +inf); from f16 truncates toward zero and saturates, NaN giving
  // 0 (as v_cvt_u32_f32 / v_cvt_i32_f32 do).
  case Op::V_CVT_F16_U16:
    forLanes(exec,
             [&](unsigned l) { d[l] = floatToHalf(float(uint16_t(a[l]))); });
    return true;
  case Op::V_CVT_F16_I16:
    forLanes(exec,
             [&](unsigned l) { d[l] = floatToHalf(float(int16_t(a[l]))); });
    return true;
  case Op::V_CVT_U16_F16:
    forLanes(exec, [&](unsigned l) {
      float f = f16ToF32(uint16_t(a[l]));
      d[l] = std::isnan(f) || f <= 0 ? 0u
             : f >= 65535.0f         ? 0xffffu
                                     : uint32_t(f);
    });
    return true;
  case Op::V_CVT_I16_F16:
    forLanes(exec, [&](unsigned l) {
      float f = f16ToF32(uint16_t(a[l]));
      int32_t i = std::isnan(f)    ? 0
                  : f <= -32768.0f ? -32768
                  : f >= 32767.0f  ? 32767
                                   : int32_t(f);
      d[l] = uint32_t(i) & 0xffff;
    });
    return true;
  case Op::V_CVT_F32_F64:
    forLanes(exec,
             [&](unsigned l) { d[l] = asBits(float(asDouble(wide[l]))); });
    return true;
  case Op::V_CVT_F64_F32:
    forLanes(exec, [&](unsigned l) { put64(l, double(asFloat(a[l]))); });
    return true;
  case Op::V_CVT_F64_I32:
    forLanes(exec, [&](unsigned l) { put64(l, double(int32_t(a[l]))); });
    return true;
  case Op::V_CVT_F64_U32:
    forLanes(exec, [&](unsigned l) { put64(l, double(a[l])); });
    return true;
  case Op::V_CVT_I32_F64:
    forLanes(exec, [&](unsigned l) { d[l] = toI32(asDouble(wide[l])); });
    return true;
  case Op::V_CVT_U32_F64:
    forLanes(exec, [&](unsigned l) { d[l] = toU32(asDouble(wide[l])); });
    return true;
  case Op::V_FREXP_EXP_I32_F32:
    forLanes(exec, [&](unsigned l) {
      float f = asFloat(a[l]);
      int e = 0;
      if (!std::isinf(f) && !std::isnan(f))
        std::frexp(f, &e);
      d[l] = uint32_t(e);
    });
    return true;
  case Op::V_FREXP_EXP_I32_F64:
    forLanes(exec, [&](unsigned l) {
      double f = asDouble(wide[l]);
      int e = 0;
      if (!std::isinf(f) && !std::isnan(f))
        std::frexp(f, &e);
      d[l] = uint32_t(e);
    });
    return true;
  case Op::V_CVT_PKRTZ_F16_F32: {
    // Two f32 to f16, rounding toward zero, S0 in the low half.
    const uint32_t *b = vsrc32(w, in.src[1], t1);
    auto rtz = [](float f) -> uint32_t {
      uint16_t h = floatToHalf(f);
      // Nearest-even may have rounded away from zero: step back one ulp.
      if (!std::isnan(f) && std::fabs(f16ToF32(h)) > std::fabs(f))
        h = uint16_t(h - 1);
      return h;
    };
    forLanes(exec, [&](unsigned l) {
      d[l] = rtz(asFloat(a[l])) | rtz(asFloat(b[l])) << 16;
    });
    return true;
  }
  default:
    break;
  }
  return ctx.fail(w, in, ErrorCode::Internal, "no conversion semantics");
}

/// Float compares: Kind as the VOPC opcode's low 4 bits (1 lt, 2 eq, 3 le,
/// 4 gt, 5 lg, 6 ge, 7 o, 8 u, 9 nge, 10 nlg, 11 ngt, 12 nle, 13 neq,
/// 14 nlt); v_cmp_class separately.
template <typename T> bool fcmp(int kind, T a, T b) {
  bool un = std::isnan(a) || std::isnan(b);
  switch (kind) {
  case 1:
    return a < b;
  case 2:
    return a == b;
  case 3:
    return a <= b;
  case 4:
    return a > b;
  case 5:
    return !un && a != b;
  case 6:
    return a >= b;
  case 7:
    return !un;
  case 8:
    return un;
  case 9:
    return !(a >= b);
  case 10:
    return un || a == b;
  case 11:
    return !(a > b);
  case 12:
    return !(a <= b);
  case 13:
    return !(a == b);
  default:
    return !(a < b);
  }
}

template <int Kind, bool Wide>
bool vCmpFloat(Wave &w, const Instruction &in, ExecContext &) {
  uint64_t mask = 0;
  if (Wide) {
    uint64_t a[kWaveLanes], b[kWaveLanes];
    vsrc64(w, in.src[0], a);
    vsrc64(w, in.src[1], b);
    forLanes(w.exec(), [&](unsigned l) {
      uint64_t x = a[l], y = b[l];
      if (in.abs & 1)
        x &= ~(1ull << 63);
      if (in.abs & 2)
        y &= ~(1ull << 63);
      x ^= uint64_t(in.neg & 1) << 63;
      y ^= uint64_t((in.neg >> 1) & 1) << 63;
      mask |= uint64_t(fcmp(Kind, asDouble(x), asDouble(y))) << l;
    });
  } else {
    uint32_t t0[kWaveLanes], t1[kWaveLanes];
    const uint32_t *a = vsrc32(w, in.src[0], t0);
    const uint32_t *b = vsrc32(w, in.src[1], t1);
    Mods32 m(in);
    forLanes(w.exec(), [&](unsigned l) {
      float x = asFloat((a[l] & m.andMask[0]) ^ m.xorMask[0]);
      float y = asFloat((b[l] & m.andMask[1]) ^ m.xorMask[1]);
      mask |= uint64_t(fcmp(Kind, x, y)) << l;
    });
  }
  setScalar64(w, in.dst[0], mask);
  return true;
}

/// Source `i`'s low half as an f16 (exactly, in f32), VOP3's abs/neg on
/// its sign bit; bits 31:16 are ignored.
inline float f16Source(uint32_t x, const Instruction &in, int i) {
  uint16_t h = uint16_t(x);
  if ((in.abs >> i) & 1)
    h &= 0x7fff;
  if ((in.neg >> i) & 1)
    h ^= 0x8000;
  return f16ToF32(h);
}

/// v_cmp_*_f16: the IEEE predicate on the sources' low halves.
template <int Kind>
bool vCmpHalf(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (in.opSel)
    return ctx.fail(w, in, ErrorCode::Unsupported,
                    "op_sel on an f16 compare");
  uint32_t t0[kWaveLanes], t1[kWaveLanes];
  const uint32_t *a = vsrc32(w, in.src[0], t0);
  const uint32_t *b = vsrc32(w, in.src[1], t1);
  uint64_t mask = 0;
  forLanes(w.exec(), [&](unsigned l) {
    mask |= uint64_t(fcmp(Kind, f16Source(a[l], in, 0), f16Source(b[l], in, 1)))
            << l;
  });
  setScalar64(w, in.dst[0], mask);
  return true;
}

/// The class number v_cmp_class_* tests for an IEEE value of `Bits` bits:
/// 0 signalling NaN, 1 quiet NaN, 2 -inf, 3 -normal, 4 -denormal, 5 -0,
/// 6 +0, 7 +denormal, 8 +normal, 9 +inf. From the bits, so that a denormal
/// is one whatever the float mode.
template <unsigned Bits> unsigned floatClass(uint64_t x) {
  constexpr unsigned mantBits = Bits == 16 ? 10 : Bits == 32 ? 23 : 52;
  constexpr uint64_t expMax = (uint64_t(1) << (Bits - 1 - mantBits)) - 1;
  const bool neg = (x >> (Bits - 1)) & 1;
  const uint64_t e = (x >> mantBits) & expMax;
  const uint64_t m = x & ((uint64_t(1) << mantBits) - 1);
  if (e == expMax)
    return m == 0 ? (neg ? 2 : 9) : ((m >> (mantBits - 1)) & 1 ? 1 : 0);
  if (e == 0)
    return m == 0 ? (neg ? 5 : 6) : (neg ? 4 : 7);
  return neg ? 3 : 8;
}

/// v_cmp_class_f16/f32/f64: bit n of S1 set and S0 of class n (floatClass).
/// The VOP3 form's abs/neg act on S0's sign first.
template <unsigned Bits>
bool vCmpClass(Wave &w, const Instruction &in, ExecContext &) {
  uint32_t t0[kWaveLanes], t1[kWaveLanes];
  uint64_t a[kWaveLanes];
  if (Bits == 64) {
    vsrc64(w, in.src[0], a);
  } else {
    const uint32_t *narrow = vsrc32(w, in.src[0], t0);
    for (unsigned l = 0; l < kWaveLanes; ++l)
      a[l] = narrow[l];
  }
  const uint64_t sign = uint64_t(1) << (Bits - 1);
  const uint64_t clear = (in.abs & 1) ? ~sign : ~uint64_t(0);
  const uint64_t flip = (in.neg & 1) ? sign : 0;
  const uint32_t *b = vsrc32(w, in.src[1], t1);
  uint64_t mask = 0;
  forLanes(w.exec(), [&](unsigned l) {
    unsigned cls = floatClass<Bits>((a[l] & clear) ^ flip);
    mask |= uint64_t((b[l] >> cls) & 1) << l;
  });
  setScalar64(w, in.dst[0], mask);
  return true;
}

/// f16 arithmetic (VOP2/VOP3A, gfx9): computed in f32, which is exact for
/// one f16 operation, and rounded once to f16; bits 31:16 of D are zeroed.
bool vF16(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (in.opSel || in.omod)
    return ctx.fail(w, in, ErrorCode::Unsupported,
                    "op_sel/omod on an f16 instruction");
  uint32_t t0[kWaveLanes], t1[kWaveLanes];
  const uint32_t *a = vsrc32(w, in.src[0], t0);
  const uint32_t *b = vsrc32(w, in.src[1], t1);
  uint32_t *d = w.vgpr(in.dst[0].index);
  Op op = in.op;
  bool ieee = w.ieeeMode;
  forLanes(w.exec(), [&](unsigned l) {
    float A = f16Source(a[l], in, 0), B = f16Source(b[l], in, 1), R;
    switch (op) {
    case Op::V_ADD_F16:
      R = A + B;
      break;
    case Op::V_SUB_F16:
      R = A - B;
      break;
    case Op::V_MUL_F16:
      R = A * B;
      break;
    case Op::V_MAX_F16:
      R = fmaxIeee(A, B, ieee);
      break;
    default: // V_MIN_F16
      R = fminIeee(A, B, ieee);
      break;
    }
    if (in.clamp)
      R = std::isnan(R) ? 0.0f : std::min(std::max(R, 0.0f), 1.0f);
    d[l] = floatToHalf(R);
  });
  return true;
}

//===----------------------------------------------------------------------===//
// Packed and mixed precision (VOP3P)
//===----------------------------------------------------------------------===//

/// One f16 half of packed source `i` for result half `hi`, with op_sel /
/// op_sel_hi choosing which half and neg_lo / neg_hi negating it.
inline float packedHalf(uint32_t x, const Instruction &in, int i, bool hi) {
  bool sel = hi ? (in.opSelHi >> i) & 1 : (in.opSel >> i) & 1;
  uint16_t h = uint16_t(sel ? x >> 16 : x);
  bool neg = hi ? (in.negHi >> i) & 1 : (in.neg >> i) & 1;
  if (neg)
    h ^= 0x8000;
  return f16ToF32(h);
}

/// v_pk_*_f16: each half computed in f32 and rounded once to f16 (for
/// v_pk_fma_f16 the fused result is exact in f32 before that rounding only
/// up to double rounding, so it is computed in double).
bool vPkF16(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (in.omod)
    return ctx.fail(w, in, ErrorCode::Unsupported, "omod on packed f16");
  uint32_t t0[kWaveLanes], t1[kWaveLanes], t2[kWaveLanes];
  const uint32_t *a = vsrc32(w, in.src[0], t0);
  const uint32_t *b = in.numSrc > 1 ? vsrc32(w, in.src[1], t1) : t1;
  const uint32_t *c = in.numSrc > 2 ? vsrc32(w, in.src[2], t2) : t2;
  uint32_t *d = w.vgpr(in.dst[0].index);
  Op op = in.op;
  bool ieee = w.ieeeMode;
  forLanes(w.exec(), [&](unsigned l) {
    uint32_t r = 0;
    for (int h = 0; h < 2; ++h) {
      float A = packedHalf(a[l], in, 0, h), B = packedHalf(b[l], in, 1, h);
      double R;
      switch (op) {
      case Op::V_PK_FMA_F16:
        R = double(A) * double(B) + double(packedHalf(c[l], in, 2, h));
        break;
      case Op::V_PK_ADD_F16:
        R = double(A) + double(B);
        break;
      case Op::V_PK_MUL_F16:
        R = double(A) * double(B);
        break;
      case Op::V_PK_MIN_F16:
        R = fminIeee(A, B, ieee);
        break;
      default:
        R = fmaxIeee(A, B, ieee);
        break;
      }
      float f = float(R);
      if (in.clamp)
        f = std::isnan(f) ? 0.0f : std::min(std::max(f, 0.0f), 1.0f);
      r |= uint32_t(floatToHalf(f)) << (16 * h);
    }
    d[l] = r;
  });
  return true;
}

/// v_fma_mix_f32 / v_fma_mixlo_f16 / v_fma_mixhi_f16: fused multiply-add
/// of three sources, each f32 (op_sel_hi bit clear) or the f16 half chosen
/// by op_sel (set); neg_lo negates, neg_hi takes the absolute value (the
/// decoder gives it as Instruction::abs). mixlo
/// writes the f16 result to bits 15:0 and keeps 31:16; mixhi the reverse.
bool vFmaMix(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (in.omod)
    return ctx.fail(w, in, ErrorCode::Unsupported, "omod on v_fma_mix");
  uint32_t t[3][kWaveLanes];
  const uint32_t *s[3];
  for (int i = 0; i < 3; ++i)
    s[i] = vsrc32(w, in.src[i], t[i]);
  uint32_t *d = w.vgpr(in.dst[0].index);
  Op op = in.op;
  forLanes(w.exec(), [&](unsigned l) {
    float x[3];
    for (int i = 0; i < 3; ++i) {
      uint32_t v = s[i][l];
      float f;
      if ((in.opSelHi >> i) & 1)
        f = f16ToF32(uint16_t((in.opSel >> i) & 1 ? v >> 16 : v));
      else
        f = asFloat(v);
      if ((in.abs >> i) & 1)
        f = std::fabs(f);
      if ((in.neg >> i) & 1)
        f = -f;
      x[i] = f;
    }
    float r = std::fma(x[0], x[1], x[2]);
    if (in.clamp)
      r = std::isnan(r) ? 0.0f : std::min(std::max(r, 0.0f), 1.0f);
    if (op == Op::V_FMA_MIX_F32)
      d[l] = asBits(r);
    else if (op == Op::V_FMA_MIXLO_F16)
      d[l] = (d[l] & 0xffff0000u) | floatToHalf(r);
    else
      d[l] = (d[l] & 0x0000ffffu) | uint32_t(floatToHalf(r)) << 16;
  });
  return true;
}

/// v_dot2_f32_f16: D = S2 + a.lo * b.lo + a.hi * b.hi. The f16 products
/// are exact in double and so is their sum with S2 up to one rounding, so
/// the result is the exact value rounded once to f32.
bool vDot2F32F16(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (in.omod)
    return ctx.fail(w, in, ErrorCode::Unsupported, "omod on v_dot2_f32_f16");
  uint32_t t0[kWaveLanes], t1[kWaveLanes], t2[kWaveLanes];
  const uint32_t *a = vsrc32(w, in.src[0], t0);
  const uint32_t *b = vsrc32(w, in.src[1], t1);
  const uint32_t *c = vsrc32(w, in.src[2], t2);
  uint32_t *d = w.vgpr(in.dst[0].index);
  bool simple = in.opSel == 0 && (in.opSelHi & 3) == 3 && !in.neg &&
                !in.negHi && !in.clamp;
  forLanes(w.exec(), [&](unsigned l) {
    double p;
    if (simple) {
      p = double(f16ToF32(uint16_t(a[l]))) * f16ToF32(uint16_t(b[l])) +
          double(f16ToF32(uint16_t(a[l] >> 16))) *
              f16ToF32(uint16_t(b[l] >> 16));
      d[l] = asBits(float(p + double(asFloat(c[l]))));
      return;
    }
    p = double(packedHalf(a[l], in, 0, false)) *
            packedHalf(b[l], in, 1, false) +
        double(packedHalf(a[l], in, 0, true)) * packedHalf(b[l], in, 1, true);
    float acc = asFloat(c[l]);
    if (in.neg & 4)
      acc = -acc;
    float r = float(p + double(acc));
    if (in.clamp)
      r = std::isnan(r) ? 0.0f : std::min(std::max(r, 0.0f), 1.0f);
    d[l] = asBits(r);
  });
  return true;
}

/// v_pack_b32_f16: D = {S1.f16, S0.f16}, op_sel choosing each source's half.
bool vPackB32F16(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (in.abs || in.neg || in.omod || in.clamp)
    return ctx.fail(w, in, ErrorCode::Unsupported,
                    "modifiers on v_pack_b32_f16");
  uint32_t t0[kWaveLanes], t1[kWaveLanes];
  const uint32_t *a = vsrc32(w, in.src[0], t0);
  const uint32_t *b = vsrc32(w, in.src[1], t1);
  uint32_t *d = w.vgpr(in.dst[0].index);
  forLanes(w.exec(), [&](unsigned l) {
    uint32_t lo = (in.opSel & 1) ? a[l] >> 16 : a[l] & 0xffff;
    uint32_t hi = (in.opSel & 2) ? b[l] >> 16 : b[l] & 0xffff;
    d[l] = lo | hi << 16;
  });
  return true;
}

} // namespace

void fa::sim::registerValuFloat(ExecFn *t) {
  auto set = [&](Op op, ExecFn fn) { t[unsigned(op)] = fn; };
  for (Op op : {Op::V_ADD_F32,       Op::V_SUB_F32,        Op::V_SUBREV_F32,
                Op::V_MUL_F32,       Op::V_MUL_LEGACY_F32, Op::V_MIN_F32,
                Op::V_MAX_F32,       Op::V_MIN3_F32,       Op::V_MAX3_F32,
                Op::V_MED3_F32,      Op::V_FMA_F32,        Op::V_MAD_F32,
                Op::V_MADMK_F32,     Op::V_MADAK_F32,      Op::V_MAD_LEGACY_F32,
                Op::V_FMAC_F32,      Op::V_MAC_F32,        Op::V_LDEXP_F32,
                Op::V_EXP_F32,       Op::V_LOG_F32,        Op::V_RCP_F32,
                Op::V_RCP_IFLAG_F32, Op::V_RSQ_F32,        Op::V_SQRT_F32,
                Op::V_FRACT_F32,     Op::V_TRUNC_F32,      Op::V_CEIL_F32,
                Op::V_FLOOR_F32,     Op::V_RNDNE_F32,      Op::V_FREXP_MANT_F32,
                Op::V_DIV_FIXUP_F32, Op::V_DIV_FMAS_F32})
    set(op, vF32);
  set(Op::V_DIV_SCALE_F32, vDivScale32);
  for (Op op : {Op::V_ADD_F64, Op::V_MUL_F64, Op::V_MIN_F64, Op::V_MAX_F64,
                Op::V_LDEXP_F64, Op::V_FMA_F64, Op::V_RCP_F64, Op::V_RSQ_F64,
                Op::V_SQRT_F64, Op::V_TRUNC_F64, Op::V_CEIL_F64,
                Op::V_FLOOR_F64, Op::V_RNDNE_F64, Op::V_FRACT_F64,
                Op::V_FREXP_MANT_F64, Op::V_DIV_FIXUP_F64, Op::V_DIV_FMAS_F64})
    set(op, vF64);
  set(Op::V_DIV_SCALE_F64, vDivScale64);
  for (Op op :
       {Op::V_CVT_F32_I32, Op::V_CVT_F32_U32, Op::V_CVT_U32_F32,
        Op::V_CVT_I32_F32, Op::V_CVT_F16_F32, Op::V_CVT_F32_F16,
        Op::V_CVT_F32_F64, Op::V_CVT_F64_F32, Op::V_CVT_F64_I32,
        Op::V_CVT_F64_U32, Op::V_CVT_I32_F64, Op::V_CVT_U32_F64,
        Op::V_FREXP_EXP_I32_F32, Op::V_FREXP_EXP_I32_F64,
        Op::V_CVT_PKRTZ_F16_F32, Op::V_CVT_F32_UBYTE0, Op::V_CVT_F32_UBYTE1,
        Op::V_CVT_F32_UBYTE2, Op::V_CVT_F32_UBYTE3})
    set(op, vConvert);
  for (Op op : {Op::V_CVT_F16_U16, Op::V_CVT_F16_I16, Op::V_CVT_U16_F16,
                Op::V_CVT_I16_F16})
    set(op, vConvert);
#define FCMP(NAME, KIND)                                                       \
  set(Op::V_CMP_##NAME##_F16, vCmpHalf<KIND>);                                 \
  set(Op::V_CMP_##NAME##_F32, vCmpFloat<KIND, false>);                         \
  set(Op::V_CMP_##NAME##_F64, vCmpFloat<KIND, true>);
  FCMP(LT, 1)
  FCMP(EQ, 2)
  FCMP(LE, 3)
  FCMP(GT, 4)
  FCMP(LG, 5)
  FCMP(GE, 6)
  FCMP(O, 7)
  FCMP(U, 8)
  FCMP(NGE, 9)
  FCMP(NLG, 10)
  FCMP(NGT, 11)
  FCMP(NLE, 12)
  FCMP(NEQ, 13)
  FCMP(NLT, 14)
#undef FCMP
  set(Op::V_CMP_CLASS_F16, vCmpClass<16>);
  set(Op::V_CMP_CLASS_F32, vCmpClass<32>);
  set(Op::V_CMP_CLASS_F64, vCmpClass<64>);
  for (Op op : {Op::V_PK_FMA_F16, Op::V_PK_ADD_F16, Op::V_PK_MUL_F16,
                Op::V_PK_MIN_F16, Op::V_PK_MAX_F16})
    set(op, vPkF16);
  set(Op::V_FMA_MIX_F32, vFmaMix);
  set(Op::V_FMA_MIXLO_F16, vFmaMix);
  set(Op::V_FMA_MIXHI_F16, vFmaMix);
  set(Op::V_DOT2_F32_F16, vDot2F32F16);
  for (Op op : {Op::V_ADD_F16, Op::V_SUB_F16, Op::V_MUL_F16, Op::V_MAX_F16,
                Op::V_MIN_F16})
    set(op, vF16);
  set(Op::V_PACK_B32_F16, vPackB32F16);
}
