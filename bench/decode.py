#!/usr/bin/env python3
"""fa decode (Lq = 1) vs PyTorch on one NVIDIA GPU, in one run (never a
timed test).

Decode attention, f16, D=128, Hq=32, Hkv=8 (GQA 4:1), Lq=1, a dense K/V
cache [B, Hkv, Lk, D] contiguous, B in {1, 8, 32, 128}, Lk in {1k, 8k, 32k,
128k} (shapes whose K/V cache needs more than 40 GiB are skipped). Rows:

  fa_splitkv_packed   decode_d128.cubin: split-KV + GQA packing (ABI 2: the
                      split kernel, then the combine kernel), S chosen as
                      the runtime does (fa::planKvSplits, fa/Module.h): with
                      W = ceil(R / block_m) * Hg * B workgroups per split,
                      n = ceil(Lk / block_n) K/V blocks and k * SMs
                      resident (k: the manifest's blocks_per_sm_estimate,
                      else 2), the S in [1, min(128, n)] of least
                        16 * ceil(W * S / (k * SMs)) * (ceil(n / S) + 1) + S
                      (the + S: the combine kernel's serial walk over the
                      splits, S / 16 blocks; the smallest on a tie)
  fa_splitkv          decode_d128_nopack.cubin: split-KV only (same S rule)
  fa_splitkv_packed_16x64
                      decode_d128_m16.cubin: split-KV + packing with the
                      16x64 tile of 4 waves (same S rule)
  fa_dense            attn_d128_full.cubin: today's default kernel (ABI 1,
                      launched as bench/bench.py launches it)
  fa_paged_splitkv_packed
                      paged_d128.cubin: split-KV + GQA packing over a paged
                      K/V cache (ABI 3, 67 words), page size 16 (vLLM's)
                      and 256: the same K/V as caches [num_pages,
                      page_size, Hkv, D] contiguous, every sequence of the
                      full length Lk, the B * ceil(Lk / page_size) pages
                      shuffled over the cache by a seeded permutation (the
                      block table i32 [B, max_pages], cache_seqlens i32 [B]
                      = Lk); S by the same rule over Lk = max(cache_seqlens)
  fa_paged_nosplit    paged_d128_nosplit.cubin: the dense-tile paged kernel
                      (not split-KV: null workspace, S = 1), only where the
                      K/V are at most 256 MiB (it is as slow as fa_dense)
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
                 [--page-sizes P,..] [--skip WHAT,..] [--budget SECONDS]
                 [--sweep-all] [--splits S,..] [--variants name=CUBIN ...]
       decode.py --self-test [KERNEL_DIR]

--quick: B 1 and 8, Lk 1k and 32k, 5 repetitions, S sweep 1/4/16/64;
--batches, --lengths, --page-sizes: other B, Lk and page size lists;
--skip: leave out rows: dense (the dense-cache fa rows), paged, nosplit
(fa_paged_nosplit), sweep (the S ablation), torch (SDPA and eager);
--budget: start no new (B, Lk) after SECONDS (the rest is listed as not
run; the files are still written); --sweep-all: the S sweep for every
split-KV row (the variants too), not only fa_splitkv_packed; --splits: the
sweep's S list (default 1, 2, 4, ..., 64 at B 1 and 8; S up to the
runtime's 1024), swept at every B of the run.
KERNEL_DIR is bench/build-kernels.sh's OUT/bench; each `name=CUBIN` adds
another split-KV build (another tile, say) as a row fa_<name> with the
runtime's S.
Writes OUT_DIR/decode.csv, OUT_DIR/decode.md, OUT_DIR/decode.png.

--self-test needs no GPU: the ABI's words (bench/fa_abi.py) checked against
KernelAbi.h and read back over host memory; with torch (CPU is enough), the
paged caches built as the GPU run builds them and the words FaKernel packs
for them (from KERNEL_DIR's manifests, default build-sm90/bench) read back
element by element against the dense K/V.
"""
import ctypes
import csv
import datetime
import json
import math
import os
import subprocess
import sys
import time
import warnings

try:  # --self-test runs without torch (plain Python) or with CPU torch
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = F = None

# SDPA explains every backend it refuses; the rows say which ran and how.
warnings.filterwarnings("ignore", category=UserWarning)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fa_abi  # noqa: E402  (the ABI's words, plain Python)
try:
    from bench import CudaKernel  # noqa: E402  (bench.py's cubin loader)
except ImportError:
    CudaKernel = None

D, HQ, HKV, LQ = 128, 32, 8, 1
BATCHES = [1, 8, 32, 128]
CACHE_LENGTHS = [1024, 8192, 32768, 131072]
SWEEP_BATCHES = [1, 8]
SWEEP_SPLITS = [1, 2, 4, 8, 16, 32, 64]
MEM_LIMIT = 40 * 2 ** 30   # bytes of K/V (and expanded copies) resident
TOLERANCE = 2e-2
INT32_MAX = 2 ** 31 - 1
MAX_AUTO_SPLITS = 128      # fa/Module.h maxAutoKvSplits

PAGE_SIZES = [16, 256]     # vLLM's page and a large one
PAGE_SEED = 20261201       # the page permutations' seeds start here
NOSPLIT_MAX_KV_BYTES = 2 ** 28  # paged_d128_nosplit rows up to this K/V

FA_IMPLS = [  # (impl, [kernel files: first choice, then fallbacks])
    ("fa_splitkv_packed", ["decode_d128.cubin", "decode_d128_idx64.cubin"]),
    ("fa_splitkv", ["decode_d128_nopack.cubin",
                    "decode_d128_nopack_idx64.cubin"]),
    ("fa_splitkv_packed_16x64", ["decode_d128_m16.cubin"]),
    ("fa_dense", ["attn_d128_full.cubin", "decode_d128_dense_idx64.cubin"]),
]
FA_PAGED_IMPLS = [  # (impl, files, only where cheap)
    ("fa_paged_splitkv_packed", ["paged_d128.cubin",
                                 "paged_d128_idx64.cubin"], False),
    ("fa_paged_nosplit", ["paged_d128_nosplit.cubin"], True),
]

SDPA_BACKENDS = [("flash", "FLASH_ATTENTION"), ("cudnn", "CUDNN_ATTENTION"),
                 ("efficient", "EFFICIENT_ATTENTION"), ("math", "MATH")]

COLUMNS = ["date", "gpu", "driver", "commit", "section", "B", "Hq", "Hkv",
           "Lq", "Lk", "D", "impl", "kernel", "S", "workgroups", "tile",
           "timing", "us",
           "kv_gbps", "pct_copy", "max_err", "status", "note", "page_size"]


def label(r):
    """A row's name in the tables and the chart: impl, and the page size of
    a paged row."""
    return r["impl"] + (f" page {r['page_size']}" if r.get("page_size")
                        else "")


def kv_bytes(b, lk):
    return 2 * b * HKV * lk * D * 2


def split_rule(w, n, slots):
    """fa::planKvSplits' automatic S for W workgroups per split, n K/V
    blocks and `slots` workgroups resident at a time: the S in [1, min(128,
    n)] of least 16 * ceil(W*S / slots) * (ceil(n/S) + 1) + S (rounds of
    the device times one split's blocks plus one, and S / 16 blocks for the
    combine kernel, which walks each row's S partials in turn), the
    smallest on a tie."""
    best, best_s = None, 1
    for s in range(1, max(1, min(MAX_AUTO_SPLITS, n)) + 1):
        cost = 16 * -(-w * s // slots) * (-(-n // s) + 1) + s
        if best is None or cost < best:
            best, best_s = cost, s
    return best_s


class FaKernel:
    """An fa code object: a dense kernel (ABI 1), a split-KV kernel and its
    combine kernel (ABI 2), or a paged kernel (ABI 3, split-KV or not),
    launched through the CUDA driver on torch's current stream. The module
    is loaded by bench.py's CudaKernel; load=False reads the manifest only
    (--self-test: the words are packed, nothing is launched)."""

    def __init__(self, path, load=True):
        self.path = path
        self.file = os.path.basename(path)
        with open(path + ".json") as f:
            manifest = json.load(f)
        self.info = manifest["kernels"][0]
        self.ck = CudaKernel(path) if load else None
        self.lib = self.ck.lib if load else None
        self.fn = self.ck.fn if load else None
        self.shared = self.info.get("dynamic_lds_bytes", 0)
        if self.info.get("role") == "combine":
            raise RuntimeError(f"{path}: its first kernel is a combine kernel")
        self.abi = int(self.info.get("abi_version", 1))
        self.split = self.info.get("kv_splits") == "runtime"
        self.packed = bool(self.info.get("gqa_packed"))
        self.paged = bool(self.info.get("paged"))
        self.has_lse = bool(self.info.get("has_lse"))
        self.bm, self.bn = self.info["block_m"], self.info["block_n"]
        self.index_bits = int(self.info.get("index_bits", 32))
        self.resources = {"split" if self.split else "kernel":
                          self.info.get("resources", {})}
        want = 3 if self.paged else 2 if self.split else 1
        if self.abi != want:
            raise RuntimeError(
                f"{path}: {'paged ' if self.paged else ''}"
                f"{'split-KV' if self.split else 'dense'} kernel of ABI "
                f"{self.abi}, not {want}")
        self.cinfo = None
        if self.split:
            self.cinfo = next(k for k in manifest["kernels"]
                              if k["name"] == self.info["combine"])
            self.resources["combine"] = self.cinfo.get("resources", {})
            self.cshared = self.cinfo.get("dynamic_lds_bytes", 0)
            self.cfn = None
            if load:
                self.cfn = ctypes.c_void_p()
                self.ck.check(self.lib.cuModuleGetFunction(
                    ctypes.byref(self.cfn), self.ck.module,
                    self.cinfo["symbol"].encode()), "cuModuleGetFunction")
                if self.cshared:
                    self.ck.check(self.lib.cuFuncSetAttribute(
                        self.cfn, 8, self.cshared), "cuFuncSetAttribute")
        self.tile = (f"{self.bm}x{self.bn}, {self.info['threads']} threads"
                     + (", packed" if self.packed else "")
                     + (", paged" if self.paged else "")
                     + (f", idx{self.index_bits}"
                        if self.index_bits != 32 else ""))

    def rows_and_heads(self, b, hq, hkv, lq):
        if self.packed:
            return lq * (hq // hkv), hkv
        return lq, hq

    def auto_splits(self, sms, b, hq, hkv, lq, lk):
        """The runtime's S (fa::planKvSplits, fa/Module.h): with W
        workgroups per split, n K/V blocks and k * SMs resident at a time
        (k: the manifest's blocks_per_sm_estimate, else 2), split_rule(W,
        n, k * SMs). A paged launch's Lk is max(cache_seqlens)."""
        if not self.split:
            return 1
        rows, hg = self.rows_and_heads(b, hq, hkv, lq)
        w = math.ceil(rows / self.bm) * hg * b
        per_sm = self.info.get("resources", {}).get("blocks_per_sm_estimate")
        slots = (per_sm if per_sm and per_sm > 0 else 2) * max(1, sms)
        return split_rule(w, math.ceil(lk / self.bn), slots)

    def workgroups(self, b, hq, hkv, lq, lk, splits):
        """Workgroups of the (split) kernel's grid."""
        rows, hg = self.rows_and_heads(b, hq, hkv, lq)
        return math.ceil(rows / self.bm) * splits * hg * b

    def refusal(self, b, hq, hkv, lq, lk, splits, paged=None):
        """Why the runtime would refuse this shape (32-bit offsets), or ''.
        paged: the cache's metadata (num_pages, page_size, max_pages)."""
        if self.paged != (paged is not None):
            return ("a paged kernel needs a paged cache" if self.paged else
                    "not a paged kernel")
        if self.index_bits != 32:
            return ""
        block = max(self.bm, self.bn)
        if paged is not None:
            largest = fa_abi.paged_offsets(
                b, hq, hkv, lq, paged["num_pages"], paged["page_size"],
                paged["max_pages"], D, block)
        else:  # contiguous BHLD strides
            largest = fa_abi.dense_offsets(b, hq, hkv, lq, lk, D, block)
        if self.split:
            largest["workspace O"] = splits * b * hq * lq * D
        return fa_abi.refusal_32(largest)

    def prepare(self, q, k, v, o, splits=1, paged=None):
        """A zero-argument launcher for these tensors: q, o BHLD; k, v BHLD
        (dense) or, with paged (a dict: table i32 [B, max_pages], lens i32
        [B], page_size, max_pages, num_pages), the caches [num_pages,
        page_size, Hkv, D]; all contiguous. The launcher's .words and
        .launches ((grid, threads, shared bytes) of each kernel) are what
        it passes."""
        def buf(t):
            return fa_abi.desc(t.data_ptr(), t.numel(), self.index_bits)
        b, hq, lq, _ = q.shape
        keep = []
        lse = None
        if self.has_lse:
            lse = torch.empty(b, hq, lq, device=q.device, dtype=torch.float32)
            keep.append(lse)
        if paged is not None:
            hkv = k.shape[2]
            lk = int(paged["lk"])
            strides = fa_abi.paged_strides(b, hq, hkv, lq, paged["page_size"],
                                           D)
            # (page, head, row within a page) of [pages, page_size, Hkv, D]
            for t in (k, v):
                assert [t.stride(0), t.stride(2), t.stride(1)] == \
                    strides[3:6] and t.stride(3) == 1
            meta = dict(block_table=buf(paged["table"]),
                        cache_seqlens=buf(paged["lens"]),
                        page_size=paged["page_size"],
                        table_stride=paged["max_pages"])
        else:
            hkv, lk = k.shape[1], k.shape[2]
            strides = []
            for t in (q, k, v, o):
                strides += [t.stride(0), t.stride(1), t.stride(2)]
            strides += [hq * lq, lq]
            meta = {}
        assert [q.stride(i) for i in range(3)] == strides[0:3]
        assert [o.stride(i) for i in range(3)] == strides[9:12]
        rows, hg = self.rows_and_heads(b, hq, hkv, lq)
        tiles = math.ceil(rows / self.bm)
        launches = [(self.fn, (tiles * splits, hg, b), self.info["threads"],
                     self.shared)]
        split = {}
        if self.split:
            ws_o = torch.empty(splits * b * hq * lq * D, device=q.device,
                               dtype=torch.float32)
            ws_lse = torch.empty(splits * b * hq * lq, device=q.device,
                                 dtype=torch.float32)
            keep += [ws_o, ws_lse]
            split = dict(split_kv=True, ws_o=buf(ws_o), ws_lse=buf(ws_lse),
                         splits=splits)
            # split_direct at S = 1: the split kernel writes O itself.
            if splits > 1 or not self.info.get("split_direct"):
                launches.append(
                    (self.cfn, (math.ceil(lq / self.cinfo["block_m"]), hq, b),
                     self.cinfo["threads"], self.cshared))
        elif splits != 1:
            raise ValueError(f"{self.file} is not split-KV: S must be 1")
        words = fa_abi.pack(self.abi, buf(q), buf(k), buf(v), buf(o),
                            buf(lse) if lse is not None else None,
                            [b, hq, hkv, lq, lk], strides, **split, **meta)
        arr = (ctypes.c_uint64 * len(words))(*words)
        base = ctypes.addressof(arr)
        params = (ctypes.c_void_p * len(words))(
            *[base + 8 * i for i in range(len(words))])
        lib = self.lib
        check = self.ck.check if self.ck else None
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
        launch.words = words
        launch.launches = [(g, t, sh) for _, g, t, sh in launches]
        launch.keep = keep
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


def load(kernel_dir, names, load_modules=True):
    """The first of `names` in kernel_dir that loads, with the others as
    fallbacks: [FaKernel, ...]; missing files are left out."""
    ks = []
    for n in names:
        p = os.path.join(kernel_dir, n)
        if os.path.exists(p) and os.path.exists(p + ".json"):
            ks.append(FaKernel(p, load=load_modules))
    return ks


def pick(kernels, shape, splits_of, paged=None):
    """The first kernel that can run shape (a tuple b,hq,hkv,lq,lk) with the
    splits splits_of(kernel) gives (over a paged cache: paged, the metadata
    of build_paged); (kernel, S, note) or (None, 0, why)."""
    why = "no kernel file"
    for i, k in enumerate(kernels):
        s = splits_of(k)
        r = k.refusal(*shape, s, paged=paged)
        if not r:
            note = "" if i == 0 else \
                f"{k.file} ({kernels[0].file}: {why})"
            return k, s, note
        why = r
    return None, 0, why


def build_paged(k, v, page_size, seed):
    """The dense K/V [B, Hkv, Lk, D] as paged caches [num_pages, page_size,
    Hkv, D] (contiguous; the FlashAttention 2 / vLLM layout): every sequence
    of the full length Lk over max_pages = ceil(Lk / page_size) pages, the
    B * max_pages pages shuffled over the cache by a seeded permutation
    (sequence b's page j is page table[b][j]); the rows of a last partial
    page past Lk are NaN. Returns (k_cache, v_cache, meta): meta holds the
    table i32 [B, max_pages] and lengths i32 [B] on k's device, page_size,
    max_pages, num_pages and lk, as FaKernel.prepare and .refusal take
    them. Copies in chunks of at most 1 GiB of rows."""
    b, hkv, lk, d = k.shape
    mp = math.ceil(lk / page_size)
    num_pages = b * mp
    gen = torch.Generator().manual_seed(seed)
    perm = torch.randperm(num_pages, generator=gen)
    table = perm.view(b, mp).to(torch.int32)
    index = table.to(device=k.device, dtype=torch.long)
    per = max(1, 2 ** 30 // (mp * page_size * hkv * d * k.element_size()))
    caches = []
    for src in (k, v):
        c = torch.empty(num_pages, page_size, hkv, d, dtype=src.dtype,
                        device=src.device)
        if mp * page_size != lk:
            c.fill_(float("nan"))
        for i in range(0, b, per):
            rows = src[i:i + per].transpose(1, 2)  # [n, Lk, Hkv, D] view
            n = rows.shape[0]
            if mp * page_size != lk:
                full = torch.full((n, mp * page_size, hkv, d), float("nan"),
                                  dtype=src.dtype, device=src.device)
                full[:, :lk] = rows
                rows = full
            c[index[i:i + per].reshape(-1)] = rows.reshape(
                n * mp, page_size, hkv, d)
        caches.append(c)
    meta = dict(table=table.to(k.device).contiguous(),
                lens=torch.full((b,), lk, dtype=torch.int32,
                                device=k.device),
                page_size=page_size, max_pages=mp, num_pages=num_pages,
                lk=lk)
    return caches[0], caches[1], meta


def arg_value(opt, default=None):
    if opt in sys.argv:
        i = sys.argv.index(opt)
        if i + 1 < len(sys.argv):
            return sys.argv[i + 1]
    return default


def main():
    if "--self-test" in sys.argv:
        return self_test(arg_value("--self-test"))
    if len(sys.argv) < 3 or sys.argv[1].startswith("-"):
        print("usage:" + __doc__.split("usage:")[1].split("\n\n")[0])
        return 2
    started = time.monotonic()
    kernel_dir, out_dir = sys.argv[1], sys.argv[2]
    quick = "--quick" in sys.argv
    sweep_all = "--sweep-all" in sys.argv
    skip = set(filter(None, (arg_value("--skip") or "").split(",")))
    unknown = skip - {"dense", "paged", "nosplit", "sweep", "torch"}
    if unknown:
        print(f"--skip: unknown {sorted(unknown)} (dense, paged, nosplit, "
              "sweep, torch)")
        return 2
    budget = float(arg_value("--budget", "0") or 0)
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
    page_sizes = PAGE_SIZES
    for opt in ("--batches", "--lengths", "--page-sizes"):
        if opt in sys.argv:
            vals = [int(x) for x in arg_value(opt).split(",")]
            if opt == "--batches":
                batches = vals
            elif opt == "--lengths":
                lengths = vals
            else:
                page_sizes = vals
    sweep = [1, 4, 16, 64] if quick else SWEEP_SPLITS
    sweep_batches = SWEEP_BATCHES
    if "--splits" in sys.argv:
        sweep = [int(x) for x in arg_value("--splits").split(",")]
        sweep_batches = batches
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

    fa = []
    for impl, names in ([] if "dense" in skip else FA_IMPLS):
        ks = load(kernel_dir, names)
        if not ks:
            print(f"{impl}: none of {names} in {kernel_dir}: no rows",
                  flush=True)
            continue
        fa.append((impl, ks))
    for name, path in variants:
        fa.append((f"fa_{name}", [FaKernel(path)]))
    fa_paged = []
    for impl, names, cheap in ([] if "paged" in skip else FA_PAGED_IMPLS):
        if cheap and "nosplit" in skip:
            continue
        ks = load(kernel_dir, names)
        if not ks:
            print(f"{impl}: none of {names} in {kernel_dir}: no rows",
                  flush=True)
            continue
        fa_paged.append((impl, ks, cheap))

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
            timing="", note="", fa_row=False, workgroups="", page_size=""):
        status = "ok"
        name = impl + (f" page {page_size}" if page_size else "")
        if fa_row and not (err <= TOLERANCE):  # NaN fails too
            status = "FAIL"
            failures.append(f"{name} B={b} Lk={lk} S={s}: max abs error "
                            f"{err:.3g} > {TOLERANCE}")
        gbps = kv_bytes(b, lk) / t / 1e9
        rows.append(dict(date=date, gpu=gpu, driver=driver, commit=commit,
                         section=section, B=b, Hq=HQ, Hkv=HKV, Lq=LQ, Lk=lk,
                         D=D, impl=impl, kernel=kernel, S=s,
                         workgroups=workgroups, tile=tile,
                         timing=timing, us=round(t * 1e6, 2),
                         kv_gbps=round(gbps, 1),
                         pct_copy=round(100 * gbps * 1e9 / copy_bw, 1),
                         max_err=f"{err:.3g}", status=status, note=note,
                         page_size=page_size))
        print(f"  B={b:<4} Lk={lk:<7} {name:26} S={s!s:<3} "
              f"{t * 1e6:10.2f} us {gbps:8.1f} GB/s "
              f"{100 * gbps * 1e9 / copy_bw:5.1f}% of copy  max_err "
              f"{err:.3g}{'  FAIL' if status == 'FAIL' else ''}"
              f"{'  ' + note if note else ''}", flush=True)

    out_of_time = False
    for b in batches:
        for lk in lengths:
            elapsed = time.monotonic() - started
            if budget and elapsed > budget:
                if not out_of_time:
                    print(f"  time budget ({budget:.0f} s) spent after "
                          f"{elapsed:.0f} s: the rest is not run",
                          flush=True)
                out_of_time = True
                skipped.append(f"B={b} Lk={lk}: time budget ({budget:.0f} "
                               "s, --budget) spent")
                continue
            kvb = kv_bytes(b, lk)
            if kvb > MEM_LIMIT:
                skipped.append(f"B={b} Lk={lk}: K/V cache "
                               f"{kvb / 2 ** 30:.0f} GiB > 40 GiB")
                print(f"  B={b:<4} Lk={lk:<7} skipped: K/V cache "
                      f"{kvb / 2 ** 30:.0f} GiB > 40 GiB", flush=True)
                continue
            shape_started = time.monotonic()
            nsets = input_sets(kvb, l2)
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

            def run_fa(section, impl, ks, splits_of, note_extra="",
                       paged_sets=None, page_size=""):
                """fa's row: over the dense sets, or over paged_sets
                (k_cache, v_cache, meta) built from them."""
                meta = paged_sets[0][2] if paged_sets else None
                kern, s, note = pick(ks, shape, splits_of, paged=meta)
                name = impl + (f" page {page_size}" if page_size else "")
                if kern is None:
                    skipped.append(f"{name} B={b} Lk={lk}: {note}")
                    print(f"  B={b:<4} Lk={lk:<7} {name:26} skipped: {note}",
                          flush=True)
                    return
                outs = [torch.empty_like(q) for q, _, _ in sets]
                if paged_sets:
                    fns = [kern.prepare(q, kc, vc, o, s, paged=m)
                           for (q, _, _), (kc, vc, m), o
                           in zip(sets, paged_sets, outs)]
                else:
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
                    fa_row=True, page_size=page_size)
                del fns, outs

            for impl, ks in fa:
                run_fa("main", impl, ks,
                       lambda k: k.auto_splits(sms, *shape))

            # Paged: the same K/V as caches of shuffled pages, one per set
            # (the dense sets stay: the reference and the rows after).
            for ps in page_sizes if fa_paged else []:
                rows_here = [(impl, ks) for impl, ks, cheap in fa_paged
                             if not cheap or kvb <= NOSPLIT_MAX_KV_BYTES]
                if not rows_here:
                    continue
                if 2 * kvb * nsets > MEM_LIMIT:
                    for impl, _ in rows_here:
                        skipped.append(f"{impl} page {ps} B={b} Lk={lk}: "
                                       "the caches beside the dense K/V "
                                       "over 40 GiB")
                    continue
                paged_sets = [build_paged(k, v, ps, seed=PAGE_SEED + 1000 * i
                                          + ps + b + lk)
                              for i, (_, k, v) in enumerate(sets)]
                mp = paged_sets[0][2]["max_pages"]
                for impl, ks in rows_here:
                    run_fa("main", impl, ks,
                           lambda k: k.auto_splits(sms, *shape),
                           paged_sets=paged_sets, page_size=ps,
                           note_extra=f"{b * mp} pages of {ps}, shuffled")
                del paged_sets
                torch.cuda.empty_cache()

            if b in sweep_batches and "sweep" not in skip:
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
            if "torch" not in skip:
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
            print(f"  B={b:<4} Lk={lk:<7} ({nsets} input sets) took "
                  f"{time.monotonic() - shape_started:.1f} s, "
                  f"{time.monotonic() - started:.0f} s so far", flush=True)

    path = os.path.join(out_dir, "decode.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, restval="")
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}")
    write_md(os.path.join(out_dir, "decode.md"), rows,
             fa + [(impl, ks) for impl, ks, _ in fa_paged], copy_bw, gpu,
             driver, commit, date, sms, l2, skipped, failures, gqa_note,
             quick, reps)
    try:
        plot(rows, os.path.join(out_dir, "decode.png"), gpu, copy_bw)
    except Exception as e:  # matplotlib missing: the CSV is the result
        print(f"no chart: {e}")
    print(f"decode.py: {time.monotonic() - started:.0f} s in all")
    if failures:
        print("FAIL: fa outputs off the fp64 reference:")
        for f_ in failures:
            print("  " + f_)
        return 1
    return 0


def input_sets(kvb, l2):
    """Copies of the inputs the graphs rotate over: at least 8x L2 and 512
    MiB together, within MEM_LIMIT."""
    nsets = max(1, math.ceil(max(8 * l2, 2 ** 29) / kvb))
    return min(nsets, max(1, MEM_LIMIT // kvb))


def graph_cost(t, nsets, reps):
    """Seconds graph_time spends on a call of t seconds over nsets sets
    (the calls it makes: each set once, the one-call timing, the side-
    stream warm-up, the replays), plus the check call before it."""
    calls = min(512, max(nsets, math.ceil(10e-3 / max(t, 1e-7))))
    calls = max(nsets, calls // nsets * nsets)
    return t * (1 + nsets + 4 + calls * (1 + reps + 2)) + 0.05


def plan(kernel_dir, batches, lengths, page_sizes, reps, l2=60 * 2 ** 20,
         sms=132, prev_csv=None, skip=()):
    """The rows a run makes, with S, the kernel picked, input sets and
    memory, and the seconds each would take at the times of an earlier
    decode.csv (prev_csv; paged rows at fa_splitkv_packed's time, nosplit
    at fa_dense's): printed; returns the estimated seconds."""
    prev = {}
    if prev_csv and os.path.exists(prev_csv):
        with open(prev_csv) as f:
            for r in csv.DictReader(f):
                if r["section"] in ("main", "splits") and r["us"]:
                    key = (r["impl"], int(r["B"]), int(r["Lk"]),
                           r["section"], r["S"] if r["section"] == "splits"
                           else "")
                    prev[key] = float(r["us"]) * 1e-6
    dense = [] if "dense" in skip else \
        [(i, load(kernel_dir, n, load_modules=False)) for i, n in FA_IMPLS]
    paged = [] if "paged" in skip else \
        [(i, load(kernel_dir, n, load_modules=False), c)
         for i, n, c in FA_PAGED_IMPLS if not (c and "nosplit" in skip)]
    total, missing = 4.0, 0  # the copy ceiling, module loads
    print(f"plan: B {batches}, Lk {lengths}, page sizes {page_sizes}, "
          f"{reps} repetitions")
    for b in batches:
        for lk in lengths:
            kvb = kv_bytes(b, lk)
            if kvb > MEM_LIMIT:
                print(f"  B={b:<4} Lk={lk:<7} skipped (K/V over 40 GiB)")
                continue
            nsets = input_sets(kvb, l2)
            shape = (b, HQ, HKV, LQ, lk)
            secs = 10 * kvb * nsets / 3e12 + 40 * kvb / 3e12 + 0.2
            cells = []

            def row(impl, ks, meta=None, proxy=None, page=""):
                nonlocal secs, missing
                if not ks:
                    return
                k, s, note = pick(ks, shape, lambda k: k.auto_splits(
                    sms, *shape), paged=meta)
                name = impl + (f"@{page}" if page else "")
                if k is None:
                    cells.append(f"{name}: refused ({note})")
                    return
                t = prev.get((proxy or impl, b, lk, "main", ""))
                if t is None:
                    missing += 1
                    t = kvb / 1e12
                secs += graph_cost(t, nsets, reps)
                cells.append(f"{name} S={s} {k.file}"
                             f"{' (' + note + ')' if note else ''}")
            for impl, ks in dense:
                row(impl, ks)
            for ps in page_sizes:
                mp = math.ceil(lk / ps)
                meta = dict(num_pages=b * mp, page_size=ps, max_pages=mp)
                for impl, ks, cheap in paged:
                    if cheap and kvb > NOSPLIT_MAX_KV_BYTES:
                        continue
                    row(impl, ks, meta, "fa_dense" if cheap
                        else "fa_splitkv_packed", page=ps)
            if b in SWEEP_BATCHES and "sweep" not in skip and dense:
                for s in SWEEP_SPLITS:
                    t = prev.get(("fa_splitkv_packed", b, lk, "splits",
                                  str(s)), kvb / 1e12)
                    secs += graph_cost(t, nsets, reps)
            if "torch" not in skip:
                for impl in ["sdpa_flash", "sdpa_cudnn", "sdpa_efficient",
                             "sdpa_math", "eager_fp16"]:
                    t = prev.get((impl, b, lk, "main", ""))
                    if t is not None:
                        secs += graph_cost(t, nsets, reps)
            total += secs
            print(f"  B={b:<4} Lk={lk:<7} {nsets:3} sets "
                  f"{kvb * nsets / 2 ** 30:6.2f} GiB, ~{secs:5.1f} s: "
                  + "; ".join(cells))
    print(f"plan: about {total:.0f} s on an H200"
          + (f" ({missing} rows without an earlier time, guessed at 1 TB/s)"
             if missing else "")
          + (f" (times from {prev_csv})" if prev else " (no earlier times)"))
    return total


def self_test(kernel_dir=None):
    """No GPU: the ABI (fa_abi's self-test), and with torch (CPU) the paged
    caches and FaKernel's words read back against the dense K/V."""
    here = os.path.dirname(os.path.abspath(__file__))
    kernel_dir = kernel_dir or os.path.join(here, "..", "build-sm90",
                                            "bench")
    fa_abi.self_test()
    # split_rule against SplitKvTest's hand-worked values: H200's decode
    # kernel (W = 8 B, 6 blocks per SM on 132 SMs), gfx906's (3 per CU on
    # 60 CUs), the host's 2 slots.
    for w, n, slots, want in [(8, 32, 792, 11), (8, 256, 792, 32),
                              (8, 1024, 792, 64), (64, 1024, 792, 12),
                              (64, 512, 792, 12), (8, 32, 180, 11),
                              (3, 63, 120, 16), (32, 512, 120, 11),
                              (8, 512, 2, 1), (1, 512, 2, 2)]:
        got = split_rule(w, n, slots)
        assert got == want, (w, n, slots, got, want)
    prev = os.path.join(here, "results", "2026-12-01-h200-decode",
                        "decode.csv")
    plan(kernel_dir, BATCHES, CACHE_LENGTHS, PAGE_SIZES, 20, prev_csv=prev)
    plan(kernel_dir, BATCHES, CACHE_LENGTHS, PAGE_SIZES, 20, prev_csv=prev,
         skip=("sweep", "torch", "dense"))
    if torch is None:
        print("decode.py self-test: no torch here: the paged caches and "
              "FaKernel's words were not checked")
        return 0
    checked = 0
    for name in ["paged_d128.cubin", "paged_d128_nosplit.cubin",
                 "paged_d128_idx64.cubin", "decode_d128.cubin",
                 "attn_d128_full.cubin"]:
        path = os.path.join(kernel_dir, name)
        if not os.path.exists(path + ".json"):
            print(f"  {name}: no manifest in {kernel_dir}: not checked")
            continue
        kern = FaKernel(path, load=False)
        for b, lk, ps in ([(3, 40, 16), (2, 64, 16), (2, 300, 256),
                           (1, 256, 256)] if kern.paged else
                          [(3, 40, 0), (2, 333, 0)]):
            g = torch.Generator().manual_seed(b * 1000 + lk)

            def rnd(*shape):
                return torch.randn(*shape, generator=g).to(torch.float16)
            q, k, v = rnd(b, HQ, LQ, D), rnd(b, HKV, lk, D), \
                rnd(b, HKV, lk, D)
            o = torch.empty_like(q)
            meta = None
            if kern.paged:
                kc, vc, meta = build_paged(k, v, ps, seed=lk + ps)
                mp = meta["max_pages"]
                assert kc.shape == (b * mp, ps, HKV, D) and kc.is_contiguous()
                assert sorted(meta["table"].reshape(-1).tolist()) == \
                    list(range(b * mp))
                if b * mp > 2:
                    assert meta["table"].reshape(-1).tolist() != \
                        list(range(b * mp)), "pages not shuffled"
                # Rows past Lk in a last partial page: NaN.
                if mp * ps != lk:
                    for bb in range(b):
                        last = int(meta["table"][bb, -1])
                        assert torch.isnan(
                            kc[last, lk - (mp - 1) * ps:].float()).all()
                kk, vv = kc, vc
            else:
                kk, vv = k, v
            s = kern.auto_splits(132, b, HQ, HKV, LQ, lk)
            fn = kern.prepare(q, kk, vv, o, s, paged=meta)
            words = fn.words
            assert len(words) == fa_abi.NUM_WORDS[kern.abi]
            assert words[fa_abi.SIZES:fa_abi.SIZES + 5] == [b, HQ, HKV, LQ,
                                                           lk]
            view = fa_abi.AbiView(words, kern.abi)
            kb = {"K": k.view(torch.int16).numpy() if hasattr(k, "numpy")
                  else None}
            bits = {"K": k.view(torch.int16), "V": v.view(torch.int16),
                    "Q": q.view(torch.int16)}
            for bb in range(b):
                assert view.seqlen_k(bb) == lk
                for h in range(HKV):
                    for r in range(lk):
                        for dd in range(0, D, 7):
                            for op in "KV":
                                assert view.element_bits(op, bb, h, r, dd) \
                                    == int(bits[op][bb, h, r, dd]) & 0xFFFF, \
                                    (name, op, bb, h, r, dd)
                for h in range(HQ):
                    for dd in range(D):
                        assert view.element_bits("Q", bb, h, 0, dd) == \
                            int(bits["Q"][bb, h, 0, dd]) & 0xFFFF
                    assert view.offset("O", bb, h, 0, D - 1) == \
                        (bb * HQ + h) * D + D - 1
                    if kern.has_lse:
                        assert view.offset("LSE", bb, h, 0) == bb * HQ + h
            del kb
            # The grid of each launch.
            rows_, hg = kern.rows_and_heads(b, HQ, HKV, LQ)
            grids = [g_ for g_, _, _ in fn.launches]
            assert grids[0] == (math.ceil(rows_ / kern.bm) * s, hg, b)
            if kern.split:
                assert words[fa_abi.SPLITS] == s and len(grids) == 2
                assert grids[1] == (1, HQ, b)
                assert words[fa_abi.WS_O + 3] == s * b * HQ * LQ * D
            elif kern.abi >= 3:
                assert words[fa_abi.WS_O:fa_abi.SPLITS + 1] == \
                    fa_abi.NULL * 2 + [1]
            if kern.paged:
                assert words[fa_abi.PAGE_SIZE] == ps
                assert words[fa_abi.BLOCK_TABLE_STRIDE] == meta["max_pages"]
                assert words[fa_abi.CACHE_SEQLENS + 3] == b
            assert (words[fa_abi.LSE + 3] == b * HQ * LQ) == kern.has_lse
            checked += 1
            print(f"  {name} ({kern.tile}, ABI {kern.abi}) B={b} Lk={lk}"
                  + (f" page {ps}" if ps else "") + f" S={s}: words and "
                  f"grid {grids} ok")
        # The 32-bit checks at the benchmark's shapes.
        for b, lk in [(128, 32768), (32, 131072), (8, 131072),
                      (128, 8192)]:
            meta = None
            if kern.paged:
                mp = lk // 16
                meta = dict(num_pages=b * mp, page_size=16, max_pages=mp)
            why = kern.refusal(b, HQ, HKV, LQ, lk, 64, paged=meta)
            big = 2 * b * HKV * lk * D > 2 * fa_abi.INT32_MAX
            assert bool(why) == (big and kern.index_bits == 32), \
                (name, b, lk, why)
    print(f"decode.py self-test passed ({checked} launches' words read back"
          " against the dense K/V)")
    return 0


def write_md(path, rows, fa, copy_bw, gpu, driver, commit, date, sms, l2,
             skipped, failures, gqa_note, quick, reps):
    main_rows = [r for r in rows if r["section"] == "main"]
    batches = sorted({r["B"] for r in main_rows})
    lengths = sorted({r["Lk"] for r in main_rows})
    impls = []
    for r in main_rows:
        if label(r) not in impls:
            impls.append(label(r))
    L = [f"# Decode attention on {gpu}: fa vs PyTorch\n"]
    L.append(f"- date {date}, driver {driver}, commit {commit}, torch "
             f"{torch.__version__}, {sms} SMs, L2 {l2 / 2 ** 20:.0f} MiB"
             + (", --quick" if quick else ""))
    L.append(f"- f16, D={D}, Hq={HQ}, Hkv={HKV}, Lq={LQ}, dense K/V cache "
             "[B, Hkv, Lk, D] contiguous; K/V GB/s = 2·B·Hkv·Lk·D·2 bytes "
             "/ time")
    L.append("- fa_paged_*: the same K/V as paged caches [num_pages, "
             "page_size, Hkv, D] contiguous (the FlashAttention 2 / vLLM "
             "layout), page size 16 and 256, every sequence of the full "
             "length Lk, its pages shuffled over the cache (seeded "
             "permutation; one cache per input set, built from the dense "
             "set); S by the same rule over Lk = max(cache_seqlens); "
             "checked against the dense K/V's reference; "
             f"fa_paged_nosplit only where K/V ≤ "
             f"{NOSPLIT_MAX_KV_BYTES // 2 ** 20} MiB")
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
             "[1, min(128, n)] of least 16·⌈W·S / (k·SMs)⌉ · (⌈n/S⌉ + 1) + S, "
             "W the workgroups of one split, n = ⌈Lk/block_n⌉, k the "
             "kernel's blocks/SM (est.); the + S is the combine kernel's "
             "serial walk over the splits (the smallest on a tie)")
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
                m = [r for r in main_rows if label(r) == impl and
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
        if label(r) not in impls:
            impls.append(label(r))
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
                         if label(r) == impl and r["B"] == b)
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
