#!/usr/bin/env python3
"""Host time of fa's Python layer per call, the launch itself stubbed: what
the Python package adds over the C call, measured on any machine (the CPU's
host emulator here; bench/python_api.py measures the same calls with real
launches on the H200).

fa_module_enqueue and fa_module_enqueue_heads are replaced by a C function
that returns FA_OK (built with $CC, default cc), so every call times the
Python work, the ctypes call and the allocations, not the kernel; the C
call is the same stub through ctypes with its arguments built once, as
python_api.py's "fa_c_call_via_ctypes". The problem is python_api.py's:
decode, f16, D=128, Hq=32, Hkv=8, Lq=1, Lk=1024 (the kernel is compiled
for the host target once, into FA_CACHE_DIR).

usage: PYTHONPATH=python FA_RUNTIME_LIBRARY=... FA_COMPILE_LIBRARY=... \
         python3 bench/python_overhead.py [--profile] [--json OUT]
"""

import argparse
import ctypes
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
import fa  # noqa: E402
from fa import _capi, _jit  # noqa: E402


def stub_library():
    """The path of a shared library whose fa_stub returns 0 (FA_OK),
    whatever its arguments."""
    folder = tempfile.mkdtemp(prefix="fa-stub-")
    src, lib = os.path.join(folder, "stub.c"), os.path.join(folder,
                                                            "stub.so")
    with open(src, "w") as f:
        f.write("int fa_stub(void) { return 0; }\n")
    subprocess.check_call([os.environ.get("CC", "cc"), "-O2", "-shared",
                           "-fPIC", src, "-o", lib])
    return lib


def stub_launches():
    """Points the runtime's two enqueue entry points, as the package calls
    them, at the stub (the real workspace size and buffer calls stay)."""
    real, path = _capi.lib(), stub_library()
    for name in ("fa_module_enqueue", "fa_module_enqueue_heads"):
        fn = ctypes.CDLL(path).fa_stub  # a function object of its own
        fn.restype = getattr(real, name).restype
        fn.argtypes = getattr(real, name).argtypes
        setattr(real, name, fn)


def per_call_us(call, batch=200, rounds=31):
    """Median over rounds of the calling thread's CPU time per call (not
    wall time: other processes on a shared machine do not count)."""
    for _ in range(50):
        call()
    per = []
    for _ in range(rounds):
        t0 = time.thread_time_ns()
        for _ in range(batch):
            call()
        per.append((time.thread_time_ns() - t0) / batch / 1e3)
    return statistics.median(per)


def problem(dev="cpu"):
    b, lk = 1, 1024
    q = torch.randn(b, 1, 32, 128, device=dev, dtype=torch.float16)
    kc = torch.randn(b, lk, 8, 128, device=dev, dtype=torch.float16)
    vc = torch.randn_like(kc)
    lens = torch.full((b,), lk, dtype=torch.int32, device=dev)
    table = torch.arange(b, dtype=torch.int32, device=dev).view(b, 1)
    return q, kc, vc, lens, table


def c_call(q, kc, vc, lens, target="host", dev_name="host"):
    """The C call of python_api.py: arguments and buffers built once."""
    b, lk = kc.shape[0], kc.shape[1]
    spec = _jit.Spec("paged", "f16", 128, False, _jit.canonical_scale(
        1 / math.sqrt(128)), True, target)
    m = _jit.module(spec, dev_name)
    d = _jit.device(dev_name)
    out = torch.empty_like(q)
    lse = torch.empty(b, 32, 1, device=q.device, dtype=torch.float32)
    table = torch.zeros(b, 1, dtype=torch.int32, device=q.device)

    def w(t):
        return _capi.Buffer(d, t.data_ptr(), t.numel() * t.element_size(), t)

    strides = [32 * 128, 128, 32 * 128, lk * 8 * 128, 128, 8 * 128,
               lk * 8 * 128, 128, 8 * 128, 32 * 128, 128, 32 * 128, 32, 1]
    args = _capi.Module.args(w(q), w(kc), w(vc), w(out), w(lse),
                             (b, 32, 8, 1, lk), strides)
    paged = _capi.Module.paged(w(table), w(lens), lk, 1, b)
    ws = w(torch.empty(max(m.workspace_size(args), 1), dtype=torch.uint8,
                       device=q.device))
    return lambda: m.enqueue(args, 0, ws, paged=paged)


def calls(q, kc, vc, lens, table):
    """The Python calls python_api.py times, by its names."""
    k4, v4 = kc[:, :1024], vc[:, :1024]
    return {
        "fa_python_api": lambda: fa.flash_attn_with_kvcache(
            q, kc, vc, cache_seqlens=lens),
        "fa_python_api_block_table": lambda: fa.flash_attn_with_kvcache(
            q, kc, vc, cache_seqlens=lens, block_table=table),
        "fa_python_api_return_lse": lambda: fa.flash_attn_with_kvcache(
            q, kc, vc, cache_seqlens=lens, return_softmax_lse=True),
        "torch_ops_fa_kvcache_fwd": lambda: torch.ops.fa.kvcache_fwd(
            q, kc, vc, lens, table, None, False, 0),
        "fa_flash_attn_func_decode": lambda: fa.flash_attn_func(
            q, k4, v4, causal=True),
    }


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--profile", action="store_true",
                   help="cProfile 20000 calls of fa_python_api")
    p.add_argument("--json", help="write the numbers here")
    a = p.parse_args()
    stub_launches()
    q, kc, vc, lens, table = problem()
    r = {}
    for name, call in calls(q, kc, vc, lens, table).items():
        r[name] = per_call_us(call)
    r["fa_c_call_via_ctypes"] = per_call_us(c_call(q, kc, vc, lens))
    r["output_allocations"] = per_call_us(lambda: (
        torch.empty_like(q), torch.empty(1, 32, 1, dtype=torch.float32)))
    r["python_over_c"] = r["fa_python_api"] - r["fa_c_call_via_ctypes"]
    r = {k: round(v, 2) for k, v in r.items()}
    print("host us per call (launch stubbed):", r)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(r, f, indent=1)
    if a.profile:
        import cProfile
        import pstats
        call = calls(q, kc, vc, lens, table)["fa_python_api"]
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(20000):
            call()
        pr.disable()
        pstats.Stats(pr).sort_stats("tottime").print_stats(25)


if __name__ == "__main__":
    main()
