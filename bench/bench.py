#!/usr/bin/env python3
"""fa vs PyTorch on one NVIDIA GPU, in one run (never a timed test).

For each shape (f16 inputs, BHLD): fa's sm_90 kernel (a cubin compiled by
`fac`, launched here through the CUDA driver with the ABI of
runtime/include/fa/KernelAbi.h), PyTorch SDPA with each backend (flash,
cuDNN, efficient, math), eager attention in fp16 and in fp32 (TF32 off),
and an fp32 SGEMM measured in the same run as the FMA ceiling. Every time
is the median of CUDA-event-timed repetitions after warm-up. Every output is
compared with an fp64 reference on a slice (batch 0, the first heads).

usage: bench.py KERNEL_DIR OUT_DIR [--variants name=DIR ...] [--quick]

KERNEL_DIR holds attn_d{64,128}_{full,causal}.cubin (+ .json manifests);
each `name=DIR` adds another build of fa's kernels (an ablation) as a row.
Writes OUT_DIR/bench.csv and OUT_DIR/bench.png.
"""
import ctypes
import csv
import datetime
import json
import math
import os
import subprocess
import sys

import torch
import torch.nn.functional as F

SHAPES = [  # (B, H, L, D, causal)
    (8, 12, 2048, 128, False),
    (4, 16, 4096, 64, False),
    (4, 16, 4096, 128, False),
    (2, 16, 8192, 128, False),
    (4, 16, 4096, 128, True),
]


class CudaKernel:
    """One fa kernel loaded with the CUDA driver API (libcuda, ctypes)."""

    def __init__(self, cubin_path):
        with open(cubin_path + ".json") as f:
            manifest = json.load(f)
        self.info = manifest["kernels"][0]
        self.lib = ctypes.CDLL("libcuda.so.1")
        with open(cubin_path, "rb") as f:
            image = f.read()
        if manifest["code_object"]["format"] == "ptx":
            image += b"\0"
        self.module = ctypes.c_void_p()
        self.check(self.lib.cuModuleLoadData(ctypes.byref(self.module),
                                             ctypes.c_char_p(image)),
                   "cuModuleLoadData")
        self.fn = ctypes.c_void_p()
        self.check(self.lib.cuModuleGetFunction(
            ctypes.byref(self.fn), self.module,
            self.info["symbol"].encode()), "cuModuleGetFunction")
        self.shared = self.info.get("dynamic_lds_bytes", 0)
        if self.shared:
            # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8
            self.check(self.lib.cuFuncSetAttribute(self.fn, 8, self.shared),
                       "cuFuncSetAttribute")

    def check(self, rc, call):
        if rc != 0:
            name = ctypes.c_char_p()
            self.lib.cuGetErrorName(rc, ctypes.byref(name))
            raise RuntimeError(f"{call} failed: {name.value}")

    def __call__(self, q, k, v, o):
        """Launches on torch's current stream; q, k, v, o are BHLD."""
        def buf(t):
            return [t.data_ptr(), t.data_ptr(), 0, t.numel(), 1]
        b, hq, lq, _ = q.shape
        hkv, lk = k.shape[1], k.shape[2]
        words = buf(q) + buf(k) + buf(v) + buf(o) + [0, 0, 0, 0, 1]
        words += [b, hq, hkv, lq, lk]
        for t in (q, k, v, o):
            words += [t.stride(0), t.stride(1), t.stride(2)]
        words += [hq * lq, lq]
        self.words = (ctypes.c_uint64 * len(words))(*words)
        base = ctypes.addressof(self.words)
        self.params = (ctypes.c_void_p * len(words))(
            *[base + 8 * i for i in range(len(words))])
        grid = (math.ceil(lq / self.info["block_m"]), hq, b)
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        self.check(self.lib.cuLaunchKernel(
            self.fn, *[ctypes.c_uint(g) for g in grid],
            ctypes.c_uint(self.info["threads"]), ctypes.c_uint(1),
            ctypes.c_uint(1), ctypes.c_uint(self.shared), stream,
            self.params, None), "cuLaunchKernel")


def timed(fn, reps, warmup=3):
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


def masked(s, causal):
    """Scores with the bottom-right causal mask applied (when causal)."""
    if not causal:
        return s
    lq, lk = s.shape[-2], s.shape[-1]
    mask = torch.ones(lq, lk, dtype=torch.bool, device=s.device).tril(lk - lq)
    return s.masked_fill(~mask, float("-inf"))


def reference_slice(q, k, v, causal, heads):
    """fp64 attention of batch 0, heads [0, heads), bottom-right causal."""
    qs, ks, vs = (t[0, :heads].double() for t in (q, k, v))
    s = qs @ ks.transpose(-1, -2) / math.sqrt(q.shape[-1])
    return torch.softmax(masked(s, causal), dim=-1) @ vs


def eager(q, k, v, causal, dtype):
    qd, kd, vd = (t.to(dtype) for t in (q, k, v))
    s = qd @ kd.transpose(-1, -2) * (1.0 / math.sqrt(q.shape[-1]))
    return torch.softmax(masked(s, causal), dim=-1) @ vd


def sdpa(backend):
    from torch.nn.attention import SDPBackend, sdpa_kernel
    b = getattr(SDPBackend, backend)

    def run(q, k, v, causal):
        with sdpa_kernel([b]):
            return F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    return run


def sgemm_tflops(reps):
    torch.backends.cuda.matmul.allow_tf32 = False
    n = 8192
    a = torch.randn(n, n, device="cuda")
    b = torch.randn(n, n, device="cuda")
    t = timed(lambda: a @ b, reps)
    return 2 * n ** 3 / t / 1e12


def main():
    kernel_dir, out_dir = sys.argv[1], sys.argv[2]
    quick = "--quick" in sys.argv
    variants = [("fa", kernel_dir)]
    if "--variants" in sys.argv:
        for spec in sys.argv[sys.argv.index("--variants") + 1:]:
            if spec.startswith("--"):
                break
            name, path = spec.split("=", 1)
            variants.append((name, path))
    os.makedirs(out_dir, exist_ok=True)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    reps = 5 if quick else 20
    torch.manual_seed(0)
    gpu = torch.cuda.get_device_name()
    driver = subprocess.run(["nvidia-smi", "--query-gpu=driver_version",
                             "--format=csv,noheader"], capture_output=True,
                            text=True).stdout.strip()
    commit = os.environ.get("FA_COMMIT", "unknown")
    date = datetime.date.today().isoformat()
    ceiling = sgemm_tflops(reps)
    print(f"{gpu} driver {driver} commit {commit}: fp32 SGEMM "
          f"{ceiling:.1f} TFLOP/s (TF32 off)", flush=True)
    rows = [dict(date=date, gpu=gpu, driver=driver, commit=commit,
                 shape="8192^3 GEMM", impl="sgemm_fp32", tflops=ceiling,
                 ms=0, pct_sgemm=100.0, max_err="")]
    shapes = SHAPES[:2] if quick else SHAPES
    for b, h, l, d, causal in shapes:
        shape = f"({b},{h},{l},{d}){' causal' if causal else ''}"
        q, k, v = (torch.randn(b, h, l, d, device="cuda",
                               dtype=torch.float16) for _ in range(3))
        flops = 4.0 * b * h * l * l * d / (2 if causal else 1)
        heads = 2
        ref = reference_slice(q, k, v, causal, heads)
        impls = []
        for name, path in variants:
            ker = os.path.join(
                path, f"attn_d{d}_{'causal' if causal else 'full'}.cubin")
            if not os.path.exists(ker):
                continue
            kernel = CudaKernel(ker)
            o = torch.empty_like(q)
            impls.append((name, lambda kernel=kernel, o=o:
                          (kernel(q, k, v, o), o)[1]))
        for backend in ("FLASH_ATTENTION", "CUDNN_ATTENTION",
                        "EFFICIENT_ATTENTION", "MATH"):
            impls.append((f"sdpa_{backend.split('_')[0].lower()}",
                          lambda f=sdpa(backend): f(q, k, v, causal)))
        impls.append(("eager_fp16",
                      lambda: eager(q, k, v, causal, torch.float16)))
        impls.append(("eager_fp32",
                      lambda: eager(q, k, v, causal, torch.float32)))
        for name, fn in impls:
            try:
                out = fn()
                torch.cuda.synchronize()
                err = (out[0, :heads].double() - ref).abs().max().item()
                t = timed(fn, reps)
            except Exception as e:  # a backend that does not support it
                print(f"  {shape:24} {name:16} unavailable: "
                      f"{str(e).splitlines()[0][:80]}", flush=True)
                continue
            tflops = flops / t / 1e12
            rows.append(dict(date=date, gpu=gpu, driver=driver,
                             commit=commit, shape=shape, impl=name,
                             tflops=tflops, ms=t * 1e3,
                             pct_sgemm=100 * tflops / ceiling,
                             max_err=f"{err:.3g}"))
            print(f"  {shape:24} {name:16} {tflops:8.2f} TFLOP/s "
                  f"{t * 1e3:9.3f} ms {100 * tflops / ceiling:6.1f}% of SGEMM"
                  f"  max_err {err:.3g}", flush=True)
        del q, k, v
        torch.cuda.empty_cache()

    path = os.path.join(out_dir, "bench.csv")
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    print(f"wrote {path}")
    try:
        plot(rows, os.path.join(out_dir, "bench.png"), gpu, ceiling)
    except Exception as e:  # matplotlib missing: the CSV is the result
        print(f"no chart: {e}")


def plot(rows, path, gpu, ceiling):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    shapes = [r["shape"] for r in rows if r["impl"] == "fa"]
    impls = []
    for r in rows:
        if r["shape"] in shapes and r["impl"] not in impls:
            impls.append(r["impl"])
    fig, ax = plt.subplots(figsize=(12, 5))
    width = 0.8 / len(impls)
    for i, impl in enumerate(impls):
        ys = []
        for s in shapes:
            match = [r["tflops"] for r in rows
                     if r["shape"] == s and r["impl"] == impl]
            ys.append(match[0] if match else 0)
        ax.bar([x + i * width for x in range(len(shapes))], ys, width,
               label=impl)
    ax.axhline(ceiling, color="k", linestyle="--",
               label=f"fp32 SGEMM {ceiling:.0f}")
    ax.set_yscale("log")
    ax.set_xticks([x + 0.4 - width / 2 for x in range(len(shapes))])
    ax.set_xticklabels(shapes, fontsize=8)
    ax.set_ylabel("TFLOP/s (log)")
    ax.set_title(f"fa vs PyTorch, f16 inputs, {gpu}")
    ax.legend(fontsize=7, ncol=3)
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    print(f"wrote {path}")


if __name__ == "__main__":
    main()
