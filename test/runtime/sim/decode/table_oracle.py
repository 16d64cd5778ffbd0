#!/usr/bin/env python3
"""Every row of Opcodes.def against LLVM's disassembler.

The kernels' oracle (oracle_test.py) sees only what fac emits; this test
builds instruction words for every row of the decoder's table (from
`fa-sim-disasm --table`: encoding and opcode), with several operand forms
each (VGPRs, SGPRs, special registers, inline and literal constants, VOP3
and VOP3P modifiers, memory offsets of both signs, saddr on and off), and
compares fa's text with `llvm-mc -disassemble -mcpu=gfx906`. A word LLVM
does not decode must be refused by fa too; one fa refuses must be one LLVM
refuses (or a form fa documents as unsupported: the `ALLOWED` reasons).

usage: table_oracle.py LLVM_MC FA_SIM_DISASM
"""
import re
import subprocess
import sys

# fa refuses these forms on purpose (the simulator does not model them).
ALLOWED = ("DS gds is not supported", "FLAT lds bit", "MUBUF lds/tfe",
           "in VOP3 encoding",
           # LLVM also takes src_scc, src_vccz... here; the ISA says VGPR.
           "v_readfirstlane_b32 reads a VGPR",
           # LLVM decodes these; the ISA gives them no meaning on gfx906.
           "DPP on 64-bit operands", "jumps to a register pair",
           # LLVM 22 prints gfx950's FFT/rotate swizzles for gfx906 too.
           "swizzle mode",
           # LLVM's disassembler does not check the constant bus.
           "reads two scalar values")

V1, V2, V3, V4 = 257, 258, 259, 260
LIT = 0x3F800001


def variants(mn, enc, opc, types):
    """Lists of dwords, one list per test instruction. Fields of absent
    operands stay zero (LLVM refuses words that set them)."""
    dst, t0, t1, t2 = types
    nsrc = sum(t != "None" for t in (t0, t1, t2))
    is16 = t0 in ("B16", "F16") or t1 in ("B16", "F16")
    isint = not any(t.startswith(("F", "PkF")) for t in types)
    lit = 0x3C01 if is16 else LIT
    out = []

    def keep(fields, n):
        return [f if i < n else 0 for i, f in enumerate(fields)]

    if enc == "SOP2":
        for s0, s1, d in ((6, 8, 4), (0xC1, 0xF0, 4), (0xFF, 106, 126),
                          (124, 0x80, 106), (0xFD, 0xF8, 8)):
            w = [0x80000000 | opc << 23 | d << 16 | s1 << 8 | s0]
            out.append(w + ([LIT] if 0xFF in (s0, s1) else []))
    elif enc == "SOPK":
        for imm in (0x1234, 0xFF80):
            out.append([0xB0000000 | opc << 23 | 4 << 16 | imm])
    elif enc == "SOP1":
        for s0, d in ((6, 4), (0xFF, 4), (0xC1, 106), (126, 8), (0xF0, 124)):
            s0 = s0 if t0 != "None" else 0
            d = d if dst != "None" else 0
            w = [0xBE800000 | d << 16 | opc << 8 | s0]
            out.append(w + ([LIT] if s0 == 0xFF else []))
    elif enc == "SOPC":
        for s0, s1 in ((6, 8), (0xC1, 0xFF), (106, 0xF0)):
            w = [0xBF000000 | opc << 16 | s1 << 8 | s0]
            out.append(w + ([LIT] if 0xFF in (s0, s1) else []))
    elif enc == "SOPP":
        imms = ((0, 3, 0xFFF0) if "branch" in mn else
                (0x0F70, 0xC07F, 0x0275, 0x3F7F) if mn == "s_waitcnt" else
                (0,) if mn in ("s_barrier", "s_endpgm") else (0, 3))
        for imm in imms:
            out.append([0xBF800000 | opc << 16 | imm])
    elif enc == "SMEM":
        base = 0xC0000000 | opc << 18 | 16 << 6
        out.append([base | 1 << 17 | 2, 0x10])        # s[4:5], 0x10
        out.append([base | 1 << 17 | 1 << 16 | 4, 0x1FFFF0])  # glc, -16
        out.append([base | 2, 6])                     # soffset s6
    elif enc in ("VOP1", "VOP2", "VOPC"):
        vsrc0 = (V2, 6, 240, 0xC1, 0xFF, 106, 0xFD)
        if t0 in ("B16", "PkB16"):
            vsrc0 = tuple(f for f in vsrc0 if f != 240)
        for s0 in vsrc0 if t0 != "None" else (0,):
            if enc == "VOP1":
                w = 0x7E000000 | (1 << 17 if dst != "None" else 0) | \
                    opc << 9 | s0
            elif enc == "VOP2":
                w = opc << 25 | 1 << 17 | 3 << 9 | s0
            else:
                w = 0x7C000000 | opc << 17 | 3 << 9 | s0
            out.append([w] + ([lit] if s0 == 0xFF else []))
        if t0 != "None":
            # SDWA: src0_sel WORD_1 (sext for integers), src1 an SGPR,
            # dst_sel WORD_0.
            sd = 2 | 4 << 8 | 2 << 11 | 5 << 16 | (isint << 19) | 6 << 24
            if enc == "VOP1":
                out.append([0x7E000000 | 1 << 17 | opc << 9 | 0xF9,
                            sd & 0xFFFFFF])
            elif enc == "VOP2":
                out.append([opc << 25 | 1 << 17 | 6 << 9 | 0xF9,
                            sd | 1 << 31])
            else:
                out.append([0x7C000000 | opc << 17 | 3 << 9 | 0xF9,
                            2 | 5 << 16 | 6 << 24 | 1 << 15 | 8 << 8])
            # DPP: row_shl:1, row_mask 0xa, bank_mask 0xf, bound_ctrl (VOPC
            # too: LLVM has no VOPC DPP for GFX9, fa must refuse it).
            dpp = 2 | 0x101 << 8 | 1 << 19 | 0xF << 24 | 0xA << 28
            if enc == "VOP1":
                out.append([0x7E000000 | 1 << 17 | opc << 9 | 0xFA, dpp])
            elif enc == "VOP2":
                out.append([opc << 25 | 1 << 17 | 3 << 9 | 0xFA, dpp])
            else:
                out.append([0x7C000000 | opc << 17 | 3 << 9 | 0xFA, dpp])
    if enc in ("VOP1", "VOP2", "VOPC", "VOP3A", "VOP3B") and nsrc and \
            not (int(_flags(mn)) & 32):
        v3 = {"VOP1": 0x140, "VOP2": 0x100}.get(enc, 0) + opc
        base = 0xD0000000 | v3 << 16
        dst_f = 4 if enc == "VOPC" or (int(_flags(mn)) & 128) else 1
        sdst = 8 << 8 if (enc == "VOP3B" or int(_flags(mn)) & 1) else 0
        c = 0xC1 if t0 in ("B16", "PkB16") else 240
        forms = [((V2, V3, V4), 0), ((6, c, 0xC1), 0), ((V2, 106, 126), 0)]
        if int(_flags(mn)) & 2:  # the carry-in / mask is an SGPR pair
            forms = [((V2, V3, 8), 0), ((6, c, 106), 0), ((V2, 106, 126), 0)]
        allf = all(t.startswith(("F", "PkF")) for t in (t0, t1, t2)[:nsrc])
        if allf and dst.startswith("F"):
            forms += [((V2, V3, V4), 1), ((V2, V3, V4), 2)]
        if allf and enc == "VOPC":
            forms += [((V2, V3, V4), 3)]
        for s, mods in forms:
            s = keep(s, nsrc)
            w0 = base | dst_f | sdst
            w1 = s[0] | s[1] << 9 | s[2] << 18
            if mods == 1:   # neg src0 (and src2), abs src1 (VOP3A), clamp
                w0 |= 1 << 15 | (0 if sdst or nsrc < 2 else 2 << 8)
                w1 |= (5 if nsrc > 2 else 1) << 29
            if mods == 2:   # omod div:2
                w1 |= 3 << 27
            if mods == 3:   # neg src0, abs src1
                w0 |= 2 << 8
                w1 |= 1 << 29
            out.append([w0, w1])
    elif enc == "VOP3P":
        base = 0xD3800000 | opc << 16 | 1
        m = (1 << nsrc) - 1
        for s, w0m, w1m in (((V2, V3, V4), 1 << 14, 3 << 27),
                            ((V2, V3, V4), 0, 0),
                            ((6, 240, 0xC1), 1 << 14, 3 << 27),
                            ((V2, V3, V4), 1 << 11 | (4 & m) << 8 | 1 << 15,
                             1 << 27 | (2 & m) << 29)):
            s = keep(s, nsrc)
            if nsrc < 3:   # the absent src2's op_sel_hi bit reads as 1
                w0m |= 1 << 14
            out.append([base | w0m, s[0] | s[1] << 9 | s[2] << 18 | w1m])
    elif enc == "DS":
        two = "2" in mn.split("_")[1]
        for off in (0, 0x0804, 0xFFFF):
            f = [1, 2 if t1 != "None" else 0, 4 if t2 != "None" else 0,
                 6 if dst != "None" else 0]
            out.append([0xD8000000 | opc << 17 | off,
                        f[0] | f[1] << 8 | f[2] << 16 | f[3] << 24])
    elif enc in ("FLAT", "GLOBAL", "SCRATCH"):
        seg = {"FLAT": 0, "SCRATCH": 1, "GLOBAL": 2}[enc]
        offs = (0, 16, 0xFFF) if seg == 0 else (0, 16, 0x1FF0, 0x1000)
        saddrs = (0,) if seg == 0 else (0x7F, 4)
        for off in offs:
            for sa in saddrs:
                vaddr = 0 if (seg == 1 and sa != 0x7F) else 2
                data = 4 if t1 != "None" else 0
                vdst = 6 if dst != "None" else 0
                out.append([0xDC000000 | opc << 18 | seg << 14 | off |
                            (1 << 16 if off == 16 else 0),
                            vaddr | data << 8 | sa << 16 | vdst << 24])
    elif enc == "MUBUF":
        for offen, so in ((1, 6), (0, 0x80), (1, 0xC1)):
            out.append([0xE0000000 | opc << 18 | offen << 12 | 16,
                        (2 if offen else 0) | 4 << 8 | 2 << 16 | so << 24])
    return out


def dpp_variants(mn, enc, opc):
    """Every DPP_CTRL value (0x000-0x1FF, the reserved ones included: LLVM
    marks them invalid, fa must refuse them) on v_mov_b32 and v_add_f32,
    with row/bank masks, bound_ctrl on and off and, for v_add_f32, the
    neg/abs bits of both sources."""
    out = []
    if mn not in ("v_mov_b32", "v_add_f32"):
        return out
    for ctrl in range(0x200):
        rm, bm = (0xF, 0xF) if ctrl % 3 else (ctrl >> 2 & 0xF, ctrl & 0xF)
        dpp = 2 | ctrl << 8 | (ctrl & 1) << 19 | bm << 24 | rm << 28
        if enc == "VOP1":
            out.append([0x7E000000 | 1 << 17 | opc << 9 | 0xFA, dpp])
        else:
            mods = (ctrl >> 4 & 0xF) << 20  # src0 neg/abs, src1 neg/abs
            out.append([opc << 25 | 1 << 17 | 3 << 9 | 0xFA, dpp | mods])
    return out


_FLAGS = {}


def _flags(mn):
    return _FLAGS[mn]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    mc, disasm = sys.argv[1:]
    table = subprocess.run([disasm, "--table"], capture_output=True,
                           text=True, check=True).stdout.split("\n")
    cases = []
    for row in table:
        if row:
            mn, enc, opc, flags, *types = row.split()
            _FLAGS[mn] = flags
            cases += [(mn, w) for w in variants(mn, enc, int(opc), types)]
            cases += [(mn, w) for w in dpp_variants(mn, enc, int(opc))]
    # llvm-mc reads one byte stream; its output names each instruction's
    # bytes, which is how its lines are matched with the cases.
    text = "\n".join(" ".join(f"0x{(w >> s) & 0xFF:02x}" for w in ws
                              for s in (0, 8, 16, 24)) for _, ws in cases)
    p = subprocess.run([mc, "-disassemble", "-show-encoding",
                        "-arch=amdgcn", "-mcpu=gfx906"], input=text,
                       capture_output=True, text=True)
    llvm = {}
    for line in p.stdout.splitlines():
        m = re.match(r"\s+(.*?)\s*; encoding: \[(.*)\]", line)
        # A word LLVM decodes but marks invalid counts as refused (an
        # "/*Invalid ...*/" operand, a reserved dpp_ctrl's
        # "/* Invalid dpp_ctrl value */", row_newbcast's "/* ... is not
        # supported on ASICs earlier than GFX90A/GFX10 */").
        if m and not re.search(r"/\*\s*Invalid|not supported on",
                               m.group(1)):
            llvm.setdefault(m.group(2).lower(), " ".join(m.group(1).split()))
    ours = subprocess.run(
        [disasm, "--words"], capture_output=True, text=True, check=True,
        input="\n".join(" ".join(f"{w:08x}" for w in ws)
                        for _, ws in cases) + "\n").stdout.splitlines()
    bad = compared = refused = 0
    rows_seen = set()
    for (mn, ws), got in zip(cases, ours):
        key = ",".join(f"0x{(w >> s) & 0xFF:02x}" for w in ws
                       for s in (0, 8, 16, 24))
        want = llvm.get(key)
        got = " ".join(got.split())
        hexw = " ".join(f"{w:08X}" for w in ws)
        if want is None:
            refused += 1
            if not got.startswith("error:"):
                bad += 1
                print(f"MISMATCH [{hexw}] {mn}: LLVM refuses, fa `{got}`")
        elif got.startswith("error:"):
            if not any(a in got for a in ALLOWED):
                bad += 1
                print(f"MISMATCH [{hexw}] {mn}: LLVM `{want}`, fa {got}")
        else:
            compared += 1
            rows_seen.add(mn)
            if want != got:
                bad += 1
                print(f"MISMATCH [{hexw}] {mn}: LLVM `{want}`, fa `{got}`")
    rows = len([r for r in table if r])
    print(f"table oracle: {rows} rows, {len(cases)} words, {compared} "
          f"compared, {refused} refused by LLVM, rows decoded by LLVM: "
          f"{len(rows_seen)}, {bad} mismatch(es)")
    missing = sorted({mn for mn, _ in cases} - rows_seen)
    if missing:
        bad += len(missing)
        print("rows LLVM never decoded: " + " ".join(missing))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
