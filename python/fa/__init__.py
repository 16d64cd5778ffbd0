"""fa: fused attention for the GPUs the big vendors left behind.

FlashAttention 2's Python API on fa's kernels:

    import fa
    out = fa.flash_attn_func(q, k, v, causal=True)           # (B, L, H, D)
    out = fa.flash_attn_with_kvcache(q, k_cache, v_cache, cache_seqlens=n,
                                     block_table=table)     # decode, paged

Tensors on an AMD GPU (PyTorch for ROCm; gfx906 = MI50/MI60), an NVIDIA GPU
(sm_90) or the CPU (fa's host emulator: slow, exact, for tests). Kernels are
compiled on first use for the tensor's target and cached on disk
(FA_CACHE_DIR); fa.compile(...) compiles ahead. Launches go on the tensor's
current stream, asynchronously, and can be captured in a CUDA graph. The
three functions are also torch.library ops (torch.ops.fa.*), so
torch.compile traces through them where the installed PyTorch has it;
fa.integrations.transformers.register() adds attn_implementation="fa" to
Hugging Face transformers.
"""

import torch

from . import _capi, _interface, _jit
from ._interface import identity_table as _identity_table
from ._ops import ops_registered, eager as _eager, fwd_op, varlen_fwd_op, \
    kvcache_fwd_op, mixed_fwd_op
from ._interface import _check_features, _prepare, _NO_WINDOW, \
    _dense_calls, _kvcache_calls
from ._plan import dense_key as _dense_key, kvcache_key as _kvcache_key, \
    cacheable as _cacheable
from ._ops import _compiling

_Tensor = torch.Tensor

__version__ = _jit.VERSION
FaError = _capi.FaError
CompileError = _capi.CompileError

__all__ = ["flash_attn_func", "flash_attn_varlen_func",
           "flash_attn_with_kvcache", "compile", "FaError", "CompileError",
           "__version__"]


def flash_attn_func(q, k, v, dropout_p=0.0, softmax_scale=None, causal=False,
                    window_size=(-1, -1), softcap=0.0, alibi_slopes=None,
                    deterministic=False, return_attn_probs=False, sinks=None):
    """softmax(q k^T * softmax_scale) v over (batch, seqlen, nheads,
    headdim) tensors; k and v may have fewer heads (GQA: nheads_q a
    multiple of nheads_k). causal: bottom-right aligned, as FlashAttention
    2. Returns out (batch, seqlen_q, nheads, headdim), or with
    return_attn_probs (out, softmax_lse (batch, nheads, seqlen_q) f32,
    None): fa never materialises the probabilities. window_size (left,
    right): query i sees keys i + Lk - Lq - left .. i + Lk - Lq + right (-1:
    unbounded); softcap > 0: scores softcap * tanh(score / softcap), as
    FlashAttention 2. alibi_slopes: float32 (nheads,) (or (1, nheads); a
    table per sequence, (batch, nheads) with batch > 1, raises
    NotImplementedError): score(i, j) -= slope[h] * |i + Lk - Lq - j|, after
    softcap, as FlashAttention 2. sinks, fa's extension (gpt-oss's
    attention sinks): (nheads,) logits, float32 (other float dtypes are
    converted), exp(sinks[h]) joining each row's softmax denominator and
    LSE, never the output (a row that sees no key: out 0, LSE sinks[h]).
    `deterministic` is accepted (fa's forward is deterministic)."""
    if not dropout_p and window_size == _NO_WINDOW and not softcap and \
            alibi_slopes is None and sinks is None and type(q) is _Tensor \
            and type(k) is _Tensor and type(v) is _Tensor and \
            not _compiling():
        # The hot path: a plain call keeps its plan (_plan.py).
        key = _dense_key(q, k, v, softmax_scale, causal)
        plan = _dense_calls.get(key)
        if plan is not None:
            out, lse = plan(q, k, v, want_lse=return_attn_probs)
        else:
            # (Options that are not plain values key no plan.)
            out, lse = _interface.dense(
                q, k, v, softmax_scale, bool(causal),
                want_lse=return_attn_probs,
                key=key if _cacheable(softmax_scale, causal) else None)
        return (out, lse, None) if return_attn_probs else out
    (left, right), cap = _check_features(dropout_p, window_size, softcap,
                                         alibi_slopes, sinks)
    if _eager(q):
        out, lse = _interface.dense(q, k, v, softmax_scale, bool(causal),
                                    left, right, cap, alibi_slopes, sinks,
                                    want_lse=return_attn_probs)
    else:
        out, lse = fwd_op(q, k, v, softmax_scale, bool(causal), left, right,
                          cap, alibi_slopes, sinks)
    return (out, lse, None) if return_attn_probs else out


def flash_attn_varlen_func(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
                           max_seqlen_k, dropout_p=0.0, softmax_scale=None,
                           causal=False, window_size=(-1, -1), softcap=0.0,
                           alibi_slopes=None, deterministic=False,
                           return_attn_probs=False, block_table=None,
                           sinks=None, seqused_k=None, num_splits=0):
    """Attention over packed sequences: q (total_q, nheads, headdim), k and
    v (total_k, nheads_k, headdim); sequence b is rows cu_seqlens_q[b] ..
    cu_seqlens_q[b+1]-1 of q (int32 tensors of batch + 1 entries on q's
    device); max_seqlen_q / max_seqlen_k bound every sequence's length.
    Returns out (total_q, nheads, headdim), or with return_attn_probs
    (out, softmax_lse (nheads, total_q), None). On GPUs the kernel trusts
    cu_seqlens, as FlashAttention's does; CPU tensors are checked.
    alibi_slopes and sinks as flash_attn_func's (ALiBi's distance from
    each sequence's end).

    With block_table (batch, max_pages) int32, a mixed prefill/decode batch
    (vLLM's): k and v are paged caches (num_pages, page_block_size,
    nheads_k, headdim), sequence b's keys are the first cu_seqlens_k[b+1] -
    cu_seqlens_k[b] rows of its pages (or seqused_k[b], vLLM's and
    FlashAttention 3's (batch,) int32, where given; then cu_seqlens_k may
    be None) and its queries are the last of them (causal bottom-right);
    one launch for prompt chunks and decode rows. num_splits (0: the
    runtime's choice) applies to batches of at most 4 query rows per
    sequence."""
    (left, right), cap = _check_features(dropout_p, window_size, softcap,
                                         alibi_slopes, sinks)
    if block_table is not None or seqused_k is not None:
        if block_table is None:
            raise NotImplementedError(
                "fa: seqused_k without block_table (packed K/V whose "
                "sequences use fewer rows than cu_seqlens_k gives) is not "
                "supported; pass the lengths through cu_seqlens_k")
        if seqused_k is None:
            if not isinstance(cu_seqlens_k, _Tensor) or \
                    cu_seqlens_k.dim() != 1:
                raise TypeError("fa: with block_table, cu_seqlens_k (or "
                                "seqused_k) must be a 1-D int32 tensor")
            seqused_k = (cu_seqlens_k[1:] - cu_seqlens_k[:-1]).to(
                torch.int32)
        op = _interface.mixed_fwd if _eager(q) else mixed_fwd_op
        out, lse = op(q, k, v, cu_seqlens_q, seqused_k, block_table,
                      int(max_seqlen_q), softmax_scale, bool(causal),
                      int(num_splits), left, right, cap, alibi_slopes, sinks)
        return (out, lse, None) if return_attn_probs else out
    if num_splits not in (0, 1):
        raise ValueError(f"fa: num_splits={num_splits}: a varlen batch "
                         f"without block_table does not run split-KV")
    op = _interface.varlen_fwd if _eager(q) else varlen_fwd_op
    out, lse = op(q, k, v, cu_seqlens_q, cu_seqlens_k, int(max_seqlen_q),
                  int(max_seqlen_k), softmax_scale, bool(causal), left, right,
                  cap, alibi_slopes, sinks)
    return (out, lse, None) if return_attn_probs else out


def flash_attn_with_kvcache(q, k_cache, v_cache, k=None, v=None,
                            rotary_cos=None, rotary_sin=None,
                            cache_seqlens=None, cache_batch_idx=None,
                            cache_leftpad=None, block_table=None,
                            softmax_scale=None, causal=False,
                            window_size=(-1, -1), softcap=0.0,
                            rotary_interleaved=True, alibi_slopes=None,
                            num_splits=0, return_softmax_lse=False,
                            sinks=None):
    """Attention of q (batch, seqlen_q, nheads, headdim) over a K/V cache:
    dense (batch, seqlen_cache, nheads_k, headdim), or paged (num_blocks,
    page_block_size, nheads_k, headdim) read through block_table (batch,
    max_blocks) int32. cache_seqlens (an int or an int32 (batch,) tensor)
    are the keys each sequence has; k and v (batch, seqlen_new, nheads_k,
    headdim), if given, are written into the cache at cache_seqlens first
    (in place, as FlashAttention 2 does) and attended to. causal: the query
    rows are the sequence's last, bottom-right aligned. num_splits: 0 lets
    fa choose the K/V splits (decode calls of at most 4 query rows run
    split-KV), 1 none. alibi_slopes and sinks as flash_attn_func's (ALiBi's
    distance from the sequence's last key). Returns out, or (out,
    softmax_lse (batch, nheads, seqlen_q)) with return_softmax_lse."""
    if k is None and alibi_slopes is None and sinks is None and \
            not softcap and window_size == _NO_WINDOW and \
            rotary_cos is None and rotary_sin is None and \
            cache_batch_idx is None and cache_leftpad is None and \
            type(q) is _Tensor and type(k_cache) is _Tensor and \
            type(v_cache) is _Tensor and type(cache_seqlens) is _Tensor and \
            (block_table is None or type(block_table) is _Tensor) and \
            not _compiling():
        # The hot path: a plain decode call keeps its plan (_plan.py).
        key = _kvcache_key(q, k_cache, v_cache, cache_seqlens, block_table,
                           softmax_scale, causal, num_splits)
        plan = _kvcache_calls.get(key)
        if plan is not None:
            out, lse = plan(q, k_cache, v_cache, block_table, cache_seqlens,
                            return_softmax_lse)
            return (out, lse) if return_softmax_lse else out
    else:
        key = None
    (left, right), cap = _check_features(0.0, window_size, softcap,
                                         alibi_slopes, sinks)
    if rotary_cos is not None or rotary_sin is not None or \
            cache_batch_idx is not None or cache_leftpad is not None:
        for name, value in (("rotary_cos", rotary_cos),
                            ("rotary_sin", rotary_sin),
                            ("cache_batch_idx", cache_batch_idx),
                            ("cache_leftpad", cache_leftpad)):
            if value is not None:
                raise NotImplementedError(
                    f"fa: {name} is not supported (apply rotary embeddings "
                    f"and pick cache rows before the call)")
    if type(q) is not torch.Tensor or q.dim() != 4:
        q = _prepare("q", q, 4)  # raises, naming q (or a subclass: kept)
    # (kvcache_fwd makes q contiguous where its strides need it.)
    batch = q.shape[0]
    if block_table is None:
        if k_cache.dim() != 4 or k_cache.shape[0] != batch:
            raise ValueError(f"fa: k_cache has shape {tuple(k_cache.shape)}, "
                             f"expected (batch={batch}, seqlen_cache, "
                             f"nheads_k, headdim) without a block_table")
        table = _identity_table(batch, q.device)
    else:
        table = block_table
    page_size = k_cache.shape[1]
    capacity = table.shape[1] * page_size if table.dim() == 2 else 0
    if cache_seqlens is None:
        lens = torch.full((batch,), capacity if k is None else 0,
                          dtype=torch.int32, device=q.device)
    elif isinstance(cache_seqlens, int):
        lens = torch.full((batch,), cache_seqlens, dtype=torch.int32,
                          device=q.device)
    else:
        lens = cache_seqlens
    if (k is None) != (v is None):
        raise ValueError("fa: give both k and v (new keys and values), or "
                         "neither")
    if k is not None:
        new = k.shape[1]
        pos = lens.long().view(batch, 1) + torch.arange(
            new, device=q.device).view(1, new)
        page = table.long().gather(1, torch.div(pos, page_size,
                                                rounding_mode="floor"))
        row = pos % page_size
        k_cache[page, row] = k
        v_cache[page, row] = v
        lens = (lens + new).to(torch.int32)
    if _eager(q):
        # (A plain call keeps its plan under `key`, unless it appended new
        # keys or its lengths were an int.)
        plain = key is not None and lens is cache_seqlens and \
            _cacheable(softmax_scale, causal, num_splits)
        out, lse = _interface.paged(
            q, k_cache, v_cache, lens, table, softmax_scale, bool(causal),
            int(num_splits), left, right, cap, alibi_slopes, sinks,
            want_lse=return_softmax_lse, key=key if plain else None,
            identity=plain and block_table is None)
    else:
        out, lse = kvcache_fwd_op(q, k_cache, v_cache, lens, table,
                                  softmax_scale, bool(causal),
                                  int(num_splits), left, right, cap,
                                  alibi_slopes, sinks)
    return (out, lse) if return_softmax_lse else out


def compile(dtype, head_dim, target, causal=False, softmax_scale=None,
            layout="dense", decode=False, window_size=(-1, -1),
            softcap=0.0, alibi=False, sinks=False):
    """Compiles the kernel a call would use into the disk cache ahead of
    time (FA_CACHE_DIR) and returns its path: dtype "f16" / "bf16" / "f32"
    (or a torch dtype), target "gfx906", "sm_90" or "host", layout
    "dense", "paged", "varlen" or "mixed" (flash_attn_varlen_func with
    block_table), decode the split-KV build that calls of at most 4 query
    rows use, window_size and softcap as the calls'; alibi and sinks:
    whether the calls pass alibi_slopes / sinks."""
    import math
    if layout not in ("dense", "paged", "varlen", "mixed"):
        raise ValueError(f"fa: layout={layout!r}: expected 'dense', "
                         f"'paged', 'varlen' or 'mixed'")
    names = {"float16": "f16", "bfloat16": "bf16", "float32": "f32"}
    dtype = names.get(str(dtype).replace("torch.", ""), str(dtype))
    scale = _jit.canonical_scale(1.0 / math.sqrt(head_dim)
                                 if softmax_scale is None
                                 else float(softmax_scale))
    tiles = ()
    if layout == "mixed" and not decode:
        # What a mixed batch with prompt chunks runs there.
        decode, tiles = _jit.mixed_chunks_build(target)
    spec = _jit.Spec(layout, dtype, int(head_dim), bool(causal), scale,
                     bool(decode), target, _interface._window(window_size),
                     _interface._softcap(softcap), alibi=bool(alibi),
                     sinks=bool(sinks), tiles=tiles)
    return _jit.compile_to_cache(spec)
