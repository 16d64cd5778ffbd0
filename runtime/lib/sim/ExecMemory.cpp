//===- ExecMemory.cpp - LDS, global, flat and scratch semantics -----------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the vector memory instructions: DS (LDS reads and
// writes, read2/write2 with offsets in element units and the st64 forms in
// units of 64 elements, ds_swizzle_b32, ds_permute/bpermute), GLOBAL/FLAT
// loads and stores (a FLAT address in the shared or private aperture of
// sim/Exec.h reaches LDS or the lane's private segment), and private memory
// through SCRATCH and MUBUF. The
// simulator completes an access at issue; the s_waitcnt model marks a
// load's destination registers pending until a wait covers it (Wave.h).
//
// Every access of every EXEC lane is checked: a global access must lie
// inside one region of the memory map (a buffer the runtime allocated, the
// kernarg segment, the dispatch packet), stores only in writable ones; LDS
// accesses inside the workgroup's LDS; private accesses inside the lane's
// private segment. A violation is an error naming the instruction, pc, lane
// and address. Unlike hardware (which returns 0 for LDS reads out of range
// and faults or reads neighbouring memory for global ones), nothing out of
// bounds is ever performed.
//
//===----------------------------------------------------------------------===//

#include "sim/Exec.h"
#include "sim/LdsRaces.h"
#include "sim/VectorUtil.h"

#include <cstdio>
#include <type_traits>

using namespace fa;
using namespace fa::sim;

namespace {

std::string hex(uint64_t x) {
  char buf[24];
  std::snprintf(buf, sizeof(buf), "0x%llx", (unsigned long long)x);
  return buf;
}

/// Marks `count` VGPRs from `reg` as written by the memory operation just
/// issued on counter `c`.
void markPending(Wave &w, const Instruction &in, ExecContext &ctx, Counter c,
                 const Operand *dst) {
  if (!ctx.checks->waitcnt)
    return;
  uint32_t seq = ++w.issued[c];
  if (!dst || dst->kind != OperandKind::VGPR)
    return;
  for (unsigned i = 0; i < std::max<unsigned>(dst->count, 1); ++i)
    if (dst->index + i < w.pendingV.size())
      w.pendingV[dst->index + i] = PendingWrite{seq, uint8_t(c), false, in.pc};
}

//===----------------------------------------------------------------------===//
// LDS
//===----------------------------------------------------------------------===//

/// Checks lane `l`'s LDS access of [addr, addr + bytes) and records it for
/// the race checker. False (with the error) when out of bounds.
inline bool ldsCheck(Wave &w, const Instruction &in, ExecContext &ctx,
                     unsigned l, uint64_t addr, unsigned bytes, bool write) {
  if (addr + bytes > ctx.ldsBytes)
    return ctx.fail(w, in, ErrorCode::LaunchFailed,
                    std::string("out-of-bounds lds access: lane ") +
                        std::to_string(l) + (write ? " writes " : " reads ") +
                        std::to_string(bytes) + " bytes at lds address " +
                        std::to_string(addr) + ", outside the " +
                        std::to_string(ctx.ldsBytes) + " bytes of lds");
  if (ctx.races)
    ctx.races->access(w.id, in.pc, uint32_t(addr), bytes, write,
                      in.info().mnemonic);
  return true;
}

enum ReadKind { Dwords, U8, I8, U16, I16, D16Lo, D16Hi, U8D16Lo, U8D16Hi };

/// Lane `l`'s `Bytes` loaded from `p` into the destination registers `d`
/// (lane-major, kWaveLanes per register) as `Kind` says: whole dwords, zero-
/// or sign-extended bytes and shorts, or a 16-bit half that keeps the other
/// one. Shared by the LDS and the global/scratch loads.
template <unsigned Bytes, ReadKind Kind>
inline void writeLoaded(uint32_t *d, unsigned l, const uint8_t *p) {
  if (Kind == Dwords) {
    for (unsigned i = 0; i < Bytes / 4; ++i)
      std::memcpy(&d[i * kWaveLanes + l], p + 4 * i, 4);
    return;
  }
  uint32_t v = 0;
  std::memcpy(&v, p, Bytes);
  switch (Kind) {
  case I8:
    v = uint32_t(int32_t(int8_t(v)));
    break;
  case I16:
    v = uint32_t(int32_t(int16_t(v)));
    break;
  case D16Lo:
  case U8D16Lo:
    v = (d[l] & 0xffff0000u) | v;
    break;
  case D16Hi:
  case U8D16Hi:
    v = (d[l] & 0xffffu) | v << 16;
    break;
  default:
    break;
  }
  d[l] = v;
}

template <unsigned Bytes, ReadKind Kind>
bool dsRead(Wave &w, const Instruction &in, ExecContext &ctx) {
  const uint32_t *addr = w.vgpr(in.src[0].index);
  uint32_t *d = w.vgpr(in.dst[0].index);
  bool ok = true;
  forLanes(w.exec(), [&](unsigned l) {
    if (!ok)
      return;
    uint64_t a = uint64_t(addr[l]) + uint32_t(in.offset);
    if (!ldsCheck(w, in, ctx, l, a, Bytes, false)) {
      ok = false;
      return;
    }
    const uint8_t *p = ctx.lds + a;
    writeLoaded<Bytes, Kind>(d, l, p);
  });
  if (!ok)
    return false;
  markPending(w, in, ctx, kLgkmCnt, &in.dst[0]);
  return true;
}

/// ds_read2*: two elements at addr + offset0 * Elem and addr + offset1 *
/// Elem (times 64 for st64) into consecutive registers.
template <unsigned Elem, bool St64>
bool dsRead2(Wave &w, const Instruction &in, ExecContext &ctx) {
  const uint32_t *addr = w.vgpr(in.src[0].index);
  uint32_t *d = w.vgpr(in.dst[0].index);
  const unsigned scale = Elem * (St64 ? 64 : 1), words = Elem / 4;
  bool ok = true;
  forLanes(w.exec(), [&](unsigned l) {
    // The address register may be one of the destinations.
    uint64_t base = addr[l];
    for (unsigned k = 0; k < 2 && ok; ++k) {
      uint64_t a = base + (k ? in.offset1 : in.offset0) * scale;
      if (!ldsCheck(w, in, ctx, l, a, Elem, false)) {
        ok = false;
        return;
      }
      for (unsigned i = 0; i < words; ++i)
        std::memcpy(&d[(k * words + i) * kWaveLanes + l], ctx.lds + a + 4 * i,
                    4);
    }
  });
  if (!ok)
    return false;
  markPending(w, in, ctx, kLgkmCnt, &in.dst[0]);
  return true;
}

template <unsigned Bytes, bool Hi>
bool dsWrite(Wave &w, const Instruction &in, ExecContext &ctx) {
  const uint32_t *addr = w.vgpr(in.src[0].index);
  const uint32_t *data = w.vgpr(in.src[1].index);
  bool ok = true;
  forLanes(w.exec(), [&](unsigned l) {
    if (!ok)
      return;
    uint64_t a = uint64_t(addr[l]) + uint32_t(in.offset);
    if (!ldsCheck(w, in, ctx, l, a, Bytes, true)) {
      ok = false;
      return;
    }
    uint8_t *p = ctx.lds + a;
    if (Bytes >= 4) {
      for (unsigned i = 0; i < Bytes / 4; ++i)
        std::memcpy(p + 4 * i, &data[i * kWaveLanes + l], 4);
      return;
    }
    uint32_t v = Hi ? data[l] >> 16 : data[l];
    std::memcpy(p, &v, Bytes);
  });
  if (!ok)
    return false;
  markPending(w, in, ctx, kLgkmCnt, nullptr);
  return true;
}

template <unsigned Elem, bool St64>
bool dsWrite2(Wave &w, const Instruction &in, ExecContext &ctx) {
  const uint32_t *addr = w.vgpr(in.src[0].index);
  const uint32_t *data[2] = {w.vgpr(in.src[1].index), w.vgpr(in.src[2].index)};
  const unsigned scale = Elem * (St64 ? 64 : 1), words = Elem / 4;
  bool ok = true;
  forLanes(w.exec(), [&](unsigned l) {
    for (unsigned k = 0; k < 2 && ok; ++k) {
      uint64_t a = uint64_t(addr[l]) + (k ? in.offset1 : in.offset0) * scale;
      if (!ldsCheck(w, in, ctx, l, a, Elem, true)) {
        ok = false;
        return;
      }
      for (unsigned i = 0; i < words; ++i)
        std::memcpy(ctx.lds + a + 4 * i, &data[k][i * kWaveLanes + l], 4);
    }
  });
  if (!ok)
    return false;
  markPending(w, in, ctx, kLgkmCnt, nullptr);
  return true;
}

bool dsAddU32(Wave &w, const Instruction &in, ExecContext &ctx) {
  const uint32_t *addr = w.vgpr(in.src[0].index);
  const uint32_t *data = w.vgpr(in.src[1].index);
  bool ok = true;
  forLanes(w.exec(), [&](unsigned l) {
    if (!ok)
      return;
    uint64_t a = uint64_t(addr[l]) + uint32_t(in.offset);
    // An atomic reads and writes.
    if (!ldsCheck(w, in, ctx, l, a, 4, true)) {
      ok = false;
      return;
    }
    uint32_t v;
    std::memcpy(&v, ctx.lds + a, 4);
    v += data[l];
    std::memcpy(ctx.lds + a, &v, 4);
  });
  if (!ok)
    return false;
  markPending(w, in, ctx, kLgkmCnt, nullptr);
  return true;
}

/// ds_swizzle_b32 (the ISA's "DS_SWIZZLE_B32" table, offset = offset1:
/// offset0): offset[15] set: quad-permute mode, lane i of each group of 4
/// reads lane offset[2i+1:2i] of its group; else bit-masks mode within each
/// group of 32 lanes: source = ((lane & and_mask) | or_mask) ^ xor_mask with
/// and_mask = offset[4:0], or_mask = offset[9:5], xor_mask = offset[14:10].
/// A lane whose source lane is outside EXEC reads 0.
bool dsSwizzle(Wave &w, const Instruction &in, ExecContext &ctx) {
  uint32_t off = uint32_t(in.offset) & 0xffff;
  const uint32_t *src = w.vgpr(in.src[0].index);
  uint32_t r[kWaveLanes];
  uint64_t exec = w.exec();
  for (unsigned l = 0; l < kWaveLanes; ++l) {
    unsigned s;
    if (off & 0x8000) {
      s = (l & ~3u) | ((off >> (2 * (l & 3))) & 3);
    } else {
      unsigned andMask = off & 31, orMask = (off >> 5) & 31,
               xorMask = (off >> 10) & 31;
      s = (l & 32) | ((((l & 31) & andMask) | orMask) ^ xorMask);
    }
    r[l] = (exec >> s) & 1 ? src[s] : 0;
  }
  uint32_t *d = w.vgpr(in.dst[0].index);
  forLanes(exec, [&](unsigned l) { d[l] = r[l]; });
  markPending(w, in, ctx, kLgkmCnt, &in.dst[0]);
  return true;
}

/// ds_bpermute_b32: D[l] = data[(addr[l] + offset) / 4 mod 64] (0 from an
/// inactive lane); ds_permute_b32: D[(addr[l] + offset) / 4 mod 64] =
/// data[l], the highest writing lane winning.
template <bool Backward>
bool dsPermute(Wave &w, const Instruction &in, ExecContext &ctx) {
  const uint32_t *addr = w.vgpr(in.src[0].index);
  const uint32_t *data = w.vgpr(in.src[1].index);
  uint64_t exec = w.exec();
  uint32_t r[kWaveLanes] = {};
  forLanes(exec, [&](unsigned l) {
    unsigned t = ((addr[l] + uint32_t(in.offset)) >> 2) & 63;
    if (Backward)
      r[l] = (exec >> t) & 1 ? data[t] : 0;
    else
      r[t] = data[l];
  });
  uint32_t *d = w.vgpr(in.dst[0].index);
  forLanes(exec, [&](unsigned l) { d[l] = r[l]; });
  markPending(w, in, ctx, kLgkmCnt, &in.dst[0]);
  return true;
}

//===----------------------------------------------------------------------===//
// Global and flat memory
//===----------------------------------------------------------------------===//

/// The host pointer for lane `l`'s global access, or nullptr with the error.
inline uint8_t *globalCheck(Wave &w, const Instruction &in, ExecContext &ctx,
                            unsigned l, uint64_t addr, unsigned bytes,
                            bool write) {
  const Region *r = ctx.memory->find(addr, bytes, ctx.hint);
  if (r && (!write || r->writable))
    return reinterpret_cast<uint8_t *>(uintptr_t(addr));
  std::string what = std::string("out-of-bounds global access: lane ") +
                     std::to_string(l) + (write ? " writes " : " reads ") +
                     std::to_string(bytes) + " bytes at " + hex(addr);
  if (r)
    what = std::string("write to the read-only ") + r->what + ": lane " +
           std::to_string(l) + " writes " + std::to_string(bytes) +
           " bytes at " + hex(addr);
  else if (const Region *n = ctx.memory->nearest(addr)) {
    if (addr >= n->begin)
      what += ", offset " + std::to_string(addr - n->begin) + " of the " +
              std::to_string(n->end - n->begin) + "-byte " + n->what + " at " +
              hex(n->begin) + " (past its end)";
    else
      what += ", " + std::to_string(n->begin - addr) + " bytes before the " +
              std::to_string(n->end - n->begin) + "-byte " + n->what + " at " +
              hex(n->begin);
  }
  ctx.fail(w, in, ErrorCode::LaunchFailed, what);
  return nullptr;
}

/// Lane `l`'s private (scratch) pointer: the lane's segment is
/// `scratchPerLane` bytes; `offset` is the byte offset in it.
inline uint8_t *privateCheck(Wave &w, const Instruction &in, ExecContext &ctx,
                             unsigned l, int64_t offset, unsigned bytes,
                             bool write) {
  if (offset >= 0 && uint64_t(offset) + bytes <= ctx.scratchPerLane)
    return ctx.scratch + size_t(l) * ctx.scratchPerLane + size_t(offset);
  ctx.fail(w, in, ErrorCode::LaunchFailed,
           std::string("out-of-bounds scratch access: lane ") +
               std::to_string(l) + (write ? " writes " : " reads ") +
               std::to_string(bytes) + " bytes at private offset " +
               std::to_string(offset) + ", outside the lane's " +
               std::to_string(ctx.scratchPerLane) + " bytes");
  return nullptr;
}

/// Lane `l`'s private offset for SCRATCH (saddr + vaddr + offset) and
/// MUBUF (soffset / 64: a wave-scaled offset as the stack pointer holds it,
/// + vaddr with offen, + offset) instructions.
inline int64_t privateOffset(const Wave &w, const Instruction &in, unsigned l) {
  if (in.enc == Encoding::MUBUF) {
    int64_t off = int64_t(scalar32(w, in.src[3]) / kWaveLanes) + in.offset;
    if (in.offen)
      off += w.vgpr(in.src[0].index)[l];
    return off;
  }
  int64_t off = in.offset;
  if (in.src[2].kind != OperandKind::None)
    off += int32_t(scalar32(w, in.src[2]));
  if (in.src[0].kind == OperandKind::VGPR)
    off += int32_t(w.vgpr(in.src[0].index)[l]);
  return off;
}

/// The host pointer for lane `l`'s GLOBAL or FLAT access at `addr`: a FLAT
/// address in the shared or private aperture (Exec.h) reaches LDS or the
/// lane's private segment, as a generic pointer to a __shared__ or local
/// variable does (clang selects between a global pointer and a local
/// array's generic address, then loads through it). Any other is global.
inline uint8_t *flatCheck(Wave &w, const Instruction &in, ExecContext &ctx,
                          unsigned l, uint64_t addr, unsigned bytes,
                          bool write) {
  if (in.enc == Encoding::FLAT) {
    if (addr - kPrivateAperture < kApertureBytes)
      return privateCheck(w, in, ctx, l, int64_t(addr - kPrivateAperture),
                          bytes, write);
    if (addr - kSharedAperture < kApertureBytes)
      return ldsCheck(w, in, ctx, l, addr - kSharedAperture, bytes, write)
                 ? ctx.lds + (addr - kSharedAperture)
                 : nullptr;
  }
  return globalCheck(w, in, ctx, l, addr, bytes, write);
}

inline bool isPrivate(const Instruction &in) {
  return in.enc == Encoding::SCRATCH || in.enc == Encoding::MUBUF;
}

template <unsigned Bytes, ReadKind Kind>
bool vmLoad(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (in.enc == Encoding::MUBUF && in.idxen)
    return ctx.fail(w, in, ErrorCode::Unsupported,
                    "MUBUF idxen is not implemented by gfx906-sim");
  uint32_t *d = w.vgpr(in.dst[0].index);
  bool priv = isPrivate(in), ok = true;
  forLanes(w.exec(), [&](unsigned l) {
    if (!ok)
      return;
    const uint8_t *p =
        priv
            ? privateCheck(w, in, ctx, l, privateOffset(w, in, l), Bytes, false)
            : flatCheck(w, in, ctx, l, globalAddress(w, in, l), Bytes, false);
    if (!p) {
      ok = false;
      return;
    }
    writeLoaded<Bytes, Kind>(d, l, p);
  });
  if (!ok)
    return false;
  markPending(w, in, ctx, kVmCnt, &in.dst[0]);
  return true;
}

template <unsigned Bytes, bool Hi>
bool vmStore(Wave &w, const Instruction &in, ExecContext &ctx) {
  if (in.enc == Encoding::MUBUF && in.idxen)
    return ctx.fail(w, in, ErrorCode::Unsupported,
                    "MUBUF idxen is not implemented by gfx906-sim");
  const uint32_t *data = w.vgpr(in.src[1].index);
  bool priv = isPrivate(in), ok = true;
  forLanes(w.exec(), [&](unsigned l) {
    if (!ok)
      return;
    uint8_t *p =
        priv ? privateCheck(w, in, ctx, l, privateOffset(w, in, l), Bytes, true)
             : flatCheck(w, in, ctx, l, globalAddress(w, in, l), Bytes, true);
    if (!p) {
      ok = false;
      return;
    }
    if (Bytes >= 4) {
      for (unsigned i = 0; i < Bytes / 4; ++i)
        std::memcpy(p + 4 * i, &data[i * kWaveLanes + l], 4);
      return;
    }
    uint32_t v = Hi ? data[l] >> 16 : data[l];
    std::memcpy(p, &v, Bytes);
  });
  if (!ok)
    return false;
  markPending(w, in, ctx, kVmCnt, nullptr);
  return true;
}

/// The atomic operations of GLOBAL/FLAT opcodes 0x40-0x4c (32-bit) and
/// 0x60-0x6c (64-bit): the new memory value from the old one `m` and the
/// data `s` (inc/dec wrap at `s`, as the ISA defines them).
template <typename T> T atomicResult(unsigned kind, T m, T s) {
  using S = typename std::make_signed<T>::type;
  switch (kind) {
  case 0x0: // swap
    return s;
  case 0x2: // add
    return T(m + s);
  case 0x3: // sub
    return T(m - s);
  case 0x4: // smin
    return S(m) < S(s) ? m : s;
  case 0x5: // umin
    return m < s ? m : s;
  case 0x6: // smax
    return S(m) > S(s) ? m : s;
  case 0x7: // umax
    return m > s ? m : s;
  case 0x8:
    return m & s;
  case 0x9:
    return m | s;
  case 0xa:
    return m ^ s;
  case 0xb: // inc: m >= s ? 0 : m + 1
    return m >= s ? T(0) : T(m + 1);
  default: // 0xc, dec: m == 0 || m > s ? s : m - 1
    return m == 0 || m > s ? s : T(m - 1);
  }
}

/// global_atomic_* / flat_atomic_*: per EXEC lane in lane order, an atomic
/// read-modify-write of the naturally aligned dword (qword for _x2) at the
/// lane's address, returning the old value with glc; cmpswap's data is
/// {src, cmp} and writes src where the old value equals cmp. Workgroups run
/// on several host threads, so the host's atomics carry it out; lanes of
/// one instruction that hit one address are applied in lane order (the ISA
/// leaves their order open). A FLAT atomic into the shared or private
/// aperture is refused.
template <typename T>
bool vmAtomic(Wave &w, const Instruction &in, ExecContext &ctx) {
  constexpr unsigned words = sizeof(T) / 4;
  const unsigned kind = in.info().opcode & 0x1f;
  const bool cmpswap = kind == 0x1;
  const uint32_t *data = w.vgpr(in.src[1].index);
  uint32_t *d = in.numDst ? w.vgpr(in.dst[0].index) : nullptr;
  bool ok = true;
  forLanes(w.exec(), [&](unsigned l) {
    if (!ok)
      return;
    uint64_t addr = globalAddress(w, in, l);
    if (in.enc == Encoding::FLAT && (addr - kPrivateAperture < kApertureBytes ||
                                     addr - kSharedAperture < kApertureBytes)) {
      ok = ctx.fail(w, in, ErrorCode::Unsupported,
                    "a flat atomic on LDS or private memory is not "
                    "implemented by gfx906-sim");
      return;
    }
    uint8_t *p = globalCheck(w, in, ctx, l, addr, sizeof(T), true);
    if (!p) {
      ok = false;
      return;
    }
    if (addr % sizeof(T)) {
      ok = ctx.fail(w, in, ErrorCode::LaunchFailed,
                    "misaligned atomic: lane " + std::to_string(l) + " at " +
                        hex(addr));
      return;
    }
    auto operand = [&](unsigned i) {
      T x = 0;
      for (unsigned k = 0; k < words; ++k)
        x |= T(data[(i * words + k) * kWaveLanes + l]) << (32 * k);
      return x;
    };
    T *m = reinterpret_cast<T *>(p);
    T src = operand(0), old = __atomic_load_n(m, __ATOMIC_SEQ_CST);
    if (cmpswap) {
      T cmp = operand(1);
      T expected = cmp;
      __atomic_compare_exchange_n(m, &expected, src, false, __ATOMIC_SEQ_CST,
                                  __ATOMIC_SEQ_CST);
      old = expected;
    } else {
      while (!__atomic_compare_exchange_n(
          m, &old, atomicResult<T>(kind, old, src), false, __ATOMIC_SEQ_CST,
          __ATOMIC_SEQ_CST)) {
      }
    }
    if (d)
      for (unsigned k = 0; k < words; ++k)
        d[k * kWaveLanes + l] = uint32_t(uint64_t(old) >> (32 * k));
  });
  if (!ok)
    return false;
  markPending(w, in, ctx, kVmCnt, d ? &in.dst[0] : nullptr);
  return true;
}

} // namespace

void fa::sim::registerMemory(ExecFn *t) {
  auto set = [&](Op op, ExecFn fn) { t[unsigned(op)] = fn; };
  set(Op::DS_ADD_U32, dsAddU32);
  set(Op::DS_WRITE_B32, dsWrite<4, false>);
  set(Op::DS_WRITE2_B32, dsWrite2<4, false>);
  set(Op::DS_WRITE2ST64_B32, dsWrite2<4, true>);
  set(Op::DS_WRITE_B8, dsWrite<1, false>);
  set(Op::DS_WRITE_B16, dsWrite<2, false>);
  set(Op::DS_READ_B32, dsRead<4, Dwords>);
  set(Op::DS_READ2_B32, dsRead2<4, false>);
  set(Op::DS_READ2ST64_B32, dsRead2<4, true>);
  set(Op::DS_READ_I8, dsRead<1, I8>);
  set(Op::DS_READ_U8, dsRead<1, U8>);
  set(Op::DS_READ_I16, dsRead<2, I16>);
  set(Op::DS_READ_U16, dsRead<2, U16>);
  set(Op::DS_SWIZZLE_B32, dsSwizzle);
  set(Op::DS_PERMUTE_B32, dsPermute<false>);
  set(Op::DS_BPERMUTE_B32, dsPermute<true>);
  set(Op::DS_WRITE_B64, dsWrite<8, false>);
  set(Op::DS_WRITE2_B64, dsWrite2<8, false>);
  set(Op::DS_WRITE2ST64_B64, dsWrite2<8, true>);
  set(Op::DS_WRITE_B8_D16_HI, dsWrite<1, true>);
  set(Op::DS_WRITE_B16_D16_HI, dsWrite<2, true>);
  set(Op::DS_READ_U8_D16, dsRead<1, U8D16Lo>);
  set(Op::DS_READ_U8_D16_HI, dsRead<1, U8D16Hi>);
  set(Op::DS_READ_U16_D16, dsRead<2, D16Lo>);
  set(Op::DS_READ_U16_D16_HI, dsRead<2, D16Hi>);
  set(Op::DS_READ_B64, dsRead<8, Dwords>);
  set(Op::DS_READ2_B64, dsRead2<8, false>);
  set(Op::DS_READ2ST64_B64, dsRead2<8, true>);
  set(Op::DS_WRITE_B96, dsWrite<12, false>);
  set(Op::DS_WRITE_B128, dsWrite<16, false>);
  set(Op::DS_READ_B96, dsRead<12, Dwords>);
  set(Op::DS_READ_B128, dsRead<16, Dwords>);

#define VM_FAMILY(SEG)                                                         \
  set(Op::SEG##_LOAD_UBYTE, vmLoad<1, U8>);                                    \
  set(Op::SEG##_LOAD_SBYTE, vmLoad<1, I8>);                                    \
  set(Op::SEG##_LOAD_USHORT, vmLoad<2, U16>);                                  \
  set(Op::SEG##_LOAD_SSHORT, vmLoad<2, I16>);                                  \
  set(Op::SEG##_LOAD_DWORD, vmLoad<4, Dwords>);                                \
  set(Op::SEG##_LOAD_DWORDX2, vmLoad<8, Dwords>);                              \
  set(Op::SEG##_LOAD_DWORDX3, vmLoad<12, Dwords>);                             \
  set(Op::SEG##_LOAD_DWORDX4, vmLoad<16, Dwords>);                             \
  set(Op::SEG##_STORE_BYTE, vmStore<1, false>);                                \
  set(Op::SEG##_STORE_BYTE_D16_HI, vmStore<1, true>);                          \
  set(Op::SEG##_STORE_SHORT, vmStore<2, false>);                               \
  set(Op::SEG##_STORE_SHORT_D16_HI, vmStore<2, true>);                         \
  set(Op::SEG##_STORE_DWORD, vmStore<4, false>);                               \
  set(Op::SEG##_STORE_DWORDX2, vmStore<8, false>);                             \
  set(Op::SEG##_STORE_DWORDX3, vmStore<12, false>);                            \
  set(Op::SEG##_STORE_DWORDX4, vmStore<16, false>);                            \
  set(Op::SEG##_LOAD_UBYTE_D16, vmLoad<1, U8D16Lo>);                           \
  set(Op::SEG##_LOAD_UBYTE_D16_HI, vmLoad<1, U8D16Hi>);                        \
  set(Op::SEG##_LOAD_SHORT_D16, vmLoad<2, D16Lo>);                             \
  set(Op::SEG##_LOAD_SHORT_D16_HI, vmLoad<2, D16Hi>);
  VM_FAMILY(GLOBAL)
  VM_FAMILY(FLAT)
  VM_FAMILY(SCRATCH)
#undef VM_FAMILY
#define ATOMIC_FAMILY(SEG)                                                     \
  for (Op op :                                                                 \
       {Op::SEG##_ATOMIC_SWAP, Op::SEG##_ATOMIC_CMPSWAP, Op::SEG##_ATOMIC_ADD, \
        Op::SEG##_ATOMIC_SUB, Op::SEG##_ATOMIC_SMIN, Op::SEG##_ATOMIC_UMIN,    \
        Op::SEG##_ATOMIC_SMAX, Op::SEG##_ATOMIC_UMAX, Op::SEG##_ATOMIC_AND,    \
        Op::SEG##_ATOMIC_OR, Op::SEG##_ATOMIC_XOR, Op::SEG##_ATOMIC_INC,       \
        Op::SEG##_ATOMIC_DEC})                                                 \
    set(op, vmAtomic<uint32_t>);                                               \
  for (Op op : {Op::SEG##_ATOMIC_SWAP_X2, Op::SEG##_ATOMIC_CMPSWAP_X2,         \
                Op::SEG##_ATOMIC_ADD_X2, Op::SEG##_ATOMIC_SUB_X2,              \
                Op::SEG##_ATOMIC_SMIN_X2, Op::SEG##_ATOMIC_UMIN_X2,            \
                Op::SEG##_ATOMIC_SMAX_X2, Op::SEG##_ATOMIC_UMAX_X2,            \
                Op::SEG##_ATOMIC_AND_X2, Op::SEG##_ATOMIC_OR_X2,               \
                Op::SEG##_ATOMIC_XOR_X2, Op::SEG##_ATOMIC_INC_X2,              \
                Op::SEG##_ATOMIC_DEC_X2})                                      \
    set(op, vmAtomic<uint64_t>);
  ATOMIC_FAMILY(GLOBAL)
  ATOMIC_FAMILY(FLAT)
#undef ATOMIC_FAMILY
  set(Op::BUFFER_LOAD_UBYTE, vmLoad<1, U8>);
  set(Op::BUFFER_LOAD_SBYTE, vmLoad<1, I8>);
  set(Op::BUFFER_LOAD_USHORT, vmLoad<2, U16>);
  set(Op::BUFFER_LOAD_SSHORT, vmLoad<2, I16>);
  set(Op::BUFFER_LOAD_DWORD, vmLoad<4, Dwords>);
  set(Op::BUFFER_LOAD_DWORDX2, vmLoad<8, Dwords>);
  set(Op::BUFFER_LOAD_DWORDX4, vmLoad<16, Dwords>);
  set(Op::BUFFER_STORE_BYTE, vmStore<1, false>);
  set(Op::BUFFER_STORE_SHORT, vmStore<2, false>);
  set(Op::BUFFER_STORE_DWORD, vmStore<4, false>);
  set(Op::BUFFER_STORE_DWORDX2, vmStore<8, false>);
  set(Op::BUFFER_STORE_DWORDX4, vmStore<16, false>);
}

const ExecFn *fa::sim::execTable() {
  static const struct Table {
    ExecFn fns[kNumOps];
    Table() : fns() {
      registerSalu(fns);
      registerSopp(fns);
      registerValu(fns);
      registerValuFloat(fns);
      registerMemory(fns);
    }
  } table;
  return table.fns;
}
