#!/usr/bin/env python3
"""fa decode (Lq = 1) vs PyTorch on one NVIDIA GPU, in one run (never a
timed test).

Decode attention, f16, D=128, Hq=32, Hkv=8 (GQA 4:1), Lq=1, a dense K/V
cache [B, Hkv, Lk, D] contiguous, B in {1, 8, 32, 128}, Lk in {1k, 8k, 32k,
128k} (shapes whose K/V cache needs more than 40 GiB are skipped). Rows:

  fa_splitkv_packed   decode_d128.cubin: split-KV + GQA packing (ABI 2: the
                      split kernel, then the combine kernel), S chosen as
                      the runtime does (fa::planKvSplits, fa/Module.h): with
                      W = ceil(R / block_m) * Hg * B workgroups per split
                      and n = ceil(Lk / block_n) K/V blocks, the S in
                      [1, min(64, n)] of least
                        ceil(W * S / (2 * SMs)) * (ceil(n / S) + 1)
                      (the smallest on a tie)
  fa_splitkv          decode_d128_nopack.cubin: split-KV only (same S rule)
  fa_splitkv_packed_16x64
                      decode_d128_m16.cubin: split-KV + packing with the
                      16x64 tile of 4 waves (same S rule)
  fa_dense            attn_d128_full.cubin: today's default kernel (ABI 1,
                      launched as bench/bench.py launches it)
  sdpa_<backend>      PyTorch SDPA with the backend forced (flash, cudnn,
                      efficient, math), enable_gqa=True where the backend
                      takes it, else K/V expanded with repeat_interleave
                      beforehand (outside the timing; the row says so)
  eager_fp16          matmul - softmax - matmul in fp16, K/V expanded
                      beforehand (outside the timing)

and, as an ablation, fa_splitkv_packed with S in {1, 2, 4, 8, 16, 32, 64}
at B = 1 and B = 8. Where a 32-bit-index kernel's offsets would overflow
(the runtime's check), the *_idx64.cubin build of the same kernel runs and
the row says so.

Timing (docs: /work/.library/device/METHOD.md): each call's time is the
median over repetitions of a CUDA graph's replay time (CUDA events) divided
by the calls captured in it; the graph rotates over enough copies of the
inputs that they do not stay in L2 (at least 8x L2 and 512 MiB together).
Metric: K/V bytes read per second, 2 * B * Hkv * Lk * D * 2 / time, and its
percentage of the device-to-device copy bandwidth measured in the same run
(bytes read + written / time). Every output (the whole tensor) is compared
with SDPA's math backend in fp64; an fa row whose max abs error exceeds
2e-2 (or that leaves an element unwritten: the output is NaN-poisoned
first) fails the run (exit status 1, after the files are written).

usage: decode.py KERNEL_DIR OUT_DIR [--quick] [--batches B,..] [--lengths L,..]
                 [--sweep-all] [--variants name=CUBIN ...]

--quick: B 1 and 8, Lk 1k and 32k, 5 repetitions, S sweep 1/4/16/64;
--batches, --lengths: other B and Lk lists; --sweep-all: the S sweep for
every split-KV row (the variants too), not only fa_splitkv_packed.
KERNEL_DIR is bench/build-kernels.sh's OUT/bench; each `name=CUBIN` adds
another split-KV build (another tile, say) as a row fa_<name> with the
runtime's S.
Writes OUT_DIR/decode.csv, OUT_DIR/decode.md, OUT_DIR/decode.png.
"""
import ctypes
import csv
import datetime
import json
import math
import os
import subprocess
import sys

import warnings

import torch
import torch.nn.functional as F

# SDPA explains every backend it refuses; the rows say which ran and how.
warnings.filterwarnings("ignore", category=UserWarning)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from bench import CudaKernel  # noqa: E402  (bench.py's cubin loader)

D, HQ, HKV, LQ = 128, 32, 8, 1
BATCHES = [1, 8, 32, 128]
CACHE_LENGTHS = [1024, 8192, 32768, 131072]
SWEEP_BATCHES = [1, 8]
SWEEP_SPLITS = [1, 2, 4, 8, 16, 32, 64]
MEM_LIMIT = 40 * 2 ** 30   # bytes of K/V (and expanded copies) resident
TOLERANCE = 2e-2
INT32_MAX = 2 ** 31 - 1
MAX_AUTO_SPLITS = 64       # fa/Module.h maxAutoKvSplits

SDPA_BACKENDS = [("flash", "FLASH_ATTENTION"), ("cudnn", "CUDNN_ATTENTION"),
                 ("efficient", "EFFICIENT_ATTENTION"), ("math", "MATH")]

COLUMNS = ["date", "gpu", "driver", "commit", "section", "B", "Hq", "Hkv",
           "Lq", "Lk", "D", "impl", "kernel", "S", "workgroups", "tile",
           "timing", "us",
           "kv_gbps", "pct_copy", "max_err", "status", "note"]


def kv_bytes(b, lk):
    return 2 * b * HKV * lk * D * 2


class FaKernel:
    """An fa code object: a dense kernel (ABI 1) or a split-KV kernel and
    its combine kernel (ABI 2), launched through the CUDA driver on torch's
    current stream. The module is loaded by bench.py's CudaKernel."""

    def __init__(self, path):
        self.path = path
        self.file = os.path.basename(path)
        self.ck = CudaKernel(path)
        self.lib = self.ck.lib
        with open(path + ".json") as f:
            manifest = json.load(f)
        self.info = self.ck.info
        if self.info.get("role") == "combine":
            raise RuntimeError(f"{path}: its first kernel is a combine kernel")
        self.abi = int(self.info.get("abi_version", 1))
        self.split = self.info.get("kv_splits") == "runtime"
        self.packed = bool(self.info.get("gqa_packed"))
        self.bm, self.bn = self.info["block_m"], self.info["block_n"]
        self.index_bits = int(self.info.get("index_bits", 32))
        self.resources = {"split" if self.split else "kernel":
                          self.info.get("resources", {})}
        self.cinfo = None
        if self.split:
            if self.abi != 2:
                raise RuntimeError(f"{path}: split-KV kernel of ABI "
                                   f"{self.abi}, not 2")
            self.cinfo = next(k for k in manifest["kernels"]
                              if k["name"] == self.info["combine"])
            self.resources["combine"] = self.cinfo.get("resources", {})
            self.cfn = ctypes.c_void_p()
            self.ck.check(self.lib.cuModuleGetFunction(
                ctypes.byref(self.cfn), self.ck.module,
                self.cinfo["symbol"].encode()), "cuModuleGetFunction")
            self.cshared = self.cinfo.get("dynamic_lds_bytes", 0)
            if self.cshared:
                self.ck.check(self.lib.cuFuncSetAttribute(
                    self.cfn, 8, self.cshared), "cuFuncSetAttribute")
        self.tile = (f"{self.bm}x{self.bn}, {self.info['threads']} threads"
                     + (", packed" if self.packed else "")
                     + (f", idx{self.index_bits}"
                        if self.index_bits != 32 else ""))

    def rows_and_heads(self, b, hq, hkv, lq):
        if self.packed:
            return lq * (hq // hkv), hkv
        return lq, hq

    def auto_splits(self, sms, b, hq, hkv, lq, lk):
        """The runtime's S (fa::planKvSplits, fa/Module.h): with W
        workgroups per split, n K/V blocks and k * SMs resident at a time
        (k: the manifest's blocks_per_sm_estimate, else 2), the S in
        [1, min(64, n)] of least ceil(W*S / (k*SMs)) * (ceil(n/S) + 1),
        the smallest on a tie."""
        if not self.split:
            return 1
        rows, hg = self.rows_and_heads(b, hq, hkv, lq)
        w = math.ceil(rows / self.bm) * hg * b
        per_sm = self.info.get("resources", {}).get("blocks_per_sm_estimate")
        slots = (per_sm if per_sm and per_sm > 0 else 2) * max(1, sms)
        n = math.ceil(lk / self.bn)
        best, best_s = None, 1
        for s in range(1, max(1, min(MAX_AUTO_SPLITS, n)) + 1):
            cost = math.ceil(w * s / slots) * (math.ceil(n / s) + 1)
            if best is None or cost < best:
                best, best_s = cost, s
        return best_s

    def workgroups(self, b, hq, hkv, lq, lk, splits):
        """Workgroups of the (split) kernel's grid."""
        rows, hg = self.rows_and_heads(b, hq, hkv, lq)
        return math.ceil(rows / self.bm) * splits * hg * b

    def refusal(self, b, hq, hkv, lq, lk, splits):
        """Why the runtime would refuse this shape (32-bit offsets), or ''."""
        if self.index_bits != 32:
            return ""
        block = max(self.bm, self.bn)

        def rounded(r):
            return math.ceil(r / block) * block
        # Contiguous BHLD strides.
        largest = {
            "Q": (b - 1) * hq * lq * D + (hq - 1) * lq * D
            + (rounded(lq) - 1) * D + D,
            "K": (b - 1) * hkv * lk * D + (hkv - 1) * lk * D
            + (rounded(lk) - 1) * D + D,
        }
        largest["O"] = largest["Q"]
        if self.split:
            largest["workspace O"] = splits * b * hq * lq * D
        for name, off in largest.items():
            if off > INT32_MAX:
                return f"32-bit offsets into {name} reach {off}"
        return ""

    def prepare(self, q, k, v, o, splits=1):
        """A zero-argument launcher for these tensors (BHLD, contiguous)."""
        def size(n):
            return min(n, INT32_MAX) if self.index_bits == 32 else n

        def buf(t):
            return [t.data_ptr(), t.data_ptr(), 0, size(t.numel()), 1]
        b, hq, lq, _ = q.shape
        hkv, lk = k.shape[1], k.shape[2]
        words = buf(q) + buf(k) + buf(v) + buf(o) + [0, 0, 0, 0, 1]
        words += [b, hq, hkv, lq, lk]
        for t in (q, k, v, o):
            words += [t.stride(0), t.stride(1), t.stride(2)]
        words += [hq * lq, lq]
        keep = []
        rows, hg = self.rows_and_heads(b, hq, hkv, lq)
        tiles = math.ceil(rows / self.bm)
        launches = [(self.ck.fn, (tiles * splits, hg, b),
                     self.info["threads"], self.ck.shared)]
        if self.split:
            ws_o = torch.empty(splits * b * hq * lq * D, device=q.device,
                               dtype=torch.float32)
            ws_lse = torch.empty(splits * b * hq * lq, device=q.device,
                                 dtype=torch.float32)
            keep += [ws_o, ws_lse]
            words += buf(ws_o) + buf(ws_lse) + [splits]
            launches.append((self.cfn,
                             (math.ceil(lq / self.cinfo["block_m"]), hq, b),
                             self.cinfo["threads"], self.cshared))
        assert len(words) == (55 if self.split else 44)
        arr = (ctypes.c_uint64 * len(words))(*words)
        base = ctypes.addressof(arr)
        params = (ctypes.c_void_p * len(words))(
            *[base + 8 * i for i in range(len(words))])
        lib, check = self.lib, self.ck.check
        c_grid = [tuple(ctypes.c_uint(g) for g in grid)
                  for _, grid, _, _ in launches]

        def launch():
            _ = keep  # the workspace lives as long as the launcher
            stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
            for (fn, _, threads, shared), grid in zip(launches, c_grid):
                check(lib.cuLaunchKernel(
                    fn, *grid, ctypes.c_uint(threads), ctypes.c_uint(1),
                    ctypes.c_uint(1), ctypes.c_uint(shared), stream, params,
                    None), "cuLaunchKernel")
            return o
        launch.arrays = (arr, params)
        return launch


def event_time(fn, reps, warmup=3):
    """Median seconds of fn between two CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    times.sort()
    return times[len(times) // 2]


def graph_time(calls_per_set, reps):
    """Median seconds per call of the callables in calls_per_set (one per
    input set), rotated over the sets in one CUDA graph; falls back to
    timing the same loop on the stream where capture fails."""
    n = len(calls_per_set)
    for f in calls_per_set:
        f()
    torch.cuda.synchronize()
    one = event_time(calls_per_set[0], 3, warmup=1)
    # About 10 ms of work per replay, at least one pass over the sets,
    # at most 512 calls (rounded to whole passes).
    calls = min(512, max(n, math.ceil(10e-3 / max(one, 1e-7))))
    calls = max(n, calls // n * n)

    def loop():
        for i in range(calls):
            calls_per_set[i % n]()
    how = f"graph of {calls} calls over {n} input sets"
    try:
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            loop()  # warm-up on the side stream, as torch's docs advise
        torch.cuda.current_stream().wait_stream(s)
        torch.cuda.synchronize()
        with torch.cuda.graph(g):
            loop()
        torch.cuda.synchronize()
        t = event_time(g.replay, reps, warmup=2)
        del g
    except Exception as e:  # capture refused: time the stream loop instead
        torch.cuda.synchronize()
        how = (f"stream loop of {calls} calls over {n} input sets (graph "
               f"capture failed: {str(e).splitlines()[0][:60]})")
        t = event_time(loop, reps, warmup=1)
    return t / calls, how


def copy_bandwidth(reps):
    """Device-to-device copy, bytes read + written per second."""
    n = 4 * 2 ** 30
    x = torch.empty(n, dtype=torch.uint8, device="cuda").random_(0, 255)
    y = torch.empty_like(x)
    t = event_time(lambda: y.copy_(x), reps)
    del x, y
    torch.cuda.empty_cache()
    return 2 * n / t


def reference(q, k, v):
    """fp64 SDPA (math backend, enable_gqa) of the whole output, in batch
    chunks of at most 1 GiB of fp64 K/V."""
    from torch.nn.attention import SDPBackend, sdpa_kernel
    b, lk = q.shape[0], k.shape[2]
    per = max(1, (2 ** 30) // (2 * HKV * lk * D * 8))
    out = []
    with sdpa_kernel([SDPBackend.MATH]):
        for i in range(0, b, per):
            qs, ks, vs = (t[i:i + per].double() for t in (q, k, v))
            out.append(F.scaled_dot_product_attention(qs, ks, vs,
                                                      enable_gqa=True))
            del qs, ks, vs
    return torch.cat(out)


def max_err(out, ref):
    d = (out.double() - ref).abs()
    if not torch.isfinite(out).all():
        return float("nan")
    return d.max().item()


def sdpa_fn(backend, gqa):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    b = getattr(SDPBackend, backend)

    def run(q, k, v):
        with sdpa_kernel([b]):
            if gqa:
                return F.scaled_dot_product_attention(q, k, v,
                                                      enable_gqa=True)
            return F.scaled_dot_product_attention(q, k, v)
    return run


def eager(q, k, v):
    s = q @ k.transpose(-1, -2) * (1.0 / math.sqrt(q.shape[-1]))
    return torch.softmax(s, dim=-1) @ v


def load(kernel_dir, names):
    """The first of `names` in kernel_dir that loads, with the others as
    fallbacks: [FaKernel, ...]; missing files are left out."""
    ks = []
    for n in names:
        p = os.path.join(kernel_dir, n)
        if os.path.exists(p) and os.path.exists(p + ".json"):
            ks.append(FaKernel(p))
    return ks


def pick(kernels, shape, splits_of):
    """The first kernel that can run shape (a tuple b,hq,hkv,lq,lk) with the
    splits splits_of(kernel) gives; (kernel, S, note) or (None, 0, why)."""
    why = "no kernel file"
    for i, k in enumerate(kernels):
        s = splits_of(k)
        r = k.refusal(*shape, s)
        if not r:
            note = "" if i == 0 else \
                f"{k.file} ({kernels[0].file}: {why})"
            return k, s, note
        why = r
    return None, 0, why


def main():
    if len(sys.argv) < 3 or sys.argv[1].startswith("-"):
        print("usage:" + __doc__.split("usage:")[1].split("\n\n")[0])
        return 2
    kernel_dir, out_dir = sys.argv[1], sys.argv[2]
    quick = "--quick" in sys.argv
    sweep_all = "--sweep-all" in sys.argv
    variants = []
    if "--variants" in sys.argv:
        for spec in sys.argv[sys.argv.index("--variants") + 1:]:
            if spec.startswith("--"):
                break
            name, path = spec.split("=", 1)
            variants.append((name, path))
    os.makedirs(out_dir, exist_ok=True)
    reps = 5 if quick else 20
    batches = [1, 8] if quick else BATCHES
    lengths = [1024, 32768] if quick else CACHE_LENGTHS
    for opt in ("--batches", "--lengths"):
        if opt in sys.argv:
            vals = [int(x) for x in
                    sys.argv[sys.argv.index(opt) + 1].split(",")]
            if opt == "--batches":
                batches = vals
            else:
                lengths = vals
    sweep = [1, 4, 16, 64] if quick else SWEEP_SPLITS
    torch.manual_seed(0)
    torch.zeros(1, device="cuda")  # the primary context the cubins load into
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    l2 = getattr(props, "L2_cache_size", 50 * 2 ** 20)
    gpu = torch.cuda.get_device_name()
    driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version",
                             "--format=csv,noheader"], capture_output=True,
                            text=True).stdout.strip()
    commit = os.environ.get("FA_COMMIT", "unknown")
    date = datetime.date.today().isoformat()

    fa_impls = [  # (impl, [kernel files: first choice, then fallbacks])
        ("fa_splitkv_packed", ["decode_d128.cubin",
                               "decode_d128_idx64.cubin"]),
        ("fa_splitkv", ["decode_d128_nopack.cubin",
                        "decode_d128_nopack_idx64.cubin"]),
        ("fa_splitkv_packed_16x64", ["decode_d128_m16.cubin"]),
        ("fa_dense", ["attn_d128_full.cubin",
                      "decode_d128_dense_idx64.cubin"]),
    ]
    fa = []
    for impl, names in fa_impls:
        ks = load(kernel_dir, names)
        if not ks:
            print(f"{impl}: none of {names} in {kernel_dir}: no rows",
                  flush=True)
            continue
        fa.append((impl, ks))
    for name, path in variants:
        fa.append((f"fa_{name}", [FaKernel(path)]))

    copy_bw = copy_bandwidth(reps)
    print(f"{gpu} ({sms} SMs, L2 {l2 / 2 ** 20:.0f} MiB) driver {driver} "
          f"commit {commit}: device copy {copy_bw / 1e9:.0f} GB/s "
          f"(read + write)", flush=True)
    rows = [dict(date=date, gpu=gpu, driver=driver, commit=commit,
                 section="ceiling", impl="d2d_copy", timing="4 GiB copy",
                 kv_gbps=round(copy_bw / 1e9, 1), pct_copy=100.0,
                 status="ok", note="bytes read + written / time")]
    failures = []
    skipped = []
    gqa_note = {}

    def add(section, b, lk, impl, t, err, kernel="", s="", tile="",
            timing="", note="", fa_row=False, workgroups=""):
        status = "ok"
        if fa_row and not (err <= TOLERANCE):  # NaN fails too
            status = "FAIL"
            failures.append(f"{impl} B={b} Lk={lk} S={s}: max abs error "
                            f"{err:.3g} > {TOLERANCE}")
        gbps = kv_bytes(b, lk) / t / 1e9
        rows.append(dict(date=date, gpu=gpu, driver=driver, commit=commit,
                         section=section, B=b, Hq=HQ, Hkv=HKV, Lq=LQ, Lk=lk,
                         D=D, impl=impl, kernel=kernel, S=s,
                         workgroups=workgroups, tile=tile,
                         timing=timing, us=round(t * 1e6, 2),
                         kv_gbps=round(gbps, 1),
                         pct_copy=round(100 * gbps * 1e9 / copy_bw, 1),
                         max_err=f"{err:.3g}", status=status, note=note))
        print(f"  B={b:<4} Lk={lk:<7} {impl:26} S={s!s:<3} "
              f"{t * 1e6:10.2f} us {gbps:8.1f} GB/s "
              f"{100 * gbps * 1e9 / copy_bw:5.1f}% of copy  max_err "
              f"{err:.3g}{'  FAIL' if status == 'FAIL' else ''}"
              f"{'  ' + note if note else ''}", flush=True)

    for b in batches:
        for lk in lengths:
            kvb = kv_bytes(b, lk)
            if kvb > MEM_LIMIT:
                skipped.append(f"B={b} Lk={lk}: K/V cache "
                               f"{kvb / 2 ** 30:.0f} GiB > 40 GiB")
                print(f"  B={b:<4} Lk={lk:<7} skipped: K/V cache "
                      f"{kvb / 2 ** 30:.0f} GiB > 40 GiB", flush=True)
                continue
            nsets = max(1, math.ceil(max(8 * l2, 2 ** 29) / kvb))
            nsets = min(nsets, max(1, MEM_LIMIT // kvb))
            sets = []
            for _ in range(nsets):
                q = torch.randn(b, HQ, LQ, D, device="cuda",
                                dtype=torch.float16)
                k = torch.randn(b, HKV, lk, D, device="cuda",
                                dtype=torch.float16)
                v = torch.randn(b, HKV, lk, D, device="cuda",
                                dtype=torch.float16)
                sets.append((q, k, v))
            ref = reference(*sets[0])
            shape = (b, HQ, HKV, LQ, lk)

            def run_fa(section, impl, ks, splits_of, note_extra=""):
                kern, s, note = pick(ks, shape, splits_of)
                if kern is None:
                    skipped.append(f"{impl} B={b} Lk={lk}: {note}")
                    print(f"  B={b:<4} Lk={lk:<7} {impl:26} skipped: {note}",
                          flush=True)
                    return
                outs = [torch.empty_like(q) for q, _, _ in sets]
                fns = [kern.prepare(q, k, v, o, s)
                       for (q, k, v), o in zip(sets, outs)]
                outs[0].fill_(float("nan"))  # poison: every element written
                fns[0]()
                torch.cuda.synchronize()
                err = max_err(outs[0], ref)
                t, how = graph_time(fns, reps)
                add(section, b, lk, impl, t, err, kernel=kern.file,
                    s=s if kern.split else "", tile=kern.tile, timing=how,
                    workgroups=kern.workgroups(*shape, s),
                    note=" ".join(x for x in (note, note_extra) if x),
                    fa_row=True)
                del fns, outs

            for impl, ks in fa:
                run_fa("main", impl, ks,
                       lambda k: k.auto_splits(sms, *shape))
            if b in SWEEP_BATCHES:
                for impl, ks in fa:
                    if ks[0].split and (sweep_all or
                                        impl == "fa_splitkv_packed"):
                        for s in sweep:
                            run_fa("splits", impl, ks, lambda k, s=s: s)

            # PyTorch: K/V as the cache holds them where the backend takes
            # GQA, else expanded to Hq heads beforehand.
            expanded = None

            def expand():
                nonlocal expanded
                if expanded is None:
                    g = HQ // HKV
                    expanded = [(q, k.repeat_interleave(g, dim=1),
                                 v.repeat_interleave(g, dim=1))
                                for q, k, v in sets]
                return expanded
            exp_fits = kvb * nsets * 5 <= MEM_LIMIT
            impls = []
            for name, backend in SDPA_BACKENDS:
                impls.append((f"sdpa_{name}", backend))
            impls.append(("eager_fp16", None))
            for impl, backend in impls:
                mode = ""
                try:
                    if backend is None:
                        if not exp_fits:
                            raise MemoryError("expanded K/V over 40 GiB")
                        data, fn, mode = expand(), eager, "K/V expanded"
                    else:
                        fn = sdpa_fn(backend, True)
                        data = sets
                        try:
                            if backend == "MATH" and not exp_fits:
                                raise MemoryError(
                                    "math repeats K/V: over 40 GiB")
                            out = fn(*sets[0])
                            mode = "enable_gqa"
                        except MemoryError:
                            raise
                        except Exception as e1:
                            if not exp_fits:
                                raise MemoryError(
                                    "no GQA and expanded K/V over 40 GiB: "
                                    + str(e1).splitlines()[0][:60])
                            fn = sdpa_fn(backend, False)
                            data, mode = expand(), "K/V expanded"
                    out = fn(*data[0])
                    torch.cuda.synchronize()
                    err = max_err(out, ref)
                    del out
                    t, how = graph_time(
                        [lambda d=d, fn=fn: fn(*d) for d in data], reps)
                except Exception as e:  # a backend that does not support it
                    torch.cuda.synchronize()
                    msg = str(e).splitlines()[0][:100] if str(e) else \
                        type(e).__name__
                    skipped.append(f"{impl} B={b} Lk={lk}: {msg}")
                    print(f"  B={b:<4} Lk={lk:<7} {impl:26} unavailable: "
                          f"{msg}", flush=True)
                    continue
                gqa_note.setdefault(impl, set()).add(mode)
                add("main", b, lk, impl, t, err, timing=how, note=mode)
            del expanded, sets, ref
            torch.cuda.empty_cache()

    path = os.path.join(out_dir, "decode.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, restval="")
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}")
    write_md(os.path.join(out_dir, "decode.md"), rows, fa, copy_bw, gpu,
             driver, commit, date, sms, l2, skipped, failures, gqa_note,
             quick, reps)
    try:
        plot(rows, os.path.join(out_dir, "decode.png"), gpu, copy_bw)
    except Exception as e:  # matplotlib missing: the CSV is the result
        print(f"no chart: {e}")
    if failures:
        print("FAIL: fa outputs off the fp64 reference:")
        for f_ in failures:
            print("  " + f_)
        return 1
    return 0


def write_md(path, rows, fa, copy_bw, gpu, driver, commit, date, sms, l2,
             skipped, failures, gqa_note, quick, reps):
    main_rows = [r for r in rows if r["section"] == "main"]
    batches = sorted({r["B"] for r in main_rows})
    lengths = sorted({r["Lk"] for r in main_rows})
    impls = []
    for r in main_rows:
        if r["impl"] not in impls:
            impls.append(r["impl"])
    L = [f"# Decode attention on {gpu}: fa vs PyTorch\n"]
    L.append(f"- date {date}, driver {driver}, commit {commit}, torch "
             f"{torch.__version__}, {sms} SMs, L2 {l2 / 2 ** 20:.0f} MiB"
             + (", --quick" if quick else ""))
    L.append(f"- f16, D={D}, Hq={HQ}, Hkv={HKV}, Lq={LQ}, dense K/V cache "
             "[B, Hkv, Lk, D] contiguous; K/V GB/s = 2·B·Hkv·Lk·D·2 bytes "
             "/ time")
    L.append(f"- device copy bandwidth, same run: **{copy_bw / 1e9:.0f} "
             "GB/s** (4 GiB device-to-device, bytes read + written / time; "
             "a read-only stream such as decode's can exceed it)")
    L.append(f"- time per call: median of {reps} CUDA-event-timed replays "
             "of a CUDA graph (after warm-up) over the calls in it; the "
             "graph rotates over copies of the inputs (≥ 8× L2 and 512 MiB "
             "together) so that K/V come from HBM")
    L.append(f"- every output checked whole against fp64 SDPA (math); fa "
             f"rows fail above {TOLERANCE} max abs error or on an unwritten "
             "(NaN-poisoned) element")
    L.append("- fa S: the runtime's rule (fa::planKvSplits): the S in "
             "[1, min(64, n)] of least ⌈W·S / (2·SMs)⌉ · (⌈n/S⌉ + 1), W the "
             "workgroups of one split, n = ⌈Lk/block_n⌉ (the smallest on a "
             "tie)")
    for impl, ks in fa:
        for k in ks:
            res = "; ".join(
                f"{part} {r.get('registers', '?')} registers, spills "
                f"{r.get('spill_store_bytes', '?')}/"
                f"{r.get('spill_load_bytes', '?')} B stored/loaded, stack "
                f"{r.get('stack_bytes', '?')} B, "
                f"{r.get('blocks_per_sm_estimate', '?')} blocks/SM (est.)"
                for part, r in k.resources.items())
            L.append(f"- {impl}: `{k.file}` {k.tile}; {res}")
    for impl, modes in sorted(gqa_note.items()):
        L.append(f"- {impl}: " + " / ".join(sorted(m or "-" for m in modes)))
    L.append("")
    for b in batches:
        L.append(f"## B = {b}: K/V GB/s (% of copy), µs per call\n")
        L.append("| impl | " + " | ".join(f"Lk={lk}" for lk in lengths)
                 + " |")
        L.append("|---|" + "---|" * len(lengths))
        for impl in impls:
            cells = []
            for lk in lengths:
                m = [r for r in main_rows if r["impl"] == impl and
                     r["B"] == b and r["Lk"] == lk]
                if not m:
                    cells.append("—")
                    continue
                r = m[0]
                s = f" S={r['S']}" if r["S"] != "" else ""
                flag = " **FAIL**" if r["status"] == "FAIL" else ""
                idx = " (idx64)" if "idx64" in r["kernel"] else ""
                cells.append(f"{r['kv_gbps']:.0f} ({r['pct_copy']:.0f}%), "
                             f"{r['us']:.1f} µs{s}{idx}{flag}")
            if any(c != "—" for c in cells):
                L.append(f"| {impl} | " + " | ".join(cells) + " |")
        L.append("")
    sw_all = [r for r in rows if r["section"] == "splits"]
    sw_impls = []
    for r in sw_all:
        if r["impl"] not in sw_impls:
            sw_impls.append(r["impl"])
    for impl in sw_impls:
        sw = [r for r in sw_all if r["impl"] == impl]
        L.append(f"## Ablation: {impl} with fixed S (K/V GB/s, µs; "
                 "workgroups of the split grid)\n")
        splits = sorted({r["S"] for r in sw})
        for b in sorted({r["B"] for r in sw}):
            L.append(f"B = {b}:\n")
            L.append("| Lk | " + " | ".join(f"S={s}" for s in splits)
                     + " | runtime's S |")
            L.append("|---|" + "---|" * (len(splits) + 1))
            for lk in sorted({r["Lk"] for r in sw if r["B"] == b}):
                cells = []
                for s in splits:
                    m = [r for r in sw if r["B"] == b and r["Lk"] == lk
                         and r["S"] == s]
                    cells.append(f"{m[0]['kv_gbps']:.0f}, {m[0]['us']:.1f} "
                                 f"µs ({m[0]['workgroups']} WG)"
                                 + (" **FAIL**" if m[0]["status"] == "FAIL"
                                    else "") if m else "—")
                auto = [r for r in main_rows if r["B"] == b and
                        r["Lk"] == lk and r["impl"] == impl]
                L.append(f"| {lk} | " + " | ".join(cells) + " | "
                         + (f"S={auto[0]['S']}: {auto[0]['kv_gbps']:.0f}, "
                            f"{auto[0]['us']:.1f} µs ({auto[0]['workgroups']}"
                            " WG)" if auto else "—") + " |")
            L.append("")
    if skipped:
        L.append("## Not run\n")
        L += [f"- {s}" for s in skipped]
        L.append("")
    if failures:
        L.append("## FAILURES\n")
        L += [f"- {f}" for f in failures]
        L.append("")
    L.append("![decode](decode.png)\n")
    L.append("Columns of decode.csv: " + ", ".join(COLUMNS) + ".")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")
    print(f"wrote {path}")


def plot(rows, path, gpu, copy_bw):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    main_rows = [r for r in rows if r["section"] == "main"]
    sw = [r for r in rows if r["section"] == "splits" and
          r["impl"] == "fa_splitkv_packed"]
    batches = sorted({r["B"] for r in main_rows})
    sweep_b = sorted({r["B"] for r in sw})
    impls = []
    for r in main_rows:
        if r["impl"] not in impls:
            impls.append(r["impl"])
    panels = len(batches) + len(sweep_b)
    cols = min(3, panels)
    nrows = math.ceil(panels / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(5.5 * cols, 4.2 * nrows),
                             squeeze=False)
    axes = [a for row in axes for a in row]
    cmap = plt.get_cmap("tab10" if len(impls) <= 10 else "tab20")
    ncol = 10 if len(impls) <= 10 else 20
    for i, b in enumerate(batches):
        ax = axes[i]
        for j, impl in enumerate(impls):
            pts = sorted((r["Lk"], r["kv_gbps"]) for r in main_rows
                         if r["impl"] == impl and r["B"] == b)
            if pts:
                fa_ = impl.startswith("fa_")
                ax.plot([p[0] for p in pts], [p[1] for p in pts],
                        "o-" if fa_ else "s:", color=cmap(j % ncol),
                        label=impl, linewidth=2.2 if fa_ else 1.4)
        ax.axhline(copy_bw / 1e9, color="k", linestyle="--",
                   label=f"device copy {copy_bw / 1e9:.0f} GB/s")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("cache length Lk")
        ax.set_ylabel("K/V GB/s")
        ax.set_title(f"B={b}")
        ax.set_ylim(bottom=0)
        if i == 0:
            handles, labels = ax.get_legend_handles_labels()
    for i, b in enumerate(sweep_b):
        ax = axes[len(batches) + i]
        for j, lk in enumerate(sorted({r["Lk"] for r in sw if r["B"] == b})):
            pts = sorted((r["S"], r["kv_gbps"]) for r in sw
                         if r["B"] == b and r["Lk"] == lk)
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "o-",
                    color=cmap(j % 10), label=f"Lk={lk}")
        ax.axhline(copy_bw / 1e9, color="k", linestyle="--")
        ax.set_xscale("log", base=2)
        ax.set_xlabel("S (K/V splits)")
        ax.set_ylabel("K/V GB/s")
        ax.set_title(f"fa_splitkv_packed, fixed S, B={b}")
        ax.set_ylim(bottom=0)
        ax.legend(fontsize=7)
    for ax in axes[panels:]:
        ax.axis("off")
    if batches:
        fig.legend(handles, labels, loc="lower center", fontsize=8,
                   ncol=min(6, len(labels)))
    fig.suptitle(f"decode attention, f16 D={D} Hq={HQ} Hkv={HKV} Lq=1, "
                 f"{gpu}: K/V bytes read per second")
    legend_rows = math.ceil((len(impls) + 1) / 6)
    fig.tight_layout(rect=(0, 0.035 * legend_rows + 0.01, 1, 1))
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


if __name__ == "__main__":
    sys.exit(main())
