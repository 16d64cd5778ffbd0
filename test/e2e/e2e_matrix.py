#!/usr/bin/env python3
"""End-to-end matrix on the host device: compile with fac, run with fa-run.

Covers f16/f32 x D in {64,128} x causal on/off x GQA x Lq != Lk x lengths
{1, 17, 100, 257} x both input distributions: every value of every factor and
every pair of factor values at least once (a greedy pairwise covering set),
all with the LDS race checker on. Then other head dimensions, non-contiguous
layouts and explicit tile configurations, and the independent golden vectors
(test/data/golden) through the same kernels.

usage: e2e_matrix.py FAC FA_RUN GOLDEN_DIR WORK_DIR
"""
import itertools
import json
import os
import shutil
import subprocess
import sys

FACTORS = {
    "dtype": ["f16", "f32"],
    "d": [64, 128],
    "causal": [False, True],
    "gqa": [False, True],
    "lq_ne_lk": [False, True],
    "length": [1, 17, 100, 257],
    "dist": ["normal", "outliers"],
}
# The key length paired with each query length when Lq != Lk.
OTHER_LENGTH = {1: 100, 17: 257, 100: 17, 257: 1}


def pairwise_cases():
    names = list(FACTORS)
    uncovered = set()
    for (i, a), (j, b) in itertools.combinations(enumerate(names), 2):
        for va in FACTORS[a]:
            for vb in FACTORS[b]:
                uncovered.add((i, va, j, vb))
    candidates = list(itertools.product(*FACTORS.values()))
    cases = []
    while uncovered:
        def gain(c):
            return sum((i, c[i], j, c[j]) in uncovered
                       for i, j in itertools.combinations(range(len(c)), 2))
        best = max(candidates, key=gain)
        for i, j in itertools.combinations(range(len(best)), 2):
            uncovered.discard((i, best[i], j, best[j]))
        cases.append(dict(zip(names, best)))
    return cases


# Beyond the matrix: head dimensions that are not powers of two (D=40, 80:
# fewer lanes per row; D=40 rows are not 16-byte multiples for f32) and
# non-contiguous layouts (BLHD, padded rows: the scalar copy path).
EXTRA = [
    ("f16", 40, True, "1,2,1,70,90", []),
    ("f32", 40, False, "1,2,1,70,90", []),
    ("f16", 80, True, "1,4,2,90,70", []),
    ("f16", 256, False, "1,2,2,33,65", []),
    ("f16", 64, True, "2,8,2,100,77", ["--layout", "blhd"]),
    ("f16", 64, True, "2,8,2,100,77", ["--row-pad", "1"]),
    ("f32", 128, False, "1,4,2,65,130", ["--layout", "blhd", "--row-pad", "3"]),
]
# Explicit tile configurations (block-m, block-n, waves): other thread grids
# than the automatic choice, down to one wave and 16x16 tiles.
TILE_CONFIGS = [
    ("f16", 40, True, (16, 16, 1)),
    ("f32", 64, False, (32, 16, 2)),
    ("f16", 128, True, (64, 32, 8)),
    ("f16", 80, False, (16, 64, 2)),
    ("f32", 80, True, (128, 16, 4)),
]


def kernel_source(dtype, d, causal, scale=None):
    t = f"tensor<?x?x?x{d}x{dtype}>"
    l = "tensor<?x?x?xf32>"
    attrs = (" causal" if causal else "") + \
        (f" scale({scale})" if scale is not None else "")
    return (f"func.func @attention(%q: {t}, %k: {t}, %v: {t}) -> ({t}, {l}) {{\n"
            f"  %o, %lse = fa.attention %q, %k, %v{attrs} : {t}, {t}, {t} -> {t}, {l}\n"
            f"  return %o, %lse : {t}, {l}\n}}\n")


def compile_kernel(fac, work, dtype, d, causal, scale=None, tile=None):
    name = f"attn_{dtype}_d{d}_{'causal' if causal else 'full'}"
    if scale is not None:
        name += f"_scale{scale}"
    options = []
    if tile is not None:
        name += "_tile{}x{}w{}".format(*tile)
        options = ["--block-m={}".format(tile[0]),
                   "--block-n={}".format(tile[1]), "--waves={}".format(tile[2])]
    src = os.path.join(work, name + ".mlir")
    out = os.path.join(work, name + ".so")
    if not os.path.exists(out):
        with open(src, "w") as f:
            f.write(kernel_source(dtype, d, causal, scale))
        p = subprocess.run([fac, src, "--target=host", "-o", out] + options,
                           capture_output=True, text=True)
        if p.returncode != 0:
            print(f"  FAIL fac {src}\n    {p.stderr.strip()}")
            return None
    return out


def run(fa_run, args):
    p = subprocess.run([fa_run] + args + ["--device", "host", "--json"],
                       capture_output=True, text=True)
    try:
        report = json.loads(p.stdout)
    except json.JSONDecodeError:
        report = {}
    return p.returncode, report, p.stderr.strip()


def main():
    fac, fa_run, golden, work = sys.argv[1:5]
    # Start clean: kernels compiled by an older fac must not be reused.
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    failures = 0
    cases = pairwise_cases()
    print(f"e2e: {len(cases)} pairwise cases (race checker on)")
    for n, c in enumerate(cases):
        so = compile_kernel(fac, work, c["dtype"], c["d"], c["causal"])
        if so is None:
            failures += 1
            continue
        lq = c["length"]
        lk = OTHER_LENGTH[lq] if c["lq_ne_lk"] else lq
        hq, hkv = (8, 2) if c["gqa"] else (4, 4)
        shape = f"2,{hq},{hkv},{lq},{lk}"
        rc, rep, err = run(fa_run, [so, "--shape", shape, "--dist", c["dist"],
                                    "--seed", str(n), "--check-races"])
        status = "PASS" if rc == 0 else "FAIL"
        failures += rc != 0
        metrics = rep.get("metrics", rep.get("kernel", {}))
        print(f"  {status} {c['dtype']} D={c['d']} causal={int(c['causal'])} "
              f"shape={shape} dist={c['dist']} "
              f"max_abs={metrics.get('max_abs_diff', '?')}"
              + ("" if rc == 0 else f"\n    {err or json.dumps(rep)[:2000]}"))

    print("e2e: other head dimensions and layouts")
    for dtype, d, causal, shape, extra in EXTRA:
        so = compile_kernel(fac, work, dtype, d, causal)
        if so is None:
            failures += 1
            continue
        rc, rep, err = run(fa_run, [so, "--shape", shape, "--check-races"]
                           + extra)
        failures += rc != 0
        print(f"  {'PASS' if rc == 0 else 'FAIL'} {dtype} D={d} "
              f"causal={int(causal)} shape={shape} {' '.join(extra)}"
              + ("" if rc == 0 else f"\n    {err or json.dumps(rep)[:2000]}"))

    print("e2e: explicit tile configurations")
    for n, (dtype, d, causal, tile) in enumerate(TILE_CONFIGS):
        so = compile_kernel(fac, work, dtype, d, causal, tile=tile)
        if so is None:
            failures += 1
            continue
        shape = "1,4,2,77,131"
        rc, rep, err = run(fa_run, [so, "--shape", shape, "--seed", str(n),
                                    "--check-races"])
        failures += rc != 0
        print(f"  {'PASS' if rc == 0 else 'FAIL'} {dtype} D={d} "
              f"causal={int(causal)} block_m={tile[0]} block_n={tile[1]} "
              f"waves={tile[2]} shape={shape}"
              + ("" if rc == 0 else f"\n    {err or json.dumps(rep)[:2000]}"))

    print("e2e: golden vectors (independent fp64 oracle)")
    for case in sorted(os.listdir(golden)):
        meta_path = os.path.join(golden, case, "meta.json")
        if not os.path.exists(meta_path):
            continue
        with open(meta_path) as f:
            meta = json.load(f)
        default = 1.0 / (meta["D"] ** 0.5)
        scale = None if abs(meta["scale"] - default) < 1e-7 else meta["scale"]
        so = compile_kernel(fac, work, meta["dtype"], meta["D"],
                            meta["causal"], scale)
        if so is None:
            failures += 1
            continue
        rc, rep, err = run(fa_run, [so, "--golden", os.path.join(golden, case),
                                    "--check-races"])
        failures += rc != 0
        print(f"  {'PASS' if rc == 0 else 'FAIL'} {case}"
              + ("" if rc == 0 else f"\n    {err or json.dumps(rep)[:2000]}"))
    print(f"e2e: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
