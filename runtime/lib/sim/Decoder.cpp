//===- Decoder.cpp - gfx906 machine words to decoded instructions ---------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the GFX9 decoder: the encoding is recognised from the
// high bits of the first dword (the fixed prefixes of the Vega ISA's
// microcode formats), the opcode looked up in per-encoding tables built once
// from Opcodes.def, and the operand fields unpacked into Operand values with
// their sizes from the row's operand types. Anything the table or the field
// rules do not cover is an error carrying the pc and the raw dwords.
//
//===----------------------------------------------------------------------===//

#include "sim/Decoder.h"

#include <array>
#include <cstdio>
#include <cstring>
#include <string>

namespace fa {
namespace sim {

namespace {

const OpInfo kOpInfos[kNumOps + 1] = {
#define FA_SIM_OP(name, mnemonic, enc, opcode, dst, src0, src1, src2, flags)   \
  {mnemonic,                                                                   \
   Encoding::enc,                                                              \
   opcode,                                                                     \
   OperandType::dst,                                                           \
   OperandType::src0,                                                          \
   OperandType::src1,                                                          \
   OperandType::src2,                                                          \
   static_cast<uint16_t>(flags)},
#include "sim/Opcodes.def"
    {"<invalid>", Encoding::SOPP, 0, OperandType::None, OperandType::None,
     OperandType::None, OperandType::None, 0},
};

/// Opcode -> Op for each encoding; Op::Invalid where the table has no row.
/// VOP3 holds the VOP3-only rows and the promoted VOP1/VOP2/VOPC rows.
struct OpcodeMaps {
  std::array<Op, 256> sop1, smem, vop1, vopc, ds;
  std::array<Op, 128> sop2, sopc, sopp, vop3p, global, flat, scratch, mubuf;
  std::array<Op, 64> vop2;
  std::array<Op, 32> sopk;
  std::array<Op, 1024> vop3;

  OpcodeMaps() {
    for (auto *a : {&sop1, &smem, &vop1, &vopc, &ds})
      a->fill(Op::Invalid);
    for (auto *a :
         {&sop2, &sopc, &sopp, &vop3p, &global, &flat, &scratch, &mubuf})
      a->fill(Op::Invalid);
    vop2.fill(Op::Invalid);
    sopk.fill(Op::Invalid);
    vop3.fill(Op::Invalid);
    for (unsigned i = 0; i < kNumOps; ++i) {
      Op op = static_cast<Op>(i);
      unsigned opc = kOpInfos[i].opcode;
      switch (kOpInfos[i].enc) {
      case Encoding::SOP1:
        sop1.at(opc) = op;
        break;
      case Encoding::SOP2:
        sop2.at(opc) = op;
        break;
      case Encoding::SOPK:
        sopk.at(opc) = op;
        break;
      case Encoding::SOPC:
        sopc.at(opc) = op;
        break;
      case Encoding::SOPP:
        sopp.at(opc) = op;
        break;
      case Encoding::SMEM:
        smem.at(opc) = op;
        break;
      case Encoding::VOP1:
        vop1.at(opc) = op;
        // v_nop and v_readfirstlane_b32 have no VOP3 form.
        if (!(kOpInfos[i].flags & OF_NoSuffix))
          vop3.at(0x140 + opc) = op;
        break;
      case Encoding::VOP2:
        vop2.at(opc) = op;
        // v_madmk/v_madak (a literal operand) have no VOP3 form.
        if (!(kOpInfos[i].flags & OF_Lit))
          vop3.at(0x100 + opc) = op;
        break;
      case Encoding::VOPC:
        vopc.at(opc) = op;
        vop3.at(opc) = op;
        break;
      case Encoding::VOP3A:
      case Encoding::VOP3B:
        vop3.at(opc) = op;
        break;
      case Encoding::VOP3P:
        vop3p.at(opc) = op;
        break;
      case Encoding::DS:
        ds.at(opc) = op;
        break;
      case Encoding::GLOBAL:
        global.at(opc) = op;
        break;
      case Encoding::FLAT:
        flat.at(opc) = op;
        break;
      case Encoding::SCRATCH:
        scratch.at(opc) = op;
        break;
      case Encoding::MUBUF:
        mubuf.at(opc) = op;
        break;
      }
    }
  }
};

const OpcodeMaps &maps() {
  static const OpcodeMaps m;
  return m;
}

unsigned dwordsOf(OperandType t) {
  switch (t) {
  case OperandType::None:
    return 0;
  case OperandType::B64:
  case OperandType::F64:
    return 2;
  case OperandType::B96:
    return 3;
  case OperandType::B128:
    return 4;
  case OperandType::B256:
    return 8;
  case OperandType::B512:
    return 16;
  default:
    return 1;
  }
}

bool is16(OperandType t) {
  return t == OperandType::B16 || t == OperandType::F16 ||
         t == OperandType::PkB16 || t == OperandType::PkF16;
}
bool is64(OperandType t) {
  return t == OperandType::B64 || t == OperandType::F64;
}

uint32_t bits(uint32_t word, unsigned hi, unsigned lo) {
  return (word >> lo) & ((hi - lo == 31) ? ~0u : ((1u << (hi - lo + 1)) - 1));
}

/// Decodes one instruction; errors share the pc and raw words.
class InstDecoder {
public:
  InstDecoder(const uint8_t *bytes, size_t available, uint32_t pc)
      : bytes_(bytes), available_(available), pc_(pc) {}

  Expected<Instruction> run();

private:
  const uint8_t *bytes_;
  size_t available_;
  uint32_t pc_;
  uint32_t w0_ = 0, w1_ = 0;
  unsigned words_ = 0; ///< dwords read so far (shown in errors)
  Instruction in_;
  std::string error_; ///< first error; decoding stops at it

  bool fail(std::string what) {
    if (error_.empty())
      error_ = std::move(what);
    return false;
  }
  bool readWord(unsigned i, uint32_t &out) {
    if (available_ < 4u * (i + 1))
      return fail("truncated instruction: " + std::to_string(available_) +
                  " bytes left, needs " + std::to_string(4 * (i + 1)));
    std::memcpy(&out, bytes_ + 4 * i, 4); // little-endian host assumed
    words_ = i + 1 > words_ ? i + 1 : words_;
    return true;
  }
  bool second() { return readWord(1, w1_); }
  uint32_t literalWord_ = 0;
  bool haveLiteral_ = false;

  Status error() const {
    char buf[64];
    std::string raw;
    for (unsigned i = 0; i < words_; ++i) {
      uint32_t w;
      std::memcpy(&w, bytes_ + 4 * i, 4);
      std::snprintf(buf, sizeof buf, "%s%08X", i ? " " : "", w);
      raw += buf;
    }
    std::snprintf(buf, sizeof buf, "0x%x", pc_);
    return Status::error(ErrorCode::CorruptCodeObject,
                         "cannot decode the gfx906 instruction at pc " +
                             std::string(buf) + " [" + raw + "]: " + error_);
  }

  bool setOp(Op op, Encoding enc, const char *encName, unsigned opcode) {
    if (op == Op::Invalid)
      return fail(std::string("opcode ") + std::to_string(opcode) + " of " +
                  encName + " is not implemented");
    in_.op = op;
    in_.enc = enc;
    return true;
  }

  // Operands.
  bool scalarReg(unsigned field, unsigned count, Operand &o, bool isDst);
  bool source(unsigned field, OperandType type, Operand &o, bool allowLiteral,
              bool allowVgpr = true);
  bool vgpr(unsigned index, unsigned count, Operand &o);

  bool checkRules();
  bool decodeSop2();
  bool decodeSopk();
  bool decodeSop1();
  bool decodeSopc();
  bool decodeSopp();
  bool decodeSmem();
  bool decodeVop1();
  bool decodeVop2();
  bool decodeVopc();
  bool decodeSdwa(unsigned numSrc);
  bool decodeDpp(unsigned numSrc);
  bool decodeVop3();
  bool decodeVop3p();
  bool decodeDs();
  bool decodeFlat();
  bool decodeMubuf();
};

bool InstDecoder::vgpr(unsigned index, unsigned count, Operand &o) {
  if (index + count > 256)
    return fail("v" + std::to_string(index) + " spans " +
                std::to_string(count) + " registers past v255");
  o.kind = OperandKind::VGPR;
  o.index = static_cast<uint16_t>(index);
  o.count = static_cast<uint8_t>(count);
  return true;
}

/// Fields 0-127 of the scalar operand encoding (registers only).
bool InstDecoder::scalarReg(unsigned field, unsigned count, Operand &o,
                            bool isDst) {
  o.count = static_cast<uint8_t>(count);
  auto special = [&](OperandKind kind, unsigned base, unsigned size) {
    if (field + count > base + size)
      return fail("register field " + std::to_string(field) + " spans " +
                  std::to_string(count) + " dwords past its register");
    o.kind = kind;
    o.index = static_cast<uint16_t>(field - base);
    return true;
  };
  if (field <= 101)
    return special(OperandKind::SGPR, 0, 102);
  if (field <= 103)
    return special(OperandKind::FlatScratch, 102, 2);
  if (field <= 105)
    return special(OperandKind::Xnack, 104, 2);
  if (field <= 107)
    return special(OperandKind::VCC, 106, 2);
  if (field <= 123)
    return special(OperandKind::TTMP, 108, 16);
  if (field == 124)
    return special(OperandKind::M0, 124, 1);
  if (field == 126 || field == 127)
    return special(OperandKind::EXEC, 126, 2);
  (void)isDst;
  return fail("scalar register field " + std::to_string(field) +
              " is reserved or not a register");
}

/// The 9-bit source operand encoding (SALU sources use 0-255 of it).
bool InstDecoder::source(unsigned field, OperandType type, Operand &o,
                         bool allowLiteral, bool allowVgpr) {
  unsigned count = dwordsOf(type);
  o = Operand();
  o.count = static_cast<uint8_t>(count);
  if (field < 128 && field != 125)
    return scalarReg(field, count, o, false);
  if (field >= 256) {
    if (!allowVgpr)
      return fail("a VGPR (v" + std::to_string(field - 256) +
                  ") where a scalar operand is required");
    return vgpr(field - 256, count, o);
  }
  o.index = static_cast<uint16_t>(field);
  if (field >= 128 && field <= 208) {
    int64_t v = field <= 192 ? int64_t(field) - 128 : 192 - int64_t(field);
    o.kind = OperandKind::InlineInt;
    o.imm = is64(type) ? uint64_t(v) : uint64_t(uint32_t(int32_t(v)));
    return true;
  }
  if (field >= 240 && field <= 248) {
    // Float constants in a 16-bit integer operand: the ISA does not say
    // which bits they give (LLVM refuses them too). Packed 16-bit integer
    // operands take the f16 pattern, as LLVM's AMDGPU backend reads them.
    if (type == OperandType::B16)
      return fail("float inline constant " + std::to_string(field) +
                  " in a 16-bit integer operand");
    // Values 0.5, -0.5, 1, -1, 2, -2, 4, -4, 1/(2*pi) in f16, f32, f64.
    static const uint16_t h[9] = {0x3800, 0xb800, 0x3c00, 0xbc00, 0x4000,
                                  0xc000, 0x4400, 0xc400, 0x3118};
    static const uint32_t f[9] = {0x3f000000, 0xbf000000, 0x3f800000,
                                  0xbf800000, 0x40000000, 0xc0000000,
                                  0x40800000, 0xc0800000, 0x3e22f983};
    static const uint64_t d[9] = {
        0x3fe0000000000000, 0xbfe0000000000000, 0x3ff0000000000000,
        0xbff0000000000000, 0x4000000000000000, 0xc000000000000000,
        0x4010000000000000, 0xc010000000000000, 0x3fc45f306dc9c882};
    unsigned i = field - 240;
    o.kind = OperandKind::InlineFloat;
    o.imm = is64(type) ? d[i] : is16(type) ? h[i] : f[i];
    return true;
  }
  switch (field) {
  case 235:
  case 236:
  case 237:
  case 238:
  case 239:
    o.kind = OperandKind::ApertureSrc;
    return true;
  case 251:
    o.kind = OperandKind::VCCZ;
    return true;
  case 252:
    o.kind = OperandKind::EXECZ;
    return true;
  case 253:
    o.kind = OperandKind::SCC;
    return true;
  case 254:
    o.kind = OperandKind::LdsDirect;
    return true;
  case 255: {
    if (!allowLiteral)
      return fail("a literal constant where this encoding allows none");
    if (!haveLiteral_) {
      unsigned at = (in_.size / 4);
      if (!readWord(at, literalWord_))
        return false;
      haveLiteral_ = true;
      in_.size += 4;
    }
    o.kind = OperandKind::Literal;
    // 16-bit operands read the literal's low half; f64 ones take it as the
    // high dword (LLVM's disassembler reads them the same way).
    if (type == OperandType::F64)
      o.imm = uint64_t(literalWord_) << 32;
    else if (is16(type))
      o.imm = literalWord_ & 0xffff;
    else
      o.imm = literalWord_;
    return true;
  }
  default:
    break;
  }
  return fail("source operand field " + std::to_string(field) +
              " is reserved or not supported here");
}

/// Sets the counts and returns the row's number of sources.
unsigned countSources(const OpInfo &info) {
  return (info.src0 != OperandType::None) + (info.src1 != OperandType::None) +
         (info.src2 != OperandType::None);
}

bool isFloat(OperandType t) {
  return t == OperandType::F16 || t == OperandType::F32 ||
         t == OperandType::F64 || t == OperandType::PkF16;
}

/// Rules beyond the field layouts: combinations whose effect the ISA leaves
/// undefined or that it forbids, refused rather than guessed (LLVM's
/// disassembler refuses them too).
bool InstDecoder::checkRules() {
  const OpInfo &info = in_.info();
  bool vop = in_.enc == Encoding::VOP1 || in_.enc == Encoding::VOP2 ||
             in_.enc == Encoding::VOPC || in_.enc == Encoding::VOP3A ||
             in_.enc == Encoding::VOP3B;
  if (vop) {
    const OperandType types[3] = {info.src0, info.src1, info.src2};
    for (unsigned i = 0; i < 3; ++i)
      if (((in_.neg | in_.abs) >> i) & 1 && !isFloat(types[i]))
        return fail("neg/abs modifier on src" + std::to_string(i) +
                    ", not a float operand");
    if (in_.omod && !isFloat(info.dst))
      return fail("output modifier on a result that is not a float");
    if (in_.sdwa || in_.dpp) {
      // The VCC/SGPR masks of compares and carries are not data operands.
      bool wide = (in_.enc != Encoding::VOPC && dwordsOf(info.dst) > 1) ||
                  dwordsOf(info.src0) > 1 || dwordsOf(info.src1) > 1 ||
                  (!(info.flags & OF_CarryIn) && dwordsOf(info.src2) > 1);
      if (wide && in_.sdwa)
        return fail("SDWA form of an instruction with 64-bit operands");
      if (wide)
        return fail("DPP on 64-bit operands is not supported");
      if (info.flags & OF_ScalarDst)
        return fail("SDWA/DPP form of an instruction with a scalar result");
      if (in_.sdwa && (in_.op == Op::V_MAC_F32 || in_.op == Op::V_FMAC_F32))
        return fail("v_mac/v_fmac have no SDWA form on GFX9");
      if (in_.sdwa && in_.op == Op::V_CNDMASK_B32 &&
          (in_.sdwaCtl.srcSext[0] || in_.sdwaCtl.srcSext[1]))
        return fail("sext on the sources of v_cndmask_b32");
    }
  }
  // The constant bus: a VALU instruction reads at most one scalar value
  // (an SGPR, VCC, EXEC, M0 or the literal; the same one twice counts once).
  // v_writelane_b32 is the ISA's exception (its lane select is the second).
  if ((vop || in_.enc == Encoding::VOP3P) && in_.op != Op::V_WRITELANE_B32) {
    const Operand *first = nullptr;
    for (unsigned i = 0; i < in_.numSrc && i < 3; ++i) {
      const Operand &o = in_.src[i];
      bool scalar = (o.isReg() && o.kind != OperandKind::VGPR) ||
                    o.kind == OperandKind::Literal;
      if (!scalar)
        continue;
      if (!first) {
        first = &o;
      } else if (first->kind != o.kind || first->index != o.index) {
        return fail("reads two scalar values (src" + std::to_string(i) +
                    " and an earlier source); gfx906 reads one per VALU "
                    "instruction");
      }
    }
  }
  auto notVgpr = [&](unsigned i) {
    if (in_.src[i].kind != OperandKind::VGPR)
      return true;
    return fail(std::string(info.mnemonic) + " src" + std::to_string(i) +
                " must be scalar");
  };
  switch (in_.op) {
  case Op::V_READLANE_B32:
    return notVgpr(1);
  case Op::V_WRITELANE_B32:
    return notVgpr(0) && notVgpr(1);
  case Op::S_SETPC_B64:
  case Op::S_SWAPPC_B64:
    if (!in_.src[0].isReg())
      return fail(std::string(info.mnemonic) +
                  " jumps to a register pair, not a constant");
    return true;
  default:
    return true;
  }
}

bool InstDecoder::decodeSop2() {
  unsigned opc = bits(w0_, 29, 23);
  if (!setOp(maps().sop2.at(opc), Encoding::SOP2, "SOP2", opc))
    return false;
  const OpInfo &info = in_.info();
  in_.numDst = 1;
  in_.numSrc = 2;
  return source(bits(w0_, 7, 0), info.src0, in_.src[0], true, false) &&
         source(bits(w0_, 15, 8), info.src1, in_.src[1], true, false) &&
         scalarReg(bits(w0_, 22, 16), dwordsOf(info.dst), in_.dst[0], true);
}

bool InstDecoder::decodeSopk() {
  unsigned opc = bits(w0_, 27, 23);
  if (!setOp(maps().sopk.at(opc), Encoding::SOPK, "SOPK", opc))
    return false;
  const OpInfo &info = in_.info();
  in_.simm16 = static_cast<int16_t>(bits(w0_, 15, 0));
  Operand reg;
  if (!scalarReg(bits(w0_, 22, 16), 1, reg, true))
    return false;
  if (info.flags & OF_SdstSrc) {
    in_.src[0] = reg;
    in_.numSrc = 1;
  } else {
    in_.dst[0] = reg;
    in_.numDst = 1;
  }
  return true;
}

bool InstDecoder::decodeSop1() {
  unsigned opc = bits(w0_, 15, 8);
  if (!setOp(maps().sop1.at(opc), Encoding::SOP1, "SOP1", opc))
    return false;
  const OpInfo &info = in_.info();
  if (info.src0 != OperandType::None) {
    in_.numSrc = 1;
    if (!source(bits(w0_, 7, 0), info.src0, in_.src[0], true, false))
      return false;
  }
  if (info.dst != OperandType::None) {
    in_.numDst = 1;
    if (!scalarReg(bits(w0_, 22, 16), dwordsOf(info.dst), in_.dst[0], true))
      return false;
  }
  return true;
}

bool InstDecoder::decodeSopc() {
  unsigned opc = bits(w0_, 22, 16);
  if (!setOp(maps().sopc.at(opc), Encoding::SOPC, "SOPC", opc))
    return false;
  const OpInfo &info = in_.info();
  in_.numSrc = 2;
  return source(bits(w0_, 7, 0), info.src0, in_.src[0], true, false) &&
         source(bits(w0_, 15, 8), info.src1, in_.src[1], true, false);
}

bool InstDecoder::decodeSopp() {
  unsigned opc = bits(w0_, 22, 16);
  if (!setOp(maps().sopp.at(opc), Encoding::SOPP, "SOPP", opc))
    return false;
  in_.simm16 = static_cast<int16_t>(bits(w0_, 15, 0));
  if (in_.info().flags & OF_Branch)
    in_.branchTarget = uint32_t(int64_t(pc_) + 4 + int64_t(in_.simm16) * 4);
  if (in_.op == Op::S_WAITCNT) {
    uint32_t s = bits(w0_, 15, 0);
    in_.vmcnt = static_cast<uint8_t>(bits(s, 3, 0) | (bits(s, 15, 14) << 4));
    in_.expcnt = static_cast<uint8_t>(bits(s, 6, 4));
    in_.lgkmcnt = static_cast<uint8_t>(bits(s, 11, 8));
  }
  return true;
}

bool InstDecoder::decodeSmem() {
  in_.size = 8;
  if (!second())
    return false;
  unsigned opc = bits(w0_, 25, 18);
  if (!setOp(maps().smem.at(opc), Encoding::SMEM, "SMEM", opc))
    return false;
  const OpInfo &info = in_.info();
  in_.glc = bits(w0_, 16, 16);
  in_.smemImm = bits(w0_, 17, 17);
  bool soe = bits(w0_, 14, 14);
  if (bits(w0_, 15, 15))
    return fail("SMEM nv bit is set");
  in_.numDst = 1;
  in_.numSrc = 1;
  if (!scalarReg(bits(w0_, 5, 0) * 2, dwordsOf(info.src0), in_.src[0], false) ||
      !scalarReg(bits(w0_, 12, 6), dwordsOf(info.dst), in_.dst[0], true))
    return false;
  // imm=1: OFFSET is a 21-bit signed byte offset (GFX9), soffset only with
  // soe; imm=0: OFFSET[6:0] names the soffset SGPR.
  if (in_.smemImm) {
    in_.offset = int32_t(bits(w1_, 20, 0) << 11) >> 11;
    if (soe) {
      in_.smemSoffset = true;
      in_.numSrc = 2;
      return scalarReg(bits(w1_, 31, 25), 1, in_.src[1], false);
    }
    return true;
  }
  if (soe)
    return fail("SMEM soe without imm");
  in_.smemSoffset = true;
  in_.numSrc = 2;
  return scalarReg(bits(w1_, 6, 0), 1, in_.src[1], false);
}

bool InstDecoder::decodeVop1() {
  unsigned opc = bits(w0_, 16, 9);
  if (!setOp(maps().vop1.at(opc), Encoding::VOP1, "VOP1", opc))
    return false;
  const OpInfo &info = in_.info();
  unsigned src0 = bits(w0_, 8, 0);
  in_.numSrc = info.src0 != OperandType::None;
  if (info.dst != OperandType::None) {
    in_.numDst = 1;
    unsigned d = bits(w0_, 24, 17);
    if (info.flags & OF_ScalarDst) {
      if (!scalarReg(d, 1, in_.dst[0], true))
        return false;
    } else if (!vgpr(d, dwordsOf(info.dst), in_.dst[0])) {
      return false;
    }
  }
  if (src0 == 249)
    return decodeSdwa(in_.numSrc);
  if (src0 == 250)
    return decodeDpp(in_.numSrc);
  if ((info.flags & OF_VgprSrc0) && src0 < 256)
    return fail(std::string(info.mnemonic) + " reads a VGPR, not field " +
                std::to_string(src0));
  return in_.numSrc == 0 || source(src0, info.src0, in_.src[0], true);
}

bool InstDecoder::decodeVop2() {
  unsigned opc = bits(w0_, 30, 25);
  if (!setOp(maps().vop2.at(opc), Encoding::VOP2, "VOP2", opc))
    return false;
  const OpInfo &info = in_.info();
  unsigned src0 = bits(w0_, 8, 0);
  in_.numDst = 1;
  in_.numSrc = 2;
  if (!vgpr(bits(w0_, 24, 17), dwordsOf(info.dst), in_.dst[0]) ||
      !vgpr(bits(w0_, 16, 9), dwordsOf(info.src1), in_.src[1]))
    return false;
  // The e32 forms' implicit VCC: carry-out in dst[1], mask in src[2].
  Operand vcc;
  vcc.kind = OperandKind::VCC;
  vcc.count = 2;
  if (info.flags & OF_CarryOut) {
    in_.dst[1] = vcc;
    in_.numDst = 2;
  }
  if (info.flags & OF_CarryIn) {
    in_.src[2] = vcc;
    in_.numSrc = 3;
  }
  if (info.flags & OF_Lit) {
    // v_madmk_f32 d, s0, K, s1 and v_madak_f32 d, s0, s1, K: the constant
    // K takes the literal dword, so src0 cannot also be a literal.
    // A literal src0 is K itself (one literal dword per instruction).
    if (src0 == 249 || src0 == 250)
      return fail("v_madmk/v_madak with an SDWA or DPP src0");
    Operand k;
    if (!source(255, info.src0, k, true) ||
        !source(src0, info.src0, in_.src[0], true))
      return false;
    in_.numSrc = 3;
    if (in_.op == Op::V_MADMK_F32) {
      in_.src[2] = in_.src[1];
      in_.src[1] = k;
    } else {
      in_.src[2] = k;
    }
    return true;
  }
  if (src0 == 249)
    return decodeSdwa(2);
  if (src0 == 250)
    return decodeDpp(2);
  return source(src0, info.src0, in_.src[0], true);
}

bool InstDecoder::decodeVopc() {
  unsigned opc = bits(w0_, 24, 17);
  if (!setOp(maps().vopc.at(opc), Encoding::VOPC, "VOPC", opc))
    return false;
  const OpInfo &info = in_.info();
  unsigned src0 = bits(w0_, 8, 0);
  in_.numDst = 1;
  in_.numSrc = 2;
  in_.dst[0].kind = OperandKind::VCC;
  in_.dst[0].count = 2;
  if (!vgpr(bits(w0_, 16, 9), dwordsOf(info.src1), in_.src[1]))
    return false;
  if (src0 == 249)
    return decodeSdwa(2);
  if (src0 == 250)
    return decodeDpp(2);
  return source(src0, info.src0, in_.src[0], true);
}

/// The SDWA dword (GFX9 layout) of a VOP1/VOP2/VOPC instruction.
bool InstDecoder::decodeSdwa(unsigned numSrc) {
  in_.size = 8;
  if (!second())
    return false;
  const OpInfo &info = in_.info();
  in_.sdwa = true;
  Sdwa &s = in_.sdwaCtl;
  for (unsigned i = 0; i < numSrc && i < 2; ++i) {
    unsigned base = 16 + 8 * i;
    s.srcSel[i] = static_cast<uint8_t>(bits(w1_, base + 2, base));
    s.srcSext[i] = bits(w1_, base + 3, base + 3);
    in_.neg |= bits(w1_, base + 4, base + 4) << i;
    in_.abs |= bits(w1_, base + 5, base + 5) << i;
    if (s.srcSel[i] > 6)
      return fail("SDWA src" + std::to_string(i) + "_sel " +
                  std::to_string(s.srcSel[i]) + " is reserved");
  }
  // src0: an SGPR/constant when S0 is set, else a VGPR; no literal.
  if (numSrc > 0) {
    unsigned f = bits(w1_, 7, 0);
    if (!source(bits(w1_, 23, 23) ? f : f + 256, info.src0, in_.src[0], false))
      return false;
  }
  if (numSrc > 1 && bits(w1_, 31, 31)) {
    if (!source(bits(w0_, 16, 9), info.src1, in_.src[1], false))
      return false;
  }
  if (in_.enc == Encoding::VOPC) {
    // SD set: the mask goes to the SGPR pair in bits 14:8, else to VCC.
    if (bits(w1_, 15, 15)) {
      if (!scalarReg(bits(w1_, 14, 8), 2, in_.dst[0], true))
        return false;
    }
    if (bits(w1_, 13, 13))
      in_.clamp = true;
    return true;
  }
  s.dstSel = static_cast<uint8_t>(bits(w1_, 10, 8));
  s.dstUnused = static_cast<uint8_t>(bits(w1_, 12, 11));
  in_.clamp = bits(w1_, 13, 13);
  in_.omod = static_cast<uint8_t>(bits(w1_, 15, 14));
  if (s.dstSel > 6 || s.dstUnused > 2)
    return fail("SDWA dst_sel/dst_unused value is reserved");
  return true;
}

/// The DPP dword of a VOP1/VOP2/VOPC instruction.
bool InstDecoder::decodeDpp(unsigned numSrc) {
  in_.size = 8;
  if (!second())
    return false;
  // The Vega ISA lists DPP after VOPC too, but LLVM neither assembles nor
  // decodes it for GFX9, and how row_mask, bank_mask and bound_ctrl act on
  // the VCC bits is not documented.
  if (in_.enc == Encoding::VOPC)
    return fail("VOPC with DPP is not supported (LLVM has no such form for "
                "GFX9)");
  in_.dpp = true;
  Dpp &d = in_.dppCtl;
  d.ctrl = static_cast<uint16_t>(bits(w1_, 16, 8));
  d.boundCtrl = bits(w1_, 19, 19);
  d.bankMask = static_cast<uint8_t>(bits(w1_, 27, 24));
  d.rowMask = static_cast<uint8_t>(bits(w1_, 31, 28));
  in_.neg = static_cast<uint8_t>(bits(w1_, 20, 20) | (bits(w1_, 22, 22) << 1));
  in_.abs = static_cast<uint8_t>(bits(w1_, 21, 21) | (bits(w1_, 23, 23) << 1));
  // Valid DPP_CTRL values (Vega ISA, DPP_CTRL enumeration).
  unsigned c = d.ctrl;
  bool valid = c <= 0xff || (c >= 0x101 && c <= 0x10f) ||
               (c >= 0x111 && c <= 0x11f) || (c >= 0x121 && c <= 0x12f) ||
               c == 0x130 || c == 0x134 || c == 0x138 || c == 0x13c ||
               (c >= 0x140 && c <= 0x143);
  if (!valid)
    return fail("DPP control " + std::to_string(c) + " is reserved");
  if (numSrc == 0)
    return true;
  return vgpr(bits(w1_, 7, 0), dwordsOf(in_.info().src0), in_.src[0]);
}

bool InstDecoder::decodeVop3() {
  in_.size = 8;
  if (!second())
    return false;
  unsigned opc = bits(w0_, 25, 16);
  Op op = maps().vop3.at(opc);
  if (!setOp(op, Encoding::VOP3A, "VOP3", opc))
    return false;
  const OpInfo &info = in_.info();
  if (info.enc == Encoding::VOP1 && info.dst == OperandType::None)
    return fail("v_nop in VOP3 encoding");
  // VOP3B: the VOP2 carry ops and the VOP3B rows (scalar dst in 14:8).
  bool isB = (info.flags & OF_CarryOut) != 0;
  in_.enc = isB ? Encoding::VOP3B : Encoding::VOP3A;
  in_.clamp = bits(w0_, 15, 15);
  in_.omod = static_cast<uint8_t>(bits(w1_, 28, 27));
  in_.neg = static_cast<uint8_t>(bits(w1_, 31, 29));
  if (!isB) {
    in_.abs = static_cast<uint8_t>(bits(w0_, 10, 8));
    in_.opSel = static_cast<uint8_t>(bits(w0_, 14, 11));
  }
  OperandType types[3] = {info.src0, info.src1, info.src2};
  unsigned numSrc = countSources(info);
  in_.numSrc = static_cast<uint8_t>(numSrc);
  const unsigned fields[3] = {bits(w1_, 8, 0), bits(w1_, 17, 9),
                              bits(w1_, 26, 18)};
  if ((info.flags & OF_VgprSrc0) && fields[0] < 256)
    return fail(std::string(info.mnemonic) + " reads a VGPR, not field " +
                std::to_string(fields[0]));
  for (unsigned i = 0; i < numSrc; ++i)
    if (!source(fields[i], types[i], in_.src[i], false))
      return false;
  // The fields of absent sources are ignored, as the hardware ignores them
  // (LLVM's disassembler refuses such words; no assembler writes them).
  unsigned vdst = bits(w0_, 7, 0);
  in_.numDst = info.dst != OperandType::None;
  if (info.enc == Encoding::VOPC) {
    if (!scalarReg(vdst, 2, in_.dst[0], true))
      return false;
  } else if (info.dst != OperandType::None) {
    if (info.flags & OF_ScalarDst) {
      if (!scalarReg(vdst, 1, in_.dst[0], true))
        return false;
    } else if (!vgpr(vdst, dwordsOf(info.dst), in_.dst[0])) {
      return false;
    }
  }
  if (isB) {
    in_.numDst = 2;
    if (!scalarReg(bits(w0_, 14, 8), 2, in_.dst[1], true))
      return false;
  }
  return true;
}

bool InstDecoder::decodeVop3p() {
  in_.size = 8;
  if (!second())
    return false;
  unsigned opc = bits(w0_, 22, 16);
  if (!setOp(maps().vop3p.at(opc), Encoding::VOP3P, "VOP3P", opc))
    return false;
  const OpInfo &info = in_.info();
  in_.clamp = bits(w0_, 15, 15);
  in_.negHi = static_cast<uint8_t>(bits(w0_, 10, 8));
  in_.opSel = static_cast<uint8_t>(bits(w0_, 13, 11));
  in_.opSelHi =
      static_cast<uint8_t>(bits(w1_, 28, 27) | (bits(w0_, 14, 14) << 2));
  in_.neg = static_cast<uint8_t>(bits(w1_, 31, 29));
  // v_fma_mix* have no high halves to negate: the NEG_HI field is their abs
  // modifier (Vega ISA, VOP3P; LLVM prints it as |x|).
  if (info.flags & OF_Mix) {
    in_.abs = in_.negHi;
    in_.negHi = 0;
  }
  // The integer dot products on bytes and nibbles (v_dot4_*, v_dot8_*)
  // have 32-bit sources: no halves to select or negate (LLVM refuses such
  // words too).
  if (info.src0 == OperandType::B32 &&
      (in_.opSel || in_.opSelHi != 7 || in_.neg || in_.negHi))
    return fail(std::string("op_sel, op_sel_hi or neg on ") + info.mnemonic +
                ", whose sources are not packed");
  OperandType types[3] = {info.src0, info.src1, info.src2};
  unsigned numSrc = countSources(info);
  in_.numSrc = static_cast<uint8_t>(numSrc);
  const unsigned fields[3] = {bits(w1_, 8, 0), bits(w1_, 17, 9),
                              bits(w1_, 26, 18)};
  for (unsigned i = 0; i < numSrc; ++i) {
    OperandType t = types[i];
    // v_fma_mix*: op_sel_hi[i] clear means source i is an f32.
    if ((info.flags & OF_Mix) && !(in_.opSelHi & (1u << i)))
      t = OperandType::F32;
    if (!source(fields[i], t, in_.src[i], false))
      return false;
  }
  in_.numDst = 1;
  return vgpr(bits(w0_, 7, 0), dwordsOf(info.dst), in_.dst[0]);
}

bool InstDecoder::decodeDs() {
  in_.size = 8;
  if (!second())
    return false;
  unsigned opc = bits(w0_, 24, 17);
  if (!setOp(maps().ds.at(opc), Encoding::DS, "DS", opc))
    return false;
  const OpInfo &info = in_.info();
  in_.offset0 = static_cast<uint8_t>(bits(w0_, 7, 0));
  in_.offset1 = static_cast<uint8_t>(bits(w0_, 15, 8));
  in_.offset = int32_t(bits(w0_, 15, 0));
  in_.gds = bits(w0_, 16, 16);
  if (in_.gds)
    return fail("DS gds is not supported");
  // ds_swizzle_b32: offset[15] selects quad-permute mode, whose pattern is
  // offset[7:0] (Vega ISA); the other offset[15] patterns are later chips'
  // modes (FFT, rotate).
  if (in_.op == Op::DS_SWIZZLE_B32 && (in_.offset & 0x8000) &&
      (in_.offset & 0x7f00))
    return fail("ds_swizzle_b32 swizzle mode 0x" + [&] {
      char b[8];
      std::snprintf(b, sizeof b, "%04x", unsigned(in_.offset));
      return std::string(b);
    }() + " is not a gfx906 mode");
  OperandType types[3] = {info.src0, info.src1, info.src2};
  const unsigned fields[3] = {bits(w1_, 7, 0), bits(w1_, 15, 8),
                              bits(w1_, 23, 16)};
  unsigned numSrc = countSources(info);
  in_.numSrc = static_cast<uint8_t>(numSrc);
  for (unsigned i = 0; i < numSrc; ++i)
    if (!vgpr(fields[i], dwordsOf(types[i]), in_.src[i]))
      return false;
  if (info.dst != OperandType::None) {
    in_.numDst = 1;
    return vgpr(bits(w1_, 31, 24), dwordsOf(info.dst), in_.dst[0]);
  }
  return true;
}

bool InstDecoder::decodeFlat() {
  in_.size = 8;
  if (!second())
    return false;
  unsigned opc = bits(w0_, 24, 18);
  unsigned seg = bits(w0_, 15, 14);
  const OpcodeMaps &m = maps();
  bool ok =
      seg == 0   ? setOp(m.flat.at(opc), Encoding::FLAT, "FLAT", opc)
      : seg == 1 ? setOp(m.scratch.at(opc), Encoding::SCRATCH, "SCRATCH", opc)
      : seg == 2 ? setOp(m.global.at(opc), Encoding::GLOBAL, "GLOBAL", opc)
                 : fail("FLAT segment 3 is reserved");
  if (!ok)
    return false;
  const OpInfo &info = in_.info();
  in_.lds = bits(w0_, 13, 13);
  in_.glc = bits(w0_, 16, 16);
  in_.slc = bits(w0_, 17, 17);
  if (in_.lds)
    return fail("FLAT lds bit is not supported");
  if (bits(w1_, 23, 23))
    return fail("FLAT nv bit is set");
  // GFX9: global/scratch offsets are 13-bit signed, flat 12-bit unsigned
  // (bit 12 must be zero for flat).
  if (seg == 0) {
    if (bits(w0_, 12, 12))
      return fail("FLAT offset bit 12 is set (flat offsets are 12-bit)");
    in_.offset = int32_t(bits(w0_, 11, 0));
  } else {
    in_.offset = int32_t(bits(w0_, 12, 0) << 19) >> 19;
  }
  unsigned saddr = bits(w1_, 22, 16);
  unsigned vaddrCount = 2;
  in_.numSrc = 3;
  if (seg == 0) {
    in_.numSrc = 2; // flat has no saddr: the field is zero (as LLVM has it)
    if (saddr != 0)
      return fail("FLAT saddr field is not zero");
  } else if (saddr == 0x7f) {
    vaddrCount = seg == 1 ? 1 : 2;
  } else {
    // A scalar base: global takes an SGPR pair and a 32-bit VGPR offset;
    // scratch an SGPR offset and no VGPR.
    if (!scalarReg(saddr, seg == 2 ? 2 : 1, in_.src[2], false))
      return false;
    vaddrCount = seg == 2 ? 1 : 0;
  }
  if (vaddrCount && !vgpr(bits(w1_, 7, 0), vaddrCount, in_.src[0]))
    return false;
  if (info.src1 != OperandType::None &&
      !vgpr(bits(w1_, 15, 8), dwordsOf(info.src1), in_.src[1]))
    return false;
  // An atomic returns the old value only with glc; without it the vdst
  // field must be zero (LLVM refuses other values too).
  if ((info.flags & OF_Atomic) && !in_.glc) {
    if (bits(w1_, 31, 24))
      return fail("the vdst field of an atomic without glc is not zero");
    return true;
  }
  if (info.dst != OperandType::None) {
    in_.numDst = 1;
    return vgpr(bits(w1_, 31, 24), dwordsOf(info.dst), in_.dst[0]);
  }
  return true;
}

bool InstDecoder::decodeMubuf() {
  in_.size = 8;
  if (!second())
    return false;
  unsigned opc = bits(w0_, 24, 18);
  if (!setOp(maps().mubuf.at(opc), Encoding::MUBUF, "MUBUF", opc))
    return false;
  const OpInfo &info = in_.info();
  in_.offset = int32_t(bits(w0_, 11, 0));
  in_.offen = bits(w0_, 12, 12);
  in_.idxen = bits(w0_, 13, 13);
  in_.glc = bits(w0_, 14, 14);
  in_.lds = bits(w0_, 16, 16);
  in_.slc = bits(w0_, 17, 17);
  if (bits(w0_, 15, 15))
    return fail("MUBUF addr64 is not a GFX9 field");
  if (in_.lds || bits(w1_, 23, 23))
    return fail("MUBUF lds/tfe is not supported");
  in_.numSrc = 4;
  unsigned vaddrCount = in_.offen + in_.idxen;
  if (vaddrCount && !vgpr(bits(w1_, 7, 0), vaddrCount, in_.src[0]))
    return false;
  if (info.src1 != OperandType::None &&
      !vgpr(bits(w1_, 15, 8), dwordsOf(info.src1), in_.src[1]))
    return false;
  if (!scalarReg(bits(w1_, 20, 16) * 4, 4, in_.src[2], false) ||
      !source(bits(w1_, 31, 24), OperandType::B32, in_.src[3], false, false))
    return false;
  if (info.dst != OperandType::None) {
    in_.numDst = 1;
    return vgpr(bits(w1_, 15, 8), dwordsOf(info.dst), in_.dst[0]);
  }
  return true;
}

Expected<Instruction> InstDecoder::run() {
  in_.pc = pc_;
  in_.size = 4;
  if (!readWord(0, w0_))
    return error();
  bool ok;
  uint32_t d = w0_;
  if (d >> 23 == 0x17D)
    ok = decodeSop1();
  else if (d >> 23 == 0x17E)
    ok = decodeSopc();
  else if (d >> 23 == 0x17F)
    ok = decodeSopp();
  else if (d >> 28 == 0xB)
    ok = decodeSopk();
  else if (d >> 30 == 0x2)
    ok = decodeSop2();
  else if (d >> 31 == 0)
    ok = d >> 25 == 0x3F   ? decodeVop1()
         : d >> 25 == 0x3E ? decodeVopc()
                           : decodeVop2();
  else if (d >> 26 == 0x30)
    ok = decodeSmem();
  else if (d >> 23 == 0x1A7)
    ok = decodeVop3p();
  else if (d >> 26 == 0x34)
    ok = decodeVop3();
  else if (d >> 26 == 0x36)
    ok = decodeDs();
  else if (d >> 26 == 0x37)
    ok = decodeFlat();
  else if (d >> 26 == 0x38)
    ok = decodeMubuf();
  else
    ok = fail("encoding (high bits 0x" + [&] {
      char b[16];
      std::snprintf(b, sizeof b, "%02x", d >> 24);
      return std::string(b);
    }() + ") is not implemented");
  if (ok)
    ok = checkRules();
  if (ok && (in_.info().flags & OF_Lit) && !haveLiteral_)
    ok = fail("missing mandatory literal");
  if (!ok)
    return error();
  return in_;
}

} // namespace

const OpInfo &opInfo(Op op) {
  unsigned i = static_cast<unsigned>(op);
  return kOpInfos[i < kNumOps ? i : kNumOps];
}

Expected<Instruction> decode(const uint8_t *bytes, size_t available,
                             uint32_t pc) {
  return InstDecoder(bytes, available, pc).run();
}

Expected<std::vector<Instruction>> decodeAll(const uint8_t *text, size_t size,
                                             uint32_t basePc) {
  std::vector<Instruction> out;
  out.reserve(size / 6);
  size_t at = 0;
  while (at < size) {
    Expected<Instruction> in =
        decode(text + at, size - at, basePc + static_cast<uint32_t>(at));
    if (!in)
      return in.takeStatus();
    at += in->size;
    out.push_back(*in);
  }
  return out;
}

} // namespace sim
} // namespace fa
