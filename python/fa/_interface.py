"""FlashAttention 2's functions on fa's kernels.

The three functions take FlashAttention 2's arguments and layouts
((batch, seqlen, heads, headdim); packed (total, heads, headdim) with
cu_seqlens; a K/V cache, dense or paged with block_table). Each checks its
arguments (a bad one raises naming it), picks the kernel for the call's
features (compiled on first use, _jit.py) and enqueues it on the tensors'
device and current stream through the runtime's C API: asynchronously, and
capturable in a CUDA graph. CPU tensors run on fa's host emulator.

ALiBi slopes (FlashAttention 2's alibi_slopes) and attention sinks (fa's
`sinks`, gpt-oss's) are f32 [nheads] tensors on q's device; a kernel built
with them takes them as its head parameters (fa_module_enqueue_heads).

What fa does not do yet raises NotImplementedError naming the argument:
dropout, a per-sequence ALiBi table ((batch, nheads) slopes with batch >
1), rotary embedding inside the call, cache_batch_idx, cache_leftpad, and
block_table in flash_attn_varlen_func.
"""

import ctypes
import math
import threading

import torch

from . import _capi, _jit, _plan

_SUPPORTED = {torch.float16: "f16", torch.bfloat16: "bf16",
              torch.float32: "f32"}


def _check_features(dropout_p=0.0, window_size=(-1, -1), softcap=0.0,
                    alibi_slopes=None, sinks=None):
    """What fa does not do raises, naming the argument; returns the window
    (left, right) and the softcap, checked. (alibi_slopes and sinks are
    checked against q's heads and device where the call knows them:
    _head_tensor.)"""
    if dropout_p:
        raise NotImplementedError(
            f"fa: dropout_p={dropout_p}: fa's kernels do not drop out (pass "
            f"0.0; FlashAttention's dropout is for training)")
    # (The common call, no window and no softcap, checks nothing more.)
    window = _NO_WINDOW if window_size == _NO_WINDOW else _window(window_size)
    return window, (_softcap(softcap) if softcap else 0.0)


_NO_WINDOW = (-1, -1)


def _window(window_size):
    try:
        left, right = (int(x) for x in window_size)
    except (TypeError, ValueError):
        raise ValueError(f"fa: window_size={window_size!r} must be a pair "
                         f"(left, right) of ints") from None
    if left < -1 or right < -1:
        raise ValueError(f"fa: window_size={window_size!r}: each side is -1 "
                         f"(unbounded) or >= 0")
    return left, right


def _head_tensor(name, t, hq, batch, device):
    """The f32 [hq] contiguous tensor a kernel's head parameter `name`
    ("alibi_slopes" or "sinks") takes, from the caller's `t` (None: none).
    alibi_slopes: float32 as FlashAttention 2 requires, (nheads,) or
    (batch, nheads) with batch 1 (a table per sequence raises); sinks: any
    floating-point dtype, converted to float32 (nheads values)."""
    if t is None:
        return None
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"fa: {name} must be a torch.Tensor of shape "
                        f"({hq},), got {type(t).__name__}")
    if t.device != device:
        raise ValueError(f"fa: {name} is on {t.device}, q on {device}")
    alibi = name == "alibi_slopes"
    if alibi and t.dim() == 2 and tuple(t.shape) == (batch, hq):
        if batch != 1:
            raise NotImplementedError(
                f"fa: alibi_slopes of shape {tuple(t.shape)} (a table per "
                f"sequence, batch={batch}) is not supported; pass ({hq},) "
                f"slopes that every sequence shares")
        t = t.reshape(hq)
    if t.dim() != 1 or t.shape[0] != hq:
        raise ValueError(
            f"fa: {name} has shape {tuple(t.shape)}, expected ({hq},): one "
            f"value per query head" + (f" (or ({batch}, {hq}) with batch 1)"
                                       if alibi else ""))
    if t.dtype != torch.float32:
        if alibi:
            raise TypeError(f"fa: alibi_slopes.dtype is {t.dtype}: it must "
                            f"be torch.float32 (as FlashAttention 2's)")
        if not t.is_floating_point():
            raise TypeError(f"fa: sinks.dtype is {t.dtype}: it must be a "
                            f"floating-point dtype (float32; others are "
                            f"converted)")
        t = t.float()
    if t.stride(0) != 1:
        t = t.contiguous()
    return t


_PLAIN = (torch.Tensor, torch.nn.Parameter)


def _heads_signature(alibi_slopes, sinks):
    """What a kept launch's signature adds for the head parameters: their
    shapes, strides, dtypes and devices (None where one is not a plain
    torch.Tensor or a Parameter, a model's sinks: no kept launch)."""
    out = []
    for t in (alibi_slopes, sinks):
        if t is None:
            out.append(None)
        elif type(t) in _PLAIN:
            out.append((t.shape, t.stride(), t.dtype, t.device))
        else:
            return None
    return tuple(out)


def _heads(dev_name, alibi_slopes, sinks):
    """fa_head_params over checked f32 [Hq] tensors (None without them)."""
    if alibi_slopes is None and sinks is None:
        return None
    return _capi.Module.heads(_wrap(dev_name, alibi_slopes),
                              _wrap(dev_name, sinks))


def _softcap(softcap):
    c = float(softcap or 0.0)
    if not math.isfinite(c) or c < 0:
        raise ValueError(f"fa: softcap={softcap!r} must be 0 (none) or a "
                         f"positive finite number")
    return _jit.canonical_scale(c) if c else 0.0


_places = {}


def _place(device):
    """(target, fa device name, CUDA/HIP device index or None) of a torch
    device, worked out once per device."""
    p = _places.get(device)
    if p is not None:
        return p
    if device.type == "cpu":
        p = ("host", "host", None)
    elif device.type == "cuda":
        index = device.index
        if index is None:
            index = torch.cuda.current_device()
        if getattr(torch.version, "hip", None):
            arch = torch.cuda.get_device_properties(index).gcnArchName
            p = (arch.split(":")[0], f"hip:{index}", index)
        else:
            major, minor = torch.cuda.get_device_capability(index)
            p = (f"sm_{major}{minor}", f"cuda:{index}", index)
    else:
        raise ValueError(f"fa: tensors on device '{device}' are not "
                         f"supported (CPU, CUDA and ROCm tensors are)")
    if device.index is not None or device.type == "cpu":
        _places[device] = p
    return p


_raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None)


def _where(t):
    """(target, fa device name, stream handle) of tensor `t`: the current
    stream of its device (0 on the CPU)."""
    target, name, index = _place(t.device)
    if index is None:
        return target, name, 0
    stream = _raw_stream(index) if _raw_stream is not None else \
        torch.cuda.current_stream(index).cuda_stream
    return target, name, stream


# Wrapped buffers by (device, address, bytes): a wrap records only the
# range, so a later tensor at the same address and extent (the caching
# allocator hands out the same blocks) reuses the handle.
_wrapped = {}
_wrapped_lock = threading.Lock()


def _buffer(dev_name, ptr, nbytes):
    """The wrapped buffer over `nbytes` at `ptr`, made once (_wrapped)."""
    k = (dev_name, ptr, nbytes)
    b = _wrapped.get(k)
    if b is None:
        with _wrapped_lock:
            if len(_wrapped) > 1024:
                _wrapped.clear()
            b = _wrapped[k] = _capi.Buffer(_jit.device(dev_name), ptr, nbytes)
    return b


def _span(t):
    """The bytes tensor `t`'s view spans from its first element (strides
    >= 0; one element for an empty tensor)."""
    extent = 1
    for n, st in zip(t.shape, t.stride()):
        if n == 0:
            extent = 1
            break
        extent += (n - 1) * st
    return extent * t.element_size()


def _wrap(dev_name, t):
    return None if t is None else _buffer(dev_name, t.data_ptr(), _span(t))


def _prepare(name, t, dims):
    """`t` checked to have `dims` dimensions and a unit last stride (made
    contiguous where it has not: a cheap copy fa's ABI can express)."""
    if not isinstance(t, torch.Tensor):
        raise TypeError(f"fa: {name} must be a torch.Tensor, got "
                        f"{type(t).__name__}")
    if t.dim() != dims:
        raise ValueError(f"fa: {name} must have {dims} dimensions, got shape "
                         f"{tuple(t.shape)}")
    if t.stride(-1) != 1 or any(s < 0 for s in t.stride()):
        t = t.contiguous()
    return t


def _dtype(q, *others):
    for n, t in others:
        if t.dtype != q.dtype:
            raise TypeError(f"fa: {n}.dtype is {t.dtype}, q.dtype is "
                            f"{q.dtype}: they must be equal")
        if t.device != q.device:
            raise ValueError(f"fa: {n} is on {t.device}, q on {q.device}")
    if q.dtype not in _SUPPORTED:
        raise TypeError(f"fa: q.dtype {q.dtype} is not supported (float16, "
                        f"bfloat16, float32)")
    return _SUPPORTED[q.dtype]


def _scale(softmax_scale, d):
    s = 1.0 / math.sqrt(d) if softmax_scale is None else float(softmax_scale)
    if not math.isfinite(s) or s <= 0:
        raise ValueError(f"fa: softmax_scale={softmax_scale} must be a "
                         f"positive finite number")
    return _jit.canonical_scale(s)


def _module(spec, dev_name, dtype):
    try:
        return _jit.module(spec, dev_name)
    except _capi.CompileError as e:
        raise TypeError(f"fa: cannot compile a kernel for q.dtype={dtype}, "
                        f"head dim {spec.head_dim} on target {spec.target}: "
                        f"{e}") from None


_workspace_sizes = {}


def _enqueue(m, dev_name, stream, args, like, num_splits, paged=None,
             varlen=None, heads=None):
    # The workspace's size depends on the module and the shape only.
    key = (id(m), args.batch, args.heads_q, args.heads_kv, args.seq_q,
           args.seq_k, num_splits)
    n = _workspace_sizes.get(key)
    if n is None:
        n = m.workspace_size(args, num_splits)
        if len(_workspace_sizes) > 4096:
            _workspace_sizes.clear()
        _workspace_sizes[key] = n
    ws = None
    if n:
        # Stream-ordered by PyTorch's allocator: reused only by work
        # enqueued after this launch on the same stream.
        w = torch.empty(n, dtype=torch.uint8, device=like.device)
        ws = _wrap(dev_name, w)
    m.enqueue(args, stream, ws, num_splits, paged=paged, varlen=varlen,
              heads=heads)


def _decode(seqlen_q):
    """Short query rows take the split-KV + GQA-packing build."""
    return seqlen_q <= 4


# Plans (_plan.Plan) by call signature: flash_attn_func's and the fwd op's
# (_dense_calls), flash_attn_with_kvcache's and the kvcache_fwd op's
# (_kvcache_calls).
_dense_calls = {}


def fwd(q, k, v, softmax_scale=None, causal=False, window_left=-1,
        window_right=-1, softcap=0.0, alibi_slopes=None, sinks=None):
    """(out, softmax_lse) of dense attention over (B, L, H, D) tensors;
    alibi_slopes and sinks (nheads,) tensors or None."""
    return dense(q, k, v, softmax_scale, causal, window_left, window_right,
                 softcap, alibi_slopes, sinks)


def dense(q, k, v, softmax_scale, causal, window_left=-1, window_right=-1,
          softcap=0.0, alibi_slopes=None, sinks=None, want_lse=True,
          key=None):
    """fwd, with the LSE left out of the result (None) unless `want_lse`;
    `key`: flash_attn_func's plan key (_plan.dense_key) of a plain call it
    found no plan for, under which this call keeps its plan."""
    sig = key
    if key is None and isinstance(q, torch.Tensor) and \
            isinstance(k, torch.Tensor) and isinstance(v, torch.Tensor):
        sig = (q.shape, q.stride(), q.dtype, q.device, k.shape, k.stride(),
               k.dtype, k.device, v.shape, v.stride(), v.dtype, v.device,
               softmax_scale, causal, window_left, window_right, softcap,
               threading.get_ident())
        if alibi_slopes is None and sinks is None:
            plan = _dense_calls.get(sig)
            if plan is not None:
                return plan(q, k, v, want_lse=want_lse)
        else:
            heads = _heads_signature(alibi_slopes, sinks)
            sig = None if heads is None else sig + heads
            plan = _dense_calls.get(sig)
            if plan is not None:
                return plan(q, k, v, want_lse=want_lse,
                            alibi_slopes=alibi_slopes, sinks=sinks)
    originals = (q, k, v)
    q, k, v = (_prepare(n, t, 4) for n, t in (("q", q), ("k", k), ("v", v)))
    dtype = _dtype(q, ("k", k), ("v", v))
    b, lq, hq, d = q.shape
    bk, lk, hkv, dk = k.shape
    if tuple(v.shape) != tuple(k.shape):
        raise ValueError(f"fa: v has shape {tuple(v.shape)}, k "
                         f"{tuple(k.shape)}: they must be equal")
    if bk != b or dk != d:
        raise ValueError(f"fa: k has shape {tuple(k.shape)}, q "
                         f"{tuple(q.shape)}: batch and head dim must match")
    if hq % hkv:
        raise ValueError(f"fa: q's {hq} heads are not a multiple of k's {hkv}")
    alibi_slopes = _head_tensor("alibi_slopes", alibi_slopes, hq, b, q.device)
    sinks = _head_tensor("sinks", sinks, hq, b, q.device)
    target, dev_name, stream = _where(q)
    spec = _jit.Spec("dense", dtype, d, bool(causal), _scale(softmax_scale, d),
                     _decode(lq), target,
                     _window((window_left, window_right)), _softcap(softcap),
                     alibi=alibi_slopes is not None, sinks=sinks is not None)
    out = torch.empty_like(q, memory_format=torch.contiguous_format)
    lse = torch.empty(b, hq, lq, dtype=torch.float32, device=q.device)
    if q.numel() == 0 or lk == 0:
        # Rows that see no key: O = 0, LSE = -inf (or the head's sink).
        out.zero_()
        if sinks is None:
            lse.fill_(-math.inf)
        else:
            lse.copy_(sinks.view(1, hq, 1).expand(b, hq, lq))
        return out, lse
    m = _module(spec, dev_name, q.dtype)
    strides = []
    for t in (q, k, v, out):
        sb, sl, sh, _ = t.stride()
        strides += [sb, sh, sl]
    strides += [hq * lq, lq]
    args = _capi.Module.args(_wrap(dev_name, q), _wrap(dev_name, k),
                             _wrap(dev_name, v), _wrap(dev_name, out),
                             _wrap(dev_name, lse), (b, hq, hkv, lq, lk),
                             strides)
    _enqueue(m, dev_name, stream, args, q, 0,
             heads=_heads(dev_name, alibi_slopes, sinks))
    if sig is not None and all(x is y for x, y in zip((q, k, v), originals)) \
            and _plan.cacheable(softmax_scale, causal):
        _remember(_dense_calls, sig, m, dev_name, q, strides, None,
                  (b, hq, lq), (b, hq, hkv, lq, lk), 0,
                  (q, k, v, None, None, out, lse), spec.alibi or spec.sinks)
    return out, (lse if want_lse else None)


def varlen_fwd(q, k, v, cu_seqlens_q, cu_seqlens_k, max_seqlen_q,
               max_seqlen_k, softmax_scale=None, causal=False, window_left=-1,
               window_right=-1, softcap=0.0, alibi_slopes=None, sinks=None):
    """(out, softmax_lse [Hq, total_q]) over packed (total, H, D) tensors;
    alibi_slopes and sinks (nheads,) tensors or None."""
    q, k, v = (_prepare(n, t, 3) for n, t in (("q", q), ("k", k), ("v", v)))
    dtype = _dtype(q, ("k", k), ("v", v))
    for n, c in (("cu_seqlens_q", cu_seqlens_q),
                 ("cu_seqlens_k", cu_seqlens_k)):
        if not isinstance(c, torch.Tensor) or c.dtype != torch.int32 or \
                c.dim() != 1 or c.device != q.device:
            raise TypeError(f"fa: {n} must be a 1-D int32 tensor on "
                            f"{q.device}")
    if cu_seqlens_q.numel() != cu_seqlens_k.numel() or \
            cu_seqlens_q.numel() < 2:
        raise ValueError(f"fa: cu_seqlens_q has {cu_seqlens_q.numel()} "
                         f"entries, cu_seqlens_k {cu_seqlens_k.numel()}: both "
                         f"must have batch + 1 >= 2")
    cu_q, cu_k = cu_seqlens_q.contiguous(), cu_seqlens_k.contiguous()
    total_q, hq, d = q.shape
    total_k, hkv, dk = k.shape
    if tuple(v.shape) != tuple(k.shape) or dk != d or hq % hkv:
        raise ValueError(f"fa: q {tuple(q.shape)}, k {tuple(k.shape)}, v "
                         f"{tuple(v.shape)}: k and v must match, share q's "
                         f"head dim, and divide its heads")
    batch = cu_q.numel() - 1
    alibi_slopes = _head_tensor("alibi_slopes", alibi_slopes, hq, batch,
                                q.device)
    sinks = _head_tensor("sinks", sinks, hq, batch, q.device)
    target, dev_name, stream = _where(q)
    spec = _jit.Spec("varlen", dtype, d, bool(causal),
                     _scale(softmax_scale, d), False, target,
                     _window((window_left, window_right)), _softcap(softcap),
                     alibi=alibi_slopes is not None, sinks=sinks is not None)
    out = torch.empty_like(q, memory_format=torch.contiguous_format)
    lse = torch.empty(hq, total_q, dtype=torch.float32, device=q.device)
    if total_q == 0:
        return out, lse
    m = _module(spec, dev_name, q.dtype)
    strides = []
    for t in (q, k, v, out):
        st, sh, _ = t.stride()
        strides += [0, sh, st]
    strides += [0, total_q]
    args = _capi.Module.args(_wrap(dev_name, q), _wrap(dev_name, k),
                             _wrap(dev_name, v), _wrap(dev_name, out),
                             _wrap(dev_name, lse),
                             (batch, hq, hkv, int(max_seqlen_q),
                              int(max_seqlen_k)), strides)
    varlen = _capi.Module.varlen(_wrap(dev_name, cu_q), _wrap(dev_name, cu_k),
                                 total_q, total_k)
    if q.device.type == "cpu":
        # Host tensors: the runtime checks them before the launch.
        varlen.host_cu_seqlens_q = _capi.int32_pointer(cu_q)
        varlen.host_cu_seqlens_k = _capi.int32_pointer(cu_k)
    _enqueue(m, dev_name, stream, args, q, 0, varlen=varlen,
             heads=_heads(dev_name, alibi_slopes, sinks))
    return out, lse


def _caches(q, k_cache, v_cache):
    """The paged caches (num_pages, page_size, Hkv, D) of query q (its last
    two dimensions Hq, D), prepared, and the element type."""
    k_cache, v_cache = (_prepare(n, t, 4) for n, t in
                        (("k_cache", k_cache), ("v_cache", v_cache)))
    dtype = _dtype(q, ("k_cache", k_cache), ("v_cache", v_cache))
    hq, d = q.shape[-2:]
    hkv, dk = k_cache.shape[2:]
    if tuple(v_cache.shape) != tuple(k_cache.shape) or dk != d or hq % hkv:
        raise ValueError(f"fa: q {tuple(q.shape)}, k_cache "
                         f"{tuple(k_cache.shape)}, v_cache "
                         f"{tuple(v_cache.shape)}: the caches must match, "
                         f"share q's head dim, and divide its heads")
    return k_cache, v_cache, dtype


def mixed_fwd(q, k_cache, v_cache, cu_seqlens_q, seqused_k, block_table,
              max_seqlen_q, softmax_scale=None, causal=False, num_splits=0,
              window_left=-1, window_right=-1, softcap=0.0,
              alibi_slopes=None, sinks=None, decode=None, tiles=()):
    """(out, softmax_lse [Hq, total_q]) of a mixed prefill/decode batch:
    packed queries q (total_q, Hq, D) cut by cu_seqlens_q (B + 1,) over a
    paged cache (num_pages, page_size, Hkv, D) read through block_table (B,
    max_pages), sequence b's keys its seqused_k[b] (int32 tensors on q's
    device); its queries are the last of its keys (causal bottom-right).
    Batches whose every sequence has at most 4 query rows take the
    split-KV + GQA-packing build, others the prefill build (on sm_90:
    split-KV + GQA packing on 64 x 64 tiles, measured) (`decode`:
    True / False forces one, and `tiles` (block_m, block_n, waves) the
    tiles, for benchmarks)."""
    q = _prepare("q", q, 3)
    k_cache, v_cache, dtype = _caches(q, k_cache, v_cache)
    total_q, hq, d = q.shape
    num_pages, page_size, hkv, _ = k_cache.shape
    for n, t, dim in (("cu_seqlens_q", cu_seqlens_q, 1),
                      ("seqused_k", seqused_k, 1),
                      ("block_table", block_table, 2)):
        if not isinstance(t, torch.Tensor) or t.dtype != torch.int32 or \
                t.dim() != dim or t.device != q.device:
            raise TypeError(f"fa: {n} must be a {dim}-D int32 tensor on "
                            f"{q.device}")
    batch = cu_seqlens_q.numel() - 1
    if batch < 1 or seqused_k.numel() != batch or \
            block_table.shape[0] != batch:
        raise ValueError(f"fa: cu_seqlens_q has {cu_seqlens_q.numel()} "
                         f"entries, seqused_k {seqused_k.numel()}, "
                         f"block_table {tuple(block_table.shape)}: expected "
                         f"batch + 1 >= 2, batch and (batch, max_pages)")
    cu_q, lens = cu_seqlens_q.contiguous(), seqused_k.contiguous()
    table = block_table.contiguous()
    max_pages = table.shape[1]
    alibi_slopes = _head_tensor("alibi_slopes", alibi_slopes, hq, batch,
                                q.device)
    sinks = _head_tensor("sinks", sinks, hq, batch, q.device)
    target, dev_name, stream = _where(q)
    if decode is None and _decode(int(max_seqlen_q)):
        decode = True
    elif decode is None:
        # Prompt chunks with decode rows: the target's measured build.
        decode, chunk_tiles = _jit.mixed_chunks_build(target)
        tiles = tiles or chunk_tiles
    spec = _jit.Spec("mixed", dtype, d, bool(causal),
                     _scale(softmax_scale, d), bool(decode),
                     target, _window((window_left, window_right)),
                     _softcap(softcap), alibi=alibi_slopes is not None,
                     sinks=sinks is not None, tiles=tuple(tiles))
    if num_splits not in (0, 1) and not spec.decode:
        raise ValueError(f"fa: num_splits={num_splits}: only a batch of at "
                         f"most 4 query rows per sequence runs split-KV")
    out = torch.empty_like(q, memory_format=torch.contiguous_format)
    lse = torch.empty(hq, total_q, dtype=torch.float32, device=q.device)
    if total_q == 0:
        return out, lse
    m = _module(spec, dev_name, q.dtype)
    st, sh, _ = q.stride()
    strides = [0, sh, st]
    for t in (k_cache, v_cache):
        sp, sr, sh, _ = t.stride()
        strides += [sp, sh, sr]
    st, sh, _ = out.stride()
    strides += [0, sh, st, 0, total_q]
    # seq_k bounds seqused_k (the kernel trusts the device copy, as a paged
    # launch does), so that a captured launch serves later lengths.
    args = _capi.Module.args(_wrap(dev_name, q), _wrap(dev_name, k_cache),
                             _wrap(dev_name, v_cache), _wrap(dev_name, out),
                             _wrap(dev_name, lse),
                             (batch, hq, hkv, int(max_seqlen_q),
                              max_pages * page_size), strides)
    paged_kv = _capi.Module.paged(_wrap(dev_name, table),
                                  _wrap(dev_name, lens), page_size, max_pages,
                                  num_pages)
    varlen = _capi.Module.varlen(_wrap(dev_name, cu_q), None, total_q, 0)
    if q.device.type == "cpu":
        # Host tensors: the runtime checks them before the launch.
        paged_kv.host_block_table = _capi.int32_pointer(table)
        paged_kv.host_cache_seqlens = _capi.int32_pointer(lens)
        varlen.host_cu_seqlens_q = _capi.int32_pointer(cu_q)
    _enqueue(m, dev_name, stream, args, q, int(num_splits), paged=paged_kv,
             varlen=varlen, heads=_heads(dev_name, alibi_slopes, sinks))
    return out, lse


_identity_tables = {}


_kvcache_calls = {}


def clear_launches():
    _dense_calls.clear()
    _kvcache_calls.clear()
    _plan.clear()


def _remember(table, sig, m, dev_name, q, strides, paged, lse_shape, shape,
              num_splits, operands, heads=False, identity=None):
    """Keeps the launch just made as the plan of signature `sig` (`heads`:
    the kernel takes ALiBi slopes and/or sinks; `identity`: the dense
    cache's block table, which the plan passes itself)."""
    if len(table) > 256:
        table.clear()
    ws_bytes = _workspace_sizes.get((id(m), *shape, num_splits))
    table[sig] = _plan.Plan(
        m, dev_name, q.device, _place(q.device)[2], shape, strides, paged,
        q.dtype, tuple(q.shape), lse_shape, ws_bytes, num_splits,
        tuple(None if t is None else _span(t) for t in operands),
        shape[1] if heads else None, identity, q.is_contiguous())


def kvcache_fwd(q, k_cache, v_cache, cache_seqlens, block_table,
                softmax_scale=None, causal=False, num_splits=0, window_left=-1,
                window_right=-1, softcap=0.0, alibi_slopes=None, sinks=None):
    """(out, softmax_lse) of q (B, Lq, Hq, D) over a paged cache (num_pages,
    page_size, Hkv, D) read through block_table (B, max_pages) with the
    sequences' lengths cache_seqlens (B,), int32 tensors on q's device;
    alibi_slopes and sinks (nheads,) tensors or None."""
    return paged(q, k_cache, v_cache, cache_seqlens, block_table,
                 softmax_scale, causal, num_splits, window_left, window_right,
                 softcap, alibi_slopes, sinks)


def paged(q, k_cache, v_cache, cache_seqlens, block_table, softmax_scale,
          causal, num_splits, window_left=-1, window_right=-1, softcap=0.0,
          alibi_slopes=None, sinks=None, want_lse=True, key=None,
          identity=False):
    """kvcache_fwd, with the LSE left out of the result (None) unless
    `want_lse`; `key`: flash_attn_with_kvcache's plan key
    (_plan.kvcache_key) of a plain call it found no plan for, under which
    this call keeps its plan; `identity`: block_table is a dense cache's
    identity table (the plan passes it itself)."""
    sig = key
    if key is None and isinstance(q, torch.Tensor) and \
            isinstance(block_table, torch.Tensor) and \
            isinstance(cache_seqlens, torch.Tensor) and \
            isinstance(k_cache, torch.Tensor) and \
            isinstance(v_cache, torch.Tensor):
        sig = _plan.kvcache_key(q, k_cache, v_cache, cache_seqlens,
                                block_table, softmax_scale, causal,
                                num_splits) + (window_left, window_right,
                                               softcap)
        if alibi_slopes is None and sinks is None:
            plan = _kvcache_calls.get(sig)
            if plan is not None:
                return plan(q, k_cache, v_cache, block_table, cache_seqlens,
                            want_lse)
        else:
            heads = _heads_signature(alibi_slopes, sinks)
            sig = None if heads is None else sig + heads
            plan = _kvcache_calls.get(sig)
            if plan is not None:
                return plan(q, k_cache, v_cache, block_table, cache_seqlens,
                            want_lse, alibi_slopes, sinks)
    originals = (q, k_cache, v_cache)
    q = _prepare("q", q, 4)
    k_cache, v_cache, dtype = _caches(q, k_cache, v_cache)
    b, lq, hq, d = q.shape
    num_pages, page_size, hkv, _ = k_cache.shape
    for n, t, shape in (("cache_seqlens", cache_seqlens, (b,)),
                        ("block_table", block_table, None)):
        if t.dtype != torch.int32 or t.device != q.device or \
                (shape and tuple(t.shape) != shape):
            raise TypeError(f"fa: {n} must be an int32 tensor on {q.device}"
                            + (f" of shape {shape}" if shape else ""))
    if block_table.dim() != 2 or block_table.shape[0] != b:
        raise ValueError(f"fa: block_table has shape "
                         f"{tuple(block_table.shape)}, expected ({b}, "
                         f"max_pages)")
    table, lens = block_table.contiguous(), cache_seqlens.contiguous()
    max_pages = table.shape[1]
    alibi_slopes = _head_tensor("alibi_slopes", alibi_slopes, hq, b, q.device)
    sinks = _head_tensor("sinks", sinks, hq, b, q.device)
    target, dev_name, stream = _where(q)
    spec = _jit.Spec("paged", dtype, d, bool(causal),
                     _scale(softmax_scale, d), _decode(lq), target,
                     _window((window_left, window_right)), _softcap(softcap),
                     alibi=alibi_slopes is not None, sinks=sinks is not None)
    if num_splits not in (0, 1) and not spec.decode:
        raise ValueError(f"fa: num_splits={num_splits}: only a call with at "
                         f"most 4 query rows runs split-KV")
    out = torch.empty_like(q, memory_format=torch.contiguous_format)
    lse = torch.empty(b, hq, lq, dtype=torch.float32, device=q.device)
    m = _module(spec, dev_name, q.dtype)
    strides = []
    sb, sl, sh, _ = q.stride()
    strides += [sb, sh, sl]
    for t in (k_cache, v_cache):
        sp, sr, sh, _ = t.stride()
        strides += [sp, sh, sr]
    sb, sl, sh, _ = out.stride()
    strides += [sb, sh, sl, hq * lq, lq]
    args = _capi.Module.args(_wrap(dev_name, q), _wrap(dev_name, k_cache),
                             _wrap(dev_name, v_cache), _wrap(dev_name, out),
                             _wrap(dev_name, lse),
                             (b, hq, hkv, lq, max_pages * page_size), strides)
    metadata = _capi.Module.paged(_wrap(dev_name, table),
                                  _wrap(dev_name, lens), page_size, max_pages,
                                  num_pages)
    if q.device.type == "cpu":
        metadata.host_block_table = _capi.int32_pointer(table)
        metadata.host_cache_seqlens = _capi.int32_pointer(lens)
    _enqueue(m, dev_name, stream, args, q, int(num_splits), paged=metadata,
             heads=_heads(dev_name, alibi_slopes, sinks))
    # Remembered where nothing was copied: the hot path passes the tensors
    # as they come.
    if sig is not None and all(x is y for x, y in zip(
            (q, k_cache, v_cache), originals)) and \
            table is block_table and lens is cache_seqlens and \
            _plan.cacheable(softmax_scale, causal, num_splits):
        _remember(_kvcache_calls, sig, m, dev_name, q, strides,
                  _capi._Paged(None, None, page_size, max_pages, num_pages,
                               None, None), (b, hq, lq),
                  (b, hq, hkv, lq, max_pages * page_size), int(num_splits),
                  (q, k_cache, v_cache, table, lens, out, lse),
                  spec.alibi or spec.sinks, table if identity else None)
    return out, (lse if want_lse else None)


def identity_table(batch, device):
    """(batch, 1) int32 [[0], [1], ...] on `device`: a dense cache (B,
    seqlen_cache, Hkv, D) read as B pages of seqlen_cache rows."""
    k = (batch, device)
    t = _identity_tables.get(k)
    if t is None:
        t = _identity_tables[k] = torch.arange(
            batch, dtype=torch.int32, device=device).view(batch, 1)
    return t
