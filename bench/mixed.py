#!/usr/bin/env python3
"""A vLLM-like mixed prefill/decode batch on one GPU: one mixed launch
(fa.attention paged + varlen: packed queries over a paged cache) against
the separate prefill and decode launches an engine needs without it, in
one run (a benchmark, never a timed test).

The batch (issue 32's): 4 prompt chunks of 512 query rows, the last 512
rows of histories of 4k, 8k, 16k and 32k keys, and 60 decode rows over
histories drawn from [4k, 32k] (a fixed seed); f16, D = 128, Hq = 32,
Hkv = 8, causal (bottom-right: a sequence's queries are its last rows),
pages of 16 rows, shuffled. Rows:

  mixed/<build>     the whole batch, one launch of a mixed kernel
                    (paged + varlen(cu_seqlens_q)); builds: `prefill` (the
                    target's default tiles), `split-pack` (split-KV + GQA
                    packing, the target's decode tiles), `pack16` (split-KV
                    + GQA packing, 16 x 64 tiles: 4 positions of 4 heads)
  separate          a paged prefill launch (B = 4, Lq = 512, default
                    tiles) then a paged decode launch (B = 60, Lq = 1,
                    split-KV + GQA packing): what an engine launches
                    without mixed batches; its time is the sum
  <build> on prefill / decode only: the same kernels on each half, to
                    show where the mixed launch's time goes

Each row is `fa-run --device cuda --bench N --json` (launch + synchronize
per repetition, wall clock, so the host's ~10-20 us per call is in it, the
same way for every row), after fa-run has checked the outputs against the
fp64 reference on the device. Metrics: milliseconds per batch, and the
K/V bytes the batch must read (every sequence's keys once: sum Lk x Hkv x
D x 2 bytes x K and V) per second.

usage: mixed.py --compile FAC KERNEL_DIR     (where LLVM is: sm_90 kernels)
       mixed.py FA_RUN KERNEL_DIR OUT_DIR [--reps N] [--budget SECONDS]
                                             (on the GPU; no new row
                                              after SECONDS)
       mixed.py --self-test                  (no GPU: lengths, bytes, the
                                              command lines)
Writes OUT_DIR/mixed.md and OUT_DIR/mixed.json; exit status 1 if a case
fails its check.
"""
import json
import os
import random
import subprocess
import sys
import time

HQ, HKV, D, PAGE = 32, 8, 128, 16
PREFILL_KEYS = [4096, 8192, 16384, 32768]
CHUNK = 512
DECODE_ROWS = 60
DECODE_RANGE = (4096, 32768)

SOURCES = {
    "mixed": (
        "func.func @attention(%q: tensor<?x?x128xf16>, "
        "%k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>, "
        "%table: tensor<?x?xi32>, %lens: tensor<?xi32>, "
        "%cu_q: tensor<?xi32>) -> tensor<?x?x128xf16> {\n"
        "  %o = fa.attention %q, %k, %v paged(%table, %lens) "
        "varlen(%cu_q : tensor<?xi32>) causal : tensor<?x?x128xf16>, "
        "tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, tensor<?x?xi32>, "
        "tensor<?xi32> -> tensor<?x?x128xf16>\n"
        "  return %o : tensor<?x?x128xf16>\n}\n"),
    "paged": (
        "func.func @attention(%q: tensor<?x?x?x128xf16>, "
        "%k: tensor<?x?x?x128xf16>, %v: tensor<?x?x?x128xf16>, "
        "%table: tensor<?x?xi32>, %lens: tensor<?xi32>) -> "
        "tensor<?x?x?x128xf16> {\n"
        "  %o = fa.attention %q, %k, %v paged(%table, %lens) causal : "
        "tensor<?x?x?x128xf16>, tensor<?x?x?x128xf16>, "
        "tensor<?x?x?x128xf16>, tensor<?x?xi32>, tensor<?xi32> -> "
        "tensor<?x?x?x128xf16>\n"
        "  return %o : tensor<?x?x?x128xf16>\n}\n"),
}
SPLIT_PACK = ["--kv-splits=runtime", "--gqa-pack=on"]
# name -> (source, fac options)
BUILDS = {
    "mixed_prefill": ("mixed", []),
    "mixed_split-pack": ("mixed", SPLIT_PACK),
    "mixed_pack16": ("mixed", SPLIT_PACK + ["--block-m=16", "--block-n=64",
                                            "--waves=4"]),
    "paged_prefill": ("paged", []),
    "paged_decode": ("paged", SPLIT_PACK),
}


def decode_keys():
    rng = random.Random(32)
    return [rng.randint(*DECODE_RANGE) for _ in range(DECODE_ROWS)]


def kv_bytes(keys):
    return sum(keys) * HKV * D * 2 * 2


def csv(values):
    return ",".join(str(v) for v in values)


def batches():
    """(name, fa-run arguments after the kernel, K/V bytes) of the three
    batches: the whole mixed one, its prefill half, its decode half."""
    dk = decode_keys()
    mixed_q = [CHUNK] * len(PREFILL_KEYS) + [1] * DECODE_ROWS
    mixed_k = PREFILL_KEYS + dk
    def mixed(q, k):
        return ["--shape", f"{len(q)},{HQ},{HKV},{max(q)},{max(k)}",
                "--paged", str(PAGE), "--varlen", "--seqlens-q", csv(q),
                "--cache-seqlens", csv(k)]
    def paged(lq, k):
        return ["--shape", f"{len(k)},{HQ},{HKV},{lq},{max(k)}",
                "--paged", str(PAGE), "--cache-seqlens", csv(k)]
    return {
        "all": (mixed(mixed_q, mixed_k), kv_bytes(mixed_k)),
        "prefill": (mixed([CHUNK] * len(PREFILL_KEYS), PREFILL_KEYS),
                    kv_bytes(PREFILL_KEYS)),
        "decode": (mixed([1] * DECODE_ROWS, dk), kv_bytes(dk)),
        "paged-prefill": (paged(CHUNK, PREFILL_KEYS), kv_bytes(PREFILL_KEYS)),
        "paged-decode": (paged(1, dk), kv_bytes(dk)),
    }


def compile_kernels(fac, out):
    os.makedirs(out, exist_ok=True)
    for name, (src, options) in BUILDS.items():
        path = os.path.join(out, src + ".mlir")
        with open(path, "w") as f:
            f.write(SOURCES[src])
        cmd = [fac, path, "--target=sm_90", "-o",
               os.path.join(out, name + ".cubin")] + options
        print(" ".join(cmd))
        subprocess.run(cmd, check=True)


def fa_run(farun, kernel, args, reps):
    cmd = [farun, kernel, "--device", "cuda", "--reference", "device",
           "--seed", "1", "--bench", str(reps), "--json"] + args
    t0 = time.time()
    p = subprocess.run(cmd, capture_output=True, text=True)
    try:
        out = json.loads(p.stdout)
    except ValueError:
        out = {}
    ok = p.returncode == 0 and out.get("result") == "PASS"
    bench = out.get("bench", {})
    return dict(ok=ok, seconds=bench.get("seconds_per_launch"),
                min_seconds=bench.get("min_seconds"),
                wall=round(time.time() - t0, 1),
                error="" if ok else (p.stderr.strip() or p.stdout.strip())
                [-600:])


def run(farun, kdir, out, reps, budget):
    os.makedirs(out, exist_ok=True)
    b = batches()
    rows = []
    start = time.time()
    def add(label, build, batch):
        args, nbytes = b[batch]
        if time.time() - start > budget:
            r = dict(ok=True, seconds=None, min_seconds=None, wall=0,
                     error="not run (--budget)", label=label, build=build,
                     batch=batch, kv_bytes=nbytes)
            rows.append(r)
            return r
        r = fa_run(farun, os.path.join(kdir, build + ".cubin"), args, reps)
        r.update(label=label, build=build, batch=batch, kv_bytes=nbytes)
        rows.append(r)
        print(f"{label:32s} {build:18s} "
              + (f"{r['seconds'] * 1e3:8.3f} ms" if r["seconds"] else
                 "   n/a") + ("" if r["ok"] else "  FAIL " + r["error"]),
              flush=True)
        return r
    for build in ("mixed_prefill", "mixed_split-pack", "mixed_pack16"):
        add("mixed batch, one launch", build, "all")
    pre = add("separate: prefill launch", "paged_prefill", "paged-prefill")
    dec = add("separate: decode launch", "paged_decode", "paged-decode")
    for build in ("mixed_prefill", "mixed_split-pack", "mixed_pack16"):
        add("prefill half only", build, "prefill")
        add("decode half only", build, "decode")
    sep = None
    if pre["seconds"] and dec["seconds"]:
        sep = pre["seconds"] + dec["seconds"]
    gpu = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version",
                          "--format=csv,noheader"], capture_output=True,
                         text=True).stdout.strip()
    with open(os.path.join(out, "mixed.json"), "w") as f:
        json.dump(dict(gpu=gpu, reps=reps, rows=rows, separate_seconds=sep),
                  f, indent=1)
    total = b["all"][1]
    with open(os.path.join(out, "mixed.md"), "w") as f:
        f.write(f"# A vLLM-like mixed batch on {gpu}\n\n"
                f"4 prompt chunks of {CHUNK} rows over {PREFILL_KEYS} keys "
                f"+ {DECODE_ROWS} decode rows over keys drawn from "
                f"{list(DECODE_RANGE)} (seed 32); f16, D={D}, Hq={HQ}, "
                f"Hkv={HKV}, causal, pages of {PAGE}; {reps} timed launches "
                "each (launch + synchronize, wall clock), outputs checked "
                "against the fp64 device reference first. K/V bytes: each "
                f"sequence's keys once ({total / 1e9:.2f} GB for the "
                "batch).\n\n"
                "| row | build | batch | ms | K/V GB/s | check |\n"
                "|---|---|---|---|---|---|\n")
        for r in rows:
            s = r["seconds"]
            check = ("not run" if r["error"].startswith("not run") else
                     "PASS" if r["ok"] else "FAIL")
            f.write(f"| {r['label']} | {r['build']} | {r['batch']} | "
                    + (f"{s * 1e3:.3f} | {r['kv_bytes'] / s / 1e9:.0f}"
                       if s else "n/a | n/a") + f" | {check} |\n")
        if sep:
            f.write(f"| separate, prefill + decode | paged_prefill + "
                    f"paged_decode | all | {sep * 1e3:.3f} | "
                    f"{total / sep / 1e9:.0f} | |\n")
    return 0 if all(r["ok"] for r in rows) else 1


def self_test():
    b = batches()
    args, nbytes = b["all"]
    q = [int(x) for x in args[args.index("--seqlens-q") + 1].split(",")]
    k = [int(x) for x in args[args.index("--cache-seqlens") + 1].split(",")]
    assert len(q) == len(k) == 64 and q.count(CHUNK) == 4 and q.count(1) == 60
    assert all(kk >= qq for qq, kk in zip(q, k))
    assert all(DECODE_RANGE[0] <= x <= DECODE_RANGE[1] for x in k[4:])
    assert nbytes == b["prefill"][1] + b["decode"][1] \
        == b["paged-prefill"][1] + b["paged-decode"][1]
    assert nbytes == sum(k) * HKV * D * 4
    assert args[1] == f"64,{HQ},{HKV},{CHUNK},{max(k)}"
    print(f"self-test: ok ({nbytes / 1e9:.2f} GB of K/V in the batch)")
    return 0


def main():
    a = sys.argv[1:]
    if a[:1] == ["--self-test"]:
        return self_test()
    if a[:1] == ["--compile"] and len(a) == 3:
        compile_kernels(a[1], a[2])
        return 0
    if len(a) >= 3 and not a[0].startswith("-"):
        reps = int(a[a.index("--reps") + 1]) if "--reps" in a else 20
        budget = float(a[a.index("--budget") + 1]) if "--budget" in a \
            else 1e9
        return run(a[0], a[1], a[2], reps, budget)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
