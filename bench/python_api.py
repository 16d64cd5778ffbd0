#!/usr/bin/env python3
"""`import fa` on one NVIDIA GPU (never a timed test): the Python API's
correctness there, its host overhead per call, and fa inside Hugging Face
transformers. The kernels come from FA_CACHE_DIR, compiled ahead with
fa.compile(...) where fa's compiler is (bench/gpu-python.sh says how): the
GPU machine has no LLVM.

1. API checks (exit status 1 if one fails): flash_attn_func (f16 and f32,
   causal, GQA), flash_attn_with_kvcache (a paged cache, decode), both
   against fp64 references; the kvcache call captured in a CUDA graph and
   replayed with new cache lengths written into the same tensor; the
   torch.library op traced by torch.compile.
2. Host time per call, asynchronous (median over batches of 64 calls, the
   stream synchronised between batches outside the timing), decode f16
   D=128 Hq=32 Hkv=8 Lq=1 Lk=1024: fa.flash_attn_with_kvcache (dense
   cache; and with a block_table), torch.ops.fa.kvcache_fwd (the
   dispatcher's path, what torch.compile's graphs call), the same kernel
   through fa's C call from Python (ctypes, arguments built once), the
   three torch.empty calls of the outputs and workspace alone, and SDPA
   (enable_gqa); also the call with return_softmax_lse and
   flash_attn_func's decode call (as transformers makes it), and whether
   issue 31's goal holds (the Python layer adds <= 10 us over the C call;
   bench/python_overhead.py measures the same on any CPU, launch stubbed).
3. transformers: attn_implementation="fa" registered; small random Llama
   (GQA 8:2) and Qwen2 (GQA 14:2) configurations, head_dim 64, fp32 and
   fp16: 32 greedy tokens with generate() against "eager", the same tokens
   and the first step's logits within tolerance; the token rate of
   generate() with "fa" vs "sdpa" (a report, no goal). Issue 32: Gemma 2
   (softcap, a sliding window every other layer) the same way, and gpt-oss
   (attention sinks, s_aux, in every layer and a sliding window every other
   one; fp32, fp16 and bf16; transformers has no "sdpa" for it, so its
   token rate is against "eager"), printing SKIP where the installed
   transformers lacks GptOssConfig. Issue 31: Llama and Qwen2 (fp32, fp16)
   once more with fa's StaticCache and the one-token decode step captured
   in a CUDA graph (fa.integrations.transformers.greedy_generate): the
   same 32 tokens as generate() with "eager", every step's logits within
   tolerance.
4. ALiBi slopes and sinks (issue 32): flash_attn_func (f32, causal, GQA,
   Lq < Lk) and a paged decode (f16, split-KV, an empty sequence: O = 0,
   LSE = the sink; then captured in a CUDA graph and replayed with new
   lengths and sinks) against fp64 references.

usage: python_api.py OUT_DIR
       python_api.py --compile CACHE_DIR   (here, where fa's compiler is:
                                            fills the cache with KERNELS)
"""

import json
import math
import os
import statistics
import sys
import time

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
import fa  # noqa: E402
from fa import _capi, _jit  # noqa: E402

results = {"checks": {}, "overhead_us": {}, "transformers": {},
           "window_bench_ms": {}}

# The sm_90 kernels the run calls (fa.compile arguments: layout, dtype,
# head dim, causal, scale, decode build): flash_attn_func and the
# transformers models (head_dim 64, scaling 1/8; prefill and decode steps),
# the paged decode checks and the overhead (D=128).
KERNELS = [("dense", dt, 64, causal, 0.125, decode)
           for dt in ("f16", "f32") for causal in (False, True)
           for decode in (False, True)] + [
    ("paged", "f16", 128, False, 128 ** -0.5, True)]
# Sliding window and softcap (issue 32; + window, softcap): the checks, the
# window benchmark (D=128, W=4096) and the Gemma 2 model (head_dim 64,
# sliding window 16 as transformers passes it, (15, 15), softcap 50).
KERNELS += [
    ("dense", "f16", 64, True, 0.125, False, (31, -1), 0.0),
    ("dense", "f32", 64, False, 0.125, False, (20, 5), 7.0),
    ("paged", "f16", 128, True, 128 ** -0.5, True, (255, -1), 0.0),
    ("dense", "f16", 128, True, 128 ** -0.5, False),
    ("dense", "f16", 128, False, 128 ** -0.5, False),
    ("dense", "f16", 128, True, 128 ** -0.5, False, (4095, -1), 0.0)]
KERNELS += [("dense", dt, 64, True, 0.125, decode, window, 50.0)
            for dt in ("f16", "f32") for decode in (False, True)
            for window in ((15, 15), (-1, -1))]
# ALiBi slopes and sinks (issue 32; + alibi, sinks): heads_checks, and the
# gpt-oss model (head_dim 64, scaling 1/8, sinks in every layer, sliding
# window 16 as transformers passes it, (15, 15), in every other; prefill
# and decode steps; f16, f32 and bf16).
KERNELS += [
    ("dense", "f32", 64, True, 0.125, False, (-1, -1), 0.0, True, True),
    ("paged", "f16", 128, False, 128 ** -0.5, True, (-1, -1), 0.0, True,
     True)]
KERNELS += [("dense", dt, 64, True, 0.125, decode, window, 0.0, False, True)
            for dt in ("f16", "f32", "bf16") for decode in (False, True)
            for window in ((15, 15), (-1, -1))]
# transformers with fa's StaticCache, the decode step in a CUDA graph
# (graph_compare: flash_attn_with_kvcache over a dense cache, head_dim 64,
# prefill and decode), and flash_attn_func's decode call in the overhead
# table (D=128, causal).
KERNELS += [("paged", dt, 64, True, 0.125, decode)
            for dt in ("f16", "f32") for decode in (False, True)]
KERNELS += [("dense", "f16", 128, True, 128 ** -0.5, True)]
# Mixed prefill/decode batches (issue 32; flash_attn_varlen_func with
# block_table): the prefill build and the decode (split-KV + packing) one.
KERNELS += [("mixed", "f16", 128, True, 128 ** -0.5, decode)
            for decode in (False, True)]


def check(name, ok, detail=""):
    results["checks"][name] = {"pass": bool(ok), "detail": detail}
    print(f"{'PASS' if ok else 'FAIL'} {name} {detail}", flush=True)


def reference(q, k, v, causal, scale, window=(-1, -1), softcap=0.0,
              alibi=None, sinks=None):
    """fp64 attention; alibi: (Hq,) slopes (score - slope * |i + Lk - Lq -
    j|); sinks: (Hq,) logits, one more softmax column whose value is 0."""
    b, lq, hq, d = q.shape
    lk, hkv = k.shape[1], k.shape[2]
    qh = q.double().transpose(1, 2)
    kh = k.double().transpose(1, 2).repeat_interleave(hq // hkv, 1)
    vh = v.double().transpose(1, 2).repeat_interleave(hq // hkv, 1)
    s = qh @ kh.transpose(-1, -2) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    i = torch.arange(lq, device=q.device)[:, None]
    j = torch.arange(lk, device=q.device)[None]
    if alibi is not None:
        s = s - alibi.double().view(1, hq, 1, 1) * (i + lk - lq - j).abs()
    if causal:
        s = s.masked_fill(j > i + lk - lq, float("-inf"))
    if window[0] >= 0:
        s = s.masked_fill(j < i + lk - lq - window[0], float("-inf"))
    if window[1] >= 0:
        s = s.masked_fill(j > i + lk - lq + window[1], float("-inf"))
    if sinks is not None:
        s = torch.cat([s, sinks.double().view(1, hq, 1, 1).expand(
            b, hq, lq, 1)], -1)
        vh = torch.cat([vh, vh.new_zeros(b, hq, 1, d)], -2)
    return (torch.softmax(s, -1).nan_to_num(0.0) @ vh).transpose(1, 2)


def window_checks():
    """Sliding window and softcap on the GPU against fp64 (issue 32)."""
    dev = "cuda"
    torch.manual_seed(3)
    for dtype, causal, window, cap, tol in (
            (torch.float16, True, (31, -1), 0.0, 2e-2),
            (torch.float32, False, (20, 5), 7.0, 1e-4)):
        q = torch.randn(2, 300, 8, 64, device=dev, dtype=dtype)
        k = 3 * torch.randn(2, 310, 2, 64, device=dev, dtype=dtype)
        v = torch.randn_like(k)
        out = fa.flash_attn_func(q, k, v, causal=causal, window_size=window,
                                 softcap=cap)
        err = (out.double() - reference(q, k, v, causal, 0.125, window,
                                        cap)).abs().max().item()
        check(f"flash_attn_func window={window} softcap={cap} {dtype}",
              err <= tol, f"err {err:.2g}")
    b, page, pages = 3, 16, 64
    kc = torch.randn(b * pages, page, 8, 128, device=dev,
                     dtype=torch.float16)
    vc = torch.randn_like(kc)
    table = torch.randperm(b * pages, device=dev).view(b, pages).to(
        torch.int32)
    lens = torch.tensor([1000, 3, 700], dtype=torch.int32, device=dev)
    q = torch.randn(b, 1, 32, 128, device=dev, dtype=torch.float16)
    out = fa.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens,
                                     block_table=table, causal=True,
                                     window_size=(255, -1))
    worst = 0.0
    for i in range(b):
        n = int(lens[i])
        kk = kc[table[i].long()].reshape(-1, 8, 128)[:n][None]
        vv = vc[table[i].long()].reshape(-1, 8, 128)[:n][None]
        want = reference(q[i:i + 1], kk, vv, True, 128 ** -0.5, (255, -1))
        worst = max(worst, (out[i:i + 1].double() - want).abs().max().item())
    check("flash_attn_with_kvcache paged decode window=(255, -1)",
          worst <= 2e-2, f"err {worst:.2g}")


def heads_checks():
    """ALiBi slopes and attention sinks on the GPU against fp64 (issue
    32)."""
    dev = "cuda"
    torch.manual_seed(4)
    hq = 8
    slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / hq) for h in range(hq)],
                          device=dev)
    sinks = torch.randn(hq, device=dev)
    sinks[1] = 6.0
    q = torch.randn(2, 300, hq, 64, device=dev)
    k = torch.randn(2, 310, 2, 64, device=dev)
    v = torch.randn_like(k)
    out = fa.flash_attn_func(q, k, v, causal=True, alibi_slopes=slopes,
                             sinks=sinks)
    err = (out.double() - reference(q, k, v, True, 0.125, alibi=slopes,
                                    sinks=sinks)).abs().max().item()
    check("flash_attn_func alibi_slopes + sinks f32", err <= 1e-4,
          f"err {err:.2g}")
    b, page, pages, hq = 3, 16, 64, 32
    slopes = torch.tensor([2.0 ** (-8.0 * (h + 1) / hq) for h in range(hq)],
                          device=dev)
    sinks = torch.randn(hq, device=dev)
    kc = torch.randn(b * pages, page, 8, 128, device=dev,
                     dtype=torch.float16)
    vc = torch.randn_like(kc)
    table = torch.randperm(b * pages, device=dev).view(b, pages).to(
        torch.int32)
    lens = torch.tensor([1000, 0, 700], dtype=torch.int32, device=dev)
    worst = 0.0
    for _ in range(2):  # the second call a kept launch
        q = torch.randn(b, 1, hq, 128, device=dev, dtype=torch.float16)
        out, lse = fa.flash_attn_with_kvcache(
            q, kc, vc, cache_seqlens=lens, block_table=table,
            alibi_slopes=slopes, sinks=sinks, return_softmax_lse=True)
        for i in range(b):
            n = int(lens[i])
            kk = kc[table[i].long()].reshape(-1, 8, 128)[:n][None]
            vv = vc[table[i].long()].reshape(-1, 8, 128)[:n][None]
            want = reference(q[i:i + 1], kk, vv, False, 128 ** -0.5,
                             alibi=slopes, sinks=sinks)
            worst = max(worst,
                        (out[i:i + 1].double() - want).abs().max().item())
        worst = max(worst, (lse[1, :, 0] - sinks).abs().max().item())
    check("flash_attn_with_kvcache paged decode alibi_slopes + sinks "
          "(an empty sequence)", worst <= 2e-2, f"err {worst:.2g}")
    # The same call captured in a CUDA graph, replayed with new lengths,
    # queries and sinks written into the captured tensors.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fa.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens,
                                   block_table=table, alibi_slopes=slopes,
                                   sinks=sinks)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fa.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens,
                                         block_table=table,
                                         alibi_slopes=slopes, sinks=sinks)
    worst = 0.0
    for _ in range(10):
        lens.copy_(torch.randint(0, page * pages + 1, (b,),
                                 dtype=torch.int32))
        q.copy_(torch.randn_like(q))
        sinks.copy_(3 * torch.randn_like(sinks))
        g.replay()
        torch.cuda.synchronize()
        for i in range(b):
            n = int(lens[i])
            kk = kc[table[i].long()].reshape(-1, 8, 128)[:n][None]
            vv = vc[table[i].long()].reshape(-1, 8, 128)[:n][None]
            want = reference(q[i:i + 1], kk, vv, False, 128 ** -0.5,
                             alibi=slopes, sinks=sinks)
            worst = max(worst,
                        (out[i:i + 1].double() - want).abs().max().item())
    check("flash_attn_with_kvcache alibi_slopes + sinks in a CUDA graph, "
          "10 replays", worst <= 2e-2, f"worst {worst:.2g}")


def gpu_ms(call, reps=10):
    call()
    torch.cuda.synchronize()
    start, end = torch.cuda.Event(enable_timing=True), \
        torch.cuda.Event(enable_timing=True)
    times = []
    for _ in range(reps):
        start.record()
        call()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def window_bench():
    """Causal L = 32k with a 4k window against the same kernels' 4k-long
    problems: the window's cost must be O(W) per query block, not O(L)
    (issue 32's goal: within 1.25x of 8 x a 4k x 4k non-causal problem,
    whose every query row sees 4096 keys, as a windowed row does); and
    against SDPA with the equivalent explicit mask (the math path: SDPA's
    flash kernels take no window)."""
    import torch.nn.functional as F
    dev, h, d, w = "cuda", 8, 128, 4096
    r = {}
    for L in (4096, 32768):
        q = torch.randn(1, L, h, d, device=dev, dtype=torch.float16)
        k = torch.randn(1, L, h, d, device=dev, dtype=torch.float16)
        v = torch.randn_like(k)
        r[f"fa causal L={L}"] = gpu_ms(lambda: fa.flash_attn_func(
            q, k, v, causal=True))
        r[f"fa causal window {w} L={L}"] = gpu_ms(lambda: fa.flash_attn_func(
            q, k, v, causal=True, window_size=(w - 1, -1)))
        if L == 4096:
            r["fa non-causal L=4096"] = gpu_ms(lambda: fa.flash_attn_func(
                q, k, v))
        if L == 32768:
            i = torch.arange(L, device=dev)
            mask = (i[None] <= i[:, None]) & (i[None] > i[:, None] - w)
            qs, ks, vs = (t.transpose(1, 2) for t in (q, k, v))
            r[f"sdpa explicit window mask L={L}"] = gpu_ms(
                lambda: F.scaled_dot_product_attention(qs, ks, vs,
                                                       attn_mask=mask),
                reps=3)
            del mask
    r = {k: round(v, 3) for k, v in r.items()}
    ideal = 8 * r["fa non-causal L=4096"]
    r["window 32k / (8 x non-causal 4k)"] = round(
        r[f"fa causal window {w} L=32768"] / ideal, 3)
    r["window 32k / full causal 32k"] = round(
        r[f"fa causal window {w} L=32768"] / r["fa causal L=32768"], 3)
    results["window_bench_ms"] = r
    print("window bench (ms):", r, flush=True)


def api_checks():
    dev = "cuda"
    torch.manual_seed(0)
    for dtype, tol in ((torch.float16, 2e-2), (torch.float32, 1e-4)):
        q = torch.randn(2, 300, 16, 64, device=dev, dtype=dtype)
        k = torch.randn(2, 310, 4, 64, device=dev, dtype=dtype)
        v = torch.randn_like(k)
        out = fa.flash_attn_func(q, k, v, causal=True)
        err = (out.double() - reference(q, k, v, True, 0.125)).abs().max()
        check(f"flash_attn_func {dtype}", err.item() <= tol, f"err {err:.2g}")
    # Paged decode.
    b, page, pages = 4, 16, 64
    kc = torch.randn(b * pages, page, 8, 128, device=dev, dtype=torch.float16)
    vc = torch.randn_like(kc)
    table = torch.randperm(b * pages, device=dev)[:b * pages].view(
        b, pages).to(torch.int32)
    lens = torch.tensor([1000, 1, 0, 777], dtype=torch.int32, device=dev)
    q = torch.randn(b, 1, 32, 128, device=dev, dtype=torch.float16)

    def paged_ref():
        outs = []
        for i in range(b):
            n = int(lens[i])
            if n == 0:
                outs.append(torch.zeros(1, 1, 32, 128, dtype=torch.float64,
                                        device=dev))
                continue
            kk = kc[table[i].long()].reshape(-1, 8, 128)[:n][None]
            vv = vc[table[i].long()].reshape(-1, 8, 128)[:n][None]
            outs.append(reference(q[i:i + 1], kk, vv, False, 128 ** -0.5))
        return torch.cat(outs)

    out = fa.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens,
                                     block_table=table)
    err = (out.double() - paged_ref()).abs().max().item()
    check("flash_attn_with_kvcache paged decode", err <= 2e-2, f"err {err:.2g}")
    # The same call in a CUDA graph, replayed with new lengths.
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        out = fa.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens,
                                         block_table=table)
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        out = fa.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens,
                                         block_table=table)
    worst = 0.0
    for r in range(20):
        lens.copy_(torch.randint(0, page * pages + 1, (b,), dtype=torch.int32))
        q.copy_(torch.randn_like(q))
        g.replay()
        torch.cuda.synchronize()
        worst = max(worst, (out.double() - paged_ref()).abs().max().item())
    check("flash_attn_with_kvcache in a CUDA graph, 20 replays", worst <= 2e-2,
          f"worst {worst:.2g}")
    # A mixed prefill/decode batch over the paged cache (one launch): two
    # prompt chunks and four decode rows, each sequence's queries its last
    # keys; then decode rows only (the split-KV build), in a CUDA graph.
    lens_q = [300, 1, 1, 64]
    used = torch.tensor([1000, 1, 777, 64], dtype=torch.int32, device=dev)
    cu_q = torch.tensor([0] + torch.tensor(lens_q).cumsum(0).tolist(),
                        dtype=torch.int32, device=dev)

    def mixed_ref(qm, lq):
        outs = []
        for i in range(b):
            n, rows = int(used[i]), slice(int(cu_q[i]), int(cu_q[i + 1]))
            if lq[i] == 0:
                continue
            kk = kc[table[i].long()].reshape(-1, 8, 128)[:n][None]
            vv = vc[table[i].long()].reshape(-1, 8, 128)[:n][None]
            outs.append(reference(qm[rows][None], kk, vv, True,
                                  128 ** -0.5)[0])
        return torch.cat(outs)

    qm = torch.randn(sum(lens_q), 32, 128, device=dev, dtype=torch.float16)
    out = fa.flash_attn_varlen_func(qm, kc, vc, cu_q, None, max(lens_q),
                                    1000, causal=True, block_table=table,
                                    seqused_k=used)
    err = (out.double() - mixed_ref(qm, lens_q)).abs().max().item()
    check("flash_attn_varlen_func mixed batch (block_table)", err <= 2e-2,
          f"err {err:.2g}")
    lens_q = [1, 1, 1, 1]
    cu_q = torch.arange(5, dtype=torch.int32, device=dev)
    qm = torch.randn(4, 32, 128, device=dev, dtype=torch.float16)
    g = torch.cuda.CUDAGraph()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        fa.flash_attn_varlen_func(qm, kc, vc, cu_q, None, 1, 1024,
                                  causal=True, block_table=table,
                                  seqused_k=used)
    torch.cuda.current_stream().wait_stream(side)
    with torch.cuda.graph(g):
        out = fa.flash_attn_varlen_func(qm, kc, vc, cu_q, None, 1, 1024,
                                        causal=True, block_table=table,
                                        seqused_k=used)
    worst = 0.0
    for r in range(10):
        used.copy_(torch.randint(1, page * pages + 1, (b,), dtype=torch.int32))
        qm.copy_(torch.randn_like(qm))
        g.replay()
        torch.cuda.synchronize()
        worst = max(worst, (out.double() - mixed_ref(qm, lens_q)).abs()
                    .max().item())
    check("flash_attn_varlen_func mixed decode rows in a CUDA graph, 10 "
          "replays", worst <= 2e-2, f"worst {worst:.2g}")
    # torch.compile through the torch.library op.
    try:
        f = torch.compile(lambda q, k, v: fa.flash_attn_func(q, k, v,
                                                             causal=True))
        q = torch.randn(1, 64, 8, 64, device=dev, dtype=torch.float16)
        k = torch.randn(1, 64, 8, 64, device=dev, dtype=torch.float16)
        got = f(q, k, k)
        err = (got.double() - reference(q, k, k, True, 0.125)).abs().max()
        check("torch.compile traces fa.flash_attn_func", err.item() <= 2e-2,
              f"err {err:.2g}")
    except Exception as e:  # reported as a failed check
        check("torch.compile traces fa.flash_attn_func", False, repr(e)[:300])


def host_us(call, batch=64, rounds=31):
    for _ in range(4):
        call()
    torch.cuda.synchronize()
    per = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(batch):
            call()
        per.append((time.perf_counter() - t0) / batch * 1e6)
        torch.cuda.synchronize()
    return statistics.median(per)


def overhead():
    dev = "cuda"
    b, lk = 1, 1024
    q = torch.randn(b, 1, 32, 128, device=dev, dtype=torch.float16)
    kc = torch.randn(b, lk, 8, 128, device=dev, dtype=torch.float16)
    vc = torch.randn_like(kc)
    lens = torch.full((b,), lk, dtype=torch.int32, device=dev)
    py = host_us(lambda: fa.flash_attn_with_kvcache(q, kc, vc,
                                                    cache_seqlens=lens))
    py_lse = host_us(lambda: fa.flash_attn_with_kvcache(
        q, kc, vc, cache_seqlens=lens, return_softmax_lse=True))
    # flash_attn_func's decode call, as transformers' layers make it.
    py_func = host_us(lambda: fa.flash_attn_func(q, kc, vc, causal=True))
    table1 = torch.arange(b, dtype=torch.int32, device=dev).view(b, 1)
    py_paged = host_us(lambda: fa.flash_attn_with_kvcache(
        q, kc, vc, cache_seqlens=lens, block_table=table1))
    # Through the dispatcher (what torch.compile's graphs call).
    op = host_us(lambda: torch.ops.fa.kvcache_fwd(q, kc, vc, lens, table1,
                                                  None, False, 0))
    # The same kernel through the C call, arguments built once.
    spec = _jit.Spec("paged", "f16", 128, False, _jit.canonical_scale(
        1 / math.sqrt(128)), True, "sm_90")
    m = _jit.module(spec, "cuda:0")
    d = _jit.device("cuda:0")
    out = torch.empty_like(q)
    lse = torch.empty(b, 32, 1, device=dev, dtype=torch.float32)
    table = torch.zeros(b, 1, dtype=torch.int32, device=dev)

    def w(t):
        return _capi.Buffer(d, t.data_ptr(), t.numel() * t.element_size(), t)

    strides = [32 * 128, 128, 32 * 128, lk * 8 * 128, 128, 8 * 128,
               lk * 8 * 128, 128, 8 * 128, 32 * 128, 128, 32 * 128, 32, 1]
    args = _capi.Module.args(w(q), w(kc), w(vc), w(out), w(lse),
                             (b, 32, 8, 1, lk), strides)
    paged = _capi.Module.paged(w(table), w(lens), lk, 1, b)
    ws_t = torch.empty(m.workspace_size(args), dtype=torch.uint8, device=dev)
    ws = w(ws_t)
    stream = torch.cuda.current_stream().cuda_stream
    c = host_us(lambda: m.enqueue(args, stream, ws, paged=paged))
    # The allocations any call makes: out, lse and the split-KV workspace.
    n_ws = ws_t.numel()
    alloc = host_us(lambda: (torch.empty_like(q), torch.empty(
        b, 32, 1, device=dev, dtype=torch.float32), torch.empty(
        n_ws, dtype=torch.uint8, device=dev)))
    # SDPA on the same problem (dense K/V as (B, H, L, D) views).
    import torch.nn.functional as F
    qs, ks, vs = q.transpose(1, 2), kc.transpose(1, 2), vc.transpose(1, 2)
    sd = host_us(lambda: F.scaled_dot_product_attention(qs, ks, vs,
                                                        enable_gqa=True))
    results["overhead_us"] = {"fa_python_api": round(py, 2),
                              "fa_python_api_block_table": round(py_paged,
                                                                 2),
                              "fa_python_api_return_lse": round(py_lse, 2),
                              "fa_flash_attn_func_decode": round(py_func,
                                                                 2),
                              "torch_ops_fa_kvcache_fwd": round(op, 2),
                              "fa_c_call_via_ctypes": round(c, 2),
                              "output_allocations": round(alloc, 2),
                              "sdpa": round(sd, 2),
                              "python_over_c": round(py - c, 2)}
    print("host us per call:", results["overhead_us"], flush=True)
    # Issue 31's goal (a report, not a check: host timings vary from run
    # to run).
    print(f"goal: the Python layer adds <= 10 us over the C call: "
          f"{'met' if py - c <= 10 else 'NOT met'} ({py - c:.1f} us)",
          flush=True)


def spread_sinks(model, seed=1):
    """gpt-oss initialises its sinks N(0, 0.02): set them 2 N(0, 1) (the same
    values in every model of a comparison), so that they weigh against the
    rows' keys as trained sinks do."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for module in model.modules():
            sinks = getattr(module, "sinks", None)
            if isinstance(sinks, torch.nn.Parameter):
                sinks.copy_(2 * torch.randn(sinks.shape, generator=g))


def generate_compare(name, cfg, dtype, gpt_oss, against):
    """generate() 32 greedy tokens with "eager" and "fa": the same tokens
    and the first step's logits within tolerance; the token rate of "fa"
    and `against`."""
    from transformers import AutoModelForCausalLM
    torch.manual_seed(0)
    models = {}
    for impl in ("eager", "fa") + (() if gpt_oss else ("sdpa",)):
        torch.manual_seed(0)
        m = from_config(cfg, impl, dtype)
        if gpt_oss:
            spread_sinks(m)
        models[impl] = m.cuda().eval()
    prompt = torch.randint(0, cfg.vocab_size, (2, 40), device="cuda")
    gen = dict(max_new_tokens=32, do_sample=False, min_new_tokens=32,
               output_scores=True, return_dict_in_generate=True,
               pad_token_id=0)
    outs = {}
    with torch.no_grad():
        for impl in ("eager", "fa"):
            outs[impl] = models[impl].generate(prompt, **gen)
        same = torch.equal(outs["eager"].sequences,
                           outs["fa"].sequences)
        # Scores a logits processor set to -inf (min_new_tokens
        # hides EOS) on both sides are equal, not NaN.
        diffs = [torch.where(torch.isinf(a) & (a == b),
                             torch.zeros_like(a.float()),
                             (a.float() - b.float()).abs()).max().item()
                 for a, b in zip(outs["eager"].scores,
                                 outs["fa"].scores)]
        rates = {}
        for impl in ("fa", against):
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            models[impl].generate(prompt, **gen)
            torch.cuda.synchronize()
            rates[impl] = round(2 * 32 / (time.perf_counter() - t0), 1)
    key = f"{name} {str(dtype).replace('torch.', '')}"
    tol = {torch.float32: 1e-3, torch.float16: 5e-2,
           torch.bfloat16: 1e-1}[dtype]
    results["transformers"][key] = {
        "same_tokens": same, "first_logits_diff": diffs[0],
        "max_logits_diff": max(diffs), "tokens_per_s": rates}
    # fp16 / bf16 greedy tokens may part at a near tie; fp32 must
    # agree.
    ok = diffs[0] <= tol and (same or dtype != torch.float32)
    check(f"transformers generate {key}", ok,
          f"same tokens {same}, first-step logits diff "
          f"{diffs[0]:.2g}, tokens/s {rates}")


def from_config(cfg, impl, dtype):
    from transformers import AutoModelForCausalLM
    try:
        return AutoModelForCausalLM.from_config(
            cfg, attn_implementation=impl, dtype=dtype)
    except TypeError:  # transformers before 4.56: torch_dtype
        return AutoModelForCausalLM.from_config(
            cfg, attn_implementation=impl, torch_dtype=dtype)


def graph_compare(name, cfg, dtype):
    """generate() with "eager", 32 greedy tokens, against fa's StaticCache
    decode with the one-token step captured in a CUDA graph
    (fa.integrations.transformers.greedy_generate(cuda_graph=True)): the
    same tokens and every step's logits within tolerance (up to the first
    step where the tokens part, which only fp16 may do, at a near tie);
    the token rate of both (fa's including the capture)."""
    import fa.integrations.transformers as fat
    models = {}
    for impl in ("eager", "fa"):
        torch.manual_seed(0)
        models[impl] = from_config(cfg, impl, dtype).cuda().eval()
    prompt = torch.randint(0, cfg.vocab_size, (2, 40), device="cuda")
    gen = dict(max_new_tokens=32, do_sample=False, min_new_tokens=32,
               output_logits=True, return_dict_in_generate=True,
               pad_token_id=0)
    eos = models["eager"].generation_config.eos_token_id
    eos = [] if eos is None else [eos] if isinstance(eos, int) else list(eos)
    rates = {}
    with torch.no_grad():
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        ref = models["eager"].generate(prompt, **gen)
        torch.cuda.synchronize()
        rates["eager"] = round(2 * 32 / (time.perf_counter() - t0), 1)
        for _ in range(2):  # the second run's rate (kernels loaded)
            torch.cuda.synchronize()
            t0 = time.perf_counter()
            seqs, logits = fat.greedy_generate(models["fa"], prompt, 32,
                                               cuda_graph=True,
                                               suppress_tokens=eos)
            torch.cuda.synchronize()
            rates["fa-graph"] = round(2 * 32 / (time.perf_counter() - t0),
                                      1)
    ref_logits = ref.logits if getattr(ref, "logits", None) else ref.scores
    same = torch.equal(seqs, ref.sequences)
    if seqs.shape != ref.sequences.shape:
        raise RuntimeError(f"fa: {tuple(seqs.shape)} tokens from "
                           f"greedy_generate, {tuple(ref.sequences.shape)} "
                           f"from generate()")
    parted = (seqs != ref.sequences).any(0).nonzero()
    upto = 32 if not len(parted) else int(parted[0]) - 40 + 1
    diffs = [(a.float() - b).abs().max().item()
             for a, b in zip(ref_logits[:upto], logits[:upto])]
    key = f"{name} {str(dtype).replace('torch.', '')} cuda-graph"
    tol = {torch.float32: 1e-3, torch.float16: 5e-2}[dtype]
    results["transformers"][key] = {
        "same_tokens": same, "steps_compared": upto,
        "max_logits_diff": max(diffs), "tokens_per_s": rates}
    ok = max(diffs) <= tol and (same or dtype != torch.float32)
    check(f"transformers decode in a CUDA graph {key}", ok,
          f"same tokens {same}, logits diff over {upto} steps "
          f"{max(diffs):.2g}, tokens/s {rates}")


def transformers_runs():
    import transformers
    from transformers import LlamaConfig, Qwen2Config
    import fa.integrations.transformers as fat
    fat.register()
    results["transformers"]["version"] = transformers.__version__
    configs = {
        "llama-gqa": LlamaConfig(vocab_size=512, hidden_size=512,
                                 intermediate_size=1024, num_hidden_layers=4,
                                 num_attention_heads=8, num_key_value_heads=2,
                                 head_dim=64, max_position_embeddings=512),
        "qwen2-gqa": Qwen2Config(vocab_size=512, hidden_size=896,
                                 intermediate_size=1024, num_hidden_layers=4,
                                 num_attention_heads=14, num_key_value_heads=2,
                                 max_position_embeddings=512),
    }
    try:  # Gemma 2: softcap 50 in every layer, a window of 16 in every
        # other (issue 32); 40 + 32 tokens cross the window.
        from transformers import Gemma2Config
        configs["gemma2-window-softcap"] = Gemma2Config(
            vocab_size=512, hidden_size=512, intermediate_size=1024,
            num_hidden_layers=4, num_attention_heads=8,
            num_key_value_heads=4, head_dim=64, query_pre_attn_scalar=64,
            sliding_window=16, attn_logit_softcapping=50.0,
            final_logit_softcapping=30.0, max_position_embeddings=512)
    except ImportError as e:
        check("transformers Gemma2Config", False, repr(e)[:200])
    # gpt-oss: attention sinks (s_aux) in every layer, a window of 16 in
    # every other (its own is 128; 40 + 32 tokens cross 16), GQA 8:2, four
    # experts. transformers has no "sdpa" for it (sinks).
    try:
        from transformers import GptOssConfig
    except ImportError as e:
        GptOssConfig = None
        print(f"SKIP transformers gpt-oss: transformers "
              f"{transformers.__version__} has no GptOssConfig ({e})",
              flush=True)
        results["transformers"]["gpt-oss"] = "SKIP: no GptOssConfig"
    if GptOssConfig is not None:
        try:
            configs["gpt-oss-sinks-window"] = GptOssConfig(
                vocab_size=512, hidden_size=256, intermediate_size=256,
                num_hidden_layers=4, num_attention_heads=8,
                num_key_value_heads=2, head_dim=64, sliding_window=16,
                num_local_experts=4, num_experts_per_tok=2)
        except Exception as e:  # reported as a failed check
            check("transformers GptOssConfig", False, repr(e)[:300])
    for name, cfg in configs.items():
        gpt_oss = name.startswith("gpt-oss")
        # gpt-oss is a bf16 model; its token rate is against eager.
        dtypes = (torch.float32, torch.float16) + \
            ((torch.bfloat16,) if gpt_oss else ())
        against = "eager" if gpt_oss else "sdpa"
        for dtype in dtypes:
            try:
                generate_compare(name, cfg, dtype, gpt_oss, against)
            except Exception as e:  # reported as a failed check, named
                import traceback
                traceback.print_exc()
                check(f"transformers generate {name} "
                      f"{str(dtype).replace('torch.', '')}", False,
                      repr(e)[:500])
    # The decode step in a CUDA graph (issue 31): Llama and Qwen2.
    for name in ("llama-gqa", "qwen2-gqa"):
        for dtype in (torch.float32, torch.float16):
            try:
                graph_compare(name, configs[name], dtype)
            except Exception as e:  # reported as a failed check, named
                import traceback
                traceback.print_exc()
                check(f"transformers decode in a CUDA graph {name} "
                      f"{str(dtype).replace('torch.', '')}", False,
                      repr(e)[:500])


def main():
    if sys.argv[1:2] == ["--compile"]:
        os.environ["FA_CACHE_DIR"] = sys.argv[2]
        for layout, dt, d, causal, scale, decode, *more in KERNELS:
            window, cap, *heads = more if more else ((-1, -1), 0.0)
            alibi, sinks = heads if heads else (False, False)
            print(fa.compile(dt, d, "sm_90", causal=causal,
                             softmax_scale=scale, layout=layout,
                             decode=decode, window_size=window,
                             softcap=cap, alibi=alibi, sinks=sinks),
                  flush=True)
        return
    out = sys.argv[1] if len(sys.argv) > 1 else "."
    os.makedirs(out, exist_ok=True)
    api_checks()
    overhead()
    for part in (window_checks, heads_checks, window_bench):
        try:
            part()
        except Exception as e:  # reported as a failed check
            import traceback
            traceback.print_exc()
            check(part.__name__, False, repr(e)[:500])
    try:
        transformers_runs()
    except Exception as e:  # reported as a failed check
        import traceback
        traceback.print_exc()
        check("transformers", False, repr(e)[:500])
    with open(os.path.join(out, "python_api.json"), "w") as f:
        json.dump(results, f, indent=1, default=str)
    failed = [k for k, v in results["checks"].items() if not v["pass"]]
    print("FAILED:" if failed else "all checks pass", failed)
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
