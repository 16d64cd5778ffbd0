#!/usr/bin/env python3
"""The gfx906 decoder's oracle test: fa's decoder against llvm-objdump.

Compiles every kernel the e2e plan builds for gfx906 (e2e_matrix.py
--write-plan: defaults, f16/f32, causal, GQA shapes, the head-dims section,
explicit tiles, stages 1 and 2, --pad-lds=false, bf16) plus the variants the
plan does not cover (--index-bits=64, --dot2=off, --pair-rhs=false,
--fetch-ahead=in-block), then decodes each code object's .text with
fa-sim-disasm and with `llvm-objdump -d --mcpu=gfx906`, and compares the two
instruction by instruction: the same pcs, and at each the same mnemonic and
operands.

Normalisation, applied to llvm-objdump's lines only: the trailing
`// <address>: <words>` comment and any `<label>` after it are dropped
(the address becomes the pc the lines are matched on; branch offsets are
compared as printed, so a wrong target still differs), and runs of
whitespace become one space. fa-sim-disasm prints LLVM's syntax itself
(hex literals, register ranges, modifiers), so nothing else is rewritten
and no difference is hidden.

usage: oracle_test.py FAC LLVM_OBJDUMP FA_SIM_DISASM E2E_MATRIX GOLDEN WORK
       [--reuse] (keep WORK's kernels from an earlier run)
       [--also CODE_OBJECT]... (more gfx906 code objects to compare, e.g.
       the committed test/runtime/data/attention_gfx906.hsaco of an older fac)
"""
import concurrent.futures as cf
import os
import re
import shutil
import subprocess
import sys

EXTRA_VARIANTS = [
    # (name, dtype, head dim, causal, fac options)
    ("idx64_f16_d64_causal", "f16", 64, True, ["--index-bits=64"]),
    ("idx64_f32_d128_full", "f32", 128, False, ["--index-bits=64"]),
    ("nodot2_f16_d64_full", "f16", 64, False, ["--dot2=off"]),
    ("nodot2_f16_d128_causal", "f16", 128, True, ["--dot2=off"]),
    ("rowmajorv_f16_d64_causal", "f16", 64, True, ["--pair-rhs=false"]),
    ("inblock_f16_d128_full", "f16", 128, False,
     ["--stages=2", "--fetch-ahead=in-block"]),
]

LINE = re.compile(r"^\s+([a-z_0-9]+.*?)\s*//\s*([0-9A-Fa-f]+):")


def source(dtype, d, causal):
    t = f"tensor<?x?x?x{d}x{dtype}>"
    l = "tensor<?x?x?xf32>"
    c = " causal" if causal else ""
    return (f"func.func @attention(%q: {t}, %k: {t}, %v: {t}) -> ({t}, {l}) {{\n"
            f"  %o, %lse = fa.attention %q, %k, %v{c} : {t}, {t}, {t} -> {t}, {l}\n"
            f"  return %o, %lse : {t}, {l}\n}}\n")


def build(fac, e2e, golden, work):
    plan_dir = os.path.join(work, "plan")
    p = subprocess.run([sys.executable, e2e, fac, "-", golden, plan_dir,
                        "--target", "gfx906", "--write-plan",
                        os.path.join(work, "plan.json")],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit(f"oracle: the e2e plan did not build:\n{p.stdout}{p.stderr}")
    extra_dir = os.path.join(work, "extra")
    os.makedirs(extra_dir, exist_ok=True)

    def compile_extra(v):
        name, dtype, d, causal, opts = v
        src = os.path.join(extra_dir, name + ".mlir")
        with open(src, "w") as f:
            f.write(source(dtype, d, causal))
        out = os.path.join(extra_dir, name + ".hsaco")
        q = subprocess.run([fac, src, "--target=gfx906", "-o", out] + opts,
                           capture_output=True, text=True)
        return name, q.returncode, q.stderr

    with cf.ThreadPoolExecutor(2) as pool:
        for name, rc, err in pool.map(compile_extra, EXTRA_VARIANTS):
            if rc != 0:
                sys.exit(f"oracle: fac failed on {name}:\n{err}")


def kernels(work):
    out = []
    for sub in ("plan", "extra"):
        d = os.path.join(work, sub)
        out += sorted(os.path.join(d, f) for f in os.listdir(d)
                      if f.endswith(".hsaco"))
    return out


def llvm_lines(objdump, path):
    p = subprocess.run([objdump, "-d", "--mcpu=gfx906", path],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"llvm-objdump failed on {path}: {p.stderr}")
    lines = {}
    for line in p.stdout.splitlines():
        m = LINE.match(line)
        if m:
            lines[int(m.group(2), 16)] = " ".join(m.group(1).split())
    return lines


def fa_lines(disasm, path):
    p = subprocess.run([disasm, path], capture_output=True, text=True)
    lines = {}
    for line in p.stdout.splitlines():
        pc, _, text = line.partition(" ")
        lines[int(pc, 16)] = " ".join(text.split())
    return lines, (p.stderr.strip() if p.returncode != 0 else None)


def compare(objdump, disasm, path):
    want = llvm_lines(objdump, path)
    got, err = fa_lines(disasm, path)
    diffs = []
    if err:
        diffs.append(f"decoder stopped: {err}")
    for pc in sorted(set(want) | set(got)):
        a, b = want.get(pc, "<none>"), got.get(pc, "<none>")
        if a != b and not (err and b == "<none>"):
            diffs.append(f"pc 0x{pc:x}: llvm-objdump `{a}`, fa `{b}`")
    mnemonics = {t.split()[0] for t in want.values()}
    return path, len(want), diffs, mnemonics


def main():
    argv, also = sys.argv[1:], []
    while "--also" in argv:
        i = argv.index("--also")
        also.append(argv[i + 1])
        del argv[i:i + 2]
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 6:
        sys.exit(__doc__)
    fac, objdump, disasm, e2e, golden, work = args
    if "--reuse" not in sys.argv or not os.path.isdir(work):
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        build(fac, e2e, golden, work)
    paths = kernels(work) + also
    total, bad, mnemonics = 0, 0, set()
    with cf.ThreadPoolExecutor(2) as pool:
        for path, count, diffs, mn in pool.map(
                lambda p: compare(objdump, disasm, p), paths):
            total += count
            mnemonics |= mn
            if diffs:
                bad += len(diffs)
                print(f"FAIL {os.path.basename(path)}: {len(diffs)} "
                      f"mismatch(es)")
                for d in diffs[:10]:
                    print("  " + d)
    print(f"oracle: {len(paths)} gfx906 kernels, {total} instructions, "
          f"{len(mnemonics)} distinct mnemonics, {bad} mismatch(es)")
    return 1 if bad or not total else 0


if __name__ == "__main__":
    sys.exit(main())
