//===- ExecDpp.cpp - DPP (data-parallel primitives) forms of VOP1/VOP2 ----===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the DPP form of the VOP1/VOP2 instructions (src0
// field 250, the DPP dword after the instruction): src0, a VGPR, is read
// from another lane of the wave per DPP_CTRL, the Op's own handler runs on
// the permuted values, and the result is written only to the lanes that
// ROW_MASK, BANK_MASK and BOUND_CTRL enable. Like execSdwa it wraps the
// handler: the permuted src0 goes to a scratch VGPR past the kernel's own
// (Wave.h's kScratchVgprs), and the handler runs with EXEC narrowed to the
// lanes written, so a disabled lane keeps the destination's old value.
//
// The rules and where each comes from:
//   - DPP_CTRL, for lane n of the wave (row = n & 0x30, the 16 lanes of its
//     row; i = n & 15, its place in the row), the source lane (the
//     "DPP_CTRL Enumeration" pseudocode of AMD's GFX9-family ISA guides,
//     Vega 7nm and CDNA alike, the latter adding gfx90a's row_newbcast;
//     the values are LLVM's AMDGPU::DPP::DppCtrl, the names
//     AMDGPUModifierSyntax's dpp_ctrl):
//       quad_perm  000-0FF  (n & ~3) + ctrl[2(n%4)+1 : 2(n%4)]
//       row_shl:k  101-10F  n + k        if i + k < 16, else invalid
//       row_shr:k  111-11F  n - k        if i >= k,     else invalid
//       row_ror:k  121-12F  row + ((i - k) mod 16)
//       wave_shl:1 130      n + 1        if n < 63,     else invalid
//       wave_rol:1 134      (n + 1) mod 64
//       wave_shr:1 138      n - 1        if n > 0,      else invalid
//       wave_ror:1 13C      (n - 1) mod 64
//       row_mirror 140      row + 15 - i
//       row_half_mirror 141 (n & ~7) + 7 - (n & 7)
//       row_bcast:15 142    (n & 0x30) - 1 if n > 15,   else invalid
//       row_bcast:31 143    31             if n > 31,   else invalid
//     "Shift right" moves data to higher lanes: lane n reads lane n - k, the
//     direction of the inclusive scans built from row_shr:1..8 and
//     row_bcast:15/31 (AMD's GPUOpen article "AMD GCN Assembly: Cross-Lane
//     Operations"; the scan LLVM's AMDGPUAtomicOptimizer emits, shown in
//     reviews.llvm.org/D64207); the ISA's row_bcast pseudocode
//     `pix[n & 0x30 - 1]` means (n & 0x30) - 1 (its description: lane 15 of
//     each row to the next row), as gem5's Vega model and AMD's rocJITsu
//     read it. The reserved values are refused by the decoder, as LLVM's
//     disassembler marks them invalid.
//   - ROW_MASK bit r / BANK_MASK bit b clear: lanes 16r..16r+15 / lanes
//     with (n >> 2) & 3 == b are not written; the masks apply "to the VGPR
//     destination write only, does not impact the thread mask when fetching
//     source VGPR data" (the ISA's DPP field table).
//   - An invalid source lane: BOUND_CTRL 1 reads 0 for it (the operation
//     still runs: v_add_f32_dpp gives 0 + src1), BOUND_CTRL 0 leaves the
//     lane unwritten (the ISA's field table: "BC: 0 = do not write when
//     source is out of range"; AMDGPUModifierSyntax: bound_ctrl "accessing
//     data from an invalid lane will return zero"; the assembler's
//     bound_ctrl:0 sets the bit). LLVM's GCNDPPCombine relies on exactly
//     this when it folds a v_mov_b32_dpp into its user.
//   - A source lane outside EXEC counts as invalid, like one out of range
//     (AMD's Jay Foad in GPUOpen-Drivers/llpc#1782: with BoundCtrl, "if a
//     write to an active lane depends on the value of an inactive lane, a
//     zero value will be written, instead of leaving the active lane
//     unchanged"; Mesa's ACO "read 0 from inactive lanes when using dpp" sets
//     bound_ctrl for the same reason). The ISA text does not say it; AMD's
//     rocJITsu reads inactive lanes' registers on chips without gfx10's FI
//     bit, it seems (its fi defaults to 1). The choice here matches the
//     simulator's ds_swizzle_b32 / ds_bpermute_b32, whose reads of inactive
//     lanes give 0: code that depends on an inactive lane's register gets no
//     value it could rely on.
//   - The source modifiers (neg/abs of src0 and src1) act on the value read,
//     the 0 of BOUND_CTRL included (a modelling choice: the ISA does not
//     order them; gem5 applies them first, which differs only in the sign
//     of a negated 0).
//
// Not implemented (an error naming the instruction, never a guess): the DPP
// form of instructions with a scalar result, the carry-out ops (v_add_co_u32
// and family; LLVM decodes them): how ROW_MASK, BANK_MASK and BOUND_CTRL act
// on the VCC bits is not documented (rocJITsu keeps VCC's old bits for
// invalid lanes and ignores the masks there). The decoder refuses VOPC DPP,
// which LLVM neither assembles nor decodes for GFX9, and DPP on 64-bit
// operands.
//
//===----------------------------------------------------------------------===//

#include "sim/Exec.h"
#include "sim/VectorUtil.h"

using namespace fa;
using namespace fa::sim;

int fa::sim::dppSourceLane(unsigned ctrl, unsigned n) {
  const unsigned row = n & 0x30, i = n & 15, k = ctrl & 15;
  if (ctrl <= 0xff)
    return int((n & ~3u) | ((ctrl >> (2 * (n & 3))) & 3));
  switch (ctrl & 0x1f0) {
  case 0x100: // row_shl:k
    return k && i + k < 16 ? int(n + k) : -1;
  case 0x110: // row_shr:k
    return k && i >= k ? int(n - k) : -1;
  case 0x120: // row_ror:k
    return k ? int(row | ((i - k) & 15)) : -1;
  default:
    break;
  }
  switch (ctrl) {
  case 0x130: // wave_shl:1
    return n < 63 ? int(n + 1) : -1;
  case 0x134: // wave_rol:1
    return int((n + 1) & 63);
  case 0x138: // wave_shr:1
    return n > 0 ? int(n - 1) : -1;
  case 0x13c: // wave_ror:1
    return int((n - 1) & 63);
  case 0x140: // row_mirror
    return int(row | (15 - i));
  case 0x141: // row_half_mirror
    return int((n & ~7u) | (7 - (n & 7)));
  case 0x142: // row_bcast:15
    return n > 15 ? int(row - 1) : -1;
  case 0x143: // row_bcast:31
    return n > 31 ? 31 : -1;
  default:
    return -1; // reserved (the decoder refuses these)
  }
}

uint64_t fa::sim::dppWriteMask(unsigned rowMask, unsigned bankMask) {
  uint64_t m = 0;
  for (unsigned n = 0; n < kWaveLanes; ++n)
    if ((rowMask >> (n >> 4)) & (bankMask >> ((n >> 2) & 3)) & 1)
      m |= uint64_t(1) << n;
  return m;
}

bool fa::sim::execDpp(Wave &w, const Instruction &in, ExecContext &ctx) {
  const OpInfo &info = in.info();
  if (in.enc == Encoding::VOPC || (info.flags & OF_CarryOut))
    return ctx.fail(w, in, ErrorCode::Unsupported,
                    "the DPP form of an instruction with a VCC/SGPR result is "
                    "not implemented by gfx906-sim (how row_mask, bank_mask "
                    "and bound_ctrl act on the mask bits is not documented)");
  ExecFn base = execTable()[unsigned(in.op)];
  const Dpp &d = in.dppCtl;
  const uint64_t exec = w.exec();
  const uint64_t enabled = exec & dppWriteMask(d.rowMask, d.bankMask);
  uint64_t write = 0;
  Instruction t = in;
  t.dpp = false;
  if (in.numSrc > 0) {
    // Gathered before the handler runs, so a destination that is also src0
    // is read as it was.
    const uint32_t *s = w.vgpr(in.src[0].index);
    const unsigned scratch = w.numVgprs;
    uint32_t *p = w.vgpr(scratch);
    forLanes(enabled, [&](unsigned n) {
      int from = dppSourceLane(d.ctrl, n);
      if (from >= 0 && ((exec >> from) & 1)) {
        p[n] = s[from];
      } else if (d.boundCtrl) {
        p[n] = 0;
      } else {
        return; // invalid source, no bound_ctrl: the lane is not written
      }
      write |= uint64_t(1) << n;
    });
    t.src[0].kind = OperandKind::VGPR;
    t.src[0].index = uint16_t(scratch);
    t.src[0].count = 1;
  } else {
    write = enabled;
  }
  w.setExec(write);
  bool ok = base(w, t, ctx);
  w.setExec(exec);
  return ok;
}
