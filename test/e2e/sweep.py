#!/usr/bin/env python3
"""Seeded random-shape sweep on the host emulator (issue 12, numerics at
breadth): fac compiles kernels with dynamic B, H and L, fa-run validates
each shape against the fp64 reference with the pass criteria of
docs/validation.md (FlashAttention's among them).

What is drawn, all from one random.Random(--seed):
  kernels: dtype f16/f32 x D from --d-set x causal x LSE output on/off x a
           tile configuration (fac's automatic choice, or explicit
           --block-m/--block-n/--waves, sometimes --stages). The D values are
           dealt round-robin so every D of the set gets kernels of both
           dtypes once there are 2 x |D set| kernels; with 4 x |D set|
           kernels (the default for 1000 shapes) the first round is fac's
           automatic configuration of every (dtype, D). A kernel is
           compiled once and runs many shapes (its B, H and L are dynamic).
  shapes:  B, Hkv, Hq = Hkv x GQA ratio, Lq and Lk in [1, 2048]
           (log-uniform, with Lq = Lk, Lq > Lk and tile-boundary lengths
           over-drawn), input distribution normal/outliers, a layout (BHLD,
           BLHD, padded rows, per-tensor orders and paddings,
           --distinct-strides, a padded LSE), a seed, and for some small
           shapes the LDS race checker. B*Hq*Lq*Lk*D stays under --budget
           so the CPU reference and the emulator finish.
Causal kernels with Lq > Lk have rows that see no key (bottom-right
alignment): the reference gives O = 0 and LSE = -inf there, and fa-run fails
a NaN, a finite LSE, or an O element off 0 by more than the scaled
threshold times max|V|*2^-13 (docs/validation.md, "Metrics").

A configuration fac refuses with a clear error (exit 1, "error:") counts as
refused; the shapes drawn for an explicit tile configuration it refuses run
on the next explicit configuration of the list that fac accepts for that
kernel (the automatic one when none does). fac refusing the
automatic configuration of a D in the set is a failure (every D of the set
must be served), as is any crash, any fa-run failure or error.

usage: sweep.py FAC FA_RUN WORK_DIR [--count N] [--seed S] [--kernels K]
                [--d-set mult8|all|D,D,...] [--budget W] [--jobs J]
                [--summary FILE.json] [--log FILE.jsonl] [--race-every N]
       sweep.py --markdown FILE.json   (the summary's tables in Markdown)
Exit 0 when every shape passes, 1 otherwise. Prints a worst-case table.
"""
import argparse
import concurrent.futures
import datetime
import json
import math
import os
import random
import shutil
import subprocess
import sys
import threading
import time

# Explicit tile configurations (block_m, block_n, waves, stages or None):
# other thread grids and buffering than fac's automatic choice.
TILES = [
    (16, 16, 1, None), (32, 16, 2, None), (16, 32, 1, None),
    (32, 32, 2, None), (64, 32, 4, None), (32, 64, 2, 1),
    (64, 64, 4, None), (16, 64, 2, 2), (128, 16, 4, None),
    (128, 32, 8, 1), (64, 16, 1, 2), (128, 64, 4, None),
    (64, 128, 4, 1), (32, 128, 8, None),
]
GQA_RATIOS = [1, 1, 2, 3, 4, 8]
MAX_L = 2048


def d_set(spec):
    if spec == "mult8":
        return list(range(8, 257, 8))
    if spec == "all":
        return list(range(1, 257))
    values = [int(x) for x in spec.split(",")]
    if not values or any(v < 1 for v in values):
        raise argparse.ArgumentTypeError(f"bad --d-set '{spec}'")
    return values


def kernel_source(dtype, d, causal, lse):
    t = f"tensor<?x?x?x{d}x{dtype}>"
    l = "tensor<?x?x?xf32>"
    attrs = " causal" if causal else ""
    if not lse:
        return (f"func.func @attention(%q: {t}, %k: {t}, %v: {t}) -> {t} {{\n"
                f"  %o = fa.attention %q, %k, %v{attrs} : {t}, {t}, {t} -> {t}\n"
                f"  return %o : {t}\n}}\n")
    return (f"func.func @attention(%q: {t}, %k: {t}, %v: {t}) -> ({t}, {l}) {{\n"
            f"  %o, %lse = fa.attention %q, %k, %v{attrs} : {t}, {t}, {t} -> "
            f"{t}, {l}\n  return %o, %lse : {t}, {l}\n}}\n")


class KernelSpec:
    def __init__(self, dtype, d, causal, lse, tile, alternatives=()):
        self.dtype, self.d, self.causal, self.lse, self.tile = \
            dtype, d, causal, lse, tile
        # Explicit tiles to try, in order, when fac refuses `tile`.
        self.alternatives = list(alternatives)

    def name(self):
        n = f"{self.dtype}_d{self.d}_{'causal' if self.causal else 'full'}"
        n += "_lse" if self.lse else ""
        if self.tile:
            n += "_{}x{}w{}".format(*self.tile[:3])
            if self.tile[3]:
                n += f"s{self.tile[3]}"
        return n

    def options(self):
        if not self.tile:
            return []
        bm, bn, w, s = self.tile
        o = [f"--block-m={bm}", f"--block-n={bn}", f"--waves={w}"]
        return o + ([f"--stages={s}"] if s else [])

    def with_tile(self, tile):
        return KernelSpec(self.dtype, self.d, self.causal, self.lse, tile)

    def candidates(self):
        """The specs to compile, in order, until fac accepts one: the drawn
        tile, the alternatives, then fac's automatic choice."""
        if not self.tile:
            return [self]
        return [self.with_tile(t) for t in [self.tile] + self.alternatives] \
            + [self.with_tile(None)]


def draw_kernels(rng, count, ds):
    """`count` kernel specs; D dealt round-robin (shuffled) per dtype. When
    there are kernels for two rounds, the first round is fac's automatic
    configuration of every (dtype, D) and later rounds mostly explicit
    tiles; otherwise 40% automatic."""
    specs = []
    order = []
    auto_round = count >= 4 * len(ds)
    for k in range(count):
        if k % (2 * len(ds)) == 0:
            order = [(dt, d) for d in rng.sample(ds, len(ds))
                     for dt in ("f16", "f32")]
        dtype, d = order[k % len(order)]
        tiles = rng.sample(TILES, len(TILES))
        if auto_round:
            auto = k < 2 * len(ds) or rng.random() < 0.15
        else:
            auto = rng.random() < 0.4
        tile = None if auto else tiles[0]
        specs.append(KernelSpec(dtype, d, rng.random() < 0.5,
                                rng.random() < 0.5, tile, tiles[1:]))
    return specs


def draw_length(rng):
    r = rng.random()
    if r < 0.05:
        return 1
    if r < 0.25:  # near a tile boundary
        return max(1, min(MAX_L, rng.choice([16, 32, 64, 128, 256, 512, 1024,
                                             2048]) + rng.choice([-1, 0, 1])))
    return min(MAX_L, int(math.exp(rng.uniform(math.log(2),
                                               math.log(MAX_L + 1)))))


def draw_layout(rng, lse):
    r = rng.random()
    args = []
    if r < 0.35:
        pass  # BHLD, contiguous
    elif r < 0.5:
        args = ["--layout", "blhd"]
    elif r < 0.65:
        args = ["--row-pad", str(rng.choice([1, 2, 3, 4, 8, 13]))]
    elif r < 0.8:
        args = ["--distinct-strides"]
    else:
        orders = ",".join(f"{t}={rng.choice(['bhld', 'blhd'])}" for t in "qkvo")
        pads = ",".join(f"{t}={rng.choice([0, 0, 1, 2, 5])}" for t in "qkvo")
        args = ["--layout", orders, "--row-pad", pads]
    if lse and rng.random() < 0.3:
        args += ["--lse-pad", str(rng.choice([1, 3, 7]))]
    return args


def draw_shape(rng, spec, budget):
    """(B, Hq, Hkv, Lq, Lk) with B*Hq*Lq*Lk*D <= budget (>= one head)."""
    r = rng.random()
    lq = draw_length(rng)
    if r < 0.2:
        lk = lq
    elif spec.causal and r < 0.4:  # Lq > Lk: rows that see no key
        lk = rng.randint(1, lq - 1) if lq > 1 else 1
        if lq == 1:
            lq = rng.randint(2, 300)
    else:
        lk = draw_length(rng)
    # Fit one head in the budget, shrinking one side.
    while lq * lk * spec.d > budget:
        if rng.random() < 0.5 and lq > 1:
            lq = max(1, budget // (lk * spec.d))
        elif lk > 1:
            lk = max(1, budget // (lq * spec.d))
        else:
            lq = max(1, budget // (lk * spec.d))
    ratio = rng.choice(GQA_RATIOS)
    hkv = rng.choice([1, 1, 2, 3, 4])
    b = rng.choice([1, 1, 2, 3, 4])
    per = lq * lk * spec.d
    while b * hkv * ratio * per > budget and b > 1:
        b -= 1
    while hkv * ratio * per > budget and hkv > 1:
        hkv -= 1
    while hkv * ratio * per > budget and ratio > 1:
        ratio -= 1
    return b, hkv * ratio, hkv, lq, lk


class Case:
    def __init__(self, index, spec, shape, dist, seed, layout, races):
        self.index, self.spec, self.shape, self.dist, self.seed = \
            index, spec, shape, dist, seed
        self.layout, self.races = layout, races
        self.kernel_used = None  # the spec that ran (auto on a refusal)
        self.result = None       # "pass" | "fail" | "refused"
        self.detail = ""
        self.report = {}

    def fa_run_args(self):
        a = ["--shape", ",".join(map(str, self.shape)), "--dist", self.dist,
             "--seed", str(self.seed)] + self.layout
        return a + (["--check-races"] if self.races else [])

    def empty_rows(self):
        lq, lk = self.shape[3], self.shape[4]
        return lq - lk if self.spec.causal and lq > lk else 0


def draw_cases(rng, kernels, count, budget, race_every):
    cases = []
    for i in range(count):
        spec = kernels[i % len(kernels)]
        shape = draw_shape(rng, spec, budget)
        b, hq, hkv, lq, lk = shape
        races = race_every > 0 and i % race_every == 0 and \
            b * hq * lq * lk * spec.d <= budget // 8
        cases.append(Case(i, spec, shape,
                          rng.choice(["normal", "outliers"]),
                          rng.randrange(1 << 30), draw_layout(rng, spec.lse),
                          races))
    return cases


class Compiler:
    """Compiles each spec once; thread-safe."""

    def __init__(self, fac, work):
        self.fac, self.work = fac, work
        self.lock = threading.Lock()
        self.done = {}  # name -> (path or None, message)
        self.events = {}
        self.specs = {}  # name -> KernelSpec
        self.seconds = 0.0

    def resolve(self, spec):
        """(path or None, message, the spec compiled): the first of
        spec.candidates() that fac accepts, else the last one's error."""
        for cand in spec.candidates():
            path, why = self.get(cand)
            if path is not None or not why.startswith("refused"):
                return path, why, cand
        return path, why, cand

    def get(self, spec):
        name = spec.name()
        with self.lock:
            if name in self.done:
                return self.done[name]
            ev = self.events.get(name)
            owner = ev is None
            if owner:
                ev = self.events[name] = threading.Event()
        if not owner:
            ev.wait()
            return self.done[name]
        src = os.path.join(self.work, name + ".mlir")
        out = os.path.join(self.work, name + ".so")
        with open(src, "w") as f:
            f.write(kernel_source(spec.dtype, spec.d, spec.causal, spec.lse))
        cmd = [self.fac, src, "--target=host", "-o", out] + spec.options()
        start = time.time()
        p = subprocess.run(cmd, capture_output=True, text=True)
        elapsed = time.time() - start
        err = " ".join(l for l in p.stderr.splitlines() if "error" in l)
        if p.returncode == 0:
            res = (out, "")
        elif p.returncode == 1 and "error:" in p.stderr:
            res = (None, "refused: " + err.strip())
        else:
            res = (None, f"fac crashed (exit {p.returncode}): "
                   + p.stderr.strip()[-1000:])
        with self.lock:
            self.seconds += elapsed
            self.done[name] = res
            self.specs[name] = spec
        ev.set()
        return res


def run_case(fa_run, compiler, case):
    path, why, case.kernel_used = compiler.resolve(case.spec)
    if path is None:
        case.result = "refused" if why.startswith("refused") else "fail"
        case.detail = why
        return case
    p = subprocess.run([fa_run, path] + case.fa_run_args() +
                       ["--device", "host", "--json"],
                       capture_output=True, text=True)
    try:
        case.report = json.loads(p.stdout)
    except json.JSONDecodeError:
        case.report = {}
    if p.returncode == 0 and case.report.get("pass"):
        case.result = "pass"
        return case
    case.result = "fail"
    failed = [f"{c['name']} {c['value']} (limit {c['limit']})"
              for c in case.report.get("checks", []) if not c["pass"]]
    case.detail = (f"fa-run exit {p.returncode}: " +
                   ("failed checks: " + ", ".join(failed) if failed
                    else (p.stderr.strip() or p.stdout.strip())[-1500:]))
    return case


def reproducer(fac, fa_run, work, case):
    spec = case.kernel_used or case.spec
    src = os.path.join(work, spec.name() + ".mlir")
    return (f"{fac} {src} --target=host -o /tmp/k.so "
            f"{' '.join(spec.options())}\n      {fa_run} /tmp/k.so "
            f"{' '.join(case.fa_run_args())} --device host")


METRICS = [  # (json key, "max" or "min")
    ("max_abs_diff", "max"), ("mean_abs_diff", "max"), ("rmse", "max"),
    ("max_scaled_diff", "max"), ("cosine", "min"),
    ("lse_max_abs_diff", "max"),
]


def as_float(x):
    if isinstance(x, str):
        return float(x)  # "inf", "nan"
    return float(x)


def summarize(cases):
    """Worst value of each metric and of each check's value/limit, per
    (dtype, dist), with the case that set it."""
    worst = {}
    checks = {}
    for c in cases:
        if c.result != "pass":
            continue
        group = f"{c.spec.dtype} {c.dist}"
        m = c.report.get("metrics", {})
        naive = c.report.get("naive_metrics", {})
        row = worst.setdefault(group, {"cases": 0})
        row["cases"] += 1
        values = {k: as_float(m[k]) for k, _ in METRICS if k in m}
        if "max_abs_diff" in m and "max_abs_diff" in naive:
            values["fa_ratio"] = as_float(m["max_abs_diff"]) / (
                2 * as_float(naive["max_abs_diff"]) + 1e-5)
        for k, v in values.items():
            how = dict(METRICS).get(k, "max")
            cur = row.get(k)
            if cur is None or (v > cur[0] if how == "max" else v < cur[0]):
                row[k] = (v, c.index)
        for ch in c.report.get("checks", []):
            try:
                frac = as_float(ch["value"]) / as_float(ch["limit"])
            except (ZeroDivisionError, ValueError, TypeError):
                continue
            if ch["name"] == "cosine":  # a lower bound: 1 - value vs 1 - limit
                frac = (1 - as_float(ch["value"])) / (1 - as_float(ch["limit"]))
            cur = checks.get(ch["name"])
            if cur is None or frac > cur[0]:
                checks[ch["name"]] = (frac, c.index, ch["value"], ch["limit"])
    return worst, checks


def refusal_kind(why):
    if "bytes of LDS" in why:
        return "over the LDS budget"
    if "registers per thread" in why:
        return "over the register estimate"
    if "cannot be split" in why:
        return "tiles do not divide over the threads"
    return why.split("error: ")[-1][:80]


def coverage(cases):
    """What the passed shapes covered, as printable counts."""
    def count(f):
        out = {}
        for c in cases:
            k = f(c)
            out[k] = out.get(k, 0) + 1
        return dict(sorted(out.items()))
    used = lambda c: c.kernel_used or c.spec
    ds = {dt: sorted({used(c).d for c in cases if c.spec.dtype == dt})
          for dt in ("f16", "f32")}
    layout = lambda c: ("distinct-strides" if "--distinct-strides" in c.layout
                        else "per-tensor" if "," in " ".join(c.layout[:2])
                        else "blhd" if "blhd" in c.layout
                        else "row-pad" if "--row-pad" in c.layout
                        else "bhld")
    return {
        "dtype": count(lambda c: c.spec.dtype),
        "D per dtype": {dt: f"{len(v)} values {v[0]}..{v[-1]}" if v else "none"
                        for dt, v in ds.items()},
        "causal": count(lambda c: used(c).causal),
        "lse": count(lambda c: used(c).lse),
        "tiles": count(lambda c: "explicit" if used(c).tile else "auto"),
        "explicit tile configs": len({used(c).tile for c in cases
                                      if used(c).tile}),
        "GQA ratio": count(lambda c: c.shape[1] // c.shape[2]),
        "Lq != Lk": sum(1 for c in cases if c.shape[3] != c.shape[4]),
        "Lq > Lk": sum(1 for c in cases if c.shape[3] > c.shape[4]),
        "max L": max((max(c.shape[3:]) for c in cases), default=0),
        "L = 1": sum(1 for c in cases if 1 in c.shape[3:]),
        "L > 1024": sum(1 for c in cases if max(c.shape[3:]) > 1024),
        "layout": count(layout),
        "lse-pad": sum(1 for c in cases if "--lse-pad" in c.layout),
        "dist": count(lambda c: c.dist),
    }


def git_commit(src_dir):
    try:
        return subprocess.run(["git", "-C", src_dir, "rev-parse", "--short",
                               "HEAD"], capture_output=True, text=True,
                              check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "unknown"


def markdown(summary):
    """The worst-case table of a --summary file, as Markdown."""
    cols = [("max_abs_diff", "max abs"), ("mean_abs_diff", "mean abs"),
            ("rmse", "RMSE"), ("max_scaled_diff", "max scaled"),
            ("cosine", "1 − min cosine"), ("lse_max_abs_diff", "LSE max abs"),
            ("fa_ratio", "FA ratio")]
    out = ["| dtype, dist | shapes | " + " | ".join(c[1] for c in cols) +
           " |", "|---|---|" + "---|" * len(cols)]
    for g, row in sorted(summary["worst"].items()):
        def cell(k):
            v = row.get(k)
            if not v:
                return "—"
            return f"{1 - v[0]:.2g}" if k == "cosine" else f"{v[0]:.3g}"
        out.append(f"| {g} | {row['cases']} | " +
                   " | ".join(cell(k) for k, _ in cols) + " |")
    out += ["", "| check | worst value / limit | value | limit | case |",
            "|---|---|---|---|---|"]
    for name, c in sorted(summary["checks"].items()):
        r = c["repro"]
        out.append(f"| {name} | {c['fraction_of_limit']:.3f} | "
                   f"{float(c['value']):.4g} | {float(c['limit']):.4g} | "
                   f"`{r['kernel']}` {' '.join(r['fa_run_args'])} |")
    return "\n".join(out)


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--markdown":
        with open(sys.argv[2]) as f:
            print(markdown(json.load(f)))
        return 0
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("fac")
    ap.add_argument("fa_run")
    ap.add_argument("work")
    ap.add_argument("--count", type=int, default=1000,
                    help="shapes (default 1000)")
    ap.add_argument("--seed", type=int, default=12)
    ap.add_argument("--kernels", type=int, default=0,
                    help="kernels to draw (default: count/8, up to "
                         "4 x |D set| when count/4 allows: 128 for 1000 "
                         "shapes and the default D set)")
    ap.add_argument("--d-set", type=d_set, default=d_set("mult8"),
                    help="head dimensions: mult8 (8..256 step 8, default), "
                         "all (1..256) or a list D,D,...")
    ap.add_argument("--budget", type=float, default=4e7,
                    help="max B*Hq*Lq*Lk*D per shape (default 4e7)")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--race-every", type=int, default=10,
                    help="LDS race checker on every Nth shape if small "
                         "(0: never)")
    ap.add_argument("--summary", help="write the summary as JSON here")
    ap.add_argument("--log", help="append each shape's result as one JSON "
                    "line here as it finishes (a partial run stays useful)")
    args = ap.parse_args()

    kernels_n = args.kernels or max(min(args.count // 4, 4 * len(args.d_set)),
                                    args.count // 8)
    rng = random.Random(args.seed)
    kernels = draw_kernels(rng, kernels_n, args.d_set)
    cases = draw_cases(rng, kernels, args.count, int(args.budget),
                       args.race_every)

    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    compiler = Compiler(args.fac, args.work)
    start = time.time()
    print(f"sweep: seed {args.seed}, {len(cases)} shapes over "
          f"{len(kernels)} kernels, D set {min(args.d_set)}..{max(args.d_set)}"
          f" ({len(args.d_set)} values), budget {args.budget:g}", flush=True)
    # Cases of one kernel run in order on one worker (one compile each).
    by_kernel = {}
    for c in cases:
        by_kernel.setdefault(c.spec.name(), []).append(c)
    lock = threading.Lock()
    progress = [0]

    def run_group(group):
        for c in group:
            run_case(args.fa_run, compiler, c)
            with lock:
                progress[0] += 1
                if log:
                    used = c.kernel_used or c.spec
                    log.write(json.dumps({
                        "case": c.index, "result": c.result,
                        "kernel": used.name(), "fac_options": used.options(),
                        "fa_run_args": c.fa_run_args(), "detail": c.detail,
                        "metrics": c.report.get("metrics"),
                        "naive_metrics": c.report.get("naive_metrics"),
                        "checks": c.report.get("checks")}) + "\n")
                    log.flush()
                if c.result == "fail":
                    print(f"  FAIL #{c.index} {c.spec.name()} "
                          f"shape={','.join(map(str, c.shape))} "
                          f"{c.dist} {' '.join(c.layout)}\n    {c.detail}\n"
                          f"    {reproducer(args.fac, args.fa_run, args.work, c)}",
                          flush=True)
                if progress[0] % 100 == 0:
                    print(f"  {progress[0]}/{len(cases)} shapes, "
                          f"{time.time() - start:.0f} s", flush=True)

    log = open(args.log, "a") if args.log else None
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        list(pool.map(run_group, by_kernel.values()))
    if log:
        log.close()
    elapsed = time.time() - start

    passed = [c for c in cases if c.result == "pass"]
    failed = [c for c in cases if c.result == "fail"]
    refused_auto = [c for c in cases if c.result == "refused"]
    refusals = {n: why for n, (p, why) in compiler.done.items() if p is None}
    fallbacks = sum(1 for c in passed + failed
                    if c.kernel_used.name() != c.spec.name())
    worst, checks = summarize(cases)

    print(f"\nsweep: {len(cases)} shapes, {len(passed)} passed, "
          f"{len(failed)} failed, {len(refused_auto)} refused by fac "
          f"(automatic tiles); {len(compiler.done)} kernels compiled or "
          f"refused in {compiler.seconds:.0f} s of fac; {elapsed:.0f} s total")
    explicit = {n for n in refusals if compiler.specs[n].tile}
    print(f"  explicit tile configurations refused by fac: "
          f"{len(explicit)}; {fallbacks} shapes ran on another explicit "
          f"configuration of their kernel (or the automatic one)")
    kinds = {}
    for n, why in sorted(refusals.items()):
        kinds.setdefault(refusal_kind(why), []).append(n)
    for kind, names in sorted(kinds.items()):
        print(f"    {len(names):3d} {kind}: e.g. {names[0]}: "
              f"{refusals[names[0]].split('error: ')[-1][:160]}")
    for n in sorted(set(refusals) - explicit):
        print(f"    automatic configuration refused: {n}: {refusals[n]}")
    empty = [c for c in passed if c.empty_rows()]
    print(f"  shapes with rows that see no key (causal, Lq > Lk): "
          f"{len(empty)} passed of "
          f"{sum(1 for c in cases if c.empty_rows())}")
    print(f"  LDS race checker on: "
          f"{sum(1 for c in cases if c.races)} shapes")
    cov = coverage(passed)
    print("  coverage of the passed shapes: " +
          "; ".join(f"{k} {v}" for k, v in cov.items()))

    def fmt(v):
        return f"{v[0]:.3g} (#{v[1]})" if v else "-"
    cols = ["max_abs_diff", "mean_abs_diff", "rmse", "max_scaled_diff",
            "cosine", "lse_max_abs_diff", "fa_ratio"]
    print("\n  worst per dtype/dist (case #): " + ", ".join(cols))
    for g in sorted(worst):
        print(f"  {g:13s} n={worst[g]['cases']:4d} " +
              "  ".join(f"{k}={fmt(worst[g].get(k))}" for k in cols))
    print("\n  worst check value / limit (1.0 = at the limit):")
    for name, (frac, idx, value, limit) in sorted(checks.items()):
        print(f"    {name:28s} {frac:.3f}  (#{idx}: {value} vs {limit})")
    for name, (frac, idx, value, limit) in sorted(checks.items()):
        c = cases[idx]
        print(f"  worst {name}: #{idx} {c.spec.name()} shape="
              f"{','.join(map(str, c.shape))} {c.dist} seed={c.seed} "
              f"{' '.join(c.layout)}")

    if args.summary:
        def case_json(i):
            c = cases[i]
            return {"kernel": (c.kernel_used or c.spec).name(),
                    "fac_options": (c.kernel_used or c.spec).options(),
                    "fa_run_args": c.fa_run_args()}
        src = os.path.dirname(os.path.abspath(__file__))
        summary = {
            "seed": args.seed, "count": len(cases), "kernels": len(kernels),
            "d_set": args.d_set, "budget": args.budget,
            "date": datetime.date.today().isoformat(),
            "commit": git_commit(src), "seconds": round(elapsed),
            "fac_seconds": round(compiler.seconds),
            "passed": len(passed), "failed": len(failed),
            "refused_auto": len(refused_auto),
            "refused_configs": refusals, "fallback_shapes": fallbacks,
            "empty_row_shapes": len(empty),
            "race_checked": sum(1 for c in cases if c.races),
            "coverage": coverage(passed),
            "worst": {g: {k: (list(v) if isinstance(v, tuple) else v)
                          for k, v in r.items()} for g, r in worst.items()},
            "checks": {n: {"fraction_of_limit": f, "case": i, "value": v,
                           "limit": l, "repro": case_json(i)}
                       for n, (f, i, v, l) in checks.items()},
            "failures": [{"case": c.index, "detail": c.detail,
                          "repro": case_json(c.index)} for c in failed],
        }
        with open(args.summary, "w") as f:
            json.dump(summary, f, indent=1)
    if refused_auto:
        print(f"\nsweep: fac refused the automatic configuration of "
              f"{len({c.spec.with_tile(None).name() for c in refused_auto})} kernels "
              f"(D values {sorted({c.spec.d for c in refused_auto})})")
    ok = not failed and not refused_auto
    print(f"\nsweep: {'PASS' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
