#!/usr/bin/env python3
"""llama.cpp's FlashAttention kernels on fa's MI50 timing model (issue 33).

ESTIMATES: nothing here runs on an MI50. ggml-cuda's FlashAttention kernels
of a ggml or llama.cpp checkout (the user's; nothing of it is kept in this
repository) are compiled for gfx906 by bench/gfx906_corpus.py's recipe,
launched as ggml's host code would launch them at a given shape (kernel
choice, ncols1/ncols2, parallel_blocks, KV_max, the combine kernel), run on
fa's gfx906 simulator (only the sampled workgroups) and timed by one or
more timing models from the same instruction streams
(bench/gfx906_corpus_run.cpp's `timing` command).

Two uses:
  - a library for bench/gfx906_vs_llama.py (`GgmlFa.estimate`): llama.cpp
    beside fa on the same shapes;
  - `calibrate`: the real-MI50 targets of timing model v2. llama-bench on an
    MI50/MI60 (gemma 2B Q4_0: D=256, 8 query heads, 1 KV head, 18 layers;
    pp16384, ubatch 512 and others, FlashAttention on) was published at
    consecutive llama.cpp FA-kernel PRs (the PR pages, see PR_PAIRS). Only
    the FA kernels changed within a pair, so the change in whole-model time
    is the change in FA time. For each version the script estimates every
    FA launch pp16384 makes (per layer, ubatch i of n: Q rows = ubatch,
    keys = ubatch * (i + 1) in a KV view padded to 256, the causal mask of
    the ubatch's rows; the tile kernel, plus the combine kernel when the
    keys are split) and compares the model's difference with the measured
    one, for every microbatch size of PR_PAIRS.

usage:
  gfx906_llama.py calibrate --versions NAME=DIR ... --build DIR --out DIR
                  [--models M1|M2...] [--samples N] [--points N]
                  [--ubatches LIST]
      NAME is a version's key in VERSIONS (the ggml commit), DIR its
      checkout; --models the timing model lists (gfx906_corpus_run's
      `timing`, default CALIBRATION_MODELS); --points how many ubatches of
      each pp16384 run are estimated (the others interpolated);
      --ubatches 16,512 only those microbatch sizes.
  gfx906_llama.py report DIR
      re-derive DIR/calibration.json's measurement noise from the published
      t/s and rewrite DIR/calibration.md (no kernel is run).
"""
import argparse
import datetime
import json
import math
import os
import re
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gfx906_corpus as gc  # noqa: E402

FATTN_KQ_STRIDE = 256
KV_PAD = 256

# ggml-org/ggml commits carrying llama.cpp's FA-kernel PRs ("(llama/N)" in
# the subject), and the parents that are each PR's "before".
VERSIONS = {
    "2fe19a69": "before llama/15884 (ggml 2fe19a69, parent of f6ffbc04)",
    "f6ffbc04": "llama/15884 v_dot2_f32_f16 for FA (= FA of 9902604d, "
                "15927's parent)",
    "b6b3db51": "llama/15927 larger SRAM reads (= FA of c3d23819, "
                "15982's parent)",
    "5437f5bc": "llama/15982 FA occupancy, tile kernel",
    "fcc2a5c0": "before llama/16492 (ggml fcc2a5c0, parent of 0b56d427)",
    "0b56d427": "llama/16492 faster tile FA",
}

# The models of the PR pages' llama-bench runs (pp16384): gemma 2B (D=256,
# GQA 8:1) and llama 1B (Llama 3.2 1B: D=64, 32 query heads, 8 KV heads).
NETS = {
    "gemma 2B": dict(Hq=8, Hkv=1, D=256, layers=18, tokens=16384),
    "llama 1B": dict(Hq=32, Hkv=8, D=64, layers=16, tokens=16384),
}
GEMMA_2B = NETS["gemma 2B"]

# (model, before, after, ubatch, t/s before, t/s after, source).
# llama-bench, Q4_0, pp16384, FlashAttention on, MI60 / MI50: every
# microbatch size of the PR pages' tables that the tile kernel runs on
# both sides (16492's sizes below 16 switch between the vec and tile
# kernels; its 1024 and up, and 15927's llama 1B at 512, are not in the
# pages as stored).
PR_15884 = "github.com/ggml-org/llama.cpp/pull/15884 (MI60 / MI50)"
PR_15927 = "github.com/ggml-org/llama.cpp/pull/15927 (MI50)"
PR_15982 = "github.com/ggml-org/llama.cpp/pull/15982 (MI60 / MI50)"
PR_16492 = "github.com/ggml-org/llama.cpp/pull/16492 (MI50)"
G, L = "gemma 2B", "llama 1B"
PR_PAIRS = [
    (G, "2fe19a69", "f6ffbc04", 16, 329.07, 629.31, PR_15884),
    (G, "2fe19a69", "f6ffbc04", 32, 309.59, 728.92, PR_15884),
    (G, "2fe19a69", "f6ffbc04", 512, 397.50, 1412.22, PR_15884),
    (L, "2fe19a69", "f6ffbc04", 16, 682.84, 922.76, PR_15884),
    (L, "2fe19a69", "f6ffbc04", 32, 953.88, 1187.68, PR_15884),
    (L, "2fe19a69", "f6ffbc04", 512, 1510.71, 2278.62, PR_15884),
    (G, "f6ffbc04", "b6b3db51", 16, 629.54, 716.54, PR_15927),
    (G, "f6ffbc04", "b6b3db51", 32, 728.28, 911.94, PR_15927),
    (G, "f6ffbc04", "b6b3db51", 512, 1412.40, 2141.40, PR_15927),
    (L, "f6ffbc04", "b6b3db51", 16, 927.48, 998.83, PR_15927),
    (L, "f6ffbc04", "b6b3db51", 32, 1189.48, 1338.73, PR_15927),
    (G, "b6b3db51", "5437f5bc", 16, 715.37, 723.22, PR_15982),
    (G, "b6b3db51", "5437f5bc", 32, 911.50, 922.04, PR_15982),
    (G, "b6b3db51", "5437f5bc", 64, 1002.59, 1037.99, PR_15982),
    (G, "b6b3db51", "5437f5bc", 128, 1571.26, 1632.54, PR_15982),
    (G, "b6b3db51", "5437f5bc", 256, 1960.46, 2104.29, PR_15982),
    (G, "b6b3db51", "5437f5bc", 512, 2137.20, 2309.96, PR_15982),
    (G, "b6b3db51", "5437f5bc", 1024, 2282.16, 2504.71, PR_15982),
    (G, "b6b3db51", "5437f5bc", 2048, 2302.98, 2529.14, PR_15982),
    (G, "fcc2a5c0", "0b56d427", 16, 723.23, 736.30, PR_16492),
    (G, "fcc2a5c0", "0b56d427", 32, 919.54, 924.45, PR_16492),
    (G, "fcc2a5c0", "0b56d427", 64, 1059.55, 1077.96, PR_16492),
    (G, "fcc2a5c0", "0b56d427", 128, 1686.29, 1687.00, PR_16492),
    (G, "fcc2a5c0", "0b56d427", 256, 2129.54, 2161.97, PR_16492),
    (G, "fcc2a5c0", "0b56d427", 512, 2301.56, 2358.12, PR_16492),
]
# The pairs v2's free parameters are fit to; the others are held out.
FIT_PAIRS = [(G, "f6ffbc04", "b6b3db51", 512)]
TOLERANCE = 0.25  # the target: model delta within +-25% of the measured one


def repeat_sigma(pairs=PR_PAIRS):
    """The relative noise of one llama-bench run time, from the builds two
    PR pages both measured (a version that is one pair's "after" and the
    next pair's "before", at the same model and ubatch): the RMS of their
    relative differences over sqrt(2). Returns (sigma, the differences)."""
    seen = {}
    for net, before, after, ub, tps0, tps1, src in pairs:
        for v, tps in ((before, tps0), (after, tps1)):
            seen.setdefault((net, v, ub), {})[src] = tps
    rel = [(max(d.values()) - min(d.values())) / np.mean(list(d.values()))
           for d in seen.values() if len(d) > 1]
    return float(np.sqrt(np.mean(np.square(rel))) / math.sqrt(2)), rel


def noise_2sigma_s(t0, t1, sigma):
    """Two standard deviations of a measured delta t0 - t1 whose runs each
    carry a relative noise sigma."""
    return 2 * sigma * math.sqrt(t0 * t0 + t1 * t1)

CALIBRATION_MODELS = [
    "version=1",
    "version=2,lds_bytes_per_cycle=41.2",
    "version=2,lds_bytes_per_cycle=64",
    "version=2,lds_bytes_per_cycle=96",
    "version=2",  # lds_bytes_per_cycle=128
    "version=2,lds_broadcast=0",
    "version=2,l2_bytes=0",
    "version=2,l2_share_yz=0",
    "version=2,vmem_in_flight=0",
    "version=2,l1_bytes=0",
]


# ---------------------------------------------------------------------------
# A ggml checkout: which kernels, how its host code launches them.
# ---------------------------------------------------------------------------

class GgmlFa:
    """ggml-cuda's FA of one checkout, compiled for gfx906 into `work`."""

    def __init__(self, checkout, work, build, clang=gc.LLVM + "/clang"):
        self.cuda = gc.find_ggml_cuda(checkout)
        self.work = work
        self.build = build = os.path.abspath(build)
        self.clang = clang
        os.makedirs(work, exist_ok=True)
        common = open(os.path.join(self.cuda, "fattn-common.cuh")).read()
        tile_cu = os.path.join(self.cuda, "fattn-tile.cu")
        self.instances = os.path.exists(os.path.join(
            self.cuda, "template-instances",
            "fattn-tile-instance-dkq256-dv256.cu"))
        src = open(os.path.join(self.cuda, "fattn-tile.cuh")).read() \
            if self.instances else open(tile_cu).read()
        self.tile_src = src
        # launch_fattn's parallel_blocks search.
        self.pb_start_mb = "int parallel_blocks = max_blocks_per_sm;" in common
        m = re.search(r"efficiency_percent_best >= (\d+)", common)
        self.pb_threshold = int(m.group(1)) if m else 90
        self.pb_ceil = "(K->ne[1] + KQ_row_granularity - 1)" in common
        self.kv_max_needs_stride = \
            "mask && K->ne[1] % FATTN_KQ_STRIDE == 0 && (Q->ne[1] >= 1024" \
            in common
        self.hsacos = {}
        self.kernels = {}
        self.driver = gc.build_driver(build, work)

    # -- compiling ---------------------------------------------------------
    def _compile(self, name, rel):
        gc.SOURCES[name] = rel
        h = gc.compile_kernels(self.cuda, self.work, [name], self.clang)[name]
        self.hsacos[name] = h
        self.kernels[name] = gc.kernels_of(h)
        return name

    def tile_module(self, D):
        if self.instances:
            return self._compile(
                "fattn-tile-d%d" % D,
                "template-instances/fattn-tile-instance-dkq%d-dv%d.cu" % (D, D))
        return self._compile("fattn-tile", "fattn-tile.cu")

    def vec_module(self):
        return self._compile("fattn-vec-f16",
                             "template-instances/"
                             "fattn-vec-instance-f16-f16.cu")

    # -- the host code ------------------------------------------------------
    def amd_tile_config(self, D, cols):
        """ggml_cuda_fattn_tile_get_config_amd: (nthreads, nbatch_fa)."""
        body = self.tile_src[self.tile_src.index(
            "ggml_cuda_fattn_tile_get_config_amd("):]
        body = body[:body.index("return 0;")]
        for m in re.finditer(r"GGML_CUDA_FATTN_TILE_CONFIG_CASE\(\s*(\d+),\s*"
                             r"(\d+),\s*(\d+),\s*(\d+),\s*(\d+),\s*(\d+),"
                             r"\s*(\d+)\)", body):
            dkq, dv, nc, nt, _occ, nb_fa, _nb_k = map(int, m.groups())
            if dkq == D and dv == D and nc == cols:
                return nt, nb_fa
        sys.exit("no AMD tile config for D=%d ncols=%d" % (D, cols))

    def old_kq_stride(self, D, cols):
        """fattn_tile_get_kq_stride_host for GCN (the pre-16492 kernel)."""
        f = self.tile_src[self.tile_src.index(
            "static int fattn_tile_get_kq_stride_host"):]
        f = f[:f.index("\n}\n")]
        if "GGML_CUDA_CC_IS_RDNA(cc)" in f:  # llama/15982
            return {64: 128 if cols == 32 else 64,
                    128: 64 if cols == 32 else 32, 256: 32}[D]
        if "GGML_CUDA_CC_IS_GCN(cc) || GGML_CUDA_CC_IS_CDNA(cc)" in f:
            return 64 if D == 64 else (64 if cols <= 16 else 32)  # 15927
        return {64: 32 if cols <= 16 else 64,            # 15884 and before
                128: 64 if cols <= 16 else 32, 256: 64}[D]

    def parallel_blocks(self, mb, ntiles_kq, ntiles_dst):
        pb = mb if self.pb_start_mb else max(gc.NSM * mb // ntiles_dst, 1)
        pb = min(pb, ntiles_kq)
        per_wave = gc.NSM * mb
        best_waves = best_eff = 0
        for test in range(pb, ntiles_kq + 1):
            total = ntiles_dst * test
            waves = (total + per_wave - 1) // per_wave
            eff = 100 * total // (waves * per_wave)
            if best_eff >= self.pb_threshold and waves > best_waves:
                break
            if eff > best_eff:
                best_waves, best_eff, pb = waves, eff, test
        return pb

    def dispatch(self, D, B, Hq, Hkv, Lq, Lk, masked):
        """What ggml_cuda_flash_attn_ext launches on gfx906 (f16 K/V, no
        softcap/ALiBi/sinks): a dict with kind, module, symbol, ncols1,
        ncols2, nthreads, granularity (the KQ rows parallel_blocks is
        counted in)."""
        gqa = Hq // Hkv
        # fattn.cu (d99724f): on gfx906 (no MFMA/WMMA) the vec kernel for
        # one query row without the GQA optimisation, else the tile kernel.
        gqa_opt = masked and gqa % 2 == 0 and Lk % FATTN_KQ_STRIDE == 0
        can_vec = D <= 256 and D % 64 == 0 and Lk % FATTN_KQ_STRIDE == 0
        if self.instances and can_vec and Lq == 1 and not gqa_opt:
            mod = self.vec_module()
            prefix = "_ZL18flash_attn_ext_vecILi%dELi1EL9ggml_type1ELS0_1E" \
                "Lb0E" % D
            return dict(kind="vec", module=mod, ncols1=1, ncols2=1,
                        nthreads=128, granularity=D,
                        symbol=gc.find_kernel(self.kernels[mod], prefix))
        mod = self.tile_module(D)
        if self.instances:
            ncols2 = 1
            if masked and Lk % FATTN_KQ_STRIDE == 0:
                ncols2 = next((c for c in (8, 4, 2) if gqa % c == 0), 1)
            if D <= 128 and Lq > 32 // ncols2:
                cols = 64
            elif Lq > 16 // ncols2:
                cols = 32
            elif Lq > 8 // ncols2:
                cols = 16
            elif ncols2 <= 8 and Lq > 4 // ncols2:
                cols = 8
            elif ncols2 <= 4 and Lq > 2 // ncols2:
                cols = 4
            else:
                cols = 2
            nthreads, nbatch_fa = self.amd_tile_config(D, cols)
            prefix = "_ZL15flash_attn_tileILi%dELi%dELi%dELi%dELb0E" % (
                D, D, cols // ncols2, ncols2)
            return dict(kind="tile", module=mod, ncols1=cols // ncols2,
                        ncols2=ncols2, nthreads=nthreads,
                        granularity=nbatch_fa,
                        symbol=gc.find_kernel(self.kernels[mod], prefix))
        has64 = "constexpr int cols_per_block = 64;" in self.tile_src
        cols = 64 if has64 and D <= 128 and Lq > 32 else \
            (32 if Lq > 16 else 16)
        prefix = "_ZL15flash_attn_tileILi%dELi%dELb0E" % (D, cols)
        return dict(kind="tile", module=mod, ncols1=cols, ncols2=1,
                    nthreads=256, granularity=self.old_kq_stride(D, cols),
                    symbol=gc.find_kernel(self.kernels[mod], prefix))

    def plan(self, D, B, Hq, Hkv, Lq, Lk, masked, tmp, lk_valid=None):
        """(buffer lines, Launches, description) of one FA call. `lk_valid`:
        the keys in use when the KV cache view is padded to Lk (llama.cpp
        pads it to 256 with FlashAttention; the mask hides the rest)."""
        lk_valid = Lk if lk_valid is None else lk_valid
        d = self.dispatch(D, B, Hq, Hkv, Lq, Lk, masked)
        kernels = self.kernels[d["module"]]
        sym = d["symbol"]
        ncols1, ncols2 = d["ncols1"], d["ncols2"]
        gqa = Hq // Hkv
        ntiles_x = (Lq + ncols1 - 1) // ncols1
        ntiles_z = (gqa + ncols2 - 1) // ncols2
        ntiles_dst = ntiles_x * ntiles_z * Hkv * B
        g = d["granularity"]
        ntiles_kq = (Lk + g - 1) // g if self.pb_ceil else Lk // g
        mb = gc.max_blocks_per_cu(kernels[sym], d["nthreads"], 0)
        pb = self.parallel_blocks(mb, ntiles_kq, ntiles_dst)
        grid = (ntiles_x, pb, (Hq // ncols2) * B if self.instances
                else Hq * B)
        buffers = []
        q_bytes = B * Hq * Lq * D * 4
        kv_bytes = B * Hkv * Lk * D * 2
        out_bytes = B * Lq * Hq * D * 4
        buffers += ["buffer Q %d" % q_bytes, "buffer K %d" % kv_bytes,
                    "buffer V %d" % kv_bytes, "buffer O %d" % out_bytes]
        if pb > 1:
            buffers += ["buffer parts %d" % (pb * out_bytes),
                        "buffer meta %d" % (pb * B * Lq * Hq * 8)]
        kv_max = None
        if masked:
            path = os.path.join(tmp, "mask-%d-%d-%d.bin" % (Lq, Lk,
                                                            lk_valid))
            if not os.path.exists(path):
                m = np.full((Lq, Lk), -np.inf, np.float16)
                m[:, :lk_valid] = gc.causal_mask(Lq, lk_valid)
                m.tofile(path)
            buffers.append("buffer mask %d %s" % (Lq * Lk * 2, path))
            uses = (Lq >= 1024 or B > 1) and (
                Lk % FATTN_KQ_STRIDE == 0 or not self.kv_max_needs_stride)
            if uses:
                # flash_attn_mask_to_KV_max: per ncols1 rows, the end of the
                # last 256-key block with a visible key.
                kv = []
                for x in range(ntiles_x):
                    r = min((x + 1) * ncols1, Lq) - 1
                    last = lk_valid - Lq + r
                    kv.append(min(Lk, (last // FATTN_KQ_STRIDE + 1) *
                                  FATTN_KQ_STRIDE))
                path = os.path.join(tmp, "kvmax-%d-%d-%d.bin" %
                                    (Lq, Lk, ncols1))
                np.array(kv * B, np.int32).tofile(path)
                buffers.append("buffer KVmax %d %s" % (4 * len(kv) * B, path))
                kv_max = ("buf", "KVmax")
        k = kernels[sym]
        explicit = [a for a in k[".args"]
                    if not a[".value_kind"].startswith("hidden_")]
        ne01 = gc.fastdiv(Lq) if explicit[15][".size"] == 12 else gc.i32(Lq)
        n_head_log2 = 1 << int(math.floor(math.log2(Hq)))
        args = [("buf", "Q"), ("buf", "K"), ("buf", "V"),
                ("buf", "mask") if masked else None, None, kv_max,
                ("buf", "parts" if pb > 1 else "O"),
                ("buf", "meta") if pb > 1 else None,
                gc.f32(1.0 / math.sqrt(D)), gc.f32(0.0), gc.f32(1.0),
                gc.f32(1.0), gc.u32(n_head_log2), gc.f32(0.0),
                gc.i32(D), ne01, gc.i32(Hq), gc.i32(B),
                gc.i32(D * 4), gc.i32(Lq * D * 4), gc.i32(Hq * Lq * D * 4),
                gc.i32(D), gc.i32(Lk), gc.i32(Hkv), gc.i32(B),
                gc.i32(D * 2), gc.i32(Lk * D * 2), gc.i64(Hkv * Lk * D * 2),
                gc.i32(D * 2), gc.i32(Lk * D * 2), gc.i64(Hkv * Lk * D * 2),
                gc.i32(Lq if masked else 0), gc.i32(1 if masked else 0),
                gc.i32(1 if masked else 0), gc.i32(Lk * 2 if masked else 0),
                gc.i32(Lq * Lk * 2 if masked else 0), gc.i64(0)]
        launches = [gc.Launch(kernels, sym, grid,
                              (32, d["nthreads"] // 32, 1), 0, args)]
        if pb > 1:
            comb = gc.find_kernel(kernels,
                                  "_ZL26flash_attn_combine_resultsILi%dEE" % D)
            launches.append(gc.Launch(
                kernels, comb, (Lq, Hq, B), (D, 1, 1), pb * 8,
                [("buf", "parts"), ("buf", "meta"), ("buf", "O"),
                 gc.i32(pb)]))
        about = dict(kind=d["kind"], ncols1=ncols1, ncols2=ncols2,
                     nthreads=d["nthreads"], parallel_blocks=pb,
                     kv_max=kv_max is not None, grid=list(grid),
                     kernel=sym)
        return buffers, launches, about, self.hsacos[d["module"]]

    def estimate(self, D, B, Hq, Hkv, Lq, Lk, masked, models, samples=4,
                 lk_valid=None):
        """Per model (a list of TimingParams::apply strings): the call's
        seconds, and the launches' estimates (JSON objects)."""
        with tempfile.TemporaryDirectory(dir=self.work) as tmp:
            buffers, launches, about, hsaco = self.plan(
                D, B, Hq, Hkv, Lq, Lk, masked, tmp, lk_valid)
            plan = ["module " + hsaco] + buffers
            plan.append("timing %d %s" % (samples, "|".join(models)))
            plan += [ln.line for ln in launches]
            r = subprocess.run([self.driver], input="\n".join(plan) + "\n",
                               capture_output=True, text=True)
            if r.returncode:
                sys.exit("gfx906-corpus-run failed:\n" + r.stderr[-3000:])
        per_model = [[] for _ in models]
        for line in r.stdout.splitlines():
            if line.startswith("estimate "):
                _, i, js = line.split(" ", 2)
                per_model[int(i)].append(json.loads(js))
        out = []
        for ests in per_model:
            if len(ests) != len(launches):
                sys.exit("expected %d estimates, got %d" %
                         (len(launches), len(ests)))
            out.append((sum(e["seconds"] for e in ests), ests))
        return out, about


# ---------------------------------------------------------------------------
# calibrate: the PR pairs.
# ---------------------------------------------------------------------------

def ubatch_points(n, points):
    """The ubatch indices estimated (both ends, evenly spread)."""
    if points >= n:
        return list(range(n))
    return sorted({round(i * (n - 1) / (points - 1)) for i in range(points)})


def pp_fa_seconds(fa, net, ubatch, models, samples, points, log):
    """Per model: the FA seconds of llama-bench's pp16384 of `net` (all
    layers), and the per-ubatch detail."""
    g = NETS[net]
    n = g["tokens"] // ubatch
    idx = ubatch_points(n, points)
    at = {}
    for i in idx:
        # llama.cpp pads the KV cache view to 256 keys with FlashAttention
        # (llama_kv_cache's get_padding); the mask hides the padding.
        valid = ubatch * (i + 1)
        lk = (valid + KV_PAD - 1) // KV_PAD * KV_PAD
        t0 = time.time()
        res, about = fa.estimate(g["D"], 1, g["Hq"], g["Hkv"], ubatch, lk,
                                 True, models, samples, lk_valid=valid)
        at[i] = ([s for s, _ in res], about,
                 [[e["limited_by"] for e in ests] for _, ests in res])
        params = [ests[0]["params"] for _, ests in res]
        log("  ubatch %d/%d Lk=%d pb=%d: %s (%.0f s)" % (
            i + 1, n, lk, about["parallel_blocks"],
            " ".join("%.3g" % (s * 1e3) for s in at[i][0]),
            time.time() - t0))
    total = []
    for m in range(len(models)):
        xs = np.array(idx, float)
        ys = np.array([at[i][0][m] for i in idx])
        total.append(float(np.interp(np.arange(n), xs, ys).sum()) *
                     g["layers"])
    return total, {str(i): dict(seconds=at[i][0], about=at[i][1],
                                limited_by=at[i][2]) for i in idx}, params


def calibrate(args):
    versions = dict(v.split("=", 1) for v in args.versions)
    models = args.models.split("|")
    os.makedirs(args.out, exist_ok=True)
    logf = open(os.path.join(args.out, "log.txt"), "a")

    def log(s):
        print(s, flush=True)
        logf.write(s + "\n")
        logf.flush()
    log("calibrate %s, models %s" % (datetime.datetime.now().isoformat(),
                                    models))
    only = set(int(u) for u in args.ubatches.split(",")) \
        if args.ubatches else None
    fa_s = {}
    detail = {}
    model_params = []
    for name, path in versions.items():
        fa = GgmlFa(path, os.path.join(args.work, "work-" + name), args.build,
                    args.clang)
        # The models and microbatch sizes of the pairs this version is a
        # side of.
        runs = sorted({(p[0], p[3]) for p in PR_PAIRS if name in p[1:3] and
                       (only is None or p[3] in only)})
        for net, ub in runs:
            log("%s (%s), %s, ubatch %d" % (name, VERSIONS.get(name, "?"),
                                            net, ub))
            total, det, params = pp_fa_seconds(fa, net, ub, models,
                                               args.samples, args.points, log)
            model_params = params
            fa_s[(name, net, ub)] = total
            detail["%s/%s/%d" % (name, net, ub)] = det
    pairs = []
    sigma, _ = repeat_sigma()
    for net, before, after, ub, tps0, tps1, src in PR_PAIRS:
        if (before, net, ub) not in fa_s or (after, net, ub) not in fa_s:
            continue
        t0 = NETS[net]["tokens"] / tps0
        t1 = NETS[net]["tokens"] / tps1
        meas = t0 - t1
        row = dict(net=net, before=before, after=after, ubatch=ub,
                   tokens=NETS[net]["tokens"], tps_before=tps0,
                   tps_after=tps1, source=src, measured_delta_s=meas,
                   measured_s=[t0, t1],
                   noise_2sigma_s=noise_2sigma_s(t0, t1, sigma),
                   fit=(net, before, after, ub) in FIT_PAIRS, models=[])
        for m, model in enumerate(models):
            f0, f1 = fa_s[(before, net, ub)][m], fa_s[(after, net, ub)][m]
            row["models"].append(dict(
                model=model, fa_s=[f0, f1], delta_s=f0 - f1,
                error=(f0 - f1) / meas - 1,
                non_fa_s=[t0 - f0, t1 - f1]))
        pairs.append(row)
    res = dict(date=datetime.date.today().isoformat(), models=models,
               model_params=model_params,
               versions={k: VERSIONS.get(k, "") for k in versions},
               compiler=gc.compiler_version(args.clang),
               samples=args.samples, points=args.points, shape=GEMMA_2B,
               nets=NETS, repeat_sigma=sigma,
               pairs=pairs, detail=detail)
    with open(os.path.join(args.out, "calibration.json"), "w") as f:
        json.dump(res, f, indent=1)
    write_calibration_md(res, os.path.join(args.out, "calibration.md"))
    log("wrote %s" % args.out)


def per_version(res, model="version=2"):
    """Per model and microbatch size: the rest of the run (non-FA time, the same for
    every version) as the median over versions of measured - model, and
    each version's model FA seconds against measured - that rest. A
    diagnostic of which kernel the model mis-times; the pairs' deltas are
    the targets."""
    m = res["models"].index(model)
    seen = {}
    for p in res["pairs"]:
        for side, v in ((0, p["before"]), (1, p["after"])):
            d = seen.setdefault((p.get("net", "gemma 2B"), p["ubatch"]),
                                {}).setdefault(v, [[], None])
            d[0].append(p["measured_s"][side])
            d[1] = p["models"][m]["fa_s"][side]
    out = {}
    for key, vs in sorted(seen.items()):
        rest = [float(np.mean(t)) - f for t, f in vs.values()]
        r = float(np.median(rest))
        out[key] = dict(rest_s=r, versions={
            v: dict(measured_s=float(np.mean(t)), model_fa_s=f,
                    implied_fa_s=float(np.mean(t)) - r,
                    error=f / (float(np.mean(t)) - r) - 1)
            for v, (t, f) in vs.items()})
    return out


def per_version_md(res, model="version=2"):
    if model not in res["models"]:
        return []
    pv = per_version(res, model)
    order = [v for v in VERSIONS]
    L = ["", "Per version (`%s`, a diagnostic): the rest of the run taken as "
         "the median over versions of measured - model FA seconds, each "
         "version's model FA seconds against measured - that rest "
         "(implied), and the error:" % model, "",
         "| model | ubatch | rest s | " + " | ".join(order) + " |",
         "|" + "---|" * (3 + len(order))]
    for (net, ub), d in pv.items():
        cells = []
        for v in order:
            x = d["versions"].get(v)
            cells.append("%.2f / %.2f (%+.0f%%)" % (
                x["model_fa_s"], x["implied_fa_s"], 100 * x["error"])
                if x else "")
        L.append("| %s | %d | %.2f | %s |" % (net, ub, d["rest_s"],
                                              " | ".join(cells)))
    return L


def summary_md(res):
    """Per model: the pairs within the target, strictly and within the
    target plus the measurement's noise, all and held out, and the median
    error."""
    sigma = res["repeat_sigma"]
    _, rel = repeat_sigma()
    L = ["Per model: pairs whose model Δ is within ±25%% of the measured Δ; "
         "and within ±25%% plus two standard deviations of the measured Δ "
         "(each run's time taken as noisy by %.2f%%, from the %d builds "
         "two PR pages both measured: %s%% apart). Held out: every pair "
         "but the fit one." % (
             100 * sigma, len(rel),
             ", ".join("%.2f" % (100 * r) for r in sorted(rel))), "",
         "| model | ±25%: all | held out | ±25% + 2σ: all | held out | "
         "median abs error |", "|---|---|---|---|---|---|"]
    for m, model in enumerate(res["models"]):
        strict, noisy, errs = [0, 0], [0, 0], []
        for p in res["pairs"]:
            e = p["models"][m]
            errs.append(abs(e["error"]))
            miss = abs(e["delta_s"] - p["measured_delta_s"])
            for k, ok in ((strict, abs(e["error"]) <= TOLERANCE),
                          (noisy, miss <= TOLERANCE * abs(
                              p["measured_delta_s"]) + p["noise_2sigma_s"])):
                k[0] += ok
                k[1] += ok and not p["fit"]
        n, h = len(res["pairs"]), sum(not p["fit"] for p in res["pairs"])
        L.append("| `%s` | %d of %d | %d of %d | %d of %d | %d of %d | "
                 "%.0f%% |" % (model, strict[0], n, strict[1], h, noisy[0],
                               n, noisy[1], h, 100 * np.median(errs)))
    return L + [""]


def add_noise(res):
    """(Re)derive the measurement noise of a calibration's pairs from the
    published t/s (PR_PAIRS), for results written before it existed."""
    sigma, _ = repeat_sigma()
    res["repeat_sigma"] = sigma
    for p in res["pairs"]:
        p["noise_2sigma_s"] = noise_2sigma_s(*p["measured_s"], sigma)
    return res


def write_calibration_md(res, path):
    L = ["# Timing model calibration on llama.cpp's PR pairs (ESTIMATES)",
         "",
         "gemma 2B (D=256, Hq=8, Hkv=1, 18 layers) and llama 1B (D=64, "
         "Hq=32, Hkv=8, 16 layers), llama-bench pp16384; per pair the measured change of the whole run's time (16384 / "
         "t/s) against the model's change of the FA time (all FA launches "
         "of the run). `fit`: the pair v2's LDS datapath width was chosen "
         "on; the others are held out. Model times are ESTIMATES of the "
         "named model, not measurements.", ""]
    L += summary_md(res)
    models = res["models"]
    L.append("| model | pair | ubatch | measured s (before → after) | "
             "measured Δ s "
             "| " + " | ".join("`%s` Δ s (err)" % m for m in models) + " |")
    L.append("|" + "---|" * (5 + len(models)))
    for p in res["pairs"]:
        cells = ["%.3f (%+.0f%%)" % (m["delta_s"], 100 * m["error"])
                 for m in p["models"]]
        L.append("| %s | %s → %s%s | %d | %.3f → %.3f | %.3f | %s |" % (
            p.get("net", "gemma 2B"), p["before"], p["after"],
            " (fit)" if p["fit"] else "",
            p["ubatch"], p["measured_s"][0], p["measured_s"][1],
            p["measured_delta_s"], " | ".join(cells)))
    L += ["", "FA seconds of the whole run per version and model "
          "(and what remains of the measured time for the rest of the "
          "model: it should not change between versions):", ""]
    L.append("| version | " + " | ".join("`%s`" % m for m in models) + " |")
    L.append("|" + "---|" * (1 + len(models)))
    seen = set()
    for p in res["pairs"]:
        for side, v in ((0, p["before"]), (1, p["after"])):
            key = (v, p.get("net", "gemma 2B"), p["ubatch"])
            if key in seen:
                continue
            seen.add(key)
            L.append("| %s (%s, ub %d, measured %.3f s) | %s |" % (
                v, key[1], p["ubatch"], p["measured_s"][side], " | ".join(
                    "%.3f (rest %.3f)" % (m["fa_s"][side],
                                          m["non_fa_s"][side])
                    for m in p["models"])))
    L += per_version_md(res)
    L += ["", "Sources: " + "; ".join(sorted({p["source"]
                                               for p in res["pairs"]}))]
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("calibrate")
    c.add_argument("--versions", nargs="+", required=True)
    c.add_argument("--build", required=True)
    c.add_argument("--out", required=True)
    c.add_argument("--work", default="/tmp/fa-gfx906-llama")
    c.add_argument("--models", default="|".join(CALIBRATION_MODELS))
    c.add_argument("--samples", type=int, default=3)
    c.add_argument("--points", type=int, default=6)
    c.add_argument("--clang", default=gc.LLVM + "/clang",
                   help="the compiler of llama.cpp's kernels (the committed "
                   "calibration: clang-19, the LLVM of ROCm 6.4)")
    c.add_argument("--ubatches", default="",
                   help="only these microbatch sizes (comma-separated)")
    r = sub.add_parser("report", help="re-derive a calibration's noise "
                       "from the published t/s and rewrite its .md")
    r.add_argument("dir", help="a calibrate --out folder")
    args = ap.parse_args()
    if args.cmd == "calibrate":
        calibrate(args)
    else:
        path = os.path.join(args.dir, "calibration.json")
        with open(path) as f:
            res = add_noise(json.load(f))
        with open(path, "w") as f:
            json.dump(res, f, indent=1)
        write_calibration_md(res, os.path.join(args.dir, "calibration.md"))


if __name__ == "__main__":
    main()
