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
"""

from .. import flash_attn_func

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
    out = flash_attn_func(query.transpose(1, 2), key.transpose(1, 2),
                          value.transpose(1, 2), softmax_scale=scaling,
                          causal=causal, window_size=window_size,
                          softcap=softcap, sinks=kwargs.get("s_aux"))
    return out, None


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
