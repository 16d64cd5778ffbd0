"""ctypes bindings of fa's runtime C API (runtime/include/fa/fa_runtime.h).

The one place Python reaches libfa_runtime.so: the structs and functions of
fa_runtime.h, declared once, and the Device / Module / Buffer handles over
them. It needs no compiler and no Python headers, so the same file runs on
Debian's python3 here and on a GPU machine's own Python and PyTorch.

The library is found in this order: $FA_RUNTIME_LIBRARY, the build tree this
source tree was built into (build/lib), then the system's loader path.
"""

import ctypes
import os

FA_OK = 0
ERROR_NAMES = [
    "ok", "invalid argument", "not found", "unavailable", "unsupported",
    "corrupt code object", "manifest", "load failed", "out of memory", "io",
    "launch failed", "race detected", "barrier divergence", "internal",
]


class FaError(RuntimeError):
    """A failed fa runtime call: `code` is the fa_status, the message is
    fa_last_error()'s."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


class _Args(ctypes.Structure):
    _fields_ = [("q", ctypes.c_void_p), ("k", ctypes.c_void_p),
                ("v", ctypes.c_void_p), ("o", ctypes.c_void_p),
                ("lse", ctypes.c_void_p),
                ("batch", ctypes.c_int64), ("heads_q", ctypes.c_int64),
                ("heads_kv", ctypes.c_int64), ("seq_q", ctypes.c_int64),
                ("seq_k", ctypes.c_int64),
                ("strides", ctypes.POINTER(ctypes.c_int64)),
                ("check_races", ctypes.c_int)]


class _Paged(ctypes.Structure):
    _fields_ = [("block_table", ctypes.c_void_p),
                ("cache_seqlens", ctypes.c_void_p),
                ("page_size", ctypes.c_int64), ("max_pages", ctypes.c_int64),
                ("num_pages", ctypes.c_int64),
                # const int32_t *, set from data_ptr() (int32_pointer)
                ("host_block_table", ctypes.c_void_p),
                ("host_cache_seqlens", ctypes.c_void_p)]


class _Varlen(ctypes.Structure):
    _fields_ = [("cu_seqlens_q", ctypes.c_void_p),
                ("cu_seqlens_k", ctypes.c_void_p),
                ("total_q", ctypes.c_int64), ("total_k", ctypes.c_int64),
                # const int32_t *, set from data_ptr() (int32_pointer)
                ("host_cu_seqlens_q", ctypes.c_void_p),
                ("host_cu_seqlens_k", ctypes.c_void_p)]


class _HeadParams(ctypes.Structure):
    """fa_head_params: the f32 [heads_q] ALiBi slopes and sinks buffers of a
    kernel whose manifest says alibi / sinks (NULL: the one it lacks)."""
    _fields_ = [("alibi_slopes", ctypes.c_void_p), ("sinks", ctypes.c_void_p)]


class _EnqueueOptions(ctypes.Structure):
    _fields_ = [("stream", ctypes.c_void_p), ("workspace", ctypes.c_void_p),
                ("kv_splits", ctypes.c_int64),
                ("kv_splits_used", ctypes.c_int64)]


def _library_candidates(name, variable):
    """Where `name` (libfa_runtime.so, libfa_compile.so) may be: the path in
    $`variable`; next to the installed package (_config.LIBDIR, written by
    `cmake --install`); the build trees of this source tree; the loader's
    path."""
    env = os.environ.get(variable)
    if env:
        return [env]
    here = os.path.dirname(os.path.abspath(__file__))
    out = []
    try:
        from . import _config
        out.append(os.path.join(os.path.normpath(os.path.join(
            here, _config.LIBDIR)), name))
    except ImportError:
        pass
    tree = os.path.dirname(os.path.dirname(here))
    for build in ("build", "build-gpu"):
        out.append(os.path.join(tree, build, "lib", name))
    out.append(name)
    return out


def _open(name, variable, declare):
    errors = []
    for path in _library_candidates(name, variable):
        if os.sep in path and not os.path.exists(path):
            errors.append(f"{path}: no such file")
            continue
        try:
            lib = ctypes.CDLL(path)
        except OSError as e:
            errors.append(f"{path}: {e}")
            continue
        declare(lib)
        return lib
    raise FaError(3, f"cannot load {name} (set {variable}): "
                  + "; ".join(errors))


def _load():
    return _open("libfa_runtime.so", "FA_RUNTIME_LIBRARY", _declare)


def _declare(lib):
    p, st, i64 = ctypes.c_void_p, ctypes.c_int, ctypes.c_int64
    pp = ctypes.POINTER(ctypes.c_void_p)
    sigs = {
        "fa_last_error": (ctypes.c_char_p, []),
        "fa_device_open": (st, [ctypes.c_char_p, pp]),
        "fa_device_close": (None, [p]),
        "fa_device_name": (ctypes.c_char_p, [p]),
        "fa_buffer_alloc": (st, [p, ctypes.c_size_t, pp]),
        "fa_buffer_wrap": (st, [p, p, ctypes.c_size_t, pp]),
        "fa_buffer_free": (None, [p]),
        "fa_buffer_write": (st, [p, ctypes.c_size_t, p, ctypes.c_size_t]),
        "fa_buffer_read": (st, [p, ctypes.c_size_t, p, ctypes.c_size_t]),
        "fa_module_load": (st, [p, ctypes.c_char_p, pp]),
        "fa_module_unload": (None, [p]),
        "fa_module_enqueue": (st, [p, ctypes.c_char_p, ctypes.POINTER(_Args),
                                   ctypes.POINTER(_Paged),
                                   ctypes.POINTER(_Varlen),
                                   ctypes.POINTER(_EnqueueOptions)]),
        "fa_module_enqueue_heads": (st, [p, ctypes.c_char_p,
                                         ctypes.POINTER(_Args),
                                         ctypes.POINTER(_Paged),
                                         ctypes.POINTER(_Varlen),
                                         ctypes.POINTER(_HeadParams),
                                         ctypes.POINTER(_EnqueueOptions)]),
        "fa_module_workspace_size": (st, [p, ctypes.c_char_p,
                                          ctypes.POINTER(_Args), i64,
                                          ctypes.POINTER(ctypes.c_size_t)]),
        "fa_module_check_metadata": (st, [p, ctypes.c_char_p,
                                          ctypes.POINTER(_Args),
                                          ctypes.POINTER(_Paged),
                                          ctypes.POINTER(_Varlen)]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args


_lib = None


def lib():
    """libfa_runtime.so, loaded and declared on first use."""
    global _lib
    if _lib is None:
        _lib = _load()
    return _lib


def check(status):
    if status != FA_OK:
        raise FaError(status, lib().fa_last_error().decode())


class Device:
    """fa_device_open(spec): "host", "gfx906-sim", "cuda[:N]", "hip[:N]"."""

    def __init__(self, spec):
        h = ctypes.c_void_p()
        check(lib().fa_device_open(spec.encode(), ctypes.byref(h)))
        self.handle = h
        self.name = lib().fa_device_name(h).decode()

    def __del__(self):
        if getattr(self, "handle", None) and _lib is not None:
            _lib.fa_device_close(self.handle)
            self.handle = None


class Buffer:
    """A wrapped buffer (fa_buffer_wrap) over `nbytes` at device address
    `pointer` (a tensor's data_ptr()); fa never frees the memory. Keep the
    owner alive as long as the buffer (`owner` holds it)."""

    def __init__(self, device, pointer, nbytes, owner=None):
        h = ctypes.c_void_p()
        check(lib().fa_buffer_wrap(device.handle, ctypes.c_void_p(pointer),
                                   nbytes, ctypes.byref(h)))
        self.handle, self.owner, self.device = h, owner, device
        self.value = h.value  # the handle as an int (fields take it)

    def __del__(self):
        if getattr(self, "handle", None) and _lib is not None:
            _lib.fa_buffer_free(self.handle)
            self.handle = None


def int32_pointer(tensor):
    """A host int32 tensor's data as the const int32_t * fields of the host
    copies of paged and varlen metadata take it (an address)."""
    return tensor.data_ptr()


def _handle(buffer):
    return buffer.handle if buffer is not None else None


class Module:
    """A loaded code object (fa_module_load: `path` and `path`.json)."""

    def __init__(self, device, path):
        h = ctypes.c_void_p()
        check(lib().fa_module_load(device.handle, path.encode(),
                                   ctypes.byref(h)))
        self.handle, self.device = h, device

    def __del__(self):
        if getattr(self, "handle", None) and _lib is not None:
            _lib.fa_module_unload(self.handle)
            self.handle = None

    @staticmethod
    def args(q, k, v, o, lse, shape, strides=None):
        """fa_attention_args over Buffers; shape (B, Hq, Hkv, Lq, Lk);
        strides the 14 ABI strides or None (contiguous)."""
        a = _Args(_handle(q), _handle(k), _handle(v), _handle(o),
                  _handle(lse), *shape)
        a._refs = (q, k, v, o, lse)  # the handles live as long as the args
        if strides is not None:
            arr = (ctypes.c_int64 * 14)(*strides)
            a.strides = arr
            a._keep = arr
        return a

    @staticmethod
    def paged(block_table, cache_seqlens, page_size, max_pages, num_pages):
        """fa_paged_kv over device Buffers, without host copies (trusted)."""
        p = _Paged(_handle(block_table), _handle(cache_seqlens), page_size,
                   max_pages, num_pages, None, None)
        p._refs = (block_table, cache_seqlens)
        return p

    @staticmethod
    def varlen(cu_seqlens_q, cu_seqlens_k, total_q, total_k):
        """fa_varlen over device Buffers, without host copies (trusted)."""
        v = _Varlen(_handle(cu_seqlens_q), _handle(cu_seqlens_k), total_q,
                    total_k, None, None)
        v._refs = (cu_seqlens_q, cu_seqlens_k)
        return v

    @staticmethod
    def heads(alibi_slopes=None, sinks=None):
        """fa_head_params over Buffers (None: the kernel lacks that one)."""
        h = _HeadParams(_handle(alibi_slopes), _handle(sinks))
        h._refs = (alibi_slopes, sinks)
        return h

    def workspace_size(self, args, kv_splits=0, kernel=None):
        n = ctypes.c_size_t()
        check(lib().fa_module_workspace_size(
            self.handle, kernel.encode() if kernel else None,
            ctypes.byref(args), kv_splits, ctypes.byref(n)))
        return n.value

    def enqueue(self, args, stream=0, workspace=None, kv_splits=0,
                paged=None, varlen=None, kernel=None, heads=None):
        """fa_module_enqueue on `stream` (a CUstream / hipStream_t as an int;
        0: the legacy default stream), fa_module_enqueue_heads with `heads`
        (Module.heads: a kernel with ALiBi slopes or sinks); returns the K/V
        splits used."""
        o = _EnqueueOptions(stream or None, _handle(workspace), kv_splits, 0)
        name = kernel.encode() if kernel else None
        p = ctypes.byref(paged) if paged else None
        v = ctypes.byref(varlen) if varlen else None
        if heads is None:
            check(lib().fa_module_enqueue(self.handle, name,
                                          ctypes.byref(args), p, v,
                                          ctypes.byref(o)))
        else:
            check(lib().fa_module_enqueue_heads(self.handle, name,
                                                ctypes.byref(args), p, v,
                                                ctypes.byref(heads),
                                                ctypes.byref(o)))
        return o.kv_splits_used

    def check_metadata(self, args, paged=None, varlen=None, kernel=None):
        check(lib().fa_module_check_metadata(
            self.handle, kernel.encode() if kernel else None,
            ctypes.byref(args), ctypes.byref(paged) if paged else None,
            ctypes.byref(varlen) if varlen else None))


#===----------------------------------------------------------------------===#
# The compiler's C API (compiler/Driver/include/fa/fa_compile.h)
#===----------------------------------------------------------------------===#

def _declare_compile(lib):
    p, st, sz = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
    sigs = {
        "fa_compile_version": (ctypes.c_char_p, []),
        "fa_compile_options_create": (p, []),
        "fa_compile_options_destroy": (None, [p]),
        "fa_compile_options_set": (st, [p, ctypes.c_char_p,
                                        ctypes.c_char_p]),
        "fa_compile_options_error": (ctypes.c_char_p, [p]),
        "fa_compile": (p, [ctypes.c_char_p, sz, ctypes.c_char_p, p]),
        "fa_compile_result_destroy": (None, [p]),
        "fa_compile_result_ok": (st, [p]),
        "fa_compile_result_error": (ctypes.c_char_p, [p]),
        "fa_compile_result_output": (p, [p, ctypes.POINTER(sz)]),
        "fa_compile_result_format": (ctypes.c_char_p, [p]),
        "fa_compile_result_manifest": (ctypes.c_char_p, [p]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args


_compile_lib = None


def compile_lib():
    """libfa_compile.so (it links LLVM and MLIR: absent where only the
    runtime was built, e.g. on a GPU machine without LLVM)."""
    global _compile_lib
    if _compile_lib is None:
        _compile_lib = _open("libfa_compile.so", "FA_COMPILE_LIBRARY",
                             _declare_compile)
    return _compile_lib


class CompileError(RuntimeError):
    """fac refused the source or the options: the compiler's message."""


def compile_source(source, options, name="attention.mlir"):
    """Compiles MLIR text with fac's options {name: value}; returns (code
    object bytes, format, manifest JSON text)."""
    lib = compile_lib()
    o = lib.fa_compile_options_create()
    if not o:
        raise MemoryError("fa_compile_options_create")
    try:
        for key, value in options.items():
            if lib.fa_compile_options_set(o, key.encode(),
                                          str(value).encode()) != 0:
                raise CompileError(
                    lib.fa_compile_options_error(o).decode())
        text = source.encode()
        r = lib.fa_compile(text, len(text), name.encode(), o)
        if not r:
            raise MemoryError("fa_compile")
        try:
            if not lib.fa_compile_result_ok(r):
                raise CompileError(lib.fa_compile_result_error(r).decode())
            n = ctypes.c_size_t()
            ptr = lib.fa_compile_result_output(r, ctypes.byref(n))
            code = ctypes.string_at(ptr, n.value)
            return (code, lib.fa_compile_result_format(r).decode(),
                    lib.fa_compile_result_manifest(r).decode())
        finally:
            lib.fa_compile_result_destroy(r)
    finally:
        lib.fa_compile_options_destroy(o)
