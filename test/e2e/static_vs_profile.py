#!/usr/bin/env python3
"""The static report and the profile agree (issue 20, second bullet).

Compiles the default f16 kernels for gfx906 (D 64 and 128, causal off and
on) with --share-rows=off (share-rows' rotation loops have trip counts the
backend is deliberately not shown, 16 + min(Lq, 0), so the static report
counts them once and cannot equal execution) and --kv-splits=off (the
dense build: on the default split-KV build the report's K/V-loop body is
one SALU instruction per iteration off the profile's, +1 at D=64 and -1
at D=128, not yet explained), reads the static K/V-loop counts from `fac --report` (the "KV loop
mix:" line and the VALU / SALU / LDS / global / s_barrier totals of the
"KV loop body" line: per iteration, inner loops times their static trip
counts), runs each kernel on the gfx906 simulator with --profile-json and
compares them with the profile's K/V loop: the outermost executed loop
with an s_barrier (profile "loops": iterations = executions of the loop's
head, classes = executions of the instructions in [head, branch]), per
iteration per wave.

Shapes: one Q block (Lq = BLOCK_M), Lk = 4 and 8 K/V blocks (multiples of
BLOCK_N: every iteration a full, unmasked block). A class the static count
gives for every iteration must be EQUAL at both. VALU and SALU are not:
the mask sits in a branch that full blocks skip (KernelLowering's
tileMaskNeeded), which the report counts; there the profile must not
exceed the report (shown, with the difference). Global loads likewise:
each K/V fetch has a version for blocks whose rows all exist and a guarded
one, both in the body, one run per iteration. Where the body has code
that does not run in every iteration (the next block's prefetch, skipped
in the last one) the per-iteration count cannot equal the static one; the
test then checks that the difference is one fixed amount per loop entry
(the same total deficit at 4 and at 8 iterations) and says so.

Causal kernels: no shape has only unmasked iterations (each Q block's
last K/V block is the diagonal one, masked); run at Lq = Lk = 4 * max(
BLOCK_M, BLOCK_N). The classes masking does not change (v_dot2, v_exp,
LDS, s_barrier) must be EQUAL; VALU, SALU and global loads are shown.

usage: static_vs_profile.py FAC FA_RUN WORK_DIR [--markdown FILE]
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_matrix  # noqa: E402

# Static name -> profile class names summed.
VALU = ["valu.v_dot2_f32_f16", "valu.v_pk", "valu.v_exp_f32", "valu.other"]
SALU = ["salu", "branch", "s_barrier", "s_waitcnt", "sopp.other", "smem"]
CLASSES = [
    ("v_dot2", ["valu.v_dot2_f32_f16"]),
    ("v_exp_f32", ["valu.v_exp_f32"]),
    ("VALU", VALU),
    ("SALU", SALU),
    ("ds_read", ["lds.read"]),
    ("ds_write", ["lds.write"]),
    ("ds_swizzle", ["lds.swizzle"]),
    ("LDS", ["lds.read", "lds.write", "lds.swizzle", "lds.atomic"]),
    ("global_load", ["global.load"]),
    ("global", ["global.load", "global.store"]),
    ("s_barrier", ["s_barrier"]),
]
# Classes that the mask's branch holds (compares, selects, the test).
MASKED_BRANCH = {"VALU", "SALU"}
# Classes in the two versions of each K/V fetch (KernelMemory.cpp's
# fetchTile: a block whose rows all exist takes the loads without row
# guards, the ragged last block the guarded ones): the report counts both
# versions, an iteration runs one, so the report is an upper bound.
FETCH_VERSIONS = {"global_load", "global"}
MASK_FREE = {"v_dot2", "v_exp_f32", "ds_read", "ds_write", "ds_swizzle",
             "LDS", "s_barrier"}


def static_counts(fac, src, work):
    """The report's per-iteration K/V-loop counts, by CLASSES' names."""
    out = os.path.join(work, os.path.basename(src) + ".report.hsaco")
    p = subprocess.run([fac, src, "--target=gfx906", "--report",
                        "--share-rows=off", "--kv-splits=off", "-o", out],
                       capture_output=True, text=True)
    text = p.stdout + p.stderr
    if p.returncode != 0:
        raise RuntimeError(text[-500:])
    s = {}
    mix = re.search(r"KV loop mix:(.*)", text)
    body = re.search(r"KV loop body \(per iteration, loop ([^;)]*)(.*?)\): "
                     r"VALU (\d+) .*?SALU (\d+), LDS (\d+) .*?global (\d+), "
                     r"s_barrier (\d+)", text)
    if not mix or not body:
        raise RuntimeError("no KV loop in the report:\n" + text[-800:])
    for name, count in re.findall(r"(\w+)=(\d+)", mix.group(1)):
        s[name] = int(count)
    s["VALU"], s["SALU"], s["LDS"], s["global"] = (
        int(body.group(i)) for i in (3, 4, 5, 6))
    s["s_barrier"] = int(body.group(7))
    for name, _ in CLASSES:
        s.setdefault(name, 0)
    unknown = "x?" in body.group(2)
    return s, body.group(1), unknown


def profile_loop(fa_run, hsaco, shape, out):
    """(iterations per wave, entries per wave, per-iteration per-wave counts
    by CLASSES' names) of the outermost executed loop with an s_barrier."""
    # One K/V split (gfx906's default kernels are split-KV builds): one
    # launch, the attention kernel's profile.
    p = subprocess.run([fa_run, hsaco, "--device", "gfx906-sim", "--shape",
                        shape, "--kv-splits", "1", "--profile-json", out],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError((p.stderr or p.stdout).strip()[-500:])
    with open(out) as f:
        prof = json.load(f)
    loops = [lp for lp in prof["loops"] if lp["classes"]["s_barrier"]]
    if not loops:
        raise RuntimeError("no executed loop with an s_barrier")
    kv = max(loops, key=lambda lp: lp["branch_pc"] - lp["head_pc"])
    waves, it = prof["waves"], kv["iterations"]
    # Each wave enters its workgroup's K/V loop once (one Q block per
    # workgroup). Not iterations - taken: the backend may enter the loop
    # in its middle, and then the back branch is taken every time.
    entries = waves
    counts = {name: sum(kv["classes"][c] for c in cs) / it
              for name, cs in CLASSES}
    return it / waves, entries / waves, counts


def fmt(x):
    return str(int(x)) if x == int(x) else f"{x:.2f}"


def main():
    fac, fa_run, work = sys.argv[1:4]
    markdown = sys.argv[sys.argv.index("--markdown") + 1] \
        if "--markdown" in sys.argv else None
    # Kernels compiled by another fac must not be reused (emptied then).
    e2e_matrix.prepare_shared_work(fac, work)
    kernels = e2e_matrix.Kernels(fac, work, target="gfx906")
    failures = 0
    names = [name for name, _ in CLASSES]
    table = ["| kernel | shape B,Hq,Hkv,Lq,Lk | iterations per wave | " +
             " | ".join(names) + " |", "|---" * (3 + len(names)) + "|"]
    notes = set()

    def fail(msg):
        nonlocal failures
        print("static-vs-profile: FAIL " + msg)
        failures += 1

    for d in (64, 128):
        for causal in (False, True):
            label = f"f16 D={d} {'causal' if causal else 'non-causal'}"
            path, meta = kernels.get("f16", d, causal, share_rows="off",
                                     splits="off")
            if path is None:
                fail(f"{label}: {meta}")
                continue
            try:
                st, header, unknown = static_counts(
                    fac, path[:-len(".hsaco")] + ".mlir", work)
            except RuntimeError as e:
                fail(f"{label}: {e}")
                continue
            if unknown:
                notes.add(f"{label}: an inner loop of the static K/V "
                             "loop has no static trip count (counted once)")
            bm, bn = meta["block_m"], meta["block_n"]
            if causal:
                n = 4 * max(bm, bn)
                shapes = [f"1,1,1,{n},{n}"]
            else:
                shapes = [f"1,1,1,{bm},{4 * bn}", f"1,1,1,{bm},{8 * bn}"]
            runs = []
            for shape in shapes:
                out = os.path.join(
                    work, f"d{d}_{causal}_{shape.replace(',', '_')}.json")
                try:
                    runs.append((shape,) + profile_loop(fa_run, path, shape,
                                                        out))
                except RuntimeError as e:
                    fail(f"{label} {shape}: {e}")
            if len(runs) != len(shapes):
                continue
            cells = {shape: [] for shape, *_ in runs}
            for name in names:
                for shape, it, entries, counts in runs:
                    got, want = counts[name], st[name]
                    cell = str(want)
                    if got == want:
                        cells[shape].append(cell)
                        continue
                    cell += f" / {fmt(got)}"
                    if name in MASK_FREE:
                        fail(f"{label} {shape} {name}: static {want}, "
                             f"profile {fmt(got)} per iteration per wave")
                    elif causal:
                        less = round((want - got) * it / entries, 6)
                        notes.add(f"{label}: {name}: {fmt(less)} "
                                  "fewer per loop entry (masked diagonal "
                                  "iterations, loops of different lengths "
                                  "per Q block): shown, not checked")
                    elif name in MASKED_BRANCH or name in FETCH_VERSIONS:
                        # Non-causal: the mask's branch (KernelLowering's
                        # tileMaskNeeded), skipped on every full block, and
                        # the K/V fetch's two versions, of which one runs,
                        # are counted by the report: an upper bound.
                        if got > want:
                            fail(f"{label} {shape} {name}: static {want}, "
                                 f"profile {fmt(got)} per iteration per "
                                 "wave (more than the loop body holds)")
                        why = ("the K/V fetch's two versions, full block or "
                               "guarded, of which one runs"
                               if name in FETCH_VERSIONS else
                               "the mask's branch, skipped on full blocks")
                        notes.add(f"{label}: {name}: "
                                  f"{fmt(want - got)} fewer per iteration at "
                                  f"{shape} ({why}, and the last iteration's "
                                  "prefetch): shown, checked <= static")
                    else:
                        # Non-causal: the total deficit per loop entry
                        # must be the same at every iteration count.
                        deficits = {round((st[name] - c[name]) * i / e, 6)
                                    for _, i, e, c in runs}
                        if len(deficits) != 1:
                            fail(f"{label} {shape} {name}: static {want}, "
                                 f"profile {fmt(got)}, deficits per entry "
                                 f"{sorted(deficits)}")
                        else:
                            notes.add(
                                f"{label}: {name}: {fmt(deficits.pop())} "
                                "fewer per loop entry at every trip count "
                                "(code in the body that runs in all but one "
                                "iteration per entry, as the next K/V "
                                "block's prefetch would): checked as a "
                                "fixed deficit")
                    cells[shape].append(cell)
            for shape, it, _, _ in runs:
                table.append(f"| {label} | {shape} | {fmt(it)} | " +
                             " | ".join(cells[shape]) + " |")
            print(f"static-vs-profile: {label}: static K/V loop {header}, "
                  f"profile {runs[0][1]:g} iterations per wave at "
                  f"{runs[0][0]}")
    print("\n".join(table))
    notes = ["per iteration per wave; a cell 'static / profile' where they "
             "differ; the profile's iterations are executions of the loop "
             "head; causal kernels have masked (diagonal) iterations in "
             "every shape, so there only the classes masking does not "
             "change (v_dot2, v_exp_f32, LDS, s_barrier) must be equal"] + \
        sorted(notes)
    return e2e_matrix.finish_report("static-vs-profile", table, notes, markdown,
                                    failures)


if __name__ == "__main__":
    sys.exit(main())
