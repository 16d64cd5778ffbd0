#!/usr/bin/env python3
"""fa against llama.cpp's FlashAttention on the MI50 timing model: ESTIMATES.

No MI50 runs here. On the same shapes, in one run, under the same timing
models: fa's default gfx906 kernels (`fa-run --device gfx906-sim
--estimate-only`) and llama.cpp's kernels compiled from a ggml or llama.cpp
checkout and launched as ggml's host code launches them
(bench/gfx906_llama.py: the tile kernel for prefill; for decode the vec or
tile kernel, whichever ggml dispatches; the combine kernel when it splits
the keys). Every figure is an ESTIMATE of the named model
(docs/gfx906-timing.md), not a measurement.

  prefill  causal (bottom-right), f16, D 64/128/256, (B, Hq, Hkv, Lq, Lk)
           in PREFILL_SHAPES: Lq = Lk = 4096 and a 512-row chunk against
           4096 keys (how llama.cpp and chunked prefill run a prompt), with
           and without GQA; fa's default kernel (`fac --target=gfx906`:
           split-KV with the dense tiles, S chosen by the runtime; at S = 1
           one launch)
  prefill-dense  the same shapes, fa's dense build (`--kv-splits=off`)
  decode   Lq = 1, D=128, GQA 32/8 and 8/8, B 1/8/32, Lk 1k-32k; fa's
           split-KV + GQA-packed decode build (`--kv-splits=runtime
           --gqa-pack=on`, the decode bench's best tile) with the runtime's
           split count

The table cell is fa's speed over llama.cpp's (llama.cpp's time / fa's).

usage: bench/gfx906_vs_llama.py --ggml CHECKOUT --build DIR [--fac FAC
       --fa-run FA_RUN] [--what prefill|prefill-dense|decode|both]
       [--models M1|M2...]
       [--samples N] [--out DIR] [--work DIR] [--quick]
writes OUT/vs_llama[_prefill|_prefill-dense|_decode].json and .md (both:
every section).
"""
import argparse
import datetime
import hashlib
import json
import os
import platform
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gfx906  # noqa: E402
import gfx906_llama as gl  # noqa: E402

# v2 and the variants its calibration does not exclude
# (docs/gfx906-timing.md, "Sensitivity"); v1 for comparison.
MODELS = ["version=2", "version=2,lds_bytes_per_cycle=64",
          "version=2,l2_bytes=0", "version=2,vmem_in_flight=32",
          "version=1"]

PREFILL_SHAPES = {
    64: [(1, 8, 8, 4096, 4096), (1, 32, 8, 4096, 4096),
         (1, 8, 8, 512, 4096), (1, 32, 8, 512, 4096)],
    128: [(1, 8, 8, 4096, 4096), (1, 32, 8, 4096, 4096),
          (1, 8, 8, 512, 4096), (1, 32, 8, 512, 4096)],
    256: [(1, 8, 8, 4096, 4096), (1, 8, 1, 4096, 4096),
          (1, 8, 8, 512, 4096), (1, 8, 1, 512, 4096)],
}
DECODE_D = 128
DECODE_HEADS = [(32, 8), (8, 8)]
DECODE_SHAPES = [(b, lk) for b in (1, 8, 32)
                 for lk in (1024, 4096, 16384, 32768)
                 if not (b == 32 and lk == 32768)]  # 17 GB of fa-run RSS
DECODE_TILE = ["--block-m=4", "--block-n=32", "--waves=1"]


def flops(b, hq, lq, lk, d, causal):
    """fa-run's count: 4*B*Hq*Lq*Lk*D, the causal part only when causal."""
    pairs = lq * lk
    if causal:
        pairs = sum(min(lk, lk - lq + i + 1) for i in range(lq))
    return 4.0 * b * hq * pairs * d


def compile_fa(fac, work, d, causal, extra, name):
    src = os.path.join(work, "attn_d%d_%s.mlir" %
                       (d, "causal" if causal else "full"))
    with open(src, "w") as f:
        f.write(gfx906.source(d, causal))
    out = os.path.join(work, name + ".hsaco")
    if not os.path.exists(out):
        p = subprocess.run([fac, src, "--target=gfx906", "-o", out] + extra,
                           capture_output=True, text=True)
        if p.returncode:
            return None, (p.stdout + p.stderr).strip()[-300:]
    return out, None


def build_stamp(paths):
    """A digest of the files fa's kernels and estimates come from (fac,
    fa-run, the build's shared libraries): the folder of WORK that caches
    them, so that a rebuilt compiler or timing model is never served an
    earlier build's kernels or estimates."""
    h = hashlib.sha256()
    for path in paths:
        h.update(os.path.basename(path).encode())
        with open(path, "rb") as f:
            for chunk in iter(lambda: f.read(1 << 20), b""):
                h.update(chunk)
    return h.hexdigest()[:12]


def fa_libraries(binaries):
    """The libfa* shared libraries the binaries load (their RUNPATH may
    name another build's lib/ than --build's)."""
    libs = set()
    for exe in binaries:
        p = subprocess.run(["ldd", exe], capture_output=True, text=True)
        for line in p.stdout.splitlines():
            parts = line.split("=>")
            if len(parts) == 2 and parts[0].strip().startswith("libfa"):
                path = parts[1].split("(")[0].strip()
                if os.path.exists(path):
                    libs.add(os.path.realpath(path))
    return sorted(libs)


def fa_estimate(fa_run, hsaco, shape, model, samples, work, tag):
    b, hq, hkv, lq, lk = shape
    out = os.path.join(work, "%s_%s_%s_s%d.json" % (
        tag, "x".join(map(str, shape)), model.replace("=", "-")
        .replace(",", "_"), samples))
    if not os.path.exists(out):
        cmd = [fa_run, hsaco, "--device", "gfx906-sim", "--shape",
               "%d,%d,%d,%d,%d" % shape, "--estimate-only",
               "--estimate-json", out, "--estimate-samples", str(samples),
               "--estimate-param", model]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode or not os.path.exists(out):
            return None, (p.stdout + p.stderr).strip()[-300:]
    with open(out) as f:
        return json.load(f), None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ggml", required=True)
    ap.add_argument("--build", default=os.path.join(gfx906.ROOT, "build"))
    ap.add_argument("--fac")
    ap.add_argument("--fa-run")
    ap.add_argument("--clang", help="the compiler of llama.cpp's kernels "
                    "(default clang 22; the committed tables: clang-19, "
                    "the LLVM of ROCm 6.4)")
    ap.add_argument("--what", default="both",
                    choices=["both", "prefill", "prefill-dense", "decode"],
                    help="both: every section")
    ap.add_argument("--models", default="|".join(MODELS))
    # Sampled grid columns per launch: causal prefill needs more (its
    # workgroups' work differs by row block and, split, by split) than
    # decode, whose workgroups do the same work.
    ap.add_argument("--samples", type=int,
                    help="default: 16 for prefill, 4 for decode")
    ap.add_argument("--out")
    ap.add_argument("--work")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    fac = a.fac or os.path.join(a.build, "bin", "fac")
    fa_run = a.fa_run or os.path.join(a.build, "bin", "fa-run")
    models = a.models.split("|")
    out = a.out or os.path.join(gfx906.ROOT, "bench", "results",
                                datetime.date.today().isoformat() +
                                "-gfx906-vs-llama")
    work = a.work or os.path.join(a.build, "bench-gfx906-vs-llama-work")
    os.makedirs(out, exist_ok=True)
    os.makedirs(work, exist_ok=True)
    llama_clang = a.clang or gl.gc.LLVM + "/clang"
    # llama.cpp's code objects, per compiler.
    llama = gl.GgmlFa(a.ggml, os.path.join(work, "ggml"), a.build,
                      llama_clang)
    # fa's kernels and estimates, cached per build of fac, fa-run and the
    # runtime (llama.cpp's kernels are recompiled when their sources change
    # and re-estimated every run).
    fa_work = os.path.join(work, "fa-" + build_stamp(
        [fac, fa_run] + fa_libraries([fac, fa_run])))
    os.makedirs(fa_work, exist_ok=True)
    rows = []
    t_start = time.time()

    def add(section, shape, d, causal, fa_kernel, fa_hsaco, fa_err):
        b, hq, hkv, lq, lk = shape
        t0 = time.time()
        samples = a.samples or (4 if section == "decode" else 16)
        lres, about = llama.estimate(d, b, hq, hkv, lq, lk, causal, models,
                                     samples)
        for m, model in enumerate(models):
            fa_est, err = (None, fa_err) if fa_err else fa_estimate(
                fa_run, fa_hsaco, shape, model, samples, fa_work, fa_kernel)
            l_s, l_ests = lres[m]
            row = dict(section=section, d=d, causal=causal,
                       shape=list(shape), model=model,
                       flops=flops(b, hq, lq, lk, d, causal),
                       kv_bytes=2.0 * b * hkv * lk * d * 2,
                       llama_s=l_s, llama=about,
                       llama_limited_by=[e["limited_by"] for e in l_ests],
                       llama_use=[[e["valu_use"], e["lds_use"],
                                   e["hbm_use"]] for e in l_ests],
                       llama_model=l_ests[0]["model"],
                       fa_kernel=fa_kernel, fa_error=err)
            if fa_est:
                row.update(fa_s=fa_est["seconds"],
                           fa_limited_by=fa_est["limited_by"],
                           fa_use=[fa_est["valu_use"], fa_est["lds_use"],
                                   fa_est["hbm_use"]],
                           fa_model=fa_est["model"],
                           fa_launches=len(fa_est.get("launches", [0])),
                           ratio=l_s / fa_est["seconds"])
            rows.append(row)
        print("%s D=%d %s: llama %s; fa %s (%.0f s)" % (
            section, d, shape, " ".join("%.3g" % (s * 1e3) for s, _ in lres),
            " ".join("%.3g" % (r.get("fa_s", float("nan")) * 1e3)
                     for r in rows[-len(models):]), time.time() - t0),
            flush=True)

    if a.what in ("prefill", "both"):
        for d, shapes in PREFILL_SHAPES.items():
            name = "d%d_causal_default" % d
            h, err = compile_fa(fac, fa_work, d, True, [], name)
            for shape in (shapes[:2] if a.quick else shapes):
                add("prefill", shape, d, True, name, h, err)
    if a.what in ("prefill-dense", "both"):
        # The dense build of the same tiles (`--kv-splits=off`, ABI version
        # 1; fac's gfx906 default before 2026-12-03): what the default
        # split-KV build gains where the grid is small.
        for d, shapes in PREFILL_SHAPES.items():
            name = "d%d_causal_dense" % d
            h, err = compile_fa(fac, fa_work, d, True, ["--kv-splits=off"], name)
            for shape in (shapes[:2] if a.quick else shapes):
                add("prefill-dense", shape, d, True, name, h, err)
    if a.what in ("decode", "both"):
        name = "decode_d%d_m4n32w1" % DECODE_D
        h, err = compile_fa(fac, fa_work, DECODE_D, False,
                            ["--kv-splits=runtime", "--gqa-pack=on"] +
                            DECODE_TILE, name)
        for hq, hkv in DECODE_HEADS:
            for b, lk in (DECODE_SHAPES[:2] if a.quick else DECODE_SHAPES):
                add("decode", (b, hq, hkv, 1, lk), DECODE_D, True, name, h,
                    err)
    meta = dict(date=datetime.date.today().isoformat(),
                machine=platform.platform(), processor=platform.processor(),
                fa_commit=gfx906.git("rev-parse", "--short", "HEAD"),
                ggml=os.path.abspath(a.ggml), models=models,
                llama_compiler=gl.gc.compiler_version(llama_clang),
                samples=a.samples or "16 prefill, 4 decode",
                seconds=time.time() - t_start)
    stem = "vs_llama" + ("" if a.what == "both" else "_" + a.what)
    with open(os.path.join(out, stem + ".json"), "w") as f:
        json.dump(dict(meta=meta, rows=rows), f, indent=1)
    write_tables(rows, models, os.path.join(out, stem + ".md"))
    print("wrote", out)


def write_tables(rows, models, path):
    L = ["# fa / llama.cpp on the MI50 timing model (ESTIMATES)", "",
         "Each cell: fa's speed over llama.cpp's on the shape (llama.cpp's "
         "estimated time / fa's), both timed by the same model from the "
         "instruction streams the gfx906 simulator executed. Not "
         "measurements.", ""]
    titles = {"prefill": "prefill (fa's default build: split-KV with the "
              "dense tiles, the runtime's split count)",
              "prefill-dense": "prefill (fa's dense build: fac "
              "--kv-splits=off)",
              "decode": "decode"}
    for section in ("prefill", "prefill-dense", "decode"):
        sec = [r for r in rows if r["section"] == section]
        if not sec:
            continue
        L.append("## %s" % titles[section])
        L.append("")
        keys = []
        for r in sec:
            k = (r["d"], tuple(r["shape"]))
            if k not in keys:
                keys.append(k)
        L.append("| D | B,Hq,Hkv,Lq,Lk | llama.cpp kernel | " + " | ".join(
            "`%s`" % m for m in models) + " | fa ms (v2) | llama.cpp ms "
            "(v2) | fa limited by (v2) | llama.cpp limited by (v2) |")
        L.append("|" + "---|" * (7 + len(models)))
        for d, shape in keys:
            rs = {r["model"]: r for r in sec
                  if r["d"] == d and tuple(r["shape"]) == shape}
            first = rs[models[0]]
            ab = first["llama"]
            kern = "%s %dx%d pb=%d%s" % (
                ab["kind"], ab["ncols1"], ab["ncols2"],
                ab["parallel_blocks"], " KV_max" if ab["kv_max"] else "")
            cells = []
            for m in models:
                r = rs.get(m)
                cells.append("%.2f" % r["ratio"] if r and "ratio" in r
                             else "—")
            L.append("| %d | %s | %s | %s | %s | %.3f | %s | %s |" % (
                d, ",".join(map(str, shape)), kern, " | ".join(cells),
                "%.3f" % (first["fa_s"] * 1e3) if "fa_s" in first else "—",
                first["llama_s"] * 1e3,
                "%s (VALU %.0f%%, LDS %.0f%%, HBM %.0f%%)" % (
                    first["fa_limited_by"], *[100 * x for x in
                                              first["fa_use"]])
                if "fa_s" in first else first.get("fa_error", ""),
                "; ".join("%s (VALU %.0f%%, LDS %.0f%%, HBM %.0f%%)" % (
                    lb, *[100 * x for x in u]) for lb, u in
                    zip(first["llama_limited_by"], first["llama_use"]))))
        L.append("")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


if __name__ == "__main__":
    main()
