"""The hot path's plans (python/fa/_plan.py) on CPU tensors: a call reuses
a kept plan only when everything the plan depends on is the same.

A plan is kept per call signature (each tensor's shape, strides, dtype and
device, the options, the thread); the stream is read at every call; the
LSE nobody asked for and the split-KV workspace go to scratch memory per
(device, stream, thread), and a call made while its stream is being
captured into a CUDA graph allocates its own. Each test below changes one
of these between calls and checks the results against fp64 (or, for the
stream and capture, which memory and stream the launch was given), so a key
that forgets one of them fails here.

Run with Debian's python3 (python3-torch) and the build's libraries:
    FA_CACHE_DIR=... PYTHONPATH=python /usr/bin/python3 \
        test/python/test_plans.py
"""

import threading
import unittest

import torch

import fa
from fa import _interface, _plan

from test_fa import close, reference


def cache_reference(q, kc, vc, lens, causal=False, table=None):
    """fp64 (out, lse) of decode rows q over a dense (B, S, Hkv, D) cache
    (or a paged one read through `table`) holding lens[b] keys."""
    outs, lses = [], []
    for b in range(q.shape[0]):
        n = int(lens[b])
        if table is None:
            keys, vals = kc[b, :n], vc[b, :n]
        else:
            keys = torch.cat([kc[p] for p in table[b].tolist()])[:n]
            vals = torch.cat([vc[p] for p in table[b].tolist()])[:n]
        o, l = reference(q[b:b + 1], keys[None], vals[None], causal)
        outs.append(o)
        lses.append(l)
    return torch.cat(outs), torch.cat(lses)


class Signatures(unittest.TestCase):
    def setUp(self):
        _interface.clear_launches()

    def test_flash_attn_func(self):
        torch.manual_seed(20)
        q = torch.randn(2, 1, 4, 32)
        k = torch.randn(2, 40, 2, 32)
        v = torch.randn(2, 40, 2, 32)
        # (name, q, k, v, kwargs): each differs from the one before in one
        # thing the plan depends on; every call is made twice (the second
        # takes a kept plan when there is one).
        kt = torch.randn(2, 2, 40, 32).transpose(1, 2)   # k's strides
        grown = torch.randn(2, 41, 2, 32)                # k's shape
        calls = [
            ("first", q, k, v, {}),
            ("k strides", q, kt, v, {}),
            ("k shape", q, grown, torch.randn(2, 41, 2, 32), {}),
            ("dtype", q.half(), k.half(), v.half(), {}),
            ("causal", q, k, v, dict(causal=True)),
            ("scale", q, k, v, dict(softmax_scale=0.5)),
            ("q rows", torch.randn(2, 3, 4, 32), k, v, dict(causal=True)),
            ("q strides", torch.randn(2, 4, 1, 32).transpose(1, 2), k, v,
             {}),
        ]
        for name, qq, kk, vv, kw in calls:
            for rep in range(2):
                with self.subTest(name=name, rep=rep):
                    out, lse, _ = fa.flash_attn_func(qq, kk, vv,
                                                     return_attn_probs=True,
                                                     **kw)
                    want, want_lse = reference(qq, kk, vv,
                                               kw.get("causal", False),
                                               kw.get("softmax_scale"))
                    tol = 2e-3 if qq.dtype == torch.float16 else 1e-5
                    close(self, out, want, tol)
                    close(self, lse, want_lse, 1e-4)
                    # Without return_attn_probs: the LSE goes to scratch.
                    out = fa.flash_attn_func(qq, kk, vv, **kw)
                    close(self, out, want, tol)
        self.assertEqual(len(_interface._dense_calls), len(calls))
        # Bad arguments still raise, naming them, where a plan is kept for
        # the good ones that differ from them in one thing.
        bad = [
            ((q, k.half(), v), TypeError, "k.dtype is torch.float16"),
            ((q, k, v.double()), TypeError, "v.dtype is torch.float64"),
            ((q, k.to("meta"), v), ValueError, "k is on meta"),
            ((q, k, v[:, :30]), ValueError, "v has shape"),
            ((q, torch.randn(2, 40, 3, 32), torch.randn(2, 40, 3, 32)),
             ValueError, "q's 4 heads are not a multiple of k's 3"),
            ((q.int(), k.int(), v.int()), TypeError, "q.dtype torch.int32"),
        ]
        for args, error, text in bad:
            with self.subTest(bad=text):
                with self.assertRaisesRegex(error, text):
                    fa.flash_attn_func(*args)

    def test_options_that_are_tensors(self):
        # A tensor's hash is its identity: a scale or causal flag given as
        # a tensor and changed in place must not find the old plan.
        torch.manual_seed(26)
        q, k = torch.randn(1, 3, 4, 32), torch.randn(1, 9, 2, 32)
        scale, causal = torch.tensor(0.5), torch.tensor(True)
        for s, c in ((0.5, True), (0.25, True), (0.25, False)):
            scale.fill_(s)
            causal.fill_(c)
            for _ in range(2):
                out = fa.flash_attn_func(q, k, k, softmax_scale=scale,
                                         causal=causal)
                close(self, out, reference(q, k, k, c, s)[0], 1e-5)
                kc = k.clone()
                lens = torch.tensor([9], dtype=torch.int32)
                out = fa.flash_attn_with_kvcache(
                    q, kc, kc, cache_seqlens=lens, softmax_scale=scale,
                    causal=causal, num_splits=torch.tensor(1))
                close(self, out, reference(q, k, k, c, s)[0], 1e-5)

    def test_metadata_changed_in_place(self):
        # The same tensor objects, their shape or strides changed in place
        # (set_, transpose_): a plan keyed by identity would run stale.
        torch.manual_seed(21)
        q = torch.randn(1, 1, 4, 32)
        k = torch.randn(1, 30, 2, 32)
        v = torch.randn(1, 30, 2, 32)
        for step in range(3):
            for _ in range(2):
                out = fa.flash_attn_func(q, k, v)
                close(self, out, reference(q, k, v, False)[0], 1e-5)
            if step == 0:
                k.set_(torch.randn(1, 50, 2, 32))
                v.set_(torch.randn(1, 50, 2, 32))
            else:
                k.set_(torch.randn(1, 2, 50, 32)).transpose_(1, 2)

    def test_flash_attn_with_kvcache(self):
        torch.manual_seed(22)
        b, s, hq, hkv, d = 2, 48, 4, 2, 32
        kc = torch.randn(b, s, hkv, d)
        vc = torch.randn(b, s, hkv, d)
        lens = torch.tensor([30, 7], dtype=torch.int32)
        # The transformers layout: (B, H, S, D) caches seen as (B, S, H, D).
        kt = kc.transpose(1, 2).contiguous().transpose(1, 2)
        vt = vc.transpose(1, 2).contiguous().transpose(1, 2)
        num_pages, page = 8, 16
        kp = torch.randn(num_pages, page, hkv, d)
        vp = torch.randn(num_pages, page, hkv, d)
        table = torch.tensor([[3, 1, 6], [0, 7, 2]], dtype=torch.int32)
        table2 = torch.tensor([[5, 4], [2, 1]], dtype=torch.int32)
        q = torch.randn(b, 1, hq, d)
        calls = [
            ("dense", q, kc, vc, lens, None, {}),
            ("k_cache strides", q, kt, vc, lens, None, {}),
            ("v_cache strides", q, kt, vt, lens, None, {}),
            ("dtype", q.half(), kc.half(), vc.half(), lens, None, {}),
            ("paged", q, kp, vp, lens, table, {}),
            ("table shape", q, kp, vp, torch.tensor([20, 32],
                                                    dtype=torch.int32),
             table2, {}),
            ("causal, 2 rows", torch.randn(b, 2, hq, d), kc, vc, lens, None,
             dict(causal=True)),
            ("one split", q, kc, vc, lens, None, dict(num_splits=1)),
        ]
        for name, qq, k, v, n, t, kw in calls:
            for rep in range(2):
                with self.subTest(name=name, rep=rep):
                    causal = kw.get("causal", False)
                    want, want_lse = cache_reference(qq, k, v, n, causal, t)
                    tol = 2e-3 if qq.dtype == torch.float16 else 1e-5
                    out, lse = fa.flash_attn_with_kvcache(
                        qq, k, v, cache_seqlens=n, block_table=t,
                        return_softmax_lse=True, **kw)
                    close(self, out, want, tol)
                    close(self, lse, want_lse, 1e-4)
                    out = fa.flash_attn_with_kvcache(
                        qq, k, v, cache_seqlens=n, block_table=t, **kw)
                    close(self, out, want, tol)
        self.assertEqual(len(_interface._kvcache_calls), len(calls))
        # New lengths in the same tensor: the kept plan reads them.
        lens.copy_(torch.tensor([48, 1], dtype=torch.int32))
        out = fa.flash_attn_with_kvcache(q, kc, vc, cache_seqlens=lens)
        close(self, out, cache_reference(q, kc, vc, lens)[0], 1e-5)
        # Bad arguments still raise, naming them, where a plan is kept for
        # the good ones that differ from them in one thing.
        good = dict(q=q, k_cache=kc, v_cache=vc, cache_seqlens=lens)
        bad = [
            (dict(k_cache=kc.half()), TypeError, "k_cache.dtype is"),
            (dict(v_cache=vc.double()), TypeError, "v_cache.dtype is"),
            (dict(k_cache=kc.to("meta")), ValueError, "k_cache is on meta"),
            (dict(cache_seqlens=lens.long()), TypeError,
             "cache_seqlens must be an int32"),
            (dict(cache_seqlens=lens.to("meta")), TypeError,
             "cache_seqlens must be an int32 tensor on cpu"),
            (dict(cache_seqlens=lens[:1]), TypeError,
             r"cache_seqlens must be .* of shape \(2,\)"),
            (dict(k_cache=kp, v_cache=vp, block_table=table.long()),
             TypeError, "block_table must be an int32"),
            (dict(k_cache=kp, v_cache=vp, block_table=table[:1]),
             ValueError, r"block_table has shape \(1, 3\)"),
        ]
        fa.flash_attn_with_kvcache(q, kp, vp, cache_seqlens=lens,
                                   block_table=table)
        for change, error, text in bad:
            with self.subTest(bad=text):
                with self.assertRaisesRegex(error, text):
                    fa.flash_attn_with_kvcache(**dict(good, **change))

    def test_returned_lse_is_not_scratch(self):
        # A call that returns its LSE owns it: a later call that does not
        # (its LSE in the scratch memory) leaves it alone.
        torch.manual_seed(23)
        kc, vc = torch.randn(1, 40, 2, 32), torch.randn(1, 40, 2, 32)
        lens = torch.tensor([40], dtype=torch.int32)
        q1, q2 = torch.randn(1, 1, 4, 32), torch.randn(1, 1, 4, 32)
        _, lse1 = fa.flash_attn_with_kvcache(q1, kc, vc, cache_seqlens=lens,
                                             return_softmax_lse=True)
        kept = lse1.clone()
        for _ in range(2):
            fa.flash_attn_with_kvcache(q2, kc, vc, cache_seqlens=lens)
        self.assertTrue(torch.equal(lse1, kept))


class Threads(unittest.TestCase):
    def test_threads_have_their_own_plans_and_scratch(self):
        # Split-KV decode from two threads at once (the host emulator runs
        # within the call, the GIL released): each needs its own workspace.
        torch.manual_seed(24)
        kc, vc = torch.randn(2, 200, 2, 32), torch.randn(2, 200, 2, 32)
        lens = torch.tensor([200, 150], dtype=torch.int32)
        errors = []

        def run(seed):
            g = torch.Generator().manual_seed(seed)
            try:
                for _ in range(6):
                    q = torch.randn(2, 1, 4, 32, generator=g)
                    out = fa.flash_attn_with_kvcache(q, kc, vc,
                                                     cache_seqlens=lens,
                                                     num_splits=4)
                    want = cache_reference(q, kc, vc, lens)[0]
                    err = (out.double() - want).abs().max().item()
                    if err > 1e-5:
                        errors.append(err)
            except Exception as e:  # reported below
                errors.append(repr(e))

        threads = [threading.Thread(target=run, args=(s,)) for s in (1, 2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])


class Streams(unittest.TestCase):
    """A kept plan on a (simulated) GPU: the stream is read at every call,
    the scratch memory is per stream, and a call made while the stream is
    being captured allocates its own LSE and workspace."""

    def setUp(self):
        _interface.clear_launches()
        torch.manual_seed(25)
        self.kc = torch.randn(1, 64, 2, 32)
        self.vc = torch.randn(1, 64, 2, 32)
        self.lens = torch.tensor([64], dtype=torch.int32)
        self.q = torch.randn(1, 1, 4, 32)
        fa.flash_attn_with_kvcache(self.q, self.kc, self.vc,
                                   cache_seqlens=self.lens)
        (self.plan,) = _interface._kvcache_calls.values()
        self.assertTrue(self.plan.ws_bytes)  # split-KV: a workspace
        # The plan as on CUDA device 0, its launches recorded, not run.
        self.plan.index = 0
        self.launches = []
        plan = self.plan

        def enqueue(*args):
            self.launches.append((plan.opts.stream, plan.opts.workspace,
                                  plan.args.lse))
            return 0
        plan.enqueue = enqueue
        self.saved = (_interface._raw_stream, _plan._capturing,
                      _plan._current_device)
        self.stream, self.capturing, self.device = 111, False, 0
        _interface._raw_stream = lambda index: self.stream
        _plan._capturing = lambda: self.capturing
        _plan._current_device = lambda: self.device

    def tearDown(self):
        (_interface._raw_stream, _plan._capturing,
         _plan._current_device) = self.saved
        _interface.clear_launches()

    def call(self, want_lse=False):
        fa.flash_attn_with_kvcache(self.q, self.kc, self.vc,
                                   cache_seqlens=self.lens,
                                   return_softmax_lse=want_lse)
        return self.launches[-1]

    def scratch(self, stream):
        return _plan._scratches[("host", stream, threading.get_ident())]

    def test_stream_read_per_call(self):
        s1 = self.call()
        self.stream = 222
        s2 = self.call()
        self.assertEqual((s1[0], s2[0]), (111, 222))
        # Each stream's launches use that stream's scratch memory.
        self.assertEqual(s1[1:], (self.scratch(111).ws,
                                  self.scratch(111).lse))
        self.assertEqual(s2[1:], (self.scratch(222).ws,
                                  self.scratch(222).lse))
        self.assertNotEqual(s1[1], s2[1])
        # A returned LSE is the call's own.
        self.assertNotEqual(self.call(want_lse=True)[2],
                            self.scratch(222).lse)

    def test_scratch_of_many_streams_is_bounded(self):
        # Streams made per request: the scratch of old ones is dropped
        # (stream-ordered frees), and the plan gets fresh scratch.
        for stream in range(1000, 1100):
            self.stream = stream
            got = self.call()
            self.assertEqual(got[1:], (self.scratch(stream).ws,
                                       self.scratch(stream).lse))
        self.assertLessEqual(len(_plan._scratches), 64)

    def test_capture_allocates_its_own(self):
        self.call()
        scratch = self.scratch(111)
        self.capturing = True
        captured = self.call()
        self.assertNotIn(captured[1], (scratch.ws, scratch.lse))
        self.assertNotIn(captured[2], (scratch.ws, scratch.lse))
        # Tensors on a device other than the current one: the capture
        # check cannot see their stream, so they allocate their own too.
        self.capturing, self.device = False, 1
        other = self.call()
        self.assertNotIn(other[1], (scratch.ws, scratch.lse))
        self.assertNotIn(other[2], (scratch.ws, scratch.lse))
        self.device = 0
        self.assertEqual(self.call()[1:], (scratch.ws, scratch.lse))


if __name__ == "__main__":
    unittest.main()
