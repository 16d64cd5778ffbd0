"""The three functions as torch.library custom ops (torch.ops.fa.fwd,
varlen_fwd, kvcache_fwd, and mixed_fwd: flash_attn_varlen_func over a
paged cache) where the installed PyTorch has
torch.library.Library (1.13 and later): CPU and CUDA kernels (ROCm's
PyTorch dispatches its GPU tensors as CUDA too) and Meta kernels that give
the outputs' shapes, which is what torch.compile's fake tensors run. Where
the API is missing, the plain functions of _interface.py are used.

A call on plain tensors outside torch.compile's tracing skips the
dispatcher (eager()): the op's Python kernel is the same function, and the
dispatcher's boxing would cost more than the launch (bench/python_api.py).
Tensor subclasses (FakeTensor, functional tensors) and traced calls go
through the op."""

import torch

from . import _interface

_SCHEMAS = {
    "fwd": "fwd(Tensor q, Tensor k, Tensor v, float? softmax_scale, "
           "bool causal, int window_left=-1, int window_right=-1, "
           "float softcap=0.0, Tensor? alibi_slopes=None, "
           "Tensor? sinks=None) -> (Tensor, Tensor)",
    "varlen_fwd": "varlen_fwd(Tensor q, Tensor k, Tensor v, "
                  "Tensor cu_seqlens_q, Tensor cu_seqlens_k, "
                  "int max_seqlen_q, int max_seqlen_k, float? softmax_scale, "
                  "bool causal, int window_left=-1, int window_right=-1, "
                  "float softcap=0.0, Tensor? alibi_slopes=None, "
                  "Tensor? sinks=None) -> (Tensor, Tensor)",
    "mixed_fwd": "mixed_fwd(Tensor q, Tensor k_cache, Tensor v_cache, "
                 "Tensor cu_seqlens_q, Tensor seqused_k, Tensor block_table, "
                 "int max_seqlen_q, float? softmax_scale, bool causal, "
                 "int num_splits=0, int window_left=-1, int window_right=-1, "
                 "float softcap=0.0, Tensor? alibi_slopes=None, "
                 "Tensor? sinks=None) -> (Tensor, Tensor)",
    "kvcache_fwd": "kvcache_fwd(Tensor q, Tensor k_cache, Tensor v_cache, "
                   "Tensor cache_seqlens, Tensor block_table, "
                   "float? softmax_scale, bool causal, int num_splits, "
                   "int window_left=-1, int window_right=-1, "
                   "float softcap=0.0, Tensor? alibi_slopes=None, "
                   "Tensor? sinks=None) -> (Tensor, Tensor)",
}


def _meta_heads(q, batch, hq, alibi_slopes, sinks):
    """The head parameters' checks (shape, dtype, device), which need no
    data: a traced call fails where the eager one would."""
    _interface._head_tensor("alibi_slopes", alibi_slopes, hq, batch,
                            q.device)
    _interface._head_tensor("sinks", sinks, hq, batch, q.device)


def _meta_fwd(q, k, v, softmax_scale, causal, window_left=-1,
              window_right=-1, softcap=0.0, alibi_slopes=None, sinks=None):
    b, lq, hq, _ = q.shape
    _meta_heads(q, b, hq, alibi_slopes, sinks)
    return (torch.empty_like(q, memory_format=torch.contiguous_format),
            q.new_empty((b, hq, lq), dtype=torch.float32))


def _meta_varlen(q, k, v, cu_q, cu_k, max_q, max_k, softmax_scale, causal,
                 window_left=-1, window_right=-1, softcap=0.0,
                 alibi_slopes=None, sinks=None):
    total_q, hq, _ = q.shape
    _meta_heads(q, cu_q.shape[0] - 1, hq, alibi_slopes, sinks)
    return (torch.empty_like(q, memory_format=torch.contiguous_format),
            q.new_empty((hq, total_q), dtype=torch.float32))


def _meta_mixed(q, k_cache, v_cache, cu_q, lens, table, max_q,
                softmax_scale, causal, num_splits=0, window_left=-1,
                window_right=-1, softcap=0.0, alibi_slopes=None, sinks=None):
    total_q, hq, _ = q.shape
    _meta_heads(q, cu_q.shape[0] - 1, hq, alibi_slopes, sinks)
    return (torch.empty_like(q, memory_format=torch.contiguous_format),
            q.new_empty((hq, total_q), dtype=torch.float32))


def _meta_kvcache(q, k_cache, v_cache, lens, table, softmax_scale, causal,
                  num_splits, window_left=-1, window_right=-1, softcap=0.0,
                  alibi_slopes=None, sinks=None):
    b, lq, hq, _ = q.shape
    _meta_heads(q, b, hq, alibi_slopes, sinks)
    return (torch.empty_like(q, memory_format=torch.contiguous_format),
            q.new_empty((b, hq, lq), dtype=torch.float32))


_IMPLS = {
    "fwd": (_interface.fwd, _meta_fwd),
    "varlen_fwd": (_interface.varlen_fwd, _meta_varlen),
    "mixed_fwd": (_interface.mixed_fwd, _meta_mixed),
    "kvcache_fwd": (_interface.kvcache_fwd, _meta_kvcache),
}

_library = None


def _register():
    global _library
    if not hasattr(torch, "library") or \
            not hasattr(torch.library, "Library"):
        return False
    if hasattr(torch.ops, "fa") and hasattr(torch.ops.fa, "fwd"):
        return True  # registered by an earlier import in this process
    lib = torch.library.Library("fa", "DEF")
    for name, schema in _SCHEMAS.items():
        lib.define(schema)
        impl, meta = _IMPLS[name]
        lib.impl(name, impl, "CPU")
        lib.impl(name, impl, "CUDA")
        lib.impl(name, meta, "Meta")
        # PyTorch 1.13 has no autograd fallthrough for Meta tensors; the
        # ops are forward-only (no backward), so the Meta kernel serves it.
        try:
            lib.impl(name, meta, "AutogradMeta")
        except RuntimeError:
            pass
    _library = lib
    return True


try:
    ops_registered = _register()
except (RuntimeError, AttributeError):
    ops_registered = False

if ops_registered:
    fwd_op = torch.ops.fa.fwd
    varlen_fwd_op = torch.ops.fa.varlen_fwd
    kvcache_fwd_op = torch.ops.fa.kvcache_fwd
    mixed_fwd_op = torch.ops.fa.mixed_fwd
else:
    fwd_op = _interface.fwd
    varlen_fwd_op = _interface.varlen_fwd
    kvcache_fwd_op = _interface.kvcache_fwd
    mixed_fwd_op = _interface.mixed_fwd


_compiler = getattr(torch, "compiler", None)
_is_compiling = getattr(_compiler, "is_compiling", None)


def _compiling():
    """Whether torch.compile is tracing (False where torch has no
    torch.compiler)."""
    return _is_compiling is not None and _is_compiling()


def eager(t):
    """Whether a call on tensor `t` may call the implementation directly: a
    plain torch.Tensor, not under torch.compile (where is_compiling() is
    True while it traces)."""
    if not isinstance(t, torch.Tensor):
        return True  # the implementation raises, naming the argument
    return type(t) is torch.Tensor and not (_is_compiling is not None and
                                            _is_compiling())
