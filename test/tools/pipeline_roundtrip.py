#!/usr/bin/env python3
"""Property test: fac on fa-opt's gpu-level output gives the code object of
fac on the source (the README: `fa-opt --fa-pipeline=target=<t>` runs
exactly what fac runs before the target backend).

For a seeded spread of configurations (dtype, D from 1 to 256, causal,
GQA, the LSE, split-KV, GQA packing, paged and varlen layouts, explicit
tiles and the options fac and fa-opt share) and every target (host,
gfx906, sm_90), compiles the fa.attention source with fac, and the same
source with `fa-opt --fa-pipeline` and then fac; the code objects must be
byte-identical and the manifests equal but for the source hash and
the file name. Where
fac's gfx906 search changed the kernel after a spill (its remark says
"trying"), the gpu-level input cannot be searched (its tiles are fixed):
then fac must say so, and finish (each fac has a time limit).

usage: pipeline_roundtrip.py FAC FA_OPT WORK_DIR [--seed S] [--count N]
                             [--jobs J]
Exit 0 when every configuration round-trips, 1 otherwise.
"""
import argparse
import concurrent.futures
import json
import os
import random
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "e2e"))
from e2e_matrix import kernel_source  # noqa: E402

TARGETS = ["host", "gfx906", "sm_90"]
EXT = {"host": ".so", "gfx906": ".hsaco", "sm_90": ".cubin"}
TIMEOUT = 300  # seconds per fac or fa-opt run: a loop is a failure


def draw(rng, n):
    """n configurations; the first ones are fixed (the defaults the README
    shows and a gfx906 build that spills and is searched)."""
    fixed = [
        dict(dtype="f16", d=64, causal=True, layout="dense", lse=False,
             options={}),
        dict(dtype="f16", d=128, causal=False, layout="dense", lse=True,
             options={}),
        dict(dtype="f16", d=128, causal=True, layout="paged", lse=True,
             options={"kv-splits": "runtime", "gqa-pack": "on"}),
        dict(dtype="f32", d=40, causal=False, layout="varlen", lse=True,
             options={"kv-splits": "runtime", "gqa-pack": "on"}),
    ]
    configs = fixed[:n]
    while len(configs) < n:
        layout = rng.choice(["dense", "dense", "paged", "varlen"])
        options = {}
        if rng.random() < 0.4:
            options["kv-splits"] = "runtime"
            if rng.random() < 0.6:
                options["gqa-pack"] = "on"
        if rng.random() < 0.3 and "kv-splits" not in options:
            bm, bn, waves = rng.choice([(32, 32, 2), (64, 32, 4),
                                        (16, 64, 2), (64, 64, 4)])
            options.update({"block-m": bm, "block-n": bn, "waves": waves})
        for name, values in (("stages", [1, 2]), ("pad-lds", ["false"]),
                             ("share-rows", ["off", "on"]),
                             ("kv-shared", ["off", "on"]),
                             ("fetch-ahead", ["in-block"])):
            if rng.random() < 0.15:
                options[name] = rng.choice(values)
        configs.append(dict(
            dtype=rng.choice(["f16", "f32"]), d=rng.randint(1, 256),
            causal=rng.random() < 0.5, layout=layout,
            lse=layout != "dense" or rng.random() < 0.5, options=options))
    return configs


def source_of(c):
    return kernel_source(c["dtype"], c["d"], c["causal"], lse=c["lse"],
                         paged=c["layout"] == "paged",
                         varlen=c["layout"] == "varlen")


def run(cmd):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        return None, f"timed out after {TIMEOUT} s: {' '.join(cmd)}"
    return p, "" if p.returncode == 0 else \
        f"exit {p.returncode}: {' '.join(cmd)}\n{p.stderr.strip()}"


def manifest_of(path):
    with open(path + ".json") as f:
        m = json.load(f)
    m.pop("source_hash", None)
    m["code_object"].pop("file", None)  # direct.<ext> and from-gpu.<ext>
    return m


def check(fac, fa_opt, work, index, c, target):
    """(status, detail): status is 'same', 'searched', 'refused' or
    'FAIL'."""
    name = f"c{index:02d}-{target}"
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    src = os.path.join(d, "source.mlir")
    with open(src, "w") as f:
        f.write(source_of(c))
    fac_opts = [f"--{k}={v}" for k, v in c["options"].items()]
    # fa-opt's pipeline spells fac's options the same way (fetch-ahead:
    # fac's auto is the pipeline's next-block).
    pipe_opts = [f"target={target}"] + \
        [f"{k}={v}" for k, v in c["options"].items()]
    direct = os.path.join(d, "direct" + EXT[target])
    p, err = run([fac, src, f"--target={target}", "-o", direct] + fac_opts)
    if p is None:
        return "FAIL", err
    if p.returncode != 0:
        # A configuration fac refuses (explicit tiles that do not fit):
        # fa-opt must refuse it too, with an error, not a crash.
        q, qerr = run([fa_opt, src, "--fa-pipeline=" + " ".join(pipe_opts),
                       "-o", os.path.join(d, "gpu.mlir")])
        if q is None or q.returncode not in (1,):
            return "FAIL", f"fac refused ({err.splitlines()[-1]}) but " \
                f"fa-opt: {qerr or 'succeeded'}"
        return "refused", err.splitlines()[-1]
    searched = "trying" in p.stderr
    gpu = os.path.join(d, "gpu.mlir")
    q, qerr = run([fa_opt, src, "--fa-pipeline=" + " ".join(pipe_opts),
                   "-o", gpu])
    if q is None or q.returncode != 0:
        return "FAIL", "fa-opt: " + qerr
    # Options fa-tile and the pipeline consumed are gone from the gpu-level
    # input; what remains for fac is the target backend's.
    back = os.path.join(d, "from-gpu" + EXT[target])
    backend_opts = [o for o in fac_opts if o.startswith("--dot2")]
    r, rerr = run([fac, gpu, f"--target={target}", "-o", back] +
                  backend_opts)
    if r is None or r.returncode != 0:
        return "FAIL", "fac on fa-opt's output: " + rerr
    if searched:
        if "trying" in r.stderr:
            return "FAIL", "fac searched on gpu-level input:\n" + r.stderr
        if "the input is past fa-tile" not in r.stderr:
            return "FAIL", ("fac's search changed the source's kernel, but "
                            "fac on gpu-level input did not say it cannot "
                            "search:\n" + r.stderr)
        return "searched", next(line for line in p.stderr.splitlines()
                                if "trying" in line)
    with open(direct, "rb") as f1, open(back, "rb") as f2:
        if f1.read() != f2.read():
            return "FAIL", f"code objects differ: {direct} {back}"
    if manifest_of(direct) != manifest_of(back):
        return "FAIL", f"manifests differ: {direct}.json {back}.json"
    return "same", ""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("fac")
    ap.add_argument("fa_opt")
    ap.add_argument("work")
    ap.add_argument("--seed", type=int, default=28)
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--jobs", type=int, default=2)
    args = ap.parse_args()
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    configs = draw(random.Random(args.seed), args.count)
    jobs = [(i, c, t) for i, c in enumerate(configs) for t in TARGETS]
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = list(pool.map(
            lambda j: check(args.fac, args.fa_opt, args.work, *j), jobs))
    failures = 0
    for (i, c, t), (status, detail) in zip(jobs, results):
        what = (f"c{i:02d} {t}: {c['dtype']} D={c['d']} "
                f"causal={int(c['causal'])} {c['layout']} "
                f"lse={int(c['lse'])} " +
                " ".join(f"{k}={v}" for k, v in c["options"].items()))
        print(f"{status:8s} {what}" + (f"\n         {detail}" if detail
                                       else ""))
        failures += status == "FAIL"
    counts = {s: sum(r[0] == s for r in results)
              for s in ("same", "searched", "refused", "FAIL")}
    print(f"pipeline round trip: {len(jobs)} builds: " +
          ", ".join(f"{v} {k}" for k, v in counts.items()))
    return 1 if failures or counts["same"] == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
