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
       [--reference LLVM_BIN DEVICE_LIBS DEVICE_REFERENCE_CPP] (also the fp64
       device reference kernel of runtime/lib/validate/DeviceReference.cpp,
       the source hiprtc compiles for `fa-run --reference device`, built for
       gfx906 with clang's HIP front end and ROCm's device libraries: code
       from a different front end, with f64 and other instructions fac never
       emits)
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


def build(fac, e2e, golden, work, shared=None):
    """The plan's kernels go to work/plan, or (shared) to the e2e suite's
    shared gfx906 folder, where the e2e-gfx906-sim-kernels fixture has
    compiled them already."""
    plan_dir = shared or os.path.join(work, "plan")
    p = subprocess.run([sys.executable, e2e, fac, "-", golden, plan_dir,
                        "--target", "gfx906", "--write-plan",
                        os.path.join(work, "plan.json")]
                       + (["--shared-work"] if shared else []),
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


# The variants of the device reference: (FA_DTYPE, FA_D, FA_NAIVE).
REFERENCE_VARIANTS = [(0, 64, 0), (0, 128, 1), (1, 64, 0), (1, 128, 1),
                      (2, 64, 0), (2, 128, 0)]

# What hiprtc provides and a plain HIP compile without HIP's headers lacks.
REFERENCE_PRELUDE = """
struct FaIdx { unsigned x, y, z; };
#define blockIdx (FaIdx{__builtin_amdgcn_workgroup_id_x(), \\
  __builtin_amdgcn_workgroup_id_y(), __builtin_amdgcn_workgroup_id_z()})
#define threadIdx (FaIdx{__builtin_amdgcn_workitem_id_x(), \\
  __builtin_amdgcn_workitem_id_y(), __builtin_amdgcn_workitem_id_z()})
#define blockDim (FaIdx{(unsigned)__builtin_amdgcn_workgroup_size_x(), \\
  (unsigned)__builtin_amdgcn_workgroup_size_y(), \\
  (unsigned)__builtin_amdgcn_workgroup_size_z()})
"""


def build_reference(llvm_bin, device_libs, cpp, work):
    """The device reference kernel for gfx906: clang (HIP, device only) to
    bitcode with the device libraries linked, llc, lld. (clang's own link
    step needs a ROCm layout; the three steps do not.)"""
    text = open(cpp).read()
    start = text.index('R"FA_SRC(') + len('R"FA_SRC(')
    source = REFERENCE_PRELUDE + text[start:text.index(')FA_SRC"', start)]
    out_dir = os.path.join(work, "reference")
    os.makedirs(out_dir, exist_ok=True)
    src = os.path.join(out_dir, "reference.hip")
    with open(src, "w") as f:
        f.write(source)

    def one(v):
        name = os.path.join(out_dir, "reference_t{}_d{}_naive{}".format(*v))
        steps = [
            [os.path.join(llvm_bin, "clang++"), "-x", "hip",
             "--offload-arch=gfx906", "--offload-device-only", "-nogpuinc",
             "-mcode-object-version=5", "--rocm-device-lib-path=" +
             device_libs, "-include", "__clang_hip_runtime_wrapper.h", "-O3",
             "-DFA_DTYPE=%d" % v[0], "-DFA_D=%d" % v[1],
             "-DFA_NAIVE=%d" % v[2], "-emit-llvm", "-c", src,
             "-o", name + ".bc"],
            [os.path.join(llvm_bin, "llc"), "-O3",
             "-mtriple=amdgcn-amd-amdhsa", "-mcpu=gfx906", "-filetype=obj",
             name + ".bc", "-o", name + ".o"],
            [os.path.join(llvm_bin, "lld"), "-flavor", "gnu", "-m",
             "elf64_amdgpu", "--no-undefined", "-shared", name + ".o",
             "-o", name + ".hsaco"]]
        for cmd in steps:
            q = subprocess.run(cmd, capture_output=True, text=True)
            if q.returncode != 0:
                return None, f"{' '.join(cmd)}:\n{q.stderr}"
        return name + ".hsaco", None

    paths = []
    with cf.ThreadPoolExecutor(2) as pool:
        for path, err in pool.map(one, REFERENCE_VARIANTS):
            if err:
                sys.exit(f"oracle: the device reference did not build: {err}")
            paths.append(path)
    return paths


def kernels(work, shared=None):
    out = []
    for d in (shared or os.path.join(work, "plan"),
              os.path.join(work, "extra")):
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
    argv, also, reference = sys.argv[1:], [], None
    if "--reference" in argv:
        i = argv.index("--reference")
        reference = argv[i + 1:i + 4]
        del argv[i:i + 4]
    while "--also" in argv:
        i = argv.index("--also")
        also.append(argv[i + 1])
        del argv[i:i + 2]
    shared = None
    if "--shared-plan" in argv:
        i = argv.index("--shared-plan")
        shared = argv[i + 1]
        del argv[i:i + 2]
    args = [a for a in argv if not a.startswith("--")]
    if len(args) != 6:
        sys.exit(__doc__)
    fac, objdump, disasm, e2e, golden, work = args
    if "--reuse" not in sys.argv or not os.path.isdir(work):
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
        build(fac, e2e, golden, work, shared)
    paths = kernels(work, shared) + also
    if reference:
        paths += build_reference(*reference, work)
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
