#!/usr/bin/env python3
"""fa on gfx906 (AMD MI50) by the calibrated MI50 timing model: ESTIMATES.

No MI50 runs here. Every figure this script writes is the estimate of the
timing model in fa's gfx906 simulator (`fa-run --device gfx906-sim
--estimate-only`: a sample of the kernel's workgroups executed, their
instruction streams replayed on one modelled CU, the grid dispatched over
60 CUs; docs/mi50-timing-model.md), not a measurement. Never a timed test.

What it does (issue 20, the gfx906 benchmark):
  1. compiles the default f16 kernels (D 64 and 128, causal off and on;
     split-KV builds with the dense tiles since 2026-12-03: an estimate
     at S > 1 is both launches, its occupancy and stalls the attention
     kernel's) and
     the ablations, each one change against the default: padding off,
     double buffering off (--stages=1), --dot2=off, K and V in two LDS
     slots (--kv-shared=off), the other fetch-ahead, 8 waves, share-rows
     off (every lane reads its lhs rows from LDS), other tiles;
     a combination that fails to compile is a row with the reason;
  2. runs each kernel once, validated, at a small shape with --profile-json
     (the LDS bank-conflict histogram, the global bytes, which must equal
     fa's count from the tiling: the HBM bytes of a benchmark row are that
     count at the row's shape);
  3. estimates the defaults on the shapes of the H200 benchmark
     (bench/bench.py) and GQA 32/8 shapes, all of which fit a 32 GB MI50,
     and the ablations on two GQA shapes; the defaults (and the ablations at
     one shape) again with --estimate-param version=1, the model before
     its calibration on llama.cpp's real MI50 results
     (docs/gfx906-timing.md; the default is v2);
  4. writes OUT/results.csv, OUT/summary.md and OUT/chart.png (matplotlib;
     without it, no chart and a note).

usage: bench/gfx906.py [--out DIR] [--build DIR | --fac FAC --fa-run FA_RUN]
                       [--jobs N] [--samples N] [--work DIR] [--smoke]
                       [--chart-only]
  --out         default bench/results/<date>-gfx906-sim
  --work        kernels and estimate JSON (default BUILD/bench-gfx906-work)
  --smoke       one kernel, one tiny shape, into --out (a temporary folder
                for the ctest); checks that the CSV has its columns
  --chart-only  redraws OUT/chart.png from OUT/results.csv
"""
import argparse
import concurrent.futures
import csv
import datetime
import json
import math
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

PEAK = 26.8          # MI50 packed-fp16 peak, TFLOP/s
LLAMA_CPP = 8.3      # llama.cpp tile FA prefill on a real MI50 (measured)
SENSITIVITY = "version=1"
MI50_BYTES = 32 * 2 ** 30
MODEL_PARAMS = {}    # "calibrated" / SENSITIVITY -> the estimate's params

# Shapes: (B, Hq, Hkv, L, causal), Lq = Lk = L. The H200 benchmark's
# (bench/bench.py) and GQA 32/8; all fit a 32 GB card many times over.
SHAPES = {
    128: [(8, 12, 12, 2048, False), (4, 16, 16, 4096, False),
          (2, 16, 16, 8192, False), (4, 32, 8, 2048, False),
          (1, 32, 8, 4096, False), (1, 32, 8, 8192, False),
          (4, 16, 16, 4096, True), (4, 32, 8, 2048, True),
          (1, 32, 8, 4096, True), (1, 32, 8, 8192, True)],
    64: [(4, 16, 16, 4096, False), (4, 32, 8, 2048, False),
         (1, 32, 8, 4096, False), (1, 32, 8, 8192, False),
         (4, 16, 16, 4096, True), (4, 32, 8, 2048, True),
         (1, 32, 8, 4096, True), (1, 32, 8, 8192, True)],
}
# The ablations run on these (a subset of SHAPES, so the default is there).
ABLATION_SHAPES = [(4, 32, 8, 2048), (1, 32, 8, 4096)]
# ... and under the sensitivity parameter on this one.
ABLATION_SENSITIVITY_SHAPE = (1, 32, 8, 4096)
# The validated, profiled run of each kernel (GQA 2:1, two Q blocks or more).
PROFILE_SHAPE = (1, 4, 2, 256, 256)

# name -> (fac options, what it changes). Tiles are per D.
COMMON_ABLATIONS = [
    ("pad-off", ["--pad-lds=false"], "fa-pad-lds off"),
    ("stages1", ["--stages=1"], "no double buffering"),
    ("dot2-off", ["--dot2=off"], "no v_dot2_f32_f16"),
    ("kv-2slots", ["--kv-shared=off"], "K and V in separate LDS slots"),
    ("waves8", ["--waves=8"], "8 waves per workgroup"),
    ("share-rows-off", ["--share-rows=off"],
     "every lane reads its lhs rows from LDS (no DPP rotations)"),
]
D_ABLATIONS = {
    64: [("in-block", ["--fetch-ahead=in-block"],
          "fetch-ahead=in-block (default next-block)"),
         ("64x32", ["--block-m=64", "--block-n=32"], "tile 64x32"),
         ("128x32", ["--block-m=128", "--block-n=32"], "tile 128x32"),
         ("32x32", ["--block-m=32", "--block-n=32"], "tile 32x32")],
    128: [("in-block", ["--fetch-ahead=in-block"],
           "fetch-ahead=in-block (default next-block)"),
          ("32x64", ["--block-m=32", "--block-n=64"], "tile 32x64"),
          ("64x64", ["--block-m=64", "--block-n=64"], "tile 64x64"),
          ("128x32", ["--block-m=128", "--block-n=32"], "tile 128x32"),
          ("128x64", ["--block-m=128", "--block-n=64"], "tile 128x64")],
}

COLUMNS = [
    "date", "model", "params", "kernel", "variant", "d", "causal",
    "fac_options", "status", "block_m", "block_n", "threads", "stages",
    "fetch_ahead", "vgprs", "sgprs", "vgpr_spills", "sgpr_spills",
    "scratch_bytes", "lds_bytes", "shape", "B", "Hq", "Hkv", "Lq", "Lk",
    "est_ms", "tflops", "pct_peak", "limited_by", "valu_use", "lds_use",
    "hbm_use", "workgroups_per_cu", "waves_per_simd", "resident_limit",
    "stall_lgkmcnt", "stall_vmcnt", "stall_barrier", "stall_dependency",
    "lds_passes_per_ds", "lds_conflicted_pct", "lds_max_degree",
    "lds_conflicts", "hbm_read_bytes", "hbm_written_bytes", "hbm_gbps",
    "hbm_check",
]


def source(d, causal):
    t = f"tensor<?x?x?x{d}xf16>"
    attr = " causal" if causal else ""
    return (f"func.func @attention(%q: {t}, %k: {t}, %v: {t}) -> {t} {{\n"
            f"  %o = fa.attention %q, %k, %v{attr} : {t}, {t}, {t} -> {t}\n"
            f"  return %o : {t}\n}}\n")


class Kernel:
    def __init__(self, d, causal, variant, options, what):
        self.d, self.causal, self.variant = d, causal, variant
        self.options, self.what = options, what
        self.name = f"d{d}{'_causal' if causal else ''}_{variant}"
        self.path = None
        self.meta = {}
        self.error = None
        self.fetch_ahead = ""
        self.profile = None
        self.profile_error = None

    def compile(self, fac, work):
        src = os.path.join(work, f"attn_d{self.d}_"
                           f"{'causal' if self.causal else 'full'}.mlir")
        out = os.path.join(work, self.name + ".hsaco")
        p = subprocess.run([fac, src, "--target=gfx906", "--report", "-o",
                            out] + self.options, capture_output=True,
                           text=True)
        text = p.stdout + p.stderr
        if p.returncode != 0 or not os.path.exists(out + ".json"):
            errs = [ln for ln in text.splitlines() if "error" in ln]
            self.error = "compile failed: " + (
                errs[0].split("error:", 1)[-1].strip() if errs
                else text.strip()[-200:])
            return
        with open(out + ".json") as f:
            self.meta = json.load(f)["kernels"][0]
        self.path = out
        for ln in text.splitlines():
            if "K/V loop:" in ln:
                kv = ln.split("K/V loop:", 1)[1].strip()
                self.fetch_ahead = (kv.split("fetch-ahead=", 1)[1]
                                    .rstrip(")") if "fetch-ahead=" in kv
                                    else kv)
        self.remarks = [ln.split("remark:", 1)[1].strip()
                        for ln in text.splitlines()
                        if ln.startswith("fac: remark:")]

    def run_profile(self, fa_run, work):
        if not self.path:
            return
        b, hq, hkv, lq, lk = PROFILE_SHAPE
        prof = os.path.join(work, self.name + ".profile.json")
        p = subprocess.run([fa_run, self.path, "--device", "gfx906-sim",
                            "--shape", f"{b},{hq},{hkv},{lq},{lk}",
                            # one K/V split: a split-KV build reads and
                            # writes what the dense kernel does
                            "--kv-splits", "1", "--profile-json", prof],
                           capture_output=True, text=True)
        if p.returncode != 0 or not os.path.exists(prof):
            self.profile_error = ("validated run failed: " +
                                  (p.stdout + p.stderr).strip()[-200:])
            return
        with open(prof) as f:
            self.profile = json.load(f)


def hbm_count(meta, causal, b, hq, hkv, lq, lk):
    """fa's global traffic from the tiling (test/e2e/hbm_traffic.py): Q once,
    the K and V rows each (Q block, query head) visits, O (and LSE) once."""
    d, bm, bn, e = meta["head_dim"], meta["block_m"], meta["block_n"], 2
    rows = 0
    for i in range(math.ceil(lq / bm)):
        if causal:
            keys = min(lk, min(lq, (i + 1) * bm) + (lk - lq))
            nb = math.ceil(keys / bn) if keys > 0 else 0
            rows += min(lk, nb * bn)
        else:
            rows += lk
    read = b * hq * lq * d * e + b * hq * rows * 2 * d * e
    written = b * hq * lq * d * e + (b * hq * lq * 4 if meta.get("has_lse")
                                     else 0)
    return read, written


def footprint(b, hq, hkv, l, d):
    """Bytes of Q, K, V and O in f16."""
    return 2 * (2 * b * hq * l * d + 2 * b * hkv * l * d)


def conflict_summary(profile):
    total = passes = conflicted = 0
    worst = 1
    parts = []
    for mnem, c in sorted(profile.get("lds_conflicts", {}).items()):
        degs = {int(k): v for k, v in c.get("degrees", {}).items()}
        n = sum(degs.values())
        if not n:
            continue
        total += n
        passes += sum(k * v for k, v in degs.items())
        conflicted += sum(v for k, v in degs.items() if k > 1)
        worst = max(worst, max(degs))
        mean = sum(k * v for k, v in degs.items()) / n
        if max(degs) > 1:
            parts.append(f"{mnem} {mean:.2f} (max {max(degs)})")
    if not total:
        return dict(lds_passes_per_ds="", lds_conflicted_pct="",
                    lds_max_degree="", lds_conflicts="no DS instructions")
    return dict(lds_passes_per_ds=round(passes / total, 3),
                lds_conflicted_pct=round(100 * conflicted / total, 1),
                lds_max_degree=worst,
                lds_conflicts="; ".join(parts) or "conflict-free")


def estimate(fa_run, kernel, shape, params, samples, work):
    b, hq, hkv, l = shape
    tag = f"{kernel.name}_{b}x{hq}x{hkv}x{l}" + \
        ("_" + params.replace("=", "-") if params else "")
    out = os.path.join(work, tag + ".estimate.json")
    cmd = [fa_run, kernel.path, "--device", "gfx906-sim", "--shape",
           f"{b},{hq},{hkv},{l},{l}", "--estimate-only", "--estimate-json",
           out, "--estimate-samples", str(samples)]
    if params:
        cmd += ["--estimate-param", params]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0 or not os.path.exists(out):
        return None, ("estimate failed: " +
                      (p.stdout + p.stderr).strip()[-200:])
    with open(out) as f:
        est = json.load(f)
    # A split-KV build (gfx906's default) at S > 1 is two launches: the
    # time, TFLOP/s and bound of both; occupancy and stalls of the
    # attention kernel's.
    if "launches" in est:
        first = est["launches"][0]
        for k in ("waves_per_workgroup", "workgroups_per_cu",
                  "resident_limit", "samples"):
            est[k] = first[k]
    MODEL_PARAMS[params or "calibrated"] = est.get("params", "")
    return est, None


def row_for(kernel, shape, est, err, params, date):
    b, hq, hkv, l = shape
    m = kernel.meta
    res = m.get("resources", {})
    r = {c: "" for c in COLUMNS}
    r.update(date=date, kernel=kernel.name, variant=kernel.variant,
             d=kernel.d, causal=int(kernel.causal),
             fac_options=" ".join(kernel.options) or "(default)",
             shape=f"({b},{hq},{hkv},{l})" + (" causal" if kernel.causal
                                              else ""),
             B=b, Hq=hq, Hkv=hkv, Lq=l, Lk=l,
             params=params or "calibrated")
    if kernel.error:
        r["status"] = kernel.error
        return r
    r.update(block_m=m["block_m"], block_n=m["block_n"],
             threads=m["threads"], stages=m["stages"],
             fetch_ahead=kernel.fetch_ahead, vgprs=res.get("vgprs"),
             sgprs=res.get("sgprs"), vgpr_spills=res.get("vgpr_spills"),
             sgpr_spills=res.get("sgpr_spills"),
             scratch_bytes=res.get("scratch_bytes"),
             lds_bytes=m["lds_bytes"])
    if kernel.profile:
        r.update(conflict_summary(kernel.profile))
        got = (kernel.profile["global_bytes_read"],
               kernel.profile["global_bytes_written"])
        want = hbm_count(m, kernel.causal, *PROFILE_SHAPE)
        r["hbm_check"] = ("profile = count" if got == want else
                          f"profile {got[0]}/{got[1]} vs count "
                          f"{want[0]}/{want[1]}")
    else:
        r["hbm_check"] = kernel.profile_error or ""
    read, written = hbm_count(m, kernel.causal, b, hq, hkv, l, l)
    r.update(hbm_read_bytes=read, hbm_written_bytes=written)
    if est is None:
        r["status"] = err
        return r
    waves = est["waves_per_workgroup"]
    stalls = {"lgkmcnt": 0, "vmcnt": 0, "barrier": 0, "dependency": 0}
    wave_cycles = 0
    for s in est.get("samples", []):
        wave_cycles += s["resident"] * waves * s["cycles"]
        for k in stalls:
            stalls[k] += s["stalls"].get(k, 0)
    for k in stalls:
        r["stall_" + k] = round(stalls[k] / wave_cycles, 3) \
            if wave_cycles else ""
    r.update(status="ok" if not kernel.profile_error else
             "ok (" + kernel.profile_error[:60] + ")",
             model=est["model"],
             est_ms=round(est["seconds"] * 1e3, 3),
             tflops=round(est["tflops"], 3),
             pct_peak=round(100 * est["tflops"] / PEAK, 1),
             limited_by=est["limited_by"],
             valu_use=round(est["valu_use"], 3),
             lds_use=round(est["lds_use"], 3),
             hbm_use=round(est["hbm_use"], 3),
             workgroups_per_cu=est["workgroups_per_cu"],
             waves_per_simd=est["workgroups_per_cu"] * waves / 4,
             resident_limit=est["resident_limit"],
             hbm_gbps=round((read + written) / est["seconds"] / 1e9, 1))
    return r


def git(*args):
    try:
        return subprocess.run(["git", "-C", ROOT] + list(args),
                              capture_output=True,
                              text=True).stdout.rstrip("\n")
    except OSError:
        return ""


def kernels_for(smoke):
    ks = []
    for d in (64, 128):
        for causal in (False, True):
            ks.append(Kernel(d, causal, "default", [], "default"))
            if smoke:
                return ks
            for name, opts, what in COMMON_ABLATIONS + D_ABLATIONS[d]:
                ks.append(Kernel(d, causal, name, opts, what))
    return ks


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", default=None)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--fac")
    ap.add_argument("--fa-run")
    ap.add_argument("--work")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--chart-only", action="store_true",
                    help="redraw OUT/chart.png from OUT/results.csv")
    a = ap.parse_args()
    fac = a.fac or os.path.join(a.build, "bin", "fac")
    fa_run = a.fa_run or os.path.join(a.build, "bin", "fa-run")
    date = datetime.date.today().isoformat()
    out = a.out or os.path.join(HERE, "results", f"{date}-gfx906-sim")
    work = a.work or os.path.join(out if a.smoke else a.build,
                                  "bench-gfx906-work")
    if a.chart_only:
        with open(os.path.join(out, "results.csv")) as f:
            rows = list(csv.DictReader(f))
        plot(rows, os.path.join(out, "chart.png"), rows[0]["model"])
        return 0
    os.makedirs(out, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    for d in (64, 128):
        for causal in (False, True):
            with open(os.path.join(work, f"attn_d{d}_"
                                   f"{'causal' if causal else 'full'}.mlir"),
                      "w") as f:
                f.write(source(d, causal))
    start = time.time()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs)
    kernels = kernels_for(a.smoke)
    list(pool.map(lambda k: k.compile(fac, work), kernels))
    list(pool.map(lambda k: k.run_profile(fa_run, work), kernels))
    t_compile = time.time() - start
    print(f"gfx906: {len(kernels)} kernels compiled and profiled in "
          f"{t_compile:.0f} s ({sum(1 for k in kernels if k.error)} failed "
          f"to compile)", flush=True)

    jobs = []  # (kernel, shape, params)
    samples = a.samples
    if a.smoke:
        jobs.append((kernels[0], (1, 2, 2, 128), ""))
        samples = min(samples, 2)
    else:
        for k in kernels:
            if k.variant == "default":
                for b, hq, hkv, l, c in SHAPES[k.d]:
                    if c == k.causal:
                        jobs.append((k, (b, hq, hkv, l), ""))
                        jobs.append((k, (b, hq, hkv, l), SENSITIVITY))
            for shape in ABLATION_SHAPES:
                if k.variant != "default":
                    jobs.append((k, shape, ""))
            if k.variant != "default":
                jobs.append((k, ABLATION_SENSITIVITY_SHAPE, SENSITIVITY))
    for k, (b, hq, hkv, l), _ in jobs:
        assert footprint(b, hq, hkv, l, k.d) < MI50_BYTES

    def one(job):
        k, shape, params = job
        if k.error:
            return row_for(k, shape, None, k.error, params, date)
        est, err = estimate(fa_run, k, shape, params, samples,
                            work)
        r = row_for(k, shape, est, err, params, date)
        print(f"  {k.name:22} {r['shape']:24} {params or 'calibrated':26} "
              f"{r['tflops']!s:>7} TFLOP/s {r['limited_by']:8} "
              f"VALU {r['valu_use']} LDS {r['lds_use']} HBM {r['hbm_use']}"
              f"{'' if r['status'] == 'ok' else '  ' + r['status']}",
              flush=True)
        return r
    # Compile failures give one row per kernel, not one per shape.
    seen_failed = set()
    todo = []
    for j in jobs:
        if j[0].error:
            if j[0].name in seen_failed:
                continue
            seen_failed.add(j[0].name)
        todo.append(j)
    rows = list(pool.map(one, todo))
    elapsed = time.time() - start
    models = sorted({r["model"] for r in rows if r["model"]})
    model = models[0] if models else ""
    for r in rows:
        r["model"] = r["model"] or model
    path = os.path.join(out, "results.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path} ({len(rows)} rows, {elapsed:.0f} s)")

    if a.smoke:
        with open(path) as f:
            rd = csv.DictReader(f)
            got = rd.fieldnames
            data = list(rd)
        ok = got == COLUMNS and data and data[0]["status"] == "ok" and \
            float(data[0]["tflops"]) > 0 and data[0]["limited_by"] and \
            data[0]["hbm_check"] == "profile = count"
        print(f"smoke: {'PASS' if ok else 'FAIL'}: columns "
              f"{'match' if got == COLUMNS else got}; row "
              f"{data[0] if data else None}")
        return 0 if ok else 1

    write_summary(out, rows, kernels, model, MODEL_PARAMS, date, elapsed,
                  a.samples)
    try:
        plot(rows, os.path.join(out, "chart.png"), model)
    except ImportError as e:
        print(f"no chart: {e} (apt-get install python3-matplotlib; run with "
              f"the python3 that has it)")
    return 0


def fmt(x, nd=2):
    if x == "" or x is None:
        return ""
    return f"{float(x):.{nd}f}"


def pct(x):
    return "" if x == "" else f"{100 * float(x):.0f}%"


def write_summary(out, rows, kernels, model, params, date, elapsed, samples):
    commit = git("rev-parse", "--short", "HEAD")
    dirty = [ln[3:] for ln in git("status", "--porcelain",
                                  "--untracked-files=no").splitlines()
             if not ln[3:].startswith("bench/")]
    cpu = ""
    try:
        with open("/proc/cpuinfo") as f:
            for ln in f:
                if ln.startswith("model name"):
                    cpu = ln.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ok = [r for r in rows if r["status"].startswith("ok")]
    cal = {(r["kernel"], r["shape"]): r for r in ok
           if r["params"] == "calibrated"}
    sens = {(r["kernel"], r["shape"]): r for r in ok
            if r["params"] == SENSITIVITY}
    L = []
    L.append("# gfx906 (MI50) benchmark: simulated ESTIMATES\n")
    L.append("Every time and TFLOP/s here is an **estimate** of the MI50 "
             f"timing model `{model}` (docs/mi50-timing-model.md) from fa's "
             "gfx906 simulator (`fa-run --device gfx906-sim --estimate-only "
             f"--estimate-samples {samples}`): sampled workgroups executed, "
             "their instruction streams replayed on one modelled CU, the "
             "grid dispatched over 60 CUs. No MI50 ran this code.\n")
    L.append(f"- date: {date}")
    L.append(f"- machine (runs the simulator; it does not affect the "
             f"estimates): {platform.node() or 'unknown'}, {cpu}, "
             f"{os.cpu_count()} cores, {platform.system()} "
             f"{platform.release()}; `bench/gfx906.py` took {elapsed:.0f} s "
             f"with 2 jobs")
    L.append(f"- commit: {commit}" + (
        f" + uncommitted changes in {', '.join(dirty)} (the fac and fa-run "
        "of build/ were built from the working tree)" if dirty else ""))
    L.append(f"- model: `{model}`, calibrated parameters: "
             f"`{params.get('calibrated', '')}`")
    if SENSITIVITY in params:
        L.append(f"- parameters of the sensitivity rows: "
                 f"`{params[SENSITIVITY]}`")
    L.append(f"- sensitivity: the same kernels with `--estimate-param "
             f"{SENSITIVITY}` (`fa-mi50-timing v1`, calibrated on fa's own "
             "microbenchmarks; v2 is calibrated on llama.cpp's real MI50 "
             "results, docs/gfx906-timing.md)")
    L.append(f"- reference lines: llama.cpp's tile FlashAttention kernel, "
             f"{LLAMA_CPP} TFLOP/s measured on a real MI50 (head dim 256); "
             f"the packed-fp16 peak {PEAK} TFLOP/s")
    L.append("- HBM bytes: fa's count from the tiling at the row's shape "
             "(Q once, K and V once per Q block and query head, the blocks a "
             "causal Q block visits, O once), checked equal to the global "
             "bytes the simulator counted in one validated `--profile-json` "
             f"run of each kernel at {PROFILE_SHAPE} (column hbm_check); "
             "LDS conflicts from that run's measured bank-conflict "
             "histogram (bank passes per executed DS instruction)")
    big = max((footprint(int(r["B"]), int(r["Hq"]), int(r["Hkv"]),
                         int(r["Lq"]), int(r["d"])), r["shape"], r["d"])
              for r in rows)
    L.append("- all shapes are Lq = Lk = L, f16, bottom-right causal mask; "
             f"the largest, D={big[2]} {big[1]}, needs {big[0] / 1e9:.2f} GB "
             "for Q, K, V and O: every shape fits a 32 GB MI50\n")

    L.append("## Default kernels\n")
    L.append("| kernel | shape (B,Hq,Hkv,L) | est. ms | TFLOP/s | % of peak "
             "| limited by | VALU | LDS | HBM | WG/CU (waves/SIMD) | stalls "
             "per wave: lgkmcnt / vmcnt / barrier | HBM GB (GB/s) | TFLOP/s "
             f"at {SENSITIVITY} (limited by) |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in ok:
        if r["variant"] != "default" or r["params"] != "calibrated":
            continue
        s = sens.get((r["kernel"], r["shape"]))
        gb = (int(r["hbm_read_bytes"]) + int(r["hbm_written_bytes"])) / 1e9
        L.append(
            f"| D={r['d']}{' causal' if int(r['causal']) else ''} "
            f"{r['block_m']}x{r['block_n']} | {r['shape']} | "
            f"{fmt(r['est_ms'], 1)} | **{fmt(r['tflops'])}** | "
            f"{fmt(r['pct_peak'], 0)}% | {r['limited_by']} | "
            f"{pct(r['valu_use'])} | {pct(r['lds_use'])} | "
            f"{pct(r['hbm_use'])} | {r['workgroups_per_cu']} "
            f"({fmt(r['waves_per_simd'], 0)}) | {pct(r['stall_lgkmcnt'])} / "
            f"{pct(r['stall_vmcnt'])} / {pct(r['stall_barrier'])} | "
            f"{gb:.2f} ({fmt(r['hbm_gbps'], 0)}) | "
            + (f"{fmt(s['tflops'])} ({s['limited_by']}) |" if s else " |"))
    L.append("")

    L.append("## Kernels (compile-time resources, one profiled run each)\n")
    L.append("| kernel | fac options | tiles | threads | stages (K/V loop) "
             "| VGPRs | SGPRs | spills V/S | scratch B | LDS B | DS passes "
             "per op | DS ops conflicted | max degree | conflicted "
             "instructions (mean passes) | HBM count vs profile |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    by_kernel = {}
    for r in rows:
        by_kernel.setdefault(r["kernel"], r)
    for k in kernels:
        r = by_kernel.get(k.name)
        if r is None:
            continue
        opts = " ".join(k.options) or "(default)"
        if k.error:
            L.append(f"| {k.name} | `{opts}` | {k.error} |" + " |" * 12)
            continue
        L.append(
            f"| {k.name} | `{opts}` | {r['block_m']}x{r['block_n']} | "
            f"{r['threads']} | {r['stages']} ({k.fetch_ahead or '-'}) | "
            f"{r['vgprs']} | {r['sgprs']} | {r['vgpr_spills']}/"
            f"{r['sgpr_spills']} | {r['scratch_bytes']} | {r['lds_bytes']} | "
            f"{r['lds_passes_per_ds']} | {r['lds_conflicted_pct']}% | "
            f"{r['lds_max_degree']} | {r['lds_conflicts']} | "
            f"{r['hbm_check']} |")
    L.append("")

    L.append("## Ablations (one change against the default)\n")
    hdr = "| kernel | what | tiles | VGPRs / scratch | waves/SIMD |"
    for b, hq, hkv, l in ABLATION_SHAPES:
        hdr += f" ({b},{hq},{hkv},{l}) TFLOP/s (vs default) | limited by: " \
               "VALU / LDS / HBM |"
    b, hq, hkv, l = ABLATION_SENSITIVITY_SHAPE
    hdr += f" ({b},{hq},{hkv},{l}) at {SENSITIVITY} (vs default) |"
    L.append(hdr)
    L.append("|" + "---|" * (5 + 2 * len(ABLATION_SHAPES) + 1))
    faster = []
    for d in (64, 128):
        for causal in (False, True):
            for k in kernels:
                if k.d != d or k.causal != causal:
                    continue
                c = " causal" if causal else ""
                base = f"d{d}{'_causal' if causal else ''}_default"
                if k.error:
                    L.append(f"| {k.name} | {k.what} | {k.error} |" +
                             " |" * (2 + 2 * len(ABLATION_SHAPES) + 1))
                    continue
                r0 = by_kernel[k.name]
                line = (f"| {k.name} | {k.what} | {r0['block_m']}x"
                        f"{r0['block_n']}, {r0['threads']} threads | "
                        f"{r0['vgprs']} / {r0['scratch_bytes']} | "
                        f"{fmt(r0['waves_per_simd'], 0)} |")
                for b, hq, hkv, l in ABLATION_SHAPES:
                    shape = f"({b},{hq},{hkv},{l}){c}"
                    r = cal.get((k.name, shape))
                    r_def = cal.get((base, shape))
                    if not r:
                        line += " failed | |"
                        continue
                    rel = ""
                    if r_def and k.variant != "default":
                        x = float(r["tflops"]) / float(r_def["tflops"]) - 1
                        rel = f" ({100 * x:+.0f}%)"
                        if x > 0.005:
                            faster.append((k, shape, r["tflops"],
                                           r_def["tflops"], x))
                    line += (f" {fmt(r['tflops'])}{rel} | {r['limited_by']}: "
                             f"{pct(r['valu_use'])} / {pct(r['lds_use'])} / "
                             f"{pct(r['hbm_use'])} |")
                b, hq, hkv, l = ABLATION_SENSITIVITY_SHAPE
                shape = f"({b},{hq},{hkv},{l}){c}"
                r, r_def = sens.get((k.name, shape)), sens.get((base, shape))
                if r:
                    rel = ""
                    if r_def and k.variant != "default":
                        rel = f" ({100 * (float(r['tflops']) / float(r_def['tflops']) - 1):+.0f}%)"
                    line += f" {fmt(r['tflops'])}{rel} ({r['limited_by']}) |"
                else:
                    line += " |"
                L.append(line)
    L.append("")
    L.append("## Faster than the default under the model\n")
    if faster:
        b, hq, hkv, l = ABLATION_SENSITIVITY_SHAPE
        for k, shape, t, t0, x in faster:
            c = " causal" if k.causal else ""
            base = f"d{k.d}{'_causal' if k.causal else ''}_default"
            sshape = f"({b},{hq},{hkv},{l}){c}"
            rs, rs0 = sens.get((k.name, sshape)), sens.get((base, sshape))
            extra = ""
            if rs and rs0:
                xs = float(rs["tflops"]) / float(rs0["tflops"]) - 1
                extra = (f"; at {SENSITIVITY}, {sshape}: {fmt(rs['tflops'])} "
                         f"vs {fmt(rs0['tflops'])} ({100 * xs:+.1f}%)")
            L.append(f"- {k.name} (`{' '.join(k.options)}`) at {shape}: "
                     f"{fmt(t)} vs {fmt(t0)} TFLOP/s ({100 * x:+.1f}%)"
                     f"{extra}")
    else:
        L.append("- none (calibrated parameters)")
    L.append("")
    fails = [r for r in rows if not r["status"].startswith("ok")]
    if fails:
        L.append("## Rows that did not run\n")
        for r in fails:
            L.append(f"- {r['kernel']} (`{r['fac_options']}`) {r['shape']}: "
                     f"{r['status']}")
        L.append("")
    L.append("![chart](chart.png)\n")
    L.append("Columns of results.csv: " + ", ".join(COLUMNS) + ".")
    path = os.path.join(out, "summary.md")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")
    print(f"wrote {path}")


def plot(rows, path, model):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ok = [r for r in rows if r["status"].startswith("ok")]
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(15, 10))
    # Top: the defaults on every shape, calibrated and the sensitivity.
    defaults = [r for r in ok if r["variant"] == "default"]
    labels = []
    for r in defaults:
        lab = f"D={r['d']} {r['shape']}"
        if lab not in labels:
            labels.append(lab)
    for i, (params, colour, name) in enumerate(
            [("calibrated", "tab:blue", "default kernels (calibrated model)"),
             (SENSITIVITY, "tab:orange", f"same, {SENSITIVITY}")]):
        ys = []
        for lab in labels:
            m = [float(r["tflops"]) for r in defaults
                 if f"D={r['d']} {r['shape']}" == lab and r["params"] == params]
            ys.append(m[0] if m else 0)
        ax1.bar([x + 0.4 * i for x in range(len(labels))], ys, 0.4,
                color=colour, label=name)
    for ax in (ax1, ax2):
        ax.axhline(LLAMA_CPP, color="tab:red", linestyle="--",
                   label=f"llama.cpp tile FA, measured MI50 ({LLAMA_CPP})")
        ax.axhline(PEAK, color="k", linestyle=":",
                   label=f"packed-fp16 peak ({PEAK})")
        ax.set_ylabel("estimated TFLOP/s")
        ax.set_ylim(0, PEAK * 1.08)
    ax1.set_xticks([x + 0.2 for x in range(len(labels))])
    ax1.set_xticklabels(labels, fontsize=7, rotation=30, ha="right")
    ax1.legend(fontsize=8, loc="upper left", ncol=2)
    ax1.set_title(f"fa on gfx906 (MI50): SIMULATED ESTIMATES of {model}, "
                  "not measurements — default kernels")
    # Bottom: ablations on the ablation shapes.
    groups = []
    for d in (64, 128):
        for c in ("", " causal"):
            for b, hq, hkv, l in ABLATION_SHAPES:
                groups.append((d, f"({b},{hq},{hkv},{l}){c}"))
    variants = []
    for r in ok:
        if r["params"] == "calibrated" and r["variant"] not in variants and \
                any(int(r["d"]) == d and r["shape"] == s for d, s in groups):
            variants.append(r["variant"])
    variants.sort(key=lambda v: (v != "default", v))
    cmap = plt.get_cmap("tab20")
    colour = {v: "tab:blue" if v == "default" else cmap((i + 1) % 20)
              for i, v in enumerate(variants)}
    per_group = []
    for d, s in groups:
        per_group.append([(v, float(r["tflops"])) for v in variants
                          for r in ok if r["variant"] == v and
                          int(r["d"]) == d and r["shape"] == s and
                          r["params"] == "calibrated"])
    width = 0.85 / max([1] + [len(g) for g in per_group])
    labelled = set()
    for g, bars in enumerate(per_group):
        for j, (v, y) in enumerate(bars):
            ax2.bar(g + j * width, y, width, color=colour[v],
                    label=None if v in labelled else v)
            labelled.add(v)
    ax2.set_xticks([g + (len(b) - 1) * width / 2
                    for g, b in enumerate(per_group)])
    ax2.set_xticklabels([f"D={d} {s}" for d, s in groups], fontsize=7,
                        rotation=20, ha="right")
    ax2.legend(fontsize=7, loc="upper left", ncol=6)
    ax2.set_title("ablations, one change each against the default "
                  "(simulated estimates, calibrated model)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(main())
