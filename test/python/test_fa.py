"""`import fa` on CPU tensors (fa's host emulator), against fp64 references:
FlashAttention 2's three functions, their errors, the torch.library ops,
the transformers attention function, and the JIT cache (hit, miss,
corrupted entry, concurrent processes).

Run with Debian's python3 (python3-torch) and the build's libraries:
    FA_CACHE_DIR=... PYTHONPATH=python /usr/bin/python3 -m unittest \
        test/python/test_fa.py
"""

import math
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

import torch

import fa
from fa import _jit


def reference(q, k, v, causal, scale=None, window=(-1, -1), softcap=0.0):
    """fp64 (out, lse) of (B, L, H, D) tensors; bottom-right causal and
    window (FlashAttention 2's window_size), softcap on the scaled scores;
    rows that see no key: 0 and -inf."""
    b, lq, hq, d = q.shape
    hkv, lk = k.shape[2], k.shape[1]
    scale = 1 / math.sqrt(d) if scale is None else scale
    qh = q.double().transpose(1, 2)
    kh = k.double().transpose(1, 2).repeat_interleave(hq // hkv, 1)
    vh = v.double().transpose(1, 2).repeat_interleave(hq // hkv, 1)
    s = qh @ kh.transpose(-1, -2) * scale
    if softcap:
        s = softcap * torch.tanh(s / softcap)
    i = torch.arange(lq)[:, None]
    j = torch.arange(lk)[None]
    if causal:
        s = s.masked_fill(j > i + lk - lq, float("-inf"))
    if window[0] >= 0:
        s = s.masked_fill(j < i + lk - lq - window[0], float("-inf"))
    if window[1] >= 0:
        s = s.masked_fill(j > i + lk - lq + window[1], float("-inf"))
    lse = torch.logsumexp(s, -1)
    p = torch.softmax(s, -1).nan_to_num(0.0)
    return (p @ vh).transpose(1, 2), lse


def close(test, got, want, tol):
    err = (got.double() - want).abs().max().item()
    test.assertLessEqual(err, tol, f"max abs error {err}")


class FlashAttnFunc(unittest.TestCase):
    def test_matches_the_reference(self):
        torch.manual_seed(0)
        for dtype, tol in ((torch.float32, 1e-5), (torch.float16, 2e-3)):
            for causal in (False, True):
                # (1, 1, 70, ...) twice: the second call takes the hot
                # path (_interface._Launch).
                for (b, lq, lk, hq, hkv, d) in ((2, 37, 50, 4, 2, 64),
                                               (1, 1, 70, 8, 2, 64),
                                               (1, 1, 70, 8, 2, 64),
                                               (1, 40, 17, 2, 2, 32)):
                    with self.subTest(dtype=dtype, causal=causal, lq=lq):
                        q = torch.randn(b, lq, hq, d).to(dtype)
                        k = torch.randn(b, lk, hkv, d).to(dtype)
                        v = torch.randn(b, lk, hkv, d).to(dtype)
                        out, lse, probs = fa.flash_attn_func(
                            q, k, v, causal=causal, return_attn_probs=True)
                        self.assertIsNone(probs)
                        self.assertEqual(out.shape, q.shape)
                        self.assertEqual(out.dtype, dtype)
                        self.assertEqual(lse.shape, (b, hq, lq))
                        want, want_lse = reference(q, k, v, causal)
                        close(self, out, want, tol)
                        finite = torch.isfinite(want_lse)
                        close(self, lse[finite], want_lse[finite], 1e-4)
                        self.assertTrue(
                            torch.isneginf(lse[~finite]).all().item())

    def test_scale_and_strided_inputs(self):
        torch.manual_seed(1)
        # q as a transposed view of (B, H, L, D): not contiguous, last
        # stride 1; the ABI's strides carry it without a copy.
        qh = torch.randn(2, 4, 9, 32)
        k = torch.randn(2, 11, 4, 32)
        v = torch.randn(2, 11, 4, 32)
        q = qh.transpose(1, 2)
        self.assertFalse(q.is_contiguous())
        out = fa.flash_attn_func(q, k, v, softmax_scale=0.3)
        close(self, out, reference(q, k, v, False, 0.3)[0], 1e-5)
        # A last dimension with stride 2: copied, then run.
        wide = torch.randn(2, 9, 4, 64)[..., ::2]
        out = fa.flash_attn_func(wide, k, v)
        close(self, out, reference(wide, k, v, False)[0], 1e-5)

    def test_errors_name_the_argument(self):
        q = torch.randn(1, 4, 2, 32)
        k = torch.randn(1, 4, 2, 32)
        cases = [
            (dict(dropout_p=0.1), NotImplementedError, "dropout_p=0.1"),
            (dict(window_size=(-2, 0)), ValueError, "window_size"),
            (dict(window_size=3), ValueError, "window_size=3"),
            (dict(softcap=-1.0), ValueError, "softcap=-1.0"),
            (dict(alibi_slopes=torch.ones(2)), NotImplementedError,
             "alibi_slopes"),
            (dict(sinks=torch.ones(2)), NotImplementedError, "sinks"),
            (dict(softmax_scale=-1.0), ValueError, "softmax_scale=-1.0"),
        ]
        for kwargs, error, text in cases:
            with self.subTest(kwargs=list(kwargs)):
                with self.assertRaisesRegex(error, text):
                    fa.flash_attn_func(q, k, k, **kwargs)
        with self.assertRaisesRegex(TypeError, "k.dtype is torch.float16"):
            fa.flash_attn_func(q, k.half(), k)
        with self.assertRaisesRegex(TypeError, "q.dtype torch.int32"):
            fa.flash_attn_func(q.int(), k.int(), k.int())
        with self.assertRaisesRegex(ValueError, "q's 3 heads"):
            fa.flash_attn_func(torch.randn(1, 4, 3, 32), k, k)
        with self.assertRaisesRegex(ValueError, "q must have 4 dimensions"):
            fa.flash_attn_func(q[0], k, k)


class VarlenFunc(unittest.TestCase):
    def test_matches_each_sequence(self):
        torch.manual_seed(2)
        lens_q, lens_k = [5, 0, 7, 1], [9, 3, 7, 20]
        hq, hkv, d = 4, 2, 64
        cu_q = torch.tensor([0] + list(torch.tensor(lens_q).cumsum(0)),
                            dtype=torch.int32)
        cu_k = torch.tensor([0] + list(torch.tensor(lens_k).cumsum(0)),
                            dtype=torch.int32)
        q = torch.randn(sum(lens_q), hq, d)
        k = torch.randn(sum(lens_k), hkv, d)
        v = torch.randn(sum(lens_k), hkv, d)
        for causal in (False, True):
            out, lse, _ = fa.flash_attn_varlen_func(
                q, k, v, cu_q, cu_k, max(lens_q), max(lens_k), causal=causal,
                return_attn_probs=True)
            self.assertEqual(lse.shape, (hq, sum(lens_q)))
            for b in range(4):
                qs, ks = slice(cu_q[b], cu_q[b + 1]), slice(cu_k[b],
                                                            cu_k[b + 1])
                if lens_q[b] == 0:
                    continue
                want, _ = reference(q[qs][None], k[ks][None], v[ks][None],
                                    causal)
                close(self, out[qs], want[0], 1e-5)

    def test_bad_metadata_and_block_table(self):
        q = torch.randn(4, 2, 32)
        cu = torch.tensor([0, 4], dtype=torch.int32)
        with self.assertRaisesRegex(NotImplementedError, "block_table"):
            fa.flash_attn_varlen_func(q, q, q, cu, cu, 4, 4,
                                      block_table=torch.zeros(1, 1))
        with self.assertRaisesRegex(TypeError, "cu_seqlens_q must be"):
            fa.flash_attn_varlen_func(q, q, q, cu.long(), cu, 4, 4)
        # Host tensors are checked by the runtime before the launch.
        with self.assertRaisesRegex(fa.FaError, "max_seqlen_q = 3"):
            fa.flash_attn_varlen_func(q, q, q, cu, cu, 3, 4)


class WithKvCache(unittest.TestCase):
    def test_dense_cache_appends_and_attends(self):
        torch.manual_seed(3)
        b, s, hq, hkv, d = 3, 40, 8, 2, 64
        k_cache = torch.randn(b, s, hkv, d)
        v_cache = torch.randn(b, s, hkv, d)
        lens = torch.tensor([5, 0, 30], dtype=torch.int32)
        q = torch.randn(b, 1, hq, d)
        k_new, v_new = torch.randn(b, 1, hkv, d), torch.randn(b, 1, hkv, d)
        kc, vc = k_cache.clone(), v_cache.clone()
        out, lse = fa.flash_attn_with_kvcache(
            q, kc, vc, k=k_new, v=v_new, cache_seqlens=lens, causal=True,
            return_softmax_lse=True)
        for i in range(b):
            n = int(lens[i])
            self.assertTrue(torch.equal(kc[i, n], k_new[i, 0]))
            keys = torch.cat([k_cache[i, :n], k_new[i]])[None]
            vals = torch.cat([v_cache[i, :n], v_new[i]])[None]
            want, want_lse = reference(q[i:i + 1], keys, vals, True)
            close(self, out[i:i + 1], want, 1e-5)
            close(self, lse[i:i + 1], want_lse, 1e-4)

    def test_paged_cache(self):
        torch.manual_seed(4)
        b, hq, hkv, d, page, max_pages = 2, 4, 4, 32, 16, 4
        num_pages = b * max_pages + 3
        k_cache = torch.randn(num_pages, page, hkv, d)
        v_cache = torch.randn(num_pages, page, hkv, d)
        table = torch.randperm(num_pages)[:b * max_pages].view(
            b, max_pages).to(torch.int32)
        lens = torch.tensor([50, 17], dtype=torch.int32)
        # Each call twice: the second takes the hot path (a launch kept for
        # the same signature, _interface._Launch).
        for lq, causal, splits, rep in ((1, False, 0, 0), (1, False, 0, 1),
                                        (1, False, 3, 0), (1, False, 3, 1),
                                        (6, True, 0, 0), (6, True, 0, 1)):
            with self.subTest(lq=lq, causal=causal, splits=splits, rep=rep):
                q = torch.randn(b, lq, hq, d)
                out, lse = fa.flash_attn_with_kvcache(
                    q, k_cache, v_cache, cache_seqlens=lens,
                    block_table=table, causal=causal, num_splits=splits,
                    return_softmax_lse=True)
                for i in range(b):
                    n = int(lens[i])
                    rows = torch.cat([k_cache[p] for p in table[i].tolist()])
                    vrow = torch.cat([v_cache[p] for p in table[i].tolist()])
                    want, want_lse = reference(q[i:i + 1], rows[:n][None],
                                               vrow[:n][None], causal)
                    close(self, out[i:i + 1], want, 1e-5)
                    close(self, lse[i:i + 1], want_lse, 1e-5)
        with self.assertRaisesRegex(fa.FaError, "block_table"):
            bad = table.clone()
            bad[0, 0] = num_pages
            fa.flash_attn_with_kvcache(torch.randn(b, 1, hq, d), k_cache,
                                       v_cache, cache_seqlens=lens,
                                       block_table=bad)
        with self.assertRaisesRegex(NotImplementedError, "rotary_cos"):
            fa.flash_attn_with_kvcache(q, k_cache, v_cache,
                                       rotary_cos=torch.ones(1))


class WindowAndSoftcap(unittest.TestCase):
    """Sliding windows and softcap through the three functions."""

    def test_dense(self):
        torch.manual_seed(7)
        for dtype, tol in ((torch.float32, 1e-5), (torch.float16, 2e-3)):
            for causal, window, cap in ((True, (5, -1), 0.0),
                                        (False, (3, 2), 0.0),
                                        (False, (-1, 0), 2.0),
                                        (True, (-1, -1), 4.0),
                                        (True, (20, 20), 1.0)):
                for (b, lq, lk) in ((2, 37, 50), (1, 1, 70), (1, 1, 70),
                                    (1, 40, 17)):
                    with self.subTest(dtype=dtype, causal=causal,
                                      window=window, cap=cap, lq=lq):
                        q = torch.randn(b, lq, 4, 32).to(dtype)
                        k = (3 * torch.randn(b, lk, 2, 32)).to(dtype)
                        v = torch.randn(b, lk, 2, 32).to(dtype)
                        out, lse, _ = fa.flash_attn_func(
                            q, k, v, causal=causal, window_size=window,
                            softcap=cap, return_attn_probs=True)
                        want, want_lse = reference(q, k, v, causal, None,
                                                   window, cap)
                        close(self, out, want, tol)
                        finite = torch.isfinite(want_lse)
                        close(self, lse[finite], want_lse[finite], 1e-4)
                        self.assertTrue(
                            torch.isneginf(lse[~finite]).all().item())

    def test_varlen_and_kvcache(self):
        torch.manual_seed(8)
        lens_q, lens_k = [5, 0, 9], [12, 3, 9]
        q = torch.randn(sum(lens_q), 4, 32)
        k = torch.randn(sum(lens_k), 2, 32)
        v = torch.randn(sum(lens_k), 2, 32)
        cu = lambda x: torch.tensor([0] + list(
            torch.tensor(x).cumsum(0)), dtype=torch.int32)
        out = fa.flash_attn_varlen_func(q, k, v, cu(lens_q), cu(lens_k),
                                        max(lens_q), max(lens_k), causal=True,
                                        window_size=(4, -1), softcap=2.0)
        sq = sk = 0
        for lq, lk in zip(lens_q, lens_k):
            if lq:
                want, _ = reference(q[None, sq:sq + lq], k[None, sk:sk + lk],
                                    v[None, sk:sk + lk], True, None, (4, -1),
                                    2.0)
                close(self, out[sq:sq + lq], want[0], 1e-5)
            sq, sk = sq + lq, sk + lk
        # Decode over a cache, twice (the second call the hot path).
        kc = torch.randn(2, 64, 2, 32)
        vc = torch.randn(2, 64, 2, 32)
        lens = torch.tensor([64, 33], dtype=torch.int32)
        for _ in range(2):
            qd = torch.randn(2, 1, 4, 32)
            out = fa.flash_attn_with_kvcache(qd, kc, vc, cache_seqlens=lens,
                                             causal=True, window_size=(7, -1),
                                             softcap=3.0)
            for i in range(2):
                n = int(lens[i])
                want, _ = reference(qd[i:i + 1], kc[i:i + 1, :n],
                                    vc[i:i + 1, :n], True, None, (7, -1), 3.0)
                close(self, out[i:i + 1], want, 1e-5)


class TorchLibrary(unittest.TestCase):
    def test_ops_are_registered_and_trace_on_meta(self):
        self.assertTrue(fa.ops_registered)
        q = torch.randn(1, 5, 2, 32)
        out, lse = torch.ops.fa.fwd(q, q, q, None, True)
        close(self, out, reference(q, q, q, True)[0], 1e-5)
        m = torch.empty(2, 7, 4, 64, device="meta", dtype=torch.float16)
        kv = torch.empty(2, 9, 2, 64, device="meta", dtype=torch.float16)
        out, lse = torch.ops.fa.fwd(m, kv, kv, 0.1, False)
        self.assertEqual((out.shape, out.dtype, lse.shape, lse.dtype),
                         (m.shape, torch.float16, (2, 4, 7), torch.float32))


class Transformers(unittest.TestCase):
    """The attention function transformers would call (transformers itself
    is not a Debian package: bench/gpu-python.sh registers it there)."""

    class Layer:
        is_causal = True
        sliding_window = None

    def test_attention_forward(self):
        from fa.integrations import transformers as fat
        torch.manual_seed(5)
        q = torch.randn(2, 4, 6, 32)   # (batch, heads, q_len, head_dim)
        k = torch.randn(2, 2, 6, 32)
        out, weights = fat.attention_forward(self.Layer(), q, k, k, None,
                                             scaling=0.2)
        self.assertIsNone(weights)
        want, _ = reference(q.transpose(1, 2), k.transpose(1, 2),
                            k.transpose(1, 2), True, 0.2)
        close(self, out, want, 1e-5)
        with self.assertRaisesRegex(NotImplementedError, "s_aux"):
            fat.attention_forward(self.Layer(), q, k, k, None,
                                  s_aux=torch.ones(4))
        # transformers' sliding window of W keys (the query's own and the
        # W - 1 before it) and softcap, passed as arguments or set on the
        # layer.
        qt, kt = q.transpose(1, 2), k.transpose(1, 2)
        out, _ = fat.attention_forward(self.Layer(), q, k, k, None,
                                       scaling=0.2, sliding_window=3,
                                       softcap=1.5)
        want, _ = reference(qt, kt, kt, True, 0.2, (2, 2), 1.5)
        close(self, out, want, 1e-5)
        windowed = self.Layer()
        windowed.sliding_window = 2
        out, _ = fat.attention_forward(windowed, q, k, k, None, scaling=0.2)
        want, _ = reference(qt, kt, kt, True, 0.2, (1, 1))
        close(self, out, want, 1e-5)


CHILD = """
import sys, os
sys.path.insert(0, sys.argv[1])
import fa
print(fa.compile("f32", 48, "host", causal=True, softmax_scale=0.25))
"""


class JitCache(unittest.TestCase):
    def setUp(self):
        self.saved = os.environ.get("FA_CACHE_DIR")
        self.dir = tempfile.mkdtemp(prefix="fa-cache-")
        os.environ["FA_CACHE_DIR"] = self.dir
        _jit.clear_memory_table()

    def tearDown(self):
        if self.saved is None:
            del os.environ["FA_CACHE_DIR"]
        else:
            os.environ["FA_CACHE_DIR"] = self.saved
        _jit.clear_memory_table()
        shutil.rmtree(self.dir, ignore_errors=True)

    def test_miss_hit_and_in_process_table(self):
        q = torch.randn(1, 3, 2, 16)
        before = dict(_jit.stats)
        fa.flash_attn_func(q, q, q, softmax_scale=0.5)
        self.assertEqual(_jit.stats["compiles"], before["compiles"] + 1)
        self.assertEqual(_jit.stats["loads"], before["loads"] + 1)
        entries = os.listdir(self.dir)
        self.assertEqual(len(entries), 1)
        # A hot call: no file or compile work.
        fa.flash_attn_func(q, q, q, softmax_scale=0.5)
        self.assertEqual(_jit.stats["loads"], before["loads"] + 1)
        # A new process (an empty table): loaded from disk, not compiled.
        _jit.clear_memory_table()
        fa.flash_attn_func(q, q, q, softmax_scale=0.5)
        self.assertEqual(_jit.stats["compiles"], before["compiles"] + 1)
        self.assertEqual(_jit.stats["loads"], before["loads"] + 2)
        # Another scale is another kernel.
        fa.flash_attn_func(q, q, q, softmax_scale=0.25)
        self.assertEqual(len(os.listdir(self.dir)), 2)

    def test_corrupted_entry_is_compiled_again(self):
        q = torch.randn(1, 3, 2, 16)
        want = fa.flash_attn_func(q, q, q, softmax_scale=0.5)
        # Three query rows: the decode (split-KV) build.
        path = _jit.entry_path(_jit.Spec("dense", "f32", 16, False, 0.5,
                                         True, "host"))
        with open(path, "r+b") as f:
            f.truncate(100)
        _jit.clear_memory_table()
        before = _jit.stats["repaired"]
        got = fa.flash_attn_func(q, q, q, softmax_scale=0.5)
        self.assertEqual(_jit.stats["repaired"], before + 1)
        self.assertTrue(torch.equal(got, want))
        self.assertGreater(os.path.getsize(path), 100)

    def test_concurrent_processes(self):
        python = os.path.dirname(os.path.dirname(fa.__file__))
        procs = [subprocess.Popen([sys.executable, "-c", CHILD, python],
                                  stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True)
                 for _ in range(4)]
        outs = [p.communicate(timeout=300) for p in procs]
        for p, (out, err) in zip(procs, outs):
            self.assertEqual(p.returncode, 0, err)
        paths = {out.strip() for out, _ in outs}
        self.assertEqual(len(paths), 1)
        self.assertEqual([e for e in os.listdir(self.dir)
                          if not e.startswith(".tmp-")],
                         [os.path.basename(os.path.dirname(paths.pop()))])
        self.assertEqual([e for e in os.listdir(self.dir)
                          if e.startswith(".tmp-")], [])


if __name__ == "__main__":
    unittest.main()
