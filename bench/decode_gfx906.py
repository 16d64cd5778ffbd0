#!/usr/bin/env python3
"""fa decode on gfx906 (AMD MI50) by the MI50 timing model: ESTIMATES.

No MI50 runs here. Every time and GB/s this script writes is an estimate of
the timing model `fa-mi50-timing v2` (docs/gfx906-timing.md) in fa's gfx906 simulator (`fa-run
--device gfx906-sim --estimate-only`: sampled workgroups executed, their
instruction streams replayed on one modelled CU, the grid dispatched over 60
CUs; docs/mi50-timing-model.md), not a measurement. Never a timed test.

Decode attention, f16, D=128, Hq=32, Hkv=8 (GQA 4:1), Lq=1, a dense K/V
cache; B in {1, 8, 32}, Lk in {1024, 8192, 32768}. What it does:
  1. compiles the split-KV + GQA-packed kernels (`fac --target=gfx906
     --kv-splits=runtime --gqa-pack=on`) with the tiles block-m 16 x
     block-n 32/64/128 x waves 1/2/4, and a few narrower ones (block-m 4
     and 8: GQA 4:1 at Lq=1 packs 4 rows), the split-only kernel of the
     best tile, and the dense baselines of docs/design.md's "decode
     baseline" paragraph (the default kernel, and --block-m=16
     --block-n=64); a tile that fails to compile is a row with the reason;
  2. estimates every packed tile on the cheaper shapes (B*Lk <= 65536),
     picks the best (geometric mean of the estimated K/V GB/s), and
     estimates it, its split-only build and the dense baselines on every
     shape; the split count is the runtime's (fa::planKvSplits, as
     fa-run's `kv splits` line reports it; bench/decode.py's split_rule),
     and, as an ablation, the best tile at B=1 and B=8, Lk=8192 with
     fa-run --kv-splits 1..64;
  3. reports the K/V GB/s = 2*B*Hkv*Lk*D*2 bytes / the estimate's total time
     (split kernel + combine kernel), its share of the MI50's 850 GB/s HBM
     read rate, the limiting unit, against llama.cpp's measured 369 GB/s
     (its vector kernel on a real MI50) and the goal of 600;
  4. writes OUT/decode.csv, OUT/summary.md, OUT/chart.png (matplotlib;
     without it, no chart and a note).

B=32, Lk=32768 (1 GiB of K/V) is left out unless --big: fa-run fills every
input on the host even with --estimate-only (about 16 bytes of RSS per K/V
element: 17 GB there, 2-3 minutes per kernel), so it runs alone, after the
rest.

usage: bench/decode_gfx906.py [--out DIR] [--build DIR | --fac FAC --fa-run
                              FA_RUN] [--jobs N] [--samples N] [--work DIR]
                              [--big] [--quick] [--chart-only]
  --out         default bench/results/<date>-gfx906-decode
  --work        kernels and estimate JSON (default BUILD/bench-decode-gfx906-work)
  --quick       two tiles, B 1 and 8, Lk 1024 and 8192, no split ablation
  --chart-only  redraws OUT/chart.png from OUT/decode.csv
"""
import argparse
import concurrent.futures
import csv
import datetime
import json
import math
import os
import platform
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gfx906  # noqa: E402  (bench/gfx906.py: source, Kernel, git, fmt, pct)

D, HQ, HKV, LQ = 128, 32, 8, 1
HBM_READ = 850.0       # MI50 HBM2 read GB/s (the model's hbm_read_bytes_per_s)
LLAMA_CPP = 369.0      # llama.cpp's decode kernel on a real MI50, K/V GB/s
GOAL = 600.0           # issue 21's goal, K/V GB/s
MODEL = "fa-mi50-timing v2"
BATCHES = [1, 8, 32]
LENGTHS = [1024, 8192, 32768]
SWEEP_MAX = 65536      # B*Lk of the shapes every tile is estimated on
BIG = 2 ** 20          # B*Lk from which a shape runs alone (--big)
SPLIT_SHAPES = [(1, 8192), (8, 8192)]
SPLITS = [1, 2, 4, 8, 16, 32, 64]

PACK = ["--kv-splits=runtime", "--gqa-pack=on"]
# (4, 16, 1) is fac's default decode tile for gfx906 (TargetDesc, since this
# sweep; (4, 32, 1) before); 16 x 128
# does not fit gfx906's LDS at D=128.
TILES = [(4, 32, 1), (4, 16, 1), (4, 16, 2), (4, 32, 2), (4, 64, 1),
         (4, 64, 4), (8, 16, 1), (8, 32, 1), (16, 32, 2), (16, 64, 4)]
QUICK_TILES = [(4, 32, 1), (16, 64, 4)]

COLUMNS = [
    "date", "model", "section", "kernel", "kind", "fac_options", "status",
    "block_m", "block_n", "threads", "stages", "vgprs", "sgprs",
    "vgpr_spills", "scratch_bytes", "lds_bytes", "combine_vgprs", "B", "Hq",
    "Hkv", "Lq", "Lk", "S", "split_grid", "est_us", "split_us",
    "combine_us", "kv_bytes", "kv_gbps", "pct_hbm_read", "vs_llama_cpp",
    "vs_goal", "limited_by", "limited_by_kernel", "valu_use", "lds_use",
    "hbm_use", "workgroups_per_cu", "resident_limit", "active_cus",
]


def kv_bytes(b, lk):
    return 2 * b * HKV * lk * D * 2


def tile_name(t):
    return f"m{t[0]}n{t[1]}w{t[2]}"


def tile_opts(t):
    return [f"--block-m={t[0]}", f"--block-n={t[1]}", f"--waves={t[2]}"]


class DecodeKernel(gfx906.Kernel):
    """gfx906.Kernel (compile with --report, manifest) and the combine
    kernel's manifest entry of a split-KV code object."""

    def __init__(self, variant, kind, options, what):
        super().__init__(D, False, variant, options, what)
        self.kind = kind          # packed / split / dense
        self.combine = None

    def compile(self, fac, work):
        super().compile(fac, work)
        if self.path:
            with open(self.path + ".json") as f:
                ks = json.load(f)["kernels"]
            self.combine = next((k for k in ks if k.get("role") == "combine"),
                                None)


def estimate(fa_run, k, b, lk, samples, work, splits=0):
    tag = f"{k.name}_{b}x{lk}" + (f"_s{splits}" if splits else "")
    out = os.path.join(work, tag + ".estimate.json")
    cmd = [fa_run, k.path, "--device", "gfx906-sim", "--shape",
           f"{b},{HQ},{HKV},{LQ},{lk}", "--estimate-only", "--estimate-json",
           out, "--estimate-samples", str(samples)]
    if splits:
        cmd += ["--kv-splits", str(splits)]
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    text = p.stdout + p.stderr
    if p.returncode != 0 or not os.path.exists(out):
        return None, "estimate failed: " + text.strip()[-200:], 0, \
            time.time() - t0
    with open(out) as f:
        est = json.load(f)
    m = re.search(r"kv splits (\d+)", text)
    return est, "", int(m.group(1)) if m else 0, time.time() - t0


def row_for(section, k, b, lk, est, err, s, date):
    r = {c: "" for c in COLUMNS}
    r.update(date=date, model=MODEL, section=section, kernel=k.name,
             kind=k.kind, fac_options=" ".join(k.options) or "(default)",
             B=b, Hq=HQ, Hkv=HKV, Lq=LQ, Lk=lk, kv_bytes=kv_bytes(b, lk))
    if k.error:
        r["status"] = k.error
        return r
    m, res = k.meta, k.meta.get("resources", {})
    r.update(block_m=m["block_m"], block_n=m["block_n"],
             threads=m["threads"], stages=m["stages"],
             vgprs=res.get("vgprs"), sgprs=res.get("sgprs"),
             vgpr_spills=res.get("vgpr_spills"),
             scratch_bytes=res.get("scratch_bytes"),
             lds_bytes=m["lds_bytes"],
             combine_vgprs=(k.combine or {}).get("resources", {})
             .get("vgprs", ""))
    if est is None:
        r["status"] = err
        return r
    launches = est.get("launches") or [est]
    split = launches[0]
    comb = launches[1] if len(launches) > 1 else None
    secs = est["seconds"]
    gbps = kv_bytes(b, lk) / secs / 1e9
    model = est.get("model", MODEL)
    if model != MODEL:
        r["model"] = model
    if s == 0 and m.get("kv_splits") == "runtime":
        rows = LQ * (HQ // HKV) if m.get("gqa_packed") else LQ
        s = split["grid"][0] // math.ceil(rows / m["block_m"])
    r.update(status="ok", S=s if m.get("kv_splits") == "runtime" else "",
             split_grid="x".join(str(g) for g in split.get("grid", [])),
             est_us=round(secs * 1e6, 2),
             split_us=round(split["seconds"] * 1e6, 2),
             combine_us=round(comb["seconds"] * 1e6, 2) if comb else "",
             kv_gbps=round(gbps, 1), pct_hbm_read=round(100 * gbps / HBM_READ,
                                                        1),
             vs_llama_cpp=round(gbps / LLAMA_CPP, 3),
             vs_goal=round(gbps / GOAL, 3),
             limited_by=est["limited_by"],
             limited_by_kernel=est.get("limited_by_kernel", split.get(
                 "kernel", "")),
             valu_use=round(split["valu_use"], 3),
             lds_use=round(split["lds_use"], 3),
             hbm_use=round(split["hbm_use"], 3),
             workgroups_per_cu=split.get("workgroups_per_cu", ""),
             resident_limit=split.get("resident_limit", ""),
             active_cus=split.get("active_cus", ""))
    return r


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out")
    ap.add_argument("--build", default=os.path.join(gfx906.ROOT, "build"))
    ap.add_argument("--fac")
    ap.add_argument("--fa-run")
    ap.add_argument("--work")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--samples", type=int, default=8)
    ap.add_argument("--big", action="store_true",
                    help="also B=32, Lk=32768 (alone, ~17 GB of host RAM)")
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--chart-only", action="store_true")
    a = ap.parse_args()
    fac = a.fac or os.path.join(a.build, "bin", "fac")
    fa_run = a.fa_run or os.path.join(a.build, "bin", "fa-run")
    date = datetime.date.today().isoformat()
    out = a.out or os.path.join(HERE, "results", f"{date}-gfx906-decode")
    work = a.work or os.path.join(a.build, "bench-decode-gfx906-work")
    if a.chart_only:
        with open(os.path.join(out, "decode.csv")) as f:
            rows = list(csv.DictReader(f))
        plot(rows, os.path.join(out, "chart.png"))
        return 0
    os.makedirs(out, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    with open(os.path.join(work, "attn_d128_full.mlir"), "w") as f:
        f.write(gfx906.source(D, False))
    batches = [1, 8] if a.quick else BATCHES
    lengths = [1024, 8192] if a.quick else LENGTHS
    tiles = QUICK_TILES if a.quick else TILES
    start = time.time()
    pool = concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs)

    # 1. The packed tiles and the dense baselines.
    packed = [DecodeKernel(tile_name(t), "packed", PACK + tile_opts(t),
                           f"split-KV + GQA packing, tile {t[0]}x{t[1]}, "
                           f"{t[2]} waves") for t in tiles]
    dense = [DecodeKernel("dense", "dense", [], "dense default kernel"),
             DecodeKernel("dense_m16n64", "dense",
                          ["--block-m=16", "--block-n=64"],
                          "dense kernel, 16x64 tiles")]
    list(pool.map(lambda k: k.compile(fac, work), packed + dense))
    print(f"decode gfx906: {len(packed) + len(dense)} kernels compiled in "
          f"{time.time() - start:.0f} s "
          f"({sum(1 for k in packed + dense if k.error)} failed)", flush=True)

    rows = []
    runs = {"n": 0, "s": 0.0}

    def one(job):
        section, k, b, lk, splits = job
        if k.error:
            return row_for(section, k, b, lk, None, k.error, 0, date)
        est, err, s, took = estimate(fa_run, k, b, lk, a.samples, work,
                                     splits)
        runs["n"] += 1
        runs["s"] += took
        r = row_for(section, k, b, lk, est, err, splits or s, date)
        print(f"  {section:7} {k.name:22} B={b:<3} Lk={lk:<6} "
              f"S={r['S']!s:<3} {r['kv_gbps']!s:>7} GB/s "
              f"({r['pct_hbm_read']!s:>5}% of 850) {r['limited_by']:8} "
              f"[{took:.0f} s]"
              f"{'' if r['status'] == 'ok' else '  ' + r['status']}",
              flush=True)
        return r

    def run_all(jobs):
        small = [j for j in jobs if j[2] * j[3] < BIG]
        big = [j for j in jobs if j[2] * j[3] >= BIG]
        got = list(pool.map(one, small))
        got += [one(j) for j in big]   # alone: ~17 GB of host RAM each
        return got

    # 2a. Every packed tile on the cheaper shapes.
    sweep_shapes = [(b, lk) for b in batches for lk in lengths
                    if b * lk <= SWEEP_MAX]
    rows += run_all([("tiles", k, b, lk, 0) for k in packed
                     for b, lk in sweep_shapes])
    ok = [k for k in packed if not k.error]
    if not ok:
        print("no packed kernel compiled")
        return 1
    score = {k.name: geomean([float(r["kv_gbps"]) for r in rows
                              if r["kernel"] == k.name and
                              r["status"] == "ok"]) for k in ok}
    best = max(ok, key=lambda k: score[k.name])
    t = next(t for t in tiles if tile_name(t) == best.variant)
    print(f"best tile: {best.variant} (geometric mean "
          f"{score[best.name]:.0f} GB/s on {len(sweep_shapes)} shapes)",
          flush=True)
    split_only = DecodeKernel(best.variant + "_nopack", "split",
                              ["--kv-splits=runtime"] + tile_opts(t),
                              f"split-KV only, tile {t[0]}x{t[1]}, "
                              f"{t[2]} waves")
    split_only.compile(fac, work)

    # 2b. The best tile, its split-only build and the dense baselines on
    # every shape (the best tile's sweep-shape rows are reused).
    shapes = [(b, lk) for b in batches for lk in lengths
              if a.big or b * lk < BIG]
    left_out = [(b, lk) for b in batches for lk in lengths
                if (b, lk) not in shapes]
    jobs = [("main", k, b, lk, 0) for k in [split_only] + dense
            for b, lk in shapes]
    jobs += [("main", best, b, lk, 0) for b, lk in shapes
             if (b, lk) not in sweep_shapes]
    if not a.quick:
        jobs += [("splits", best, b, lk, s) for b, lk in SPLIT_SHAPES
                 for s in SPLITS]
    rows += run_all(jobs)
    for r in rows:
        if r["section"] == "tiles" and r["kernel"] == best.name:
            rows.append(dict(r, section="main"))
    elapsed = time.time() - start
    path = os.path.join(out, "decode.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS)
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path} ({len(rows)} rows, {runs['n']} estimates in "
          f"{runs['s']:.0f} s of fa-run, {elapsed:.0f} s in all)")
    write_summary(out, rows, packed + [split_only] + dense, best, score,
                  sweep_shapes, shapes, left_out, date, elapsed, a)
    try:
        plot(rows, os.path.join(out, "chart.png"))
    except ImportError as e:
        print(f"no chart: {e} (apt-get install python3-matplotlib; run with "
              f"the python3 that has it)")
    return 0


def write_summary(out, rows, kernels, best, score, sweep_shapes, shapes,
                  left_out, date, elapsed, a):
    fmt, pct = gfx906.fmt, gfx906.pct
    commit = gfx906.git("rev-parse", "--short", "HEAD")
    dirty = [ln[3:] for ln in gfx906.git("status", "--porcelain",
                                         "--untracked-files=no").splitlines()
             if not ln[3:].startswith("bench/")]
    ok = [r for r in rows if r["status"] == "ok"]
    models = sorted({r["model"] for r in ok})
    L = ["# gfx906 (MI50) decode: simulated ESTIMATES\n"]
    L.append(f"Every time and GB/s here is an **ESTIMATE** of the MI50 timing "
             f"model `{', '.join(models) or MODEL}` "
             "(docs/mi50-timing-model.md) from fa's gfx906 simulator "
             "(`fa-run --device gfx906-sim --estimate-only "
             f"--estimate-samples {a.samples}`), not a measurement: no MI50 "
             "ran this code. A split-KV launch is two kernels (split, then "
             "combine); its time is the estimate's total of both.\n")
    L.append(f"- date: {date}; commit: {commit}" + (
        f" + uncommitted changes in {', '.join(dirty)} (fac and fa-run of "
        "the build were built from the working tree)" if dirty else ""))
    L.append(f"- machine (runs the simulator; it does not affect the "
             f"estimates): {platform.node() or 'unknown'}, "
             f"{os.cpu_count()} cores; this run took {elapsed:.0f} s with "
             f"{a.jobs} jobs")
    L.append(f"- decode: f16, D={D}, Hq={HQ}, Hkv={HKV}, Lq={LQ}, dense K/V "
             "cache; K/V GB/s = 2·B·Hkv·Lk·D·2 bytes / estimated time; "
             f"references: the MI50's HBM read rate {HBM_READ:.0f} GB/s "
             "(the model's), llama.cpp's decode kernel measured on a real "
             f"MI50 {LLAMA_CPP:.0f} GB/s, the goal {GOAL:.0f} GB/s")
    L.append("- S: the runtime's automatic split count (fa::planKvSplits, "
             "60 CUs: the S in [1, min(128, n)] of least 16·⌈W·S / (k·60)⌉ · "
             "(⌈n/S⌉ + 1) + S, W the workgroups of one split, n = "
             "⌈Lk/block_n⌉, k the kernel's workgroups_per_cu_estimate; the "
             "+ S is the combine kernel's serial walk over the splits; the "
             "smallest on a tie), as fa-run reports it, unless the row says "
             "otherwise")
    if left_out:
        L.append("- left out: " + ", ".join(f"B={b} Lk={lk}"
                                             for b, lk in left_out) +
                 " (1 GiB of K/V: fa-run fills every input on the host even "
                 "with --estimate-only, ~17 GB of RSS and 2-3 minutes per "
                 "kernel; `--big` runs it)")
    L.append("")

    main_rows = [r for r in ok if r["section"] == "main"]
    L.append(f"## ESTIMATED K/V GB/s, best tile `{best.variant}` and "
             "baselines\n")
    L.append("| kernel | shape (B, Lk) | S | est. µs (split + combine) | "
             "K/V GB/s | % of 850 | vs llama.cpp 369 | vs goal 600 | "
             "limited by | VALU / LDS / HBM (split kernel) | WG/CU "
             "(limit) |")
    L.append("|---|---|---|---|---|---|---|---|---|---|---|")
    order = {best.name: 0, best.name + "_nopack": 1, "d128_dense": 2,
             "d128_dense_m16n64": 3}
    for r in sorted(main_rows, key=lambda r: (order.get(r["kernel"], 9),
                                              int(r["B"]), int(r["Lk"]))):
        comb = f" ({fmt(r['split_us'], 1)} + {fmt(r['combine_us'], 1)})" \
            if r["combine_us"] != "" else ""
        L.append(f"| {r['kernel']} | ({r['B']}, {r['Lk']}) | {r['S']} | "
                 f"{fmt(r['est_us'], 1)}{comb} | **{fmt(r['kv_gbps'], 0)}** "
                 f"| {fmt(r['pct_hbm_read'], 0)}% | "
                 f"{fmt(r['vs_llama_cpp'])}× | {fmt(r['vs_goal'])}× | "
                 f"{r['limited_by']} ({r['limited_by_kernel']}) | "
                 f"{pct(r['valu_use'])} / {pct(r['lds_use'])} / "
                 f"{pct(r['hbm_use'])} | {r['workgroups_per_cu']} "
                 f"({r['resident_limit']}) |")
    L.append("")

    L.append("## Tiles (split-KV + GQA packing): ESTIMATED K/V GB/s on "
             "the cheaper shapes\n")
    hdr = "| tile | fac options | threads | stages | VGPRs split / combine " \
          "| scratch B | LDS B |"
    for b, lk in sweep_shapes:
        hdr += f" ({b}, {lk}) |"
    hdr += " geo. mean |"
    L.append(hdr)
    L.append("|" + "---|" * (8 + len(sweep_shapes)))
    tiles_rows = [r for r in rows if r["section"] == "tiles"]
    for k in kernels:
        if k.kind != "packed":
            continue
        if k.error:
            L.append(f"| {k.variant} | `{' '.join(k.options)}` | {k.error} |"
                     + " |" * (5 + len(sweep_shapes)))
            continue
        r0 = next(r for r in tiles_rows if r["kernel"] == k.name)
        line = (f"| {'**' + k.variant + '**' if k is best else k.variant} | "
                f"`{' '.join(k.options)}` | {r0['threads']} | {r0['stages']} "
                f"| {r0['vgprs']} / {r0['combine_vgprs']} | "
                f"{r0['scratch_bytes']} | {r0['lds_bytes']} |")
        for b, lk in sweep_shapes:
            m = [r for r in tiles_rows if r["kernel"] == k.name and
                 int(r["B"]) == b and int(r["Lk"]) == lk]
            line += (f" {fmt(m[0]['kv_gbps'], 0)} (S={m[0]['S']}, "
                     f"{m[0]['limited_by']}) |" if m and m[0]["status"] ==
                     "ok" else " failed |")
        line += f" {score.get(k.name, 0):.0f} |"
        L.append(line)
    L.append("")

    sw = [r for r in ok if r["section"] == "splits"]
    if sw:
        L.append(f"## Ablation: `{best.variant}` with fa-run --kv-splits S "
                 "(ESTIMATED K/V GB/s, limited by)\n")
        splits = sorted({int(r["S"]) for r in sw})
        L.append("| shape (B, Lk) | " + " | ".join(f"S={s}" for s in splits)
                 + " | runtime's S |")
        L.append("|---|" + "---|" * (len(splits) + 1))
        for b, lk in SPLIT_SHAPES:
            cells = []
            for s in splits:
                m = [r for r in sw if int(r["B"]) == b and
                     int(r["Lk"]) == lk and int(r["S"]) == s]
                cells.append(f"{fmt(m[0]['kv_gbps'], 0)} "
                             f"({m[0]['limited_by']})" if m else "—")
            auto = [r for r in main_rows if r["kernel"] == best.name and
                    int(r["B"]) == b and int(r["Lk"]) == lk]
            L.append(f"| ({b}, {lk}) | " + " | ".join(cells) + " | " +
                     (f"S={auto[0]['S']}: {fmt(auto[0]['kv_gbps'], 0)}"
                      if auto else "—") + " |")
        L.append("")
    fails = [r for r in rows if r["status"] != "ok"]
    if fails:
        L.append("## Rows that did not run\n")
        seen = set()
        for r in fails:
            key = (r["kernel"], r["status"])
            if key in seen:
                continue
            seen.add(key)
            L.append(f"- {r['kernel']} (`{r['fac_options']}`): {r['status']}")
        L.append("")
    L.append("![chart](chart.png)\n")
    L.append("Columns of decode.csv: " + ", ".join(COLUMNS) + ".")
    path = os.path.join(out, "summary.md")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")
    print(f"wrote {path}")


def plot(rows, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    ok = [r for r in rows if r["status"] == "ok"]
    model = next((r["model"] for r in ok), MODEL)
    main_rows = [r for r in ok if r["section"] == "main"]
    batches = sorted({int(r["B"]) for r in main_rows})
    kernels = []
    for r in main_rows:
        if r["kernel"] not in kernels:
            kernels.append(r["kernel"])
    # The packed kernel first, then split-only, then the dense baselines.
    kind = {r["kernel"]: r["kind"] for r in main_rows}
    kernels.sort(key=lambda k: ["packed", "split", "dense"].index(kind[k])
                 if kind[k] in ("packed", "split", "dense") else 3)
    tiles_rows = [r for r in ok if r["section"] == "tiles"]
    fig, axes = plt.subplots(2, max(2, len(batches)),
                             figsize=(5.2 * max(2, len(batches)), 9),
                             squeeze=False)
    cmap = plt.get_cmap("tab10")

    def refs(ax):
        ax.axhline(HBM_READ, color="k", linestyle="--",
                   label=f"HBM read {HBM_READ:.0f}")
        ax.axhline(GOAL, color="tab:green", linestyle=":",
                   label=f"goal {GOAL:.0f}")
        ax.axhline(LLAMA_CPP, color="tab:red", linestyle="-.",
                   label=f"llama.cpp, measured MI50 {LLAMA_CPP:.0f}")
    for i, b in enumerate(batches):
        ax = axes[0][i]
        for j, k in enumerate(kernels):
            pts = sorted((int(r["Lk"]), float(r["kv_gbps"]))
                         for r in main_rows
                         if r["kernel"] == k and int(r["B"]) == b)
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-",
                        color=cmap(j % 10), label=k)
        refs(ax)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("cache length Lk")
        ax.set_ylabel("ESTIMATED K/V GB/s")
        ax.set_title(f"B={b}")
        ax.set_ylim(0, HBM_READ * 1.1)
        if i == 0:
            ax.legend(fontsize=7)
    for ax in axes[0][len(batches):]:
        ax.axis("off")
    # Bottom left: the tiles on the cheaper shapes.
    ax = axes[1][0]
    shapes = []
    for r in tiles_rows:
        s = (int(r["B"]), int(r["Lk"]))
        if s not in shapes:
            shapes.append(s)
    tiles = []
    for r in tiles_rows:
        if r["kernel"] not in tiles:
            tiles.append(r["kernel"])
    width = 0.85 / max(1, len(tiles))
    tmap = plt.get_cmap("tab20")
    for j, k in enumerate(tiles):
        ys = []
        for s in shapes:
            m = [float(r["kv_gbps"]) for r in tiles_rows
                 if r["kernel"] == k and (int(r["B"]), int(r["Lk"])) == s]
            ys.append(m[0] if m else 0)
        ax.bar([x + j * width for x in range(len(shapes))], ys, width,
               color=tmap(j % 20), label=k.replace("d128_", ""))
    refs(ax)
    ax.set_xticks([x + 0.425 - width / 2 for x in range(len(shapes))])
    ax.set_xticklabels([f"B={b} Lk={lk}" for b, lk in shapes], fontsize=7)
    ax.set_ylabel("ESTIMATED K/V GB/s")
    ax.set_title("split-KV + GQA packing, tiles")
    ax.legend(fontsize=6, ncol=3)
    # Bottom right: the split-count ablation.
    ax = axes[1][1]
    sw = [r for r in ok if r["section"] == "splits"]
    if not sw:
        ax.axis("off")
    else:
        for j, s in enumerate(sorted({(int(r["B"]), int(r["Lk"]))
                                      for r in sw})):
            pts = sorted((int(r["S"]), float(r["kv_gbps"])) for r in sw
                         if (int(r["B"]), int(r["Lk"])) == s)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-",
                    color=cmap(j % 10), label=f"B={s[0]} Lk={s[1]}")
        refs(ax)
        ax.set_xscale("log", base=2)
        ax.set_xlabel("S (fa-run --kv-splits)")
        ax.set_ylabel("ESTIMATED K/V GB/s")
        ax.set_title(f"{sw[0]['kernel']} with fixed S")
        ax.set_ylim(0, HBM_READ * 1.1)
        ax.legend(fontsize=7)
    for ax in axes[1][2:]:
        ax.axis("off")
    fig.suptitle(f"fa decode on gfx906 (MI50), f16 D={D} Hq={HQ} Hkv={HKV} "
                 f"Lq=1\nSIMULATED ESTIMATES of the timing model {model}, "
                 "not measurements")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(main())
