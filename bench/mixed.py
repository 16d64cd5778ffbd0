#!/usr/bin/env python3
"""A vLLM-like mixed prefill/decode batch on one GPU: one mixed launch
(flash_attn_varlen_func with block_table: fa.attention paged + varlen,
packed queries over a paged cache) against the separate prefill and decode
launches an engine needs without it, in one run (a benchmark, never a
timed test), through fa's Python API as an engine would call it.

The batch (issue 32's): 4 prompt chunks of 512 query rows, the last 512
rows of histories of 4k, 8k, 16k and 32k keys, and 60 decode rows over
histories drawn from [4k, 32k] (seed 32); f16, D = 128, Hq = 32, Hkv = 8,
causal (bottom-right: a sequence's queries are its last keys), pages of 16
rows in a shuffled order. Rows:

  mixed             the whole batch, one flash_attn_varlen_func call with
                    block_table (the prefill build: the batch has chunks)
  separate          flash_attn_with_kvcache on the 4 chunks (B = 4, Lq =
                    512, prefill build) then on the 60 decode rows (B = 60,
                    Lq = 1, the split-KV + GQA-packing build): two launches,
                    what an engine needs without mixed batches
  mixed, chunks only / decode rows only: the mixed call on each half (the
                    decode half takes the split-KV build: every sequence
                    has one row), to show where the mixed launch's time goes
  sdpa, per sequence: torch SDPA (flash backend where it takes the
                    shape, f16) over each sequence's keys gathered from the
                    pages beforehand (outside the timing): the dense work
                    the batch is, without paging, one call per sequence

Time: CUDA events around N calls after warm-up, median of 5 such rounds
(per batch). K/V bytes: every sequence's keys once (sum Lk x Hkv x D x 2
bytes x K and V) over the time. Before timing, the mixed output is checked
against the separate launches' and against an fp32 SDPA reference of
every sequence (max abs error <= 2e-2); a failure fails the run.

usage (the GPU machine has no LLVM: compile the kernels here first):
  PYTHONPATH=python FA_RUNTIME_LIBRARY=... FA_COMPILE_LIBRARY=... \\
      /usr/bin/python3 bench/mixed.py --compile CACHE_DIR
  FA_CACHE_DIR=CACHE_DIR FA_RUNTIME_LIBRARY=... PYTHONPATH=python \\
      python3 bench/mixed.py OUT_DIR [--reps N]
  python3 bench/mixed.py --self-test     (no GPU, no torch: the batch)
  python3 bench/mixed.py --smoke         (CPU tensors, tiny shapes: the
                                          checks, no timing)
Writes OUT_DIR/mixed.md and OUT_DIR/mixed.json.
"""
import json
import os
import random
import subprocess
import sys

HQ, HKV, D, PAGE = 32, 8, 128, 16
PREFILL_KEYS = [4096, 8192, 16384, 32768]
CHUNK = 512
DECODE_ROWS = 60
DECODE_RANGE = (4096, 32768)
SCALE = D ** -0.5
# Split-KV + GQA-packing builds of the mixed kernel with prefill-sized
# tiles (block_m, block_n, waves): decode rows fill a tile's rows with the
# heads of one KV head and split their keys, chunks keep large tiles.
TILES = [(64, 64, 4), (128, 64, 8)]


def decode_keys():
    rng = random.Random(32)
    return [rng.randint(*DECODE_RANGE) for _ in range(DECODE_ROWS)]


def kv_bytes(keys):
    return sum(keys) * HKV * D * 2 * 2


def compile_kernels(cache):
    os.environ["FA_CACHE_DIR"] = cache
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..",
                                    "python"))
    import fa
    for layout in ("mixed", "paged"):
        for decode in (False, True):
            print(fa.compile("f16", D, "sm_90", causal=True,
                             softmax_scale=SCALE, layout=layout,
                             decode=decode), flush=True)
    from fa import _jit
    for tiles in TILES:
        print(_jit.compile_to_cache(_jit.Spec(
            "mixed", "f16", D, True, _jit.canonical_scale(SCALE), True,
            "sm_90", tiles=tiles)), flush=True)


def run(out_dir, reps, smoke=False):
    import torch
    import fa
    dev = "cpu" if smoke else "cuda"
    torch.manual_seed(0)
    dk = decode_keys()
    keys = PREFILL_KEYS + dk
    lens_q = [CHUNK] * len(PREFILL_KEYS) + [1] * DECODE_ROWS
    b = len(keys)
    pages_of = [-(-n // PAGE) for n in keys]
    max_pages = max(pages_of)
    num_pages = sum(pages_of)
    kc = torch.randn(num_pages, PAGE, HKV, D, device=dev,
                     dtype=torch.float16)
    vc = torch.randn_like(kc)
    perm = torch.randperm(num_pages, device=dev).to(torch.int32)
    table = torch.zeros(b, max_pages, dtype=torch.int32, device=dev)
    at = 0
    for i, n in enumerate(pages_of):
        table[i, :n] = perm[at:at + n]
        at += n
    used = torch.tensor(keys, dtype=torch.int32, device=dev)
    cu_q = torch.tensor([0] + torch.tensor(lens_q).cumsum(0).tolist(),
                        dtype=torch.int32, device=dev)
    q = torch.randn(sum(lens_q), HQ, D, device=dev, dtype=torch.float16)
    n_pre = len(PREFILL_KEYS) * CHUNK

    def mixed(qq, cu, u, tab, max_q):
        return fa.flash_attn_varlen_func(qq, kc, vc, cu, None, max_q,
                                         max_pages * PAGE, causal=True,
                                         softmax_scale=SCALE,
                                         block_table=tab, seqused_k=u)

    def mixed_build(qq, cu, u, tab, max_q, decode, tiles=()):
        # The other build than the API's choice (fa._interface.mixed_fwd's
        # `decode`, `tiles`): where the mixed launch's time goes with each.
        from fa import _interface
        return _interface.mixed_fwd(qq, kc, vc, cu, u, tab, max_q, SCALE,
                                    True, decode=decode, tiles=tiles)[0]

    nb = len(PREFILL_KEYS)
    q_pre = q[:n_pre].view(nb, CHUNK, HQ, D)
    q_dec = q[n_pre:].view(DECODE_ROWS, 1, HQ, D)
    cu_pre, cu_dec = cu_q[:nb + 1], cu_q[nb:] - cu_q[nb]
    calls = {
        "mixed": lambda: mixed(q, cu_q, used, table, CHUNK),
        "mixed, chunks only": lambda: mixed(q[:n_pre], cu_pre, used[:nb],
                                            table[:nb], CHUNK),
        "mixed, decode rows only": lambda: mixed(q[n_pre:], cu_dec,
                                                 used[nb:], table[nb:], 1),
        "mixed, decode build (split-KV + packing)": lambda: mixed_build(
            q, cu_q, used, table, CHUNK, True),
        "mixed, chunks only, decode build": lambda: mixed_build(
            q[:n_pre], cu_pre, used[:nb], table[:nb], CHUNK, True),
        "mixed, decode rows only, prefill build": lambda: mixed_build(
            q[n_pre:], cu_dec, used[nb:], table[nb:], 1, False),
        **{f"mixed, split-KV + packing, {t[0]}x{t[1]} tiles":
           (lambda t=t: mixed_build(q, cu_q, used, table, CHUNK, True, t))
           for t in (() if smoke else TILES)},
        "separate: chunks": lambda: fa.flash_attn_with_kvcache(
            q_pre, kc, vc, cache_seqlens=used[:nb], block_table=table[:nb],
            causal=True, softmax_scale=SCALE),
        "separate: decode rows": lambda: fa.flash_attn_with_kvcache(
            q_dec, kc, vc, cache_seqlens=used[nb:], block_table=table[nb:],
            causal=True, softmax_scale=SCALE),
    }
    # Each sequence's keys, gathered (for the references and SDPA).
    gathered = []
    for i, n in enumerate(keys):
        rows = table[i, :pages_of[i]].long()
        gathered.append((kc[rows].reshape(-1, HKV, D)[:n],
                         vc[rows].reshape(-1, HKV, D)[:n]))
    g = HQ // HKV

    def sdpa_seq(i, qs, dtype):
        k, v = gathered[i]
        qh = qs.to(dtype).transpose(0, 1)[None]
        kh = k.to(dtype).transpose(0, 1).repeat_interleave(g, 0)[None]
        vh = v.to(dtype).transpose(0, 1).repeat_interleave(g, 0)[None]
        lq, lk = qs.shape[0], k.shape[0]
        mask = None
        if lq > 1 or qs.device.type == "cpu":
            i_ = torch.arange(lq, device=dev)[:, None]
            j_ = torch.arange(lk, device=dev)[None]
            mask = j_ <= i_ + lk - lq
        sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention",
                       None)
        if sdpa is None:  # torch 1.13 (--smoke): the same, by hand
            sc = qh @ kh.transpose(-1, -2) * SCALE
            if mask is not None:
                sc = sc.masked_fill(~mask, float("-inf"))
            o = torch.softmax(sc, -1) @ vh
        else:
            o = sdpa(qh, kh, vh, attn_mask=mask, scale=SCALE)
        return o[0].transpose(0, 1)

    checks = {}
    out = calls["mixed"]()
    sep = torch.cat([calls["separate: chunks"]().reshape(-1, HQ, D),
                     calls["separate: decode rows"]().reshape(-1, HQ, D)])
    err_sep = (out.float() - sep.float()).abs().max().item()
    worst = 0.0
    for i in range(b):
        rows = slice(int(cu_q[i]), int(cu_q[i + 1]))
        ref = sdpa_seq(i, q[rows], torch.float32)
        worst = max(worst, (out[rows].float() - ref).abs().max().item())
    halves = torch.cat([calls["mixed, chunks only"](),
                        calls["mixed, decode rows only"]()])
    err_halves = (out.float() - halves.float()).abs().max().item()
    other = calls["mixed, decode build (split-KV + packing)"]()
    checks["mixed, decode build vs prefill build"] = (
        (out.float() - other.float()).abs().max().item() <= 2e-2,
        (out.float() - other.float()).abs().max().item())
    for name in [n for n in calls if n.startswith("mixed, split-KV")]:
        e = (out.float() - calls[name]().float()).abs().max().item()
        checks[f"{name} vs the prefill build"] = (e <= 2e-2, e)
    checks["mixed vs fp32 SDPA per sequence"] = (worst <= 2e-2, worst)
    checks["mixed vs separate launches"] = (err_sep <= 2e-2, err_sep)
    checks["mixed vs its halves"] = (err_halves <= 2e-2, err_halves)
    for name, (ok, err) in checks.items():
        print(f"{'PASS' if ok else 'FAIL'} {name}: max abs {err:.3g}",
              flush=True)

    if smoke:  # the checks only (CPU, host emulator)
        return 0 if all(ok for ok, _ in checks.values()) else 1

    def timed(fn):
        for _ in range(3):
            fn()
        torch.cuda.synchronize()
        rounds = []
        for _ in range(5):
            s = torch.cuda.Event(enable_timing=True)
            e = torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(reps):
                fn()
            e.record()
            torch.cuda.synchronize()
            rounds.append(s.elapsed_time(e) / reps)
        return sorted(rounds)[2]

    ms = {name: timed(fn) for name, fn in calls.items()}
    ms["separate (chunks + decode rows)"] = timed(
        lambda: (calls["separate: chunks"](),
                 calls["separate: decode rows"]()))

    def sdpa_all():
        for i in range(b):
            rows = slice(int(cu_q[i]), int(cu_q[i + 1]))
            sdpa_seq(i, q[rows], torch.float16)
    ms["sdpa, per sequence (keys gathered)"] = timed(sdpa_all)
    total = kv_bytes(keys)
    nbytes = {"mixed": total, "mixed, chunks only": kv_bytes(PREFILL_KEYS),
              "mixed, decode rows only": kv_bytes(dk),
              "mixed, decode build (split-KV + packing)": total,
              "mixed, chunks only, decode build": kv_bytes(PREFILL_KEYS),
              "mixed, decode rows only, prefill build": kv_bytes(dk),
              **{f"mixed, split-KV + packing, {t[0]}x{t[1]} tiles": total
                 for t in TILES},
              "separate: chunks": kv_bytes(PREFILL_KEYS),
              "separate: decode rows": kv_bytes(dk),
              "separate (chunks + decode rows)": total,
              "sdpa, per sequence (keys gathered)": total}
    gpu = torch.cuda.get_device_name()
    try:
        commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                                capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = "?"
    os.makedirs(out_dir, exist_ok=True)
    with open(os.path.join(out_dir, "mixed.json"), "w") as f:
        json.dump(dict(gpu=gpu, torch=torch.__version__, reps=reps,
                       ms=ms, kv_bytes=nbytes,
                       checks={k: [bool(a), c] for k, (a, c) in
                               checks.items()}), f, indent=1)
    with open(os.path.join(out_dir, "mixed.md"), "w") as f:
        f.write(f"# A vLLM-like mixed batch on {gpu} (torch "
                f"{torch.__version__})\n\n"
                f"4 prompt chunks of {CHUNK} rows over {PREFILL_KEYS} keys "
                f"+ {DECODE_ROWS} decode rows over keys drawn from "
                f"{list(DECODE_RANGE)} (seed 32); f16, D={D}, Hq={HQ}, "
                f"Hkv={HKV}, causal, shuffled pages of {PAGE}; CUDA events "
                f"around {reps} calls, median of 5 rounds. K/V bytes: each "
                f"sequence's keys once ({total / 1e9:.2f} GB for the "
                "batch).\n\n| row | ms | K/V GB/s |\n|---|---|---|\n")
        for name, t in ms.items():
            f.write(f"| {name} | {t:.3f} | "
                    f"{nbytes[name] / (t * 1e-3) / 1e9:.0f} |\n")
        f.write("\n" + "\n".join(
            f"- {'PASS' if ok else 'FAIL'} {k}: max abs {err:.3g}"
            for k, (ok, err) in checks.items()) + "\n")
        f.write(f"\ncommit {commit}\n")
    for name, t in ms.items():
        print(f"{name:40s} {t:9.3f} ms "
              f"{nbytes[name] / (t * 1e-3) / 1e9:7.0f} GB/s", flush=True)
    return 0 if all(ok for ok, _ in checks.values()) else 1


def self_test():
    dk = decode_keys()
    assert len(dk) == DECODE_ROWS and all(
        DECODE_RANGE[0] <= x <= DECODE_RANGE[1] for x in dk)
    assert all(k >= CHUNK for k in PREFILL_KEYS)
    total = kv_bytes(PREFILL_KEYS + dk)
    assert total == kv_bytes(PREFILL_KEYS) + kv_bytes(dk)
    assert total == sum(PREFILL_KEYS + dk) * HKV * D * 4
    print(f"self-test: ok ({total / 1e9:.2f} GB of K/V in the batch)")
    return 0


def main():
    a = sys.argv[1:]
    if a[:1] == ["--self-test"]:
        return self_test()
    if a[:1] == ["--compile"] and len(a) == 2:
        compile_kernels(a[1])
        return 0
    if a[:1] == ["--smoke"]:
        # Tiny shapes on CPU tensors (the host emulator): the script's
        # checks, no timing.
        global PREFILL_KEYS, CHUNK, DECODE_ROWS, DECODE_RANGE
        PREFILL_KEYS, CHUNK, DECODE_ROWS, DECODE_RANGE = [40, 70], 9, 5, \
            (20, 90)
        return run(None, 1, smoke=True)
    if a and not a[0].startswith("-"):
        reps = int(a[a.index("--reps") + 1]) if "--reps" in a else 10
        return run(a[0], reps)
    print(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main())
