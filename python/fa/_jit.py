"""Kernels compiled on first use: the fa.attention source of a call's
features, compiled through the compile C API, cached on disk and in process.

A kernel is named by its Spec (layout, element type, head dimension,
causal, scale, decode build, target, window, softcap, ALiBi, sinks). The
disk cache (FA_CACHE_DIR, by default $XDG_CACHE_HOME/fa or ~/.cache/fa)
holds one folder per key, the SHA-256 of fa's version, the source, the
target and the options; a folder holds the code object and its manifest,
written into a temporary folder and renamed into place, so processes that
compile the same kernel at once each end with a whole entry (the first
rename wins, the others use it). An entry
the runtime refuses to load (its code object does not match the hash its
manifest records, a truncated file) is removed and compiled again. The
in-process table maps a Spec to its loaded module, so a hot call does no
file or compile work.
"""

import hashlib
import struct
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass

from . import _capi

VERSION = "0.1.0"

_EXTENSIONS = {"host": "so", "sm_90": "cubin", "gfx906": "hsaco"}
_DTYPES = {"float16": "f16", "bfloat16": "bf16", "float32": "f32"}


@dataclass(frozen=True)
class Spec:
    """What a kernel is compiled for. layout: "dense", "paged", "varlen" or
    "mixed" (varlen queries over a paged cache);
    dtype: "f16", "bf16" or "f32"; decode: the split-KV + GQA packing build
    with the target's decode tiles (short query rows)."""
    layout: str
    dtype: str
    head_dim: int
    causal: bool
    scale: float
    decode: bool
    target: str
    # FlashAttention 2's window_size (-1: that side unbounded) and softcap
    # (0: none).
    window: tuple = (-1, -1)
    softcap: float = 0.0
    # ALiBi slopes and attention sinks (issue 32): the kernel takes an f32
    # [Hq] argument for each (after the others, slopes first).
    alibi: bool = False
    sinks: bool = False
    # Explicit tiles (block_m, block_n, waves) instead of the target's
    # (benchmarks: bench/mixed.py); () the default.
    tiles: tuple = ()


def mixed_chunks_build(target):
    """(decode, tiles) of the mixed kernel for batches with prompt chunks
    on `target`. sm_90: split-KV + GQA packing on 64 x 64 tiles (4 warps):
    on the H200 a vLLM-like batch (4 chunks of 512 rows, 60 decode rows,
    4k-32k keys) takes 27.4 ms so, 37.7 on the prefill tiles with the same
    splitting and packing, 53.8 on the decode tiles and 90.7 on the plain
    prefill build (bench/results/2026-12-03-h200-mixed). Other targets are
    not measured yet and keep the prefill build."""
    return (True, (64, 64, 4)) if target == "sm_90" else (False, ())


def canonical_scale(scale):
    """`scale` rounded to f32, the precision the kernels use it in: 1 /
    sqrt(128) and 128 ** -0.5 differ in the last bit of a double and must
    name the same kernel."""
    return struct.unpack("f", struct.pack("f", scale))[0]


def source(spec):
    """The fa.attention function of `spec` (always with LSE)."""
    d, ty = spec.head_dim, spec.dtype
    attrs = (" causal" if spec.causal else "") + f" scale({spec.scale!r})"
    if tuple(spec.window) != (-1, -1):
        attrs += " window({}, {})".format(*spec.window)
    if spec.softcap:
        attrs += f" softcap({float(spec.softcap)!r})"
    h = "tensor<?xf32>"
    heads = ""
    if spec.alibi:
        attrs += f" alibi(%slopes : {h})"
        heads += f", %slopes: {h}"
    if spec.sinks:
        attrs += f" sinks(%sinks : {h})"
        heads += f", %sinks: {h}"
    if spec.layout == "mixed":
        t, l, c = f"tensor<?x?x{d}x{ty}>", "tensor<?x?xf32>", "tensor<?xi32>"
        kv, m = f"tensor<?x?x?x{d}x{ty}>", "tensor<?x?xi32>"
        return (f"func.func @attention(%q: {t}, %k: {kv}, %v: {kv}, "
                f"%table: {m}, %lens: {c}, %cu_q: {c}{heads}) -> "
                f"({t}, {l}) {{\n"
                f"  %o, %lse = fa.attention %q, %k, %v paged(%table, %lens) "
                f"varlen(%cu_q : {c}){attrs} : {t}, {kv}, {kv}, {m}, {c} -> "
                f"{t}, {l}\n"
                f"  return %o, %lse : {t}, {l}\n}}\n")
    if spec.layout == "varlen":
        t, l, c = f"tensor<?x?x{d}x{ty}>", "tensor<?x?xf32>", "tensor<?xi32>"
        return (f"func.func @attention(%q: {t}, %k: {t}, %v: {t}, "
                f"%cu_q: {c}, %cu_k: {c}{heads}) -> ({t}, {l}) {{\n"
                f"  %o, %lse = fa.attention %q, %k, %v varlen(%cu_q, %cu_k : "
                f"{c}, {c}){attrs} : {t}, {t}, {t} -> {t}, {l}\n"
                f"  return %o, %lse : {t}, {l}\n}}\n")
    t, l = f"tensor<?x?x?x{d}x{ty}>", "tensor<?x?x?xf32>"
    if spec.layout == "paged":
        m, n = "tensor<?x?xi32>", "tensor<?xi32>"
        return (f"func.func @attention(%q: {t}, %k: {t}, %v: {t}, "
                f"%table: {m}, %lens: {n}{heads}) -> ({t}, {l}) {{\n"
                f"  %o, %lse = fa.attention %q, %k, %v paged(%table, %lens)"
                f"{attrs} : {t}, {t}, {t}, {m}, {n} -> {t}, {l}\n"
                f"  return %o, %lse : {t}, {l}\n}}\n")
    return (f"func.func @attention(%q: {t}, %k: {t}, %v: {t}{heads}) -> "
            f"({t}, {l}) {{\n"
            f"  %o, %lse = fa.attention %q, %k, %v{attrs} : {t}, {t}, {t} -> "
            f"{t}, {l}\n  return %o, %lse : {t}, {l}\n}}\n")


def options(spec):
    """fac's options for `spec`."""
    o = {"target": spec.target}
    if spec.decode:
        o["kv-splits"] = "runtime"
        o["gqa-pack"] = "on"
    if spec.dtype == "bf16":
        o["allow-bf16"] = "true"
    if spec.tiles:
        o["block-m"], o["block-n"], o["waves"] = (str(x) for x in
                                                  spec.tiles)
    return o


def cache_dir():
    env = os.environ.get("FA_CACHE_DIR")
    if env:
        return env
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(
        os.path.expanduser("~"), ".cache")
    return os.path.join(base, "fa")


def key(spec):
    h = hashlib.sha256()
    for part in (VERSION, spec.target, repr(sorted(options(spec).items())),
                 source(spec)):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:32]


def entry_path(spec):
    """The code object's path in the disk cache (it may not exist)."""
    ext = _EXTENSIONS.get(spec.target, "bin")
    return os.path.join(cache_dir(), key(spec), f"attention.{ext}")


def compile_to_cache(spec):
    """Compiles `spec` into the disk cache unless a whole entry is there;
    returns the code object's path."""
    path = entry_path(spec)
    if os.path.exists(path + ".json"):
        return path
    folder = os.path.dirname(path)
    os.makedirs(os.path.dirname(folder), exist_ok=True)
    try:
        code, _, manifest = _capi.compile_source(
            source(spec), dict(options(spec), name=os.path.basename(path)))
    except _capi.FaError as e:
        raise RuntimeError(
            f"fa: no kernel for {spec} in the cache ({folder}) and no "
            f"compiler here ({e}); compile it ahead with fa.compile(...) on "
            f"a machine with fa's compiler and copy the cache "
            f"(FA_CACHE_DIR)") from None
    tmp = tempfile.mkdtemp(prefix=".tmp-", dir=os.path.dirname(folder))
    try:
        name = os.path.basename(path)
        with open(os.path.join(tmp, name), "wb") as f:
            f.write(code)
        with open(os.path.join(tmp, name + ".json"), "w") as f:
            f.write(manifest)
        try:
            os.rename(tmp, folder)  # atomic; fails if another process won
        except OSError:
            if not os.path.exists(path + ".json"):
                # A broken entry (no manifest): replace it.
                shutil.rmtree(folder, ignore_errors=True)
                os.rename(tmp, folder)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return path


_devices = {}
_modules = {}
_lock = threading.RLock()
stats = {"compiles": 0, "loads": 0, "repaired": 0}


def device(spec_device):
    """The fa device for "host", "cuda:N", "hip:N" (one per process)."""
    d = _devices.get(spec_device)
    if d is None:
        with _lock:
            d = _devices.get(spec_device)
            if d is None:
                d = _devices[spec_device] = _capi.Device(spec_device)
    return d


def module(spec, device_name):
    """The loaded module of `spec` on `device_name`: from the in-process
    table, else the disk cache, else compiled."""
    m = _modules.get((spec, device_name))
    if m is not None:
        return m
    with _lock:
        m = _modules.get((spec, device_name))
        if m is not None:
            return m
        dev = device(device_name)
        path = entry_path(spec)
        if not os.path.exists(path + ".json"):
            stats["compiles"] += 1
        path = compile_to_cache(spec)
        try:
            m = _capi.Module(dev, path)
        except _capi.FaError as e:
            # A corrupted or truncated entry: compile it again.
            if e.code not in (5, 6, 9):  # corrupt code object, manifest, io
                raise
            shutil.rmtree(os.path.dirname(path), ignore_errors=True)
            stats["repaired"] += 1
            path = compile_to_cache(spec)
            m = _capi.Module(dev, path)
        stats["loads"] += 1
        _modules[(spec, device_name)] = m
        return m


def clear_memory_table():
    """Forgets the loaded modules (the disk cache stays), and the launches
    kept over them (_interface._Launch): for tests."""
    from . import _interface
    with _lock:
        _modules.clear()
        _interface.clear_launches()
