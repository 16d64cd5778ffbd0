"""The hot path: a call like an earlier one runs its kept plan.

A plan is what a dense or paged launch of one call signature needs, made by
the first call of that signature (_interface.fwd, kvcache_fwd) and kept
per thread: the module, the argument structs with their sizes and strides
filled in, the outputs' shapes and the bytes each operand spans. The
signature is everything the plan depends on: each tensor's shape, strides,
dtype and device, the options, and the thread (keys below), so a call that
differs in any of them makes a plan of its own. The stream is not part of
it: a plan reads the tensors' current stream at every call.

A hot call then allocates its output, looks its pointers' wrapped-buffer
handles up (a dict per operand, by address), writes them and the stream
into the structs and makes one foreign call. It does not synchronise, copy
to the host or read device memory, so a CUDA graph can capture it.

The LSE a caller did not ask for and the split-KV workspace go to scratch
memory kept per (device, stream, thread), grown when a plan needs more:
launches on one stream run in order, so each may reuse what the one before
used. A call made while its stream is being captured into a CUDA graph (or
whose tensors are not on the current CUDA device, where the capture check
does not look) allocates its own instead, from the graph's memory pool, as
the graph must own what it replays.
"""

import ctypes
import threading

import torch

from . import _capi, _interface

_empty, _empty_like = torch.empty, torch.empty_like
_f32, _u8 = torch.float32, torch.uint8
_tid = threading.get_ident
_capturing = getattr(torch._C, "_cuda_isCurrentStreamCapturing", None)
_current_device = getattr(torch._C, "_cuda_getDevice", None)

# The operands a plan wraps, by their index in Plan.spans.
Q, K, V, TABLE, LENS, OUT, LSE, WS = range(8)


def dense_key(q, k, v, softmax_scale, causal):
    """The key of flash_attn_func's plain calls (no window, softcap, ALiBi
    or sinks), in _interface._dense_calls."""
    return (q.shape, q.stride(), q.dtype, q.device, k.shape, k.stride(),
            k.dtype, k.device, v.shape, v.stride(), v.dtype, v.device,
            softmax_scale, causal, _tid())


def kvcache_key(q, k_cache, v_cache, cache_seqlens, block_table,
                softmax_scale, causal, num_splits):
    """The key of flash_attn_with_kvcache's plain calls (no new keys,
    window, softcap, ALiBi or sinks; block_table None for a dense cache), in
    _interface._kvcache_calls."""
    t = block_table
    return (q.shape, q.stride(), q.dtype, q.device, k_cache.shape,
            k_cache.stride(), k_cache.dtype, k_cache.device, v_cache.shape,
            v_cache.stride(), v_cache.dtype, v_cache.device,
            cache_seqlens.shape, cache_seqlens.stride(), cache_seqlens.dtype,
            cache_seqlens.device,
            None if t is None else (t.shape, t.stride(), t.dtype, t.device),
            softmax_scale, causal, num_splits, _tid())


def cacheable(softmax_scale, causal, num_splits=0):
    """Whether a call's options may key a plan: plain Python values (a
    tensor's hash is its identity, not its value)."""
    return (softmax_scale is None or type(softmax_scale) in (float, int)) \
        and type(causal) in (bool, int) and type(num_splits) is int


class _Scratch:
    """LSE and workspace memory of one (device, stream, thread): a uint8
    tensor, wrapped as two buffers (LSE first)."""

    def __init__(self, dev_name, device, lse_bytes, ws_bytes):
        lse_bytes = max(256, -(-lse_bytes // 256) * 256)
        ws_bytes = max(256, ws_bytes)
        self.tensor = _empty(lse_bytes + ws_bytes, dtype=_u8, device=device)
        base = self.tensor.data_ptr()
        self.lse_bytes, self.ws_bytes = lse_bytes, ws_bytes
        self.buffers = (_capi.Buffer(_interface._jit.device(dev_name), base,
                                     lse_bytes),
                        _capi.Buffer(_interface._jit.device(dev_name),
                                     base + lse_bytes, ws_bytes))
        self.lse, self.ws = (b.value for b in self.buffers)


_scratches = {}


def scratch(dev_name, device, stream, tid, lse_bytes, ws_bytes):
    """The scratch memory of (dev_name, stream, thread tid) with at least
    these bytes. Growing frees the old tensor: PyTorch's allocator reuses it
    only for work enqueued on the same stream after the launches that used
    it."""
    key = (dev_name, stream, tid)
    s = _scratches.get(key)
    if s is None or s.lse_bytes < lse_bytes or s.ws_bytes < ws_bytes:
        if s is not None:
            lse_bytes = max(lse_bytes, s.lse_bytes)
            ws_bytes = max(ws_bytes, s.ws_bytes)
        elif len(_scratches) >= 64:
            # Streams and threads come and go: forget the others (a call
            # still using one holds it until it returns).
            _scratches.clear()
        s = _scratches[key] = _Scratch(dev_name, device, lse_bytes, ws_bytes)
    return s


def _unchecked(function):
    """A function object of its own for C function `function`, without
    argtypes (callers pass ctypes objects: c_void_p, byref, None), returning
    an int status."""
    f = type(function)(ctypes.cast(function, ctypes.c_void_p).value)
    f.restype = ctypes.c_int
    return f


class Plan:
    """A dense or paged launch kept for later calls of one signature on one
    thread (_interface._dense_calls, _kvcache_calls). `table`: the block
    table the plan passes itself (a dense cache's identity table), or None
    (each call passes one). A kernel with ALiBi slopes or sinks (hq set)
    checks those per call (_head_tensor) and calls
    fa_module_enqueue_heads."""

    def __init__(self, m, dev_name, device, index, shape, strides, paged,
                 dtype, out_shape, lse_shape, ws_bytes, num_splits, spans,
                 hq=None, table=None, q_contiguous=False):
        lib = _capi.lib()
        self.m, self.module = m, m.handle.value
        self.dev_name, self.device, self.index = dev_name, device, index
        self.tid = _tid()
        self.strides = (ctypes.c_int64 * 14)(*strides)
        self.args = _capi._Args(None, None, None, None, None, *shape,
                                self.strides, 0)
        self.paged = paged
        self.opts = _capi._EnqueueOptions(None, None, num_splits, 0)
        self.refs = (ctypes.byref(self.args),
                     ctypes.byref(paged) if paged is not None else None,
                     ctypes.byref(self.opts))
        self.dtype, self.out_shape, self.lse_shape = dtype, out_shape, \
            lse_shape
        # The output has q's shape, dtype and device, contiguous: where q
        # is contiguous (its strides are part of the signature), the
        # cheapest allocation is empty_like(q).
        self.like_q = q_contiguous
        self.lse_bytes = 4 * shape[0] * shape[1] * shape[3]
        self.ws_bytes = ws_bytes
        # Bytes each operand spans (Q .. WS; None: not an operand).
        self.spans = tuple(spans) + (ws_bytes,)
        # Per operand: address -> handle, and address -> the Buffer that
        # owns it (kept while the handle may be in a struct).
        self.handles = tuple({} for _ in self.spans)
        self.owners = tuple({} for _ in self.spans)
        self.table = table
        if table is not None:
            self.table_buffer = _interface._wrap(dev_name, table)
            paged.block_table = self.table_buffer.value
            if index is None:
                paged.host_block_table = table.data_ptr()
        self.hq, self.batch = hq, shape[0]
        # The C function without argtypes, called with its arguments
        # converted once (ctypes' per-call conversion costs more than the
        # rest of the call's foreign-function work).
        module, (args, paged_ref, opts) = ctypes.c_void_p(self.module), \
            self.refs
        if hq is None:
            self.enqueue = _unchecked(lib.fa_module_enqueue)
            self.call = (module, None, args, paged_ref, None, opts)
        else:
            self.enqueue = _unchecked(lib.fa_module_enqueue_heads)
            self.heads = _capi._HeadParams(None, None)
            self.call = (module, None, args, paged_ref, None,
                         ctypes.byref(self.heads), opts)

    def _miss(self, operand, ptr):
        """The handle of operand `operand` at `ptr`, wrapped now (only this
        operand's table is cleared when it grows large: the handles this
        call already wrote stay owned)."""
        handles, owners = self.handles[operand], self.owners[operand]
        if len(handles) >= 64:
            handles.clear()
            owners.clear()
        b = _interface._buffer(self.dev_name, ptr, self.spans[operand])
        owners[ptr] = b
        handles[ptr] = b.value
        return b.value

    def __call__(self, q, k, v, block_table=None, cache_seqlens=None,
                 want_lse=True, alibi_slopes=None, sinks=None):
        device = self.device
        out = _empty_like(q) if self.like_q else q.new_empty(self.out_shape)
        a, p, o, h = self.args, self.paged, self.opts, self.handles
        ptr = q.data_ptr()
        a.q = h[Q].get(ptr) or self._miss(Q, ptr)
        ptr = k.data_ptr()
        a.k = h[K].get(ptr) or self._miss(K, ptr)
        ptr = v.data_ptr()
        a.v = h[V].get(ptr) or self._miss(V, ptr)
        ptr = out.data_ptr()
        a.o = h[OUT].get(ptr) or self._miss(OUT, ptr)
        if p is not None:
            lens = cache_seqlens.data_ptr()
            p.cache_seqlens = h[LENS].get(lens) or self._miss(LENS, lens)
            if self.table is None:
                table = block_table.data_ptr()
                p.block_table = h[TABLE].get(table) or \
                    self._miss(TABLE, table)
        index = self.index
        lse = ws = None
        if index is None:  # the CPU: runs within the call
            stream, fresh = None, False
            if p is not None:  # host copies, checked
                p.host_cache_seqlens = lens
                if self.table is None:
                    p.host_block_table = table
        else:
            stream = _interface._raw_stream(index) \
                if _interface._raw_stream is not None else \
                torch.cuda.current_stream(index).cuda_stream
            fresh = _capturing is not None and (
                _current_device() != index or _capturing())
        o.stream = stream
        if want_lse or fresh:
            lse = q.new_empty(self.lse_shape, dtype=_f32)
            ptr = lse.data_ptr()
            a.lse = h[LSE].get(ptr) or self._miss(LSE, ptr)
        # (o.workspace stays None for a plan without a workspace.)
        if fresh:
            if self.ws_bytes:
                # Alive until the call returns; stream-ordered after.
                ws = _empty(self.ws_bytes, dtype=_u8, device=device)
                ptr = ws.data_ptr()
                o.workspace = h[WS].get(ptr) or self._miss(WS, ptr)
        elif self.ws_bytes or not want_lse:
            s = _scratches.get((self.dev_name, stream, self.tid))
            if s is None or s.lse_bytes < self.lse_bytes or \
                    s.ws_bytes < self.ws_bytes:
                s = scratch(self.dev_name, device, stream, self.tid,
                            self.lse_bytes, self.ws_bytes)
            if not want_lse:
                a.lse = s.lse
            if self.ws_bytes:
                o.workspace = s.ws
        if self.hq is None:
            status = self.enqueue(*self.call)
        else:
            # Checked (and converted) as the first call's were; alive until
            # the call returns, in locals of their own.
            alibi_slopes = _interface._head_tensor(
                "alibi_slopes", alibi_slopes, self.hq, self.batch, device)
            sinks = _interface._head_tensor("sinks", sinks, self.hq,
                                            self.batch, device)
            b_slopes = None if alibi_slopes is None else \
                _interface._wrap(self.dev_name, alibi_slopes)
            b_sinks = None if sinks is None else \
                _interface._wrap(self.dev_name, sinks)
            hp = self.heads
            hp.alibi_slopes = None if b_slopes is None else b_slopes.value
            hp.sinks = None if b_sinks is None else b_sinks.value
            status = self.enqueue(*self.call)
        if status:
            _capi.check(status)
        return out, (lse if want_lse else None)


def clear():
    _scratches.clear()
