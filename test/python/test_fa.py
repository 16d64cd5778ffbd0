"""`import fa` on CPU tensors (fa's host emulator), against fp64 references:
FlashAttention 2's three functions (with windows, softcap, ALiBi slopes and
attention sinks), their errors, the torch.library ops, the transformers
attention function, and the JIT cache (hit, miss, corrupted entry,
concurrent processes).

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


def reference(q, k, v, causal, scale=None, window=(-1, -1), softcap=0.0,
              alibi=None, sinks=None):
    """fp64 (out, lse) of (B, L, H, D) tensors; bottom-right causal and
    window (FlashAttention 2's window_size), softcap on the scaled scores;
    rows that see no key: 0 and -inf. alibi: (Hq,) slopes, the score of key
    j in row i less slope * |i + Lk - Lq - j| (after softcap, before the
    masks); sinks: (Hq,) logits, one more column of each row's softmax
    whose value is 0 (gpt-oss's eager attention), so a row that sees no
    key gives 0 and LSE = the sink."""
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
    if alibi is not None:
        s = s - alibi.double().view(1, hq, 1, 1) * (i + lk - lq - j).abs()
    if causal:
        s = s.masked_fill(j > i + lk - lq, float("-inf"))
    if window[0] >= 0:
        s = s.masked_fill(j < i + lk - lq - window[0], float("-inf"))
    if window[1] >= 0:
        s = s.masked_fill(j > i + lk - lq + window[1], float("-inf"))
    if sinks is not None:
        column = sinks.double().view(1, hq, 1, 1).expand(b, hq, lq, 1)
        s = torch.cat([s, column], -1)
        vh = torch.cat([vh, vh.new_zeros(b, hq, 1, vh.shape[-1])], -2)
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
            (dict(alibi_slopes=torch.ones(3)), ValueError,
             r"alibi_slopes has shape \(3,\), expected \(2,\)"),
            (dict(sinks=torch.ones(1, 2)), ValueError,
             r"sinks has shape \(1, 2\)"),
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
        with self.assertRaisesRegex(TypeError, "block_table must be"):
            fa.flash_attn_varlen_func(q, q[None], q[None], cu, cu, 4, 4,
                                      block_table=torch.zeros(1, 1))
        with self.assertRaisesRegex(NotImplementedError, "seqused_k"):
            fa.flash_attn_varlen_func(q, q, q, cu, cu, 4, 4,
                                      seqused_k=cu[1:])
        with self.assertRaisesRegex(TypeError, "cu_seqlens_q must be"):
            fa.flash_attn_varlen_func(q, q, q, cu.long(), cu, 4, 4)
        # Host tensors are checked by the runtime before the launch.
        with self.assertRaisesRegex(fa.FaError, "max_seqlen_q = 3"):
            fa.flash_attn_varlen_func(q, q, q, cu, cu, 3, 4)


class MixedBatch(unittest.TestCase):
    """flash_attn_varlen_func with block_table: packed queries of mixed
    lengths over a paged cache, each sequence's queries its last rows."""

    def setUp(self):
        torch.manual_seed(6)
        self.hq, self.hkv, self.d, self.page = 4, 2, 32, 16
        # A prompt chunk, two decode rows, an empty sequence, a chunk as
        # long as its keys.
        self.lens_q, self.lens_k = [7, 1, 1, 0, 20], [40, 17, 1, 5, 20]
        b, max_pages = len(self.lens_q), 3
        num_pages = b * max_pages + 2
        self.k_cache = torch.randn(num_pages, self.page, self.hkv, self.d)
        self.v_cache = torch.randn(num_pages, self.page, self.hkv, self.d)
        self.table = torch.randperm(num_pages)[:b * max_pages].view(
            b, max_pages).to(torch.int32)
        self.cu_q = torch.tensor([0] + torch.tensor(self.lens_q).cumsum(0)
                                 .tolist(), dtype=torch.int32)
        self.cu_k = torch.tensor([0] + torch.tensor(self.lens_k).cumsum(0)
                                 .tolist(), dtype=torch.int32)
        self.q = torch.randn(sum(self.lens_q), self.hq, self.d)

    def want(self, b, causal):
        qs = slice(int(self.cu_q[b]), int(self.cu_q[b + 1]))
        pages = self.table[b].tolist()
        keys = torch.cat([self.k_cache[p] for p in pages])[:self.lens_k[b]]
        vals = torch.cat([self.v_cache[p] for p in pages])[:self.lens_k[b]]
        return qs, reference(self.q[qs][None], keys[None], vals[None],
                             causal)

    def test_matches_each_sequence(self):
        for causal, lengths in ((True, "cu_seqlens_k"), (True, "seqused_k"),
                                (False, "cu_seqlens_k")):
            with self.subTest(causal=causal, lengths=lengths):
                used = torch.tensor(self.lens_k, dtype=torch.int32)
                out, lse, _ = fa.flash_attn_varlen_func(
                    self.q, self.k_cache, self.v_cache, self.cu_q,
                    self.cu_k if lengths == "cu_seqlens_k" else None,
                    max(self.lens_q), max(self.lens_k), causal=causal,
                    block_table=self.table, return_attn_probs=True,
                    seqused_k=used if lengths == "seqused_k" else None)
                self.assertEqual(lse.shape, (self.hq, sum(self.lens_q)))
                for b in range(len(self.lens_q)):
                    if self.lens_q[b] == 0:
                        continue
                    qs, (want, want_lse) = self.want(b, causal)
                    close(self, out[qs], want[0], 1e-5)
                    close(self, lse[:, qs], want_lse[0], 1e-5)

    def test_decode_rows_split_kv(self):
        # Every sequence at most 4 query rows: the split-KV + packing build.
        lens_q = [1, 1, 1, 4, 0]
        cu_q = torch.tensor([0] + torch.tensor(lens_q).cumsum(0).tolist(),
                            dtype=torch.int32)
        self.lens_q, self.cu_q = lens_q, cu_q
        self.q = torch.randn(sum(lens_q), self.hq, self.d)
        for splits in (0, 3):
            out = fa.flash_attn_varlen_func(
                self.q, self.k_cache, self.v_cache, cu_q, self.cu_k, 4,
                max(self.lens_k), causal=True, block_table=self.table,
                num_splits=splits)
            for b in range(len(lens_q)):
                if lens_q[b]:
                    qs, (want, _) = self.want(b, True)
                    close(self, out[qs], want[0], 1e-5)

    def test_compile_ahead(self):
        path = fa.compile("f32", self.d, "host", causal=True, layout="mixed")
        self.assertTrue(os.path.exists(path))
        with self.assertRaisesRegex(ValueError, "layout='packed'"):
            fa.compile("f32", self.d, "host", layout="packed")

    def test_errors(self):
        # More queries than keys: a mixed batch's queries are its last keys.
        bad = self.cu_k.clone()
        bad[1:] -= torch.tensor([0, 0, 0, 0, 1], dtype=torch.int32)
        with self.assertRaisesRegex(fa.FaError, "sequence 4 has 20 queries"):
            fa.flash_attn_varlen_func(
                self.q, self.k_cache, self.v_cache, self.cu_q, bad, 20, 40,
                causal=True, block_table=self.table)
        with self.assertRaisesRegex(ValueError, "block_table"):
            fa.flash_attn_varlen_func(
                self.q, self.k_cache, self.v_cache, self.cu_q, self.cu_k, 20,
                40, block_table=self.table[:2])
        with self.assertRaisesRegex(ValueError, "num_splits=3"):
            fa.flash_attn_varlen_func(
                self.q, self.k_cache, self.v_cache, self.cu_q, self.cu_k, 20,
                40, block_table=self.table, num_splits=3)


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


def slopes(h):
    """BLOOM's ALiBi slopes for h heads, 2^(-8 (i + 1) / h)."""
    return torch.tensor([2.0 ** (-8.0 * (i + 1) / h) for i in range(h)])


def sink_logits(h):
    """Per-head sinks with one head's sink dominating its rows."""
    s = torch.randn(h)
    s[1] = 6.0
    return s


class AlibiAndSinks(unittest.TestCase):
    """ALiBi slopes (FlashAttention 2's alibi_slopes) and attention sinks
    (gpt-oss's, fa's `sinks`) through the three functions, against the fp64
    reference's explicit softmax over the biased keys and the sink
    column."""

    def check(self, out, lse, want, want_lse, tol, lse_tol=1e-4):
        close(self, out, want, tol)
        finite = torch.isfinite(want_lse)
        if finite.any():
            close(self, lse[finite], want_lse[finite], lse_tol)
        self.assertTrue(torch.isneginf(lse[~finite]).all().item())

    def test_dense(self):
        torch.manual_seed(11)
        hq, hkv = 4, 2
        al, sk = slopes(hq), sink_logits(hq)
        for dtype, tol in ((torch.float32, 1e-5), (torch.float16, 2e-3),
                           (torch.bfloat16, 2e-2)):
            for causal, alibi, sinks, window, cap in (
                    (True, al, None, (-1, -1), 0.0),
                    (False, None, sk, (-1, -1), 0.0),
                    (True, al, sk, (-1, -1), 0.0),
                    (False, al, sk, (6, 3), 5.0)):
                # Lq < Lk (ALiBi's distance from the last key), decode
                # twice (the second call the kept launch), Lq > Lk (causal:
                # the first rows see no key).
                for (b, lq, lk) in ((2, 37, 50), (1, 1, 70), (1, 1, 70),
                                    (1, 40, 17)):
                    with self.subTest(dtype=dtype, causal=causal,
                                      alibi=alibi is not None,
                                      sinks=sinks is not None, lq=lq,
                                      window=window):
                        q = torch.randn(b, lq, hq, 32).to(dtype)
                        k = (2 * torch.randn(b, lk, hkv, 32)).to(dtype)
                        v = torch.randn(b, lk, hkv, 32).to(dtype)
                        out, lse, _ = fa.flash_attn_func(
                            q, k, v, causal=causal, window_size=window,
                            softcap=cap, alibi_slopes=alibi, sinks=sinks,
                            return_attn_probs=True)
                        want, want_lse = reference(q, k, v, causal, None,
                                                   window, cap, alibi,
                                                   sinks)
                        self.check(out, lse, want, want_lse, tol)

    def test_rows_without_keys_give_zero_and_the_sink(self):
        torch.manual_seed(12)
        hq, sk = 4, sink_logits(4)
        q = torch.randn(1, 40, hq, 32)
        k = torch.randn(1, 17, 2, 32)
        # Causal with Lq > Lk: rows 0..22 see no key.
        for alibi in (None, slopes(hq)):
            out, lse, _ = fa.flash_attn_func(q, k, k, causal=True,
                                             alibi_slopes=alibi, sinks=sk,
                                             return_attn_probs=True)
            self.assertTrue(torch.equal(out[:, :23],
                                        torch.zeros_like(out[:, :23])))
            close(self, lse[0, :, :23], sk.view(hq, 1).expand(hq, 23), 1e-6)
        # No keys at all.
        out, lse, _ = fa.flash_attn_func(q, k[:, :0], k[:, :0], sinks=sk,
                                         return_attn_probs=True)
        self.assertTrue(torch.equal(out, torch.zeros_like(out)))
        self.assertTrue(torch.equal(lse[0], sk.view(hq, 1).expand(hq, 40)))

    def test_alibi_per_batch_table_and_sink_dtypes(self):
        torch.manual_seed(13)
        hq, al, sk = 4, slopes(4), sink_logits(4)
        q = torch.randn(1, 6, hq, 32)
        k = torch.randn(1, 9, 2, 32)
        want = fa.flash_attn_func(q, k, k, causal=True, alibi_slopes=al)
        # FlashAttention 2's (batch, nheads) table, batch 1.
        got = fa.flash_attn_func(q, k, k, causal=True,
                                 alibi_slopes=al.view(1, hq))
        self.assertTrue(torch.equal(got, want))
        # A table per sequence: refused, naming the argument.
        q2, k2 = torch.randn(2, 6, hq, 32), torch.randn(2, 9, 2, 32)
        with self.assertRaisesRegex(NotImplementedError,
                                    r"alibi_slopes of shape \(2, 4\)"):
            fa.flash_attn_func(q2, k2, k2, alibi_slopes=al.repeat(2, 1))
        # Sinks in another floating-point dtype (a bf16 model's parameter)
        # are converted; a strided view is copied.
        for s in (sk.to(torch.bfloat16), sk.double(),
                  torch.stack([sk, sk], 1)[:, 0]):
            got, lse, _ = fa.flash_attn_func(q, k, k, sinks=s,
                                             return_attn_probs=True)
            want, want_lse = reference(q, k, k, False, sinks=s.float())
            self.check(got, lse, want, want_lse, 1e-5)

    def test_kept_launch_keeps_its_buffers(self):
        # The kept launch wraps the call's tensors; wrapping the sinks may
        # clear the table of wrapped buffers (it is bounded), and then the
        # LSE's buffer must still be held by the call (the H200 run of
        # gpt-oss in fp16 lost it once: "buffer LSE was not allocated").
        from fa import _interface
        torch.manual_seed(15)
        hq = 4
        sk = sink_logits(hq)
        q, k = torch.randn(1, 1, hq, 32), torch.randn(1, 30, 2, 32)
        want, want_lse = reference(q, k, k, True, sinks=sk)
        original = _interface._buffer

        def clearing(dev, ptr, nbytes):
            if ptr == sk.data_ptr():
                _interface._wrapped.clear()
            return original(dev, ptr, nbytes)
        _interface._buffer = clearing
        try:
            for _ in range(3):  # the first call, then the kept launch
                got, lse, _ = fa.flash_attn_func(q, k, k, causal=True,
                                                 sinks=sk,
                                                 return_attn_probs=True)
                self.check(got, lse, want, want_lse, 1e-5)
        finally:
            _interface._buffer = original

    def test_varlen(self):
        torch.manual_seed(14)
        hq, hkv = 4, 2
        al, sk = slopes(hq), sink_logits(hq)
        # An empty query sequence, one whose rows mostly see no key
        # (causal, Lq > Lk), one with no keys, decode rows.
        lens_q, lens_k = [5, 0, 9, 4, 1], [12, 3, 4, 0, 20]
        cu = lambda x: torch.tensor([0] + list(
            torch.tensor(x).cumsum(0)), dtype=torch.int32)
        q = torch.randn(sum(lens_q), hq, 32)
        k = torch.randn(sum(lens_k), hkv, 32)
        v = torch.randn(sum(lens_k), hkv, 32)
        for causal, alibi, sinks in ((True, al, sk), (False, al, None),
                                     (True, None, sk)):
            with self.subTest(causal=causal, alibi=alibi is not None,
                              sinks=sinks is not None):
                out, lse, _ = fa.flash_attn_varlen_func(
                    q, k, v, cu(lens_q), cu(lens_k), max(lens_q),
                    max(lens_k), causal=causal, alibi_slopes=alibi,
                    sinks=sinks, return_attn_probs=True)
                sq = sk_ = 0
                for lq, lk in zip(lens_q, lens_k):
                    if lq:
                        want, want_lse = reference(
                            q[None, sq:sq + lq], k[None, sk_:sk_ + lk],
                            v[None, sk_:sk_ + lk], causal, alibi=alibi,
                            sinks=sinks)
                        self.check(out[sq:sq + lq][None],
                                   lse[:, sq:sq + lq][None], want, want_lse,
                                   1e-5)
                    sq, sk_ = sq + lq, sk_ + lk

    def test_kvcache_dense_and_paged(self):
        torch.manual_seed(15)
        hq, hkv, d = 8, 2, 32
        al, sk = slopes(hq), sink_logits(hq)
        # A dense cache with new keys appended, decode (split-KV), twice.
        kc = torch.randn(3, 64, hkv, d)
        vc = torch.randn(3, 64, hkv, d)
        lens = torch.tensor([40, 0, 63], dtype=torch.int32)
        for rep in range(2):
            q = torch.randn(3, 1, hq, d)
            kn, vn = torch.randn(3, 1, hkv, d), torch.randn(3, 1, hkv, d)
            k2, v2 = kc.clone(), vc.clone()
            out, lse = fa.flash_attn_with_kvcache(
                q, k2, v2, k=kn, v=vn, cache_seqlens=lens, causal=True,
                alibi_slopes=al, sinks=sk, return_softmax_lse=True)
            for i in range(3):
                n = int(lens[i])
                keys = torch.cat([kc[i, :n], kn[i]])[None]
                vals = torch.cat([vc[i, :n], vn[i]])[None]
                want, want_lse = reference(q[i:i + 1], keys, vals, True,
                                           alibi=al, sinks=sk)
                self.check(out[i:i + 1], lse[i:i + 1], want, want_lse, 1e-5)
        # A paged cache: decode (split-KV, GQA packing; kept launches) and
        # a 6-row chunk, with an empty sequence (O = 0, LSE = the sink).
        b, page, max_pages = 3, 16, 4
        num_pages = b * max_pages + 2
        kp = torch.randn(num_pages, page, hkv, d)
        vp = torch.randn(num_pages, page, hkv, d)
        table = torch.randperm(num_pages)[:b * max_pages].view(
            b, max_pages).to(torch.int32)
        lens = torch.tensor([50, 0, 17], dtype=torch.int32)
        for lq, causal, splits, alibi, sinks in (
                (1, False, 0, al, sk), (1, False, 0, al, sk),
                (1, True, 3, None, sk), (1, True, 3, None, sk),
                (6, True, 0, al, sk), (6, True, 0, al, None)):
            with self.subTest(lq=lq, causal=causal, splits=splits,
                              alibi=alibi is not None,
                              sinks=sinks is not None):
                q = torch.randn(b, lq, hq, d)
                out, lse = fa.flash_attn_with_kvcache(
                    q, kp, vp, cache_seqlens=lens, block_table=table,
                    causal=causal, num_splits=splits, alibi_slopes=alibi,
                    sinks=sinks, return_softmax_lse=True)
                for i in range(b):
                    n = int(lens[i])
                    rows = torch.cat([kp[p] for p in table[i].tolist()])
                    vrow = torch.cat([vp[p] for p in table[i].tolist()])
                    want, want_lse = reference(q[i:i + 1], rows[:n][None],
                                               vrow[:n][None], causal,
                                               alibi=alibi, sinks=sinks)
                    self.check(out[i:i + 1], lse[i:i + 1], want, want_lse,
                               1e-5)
                if sinks is not None:
                    self.assertTrue(torch.equal(out[1],
                                                torch.zeros_like(out[1])))
                    close(self, lse[1], sinks.view(hq, 1).expand(hq, lq),
                          1e-6)

    def test_errors_name_the_argument(self):
        hq = 4
        q, k = torch.randn(1, 5, hq, 32), torch.randn(1, 7, 2, 32)
        meta = torch.ones(hq, device="meta")
        bad = [
            ("alibi_slopes", torch.ones(3), ValueError,
             r"alibi_slopes has shape \(3,\), expected \(4,\)"),
            ("sinks", torch.ones(5), ValueError,
             r"sinks has shape \(5,\), expected \(4,\)"),
            ("alibi_slopes", torch.ones(2, 2), ValueError,
             r"alibi_slopes has shape \(2, 2\)"),
            ("sinks", torch.ones(1, hq), ValueError, r"sinks has shape"),
            ("sinks", torch.ones(()), ValueError, r"sinks has shape \(\)"),
            ("alibi_slopes", torch.ones(hq).half(), TypeError,
             "alibi_slopes.dtype is torch.float16: it must be "
             "torch.float32"),
            ("alibi_slopes", torch.ones(hq).double(), TypeError,
             "alibi_slopes.dtype is torch.float64"),
            ("sinks", torch.ones(hq, dtype=torch.int32), TypeError,
             "sinks.dtype is torch.int32"),
            ("alibi_slopes", meta, ValueError, "alibi_slopes is on meta"),
            ("sinks", meta, ValueError, "sinks is on meta"),
            ("sinks", [0.0] * hq, TypeError,
             "sinks must be a torch.Tensor"),
            ("alibi_slopes", 0.5, TypeError,
             "alibi_slopes must be a torch.Tensor"),
        ]
        cu = torch.tensor([0, 5], dtype=torch.int32)
        cuk = torch.tensor([0, 7], dtype=torch.int32)
        lens = torch.tensor([7], dtype=torch.int32)
        calls = {
            "flash_attn_func": lambda **kw: fa.flash_attn_func(q, k, k, **kw),
            "flash_attn_varlen_func": lambda **kw: fa.flash_attn_varlen_func(
                q[0], k[0], k[0], cu, cuk, 5, 7, **kw),
            "flash_attn_with_kvcache": lambda **kw:
                fa.flash_attn_with_kvcache(q, k, k, cache_seqlens=lens, **kw),
            "torch.ops.fa.fwd": lambda **kw: torch.ops.fa.fwd(
                q, k, k, None, False, **kw),
        }
        for fname, call in calls.items():
            for name, value, error, text in bad:
                if fname.startswith("torch.ops") and \
                        not isinstance(value, torch.Tensor):
                    continue  # the dispatcher's own error, naming it
                with self.subTest(call=fname, name=name, value=value):
                    with self.assertRaisesRegex(error, text):
                        call(**{name: value})


class TorchLibraryHeads(unittest.TestCase):
    def test_ops_take_alibi_and_sinks(self):
        torch.manual_seed(16)
        hq = 4
        al, sk = slopes(hq), sink_logits(hq)
        q = torch.randn(1, 5, hq, 32)
        k = torch.randn(1, 8, 2, 32)
        out, lse = torch.ops.fa.fwd(q, k, k, None, True, -1, -1, 0.0, al, sk)
        want, want_lse = reference(q, k, k, True, alibi=al, sinks=sk)
        close(self, out, want, 1e-5)
        close(self, lse, want_lse, 1e-4)
        out, lse = torch.ops.fa.fwd(q, k, k, None, True, sinks=sk)
        close(self, out, reference(q, k, k, True, sinks=sk)[0], 1e-5)
        # The paged op (the dispatcher's path of flash_attn_with_kvcache).
        lens = torch.tensor([8], dtype=torch.int32)
        table = torch.zeros(1, 1, dtype=torch.int32)
        out, lse = torch.ops.fa.kvcache_fwd(q[:, :1], k, k, lens, table, None,
                                            False, 0, alibi_slopes=al,
                                            sinks=sk)
        close(self, out, reference(q[:, :1], k, k, False, alibi=al,
                                   sinks=sk)[0], 1e-5)
        cu = torch.tensor([0, 5], dtype=torch.int32)
        cuk = torch.tensor([0, 8], dtype=torch.int32)
        out, lse = torch.ops.fa.varlen_fwd(q[0], k[0], k[0], cu, cuk, 5, 8,
                                           None, True, -1, -1, 0.0, al, sk)
        close(self, out[None], want, 1e-5)
        # Meta tensors (what torch.compile's fake tensors run).
        m = torch.empty(2, 7, 4, 64, device="meta", dtype=torch.float16)
        kv = torch.empty(2, 9, 2, 64, device="meta", dtype=torch.float16)
        h = torch.empty(4, device="meta")
        out, lse = torch.ops.fa.fwd(m, kv, kv, 0.1, False, -1, -1, 0.0, h, h)
        self.assertEqual((out.shape, lse.shape), (m.shape, (2, 4, 7)))


class TransformersSinks(unittest.TestCase):
    """gpt-oss's attention: s_aux (the layer's per-head sinks) and a
    sliding window in every other layer, as transformers passes them."""

    class Layer:
        is_causal = True
        sliding_window = None

    def eager(self, query, key, value, scaling, s_aux, window=None):
        """transformers' gpt-oss eager_attention_forward (no mask beyond
        causal and the window), in fp64."""
        q, k, v = query.double(), key.double(), value.double()
        rep = q.shape[1] // k.shape[1]
        k = k.repeat_interleave(rep, 1)
        v = v.repeat_interleave(rep, 1)
        w = q @ k.transpose(2, 3) * scaling
        lq, lk = q.shape[2], k.shape[2]
        i = torch.arange(lq)[:, None] + lk - lq
        j = torch.arange(lk)[None]
        hidden = j > i
        if window:
            hidden = hidden | (j <= i - window)
        w = w.masked_fill(hidden, float("-inf"))
        sinks = s_aux.double().reshape(1, -1, 1, 1).expand(
            q.shape[0], -1, lq, -1)
        logits = torch.cat([w, sinks], -1)
        logits = logits - logits.max(-1, keepdim=True).values
        probs = torch.softmax(logits, -1)[..., :-1]
        return (probs @ v).transpose(1, 2)

    def test_s_aux_is_passed_as_sinks(self):
        from fa.integrations import transformers as fat
        torch.manual_seed(17)
        q = torch.randn(2, 8, 6, 32)   # (batch, heads, q_len, head_dim)
        k = torch.randn(2, 2, 6, 32)
        v = torch.randn(2, 2, 6, 32)
        s_aux = torch.nn.Parameter(sink_logits(8))
        with torch.no_grad():
            out, weights = fat.attention_forward(self.Layer(), q, k, v, None,
                                                 scaling=0.2, s_aux=s_aux)
            self.assertIsNone(weights)
            close(self, out, self.eager(q, k, v, 0.2, s_aux), 1e-5)
            # A sliding layer (window 3) with a bf16 model's sinks.
            s16 = s_aux.to(torch.bfloat16)
            out, _ = fat.attention_forward(self.Layer(), q, k, v, None,
                                           scaling=0.2, sliding_window=3,
                                           s_aux=s16)
            close(self, out, self.eager(q, k, v, 0.2, s16.float(), 3), 1e-5)
            # Decode: one query row over 6 keys, twice (the second call a
            # kept launch with the Parameter's sinks).
            from fa import _interface
            _interface.clear_launches()
            for _ in range(2):
                qd = torch.randn(2, 8, 1, 32)
                out, _ = fat.attention_forward(self.Layer(), qd, k, v, None,
                                               scaling=0.2, s_aux=s_aux)
                close(self, out, self.eager(qd, k, v, 0.2, s_aux), 1e-5)
            self.assertEqual([launch.hq for launch in
                              _interface._dense_calls.values()], [8])
        with self.assertRaisesRegex(ValueError, "sinks has shape"):
            fat.attention_forward(self.Layer(), q, k, v, None,
                                  s_aux=torch.ones(4))


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

    def test_mask_function(self):
        # transformers calls the mask function by position or by name, and
        # gpt-oss (transformers 5.17) without cache_position: None (the
        # kernel's causal mask) unless a sequence is padded.
        from fa.integrations import transformers as fat
        full = torch.ones(2, 5, dtype=torch.bool)
        padded = full.clone()
        padded[1, 0] = False
        self.assertIsNone(fat._no_padding_mask(2, torch.arange(5), 5))
        self.assertIsNone(fat._no_padding_mask(2, torch.arange(5), 5, 0,
                                               None, full))
        self.assertIs(fat._no_padding_mask(2, torch.arange(5), 5, 0, None,
                                           padded), padded)
        self.assertIsNone(fat._no_padding_mask(batch_size=2, kv_length=5,
                                               attention_mask=full))
        self.assertIs(fat._no_padding_mask(batch_size=2, kv_length=5,
                                           q_length=5, attention_mask=padded),
                      padded)

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

    def test_alibi_and_sinks_are_part_of_the_key(self):
        import json
        paths = {(a, s): fa.compile("f32", 16, "host", alibi=a, sinks=s)
                 for a in (False, True) for s in (False, True)}
        self.assertEqual(len(set(paths.values())), 4)
        for (a, s), path in paths.items():
            with open(path + ".json") as f:
                kernel = json.load(f)["kernels"][0]
            self.assertEqual((kernel.get("alibi", False),
                              kernel.get("sinks", False)), (a, s))
        # The plain kernel's source (and so its key) is what it was
        # before ALiBi and sinks existed: caches filled earlier stay valid.
        self.assertNotIn("tensor<?xf32>",
                         _jit.source(_jit.Spec("dense", "f32", 16, False,
                                               0.25, False, "host")))

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
