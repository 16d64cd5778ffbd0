"""fa as a Hugging Face transformers attention implementation.

    import fa.integrations.transformers as fat
    fat.register()
    model = AutoModelForCausalLM.from_config(cfg, attn_implementation="fa")

register() adds "fa" to transformers' AttentionInterface (and, where the
installed transformers has it, a mask function to AttentionMaskInterface
that asks for no mask when there is no padding, as flash_attention_2
does). attention_forward is the function transformers calls: query (batch,
heads, q_len, head_dim), key and value (batch, kv_heads, kv_len, head_dim)
as transformers' layers pass them; it returns (batch, q_len, heads,
head_dim) and no weights. It passes `scaling`, `sliding_window`,
`softcap` and `s_aux` (gpt-oss's per-head attention sinks, (num_heads,),
passed to fa as `sinks`) through, is causal where the layer says so
(module.is_causal), and refuses by name dropout and a padding mask.
(transformers passes no ALiBi slopes: models with ALiBi add the bias to
the mask.)

StaticCache is fa's own K/V cache for such a model (fixed shapes and
addresses, the lengths on the device), and greedy_generate(model,
input_ids, n, cuda_graph=True) decodes over it with the one-token step
captured in a CUDA graph (the model runs with use_cache=False; its
attention layers find the cache on their module).
"""

import torch

from .. import flash_attn_func, flash_attn_with_kvcache

NAME = "fa"


def attention_forward(module, query, key, value, attention_mask,
                      scaling=None, dropout=0.0, **kwargs):
    # A sliding window of W keys (the query's own and the W - 1 before it),
    # as transformers' flash_attention_2 passes it: window_size (W-1, W-1).
    window = kwargs.get("sliding_window")
    if window is None:
        window = getattr(module, "sliding_window", None)
    window_size = (int(window) - 1, int(window) - 1) if window else (-1, -1)
    softcap = kwargs.get("softcap") or 0.0
    if dropout:
        raise NotImplementedError(f"fa: dropout={dropout} (fa's kernels do "
                                  f"not drop out; use the model in eval())")
    if attention_mask is not None:
        raise NotImplementedError(
            "fa: a padding attention mask was passed; fa supports unpadded "
            "batches (equal-length prompts) for now")
    # fa's causal mask is bottom-right aligned: the query rows are the
    # sequence's last, as in decode and chunked prefill over a cache.
    causal = bool(getattr(module, "is_causal", True))
    cache = kwargs.get("fa_kv_cache")
    if cache is None:
        cache = getattr(module, "fa_kv_cache", None)
    if cache is not None:
        # fa's static cache (StaticCache): this step's keys and values
        # (the model runs with use_cache=False) are appended at each
        # sequence's length, and the queries attend over the cache.
        out = flash_attn_with_kvcache(
            query.transpose(1, 2), cache.k[module.layer_idx],
            cache.v[module.layer_idx], k=key.transpose(1, 2),
            v=value.transpose(1, 2), cache_seqlens=cache.lens,
            softmax_scale=scaling, causal=causal, window_size=window_size,
            softcap=softcap, sinks=kwargs.get("s_aux"))
        cache.layers_served += 1
        return out, None
    out = flash_attn_func(query.transpose(1, 2), key.transpose(1, 2),
                          value.transpose(1, 2), softmax_scale=scaling,
                          causal=causal, window_size=window_size,
                          softcap=softcap, sinks=kwargs.get("s_aux"))
    return out, None


class StaticCache:
    """fa's K/V cache for a transformers model with attn_implementation="fa":
    per layer, K and V tensors (batch, max_len, kv_heads, head_dim) at fixed
    addresses, and the sequences' lengths, an int32 (batch,) tensor on the
    device. A step appends its keys and values at the lengths (in
    attention_forward) and advance(n) moves the lengths on, on the device:
    a decode step has fixed shapes, reads no length on the host, and can be
    captured in a CUDA graph (greedy_generate).

    The model runs with use_cache=False (transformers' own cache stays
    out) and finds the cache on its attention modules (attach()) or in the
    forward's keyword arguments (fa_kv_cache=..., which transformers passes
    through to the attention function)."""

    def __init__(self, config, batch, max_len, device, dtype):
        head_dim = getattr(config, "head_dim", None) or \
            config.hidden_size // config.num_attention_heads
        shape = (batch, max_len, config.num_key_value_heads, head_dim)
        layers = config.num_hidden_layers
        self.k = [torch.zeros(shape, device=device, dtype=dtype)
                  for _ in range(layers)]
        self.v = [torch.zeros(shape, device=device, dtype=dtype)
                  for _ in range(layers)]
        self.lens = torch.zeros(batch, dtype=torch.int32, device=device)
        self.max_len = max_len
        # Attention calls served (greedy_generate checks that the model's
        # every layer came through the cache).
        self.layers_served = 0

    def advance(self, n):
        """Each sequence grew by n tokens (in place, on the device)."""
        self.lens.add_(n)

    def attach(self, model):
        """Sets the cache on `model`'s attention modules (those with a
        layer_idx), where attention_forward looks for it."""
        for m in model.modules():
            if getattr(m, "layer_idx", None) is not None:
                m.fa_kv_cache = self
        return self

    @staticmethod
    def detach(model):
        for m in model.modules():
            if "fa_kv_cache" in vars(m):
                del m.fa_kv_cache


def greedy_generate(model, input_ids, max_new_tokens, cuda_graph=False,
                    suppress_tokens=()):
    """Greedy decoding of `model` (attn_implementation="fa") over fa's
    StaticCache: the prompts (equal lengths, no padding) in one forward,
    then one token per sequence per step. With cuda_graph, the one-token
    step is captured in a CUDA graph after one eager warm-up step and
    replayed, the token and positions written into the captured input
    tensors. suppress_tokens: ids whose logits are set to -inf before the
    argmax (what generate()'s min_new_tokens does to EOS). Returns the
    sequences (batch, prompt + max_new_tokens) and each step's logits
    (float32, (batch, vocab), before suppression)."""
    cfg = model.config
    b, n = input_ids.shape
    dev = input_ids.device
    cache = StaticCache(cfg, b, n + max_new_tokens, dev,
                        next(model.parameters()).dtype).attach(model)
    layers = cfg.num_hidden_layers
    suppress = list(suppress_tokens)

    def forward(ids, pos):
        before = cache.layers_served
        logits = model(input_ids=ids, position_ids=pos,
                       use_cache=False).logits[:, -1]
        if cache.layers_served - before != layers:
            raise RuntimeError(
                f"fa: greedy_generate: {cache.layers_served - before} of the "
                f"model's {layers} attention layers went through fa's "
                f"StaticCache (is attn_implementation \"fa\", and do its "
                f"attention modules have a layer_idx?)")
        return logits

    def pick(logits):
        scores = logits.float().clone()
        if suppress:
            scores[:, suppress] = -float("inf")
        return scores.argmax(-1)

    try:
        with torch.no_grad():
            logits = forward(input_ids,
                             torch.arange(n, device=dev).expand(b, n))
            cache.advance(n)
            steps = [logits.float().clone()]
            tokens = [pick(logits)]
            ids = tokens[-1].view(b, 1).clone()
            pos = cache.lens.view(b, 1).long()
            step = lambda: forward(ids, pos)  # noqa: E731
            if cuda_graph and max_new_tokens > 1:
                step = _capture(forward, ids, pos)
            for _ in range(max_new_tokens - 1):
                ids.copy_(tokens[-1].view(b, 1))
                pos.copy_(cache.lens.view(b, 1))
                logits = step()
                cache.advance(1)
                steps.append(logits.float().clone())
                tokens.append(pick(logits))
    finally:
        StaticCache.detach(model)
    return torch.cat([input_ids, torch.stack(tokens, 1)], 1), steps


def _capture(forward, ids, pos):
    """The one-token step forward(ids, pos) captured in a CUDA graph: a
    function that replays it and returns its logits (the graph's output
    tensor, overwritten by the next replay). The warm-up step runs on a
    side stream first, as PyTorch asks (lazy initialisation, fa's kernel
    load and plans happen there, not during the capture); it computes the
    first step, whose keys the replay writes again."""
    if not torch.cuda.is_available() or ids.device.type != "cuda":
        raise RuntimeError("fa: greedy_generate(cuda_graph=True) needs a "
                           f"CUDA device; the model is on {ids.device}")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        forward(ids, pos)
    torch.cuda.current_stream().wait_stream(side)
    graph = torch.cuda.CUDAGraph()
    try:
        with torch.cuda.graph(graph):
            out = forward(ids, pos)
    except Exception as e:
        raise RuntimeError(f"fa: capturing the decode step in a CUDA graph "
                           f"failed (something in the step synchronises or "
                           f"allocates host memory?): {e!r}") from e

    def replay():
        graph.replay()
        return out
    return replay


def _no_padding_mask(*args, **kwargs):
    """The mask transformers builds for "fa": None (causal is the kernel's)
    when no sequence is padded, else the 2-D padding mask, as
    flash_attention_2's. transformers' mask functions take (batch_size,
    cache_position, kv_length, kv_offset, mask_function, attention_mask,
    ...), by position or by name, and some models pass other names (gpt-oss
    in transformers 5.17 no cache_position): only attention_mask matters."""
    attention_mask = kwargs.get("attention_mask",
                                args[5] if len(args) > 5 else None)
    if attention_mask is not None and not bool(attention_mask.all()):
        return attention_mask
    return None


def register():
    """Registers attention_forward as attn_implementation="fa"."""
    try:
        from transformers import AttentionInterface
    except ImportError as e:
        raise ImportError("fa.integrations.transformers.register() needs "
                          "Hugging Face transformers (AttentionInterface, "
                          f"4.48 or later): {e}") from None
    AttentionInterface.register(NAME, attention_forward)
    try:
        from transformers import AttentionMaskInterface
        AttentionMaskInterface.register(NAME, _no_padding_mask)
    except ImportError:
        pass
    return NAME
