#!/usr/bin/env python3
"""fa prefill over variable-length batches (the varlen path) vs fa's dense
kernel and PyTorch, on one NVIDIA GPU, in one run (never a timed test).

The issue's goal: prefill through the varlen path within 5% of the dense
kernel's TFLOP/s on the same total tokens. f16, D=128, heads (Hq, Hkv) in
{(16, 16), (32, 8)}, T total tokens in {16k, 64k}, L in {512, 2048, 8192},
causal and not (bottom-right; Lq = Lk within each sequence). Rows:

  fa_dense          attn_d128_{full,causal}.cubin (ABI 1) on B = T / L
                    sequences of length L, [B, H, L, D] contiguous (bench.py's
                    layout)
  fa_dense_packed   the same kernel on the packed tensors below through its
                    strides (batch L*H*D, head D, row H*D): the memory the
                    varlen rows read
  fa_varlen         varlen_d128_{full,causal}.cubin (ABI 4, 77 words) on the
                    same B sequences packed: Q, O [T, Hq, D], K, V [T, Hkv,
                    D], LSE [Hq, T], cu_seqlens = prefix sums of the lengths,
                    grid (ceil(max_seqlen_q / block_m), Hq, B)
  fa_varlen_mixed   the same kernel on the same T tokens as one batch of
                    mixed lengths: drawn uniformly from [L/4, 7L/4] with a
                    seed (the last one is what is left)
  sdpa_flash        PyTorch SDPA, flash backend forced, on the [B, H, L, D]
                    layout (enable_gqa=True where it takes it, else K/V
                    expanded beforehand, outside the timing)
  torch_varlen      torch.nn.attention.varlen.varlen_attn (PyTorch's own
                    varlen flash attention, where this torch has it) on the
                    packed equal-length batch; torch_varlen_mixed on the mixed
                    one

Metric: TFLOP/s of the visible pairs, 4 * D * Hq * sum over sequences of
the (query, key) pairs attention visits (Lq * Lk, or causal: row i sees
Lk - Lq + i + 1 keys), over the time, and each row's percentage of
fa_dense's on the same shape (for the mixed rows: their own FLOPs over
their time, against fa_dense's rate). Time: median of CUDA-event-timed
calls after warm-up. Every output (O, and fa varlen's LSE) is compared whole
with an fp64 reference computed per sequence; an fa row whose max abs error
exceeds 2e-2 in O (or 2e-2 in LSE over the rows that see a key), or that
leaves an element unwritten (outputs NaN-poisoned first), fails the run
(exit status 1, after the files are written).

usage: varlen.py KERNEL_DIR OUT_DIR [--quick] [--totals T,..] [--lengths L,..]
                 [--heads HQ/HKV,..] [--causal 0,1] [--skip WHAT,..]
                 [--budget SECONDS] [--reps N]
       varlen.py --self-test [KERNEL_DIR]

--quick: T 16k only, 5 repetitions; --skip: leave out dense_packed, mixed
(both mixed rows), sdpa, torch_varlen; --budget: start no new shape after
SECONDS (the rest is listed as not run; the files are still written).
KERNEL_DIR is bench/build-kernels.sh's OUT/bench. Writes OUT_DIR/varlen.csv,
OUT_DIR/varlen.md, OUT_DIR/varlen.png.

--self-test needs no GPU: the words of both fa launches (ABI 4 varlen and
ABI 1 over the packed tensors) read back element by element over host
memory, the fp64 reference against a plain loop, the FLOPs, the shape plan
and an estimate of the run's time (plain Python without torch; the tensor
checks with CPU torch).
"""
import csv
import ctypes
import datetime
import inspect
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

warnings.filterwarnings("ignore", category=UserWarning)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fa_abi  # noqa: E402
import decode  # noqa: E402  (FaKernel: the dense kernel's launcher)
try:
    from bench import CudaKernel  # noqa: E402  (bench.py's cubin loader)
except ImportError:
    CudaKernel = None

D = 128
HEADS = [(16, 16), (32, 8)]
TOTALS = [16384, 65536]
LENGTHS = [512, 2048, 8192]
CAUSAL = [False, True]
MIX_SEED = 20261202
TOLERANCE = 2e-2
LSE_TOLERANCE = 2e-2
SKIPPABLE = {"dense_packed", "mixed", "sdpa", "torch_varlen"}

COLUMNS = ["date", "gpu", "driver", "commit", "Hq", "Hkv", "D",
           "total_tokens", "L", "B", "max_seqlen", "causal", "lengths",
           "impl", "kernel", "layout", "gflop", "ms", "tflops",
           "pct_fa_dense", "max_err", "lse_err", "status", "note"]


class VarlenKernel:
    """An fa varlen kernel (ABI 4: fa.attention with `varlen`, not
    split-KV), launched through the CUDA driver on torch's current stream;
    load=False reads the manifest only (--self-test)."""

    def __init__(self, path, load=True):
        self.path = path
        self.file = os.path.basename(path)
        with open(path + ".json") as f:
            self.manifest = json.load(f)
        self.info = self.manifest["kernels"][0]
        problems = self.check_manifest(self.info)
        if problems:
            raise RuntimeError(f"{path}: " + "; ".join(problems))
        self.ck = CudaKernel(path) if load else None
        self.fn = self.ck.fn if load else None
        self.shared = self.info.get("dynamic_lds_bytes", 0)
        self.bm = self.info["block_m"]
        self.threads = self.info["threads"]
        self.index_bits = int(self.info.get("index_bits", 32))
        self.has_lse = bool(self.info.get("has_lse"))
        self.causal = bool(self.info.get("causal"))
        self.tile = (f"{self.bm}x{self.info['block_n']}, {self.threads} "
                     "threads" + (f", idx{self.index_bits}"
                                  if self.index_bits != 32 else ""))

    @staticmethod
    def check_manifest(info):
        """What this script needs of a varlen kernel's manifest entry."""
        out = []
        if int(info.get("abi_version", 0)) != 4:
            out.append(f"abi_version {info.get('abi_version')}, not 4")
        if info.get("varlen") is not True:
            out.append(f"varlen is {info.get('varlen')!r}, not true")
        if info.get("kv_splits") == "runtime" or info.get("gqa_packed"):
            out.append("a split-KV or GQA-packed varlen kernel: this script "
                       "launches only the plain one")
        if info.get("paged"):
            out.append("paged too")
        for key in ("block_m", "block_n", "threads", "symbol"):
            if key not in info:
                out.append(f"no {key}")
        if info.get("head_dim") != D or info.get("dtype") != "f16":
            out.append(f"head_dim {info.get('head_dim')} dtype "
                       f"{info.get('dtype')}, not {D} f16")
        if info.get("role") == "combine":
            out.append("its first kernel is a combine kernel")
        return out

    def refusal(self, hq, hkv, total_q, total_k, max_q, max_k):
        if self.index_bits != 32:
            return ""
        block = max(self.bm, self.info["block_n"])
        return fa_abi.refusal_32(fa_abi.varlen_offsets(
            hq, hkv, total_q, total_k, max_q, max_k, D, block))

    def prepare(self, q, k, v, o, lse, cu_q, cu_k, max_q, max_k):
        """A zero-argument launcher: q, o [T, Hq, D], k, v [T, Hkv, D], lse
        f32 [Hq, T] (or None for a kernel without LSE), cu_q, cu_k i32
        [B+1], all contiguous on one device. .words and .launches are what
        it passes."""
        def buf(t):
            return fa_abi.desc(t.data_ptr(), t.numel(), self.index_bits)
        for t in (q, k, v, o, cu_q, cu_k) + ((lse,) if lse is not None
                                            else ()):
            assert t.is_contiguous()
        total_q, hq, _ = q.shape
        hkv = k.shape[1]
        b = cu_q.numel() - 1
        assert cu_k.numel() == b + 1
        if self.has_lse != (lse is not None):
            raise ValueError(f"{self.file}: has_lse is {self.has_lse}")
        words = fa_abi.pack(
            4, buf(q), buf(k), buf(v), buf(o),
            buf(lse) if lse is not None else None,
            [b, hq, hkv, max_q, max_k],
            fa_abi.varlen_strides(hq, hkv, total_q, D),
            cu_q=buf(cu_q), cu_k=buf(cu_k))
        grid = (math.ceil(max_q / self.bm), hq, b)
        arr = (ctypes.c_uint64 * len(words))(*words)
        base = ctypes.addressof(arr)
        params = (ctypes.c_void_p * len(words))(
            *[base + 8 * i for i in range(len(words))])
        c_grid = [ctypes.c_uint(g) for g in grid]
        ck, fn, threads, shared = self.ck, self.fn, self.threads, self.shared

        def launch():
            stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
            ck.check(ck.lib.cuLaunchKernel(
                fn, *c_grid, ctypes.c_uint(threads), ctypes.c_uint(1),
                ctypes.c_uint(1), ctypes.c_uint(shared), stream, params,
                None), "cuLaunchKernel")
            return o
        launch.arrays = (arr, params)
        launch.words = words
        launch.launches = [(grid, threads, shared)]
        return launch


# ---- the fp64 reference ---------------------------------------------------

def reference(q, k, v, cu_q, cu_k, causal, scale=None, budget=2 ** 30):
    """fp64 attention of each packed sequence: (O [T, Hq, D] f64, LSE
    [Hq, T] f64), causal bottom-right within each sequence (row i of Lq
    sees keys j <= i + Lk - Lq); a sequence of no keys gives O = 0 and
    LSE = -inf. K/V head h // (Hq / Hkv) serves query head h. Chunked over
    heads and query rows so that a chunk's scores stay within `budget`
    bytes."""
    total, hq, d = q.shape
    hkv = k.shape[1]
    g = hq // hkv
    scale = scale if scale is not None else 1.0 / math.sqrt(d)
    out = torch.zeros(total, hq, d, dtype=torch.float64, device=q.device)
    lse = torch.full((hq, total), float("-inf"), dtype=torch.float64,
                     device=q.device)
    cq = cu_q.tolist() if hasattr(cu_q, "tolist") else list(cu_q)
    ck = cu_k.tolist() if hasattr(cu_k, "tolist") else list(cu_k)
    for b in range(len(cq) - 1):
        lq, lk = cq[b + 1] - cq[b], ck[b + 1] - ck[b]
        if lq == 0 or lk == 0:
            continue
        ks = k[ck[b]:ck[b + 1]].transpose(0, 1).double()  # [Hkv, Lk, D]
        vs = v[ck[b]:ck[b + 1]].transpose(0, 1).double()
        heads = max(1, min(hq, budget // (8 * lk * max(1, min(lq, 4096)))))
        rows = max(1, min(lq, budget // (8 * lk * heads)))
        for h0 in range(0, hq, heads):
            h1 = min(hq, h0 + heads)
            kv_idx = torch.arange(h0, h1, device=q.device) // g
            kh, vh = ks[kv_idx], vs[kv_idx]       # [h, Lk, D]
            for r0 in range(0, lq, rows):
                r1 = min(lq, r0 + rows)
                qs = q[cq[b] + r0:cq[b] + r1, h0:h1].transpose(0, 1).double()
                s = torch.matmul(qs, kh.transpose(1, 2)) * scale
                if causal:
                    i = torch.arange(r0, r1, device=q.device).view(-1, 1)
                    j = torch.arange(lk, device=q.device).view(1, -1)
                    s = s.masked_fill(j > i + (lk - lq), float("-inf"))
                m = s.amax(dim=-1, keepdim=True)
                seen = torch.isfinite(m)
                m = torch.where(seen, m, torch.zeros_like(m))
                e = torch.exp(s - m)
                z = e.sum(dim=-1, keepdim=True)
                o_ = torch.matmul(e, vh) / torch.where(z > 0, z,
                                                      torch.ones_like(z))
                out[cq[b] + r0:cq[b] + r1, h0:h1] = o_.transpose(0, 1)
                l_ = (m + torch.log(z)).squeeze(-1)
                lse[h0:h1, cq[b] + r0:cq[b] + r1] = torch.where(
                    seen.squeeze(-1), l_, torch.full_like(l_, float("-inf")))
                del s, e, o_
    return out, lse


def max_err(out, ref):
    """Max abs error, NaN where an element is not finite (unwritten)."""
    if not torch.isfinite(out).all():
        return float("nan")
    return (out.double() - ref).abs().max().item()


def lse_err(lse, ref):
    """Max abs LSE error over the rows that see a key (both -inf
    elsewhere, else NaN)."""
    finite = torch.isfinite(ref)
    lse = lse.double()
    if not torch.equal(torch.isfinite(lse), finite) or torch.isnan(lse).any():
        return float("nan")
    if not finite.any():
        return 0.0
    return (lse[finite] - ref[finite]).abs().max().item()


# ---- PyTorch peers --------------------------------------------------------

def sdpa_flash(causal, gqa):
    from torch.nn.attention import SDPBackend, sdpa_kernel

    def run(q, k, v):
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            if gqa:
                return F.scaled_dot_product_attention(
                    q, k, v, is_causal=causal, enable_gqa=True)
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return run


def torch_varlen_fn():
    """(run(q, k, v, cu_q, cu_k, max_q, max_k, causal, gqa), how) for
    torch.nn.attention.varlen.varlen_attn, or (None, why not)."""
    try:
        from torch.nn.attention.varlen import varlen_attn
    except Exception as e:
        return None, (f"torch {torch.__version__} has no "
                      f"torch.nn.attention.varlen.varlen_attn ({e})")
    params = inspect.signature(varlen_attn).parameters

    def run(q, k, v, cu_q, cu_k, max_q, max_k, causal, gqa):
        kw = {}
        if "is_causal" in params:
            kw["is_causal"] = causal
        elif causal:
            kw["window_size"] = (-1, 0)
        if gqa and "enable_gqa" in params:
            kw["enable_gqa"] = True
        return varlen_attn(q, k, v, cu_q, cu_k, max_q, max_k, **kw)
    how = ("is_causal" if "is_causal" in params else "window_size (-1, 0)"
           if "window_size" in params else "no causal argument")
    return run, f"varlen_attn{inspect.signature(varlen_attn)}; causal by {how}"


def event_time(fn, reps, warmup=2):
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


# ---- shapes ---------------------------------------------------------------

def shapes(heads, totals, lengths, causals):
    """(hq, hkv, total, L, causal, equal lengths, mixed lengths) in run
    order."""
    out = []
    for hq, hkv in heads:
        for total in totals:
            for lm in lengths:
                if total % lm:
                    raise ValueError(f"T={total} is not a multiple of L={lm}")
                equal = [lm] * (total // lm)
                mixed = fa_abi.mixed_lengths(total, lm,
                                             seed=MIX_SEED + total + lm)
                for c in causals:
                    out.append((hq, hkv, total, lm, c, equal, mixed))
    return out


def estimate(plan, reps, fa_tflops=31.0, torch_tflops=300.0, skip=()):
    """Seconds a run of these shapes takes at fa_tflops (fa's dense and
    varlen kernels, run 4 ways) and torch_tflops (SDPA flash, varlen_attn),
    with the fp64 reference (every sequence's whole score matrix, at about
    20 TFLOP/s) and per-row overheads."""
    total = 5.0
    fa_rows = 4 - ("dense_packed" in skip) - ("mixed" in skip)
    torch_rows = 3 - ("sdpa" in skip) - 2 * ("torch_varlen" in skip) \
        - ("mixed" in skip and "torch_varlen" not in skip)
    calls = 1 + 2 + reps
    for hq, hkv, t, lm, c, equal, mixed in plan:
        fe = fa_abi.attention_flops(equal, equal, hq, D, c)
        fm = fa_abi.attention_flops(mixed, mixed, hq, D, c)
        full = fa_abi.attention_flops(equal, equal, hq, D, False) + \
            fa_abi.attention_flops(mixed, mixed, hq, D, False)
        fa = fe * (fa_rows - 1) + fm
        total += calls * (fa / (fa_tflops * 1e12) +
                          (fe * torch_rows) / (torch_tflops * 1e12))
        total += full / 20e12 + 0.3 + 0.05 * (fa_rows + torch_rows)
    return total


# ---- the run ----------------------------------------------------------------

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
    reps = int(arg_value("--reps", "5" if quick else "10"))
    totals = [16384] if quick else TOTALS
    lengths, heads, causals = LENGTHS, HEADS, CAUSAL
    if arg_value("--totals"):
        totals = [int(x) for x in arg_value("--totals").split(",")]
    if arg_value("--lengths"):
        lengths = [int(x) for x in arg_value("--lengths").split(",")]
    if arg_value("--heads"):
        heads = [tuple(int(y) for y in x.split("/"))
                 for x in arg_value("--heads").split(",")]
    if arg_value("--causal"):
        causals = [bool(int(x)) for x in arg_value("--causal").split(",")]
    skip = set(filter(None, (arg_value("--skip") or "").split(",")))
    if skip - SKIPPABLE:
        print(f"--skip: unknown {sorted(skip - SKIPPABLE)} "
              f"({', '.join(sorted(SKIPPABLE))})")
        return 2
    budget = float(arg_value("--budget", "0") or 0)
    os.makedirs(out_dir, exist_ok=True)
    plan = shapes(heads, totals, lengths, causals)

    torch.manual_seed(0)
    torch.zeros(1, device="cuda")  # the primary context the cubins load into
    torch.backends.cuda.matmul.allow_tf32 = False
    props = torch.cuda.get_device_properties(0)
    sms = props.multi_processor_count
    gpu = torch.cuda.get_device_name()
    driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version",
                             "--format=csv,noheader"], capture_output=True,
                            text=True).stdout.strip()
    commit = os.environ.get("FA_COMMIT", "unknown")
    date = datetime.date.today().isoformat()

    dense_k, varlen_k, notes = {}, {}, []
    for c in (False, True):
        mode = "causal" if c else "full"
        p = os.path.join(kernel_dir, f"attn_d128_{mode}.cubin")
        if os.path.exists(p + ".json"):
            dense_k[c] = decode.FaKernel(p)
        else:
            notes.append(f"no {p}: no fa_dense rows ({mode})")
        p = os.path.join(kernel_dir, f"varlen_d128_{mode}.cubin")
        if os.path.exists(p + ".json"):
            varlen_k[c] = VarlenKernel(p)
            if varlen_k[c].causal != c:
                raise RuntimeError(f"{p}: causal is {varlen_k[c].causal}")
        else:
            notes.append(f"no {p}: no fa_varlen rows ({mode})")
    tv_run, tv_how = torch_varlen_fn() if "torch_varlen" not in skip \
        else (None, "skipped (--skip)")
    for n in notes:
        print(n, flush=True)
    print(f"{gpu} ({sms} SMs) driver {driver} commit {commit}, torch "
          f"{torch.__version__}; torch varlen: {tv_how}", flush=True)
    print(f"{len(plan)} shapes, {reps} repetitions; estimated "
          f"{estimate(plan, reps, skip=skip):.0f} s", flush=True)

    rows, failures, skipped = [], [], []
    gqa_modes = {}
    for hq, hkv, total, lm, causal, equal, mixed in plan:
        elapsed = time.monotonic() - started
        tag = (f"Hq={hq:<2} Hkv={hkv:<2} T={total:<5} L={lm:<4} "
               f"{'causal' if causal else 'full  '}")
        if budget and elapsed > budget:
            skipped.append(f"{tag}: time budget ({budget:.0f} s, --budget) "
                           "spent")
            print(f"  {tag}: not run (time budget spent after "
                  f"{elapsed:.0f} s)", flush=True)
            continue
        shape_started = time.monotonic()
        b = total // lm
        gqa = hq != hkv
        # Packed inputs: the equal-length batch and the mixed one are the
        # same T tokens with other cu_seqlens.
        q = torch.randn(total, hq, D, device="cuda", dtype=torch.float16)
        k = torch.randn(total, hkv, D, device="cuda", dtype=torch.float16)
        v = torch.randn(total, hkv, D, device="cuda", dtype=torch.float16)
        batches = {"equal": equal}
        if "mixed" not in skip:
            batches["mixed"] = mixed
        cu = {n: torch.tensor(fa_abi.cu_seqlens(ls), dtype=torch.int32,
                              device="cuda") for n, ls in batches.items()}
        refs = {n: reference(q, k, v, cu[n], cu[n], causal)
                for n in batches}
        flops = {n: fa_abi.attention_flops(ls, ls, hq, D, causal)
                 for n, ls in batches.items()}
        shape_rows = []

        def add(impl, lengths_kind, t, err, lerr=None, kernel="", layout="",
                note="", fa_row=False):
            fl = flops[lengths_kind]
            status = "ok"
            if fa_row and not (err <= TOLERANCE and
                               (lerr is None or lerr <= LSE_TOLERANCE)):
                status = "FAIL"
                failures.append(f"{impl} {tag}: max abs error {err:.3g}"
                                + (f", LSE {lerr:.3g}" if lerr is not None
                                   else ""))
            ls = batches[lengths_kind]
            r = dict(date=date, gpu=gpu, driver=driver, commit=commit,
                     Hq=hq, Hkv=hkv, D=D, total_tokens=total, L=lm,
                     B=len(ls), max_seqlen=max(ls), causal=int(causal),
                     lengths=lengths_kind, impl=impl, kernel=kernel,
                     layout=layout, gflop=round(fl / 1e9, 1),
                     ms=round(t * 1e3, 4), tflops=round(fl / t / 1e12, 2),
                     pct_fa_dense="", max_err=f"{err:.3g}",
                     lse_err="" if lerr is None else f"{lerr:.3g}",
                     status=status, note=note)
            rows.append(r)
            shape_rows.append(r)
            print(f"  {tag} {impl:18} {fl / t / 1e12:7.2f} TFLOP/s "
                  f"{t * 1e3:9.3f} ms max_err {err:.3g}"
                  + (f" lse {lerr:.3g}" if lerr is not None else "")
                  + ("  FAIL" if status == "FAIL" else "")
                  + (f"  {note}" if note else ""), flush=True)

        def unavailable(impl, e):
            torch.cuda.synchronize()
            msg = str(e).splitlines()[0][:100] if str(e) else \
                type(e).__name__
            skipped.append(f"{impl} {tag}: {msg}")
            print(f"  {tag} {impl:18} unavailable: {msg}", flush=True)

        ref_o, ref_l = refs["equal"]
        # The dense layout [B, H, L, D] (copies) and views of the packed
        # tensors in it.
        qd, kd, vd = (x.view(b, lm, x.shape[1], D).transpose(1, 2)
                      .contiguous() for x in (q, k, v))

        def dense_out_err(o_bhld):
            return max_err(o_bhld.transpose(1, 2).reshape(total, hq, D),
                           ref_o)

        if causal in dense_k:
            kern = dense_k[causal]
            layouts = [("fa_dense", "[B, H, L, D] contiguous", qd, kd, vd,
                        None)]
            if "dense_packed" not in skip:
                layouts.append(("fa_dense_packed", "packed [T, H, D] via "
                                "strides", *(x.view(b, lm, x.shape[1], D)
                                             .transpose(1, 2)
                                             for x in (q, k, v)), True))
            for impl, layout, qq, kk, vv, packed in layouts:
                why = kern.refusal(b, hq, hkv, lm, lm, 1)
                if why:
                    unavailable(impl, why)
                    continue
                if packed:
                    o_p = torch.full_like(q, float("nan"))
                    o = o_p.view(b, lm, hq, D).transpose(1, 2)
                else:
                    o = torch.full_like(qq, float("nan"))
                fn = kern.prepare(qq, kk, vv, o, 1)
                fn()
                torch.cuda.synchronize()
                err = max_err(o_p, ref_o) if packed else dense_out_err(o)
                t = event_time(fn, reps)
                add(impl, "equal", t, err, kernel=kern.file, layout=layout,
                    fa_row=True)
                del fn, o
        if causal in varlen_k:
            kern = varlen_k[causal]
            for n in batches:
                impl = "fa_varlen" + ("_mixed" if n == "mixed" else "")
                ls = batches[n]
                why = kern.refusal(hq, hkv, total, total, max(ls), max(ls))
                if why:
                    unavailable(impl, why)
                    continue
                o = torch.full_like(q, float("nan"))
                lse = torch.full((hq, total), float("nan"), device="cuda",
                                 dtype=torch.float32) if kern.has_lse \
                    else None
                fn = kern.prepare(q, k, v, o, lse, cu[n], cu[n], max(ls),
                                  max(ls))
                fn()
                torch.cuda.synchronize()
                err = max_err(o, refs[n][0])
                lerr = lse_err(lse, refs[n][1]) if lse is not None else None
                t = event_time(fn, reps)
                add(impl, n, t, err, lerr, kernel=kern.file,
                    layout="packed [T, H, D], cu_seqlens", fa_row=True,
                    note=f"B={len(ls)}, lengths {min(ls)}..{max(ls)}"
                    if n == "mixed" else "")
                del fn, o, lse
        if "sdpa" not in skip:
            try:
                data, mode = (qd, kd, vd), "enable_gqa" if gqa else ""
                fn = sdpa_flash(causal, gqa)
                try:
                    out = fn(*data)
                except Exception:
                    if not gqa:
                        raise
                    g = hq // hkv
                    data = (qd, kd.repeat_interleave(g, dim=1),
                            vd.repeat_interleave(g, dim=1))
                    fn, mode = sdpa_flash(causal, False), "K/V expanded"
                    out = fn(*data)
                torch.cuda.synchronize()
                err = dense_out_err(out)
                del out
                t = event_time(lambda: fn(*data), reps)
                gqa_modes.setdefault("sdpa_flash", set()).add(mode or "-")
                add("sdpa_flash", "equal", t, err,
                    layout="[B, H, L, D] contiguous", note=mode)
                del data
            except Exception as e:
                unavailable("sdpa_flash", e)
        if tv_run is not None:
            for n in batches:
                impl = "torch_varlen" + ("_mixed" if n == "mixed" else "")
                ls = batches[n]
                try:
                    data, mode = (q, k, v), "GQA as is" if gqa else ""
                    args = (cu[n], cu[n], max(ls), max(ls), causal)
                    try:
                        out = tv_run(*data, *args, gqa)
                        torch.cuda.synchronize()
                    except Exception:
                        if not gqa:
                            raise
                        g = hq // hkv
                        data = (q, k.repeat_interleave(g, dim=1),
                                v.repeat_interleave(g, dim=1))
                        mode = "K/V expanded"
                        out = tv_run(*data, *args, False)
                    torch.cuda.synchronize()
                    if isinstance(out, tuple):
                        out = out[0]
                    err = max_err(out, refs[n][0])
                    del out
                    t = event_time(lambda: tv_run(*data, *args, gqa and
                                                  mode != "K/V expanded"),
                                   reps)
                    gqa_modes.setdefault(impl, set()).add(mode or "-")
                    add(impl, n, t, err, layout="packed [T, H, D], "
                        "cu_seqlens", note=mode)
                    del data
                except Exception as e:
                    unavailable(impl, e)
        base = [r for r in shape_rows if r["impl"] == "fa_dense"]
        if base:
            for r in shape_rows:
                r["pct_fa_dense"] = round(100 * r["tflops"] /
                                          base[0]["tflops"], 1)
        del q, k, v, qd, kd, vd, refs, ref_o, ref_l, cu
        torch.cuda.empty_cache()
        print(f"  {tag} took {time.monotonic() - shape_started:.1f} s, "
              f"{time.monotonic() - started:.0f} s so far", flush=True)

    path = os.path.join(out_dir, "varlen.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=COLUMNS, restval="")
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}")
    write_md(os.path.join(out_dir, "varlen.md"), rows, dense_k, varlen_k,
             gpu, driver, commit, date, sms, reps, quick, skipped, failures,
             notes, tv_how, gqa_modes)
    try:
        plot(rows, os.path.join(out_dir, "varlen.png"), gpu)
    except Exception as e:  # matplotlib missing: the CSV is the result
        print(f"no chart: {e}")
    print(f"varlen.py: {time.monotonic() - started:.0f} s in all")
    if failures:
        print("FAIL: fa outputs off the fp64 reference:")
        for f_ in failures:
            print("  " + f_)
        return 1
    return 0


def write_md(path, rows, dense_k, varlen_k, gpu, driver, commit, date, sms,
             reps, quick, skipped, failures, notes, tv_how, gqa_modes):
    L = [f"# Varlen prefill on {gpu}: fa's varlen path vs its dense kernel "
         "and PyTorch\n"]
    L.append(f"- date {date}, driver {driver}, commit {commit}, torch "
             f"{torch.__version__}, {sms} SMs" + (", --quick" if quick
                                                  else ""))
    L.append(f"- f16, D={D}; T total tokens as B = T/L sequences of length "
             "L (equal) or as one batch of mixed lengths (uniform in "
             "[L/4, 7L/4], seeded; the last one what is left); causal is "
             "bottom-right within each sequence")
    L.append("- TFLOP/s of the visible pairs: 4·D·Hq·Σ pairs (causal: row i "
             "of L sees i + 1 keys) / time; time: median of "
             f"{reps} CUDA-event-timed calls after warm-up; % = of fa_dense "
             "on the same shape (the mixed rows' own FLOPs and time)")
    L.append(f"- every output checked whole against an fp64 reference per "
             f"sequence; fa rows fail above {TOLERANCE} max abs error in O "
             f"(and {LSE_TOLERANCE} in LSE) or on an unwritten "
             "(NaN-poisoned) element")
    L.append(f"- torch varlen: {tv_how}")
    for impl, modes in sorted(gqa_modes.items()):
        L.append(f"- {impl} at GQA: " + " / ".join(sorted(modes)))
    for c, k in sorted(dense_k.items()):
        L.append(f"- fa_dense{' causal' if c else ''}: `{k.file}` {k.tile}")
    for c, k in sorted(varlen_k.items()):
        L.append(f"- fa_varlen{' causal' if c else ''}: `{k.file}` {k.tile}"
                 f", {k.info.get('resources', {}).get('registers', '?')} "
                 "registers")
    L += [f"- {n}" for n in notes]
    L.append("")
    goal = [r for r in rows if r["impl"] in ("fa_varlen", "fa_varlen_mixed")
            and r["pct_fa_dense"] != ""]
    if goal:
        L.append("## Goal: fa varlen within 5% of fa dense (varlen TFLOP/s "
                 "as % of dense)\n")
        L.append("| Hq/Hkv | T | causal | " + " | ".join(
            f"L={lm}" for lm in sorted({r["L"] for r in goal})) + " |")
        lens = sorted({r["L"] for r in goal})
        L.append("|---|---|---|" + "---|" * len(lens))
        for key in sorted({(r["Hq"], r["Hkv"], r["total_tokens"],
                            r["causal"]) for r in goal}):
            cells = []
            for lm in lens:
                m = {r["impl"]: r for r in goal if (
                    r["Hq"], r["Hkv"], r["total_tokens"], r["causal"]) == key
                    and r["L"] == lm}
                eq, mx = m.get("fa_varlen"), m.get("fa_varlen_mixed")
                cell = (f"{eq['pct_fa_dense']:.1f}%"
                        + (" ✓" if eq["pct_fa_dense"] >= 95 else " ✗")
                        if eq else "—")
                if mx:
                    cell += f" (mixed {mx['pct_fa_dense']:.1f}%)"
                cells.append(cell)
            L.append(f"| {key[0]}/{key[1]} | {key[2]} | "
                     f"{'yes' if key[3] else 'no'} | " + " | ".join(cells)
                     + " |")
        L.append("")
    impls = []
    for r in rows:
        if r["impl"] not in impls:
            impls.append(r["impl"])
    for key in sorted({(r["Hq"], r["Hkv"], r["total_tokens"], r["causal"])
                       for r in rows}):
        hq, hkv, t, c = key
        sel = [r for r in rows if (r["Hq"], r["Hkv"], r["total_tokens"],
                                   r["causal"]) == key]
        lens = sorted({r["L"] for r in sel})
        L.append(f"## Hq={hq} Hkv={hkv}, T={t}, "
                 f"{'causal' if c else 'not causal'}: TFLOP/s (% of "
                 "fa_dense), ms\n")
        L.append("| impl | " + " | ".join(f"L={lm}" for lm in lens) + " |")
        L.append("|---|" + "---|" * len(lens))
        for impl in impls:
            cells = []
            for lm in lens:
                m = [r for r in sel if r["impl"] == impl and r["L"] == lm]
                if not m:
                    cells.append("—")
                    continue
                r = m[0]
                pct = f" ({r['pct_fa_dense']:.0f}%)" \
                    if r["pct_fa_dense"] != "" else ""
                flag = " **FAIL**" if r["status"] == "FAIL" else ""
                cells.append(f"{r['tflops']:.1f}{pct}, {r['ms']:.2f} ms"
                             f"{flag}")
            if any(x != "—" for x in cells):
                L.append(f"| {impl} | " + " | ".join(cells) + " |")
        L.append("")
    if skipped:
        L.append("## Not run\n")
        L += [f"- {s}" for s in skipped]
        L.append("")
    if failures:
        L.append("## FAILURES\n")
        L += [f"- {f}" for f in failures]
        L.append("")
    L.append("![varlen](varlen.png)\n")
    L.append("Columns of varlen.csv: " + ", ".join(COLUMNS) + ".")
    with open(path, "w") as f:
        f.write("\n".join(L) + "\n")
    print(f"wrote {path}")


def plot(rows, path, gpu):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    keys = sorted({(r["Hq"], r["Hkv"], r["total_tokens"], r["causal"])
                   for r in rows})
    if not keys:
        return
    impls = []
    for r in rows:
        if r["impl"] not in impls:
            impls.append(r["impl"])
    cols = min(4, len(keys))
    nrows = math.ceil(len(keys) / cols)
    fig, axes = plt.subplots(nrows, cols, figsize=(4.6 * cols, 3.8 * nrows),
                             squeeze=False)
    axes = [a for row in axes for a in row]
    cmap = plt.get_cmap("tab10")
    for i, key in enumerate(keys):
        ax = axes[i]
        for j, impl in enumerate(impls):
            pts = sorted((r["L"], r["tflops"]) for r in rows
                         if (r["Hq"], r["Hkv"], r["total_tokens"],
                             r["causal"]) == key and r["impl"] == impl)
            if pts:
                fa_ = impl.startswith("fa_")
                ax.plot([p[0] for p in pts], [p[1] for p in pts],
                        "o-" if fa_ else "s:", color=cmap(j % 10),
                        label=impl, linewidth=2.2 if fa_ else 1.4)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("L (mean sequence length)")
        ax.set_ylabel("TFLOP/s")
        ax.set_title(f"Hq={key[0]} Hkv={key[1]} T={key[2]}"
                     f"{' causal' if key[3] else ''}", fontsize=9)
        if i == 0:
            handles, labels = ax.get_legend_handles_labels()
    for ax in axes[len(keys):]:
        ax.axis("off")
    fig.legend(handles, labels, loc="lower center", fontsize=8,
               ncol=min(7, len(labels)))
    fig.suptitle(f"varlen prefill, f16 D={D}, {gpu}: TFLOP/s of the visible "
                 "pairs")
    fig.tight_layout(rect=(0, 0.06, 1, 1))
    fig.savefig(path, dpi=110)
    print(f"wrote {path}")


# ---- self-test ----------------------------------------------------------------

FAKE_VARLEN_MANIFEST = {  # what the self-test assumes without a varlen build
    "name": "attention_kernel", "symbol": "attention_kernel",
    "abi_version": 4, "varlen": True, "dtype": "f16", "head_dim": D,
    "causal": False, "scale": 1 / math.sqrt(D), "has_lse": True,
    "block_m": 128, "block_n": 64,
    "threads": 256, "dynamic_lds_bytes": 165376, "index_bits": 32}


def self_test(kernel_dir=None):
    here = os.path.dirname(os.path.abspath(__file__))
    kernel_dir = kernel_dir or os.path.join(here, "..", "build-sm90",
                                            "bench")
    fa_abi.self_test()
    plan = shapes(HEADS, TOTALS, LENGTHS, CAUSAL)
    print(f"plan: {len(plan)} shapes")
    for hq, hkv, t, lm, c, equal, mixed in plan:
        fe = fa_abi.attention_flops(equal, equal, hq, D, c)
        fm = fa_abi.attention_flops(mixed, mixed, hq, D, c)
        print(f"  Hq={hq:<2} Hkv={hkv:<2} T={t:<5} L={lm:<4} "
              f"{'causal' if c else 'full  '} B={len(equal):<3} "
              f"{fe / 1e9:8.1f} GFLOP; mixed B={len(mixed):<3} lengths "
              f"{min(mixed)}..{max(mixed)} {fm / 1e9:8.1f} GFLOP")
    for skip_, name in [((), "full run"), (("dense_packed",), "--skip "
                                           "dense_packed")]:
        print(f"estimate ({name}): about {estimate(plan, 10, skip=skip_):.0f}"
              f" s at 31 TFLOP/s for fa, 300 for torch; --quick "
              f"{estimate(shapes(HEADS, [16384], LENGTHS, CAUSAL), 5, skip=skip_):.0f} s")
    # Manifests of the varlen builds, if there.
    kernels = {}
    for c in (False, True):
        p = os.path.join(kernel_dir,
                         f"varlen_d128_{'causal' if c else 'full'}.cubin")
        if os.path.exists(p + ".json"):
            with open(p + ".json") as f:
                info = json.load(f)["kernels"][0]
            problems = VarlenKernel.check_manifest(info)
            assert not problems, f"{p}: {problems}"
            assert bool(info.get("causal")) == c
            kernels[c] = VarlenKernel(p, load=False)
            print(f"  {p}: manifest ok ({kernels[c].tile}, has_lse "
                  f"{kernels[c].has_lse}, dynamic shared "
                  f"{kernels[c].shared} B)")
        else:
            print(f"  {p}: not built: the self-test uses a manifest of "
                  "block_m 128, 256 threads")
    if torch is None:
        print("varlen.py self-test: no torch here: the launches' words and "
              "the reference were not checked")
        return 0
    if not kernels:
        import tempfile
        tmp = tempfile.mkdtemp()
        p = os.path.join(tmp, "varlen_fake.cubin")
        with open(p + ".json", "w") as f:
            json.dump({"kernels": [FAKE_VARLEN_MANIFEST]}, f)
        kernels[False] = VarlenKernel(p, load=False)
    g = torch.Generator().manual_seed(5)

    def rnd(*shape):
        return torch.randn(*shape, generator=g).to(torch.float16)
    # 1. The varlen words, element by element, with a sequence of no
    # tokens and lengths off the block sizes.
    for kern in kernels.values():
        for hq, hkv in [(4, 4), (8, 2)]:
            lens_q = [5, 0, 130, 1, 64]
            lens_k = [5, 3, 130, 1, 64]
            cq, ck = fa_abi.cu_seqlens(lens_q), fa_abi.cu_seqlens(lens_k)
            q, o = rnd(cq[-1], hq, D), rnd(cq[-1], hq, D)
            k, v = rnd(ck[-1], hkv, D), rnd(ck[-1], hkv, D)
            lse = torch.zeros(hq, cq[-1]) if kern.has_lse else None
            cqt = torch.tensor(cq, dtype=torch.int32)
            ckt = torch.tensor(ck, dtype=torch.int32)
            fn = kern.prepare(q, k, v, o, lse, cqt, ckt, max(lens_q),
                              max(lens_k))
            view = fa_abi.AbiView(fn.words, 4)
            bits = {n: t.view(torch.int16) for n, t in
                    dict(Q=q, K=k, V=v, O=o).items()}
            for b_ in range(len(lens_q)):
                assert view.seqlen_q(b_) == lens_q[b_]
                assert view.seqlen_k(b_) == lens_k[b_]
                for n in "QKVO":
                    heads = hkv if n in "KV" else hq
                    start = (ck if n in "KV" else cq)[b_]
                    for r in range((lens_k if n in "KV" else lens_q)[b_]):
                        for h in range(heads):
                            for dd in range(0, D, 5):
                                assert view.element_bits(n, b_, h, r, dd) == \
                                    int(bits[n][start + r, h, dd]) & 0xFFFF
                if lse is not None:
                    for h in range(hq):
                        for r in range(lens_q[b_]):
                            assert view.offset("LSE", b_, h, r) == \
                                h * cq[-1] + cq[b_] + r
            assert fn.launches[0][0] == (math.ceil(max(lens_q) / kern.bm),
                                         hq, len(lens_q))
            assert fn.words[fa_abi.SIZES:fa_abi.SIZES + 5] == \
                [len(lens_q), hq, hkv, max(lens_q), max(lens_k)]
            assert fn.words[fa_abi.WS_O:fa_abi.CU_SEQLENS_Q] == \
                fa_abi.NULL * 2 + [1] + fa_abi.NULL * 2 + [0, 0]
            print(f"  {kern.file} Hq={hq} Hkv={hkv} lengths {lens_q}: words "
                  f"and grid {fn.launches[0][0]} ok")
    # 2. The dense kernel over the packed tensors through its strides
    # (fa_dense_packed) and over the BHLD copies (fa_dense).
    p = os.path.join(kernel_dir, "attn_d128_full.cubin")
    if os.path.exists(p + ".json"):
        dk = decode.FaKernel(p, load=False)
        b, lm, hq, hkv = 3, 37, 8, 2
        q, k, v = rnd(b * lm, hq, D), rnd(b * lm, hkv, D), rnd(b * lm, hkv,
                                                               D)
        o = torch.empty_like(q)
        for packed in (True, False):
            views = [x.view(b, lm, x.shape[1], D).transpose(1, 2)
                     for x in (q, k, v, o)]
            if not packed:
                views = [x.contiguous() for x in views]
            fn = dk.prepare(*views, 1)
            view = fa_abi.AbiView(fn.words, 1)
            for n, t in zip("QKV", views[:3]):
                src = dict(Q=q, K=k, V=v)[n].view(torch.int16)
                bt = t.view(torch.int16) if not packed else None
                for b_ in range(b):
                    for h in range(t.shape[1]):
                        for r in range(lm):
                            for dd in range(0, D, 9):
                                want = (src[b_ * lm + r, h, dd] if packed
                                        else bt[b_, h, r, dd])
                                assert view.element_bits(n, b_, h, r, dd) \
                                    == int(want) & 0xFFFF
            assert fn.launches[0][0] == (math.ceil(lm / dk.bm), hq, b)
            if packed:
                assert view.offset("O", 2, 5, 7, 3) == \
                    (2 * lm + 7) * hq * D + 5 * D + 3
        print(f"  {dk.file} over the packed tensors (strides) and BHLD "
              "copies: words ok")
    else:
        print(f"  {p}: no manifest: the dense launch not checked")
    # 3. The reference against a plain loop (GQA, causal bottom-right,
    # Lq != Lk, an empty sequence).
    hq, hkv, d = 4, 2, 8
    lens_q, lens_k = [3, 0, 4, 2], [3, 2, 6, 1]
    cq, ck = fa_abi.cu_seqlens(lens_q), fa_abi.cu_seqlens(lens_k)
    qq = torch.randn(cq[-1], hq, d, generator=g)
    kk = torch.randn(ck[-1], hkv, d, generator=g)
    vv = torch.randn(ck[-1], hkv, d, generator=g)
    for causal in (False, True):
        for budget in (2 ** 30, 64):  # one chunk, and rows/heads chunked
            ref_o, ref_l = reference(qq, kk, vv, cq, ck, causal,
                                     budget=budget)
            for b_ in range(len(lens_q)):
                lq, lk = lens_q[b_], lens_k[b_]
                for h in range(hq):
                    for i in range(lq):
                        keys = [j for j in range(lk) if not causal or
                                j <= i + lk - lq]
                        row = cq[b_] + i
                        if not keys:
                            assert ref_l[h, row] == float("-inf")
                            assert (ref_o[row, h] == 0).all()
                            continue
                        s = [sum(float(qq[row, h, x]) *
                                 float(kk[ck[b_] + j, h // 2, x])
                                 for x in range(d)) / math.sqrt(d)
                             for j in keys]
                        m = max(s)
                        e = [math.exp(x - m) for x in s]
                        z = sum(e)
                        assert abs(ref_l[h, row] - (m + math.log(z))) < 1e-9
                        for x in range(d):
                            want = sum(ei * float(vv[ck[b_] + j, h // 2, x])
                                       for ei, j in zip(e, keys)) / z
                            assert abs(ref_o[row, h, x] - want) < 1e-9
    # The error measures: NaN (unwritten) fails, -inf rows match.
    ref_o, ref_l = reference(qq, kk, vv, cq, ck, True)
    assert max_err(ref_o.float(), ref_o) < 1e-6
    bad = ref_o.float().clone()
    bad[0, 0, 0] = float("nan")
    assert math.isnan(max_err(bad, ref_o))
    assert lse_err(ref_l.float(), ref_l) < 1e-5
    bad = ref_l.float().clone()
    bad[0, 0] = float("-inf")
    assert math.isnan(lse_err(bad, ref_l))
    print("  reference: fp64 per sequence against a plain loop (GQA, causal "
          "bottom-right, Lq != Lk, an empty sequence, chunked) ok")
    print("varlen.py self-test passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
