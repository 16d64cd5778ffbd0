#!/usr/bin/env python3
"""Runs bench/decode.py or bench/varlen.py end to end on the CPU (torch's
CPU build is enough), without a GPU: "cuda" tensors are CPU tensors, CUDA
events, graphs and streams are stand-ins, and the CUDA driver that the fa
kernels are launched through is an emulator that reads each launch's
words as runtime/include/fa/KernelAbi.h defines them (ABI 1 dense, 2
split-KV, 3 paged, 4 varlen), checks the grid, block and shared bytes
against the manifest, and computes attention from the buffers those words
name (float32), writing O and LSE where they say. So a dry run checks
the scripts' control flow, their word packing end to end (a wrong stride,
page, table or cu_seqlens word gives a wrong output and fails the run, a
descriptor too small raises), and their files; the times are meaningless.

usage: cpu_dryrun.py decode|varlen ARGS...   (the script's own arguments;
       use small shapes, e.g. decode KDIR OUT --batches 2 --lengths 64,300)
"""
import contextlib
import ctypes
import enum
import json
import math
import os
import subprocess
import sys
import time
import types

import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# ---- "cuda" is the CPU ------------------------------------------------------


def _cpu(kw):
    if str(kw.get("device", "")).startswith("cuda"):
        kw["device"] = "cpu"
    return kw


def _wrap(fn):
    def f(*a, **kw):
        return fn(*a, **_cpu(kw))
    return f


for _name in ("randn", "empty", "zeros", "ones", "full", "tensor", "arange",
              "randperm"):
    setattr(torch, _name, _wrap(getattr(torch, _name)))
_to = torch.Tensor.to


def _tensor_to(self, *a, **kw):
    a = tuple("cpu" if isinstance(x, str) and x.startswith("cuda") else x
              for x in a)
    return _to(self, *a, **_cpu(kw))


torch.Tensor.to = _tensor_to


class _Event:
    def __init__(self, enable_timing=False):
        self.t = 0.0

    def record(self, stream=None):
        self.t = time.perf_counter()

    def synchronize(self):
        pass

    def elapsed_time(self, other):
        return max(1e-3, (other.t - self.t) * 1e3)


class _Stream:
    cuda_stream = 0

    def wait_stream(self, other):
        pass


class _Graph:
    def replay(self):
        pass


class _Props:
    multi_processor_count = 132
    L2_cache_size = 60 * 2 ** 20


torch.cuda.synchronize = lambda *a, **k: None
torch.cuda.Event = _Event
torch.cuda.Stream = lambda *a, **k: _Stream()
torch.cuda.current_stream = lambda *a, **k: _Stream()
torch.cuda.stream = lambda s: contextlib.nullcontext()
torch.cuda.CUDAGraph = _Graph
torch.cuda.graph = lambda g, **k: contextlib.nullcontext()
torch.cuda.get_device_properties = lambda i=0: _Props()
torch.cuda.get_device_name = lambda i=0: "CPU dry run (no GPU)"
torch.cuda.empty_cache = lambda: None

_run = subprocess.run


def _subprocess_run(cmd, *a, **kw):
    if cmd and cmd[0] == "nvidia-smi":
        return types.SimpleNamespace(stdout="dry-run\n", returncode=0)
    return _run(cmd, *a, **kw)


subprocess.run = _subprocess_run

# SDPA where this torch lacks it (before 2.0): the math, in the inputs'
# dtype promoted to float32 for half (the CPU has no half matmul).


def _sdpa(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False,
          scale=None, enable_gqa=False):
    dt = q.dtype
    q, k, v = (x.float() if x.dtype == torch.float16 else x
               for x in (q, k, v))
    if enable_gqa and k.shape[-3] != q.shape[-3]:
        g = q.shape[-3] // k.shape[-3]
        k, v = k.repeat_interleave(g, dim=-3), v.repeat_interleave(g, dim=-3)
    if k.shape[-3] != q.shape[-3]:
        raise RuntimeError("heads differ without enable_gqa")
    s = q @ k.transpose(-1, -2) * (scale or 1.0 / math.sqrt(q.shape[-1]))
    if is_causal:
        lq, lk = s.shape[-2], s.shape[-1]
        m = torch.ones(lq, lk, dtype=torch.bool).tril(lk - lq)
        s = s.masked_fill(~m, float("-inf"))
    return (torch.softmax(s, dim=-1) @ v).to(dt)


if not hasattr(F, "scaled_dot_product_attention"):
    F.scaled_dot_product_attention = _sdpa
try:
    import torch.nn.attention  # noqa: F401
except ImportError:
    mod = types.ModuleType("torch.nn.attention")

    class SDPBackend(enum.Enum):
        FLASH_ATTENTION = 1
        CUDNN_ATTENTION = 2
        EFFICIENT_ATTENTION = 3
        MATH = 4
    mod.SDPBackend = SDPBackend
    mod.sdpa_kernel = lambda backends: contextlib.nullcontext()
    sys.modules["torch.nn.attention"] = mod
    torch.nn.attention = mod
_matmul = torch.matmul


def _half_safe_matmul(a, b, *x, **k):
    if a.dtype == torch.float16 and not a.is_cuda:
        return _matmul(a.float(), b.float(), *x, **k).half()
    return _matmul(a, b, *x, **k)


torch.matmul = _half_safe_matmul
torch.Tensor.__matmul__ = lambda a, b: _half_safe_matmul(a, b)

# ---- the CUDA driver: an emulator of fa's kernels from their words -----------

import fa_abi  # noqa: E402

_FUNCS = {}   # handle -> (manifest, kernel info)
LAUNCHES = []


def _buffer(words, base, dtype):
    ptr, size = words[base + 1], words[base + 3]
    if ptr == 0 or size == 0:
        return None
    nbytes = size * torch.tensor([], dtype=dtype).element_size()
    return torch.frombuffer((ctypes.c_char * nbytes).from_address(ptr),
                            dtype=dtype)


def _attend(q, k, v, causal, scale):
    """q [H, Lq, D], k, v [Hkv, Lk, D] -> (o [H, Lq, D], lse [H, Lq])."""
    g = q.shape[0] // k.shape[0]
    k, v = k.repeat_interleave(g, 0).float(), v.repeat_interleave(g, 0).float()
    s = _matmul(q.float(), k.transpose(1, 2)) * scale
    lq, lk = s.shape[-2], s.shape[-1]
    if causal:
        m = torch.ones(lq, lk, dtype=torch.bool).tril(lk - lq)
        s = s.masked_fill(~m, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    p = torch.exp(s - lse.unsqueeze(-1))
    p = torch.nan_to_num(p, nan=0.0)
    return _matmul(p, v), lse


def emulate(info, words, grid, block, shared):
    abi = int(info["abi_version"])
    n = fa_abi.NUM_WORDS[abi]
    assert len(words) == n, (abi, len(words))
    assert block == (info["threads"], 1, 1), (block, info["threads"])
    assert shared == info.get("dynamic_lds_bytes", 0), shared
    B, Hq, Hkv, Lq, Lk = words[fa_abi.SIZES:fa_abi.SIZES + 5]
    st = words[fa_abi.STRIDES:fa_abi.STRIDES + 14]
    split = info.get("kv_splits") == "runtime"
    packed = bool(info.get("gqa_packed"))
    if info.get("role") == "combine":
        assert grid == (math.ceil(Lq / info["block_m"]), Hq, B), grid
        return  # the split launch wrote O and LSE already
    rows, hg = (Lq * (Hq // Hkv), Hkv) if packed else (Lq, Hq)
    S = words[fa_abi.SPLITS] if abi >= 2 else 1
    assert grid == (math.ceil(rows / info["block_m"]) * (S if split else 1),
                    hg, B), (grid, rows, S)
    if split:
        ws = words[fa_abi.WS_O + 3]
        assert words[fa_abi.WS_O + 1] and ws >= S * B * Hq * Lq * 128, ws
        assert words[fa_abi.WS_LSE + 3] >= S * B * Hq * Lq
    elif abi >= 3:
        assert words[fa_abi.WS_O:fa_abi.SPLITS + 1] == \
            fa_abi.NULL * 2 + [1]
    d = info["head_dim"]
    causal, scale = bool(info.get("causal")), float(info["scale"])
    f16 = torch.float16
    Q, K, V, O = (_buffer(words, b, f16) for b in
                  (fa_abi.Q, fa_abi.K, fa_abi.V, fa_abi.O))
    lse = _buffer(words, fa_abi.LSE, torch.float32)
    assert (lse is not None) == bool(info.get("has_lse")), "LSE words"
    if abi == 4:
        assert info.get("varlen") is True
        cq = _buffer(words, fa_abi.CU_SEQLENS_Q, torch.int32).tolist()
        ck = _buffer(words, fa_abi.CU_SEQLENS_K, torch.int32).tolist()
        assert len(cq) >= B + 1 and len(ck) >= B + 1
        assert st[0] == st[3] == st[6] == st[9] == st[12] == 0
        for b in range(B):
            lq, lk = cq[b + 1] - cq[b], ck[b + 1] - ck[b]
            assert lq <= Lq and lk <= Lk, "max_seqlen below a length"
            if lq == 0:
                continue
            q = Q.as_strided((Hq, lq, d), (st[1], st[2], 1), cq[b] * st[2])
            o = O.as_strided((Hq, lq, d), (st[10], st[11], 1),
                             cq[b] * st[11])
            if lk == 0:
                o.zero_()
                res_l = torch.full((Hq, lq), float("-inf"))
            else:
                k = K.as_strided((Hkv, lk, d), (st[4], st[5], 1),
                                 ck[b] * st[5])
                v = V.as_strided((Hkv, lk, d), (st[7], st[8], 1),
                                 ck[b] * st[8])
                res, res_l = _attend(q, k, v, causal, scale)
                o.copy_(res.to(f16))
            if lse is not None:
                lse.as_strided((Hq, lq), (st[13], 1), cq[b]).copy_(res_l)
        return
    if abi == 3:
        assert info.get("paged") is True
        ps, tstride = words[fa_abi.PAGE_SIZE], words[fa_abi.BLOCK_TABLE_STRIDE]
        table = _buffer(words, fa_abi.BLOCK_TABLE, torch.int32)
        lens = _buffer(words, fa_abi.CACHE_SEQLENS, torch.int32).tolist()
        assert max(lens[:B]) == Lk, "Lk is not max(cache_seqlens)"
        pages = K.numel() // st[3]
    for b in range(B):
        q = Q.as_strided((Hq, Lq, d), (st[1], st[2], 1), b * st[0])
        o = O.as_strided((Hq, Lq, d), (st[10], st[11], 1), b * st[9])
        if abi == 3:
            n_ = lens[b]
            mp = math.ceil(n_ / ps)
            ids = table[b * tstride:b * tstride + mp].long()
            assert (ids >= 0).all() and (ids < pages).all()
            kv = []
            for T, s0 in ((K, 3), (V, 6)):
                cache = T.as_strided((pages, ps, Hkv, d),
                                     (st[s0], st[s0 + 2], st[s0 + 1], 1))
                kv.append(cache[ids].reshape(mp * ps, Hkv, d)[:n_]
                          .transpose(0, 1))
            k, v = kv
        else:
            k = K.as_strided((Hkv, Lk, d), (st[4], st[5], 1), b * st[3])
            v = V.as_strided((Hkv, Lk, d), (st[7], st[8], 1), b * st[6])
        res, res_l = _attend(q, k, v, causal, scale)
        o.copy_(res.to(f16))
        if lse is not None:
            lse.as_strided((Hq, Lq), (st[13], 1), b * st[12]).copy_(res_l)


class FakeLib:
    def cuModuleGetFunction(self, fn_ref, module, symbol):
        manifest = module.value
        info = next(k for k in manifest["kernels"]
                    if k["symbol"] == symbol.decode())
        h = len(_FUNCS) + 1
        _FUNCS[h] = (manifest, info)
        target = fn_ref._obj if hasattr(fn_ref, "_obj") else fn_ref.contents
        target.value = h
        return 0

    def cuFuncSetAttribute(self, fn, attr, value):
        return 0

    def cuGetErrorName(self, rc, ref):
        return 0

    def cuLaunchKernel(self, fn, gx, gy, gz, bx, by, bz, shared, stream,
                       params, extra):
        h = fn.value if hasattr(fn, "value") else fn
        manifest, info = _FUNCS[h]
        n = fa_abi.NUM_WORDS[int(info["abi_version"])]
        words = [ctypes.c_uint64.from_address(params[i]).value
                 for i in range(n)]
        grid = tuple(int(getattr(x, "value", x)) for x in (gx, gy, gz))
        block = tuple(int(getattr(x, "value", x)) for x in (bx, by, bz))
        emulate(info, words, grid, block, int(getattr(shared, "value",
                                                        shared)))
        LAUNCHES.append((info["name"], grid))
        return 0


class FakeCudaKernel:
    """bench.py's CudaKernel over FakeLib."""

    def __init__(self, cubin_path):
        with open(cubin_path + ".json") as f:
            manifest = json.load(f)
        assert os.path.exists(cubin_path), cubin_path
        self.info = manifest["kernels"][0]
        self.lib = FakeLib()
        self.module = types.SimpleNamespace(value=manifest)
        self.fn = ctypes.c_void_p()
        self.lib.cuModuleGetFunction(ctypes.pointer(self.fn), self.module,
                                     self.info["symbol"].encode())
        self.shared = self.info.get("dynamic_lds_bytes", 0)

    def check(self, rc, call):
        if rc != 0:
            raise RuntimeError(f"{call} failed: {rc}")


def main():
    which = sys.argv[1]
    sys.argv = [f"{which}.py"] + sys.argv[2:]
    import decode
    decode.CudaKernel = FakeCudaKernel
    decode.copy_bandwidth = lambda reps: 4.0e12
    decode.input_sets = lambda kvb, l2: 2   # rotate over 2 sets

    def one_call(fns, reps):
        for f in fns:
            f()
        return 1e-5, f"dry run: {len(fns)} sets called once"
    decode.graph_time = one_call
    if which == "decode":
        rc = decode.main()
    else:
        import varlen
        varlen.CudaKernel = FakeCudaKernel

        def once(fn, reps, warmup=2):
            fn()
            return 1e-3
        varlen.event_time = once
        rc = varlen.main()
    names = {}
    for n, _ in LAUNCHES:
        names[n] = names.get(n, 0) + 1
    print(f"cpu_dryrun: {len(LAUNCHES)} emulated launches {names}; exit {rc}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
