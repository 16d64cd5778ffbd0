//===- Disassembler.cpp - Decoded gfx906 instructions as assembly ---------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file prints Instructions in the syntax of LLVM's AMDGPU instruction
// printer (AMDGPUInstPrinter), so that the oracle test can compare the
// decoder with llvm-objdump operand by operand. Only the syntax is LLVM's;
// the printer works from the decoded fields alone.
//
//===----------------------------------------------------------------------===//

#include "sim/Disassembler.h"

#include <cstdio>
#include <cstring>

namespace fa {
namespace sim {

namespace {

std::string format(const char *fmt, unsigned long long v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, fmt, v);
  return buf;
}

std::string regRange(const char *prefix, unsigned index, unsigned count) {
  if (count <= 1)
    return prefix + std::to_string(index);
  return std::string(prefix) + "[" + std::to_string(index) + ":" +
         std::to_string(index + count - 1) + "]";
}

/// vcc / vcc_lo / vcc_hi and the like.
std::string pairName(const char *base, const Operand &o) {
  if (o.count >= 2)
    return base;
  return std::string(base) + (o.index ? "_hi" : "_lo");
}

std::string bitList(unsigned mask, unsigned n) {
  std::string s = "[";
  for (unsigned i = 0; i < n; ++i)
    s += std::string(i ? "," : "") + ((mask >> i) & 1 ? "1" : "0");
  return s + "]";
}

const char *selName(unsigned sel) {
  static const char *names[] = {"BYTE_0", "BYTE_1", "BYTE_2", "BYTE_3",
                                "WORD_0", "WORD_1", "DWORD"};
  return sel < 7 ? names[sel] : "?";
}

/// ds_swizzle_b32's offset, as AMDGPUInstPrinter::printSwizzle writes it.
std::string swizzleText(unsigned imm) {
  if (imm & 0x8000) {
    std::string s = "swizzle(QUAD_PERM";
    for (unsigned i = 0; i < 4; ++i)
      s += "," + std::to_string((imm >> (2 * i)) & 3);
    return s + ")";
  }
  unsigned andMask = imm & 0x1f, orMask = (imm >> 5) & 0x1f,
           xorMask = (imm >> 10) & 0x1f;
  auto pow2 = [](unsigned v) { return v && !(v & (v - 1)); };
  if (andMask == 0x1f && orMask == 0 && pow2(xorMask))
    return "swizzle(SWAP," + std::to_string(xorMask) + ")";
  if (andMask == 0x1f && orMask == 0 && xorMask > 0 && pow2(xorMask + 1))
    return "swizzle(REVERSE," + std::to_string(xorMask + 1) + ")";
  unsigned groupSize = 0x1f - andMask + 1;
  if (groupSize > 1 && pow2(groupSize) && orMask < groupSize && xorMask == 0)
    return "swizzle(BROADCAST," + std::to_string(groupSize) + "," +
           std::to_string(orMask) + ")";
  // Each lane-id bit as the swizzle computes it, ((id & and) | or) ^ xor:
  // constant 0/1, the id's bit (p) or its inverse (i).
  std::string s = "swizzle(BITMASK_PERM,\"";
  unsigned probe0 = orMask ^ xorMask,
           probe1 = ((0x1f & andMask) | orMask) ^ xorMask;
  for (int bit = 4; bit >= 0; --bit) {
    unsigned m = 1u << bit, p0 = probe0 & m, p1 = probe1 & m;
    if (p0 == p1)
      s += p0 ? '1' : '0';
    else
      s += p0 ? 'i' : 'p';
  }
  return s + "\")";
}

std::string dppText(const Dpp &d) {
  unsigned c = d.ctrl;
  std::string s;
  if (c <= 0xff) {
    s = "quad_perm:[";
    for (unsigned i = 0; i < 4; ++i)
      s += std::string(i ? "," : "") + std::to_string((c >> (2 * i)) & 3);
    s += "]";
  } else if (c >= 0x101 && c <= 0x10f) {
    s = "row_shl:" + std::to_string(c - 0x100);
  } else if (c >= 0x111 && c <= 0x11f) {
    s = "row_shr:" + std::to_string(c - 0x110);
  } else if (c >= 0x121 && c <= 0x12f) {
    s = "row_ror:" + std::to_string(c - 0x120);
  } else {
    switch (c) {
    case 0x130:
      s = "wave_shl:1";
      break;
    case 0x134:
      s = "wave_rol:1";
      break;
    case 0x138:
      s = "wave_shr:1";
      break;
    case 0x13c:
      s = "wave_ror:1";
      break;
    case 0x140:
      s = "row_mirror";
      break;
    case 0x141:
      s = "row_half_mirror";
      break;
    case 0x142:
      s = "row_bcast:15";
      break;
    case 0x143:
      s = "row_bcast:31";
      break;
    default:
      s = "dpp_ctrl:" + format("0x%llx", c);
      break;
    }
  }
  s += " row_mask:" + format("0x%llx", d.rowMask) +
       " bank_mask:" + format("0x%llx", d.bankMask);
  if (d.boundCtrl)
    s += " bound_ctrl:1";
  return s;
}

} // namespace

std::string operandText(const Operand &o) {
  switch (o.kind) {
  case OperandKind::None:
    return "off";
  case OperandKind::SGPR:
    return regRange("s", o.index, o.count);
  case OperandKind::VGPR:
    return regRange("v", o.index, o.count);
  case OperandKind::TTMP:
    return regRange("ttmp", o.index, o.count);
  case OperandKind::VCC:
    return pairName("vcc", o);
  case OperandKind::EXEC:
    return pairName("exec", o);
  case OperandKind::FlatScratch:
    return pairName("flat_scratch", o);
  case OperandKind::Xnack:
    return pairName("xnack_mask", o);
  case OperandKind::M0:
    return "m0";
  case OperandKind::SCC:
    return "src_scc";
  case OperandKind::VCCZ:
    return "src_vccz";
  case OperandKind::EXECZ:
    return "src_execz";
  case OperandKind::LdsDirect:
    return "src_lds_direct";
  case OperandKind::ApertureSrc: {
    static const char *names[] = {"src_shared_base", "src_shared_limit",
                                  "src_private_base", "src_private_limit",
                                  "src_pops_exiting_wave_id"};
    return o.index >= 235 && o.index <= 239 ? names[o.index - 235] : "?";
  }
  case OperandKind::InlineInt:
    return std::to_string(o.index <= 192 ? int(o.index) - 128
                                         : 192 - int(o.index));
  case OperandKind::InlineFloat: {
    static const char *names[] = {"0.5",  "-0.5", "1.0",  "-1.0",      "2.0",
                                  "-2.0", "4.0",  "-4.0", "0.15915494"};
    // 1/(2*pi) prints with the digits of the operand's precision.
    if (o.index == 248 && o.count == 2)
      return "0.15915494309189532";
    return o.index >= 240 && o.index <= 248 ? names[o.index - 240] : "?";
  }
  case OperandKind::Literal: {
    // f64 operands hold the literal in the high dword.
    uint64_t v = o.imm >> 32 ? o.imm >> 32 : o.imm;
    return format("0x%llx", v);
  }
  }
  return "?";
}

std::string mnemonicOf(const Instruction &in) {
  const OpInfo &info = in.info();
  std::string m = info.mnemonic;
  bool vopShort = info.enc == Encoding::VOP1 || info.enc == Encoding::VOP2 ||
                  info.enc == Encoding::VOPC;
  if (!vopShort || (info.flags & OF_NoSuffix))
    return m;
  if (in.enc == Encoding::VOP3A || in.enc == Encoding::VOP3B)
    return m + "_e64";
  if (in.sdwa)
    return m + "_sdwa";
  if (in.dpp)
    return m + "_dpp";
  return m + "_e32";
}

std::string disassemble(const Instruction &in) {
  if (in.op == Op::Invalid)
    return "<invalid>";
  const OpInfo &info = in.info();
  std::string s = mnemonicOf(in);
  bool first = true;
  auto add = [&](const std::string &t) {
    s += (first ? " " : ", ") + t;
    first = false;
  };
  auto vopSource = [&](unsigned i) {
    std::string t = operandText(in.src[i]);
    if (in.sdwa && i < 2 && in.sdwaCtl.srcSext[i])
      t = "sext(" + t + ")";
    if ((in.abs >> i) & 1)
      t = "|" + t + "|";
    // VOP3P prints neg as neg_lo:[...], except v_fma_mix* (scalar halves).
    bool mix = (info.flags & OF_Mix) != 0;
    if ((in.enc != Encoding::VOP3P || mix) && ((in.neg >> i) & 1))
      t = "-" + t;
    return t;
  };
  auto omodText = [&]() -> std::string {
    static const char *names[] = {"", " mul:2", " mul:4", " div:2"};
    return names[in.omod & 3];
  };

  switch (in.enc) {
  case Encoding::SOP1:
  case Encoding::SOP2:
  case Encoding::SOPC:
    for (unsigned i = 0; i < in.numDst; ++i)
      add(operandText(in.dst[i]));
    for (unsigned i = 0; i < in.numSrc; ++i)
      add(operandText(in.src[i]));
    return s;
  case Encoding::SOPK:
    add(operandText(in.numDst ? in.dst[0] : in.src[0]));
    add(format("0x%llx", uint16_t(in.simm16)));
    return s;
  case Encoding::SOPP:
    if (in.op == Op::S_WAITCNT) {
      bool defVm = in.vmcnt == 63, defExp = in.expcnt == 7,
           defLgkm = in.lgkmcnt == 15;
      bool all = defVm && defExp && defLgkm;
      std::string w;
      if (!defVm || all)
        w += " vmcnt(" + std::to_string(in.vmcnt) + ")";
      if (!defExp || all)
        w += " expcnt(" + std::to_string(in.expcnt) + ")";
      if (!defLgkm || all)
        w += " lgkmcnt(" + std::to_string(in.lgkmcnt) + ")";
      return s + w;
    }
    if (in.op == Op::S_ENDPGM || in.op == Op::S_BARRIER) {
      // s_endpgm prints its (normally zero) immediate only when set.
      if (in.simm16 && in.op != Op::S_BARRIER)
        add(std::to_string(uint16_t(in.simm16)));
      return s;
    }
    add(std::to_string(uint16_t(in.simm16)));
    return s;
  case Encoding::SMEM:
    add(operandText(in.dst[0]));
    add(operandText(in.src[0]));
    if (in.smemImm && in.smemSoffset)
      add(operandText(in.src[1]) +
          " offset:" + format("0x%llx", uint32_t(in.offset)));
    else if (in.smemImm)
      add(in.offset < 0 ? format("-0x%llx", -int64_t(in.offset))
                        : format("0x%llx", in.offset));
    else
      add(operandText(in.src[1]));
    if (in.glc)
      s += " glc";
    return s;
  case Encoding::VOP1:
  case Encoding::VOP2:
  case Encoding::VOPC:
  case Encoding::VOP3A:
  case Encoding::VOP3B: {
    for (unsigned i = 0; i < in.numDst; ++i)
      add(operandText(in.dst[i]));
    for (unsigned i = 0; i < in.numSrc; ++i)
      add(vopSource(i));
    if (in.sdwa) {
      if (in.clamp)
        s += " clamp";
      s += omodText();
      if (info.enc != Encoding::VOPC) {
        static const char *unused[] = {"UNUSED_PAD", "UNUSED_SEXT",
                                       "UNUSED_PRESERVE"};
        s += std::string(" dst_sel:") + selName(in.sdwaCtl.dstSel) +
             " dst_unused:" + unused[in.sdwaCtl.dstUnused % 3];
      }
      s += std::string(" src0_sel:") + selName(in.sdwaCtl.srcSel[0]);
      if (info.enc != Encoding::VOP1)
        s += std::string(" src1_sel:") + selName(in.sdwaCtl.srcSel[1]);
      return s;
    }
    if (in.dpp)
      return s + " " + dppText(in.dppCtl);
    if (in.opSel)
      s += " op_sel:" + bitList(in.opSel, in.numSrc + 1);
    if (in.clamp)
      s += " clamp";
    return s + omodText();
  }
  case Encoding::VOP3P: {
    add(operandText(in.dst[0]));
    for (unsigned i = 0; i < in.numSrc; ++i)
      add(vopSource(i));
    unsigned n = in.numSrc, all = (1u << n) - 1;
    bool mix = (info.flags & OF_Mix) != 0;
    if (in.opSel & all)
      s += " op_sel:" + bitList(in.opSel, n);
    if ((in.opSelHi & all) != (mix ? 0u : all))
      s += " op_sel_hi:" + bitList(in.opSelHi, n);
    if ((in.neg & all) && !mix)
      s += " neg_lo:" + bitList(in.neg, n);
    if (in.negHi & all)
      s += " neg_hi:" + bitList(in.negHi, n);
    if (in.clamp)
      s += " clamp";
    return s;
  }
  case Encoding::DS: {
    if (in.numDst)
      add(operandText(in.dst[0]));
    for (unsigned i = 0; i < in.numSrc; ++i)
      add(operandText(in.src[i]));
    bool two = std::strstr(info.mnemonic, "read2") ||
               std::strstr(info.mnemonic, "write2");
    if (in.op == Op::DS_SWIZZLE_B32) {
      if (in.offset)
        s += " offset:" + swizzleText(uint32_t(in.offset));
    } else if (two) {
      if (in.offset0)
        s += " offset0:" + std::to_string(in.offset0);
      if (in.offset1)
        s += " offset1:" + std::to_string(in.offset1);
    } else if (in.offset) {
      s += " offset:" + std::to_string(in.offset);
    }
    if (in.gds)
      s += " gds";
    return s;
  }
  case Encoding::FLAT:
  case Encoding::GLOBAL:
  case Encoding::SCRATCH: {
    if (in.numDst)
      add(operandText(in.dst[0]));
    add(operandText(in.src[0])); // "off" when absent
    if (info.src1 != OperandType::None)
      add(operandText(in.src[1]));
    if (in.enc != Encoding::FLAT)
      add(operandText(in.src[2]));
    if (in.offset)
      s += " offset:" + std::to_string(in.offset);
    if (in.glc)
      s += " glc";
    if (in.slc)
      s += " slc";
    return s;
  }
  case Encoding::MUBUF: {
    add(operandText(in.numDst ? in.dst[0] : in.src[1]));
    add(operandText(in.src[0]));
    add(operandText(in.src[2]));
    add(operandText(in.src[3]));
    if (in.idxen)
      s += " idxen";
    if (in.offen)
      s += " offen";
    if (in.offset)
      s += " offset:" + std::to_string(in.offset);
    if (in.glc)
      s += " glc";
    if (in.slc)
      s += " slc";
    return s;
  }
  }
  return s;
}

} // namespace sim
} // namespace fa
