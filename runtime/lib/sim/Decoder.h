//===- Decoder.h - gfx906 machine words to decoded instructions -*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal to the gfx906 simulator (issue 19); not installed. The decoder
// turns the GFX9 machine words of a code object's `.text` into `Instruction`
// values once, before execution, so the execution engine dispatches on
// `Instruction::op` through a table and never looks at bits again.
//
// The instructions it knows are the rows of Opcodes.def (mnemonic, encoding,
// opcode number, operand types). A word whose encoding or opcode is not in
// that table is an error naming the pc and the raw dwords, never a guess.
// Field layouts follow AMD's "Vega 7nm Instruction Set Architecture"
// reference (chapter 12, microcode formats); the test
// test/runtime/sim/decode checks the result against llvm-objdump.
//
// Operand roles per encoding (dst[] / src[]):
//   SOP2, SOPC, SOP1, VOP1/2/C/3/3P: dst[0] the result (VOPC: VCC in e32,
//     the SGPR pair of VOP3); dst[1] the carry-out (v_add_co/v_addc_co/
//     v_sub*_co: VCC in e32, sdst in VOP3B; v_div_scale, v_mad_u64_u32:
//     sdst); src[0..2]
//     the sources in assembly order, including implicit ones (the VCC
//     carry-in of v_addc_co_u32_e32 and the VCC mask of v_cndmask_b32_e32
//     are src[2]).
//   v_madmk_f32 / v_madak_f32: the sources in assembly order (s0, K, s1 /
//     s0, s1, K), K a Literal operand.
//   SOPK: dst[0] sdst (s_cmpk_*: no dst, the compared register in src[0]);
//     the constant in `simm16`.
//   SOPP: `simm16`; branches also `branchTarget`; s_waitcnt also
//     `vmcnt/expcnt/lgkmcnt`.
//   SMEM: dst[0] sdata; src[0] sbase (a pair, a quad for s_buffer_*);
//     src[1] the soffset SGPR when `smemSoffset` (else None); `offset` the
//     immediate byte offset when `smemImm`.
//   DS: dst[0] vdst; src[0] addr; src[1] data0; src[2] data1; `offset0`,
//     `offset1` (single-address forms: `offset` = offset1 << 8 | offset0).
//   FLAT, GLOBAL, SCRATCH: dst[0] vdst (atomics: only with glc, the value
//     before the operation); src[0] vaddr (flat, and global
//     with saddr off: 2 VGPRs; global with saddr: a 32-bit VGPR offset;
//     scratch: 1 VGPR with saddr off, None with saddr); src[1] vdata
//     (stores); src[2] saddr (global: an SGPR pair, scratch: an SGPR; None
//     for off); `offset` sign-extended from 13 bits (global, scratch) or
//     zero-extended from 12 (flat).
//   MUBUF: dst[0] vdata (loads); src[0] vaddr (None unless offen/idxen);
//     src[1] vdata (stores); src[2] srsrc (4 SGPRs); src[3] soffset;
//     `offset` 12-bit unsigned.
//
// Beyond the field layouts the decoder refuses what the ISA leaves undefined
// or forbids, rather than guess: neg/abs on integer operands, an output
// modifier on a non-float result, SDWA on 64-bit operands, DPP on them (not
// modelled) and after VOPC (LLVM has no such form for GFX9), reserved DPP
// controls, two scalar values in one VALU instruction (the constant bus),
// float inline constants in 16-bit integer operands, ds_swizzle modes of
// later chips, GDS, FLAT-to-LDS and MUBUF lds/tfe. Fields of absent
// operands are ignored, as the hardware ignores them.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_SIM_DECODER_H
#define FA_LIB_SIM_DECODER_H

#include "fa/Status.h"

#include <cstddef>
#include <cstdint>
#include <vector>

namespace fa {
namespace sim {

/// The microcode formats. VOP3A and VOP3B share one opcode space (VOP3B are
/// the ones with a scalar carry/condition destination).
enum class Encoding : uint8_t {
  SOP1,
  SOP2,
  SOPK,
  SOPC,
  SOPP,
  SMEM,
  VOP1,
  VOP2,
  VOPC,
  VOP3A,
  VOP3B,
  VOP3P,
  DS,
  FLAT,
  GLOBAL,
  SCRATCH,
  MUBUF,
};

/// How an operand's bits are read: selects the value of inline constants
/// (0.5 is 0x3800 for f16, 0x3f000000 for f32) and the operand's size in
/// dwords. For memory instructions only the size matters (B96: 3 dwords).
enum class OperandType : uint8_t {
  None,
  B16,
  F16,
  PkB16, ///< two 16-bit integers in one dword (v_pk_*_u16)
  PkF16, ///< two halves in one dword (v_pk_*_f16, v_dot2_f32_f16)
  B32,
  F32,
  B64,
  F64,
  B96,
  B128,
  B256,
  B512,
};

/// One instruction of the table: its mnemonic's enumerator.
enum class Op : uint16_t {
#define FA_SIM_OP(name, mnemonic, enc, opcode, dst, src0, src1, src2, flags)   \
  name,
#include "sim/Opcodes.def"
  Invalid,
};

/// Number of table rows (every Op but Invalid).
constexpr unsigned kNumOps = static_cast<unsigned>(Op::Invalid);

/// Properties of a table row beyond its operand types (Opcodes.def's flags
/// column, or-ed).
enum OpFlags : uint16_t {
  OF_None = 0,
  OF_CarryOut = 1 << 0,  ///< writes a carry mask (VCC in e32, sdst in VOP3B)
  OF_CarryIn = 1 << 1,   ///< reads a carry/select mask (VCC in e32, src2)
  OF_Branch = 1 << 2,    ///< SOPP whose simm16 is a branch offset
  OF_NoDst = 1 << 3,     ///< the result operand is absent (stores, s_cmp)
  OF_SdstSrc = 1 << 4,   ///< SOPK whose sdst is read, not written (s_cmpk)
  OF_Lit = 1 << 5,       ///< always followed by a literal (v_madmk, v_madak)
  OF_D16Hi = 1 << 6,     ///< memory access of bits 31:16 of the register
  OF_ScalarDst = 1 << 7, ///< the VOP result is an SGPR (v_readlane_b32)
  OF_Mix = 1 << 8, ///< v_fma_mix*: op_sel_hi bit i set: src i is f16, else f32
  OF_NoSuffix = 1 << 9,  ///< LLVM prints no _e32/_e64 (one encoding only)
  OF_VgprSrc0 = 1 << 10, ///< src0 must be a VGPR (v_readlane, v_readfirstlane)
  OF_Atomic = 1 << 11,   ///< a memory atomic: dst[0] (the old value) with glc
};

/// The static description of one Op (a row of Opcodes.def).
struct OpInfo {
  const char *mnemonic; ///< "v_dot2_f32_f16"; without _e32/_e64
  Encoding enc;         ///< the native encoding (VOP2 for v_add_f32)
  uint16_t opcode;      ///< opcode in the native encoding
  OperandType dst, src0, src1, src2;
  uint16_t flags; ///< OpFlags
};

/// The table row of `op`; `op` must not be Op::Invalid.
const OpInfo &opInfo(Op op);

enum class OperandKind : uint8_t {
  None,
  SGPR,        ///< s[index .. index+count-1]
  VGPR,        ///< v[index .. index+count-1]
  TTMP,        ///< trap temporaries ttmp[index ...]
  VCC,         ///< index 0 vcc_lo, 1 vcc_hi; count 2 from 0: vcc
  EXEC,        ///< as VCC
  FlatScratch, ///< as VCC
  Xnack,       ///< xnack_mask, as VCC
  M0,
  SCC,         ///< the scalar condition code as a source (field 253)
  VCCZ,        ///< field 251
  EXECZ,       ///< field 252
  InlineInt,   ///< the integer inline constants -16..64; `imm` holds it
  InlineFloat, ///< 0.5, -0.5, 1, -1, 2, -2, 4, -4, 1/(2pi); `imm` bits
  Literal,     ///< the 32-bit literal after the instruction; `imm`
  ApertureSrc, ///< src_shared_base/limit, src_private_base/limit, pops id
  LdsDirect,   ///< field 254
};

/// A decoded operand.
struct Operand {
  OperandKind kind = OperandKind::None;
  /// Dwords it spans (1 for 16- and 32-bit operands, 2 for 64-bit, up to 16
  /// for s_load_dwordx16).
  uint8_t count = 0;
  /// Register number in its file (SGPR 0-101, VGPR 0-255, TTMP 0-15; for
  /// VCC/EXEC/... 0 = low half, 1 = high half). For constants and special
  /// sources: the raw 9-bit source field (e.g. 240 for 0.5).
  uint16_t index = 0;
  /// Constants as the operand's type reads them. Inline integers: sign
  /// extended to 32 bits (to 64 for 64-bit types). Inline floats: the f16,
  /// f32 or f64 pattern of the type (packed 16-bit types: bits 15:0 only;
  /// v_fma_mix* sources per op_sel_hi). Literals: 16-bit types take bits
  /// 15:0, f64 operands the dword as their high half; b64 operands hold it
  /// zero-extended, but the hardware extends it by the operand's signedness
  /// (sign for signed operands, per llvm-project PR 70274), which the
  /// executing instruction must apply.
  uint64_t imm = 0;

  bool isReg() const {
    return kind == OperandKind::SGPR || kind == OperandKind::VGPR ||
           kind == OperandKind::TTMP || kind == OperandKind::VCC ||
           kind == OperandKind::EXEC || kind == OperandKind::FlatScratch ||
           kind == OperandKind::Xnack || kind == OperandKind::M0;
  }
  bool isConstant() const {
    return kind == OperandKind::InlineInt || kind == OperandKind::InlineFloat ||
           kind == OperandKind::Literal;
  }
};

/// SDWA (sub-dword addressing) controls of a VOP1/VOP2/VOPC instruction
/// whose src0 field is 249. Selects: 0-3 BYTE_0..3, 4 WORD_0, 5 WORD_1,
/// 6 DWORD.
struct Sdwa {
  uint8_t dstSel = 6, dstUnused = 0; ///< dst_unused: 0 pad, 1 sext, 2 preserve
  uint8_t srcSel[2] = {6, 6};
  bool srcSext[2] = {false, false};
};

/// DPP controls (src0 field 250).
struct Dpp {
  uint16_t ctrl = 0;
  uint8_t rowMask = 0xf, bankMask = 0xf;
  bool boundCtrl = false; ///< the BOUND_CTRL bit (asm `bound_ctrl:0` sets 1)
};

/// One decoded instruction. Trivially copyable; 160 bytes.
struct Instruction {
  Op op = Op::Invalid;
  Encoding enc = Encoding::SOPP; ///< the encoding it was found in
  uint8_t size = 0;              ///< bytes: 4 or 8, +4 with a literal
  uint8_t numDst = 0, numSrc = 0;
  bool sdwa = false, dpp = false; ///< VOP1/VOP2/VOPC extension forms
  uint32_t pc = 0;                ///< byte offset in .text

  Operand dst[2];
  Operand src[4];

  // VOP3 / VOP3P / SDWA / DPP modifiers; bit i is source i.
  uint8_t neg = 0;     ///< VOP3P: neg_lo
  uint8_t abs = 0;     ///< VOP3A, SDWA, DPP, v_fma_mix* (its neg_hi field)
  uint8_t negHi = 0;   ///< VOP3P (not v_fma_mix*: there the field is abs)
  uint8_t opSel = 0;   ///< VOP3A: bit 3 dst; VOP3P: op_sel
  uint8_t opSelHi = 0; ///< VOP3P (bits 0-2; v_fma_mix: the f16/f32 select)
  uint8_t omod = 0;    ///< 0 none, 1 *2, 2 *4, 3 /2
  bool clamp = false;

  // Memory.
  int32_t offset = 0;
  uint8_t offset0 = 0, offset1 = 0; ///< DS
  bool gds = false, glc = false, slc = false, lds = false;
  bool offen = false, idxen = false; ///< MUBUF
  bool smemImm = false, smemSoffset = false;

  // SOPP / SOPK.
  int16_t simm16 = 0;
  uint32_t branchTarget = 0; ///< pc + 4 + simm16 * 4, for OF_Branch
  uint8_t vmcnt = 0, expcnt = 0, lgkmcnt = 0; ///< s_waitcnt fields

  Sdwa sdwaCtl;
  Dpp dppCtl;

  const OpInfo &info() const { return opInfo(op); }
};

/// Decodes the instruction at `bytes` (pc `pc`, `available` bytes readable).
/// Errors (CorruptCodeObject, naming the pc and the raw dwords): a truncated
/// instruction, an encoding or opcode not in Opcodes.def, a field value the
/// instruction does not accept (e.g. a VGPR where an SGPR is required).
Expected<Instruction> decode(const uint8_t *bytes, size_t available,
                             uint32_t pc);

/// Decodes a whole `.text` range, `text` being the bytes at pc `basePc`:
/// instructions in order, each with its pc. The first failure is returned.
/// (A code object's text can end in s_code_end padding, which decodes.)
Expected<std::vector<Instruction>> decodeAll(const uint8_t *text, size_t size,
                                             uint32_t basePc = 0);

} // namespace sim
} // namespace fa

#endif // FA_LIB_SIM_DECODER_H
