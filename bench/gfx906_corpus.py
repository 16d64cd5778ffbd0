#!/usr/bin/env python3
"""Third-party gfx906 kernels on fa's gfx906 simulator (issue 33).

Compiles HIP kernels of a ggml or llama.cpp checkout (the user's; nothing of
it is kept in this repository) for gfx906 with the installed clang, device
code only, runs each on gfx906-sim as ggml's host code would launch it (the
grid, block, kernarg values and dynamic LDS of ggml-cuda's launch functions,
replicated below for the cases run) and compares the result with an fp64
numpy reference of the same inputs:

  fattn-tile    ggml-cuda/fattn-tile.cuh, D=128 and D=256, f16 K/V (the
                prefill FlashAttention kernel ggml runs on gfx906), with
                flash_attn_combine_results when ggml splits the keys
  fattn-vec     ggml-cuda/fattn-vec.cuh, D=128 and D=256, f16 K/V, one query
                (decode), with the combine kernel; Lk a multiple of 256, as
                ggml requires for it (fattn.cu: can_use_vector_kernel; the
                kernel reads whole 256-key blocks)
  softmax       ggml-cuda/softmax.cu soft_max_f32 with an f16 causal mask
                (the generic kernel and the ncols=256 template)
  sum_rows      ggml-cuda/sumrows.cu (reduce_rows_f32)
  rms_norm      ggml-cuda/norm.cu rms_norm_f32
  mmvf          ggml-cuda/mmvf.cu mul_mat_vec_f, f32 matrix times vector
  mmvq          ggml-cuda/mmvq.cu mul_mat_vec_q, Q8_0 matrix times a q8_1
                vector (v_dot4_i32_i8)
  mmq           ggml-cuda/mmq.cuh mul_mat_q (Q8_0, the dp4a path), after
                quantize.cu's quantize_mmq_q8_1: ggml's quantized GEMM

usage: gfx906_corpus.py GGML_CHECKOUT [--build DIR] [--work DIR]
                        [--out DIR] [--only NAME,...] [--clang PATH]
                        [--commit SHA]

GGML_CHECKOUT is a ggml (src/ggml-cuda) or llama.cpp (ggml/src/ggml-cuda)
checkout. --build is an fa build directory with lib/libfa_runtime.so (the
driver bench/gfx906_corpus_run.cpp is compiled against it); --out gets
results.json and results.md. Needs numpy and PyYAML (Debian's python3-numpy,
python3-yaml), clang 22, ROCm 5.2's HIP headers and device libraries
(Debian's libamdhip64-dev, rocm-device-libs). Exit status 0 when every case
ran and matched its reference.
"""
import argparse
import json
import math
import os
import re
import subprocess
import sys
import time

import numpy as np
import yaml

FA_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLVM = "/usr/lib/llvm-22/bin"
DEVICE_LIBS = "/usr/lib/x86_64-linux-gnu/amdgcn/bitcode"
NSM = 60  # MI50 compute units, what ggml's host code reads as nsm

# What ROCm 5.2's HIP headers lack next to clang 22 and ggml: written to
# WORK/stub and put first on the include path.
STUBS = {
    "corpus_prelude.h": r"""
// Force-included before ggml's sources.
#pragma once
// clang 22's HIP wrapper leaves out hip_fp16_math_fwd.h, which declares
// these; clang 15, 16 and 19 define them in their own
// __clang_hip_libdevice_declares.h.
#if __clang_major__ > 19
typedef _Float16 __fa_2f16 __attribute__((ext_vector_type(2)));
__attribute__((device)) inline _Float16 __llvm_amdgcn_rcp_f16(_Float16 x) {
  return (_Float16)__builtin_amdgcn_rcph(x);
}
template <class T>
__attribute__((device)) inline __fa_2f16 __llvm_amdgcn_rcp_2f16(T x) {
  __fa_2f16 v = static_cast<__fa_2f16>(x);
  return __fa_2f16{(_Float16)__builtin_amdgcn_rcph(v.x),
                   (_Float16)__builtin_amdgcn_rcph(v.y)};
}
#endif
#include <hip/hip_runtime.h>
#include <hip/hip_fp16.h>
// ROCm 5.2 shuffles only 32/64-bit arithmetic types; ggml shuffles half2.
#define FA_SHFL_32(name)                                                     \
  template <class T, class = typename std::enable_if<                        \
                         sizeof(T) == 4 && !std::is_arithmetic<T>::value>::type> \
  __device__ inline T name(T v, int lane, int width = warpSize) {            \
    return __builtin_bit_cast(T, name(__builtin_bit_cast(int, v), lane, width)); \
  }
FA_SHFL_32(__shfl)
FA_SHFL_32(__shfl_xor)
FA_SHFL_32(__shfl_up)
FA_SHFL_32(__shfl_down)
#undef FA_SHFL_32
__device__ inline __half __hmax(__half a, __half b) {
  return __float2half(fmaxf(__half2float(a), __half2float(b)));
}
__device__ inline __half __hmin(__half a, __half b) {
  return __float2half(fminf(__half2float(a), __half2float(b)));
}
""",
    "hipblas/hipblas.h": r"""
#pragma once
// Declarations ggml's common.cuh names; no BLAS is called by these kernels.
typedef void *hipblasHandle_t;
typedef int hipblasStatus_t;
enum {
  HIPBLAS_STATUS_SUCCESS, HIPBLAS_STATUS_NOT_INITIALIZED,
  HIPBLAS_STATUS_ALLOC_FAILED, HIPBLAS_STATUS_INVALID_VALUE,
  HIPBLAS_STATUS_MAPPING_ERROR, HIPBLAS_STATUS_EXECUTION_FAILED,
  HIPBLAS_STATUS_INTERNAL_ERROR, HIPBLAS_STATUS_NOT_SUPPORTED,
  HIPBLAS_STATUS_ARCH_MISMATCH,
};
static inline hipblasStatus_t hipblasCreate(hipblasHandle_t *) { return 0; }
static inline hipblasStatus_t hipblasDestroy(hipblasHandle_t) { return 0; }
static inline hipblasStatus_t hipblasSetStream(hipblasHandle_t, void *) {
  return 0;
}
""",
    "hip/hip_bf16.h": r"""
#pragma once
// ROCm 5.2 has no hip_bf16.h; the kernels run here use no bf16.
#include <hip/hip_runtime.h>
struct __hip_bfloat16 {
  unsigned short x;
  __host__ __device__ __hip_bfloat16() = default;
  __host__ __device__ __hip_bfloat16(float f) {
    unsigned u = __builtin_bit_cast(unsigned, f);
    x = (unsigned short)((u + 0x7fff + ((u >> 16) & 1)) >> 16);
  }
  __host__ __device__ operator float() const {
    return __builtin_bit_cast(float, (unsigned)x << 16);
  }
};
struct __hip_bfloat162 { __hip_bfloat16 x, y; };
static inline __host__ __device__ float __bfloat162float(__hip_bfloat16 a) {
  return float(a);
}
static inline __host__ __device__ __hip_bfloat16 __float2bfloat16(float a) {
  return __hip_bfloat16(a);
}
static inline __host__ __device__ float2 __bfloat1622float2(__hip_bfloat162 a) {
  return make_float2(float(a.x), float(a.y));
}
static inline __host__ __device__ __hip_bfloat162
__floats2bfloat162_rn(float a, float b) {
  return {__hip_bfloat16(a), __hip_bfloat16(b)};
}
static inline __host__ __device__ __hip_bfloat162
__float22bfloat162_rn(float2 a) {
  return {__hip_bfloat16(a.x), __hip_bfloat16(a.y)};
}
""",
}

# The code objects: name -> the ggml-cuda source (an instance file or a .cu)
SOURCES = {
    "fattn-tile-d128": "template-instances/fattn-tile-instance-dkq128-dv128.cu",
    "fattn-tile-d256": "template-instances/fattn-tile-instance-dkq256-dv256.cu",
    "fattn-vec-f16": "template-instances/fattn-vec-instance-f16-f16.cu",
    "softmax": "softmax.cu",
    "sumrows": "sumrows.cu",
    "norm": "norm.cu",
    "mmvf": "mmvf.cu",
    "mmvq": "mmvq.cu",
    "mmq-q8_0": "template-instances/mmq-instance-q8_0.cu",
    "quantize": "quantize.cu",
}
AUDIT_ONLY = ()
HSACOS = {}  # code object name -> path, for cases that launch two


def run(cmd, **kw):
    r = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if r.returncode:
        sys.exit("command failed (%d): %s\n%s%s" % (
            r.returncode, " ".join(cmd[:6]) + " ...", r.stdout[-4000:],
            r.stderr[-4000:]))
    return r.stdout


def find_ggml_cuda(checkout):
    for sub in ("src/ggml-cuda", "ggml/src/ggml-cuda"):
        d = os.path.join(checkout, sub)
        if os.path.isfile(os.path.join(d, "fattn-tile.cuh")):
            return d
    sys.exit("no ggml-cuda/fattn-tile.cuh under %s (a ggml or llama.cpp "
             "checkout?)" % checkout)


def compiler_version(clang):
    """The compiler's first --version line (e.g. "Debian clang version
    19.1.7 (3~deb12u1)")."""
    return run([clang, "--version"]).splitlines()[0].strip()


def compile_kernels(cuda, work, names, clang):
    ggml = os.path.dirname(os.path.dirname(cuda))  # the folder with include/
    stub = os.path.join(work, "stub")
    for rel, text in STUBS.items():
        p = os.path.join(stub, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)
    link = []
    for lib in ("hip", "ocml", "ockl", "oclc_daz_opt_off",
                "oclc_unsafe_math_off", "oclc_finite_only_off",
                "oclc_correctly_rounded_sqrt_on", "oclc_wavefrontsize64_on",
                "oclc_isa_version_906", "oclc_abi_version_500"):
        link += ["-Xclang", "-mlink-builtin-bitcode", "-Xclang",
                 os.path.join(DEVICE_LIBS, lib + ".bc")]
    out = {}
    # A code object is reused only from the same compiler (its version
    # line beside it) and a source no newer than it.
    version = compiler_version(clang)
    for name in names:
        hsaco = os.path.join(work, name + ".hsaco")
        src = os.path.join(cuda, SOURCES[name])
        stamp = hsaco + ".compiler"
        same = os.path.exists(stamp) and open(stamp).read() == version
        if not same or not os.path.exists(hsaco) or \
                os.path.getmtime(hsaco) < os.path.getmtime(src):
            t = time.time()
            run([clang, "-x", "hip", "--offload-arch=gfx906",
                 "--cuda-device-only", "--no-gpu-bundle-output", "-nogpulib",
                 "-O3", "-std=c++17", "-DGGML_USE_HIP", "-DNDEBUG",
                 "-D__AMDGCN_WAVEFRONT_SIZE=64", "-w",
                 "-include", "corpus_prelude.h", "-I", stub,
                 "-I", os.path.join(ggml, "include"),
                 "-I", os.path.join(ggml, "src"), "-I", cuda] + link +
                [src, "-o", hsaco])
            with open(stamp, "w") as f:
                f.write(version)
            print("compiled %s (%.0f s)" % (name, time.time() - t),
                  flush=True)
        out[name] = hsaco
    return out


def build_driver(build, work):
    exe = os.path.join(work, "gfx906-corpus-run")
    src = os.path.join(FA_ROOT, "bench", "gfx906_corpus_run.cpp")
    lib = os.path.join(build, "lib")
    if not os.path.exists(os.path.join(lib, "libfa_runtime.so")):
        sys.exit("no %s/libfa_runtime.so (--build: an fa build directory)" %
                 lib)
    if not os.path.exists(exe) or os.path.getmtime(exe) < max(
            os.path.getmtime(src),
            os.path.getmtime(os.path.join(lib, "libfa_runtime.so"))):
        run(["c++", "-std=c++17", "-O2",
             "-I", os.path.join(FA_ROOT, "runtime", "include"),
             "-I", os.path.join(FA_ROOT, "runtime", "lib"), src,
             "-L", lib, "-lfa_runtime", "-Wl,-rpath," + lib, "-o", exe])
    return exe


def kernels_of(hsaco):
    """The code object's kernels: symbol -> AMDGPU metadata (YAML)."""
    text = run([os.path.join(LLVM, "llvm-readelf"), "--notes", hsaco])
    doc = text[text.index("---"):text.rindex("...")]
    meta = yaml.safe_load(doc)
    return {k[".name"]: k for k in meta["amdhsa.kernels"]}


def find_kernel(kernels, prefix):
    hits = [n for n in kernels if n.startswith(prefix)]
    if len(hits) != 1:
        sys.exit("%d kernels named %s*: %s" % (len(hits), prefix, hits[:4]))
    return hits[0]


class Launch:
    """One dispatch: values for the explicit arguments, in order, packed at
    the offsets of the kernel's metadata; ('buf', NAME) is a buffer's
    address."""

    def __init__(self, kernels, symbol, grid, block, lds, args):
        k = kernels[symbol]
        explicit = [a for a in k[".args"]
                    if not a[".value_kind"].startswith("hidden_")]
        hidden = [a[".offset"] for a in k[".args"]
                  if a[".value_kind"].startswith("hidden_")]
        if len(explicit) != len(args):
            sys.exit("%s takes %d arguments, given %d" %
                     (symbol, len(explicit), len(args)))
        size = min(hidden) if hidden else k[".kernarg_segment_size"]
        seg = bytearray(size)
        self.ptrs = []
        for a, v in zip(explicit, args):
            off, n = a[".offset"], a[".size"]
            if isinstance(v, tuple) and v[0] == "buf":
                self.ptrs.append((off, v[1]))
                continue
            if v is None:  # a null pointer
                continue
            b = bytes(v)
            if len(b) != n:
                sys.exit("%s: argument at %d has %d bytes, given %d" %
                         (symbol, off, n, len(b)))
            seg[off:off + n] = b
        self.line = "launch %s %d %d %d %d %d %d %d %s %s" % (
            symbol, *grid, *block, lds, seg.hex() or "-",
            " ".join("%d %s" % p for p in self.ptrs))


def i32(x):
    return np.int32(x).tobytes()


def u32(x):
    return np.uint32(x).tobytes()


def i64(x):
    return np.int64(x).tobytes()


def f32(x):
    return np.float32(x).tobytes()


def uint3(*xs):
    return np.array(xs, dtype=np.uint32).tobytes()


def fastdiv(d):
    """ggml's init_fastdiv_values: (mp, L, d)."""
    L = 0
    while L < 32 and (1 << L) < d:
        L += 1
    mp = ((1 << 32) * ((1 << L) - d)) // d + 1
    return uint3(mp & 0xffffffff, L, d)


def max_blocks_per_cu(k, threads, lds):
    """hipOccupancyMaxActiveBlocksPerMultiprocessor for gfx906, from the
    kernel's metadata: waves per SIMD by VGPRs (256 per lane, granule 4, at
    most 10), workgroups by those waves and by 64 KiB of LDS."""
    vgprs = max(4, (k[".vgpr_count"] + 3) // 4 * 4)
    waves_simd = min(10, 256 // vgprs)
    waves_block = (threads + 63) // 64
    by_waves = (4 * waves_simd) // waves_block
    total_lds = k[".group_segment_fixed_size"] + lds
    by_lds = 65536 // total_lds if total_lds else by_waves
    return max(1, min(by_waves, by_lds, 40 // waves_block))


def parallel_blocks_of(max_blocks, ntiles_kv, ntiles_dst):
    """launch_fattn's choice of parallel_blocks (no stream-K)."""
    pb = min(max_blocks, ntiles_kv)
    per_wave = NSM * max_blocks
    best_waves = best_eff = 0
    for test in range(pb, ntiles_kv + 1):
        total = ntiles_dst * test
        waves = (total + per_wave - 1) // per_wave
        eff = 100 * total // (waves * per_wave)
        if best_eff >= 95 and waves > best_waves:
            break
        if eff > best_eff:
            best_waves, best_eff, pb = waves, eff, test
    return pb


# ---------------------------------------------------------------------------
# Cases: each returns (buffers, launches, outputs, check) for the driver.
# ---------------------------------------------------------------------------

def causal_mask(Lq, Lk):
    """ggml's f16 KQ mask [Lq, Lk] of a causal chunk: the last Lq of Lk
    positions, -inf where key j is after query i's position."""
    m = np.zeros((Lq, Lk), np.float16)
    for i in range(Lq):
        m[i, Lk - Lq + i + 1:] = -np.inf
    return m


def attention_ref(q, k, v, scale, mask=None):
    """fp64 attention: q [B,Hq,Lq,D], k/v [B,Hkv,Lk,D] -> [B,Lq,Hq,D]."""
    B, Hq, Lq, D = q.shape
    g = Hq // k.shape[1]
    kk = np.repeat(k.astype(np.float64), g, axis=1)
    vv = np.repeat(v.astype(np.float64), g, axis=1)
    s = np.einsum("bhqd,bhkd->bhqk", q.astype(np.float64), kk) * scale
    if mask is not None:
        s = s + mask.astype(np.float64)
    s -= s.max(axis=-1, keepdims=True)
    p = np.exp(s)
    p /= p.sum(axis=-1, keepdims=True)
    o = np.einsum("bhqk,bhkd->bhqd", p, vv)
    return o.transpose(0, 2, 1, 3)


def fattn_case(kernels, kind, D, shape, seed, masked=False):
    """ggml_cuda_flash_attn_ext_{tile,vec} without sinks, ALiBi or softcap,
    as launch_fattn launches it (no stream-K on AMD for these kernels), then
    flash_attn_combine_results when the keys are split over parallel_blocks
    workgroups. Without a mask ncols2 = 1; with ggml's causal mask (and Lk a
    multiple of 256) the tile kernel packs GQA heads (ncols2 = 8, 4 or 2)."""
    B, Hq, Hkv, Lq, Lk = shape
    rng = np.random.default_rng(seed)
    q = rng.standard_normal((B, Hq, Lq, D)).astype(np.float32)
    k = rng.standard_normal((B, Hkv, Lk, D)).astype(np.float16)
    v = rng.standard_normal((B, Hkv, Lk, D)).astype(np.float16)
    scale = 1.0 / math.sqrt(D)
    mask = causal_mask(Lq, Lk) if masked else None
    gqa = Hq // Hkv
    ncols2 = 1
    if kind == "tile" and masked and Lk % 256 == 0:
        ncols2 = next((c for c in (8, 4, 2) if gqa % c == 0), 1)
    if kind == "tile":
        # launch_fattn_tile_switch_ncols{2,1} on HIP; the AMD (non-RDNA)
        # config table's nthreads and nbatch_fa for ncols1 * ncols2.
        if D <= 128 and Lq > 32 // ncols2:
            cols = 64
        else:
            cols = next((c for c in (32, 16, 8, 4) if Lq > c // 2 // ncols2
                         and c >= ncols2), 2)
        ncols1 = cols // ncols2
        config = {(128, 2): (256, 128), (128, 4): (128, 64),
                  (128, 8): (256, 64), (128, 16): (256, 64),
                  (128, 32): (256, 64), (128, 64): (256, 64),
                  (256, 2): (256, 128), (256, 4): (256, 64),
                  (256, 8): (256, 64), (256, 16): (256, 32),
                  (256, 32): (256, 32)}
        nthreads, nbatch_fa = config[(D, cols)]
        prefix = "_ZL15flash_attn_tileILi%dELi%dELi%dELi%dELb0E" % (
            D, D, ncols1, ncols2)
    else:
        ncols1 = 1 if Lq == 1 else 2
        nthreads, nbatch_fa = 128, D
        prefix = "_ZL18flash_attn_ext_vecILi%dELi%dEL9ggml_type1ELS0_1ELb0E" \
            % (D, ncols1)
    symbol = find_kernel(kernels, prefix)
    block = (32, nthreads // 32, 1)
    ntiles_x = (Lq + ncols1 - 1) // ncols1
    ntiles_z = (gqa + ncols2 - 1) // ncols2
    ntiles_dst = ntiles_x * ntiles_z * Hkv * B
    ntiles_kv = (Lk + nbatch_fa - 1) // nbatch_fa
    mb = max_blocks_per_cu(kernels[symbol], nthreads, 0)
    pb = parallel_blocks_of(mb, ntiles_kv, ntiles_dst)
    grid = (ntiles_x, pb, ntiles_z * Hkv * B)
    n_head_log2 = 1 << int(math.floor(math.log2(Hq)))
    out_bytes = B * Lq * Hq * D * 4
    bufs = [("Q", q.tobytes()), ("K", k.tobytes()), ("V", v.tobytes()),
            ("O", out_bytes)]
    if pb > 1:
        bufs += [("parts", pb * out_bytes), ("meta", pb * B * Lq * Hq * 8)]
    if masked:
        bufs.append(("mask", mask.tobytes()))
    args = [("buf", "Q"), ("buf", "K"), ("buf", "V"),
            ("buf", "mask") if masked else None, None, None,
            ("buf", "parts" if pb > 1 else "O"),
            ("buf", "meta") if pb > 1 else None,
            f32(scale), f32(0.0), f32(1.0), f32(1.0), u32(n_head_log2),
            f32(0.0),
            i32(D), fastdiv(Lq), i32(Hq), i32(B),
            i32(D * 4), i32(Lq * D * 4), i32(Hq * Lq * D * 4),
            i32(D), i32(Lk), i32(Hkv), i32(B),
            i32(D * 2), i32(Lk * D * 2), i64(Hkv * Lk * D * 2),
            i32(D * 2), i32(Lk * D * 2), i64(Hkv * Lk * D * 2),
            i32(Lq if masked else 0), i32(1 if masked else 0),
            i32(1 if masked else 0), i32(Lk * 2 if masked else 0),
            i32(Lq * Lk * 2 if masked else 0),
            i64(Lq * Lk * 2 if masked else 0)]
    launches = [Launch(kernels, symbol, grid, block, 0, args)]
    if pb > 1:
        combine = find_kernel(kernels,
                              "_ZL26flash_attn_combine_resultsILi%dEE" % D)
        launches.append(Launch(kernels, combine, (Lq, Hq, B), (D, 1, 1),
                               pb * 8, [("buf", "parts"), ("buf", "meta"),
                                        ("buf", "O"), i32(pb)]))
    want = attention_ref(q, k, v, scale, mask)

    def check(outs):
        got = np.frombuffer(outs["O"], np.float32).reshape(B, Lq, Hq, D)
        return got, want
    about = ("%s D=%d B,Hq,Hkv,Lq,Lk=%s%s ncols1=%d ncols2=%d threads=%d "
             "parallel_blocks=%d" % (kind, D, ",".join(map(str, shape)),
                                     " causal mask" if masked else "",
                                     ncols1, ncols2, nthreads, pb))
    return bufs, launches, ["O"], check, about, 5e-3


def softmax_case(kernels, ncols, rows, heads, seed):
    """soft_max_f32 with an f16 mask (a causal one, -inf above the
    diagonal), scale 0.125, as soft_max_f32_cuda launches it: the ncols
    template where ncols is one of 32..4096, else the generic kernel."""
    rng = np.random.default_rng(seed)
    x = (rng.standard_normal((1, heads, rows, ncols)) * 4).astype(np.float32)
    mask = np.zeros((rows, ncols), np.float16)
    for r in range(rows):
        mask[r, ncols - rows + r + 1:] = -np.inf
    scale = 0.125
    nth = 32
    while nth < ncols and nth < 1024:
        nth *= 2
    lds = ((ncols + 31) // 32 * 32 + 32) * 4
    tmpl = ncols if ncols in (32, 64, 128, 256, 512, 1024, 2048, 4096) else 0
    block_t = min(tmpl, 1024)
    symbol = find_kernel(kernels, "_ZL12soft_max_f32ILb1ELi%dELi%dE6__half" %
                         (tmpl, block_t))
    params = b"".join([i64(heads), u32(1 << int(math.log2(heads))), u32(0),
                       i64(ncols), i64(rows * heads), i64(rows), i64(ncols),
                       i64(rows), i64(heads), i64(1),
                       i64(ncols * 2), i64(ncols * rows * 2),
                       i64(ncols * rows * 2), i64(1), i64(1), f32(scale),
                       f32(0.0), f32(1.0), f32(1.0)])
    launch = Launch(kernels, symbol, (rows, heads, 1), (nth, 1, 1), lds,
                    [("buf", "x"), ("buf", "mask"), None, ("buf", "y"),
                     params])
    s = x.astype(np.float64) * scale + mask.astype(np.float64)
    s -= s.max(axis=-1, keepdims=True)
    want = np.exp(s) / np.exp(s).sum(axis=-1, keepdims=True)

    def check(outs):
        return np.frombuffer(outs["y"], np.float32).reshape(want.shape), want
    bufs = [("x", x.tobytes()), ("mask", mask.tobytes()),
            ("y", x.nbytes)]
    about = "ncols=%d rows=%d heads=%d block=%d f16 causal mask" % (
        ncols, rows, heads, nth)
    return bufs, [launch], ["y"], check, about, 1e-5


def sum_rows_case(kernels, ncols, nrows, seed):
    """reduce_rows_f32<false> as sum_rows_f32_cuda launches it."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((nrows, ncols)).astype(np.float32)
    block = 512 if nrows // NSM < 2 else (32 if ncols < 1024 else 128)
    symbol = find_kernel(kernels, "_ZL15reduce_rows_f32ILb0EE")
    launch = Launch(kernels, symbol, (nrows, 1, 1), (block, 1, 1), 0,
                    [("buf", "x"), ("buf", "y"), i32(ncols)])
    want = x.astype(np.float64).sum(axis=1)

    def check(outs):
        return np.frombuffer(outs["y"], np.float32), want
    about = "ncols=%d nrows=%d block=%d" % (ncols, nrows, block)
    return ([("x", x.tobytes()), ("y", nrows * 4)], [launch], ["y"], check,
            about, 1e-4)


def rms_norm_case(kernels, ncols, rows, channels, seed):
    """rms_norm_f32<256 or 1024, false> as rms_norm_f32_cuda launches it."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((channels, rows, ncols)).astype(np.float32)
    eps = 1e-6
    bs = 256 if ncols < 1024 else 1024
    symbol = find_kernel(kernels, "_ZL12rms_norm_f32ILi%dELb0ELb0EE" % bs)
    zero3 = uint3(0, 0, 0)
    args = [("buf", "x"), ("buf", "y"), i32(ncols), i64(ncols),
            i64(rows * ncols), i64(channels * rows * ncols), f32(eps),
            None, i64(0), i64(0), i64(0), zero3, zero3, zero3, zero3,
            None, i64(0), i64(0), i64(0), zero3, zero3, zero3, zero3]
    launch = Launch(kernels, symbol, (rows, channels, 1), (bs, 1, 1),
                    32 * 4, args)
    xd = x.astype(np.float64)
    want = xd / np.sqrt((xd * xd).mean(axis=-1, keepdims=True) + eps)

    def check(outs):
        return np.frombuffer(outs["y"], np.float32).reshape(want.shape), want
    about = "ncols=%d rows=%d channels=%d block=%d" % (ncols, rows,
                                                       channels, bs)
    return ([("x", x.tobytes()), ("y", x.nbytes)], [launch], ["y"], check,
            about, 1e-5)


FUSION_NONE = bytes(48)  # ggml_cuda_mm_fusion_args_device: 5 null pointers


def mmvf_case(kernels, ncols, nrows, seed, ncols_dst=1):
    """mul_mat_vec_f<float, float, ncols_dst, block>: ggml's f32 matrix
    times ncols_dst vectors (a GEMV, or a small GEMM for a few tokens), as
    launch_mul_mat_vec_f_cuda launches it on gfx906 (warp 64, GCN: block
    sizes 64 or 128, the one with fewer iterations)."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((nrows, ncols)).astype(np.float32)
    x = rng.standard_normal((ncols_dst, ncols)).astype(np.float32)
    best, niter = 64, (ncols + 127) // 128
    if (ncols + 255) // 256 < niter:
        best = 128
    symbol = find_kernel(kernels, "_ZL13mul_mat_vec_fIffLi%dELi%dELb0ELb0E" %
                         (ncols_dst, best))
    one = fastdiv(1)
    args = [("buf", "w"), ("buf", "x"), None, FUSION_NONE, ("buf", "y"),
            i32(ncols // 2), uint3(0, 0, 0), i32(ncols), i32(ncols // 2),
            i32(nrows), one, i32(nrows * ncols), i32(ncols), i32(nrows), one,
            i32(nrows * ncols), i32(ncols), i32(nrows), i32(0)]
    launch = Launch(kernels, symbol, (nrows, 1, 1), (best, 1, 1), 64 * 4,
                    args)
    want = x.astype(np.float64) @ w.astype(np.float64).T  # [ncols_dst, nrows]

    def check(outs):
        return np.frombuffer(outs["y"], np.float32).reshape(want.shape), want
    about = "f32 W %dx%d times %d vector(s), block %d" % (nrows, ncols,
                                                          ncols_dst, best)
    return ([("w", w.tobytes()), ("x", x.tobytes()),
             ("y", nrows * ncols_dst * 4)], [launch], ["y"], check, about,
            1e-5)


def quantize_q8(x, with_sum):
    """ggml's block_q8_0 (f16 d, 32 x int8) or block_q8_1 (f16 d, f16 sum,
    32 x int8) of the rows of x: d = max|x| / 127, q = round(x / d)."""
    blocks = x.reshape(x.shape[:-1] + (-1, 32)).astype(np.float32)
    amax = np.abs(blocks).max(axis=-1, keepdims=True)
    d = amax / 127.0
    q = np.where(d > 0, np.round(blocks / np.where(d > 0, d, 1)), 0)
    q = q.astype(np.int8)
    dh = d.astype(np.float16)
    parts = [dh.view(np.uint8)]
    if with_sum:
        s = (blocks.sum(axis=-1, keepdims=True)).astype(np.float16)
        parts.append(s.view(np.uint8))
    parts.append(q.view(np.uint8))
    raw = np.concatenate(parts, axis=-1)
    return raw, dh.astype(np.float64), q.astype(np.float64)


def mmvq_case(kernels, ncols, nrows, seed, ncols_dst=1):
    """mul_mat_vec_q<Q8_0, ncols_dst>: ggml's quantized matrix-vector
    product (the decode GEMV of a Q8_0 model; a few tokens at once with
    ncols_dst > 1) over activations quantized to q8_1 (done here as
    quantize_row_q8_1 does it), as ggml launches it on gfx906 (the GCN
    table: 2 warps of 64; one row per workgroup, two for several columns).
    It dots the int8 values with v_dot4_i32_i8. Reference: the dequantized
    operands in fp64."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((nrows, ncols)).astype(np.float32)
    x = rng.standard_normal((ncols_dst, ncols)).astype(np.float32)
    wraw, wd, wq = quantize_q8(w, False)
    xraw, xd, xq = quantize_q8(x, True)
    symbol = find_kernel(kernels,
                         "_ZL13mul_mat_vec_qIL9ggml_type8ELi%dELb0ELb0ELb0EE"
                         % ncols_dst)
    rows_per_block = 1 if ncols_dst == 1 else 2
    blocks = ncols // 32
    one = fastdiv(1)
    args = [("buf", "w"), ("buf", "x"), None, FUSION_NONE, ("buf", "y"),
            u32(ncols), uint3(0, 0, 0), u32(blocks), u32(blocks), u32(nrows),
            one, u32(nrows * blocks), u32(blocks), u32(nrows), one,
            u32(nrows * blocks), u32(blocks), u32(nrows), u32(0)]
    launch = Launch(kernels, symbol,
                    ((nrows + rows_per_block - 1) // rows_per_block, 1, 1),
                    (64, 2, 1), 0, args)
    wf, xf = wd * wq, xd * xq  # [nrows, blocks, 32], [ncols_dst, blocks, 32]
    want = np.einsum("rbk,cbk->cr", wf, xf)

    def check(outs):
        return np.frombuffer(outs["y"], np.float32).reshape(want.shape), want
    about = "Q8_0 W %dx%d times %d q8_1 vector(s), block 64x2" % (
        nrows, ncols, ncols_dst)
    return ([("w", wraw.tobytes()), ("x", xraw.tobytes()),
             ("y", nrows * ncols_dst * 4)], [launch], ["y"], check, about,
            1e-5)


def mmq_case(kernels, ncols, nrows, ntok, seed):
    """ggml's quantized GEMM on gfx906 (no MFMA: the dp4a path, Q8_0
    weights), as ggml_cuda_mul_mat_q launches it: quantize_mmq_q8_1 (of
    quantize.cu) turns the f32 activations into block_q8_1_mmq (layout D4:
    per 128 values of a token 4 f32 scales and 128 int8), then
    mul_mat_q<Q8_0, J, false> with the RDNA2/GCN config (256 threads, I =
    128 rows, no stream-k; J the smallest tile count, from 8..64) and its
    dynamic LDS (J ids + the dp4a x tile + the y tile padded). Checked: the
    GEMM against the fp64 product of the dequantized weights and of the
    activations as the quantize kernel wrote them, and those activations
    against the f32 ones (within half a quantization step)."""
    rng = np.random.default_rng(seed)
    w = rng.standard_normal((nrows, ncols)).astype(np.float32)
    x = rng.standard_normal((ntok, ncols)).astype(np.float32)
    wraw, wd, wq = quantize_q8(w, False)
    blocks = ncols // 32
    padded = (ncols + 511) // 512 * 512  # MATRIX_ROW_PADDING
    qkern = kernels_of(HSACOS["quantize"])
    quant = find_kernel(qkern,
                        "_ZL17quantize_mmq_q8_1IL18mmq_q8_1_ds_layout0ELb0EE")
    # mul_mat_q_switch_J: the first J of the config table with the fewest
    # column tiles.
    js = (8, 16, 24, 32, 40, 48, 64)
    ntiles = {J: (ntok + J - 1) // J for J in js}
    J = min(js, key=lambda j: (ntiles[j], j))
    jmax = max(j for j in js if j <= min(ntok, 512) - min(ntok, 512) % 8)
    ybytes = ntok * padded * 144 // 128 + jmax * 144
    I = 128
    nbs_x = ((I * 32 * 2 + I) + (I * 32 * 2 // 8 + I // 4)) * 4
    lds = J * 4 + nbs_x + (J * 144 + 1023) // 1024 * 1024
    mmq = find_kernel(kernels, "_ZL9mul_mat_qIL9ggml_type8ELi%dELb0EE" % J)
    one = fastdiv(1)
    s12 = ntok * padded * 36 // (32 * 4)
    ntx = (ntok + J - 1) // J
    launches = [
        "module " + HSACOS["quantize"],
        Launch(qkern, quant, (ntok, (padded + 511) // 512, 1), (128, 1, 1), 0,
               [("buf", "x"), None, ("buf", "yq"), i64(ncols), i64(ncols),
                i64(ncols * ntok), i64(ncols * ntok), i64(padded), i32(ntok),
                i32(1), i32(0)]),
        "module " + HSACOS["mmq-q8_0"],
        Launch(kernels, mmq, ((nrows + I - 1) // I, ntx, 1), (64, 4, 1), lds,
               [("buf", "w"), ("buf", "yq"), None, None, ("buf", "y"), None,
                None, fastdiv(blocks), i32(nrows), i32(ntok), i32(blocks),
                i32(ntok), i32(nrows), one, one, i32(nrows * blocks),
                i32(s12), i32(nrows * ntok), one, one, i32(nrows * blocks),
                i32(s12), i32(nrows * ntok), fastdiv(ntx)])]

    def dequant_y(raw):
        # block (k, t) at (k * ntok + t) * 144: f32 d4[4], int8 qs[128]
        b = np.frombuffer(raw, np.uint8)[:ntok * padded * 144 // 128]
        b = b.reshape(padded // 128, ntok, 144)
        d = b[:, :, :16].copy().view(np.float32)          # [k, t, 4]
        q = b[:, :, 16:].copy().view(np.int8).astype(np.float64)
        v = q.reshape(padded // 128, ntok, 4, 32) * d[..., None]
        return v.transpose(1, 0, 2, 3).reshape(ntok, padded)[:, :ncols]

    def check(outs):
        yd = dequant_y(outs["yq"])
        step = np.abs(x).reshape(ntok, blocks, 32).max(-1) / 127.0
        quant_err = np.abs(yd - x).reshape(ntok, blocks, 32).max(-1)
        want = yd @ (wd * wq).reshape(nrows, ncols).T   # [ntok, nrows]
        got = np.frombuffer(outs["y"], np.float32).reshape(want.shape)
        if not np.all(quant_err <= 0.5001 * step + 1e-7):
            got = got + np.inf  # quantize_mmq_q8_1 wrong: fail the case
        return got, want
    about = ("Q8_0 W %dx%d times %d tokens: quantize_mmq_q8_1 then "
             "mul_mat_q<Q8_0,%d> (I=128, 256 threads, LDS %d)" % (
                 nrows, ncols, ntok, J, lds))
    return ([("w", wraw.tobytes()), ("x", x.tobytes()), ("yq", ybytes),
             ("y", ntok * nrows * 4)], launches, ["yq", "y"], check, about,
            3e-5)


CASES = [
    # name, code object, builder
    ("fattn-tile-d128", "fattn-tile-d128",
     lambda k: fattn_case(k, "tile", 128, (1, 2, 1, 70, 300), 1)),
    ("fattn-tile-d256", "fattn-tile-d256",
     lambda k: fattn_case(k, "tile", 256, (1, 2, 1, 40, 200), 2)),
    ("fattn-tile-d128-gqa-mask", "fattn-tile-d128",
     lambda k: fattn_case(k, "tile", 128, (1, 8, 2, 33, 512), 9, True)),
    ("fattn-tile-d256-gqa-mask", "fattn-tile-d256",
     lambda k: fattn_case(k, "tile", 256, (1, 8, 1, 20, 256), 10, True)),
    ("fattn-tile-d128-b2-lq3", "fattn-tile-d128",
     lambda k: fattn_case(k, "tile", 128, (2, 4, 4, 3, 200), 11)),
    ("fattn-vec-d128", "fattn-vec-f16",
     lambda k: fattn_case(k, "vec", 128, (1, 8, 2, 1, 1024), 3)),
    ("fattn-vec-d256", "fattn-vec-f16",
     lambda k: fattn_case(k, "vec", 256, (1, 8, 1, 1, 768), 4)),
    ("softmax-generic", "softmax", lambda k: softmax_case(k, 1000, 6, 2, 5)),
    ("softmax-256", "softmax", lambda k: softmax_case(k, 256, 4, 2, 6)),
    ("sum_rows", "sumrows", lambda k: sum_rows_case(k, 3000, 5, 7)),
    ("rms_norm", "norm", lambda k: rms_norm_case(k, 4096, 3, 2, 8)),
    ("mmvf-f32", "mmvf", lambda k: mmvf_case(k, 4096, 64, 12)),
    ("mmvq-q8_0", "mmvq", lambda k: mmvq_case(k, 4096, 64, 13)),
    ("mmvf-f32-4cols", "mmvf", lambda k: mmvf_case(k, 2048, 48, 14, 4)),
    ("mmvq-q8_0-4cols", "mmvq", lambda k: mmvq_case(k, 2048, 48, 15, 4)),
    ("mmq-q8_0", ("mmq-q8_0", "quantize"),
     lambda k: mmq_case(k, 1024, 256, 24, 16)),
]

# Instructions worth naming in the results: what fa's own kernels did not
# need before issue 33 and HIP's code does.
HIP_OPS = ("v_mbcnt_lo_u32_b32", "v_mbcnt_hi_u32_b32", "ds_bpermute_b32",
           "ds_permute_b32", "ds_swizzle_b32", "v_cmp_class_f16",
           "s_bfe_i64", "s_bfe_u64", "v_readlane_b32", "v_readfirstlane_b32",
           "v_dot4_i32_i8", "v_sub_i16", "v_pk_lshrrev_b16",
           "buffer_load_ubyte")


def decoder_mnemonics():
    """The mnemonics of gfx906-sim's decoder table (Opcodes.def)."""
    text = open(os.path.join(FA_ROOT, "runtime", "lib", "sim",
                             "Opcodes.def")).read()
    names = set(re.findall(r'FA_SIM_OP\(\w+, "(\w+)"', text))
    names |= set(re.findall(r'FA_SIM_CMP\(\w+, "(\w+)"', text))
    for seg in ("global", "flat", "scratch"):
        names |= {seg + m for m in re.findall(r'seg "(_\w+)"', text)}
    return names


def not_decoded(hsaco):
    """llvm-objdump's instructions that are not in the decoder's table:
    mnemonic -> (static count, the functions holding them)."""
    known = decoder_mnemonics()
    out, fn = {}, "?"
    dis = run([os.path.join(LLVM, "llvm-objdump"), "-d", "--mcpu=gfx906",
               hsaco])
    for line in dis.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if m:
            fn = m.group(1)
            continue
        m = re.match(r"^\s+([a-z][a-z0-9_]*)", line)
        if not m:
            continue
        mn = re.sub(r"_(e32|e64|sdwa|dpp)$", "", m.group(1))
        if mn not in known:
            n, fns = out.get(mn, (0, set()))
            out[mn] = (n + 1, fns | {fn})
    return {mn: {"count": n, "in": sorted(fns)} for mn, (n, fns) in
            out.items()}


def audit(driver, hsaco):
    """What in the code object would stop a launch: mnemonics without
    semantics (with their static counts) and instructions the decoder does
    not know (named by llvm-objdump)."""
    r = subprocess.run([driver], input="module %s\naudit\n" % hsaco,
                       capture_output=True, text=True)
    if r.returncode:
        return {"error": r.stderr.strip()}
    out = {"no_semantics": {}, "undecodable": 0}
    for line in r.stdout.splitlines():
        f = line.split(None, 2)
        if f[0] == "nosemantics":
            out["no_semantics"][f[1]] = int(f[2])
        elif f[0] == "undecodable":
            out["undecodable"] = int(f[1])
    out["not_decoded"] = not_decoded(hsaco)
    return out


def run_case(name, hsaco, build, driver, work):
    kernels = kernels_of(hsaco)
    bufs, launches, outs, check, about, tol = build(kernels)
    d = os.path.join(work, name)
    os.makedirs(d, exist_ok=True)
    plan = ["module " + hsaco]
    for bname, data in bufs:
        if isinstance(data, int):
            plan.append("buffer %s %d" % (bname, data))
        else:
            path = os.path.join(d, bname + ".in")
            with open(path, "wb") as f:
                f.write(data)
            plan.append("buffer %s %d %s" % (bname, len(data), path))
    plan += [l if isinstance(l, str) else l.line for l in launches]
    for o in outs:
        plan.append("read %s %s" % (o, os.path.join(d, o + ".out")))
    t = time.time()
    r = subprocess.run([driver], input="\n".join(plan) + "\n",
                       capture_output=True, text=True)
    wall = time.time() - t
    res = {"case": name, "what": about, "wall_s": round(wall, 1),
           "launches": []}
    for line in r.stdout.splitlines():
        f = line.split()
        if f[0] == "launch":
            res["launches"].append({"kernel": f[1], "instructions": int(f[3]),
                                    "lane_ops": int(f[5]), "ops": {}})
        elif f[0] == "op":
            res["launches"][-1]["ops"][f[1]] = int(f[2])
    if r.returncode:
        res["status"] = "REFUSED" if "not implemented" in r.stderr or \
            "decode" in r.stderr else "ERROR"
        res["error"] = r.stderr.strip()[-1000:]
        return res
    data = {}
    for o in outs:
        with open(os.path.join(d, o + ".out"), "rb") as f:
            data[o] = f.read()
    got, want = check(data)
    err = np.abs(got.astype(np.float64) - want)
    res["max_abs_err"] = float(err.max())
    res["max_rel_err"] = float((err / np.maximum(1.0, np.abs(want))).max())
    res["tolerance"] = tol
    res["status"] = "PASS" if np.all(np.isfinite(got)) and \
        res["max_rel_err"] <= tol else "FAIL"
    return res


def report(results, audits, checkout, commit, out):
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump({"ggml_checkout": checkout, "ggml_commit": commit,
                   "results": results, "code_objects": audits}, f, indent=1)
    lines = ["| case | status | max abs err | max rel err (tol) | kernels | "
             "instructions (wave) | HIP-specific ops executed | sim wall s |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        ops = {}
        for l in r["launches"]:
            for o, n in l["ops"].items():
                if o in HIP_OPS:
                    ops[o] = ops.get(o, 0) + n
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["case"], r["status"],
            "%.2e" % r["max_abs_err"] if "max_abs_err" in r else "-",
            "%.2e (%.0e)" % (r["max_rel_err"], r["tolerance"])
            if "max_rel_err" in r else "-",
            " + ".join(re.sub(r"^_ZL\d+", "", l["kernel"])[:40]
                       for l in r["launches"]) or "-",
            " + ".join("%d" % l["instructions"] for l in r["launches"]),
            ", ".join("%s %d" % kv for kv in sorted(ops.items())),
            r["wall_s"]))
        lines.append("|  | %s |  |  |  |  |  |  |" % r["what"])
        if "error" in r:
            lines.append("|  | %s |  |  |  |  |  |  |" %
                         r["error"].replace("|", "/").replace("\n", " "))
    lines += ["", "| code object | source | kernels | decoded without "
              "semantics (static count) | not decoded (static count: in "
              "which functions) |", "|---|---|---|---|---|"]
    for name, a in sorted(audits.items()):
        lines.append("| %s | %s | %s | %s | %s |" % (
            name, SOURCES[name], a.get("kernels", "-"),
            ", ".join("%s %d" % kv for kv in sorted(
                a.get("no_semantics", {}).items())) or "none",
            "; ".join("%s %d: %s" % (mn, v["count"], ", ".join(
                f[:40] for f in v["in"][:3]))
                for mn, v in sorted(a.get("not_decoded", {}).items()))
            or "none"))
    with open(os.path.join(out, "results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")
    print("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("checkout")
    ap.add_argument("--build", default=os.path.join(FA_ROOT, "build"))
    ap.add_argument("--work", default="/tmp/fa-gfx906-corpus")
    ap.add_argument("--out", default=None)
    ap.add_argument("--only", default=None)
    ap.add_argument("--clang", default=os.path.join(LLVM, "clang++"))
    ap.add_argument("--commit", default=None,
                    help="the checkout's commit, for a copy that is no git "
                    "work tree (default: git rev-parse HEAD there)")
    a = ap.parse_args()
    cuda = find_ggml_cuda(os.path.abspath(a.checkout))
    commit = a.commit
    if not commit:
        try:
            commit = subprocess.run(["git", "-C", a.checkout, "rev-parse",
                                     "HEAD"], capture_output=True,
                                    text=True).stdout.strip() or "unknown"
        except OSError:
            commit = "unknown"
    cases = [c for c in CASES
             if not a.only or c[0] in a.only.split(",")]
    os.makedirs(a.work, exist_ok=True)
    objects = set()
    for c in cases:
        objects |= set(c[1]) if isinstance(c[1], tuple) else {c[1]}
    objects |= {o for o in AUDIT_ONLY if not a.only or o in a.only.split(",")}
    hsacos = compile_kernels(cuda, a.work, sorted(objects), a.clang)
    HSACOS.update(hsacos)
    driver = build_driver(os.path.abspath(a.build), a.work)
    audits = {}
    for name, hsaco in sorted(hsacos.items()):
        audits[name] = audit(driver, hsaco)
        audits[name]["kernels"] = len(kernels_of(hsaco))
    results = []
    for name, obj, build in cases:
        first = obj[0] if isinstance(obj, tuple) else obj
        r = run_case(name, hsacos[first], build, driver, a.work)
        print("%s: %s %s" % (name, r["status"], r.get("error", "")[:300] or
                             "max rel err %.2e" % r["max_rel_err"]),
              flush=True)
        results.append(r)
    report(results, audits, os.path.abspath(a.checkout), commit,
           a.out or os.path.join(a.work, "results"))
    return 0 if all(r["status"] == "PASS" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
