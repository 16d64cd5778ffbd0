"""Seed validation layer 3 on the CPU: fa's kernels inside a real model.

A small decoder-only transformer in PyTorch, Llama-style (RMSNorm, rotary
position embeddings, grouped-query attention, SwiGLU MLP; seeded weights),
serves a batch of prompts of different lengths from a paged KV cache
(pages shuffled over a shared pool, as vLLM allocates them): each prompt is
prefilled on its own (fa.flash_attn_with_kvcache with the prompt's keys
appended to the cache, causal, the prefill kernel), then the batch decodes
greedily for 40 steps, one token per sequence per step (the same call with
one query row: the split-KV decode kernel, each sequence at its own length).
The same model runs with a reference attention in fp64 over the same cache
contents. At every step the logits agree within 2e-3 (fp32 kernels; the
reference's own fp32 rounding elsewhere in the model is the same on both
sides) and the greedy tokens are the same.

The attention of fa's path reads only the paged cache, so a wrong page, a
wrong length, a missing causal mask or a bad split combine changes the
logits: this is the planted-bug check the model layer adds (see
test_a_broken_cache_is_caught).
"""

import math
import unittest

import torch

import fa

VOCAB, HIDDEN, LAYERS, HEADS, KV_HEADS, HEAD_DIM, FFN = 101, 64, 2, 4, 2, 16, 128
PAGE, PAGES_PER_SEQ = 8, 8


def rms_norm(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rotary(x, pos):
    """x (B, L, H, D) rotated by positions pos (B, L), half-split layout."""
    half = HEAD_DIM // 2
    freq = 1.0 / (10000 ** (torch.arange(half, dtype=torch.float64) / half))
    ang = pos.double()[..., None] * freq  # (B, L, half)
    cos, sin = ang.cos()[:, :, None].float(), ang.sin()[:, :, None].float()
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], -1)


class Model:
    def __init__(self, seed=0):
        g = torch.Generator().manual_seed(seed)

        def w(*shape, scale):
            return torch.randn(*shape, generator=g) * scale

        self.embed = w(VOCAB, HIDDEN, scale=1.0)
        self.layers = []
        for _ in range(LAYERS):
            self.layers.append(dict(
                n1=1 + w(HIDDEN, scale=0.1), n2=1 + w(HIDDEN, scale=0.1),
                wq=w(HIDDEN, HEADS * HEAD_DIM, scale=HIDDEN ** -0.5),
                wk=w(HIDDEN, KV_HEADS * HEAD_DIM, scale=HIDDEN ** -0.5),
                wv=w(HIDDEN, KV_HEADS * HEAD_DIM, scale=HIDDEN ** -0.5),
                wo=w(HEADS * HEAD_DIM, HIDDEN, scale=HIDDEN ** -0.5),
                gate=w(HIDDEN, FFN, scale=HIDDEN ** -0.5),
                up=w(HIDDEN, FFN, scale=HIDDEN ** -0.5),
                down=w(FFN, HIDDEN, scale=FFN ** -0.5)))
        self.norm = 1 + w(HIDDEN, scale=0.1)
        self.head = w(HIDDEN, VOCAB, scale=HIDDEN ** -0.5)


class PagedCache:
    """Per layer: K and V pools (num_pages, PAGE, KV_HEADS, HEAD_DIM) and
    one block table (B, PAGES_PER_SEQ), pages shuffled over the pool."""

    def __init__(self, batch, seed=1):
        g = torch.Generator().manual_seed(seed)
        self.num_pages = batch * PAGES_PER_SEQ + 5
        perm = torch.randperm(self.num_pages, generator=g)
        self.table = perm[:batch * PAGES_PER_SEQ].view(
            batch, PAGES_PER_SEQ).to(torch.int32)
        self.k = [torch.zeros(self.num_pages, PAGE, KV_HEADS, HEAD_DIM)
                  for _ in range(LAYERS)]
        self.v = [torch.zeros_like(k) for k in self.k]
        self.lens = torch.zeros(batch, dtype=torch.int32)

    def gather(self, layer, b):
        """(len, KV_HEADS, HEAD_DIM) keys and values of sequence b."""
        n = int(self.lens[b])
        pages = self.table[b].long()
        k = self.k[layer][pages].reshape(-1, KV_HEADS, HEAD_DIM)[:n]
        v = self.v[layer][pages].reshape(-1, KV_HEADS, HEAD_DIM)[:n]
        return k, v


def fa_attention(layer, cache, rows, q, k, v, causal):
    """fa: append k, v to the rows' sequences and attend over the cache."""
    table = cache.table[rows]
    lens = cache.lens[rows].clone()
    out = fa.flash_attn_with_kvcache(
        q, cache.k[layer], cache.v[layer], k=k, v=v, cache_seqlens=lens,
        block_table=table, causal=causal)
    return out


def reference_attention(layer, cache, rows, q, k, v, causal):
    """fp64 softmax attention over the same cache after the same append."""
    b_count, lq = q.shape[:2]
    outs = []
    for i, b in enumerate(rows.tolist()):
        n = int(cache.lens[b])
        for j in range(k.shape[1]):
            p = cache.table[b, (n + j) // PAGE].long()
            cache.k[layer][p, (n + j) % PAGE] = k[i, j]
            cache.v[layer][p, (n + j) % PAGE] = v[i, j]
        cache.lens[b] += k.shape[1]
        keys, vals = cache.gather(layer, b)
        cache.lens[b] -= k.shape[1]
        qh = q[i].double().transpose(0, 1)  # (H, Lq, D)
        kh = keys.double().transpose(0, 1).repeat_interleave(
            HEADS // KV_HEADS, 0)
        vh = vals.double().transpose(0, 1).repeat_interleave(
            HEADS // KV_HEADS, 0)
        s = qh @ kh.transpose(-1, -2) / math.sqrt(HEAD_DIM)
        if causal:
            lk = kh.shape[1]
            mask = torch.arange(lk)[None] > torch.arange(lq)[:, None] + lk - lq
            s = s.masked_fill(mask, float("-inf"))
        outs.append((torch.softmax(s, -1) @ vh).transpose(0, 1).float())
    return torch.stack(outs)


def forward(model, cache, rows, tokens, attention):
    """Logits of the last position of `tokens` (len(rows), L) for sequences
    `rows`, whose cached keys precede them; the cache grows by L."""
    b_count, length = tokens.shape
    pos = cache.lens[rows].long()[:, None] + torch.arange(length)[None]
    x = model.embed[tokens]
    for li, p in enumerate(model.layers):
        h = rms_norm(x, p["n1"])
        q = (h @ p["wq"]).view(b_count, length, HEADS, HEAD_DIM)
        k = (h @ p["wk"]).view(b_count, length, KV_HEADS, HEAD_DIM)
        v = (h @ p["wv"]).view(b_count, length, KV_HEADS, HEAD_DIM)
        q, k = rotary(q, pos), rotary(k, pos)
        a = attention(li, cache, rows, q, k, v, causal=True)
        x = x + a.reshape(b_count, length, HEADS * HEAD_DIM) @ p["wo"]
        h = rms_norm(x, p["n2"])
        x = x + (torch.nn.functional.silu(h @ p["gate"]) * (h @ p["up"])) \
            @ p["down"]
    cache.lens[rows] += length
    return rms_norm(x[:, -1], model.norm) @ model.head


def generate(model, prompts, steps, attention, cache):
    """Prefill each prompt alone, then decode the batch greedily; the
    logits of every step and the tokens."""
    logits_per_step, last = [], []
    for b, prompt in enumerate(prompts):
        last.append(forward(model, cache, torch.tensor([b]),
                            torch.tensor([prompt]), attention)[0])
    logits = torch.stack(last)
    tokens = [logits.argmax(-1)]
    logits_per_step.append(logits)
    rows = torch.arange(len(prompts))
    for _ in range(steps):
        logits = forward(model, cache, rows, tokens[-1][:, None], attention)
        logits_per_step.append(logits)
        tokens.append(logits.argmax(-1))
    return logits_per_step, torch.stack(tokens, 1)


PROMPTS = [[3, 14, 15, 92, 65, 35, 89, 79, 32, 38, 46],
           [26, 43, 38, 32, 79, 50, 28],
           [84, 19, 71, 69, 39, 93, 75, 10, 58, 20, 97, 49, 44, 59, 23]]


class RealModel(unittest.TestCase):
    def test_greedy_decode_matches_the_reference(self):
        torch.manual_seed(0)
        model = Model()
        steps = 40
        ref_logits, ref_tokens = generate(model, PROMPTS, steps,
                                          reference_attention,
                                          PagedCache(len(PROMPTS)))
        fa_logits, fa_tokens = generate(model, PROMPTS, steps, fa_attention,
                                        PagedCache(len(PROMPTS)))
        worst = 0.0
        for step, (a, b) in enumerate(zip(fa_logits, ref_logits)):
            err = (a - b).abs().max().item()
            worst = max(worst, err)
            self.assertLessEqual(err, 2e-3, f"step {step}: logits differ by "
                                 f"{err}")
        self.assertTrue(torch.equal(fa_tokens, ref_tokens),
                        f"tokens differ:\n{fa_tokens}\n{ref_tokens}")
        # The longest sequence outgrew its first pages: the decode steps
        # read through the shuffled table.
        self.assertGreater(len(PROMPTS[2]) + steps, 4 * PAGE)
        print(f"layer 3: {len(PROMPTS)} prompts, {steps} greedy steps, same "
              f"tokens, worst logit difference {worst:.2e}")

    def test_a_broken_cache_is_caught(self):
        """The check fails when fa reads a wrong page: the table given to
        the kernel differs in one entry from the one the cache was written
        through."""
        model = Model()
        good = PagedCache(len(PROMPTS))
        ref_logits, _ = generate(model, PROMPTS, 4, reference_attention,
                                 PagedCache(len(PROMPTS)))

        def swapped(layer, cache, rows, q, k, v, causal):
            out = fa_attention(layer, cache, rows, q, k, v, causal)
            if q.shape[1] == 1:  # decode: read sequence 0 through a bad table
                t = cache.table.clone()
                t[0, 0], t[0, 1] = cache.table[0, 1], cache.table[0, 0]
                lens = cache.lens[rows] + 1
                out = fa.flash_attn_with_kvcache(
                    q, cache.k[layer], cache.v[layer], cache_seqlens=lens,
                    block_table=t[rows], causal=causal)
            return out

        bad_logits, _ = generate(model, PROMPTS, 4, swapped, good)
        err = max((a - b).abs().max().item()
                  for a, b in zip(bad_logits[1:], ref_logits[1:]))
        self.assertGreater(err, 2e-3)


if __name__ == "__main__":
    unittest.main()
