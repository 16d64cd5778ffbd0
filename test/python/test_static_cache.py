"""fa.integrations.transformers' StaticCache and greedy_generate on CPU
tensors, without transformers: a small Llama-style model whose attention
layers call attention_forward as transformers' do ((batch, heads, len,
head_dim) query/key/value after RoPE, the layer as `module`, use_cache off)
decodes greedily over fa's static cache, against the same model recomputing
the whole sequence at every step with fp64 attention. The H200 runs the
same driver on transformers' Llama and Qwen2 with the decode step in a CUDA
graph (bench/python_api.py); this is its graph-free path.

Run with Debian's python3 (python3-torch) and the build's libraries:
    FA_CACHE_DIR=... PYTHONPATH=python /usr/bin/python3 \
        test/python/test_static_cache.py
"""

import math
import types
import unittest

import torch

import fa.integrations.transformers as fat


class Config:
    vocab_size, hidden_size, num_hidden_layers = 97, 64, 2
    num_attention_heads, num_key_value_heads, head_dim = 4, 2, 16


def rotary(x, pos):
    """x (B, H, L, D) rotated by positions pos (B, L), half-split."""
    half = x.shape[-1] // 2
    freq = 1.0 / (10000 ** (torch.arange(half, dtype=torch.float64) / half))
    ang = pos.double()[:, None, :, None] * freq
    cos, sin = ang.cos().float(), ang.sin().float()
    a, b = x[..., :half], x[..., half:]
    return torch.cat([a * cos - b * sin, a * sin + b * cos], -1)


def eager_attention(q, k, v, scaling):
    """Causal attention in fp64 over (B, H, L, D), GQA by repetition."""
    rep = q.shape[1] // k.shape[1]
    k = k.double().repeat_interleave(rep, 1)
    v = v.double().repeat_interleave(rep, 1)
    s = q.double() @ k.transpose(-1, -2) * scaling
    lq, lk = s.shape[-2:]
    i, j = torch.arange(lq)[:, None], torch.arange(lk)[None]
    s = s.masked_fill(j > i + lk - lq, float("-inf"))
    return (torch.softmax(s, -1) @ v).transpose(1, 2).float()


class Attention(torch.nn.Module):
    is_causal = True

    def __init__(self, cfg, layer_idx, g):
        super().__init__()
        self.layer_idx = layer_idx
        h, d = cfg.hidden_size, cfg.head_dim
        self.heads, self.kv_heads, self.d = cfg.num_attention_heads, \
            cfg.num_key_value_heads, d
        self.scaling = d ** -0.5
        w = lambda i, o: torch.nn.Parameter(  # noqa: E731
            torch.randn(i, o, generator=g) * i ** -0.5)
        self.wq, self.wk = w(h, self.heads * d), w(h, self.kv_heads * d)
        self.wv, self.wo = w(h, self.kv_heads * d), w(self.heads * d, h)

    def forward(self, x, pos, impl):
        b, n, _ = x.shape
        q = (x @ self.wq).view(b, n, self.heads, self.d).transpose(1, 2)
        k = (x @ self.wk).view(b, n, self.kv_heads, self.d).transpose(1, 2)
        v = (x @ self.wv).view(b, n, self.kv_heads, self.d).transpose(1, 2)
        q, k = rotary(q, pos), rotary(k, pos)
        if impl == "fa":
            out, _ = fat.attention_forward(self, q, k, v, None,
                                           scaling=self.scaling)
        else:
            out = eager_attention(q, k, v, self.scaling)
        return out.reshape(b, n, -1) @ self.wo


class Model(torch.nn.Module):
    """The call form greedy_generate makes: model(input_ids=...,
    position_ids=..., use_cache=False).logits."""

    def __init__(self, impl, seed=0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        cfg = self.config = Config()
        self.impl = impl
        self.embed = torch.nn.Parameter(
            torch.randn(cfg.vocab_size, cfg.hidden_size, generator=g))
        self.layers = torch.nn.ModuleList(
            Attention(cfg, i, g) for i in range(cfg.num_hidden_layers))
        self.head = torch.nn.Parameter(
            torch.randn(cfg.hidden_size, cfg.vocab_size, generator=g) *
            cfg.hidden_size ** -0.5)

    def forward(self, input_ids, position_ids, use_cache=True):
        assert use_cache is False
        x = self.embed[input_ids]
        for layer in self.layers:
            x = x + layer(x / x.norm(dim=-1, keepdim=True) *
                          math.sqrt(x.shape[-1]), position_ids, self.impl)
        return types.SimpleNamespace(logits=x @ self.head)


class GreedyGenerate(unittest.TestCase):
    def test_matches_recomputation_in_fp64(self):
        torch.manual_seed(30)
        prompt = torch.randint(0, Config.vocab_size, (2, 11))
        steps, suppress = 20, [5]
        seqs, logits = fat.greedy_generate(Model("fa"), prompt, steps,
                                           suppress_tokens=suppress)
        self.assertEqual(seqs.shape, (2, 11 + steps))
        self.assertTrue(torch.equal(seqs[:, :11], prompt))
        self.assertFalse((seqs[:, 11:] == 5).any().item())
        reference = Model("eager")
        with torch.no_grad():
            for i in range(steps):
                n = 11 + i
                pos = torch.arange(n).expand(2, n)
                want = reference(seqs[:, :n], pos, use_cache=False).logits
                want = want[:, -1]
                err = (logits[i] - want).abs().max().item()
                self.assertLessEqual(err, 2e-3, f"step {i}")
                scores = want.clone()
                scores[:, suppress] = -float("inf")
                self.assertTrue(torch.equal(scores.argmax(-1), seqs[:, n]),
                                f"step {i}")

    def test_layers_must_reach_the_cache(self):
        # A model whose attention does not go through attention_forward
        # (another attn_implementation) is refused, naming the count.
        with self.assertRaisesRegex(RuntimeError,
                                    "0 of the model's 2 attention layers"):
            fat.greedy_generate(Model("eager"), torch.zeros(1, 3).long(), 2)

    def test_cuda_graph_needs_cuda(self):
        with self.assertRaisesRegex(RuntimeError, "needs a CUDA device"):
            fat.greedy_generate(Model("fa"), torch.zeros(1, 3).long(), 2,
                                cuda_graph=True)

    def test_cache_detached_after(self):
        model = Model("fa")
        fat.greedy_generate(model, torch.zeros(1, 3).long(), 2)
        self.assertFalse(any("fa_kv_cache" in vars(m)
                             for m in model.modules()))


if __name__ == "__main__":
    unittest.main()
