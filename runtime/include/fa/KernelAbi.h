//===- KernelAbi.h - The fa kernel ABI, shared by compiler and runtime ----===//
//
// Part of the fa project. Plain C/C++ header: no LLVM or MLIR types.
//
//===----------------------------------------------------------------------===//
//
// This file is the single definition of how an fa attention kernel is
// launched. `fac` generates kernels that follow it and writes it into the
// manifest next to every code object; the runtime packs arguments from it.
//
// Argument list (ABI version 1). Every argument is one 64-bit word, in order:
//
//   For each buffer Q, K, V, O, LSE (a rank-1 MLIR memref descriptor):
//     word 0: allocated pointer      word 1: aligned pointer (the data)
//     word 2: offset (always 0)      word 3: size in elements
//     word 4: stride (always 1)
//   Then the sizes:    B, Hq, Hkv, Lq, Lk                       (int64)
//   Then the strides, in elements:                               (int64)
//     Q: batch, head, row    K: batch, head, row    V: batch, head, row
//     O: batch, head, row    LSE: batch, head
//   The innermost stride (along D for Q/K/V/O, along Lq for LSE) is 1.
//
// A kernel compiled without an LSE output still takes the LSE words; the
// runtime passes a null pointer and size 0 there.
//
// Launch: grid = (ceil(Lq / block_m), Hq, B), block = (threads, 1, 1),
// LDS = the manifest's lds_bytes (static, allocated by the kernel itself).
// The softmax scale, causal flag, element type, D, and tile sizes are
// compile-time properties recorded in the manifest.
//
// ABI version 2 (split-KV kernels, `fac --kv-splits=runtime`) appends to the
// 44 words of version 1, which keep their meaning:
//
//   word 44..48: workspace O    f32 [S*B, Hq, Lq, D], contiguous
//   word 49..53: workspace LSE  f32 [S*B, Hq, Lq], contiguous
//                (split s of batch b is batch index s*B + b)
//   word 54:     S, the number of K/V splits (>= 1; int64, like the sizes)
//
// A split-KV attention is two kernels that take the same 55 words (the
// manifest's `combine` names the second): the split kernel, grid
// (ceil(R / block_m) * S, Hg, B), where split s of Q block m is grid x
// m * S + s, visits K/V blocks [s*c, min((s+1)*c, n)) with c = ceil(n / S)
// (n: the Q block's K/V blocks) and writes O_s = acc / l and lse_s (-inf for
// a split that saw no key) to the workspace; the combine kernel, grid
// (ceil(Lq / combine block_m), Hq, B), merges the splits as online softmax
// does and writes O and LSE. A split kernel whose manifest says
// `split_direct` writes O and LSE itself at S = 1 (its one split is the
// whole K/V range) and its combine kernel returns at once there: the
// runtime launches it alone, with null workspace descriptors. R and Hg are
// Lq and Hq, or, for a kernel whose
// manifest says `gqa_packed`, Lq * Hq/Hkv and Hkv: the Hq/Hkv query heads of
// one KV head are rows of one Q tile (packed row p is query head
// h*Hq/Hkv + p / Lq, position p mod Lq). Versions only ever append words.
//
// ABI version 3 (a paged K/V cache: fa.attention with `paged`, the
// FlashAttention 2 / vLLM layout) appends to version 2's 55 words, which
// keep their meaning (a paged kernel that is not split-KV is passed null
// workspace descriptors and S = 1):
//
//   word 55..59: block_table    i32 [B, max_pages], a 5-word descriptor
//   word 60..64: cache_seqlens  i32 [B]: the keys of each sequence
//   word 65:     page_size, rows per page (>= 1)
//   word 66:     block_table's row stride in elements (>= max_pages >= 1)
//
// K and V are the caches [num_pages, page_size, Hkv, D]: row n of sequence
// b is row n mod page_size of page block_table[b][n / page_size]. Their
// three stride words are (page, head, row within a page). Lk (size word 4)
// is the longest sequence, max cache_seqlens (the grid's split count uses
// it); sequence b sees cache_seqlens[b] keys, causal bottom-right within
// its own length. The kernel trusts the table and the lengths: the runtime
// checks them on the host before a launch (fa/PagedVarlen.h).
//
// ABI version 4 (variable-length batches: fa.attention with `varlen`,
// FlashAttention 2's flash_attn_varlen_func layout) appends to version 3's
// 67 words, which keep their meaning (a varlen kernel is passed null
// block-table and lengths descriptors and 0 for the page size and the
// table's stride; a varlen kernel that is not split-KV also null workspace
// descriptors and S = 1):
//
//   word 67..71: cu_seqlens_q   i32 [B+1], a 5-word descriptor
//   word 72..76: cu_seqlens_k   i32 [B+1]
//
// Q and O are packed [total_q, Hq, D], K and V [total_k, Hkv, D], LSE
// [Hq, total_q]: sequence b is rows cu_seqlens_q[b] .. cu_seqlens_q[b+1]-1
// of Q, O and LSE and rows cu_seqlens_k[b] .. cu_seqlens_k[b+1]-1 of K and
// V. The size words are B (the sequences), Hq, Hkv, max_seqlen_q and
// max_seqlen_k (at least every sequence's length: the grid's); each
// buffer's batch stride word is 0 and its head and row strides are the
// packed tensor's (Q: D and Hq*D when contiguous; LSE: head total_q),
// so that row r of sequence b is at (cu_seqlens[b] + r) * row stride +
// head * head stride. The grid is the dense or split-KV one with Lq =
// max_seqlen_q; the workgroups past a sequence's rows store nothing. A
// split-KV varlen kernel's workspace is [S*B, Hq, max_seqlen_q, D] (row r
// of sequence b). Causal is bottom-right within each sequence's own
// lengths; a sequence of no keys gives O = 0 and LSE = -inf. The kernel
// trusts cu_seqlens: the runtime checks them on the host before a launch.
//
// A mixed prefill/decode batch (fa.attention with `paged` and
// `varlen(%cu_seqlens_q)`, manifest `"paged": true, "varlen": true`; vLLM
// v1, flash_attn_varlen_func with block_table and seqused_k) takes version
// 4's 77 words: Q and O packed [total_q, Hq, D] and LSE [Hq, total_q] cut
// by cu_seqlens_q as a varlen kernel's, K and V the caches [num_pages,
// page_size, Hkv, D] of a paged kernel:
//
//   word 55..66: block_table, cache_seqlens, page_size and the table's row
//                stride, exactly as a paged kernel's
//   word 67..71: cu_seqlens_q   i32 [B+1]
//   word 72..76: cu_seqlens_k, a null descriptor (pointers, offset and size
//                0, stride 1): the kernel never reads it
//
// The size words are B, Hq, Hkv, max_seqlen_q and Lk, a bound on
// cache_seqlens (max(cache_seqlens) for a checked launch, as a paged
// kernel's); the Q, O and LSE strides are a varlen launch's (batch 0, the
// packed tensors' head and row strides), the K and V strides a paged
// launch's (page, head, row within a page). Sequence b's keys are its
// cache_seqlens[b] cache rows, and its Lq_b = cu_seqlens_q[b+1] -
// cu_seqlens_q[b] queries are the LAST Lq_b rows of the sequence (Lq_b <=
// cache_seqlens[b]): causal bottom-right with the sequence's own lengths
// (query i sees key j iff j <= i + Lk_b - Lq_b), and the window, ALiBi and
// the other position-dependent terms shifted by Lk_b - Lq_b likewise. A
// split-KV mixed kernel's workspace is [S*B, Hq, max_seqlen_q, D], as a
// varlen kernel's. The runtime checks the cache as a paged launch's and
// cu_seqlens_q and Lq_b <= cache_seqlens[b] on the host before a launch.
//
// Trace (a dense kernel compiled with `fac --trace`, manifest `"trace":
// true`; validation layer 2, docs/validation.md) appends 8 words to its
// version's words, which keep their meaning (only ABI version 1 has them
// today, so they are words 44..51):
//
//   word n+0..n+4: trace        f32 [n_blocks, 2 + D], a 5-word descriptor
//   word n+5..n+7: the traced batch b, query head h and query row r (int64)
//
// The workgroup that owns query row r of (b, h) writes, after K/V block j
// (of block_n keys) is folded into its online softmax, row j of the trace:
// m_j (the running max, in the kernel's units: scale * log2(e) * q.k, i.e.
// log2 units of the scaled logits), l_j (the running sum of exp2(s - m_j))
// and the D unnormalised running outputs acc_j (sum of exp2(s - m_j) * v;
// acc_j / l_j is the running output). Blocks the workgroup does not visit
// are not written. A null descriptor, or a row that no workgroup owns (r <
// 0), writes nothing, so a trace kernel launches like any other.
//
// Head parameters (ALiBi and attention sinks, FlashAttention 2's: a kernel
// whose manifest says `"alibi": true` and/or `"sinks": true`) append 10
// words to its version's words, which keep their meaning, before the trace
// words (a kernel has never both: `fac --trace` refuses these features):
//
//   word n+0..n+4: alibi_slopes f32 [Hq], a 5-word descriptor
//   word n+5..n+9: sinks        f32 [Hq], a 5-word descriptor
//
// (n = fa_abi_num_words(version)). A kernel with only one of the two is
// passed a null descriptor (pointers, offset and size 0, stride 1) for the
// other. Per query head h, with s_ij = scale * q_i.k_j capped by the softcap
// (c * tanh(s_ij / c)), ALiBi subtracts alibi_slopes[h] * |i + Lk - Lq - j|
// (the sequence's own Lq, Lk in a paged or varlen batch) before the masks;
// a sink adds exp(sinks[h]) once to each row's softmax denominator and
// nothing to its output: O_i = sum_j exp(s_ij) v_j / Z_i, LSE_i = log Z_i
// with Z_i = sum_j exp(s_ij) + exp(sinks[h]). A row that sees no key has
// O = 0 and LSE = sinks[h] (-inf without sinks). A split-KV kernel and its
// combine kernel take the same words (the combine kernel adds the sink
// once).
//
// Host target: the code object is an x86-64 ELF shared object that exports,
// for each kernel `<name>`, the entry point
//     void <name>_host(const uint64_t *args, fa_host_env *env);
// called once per (workgroup, thread) by the emulator. `args` is the word
// list above. Every field of `env` is read by the kernel; the callbacks are
// how barriers, cross-lane shuffles and (optionally) LDS access checking
// reach the emulator. The field order below is part of the ABI.
//
// Next to each entry point the code object exports the data symbol
//     const fa_host_info <name>_host_info;
// the facts the kernel was compiled with that memory safety depends on (LDS
// size, threads, element type, head dimension, ...). The manifest is a
// sidecar anyone can edit and its hash covers only the code object, so the
// runtime checks every such manifest field against this record and refuses
// a mismatch.
//
// Library: fa::runtime (libfa_runtime.so).
//
//===----------------------------------------------------------------------===//

#ifndef FA_KERNELABI_H
#define FA_KERNELABI_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The newest version; a kernel's own version (manifest `abi_version`,
/// fa_host_info::abi_version) is 1 (dense), 2 (split-KV), 3 (paged K/V) or
/// 4 (variable-length batches, and mixed batches: paged and varlen).
#define FA_ABI_VERSION 4

enum {
  FA_ABI_NUM_BUFFERS = 5, // Q, K, V, O, LSE
  FA_ABI_WORDS_PER_BUFFER = 5,
  FA_ABI_NUM_SIZES = 5, // B, Hq, Hkv, Lq, Lk
  FA_ABI_NUM_STRIDES = 14,
  FA_ABI_NUM_WORDS = FA_ABI_NUM_BUFFERS * FA_ABI_WORDS_PER_BUFFER +
                     FA_ABI_NUM_SIZES + FA_ABI_NUM_STRIDES, // 44
};

/// Index of the first word of each buffer descriptor.
enum {
  FA_ABI_Q = 0,
  FA_ABI_K = 5,
  FA_ABI_V = 10,
  FA_ABI_O = 15,
  FA_ABI_LSE = 20,
  FA_ABI_SIZES = 25, // B, Hq, Hkv, Lq, Lk
  FA_ABI_STRIDES =
      30, // q_b q_h q_l k_b k_h k_l v_b v_h v_l o_b o_h o_l lse_b lse_h
};

/// Version 2: the split-KV workspace and split count (see above).
enum {
  FA_ABI_V1_NUM_WORDS = 44,
  FA_ABI_WS_O = 44,
  FA_ABI_WS_LSE = 49,
  FA_ABI_SPLITS = 54,
  FA_ABI_V2_NUM_WORDS = 55,
  FA_ABI_BLOCK_TABLE = 55,
  FA_ABI_CACHE_SEQLENS = 60,
  FA_ABI_PAGE_SIZE = 65,
  FA_ABI_BLOCK_TABLE_STRIDE = 66,
  FA_ABI_V3_NUM_WORDS = 67,
  FA_ABI_CU_SEQLENS_Q = 67,
  FA_ABI_CU_SEQLENS_K = 72,
  FA_ABI_V4_NUM_WORDS = 77,
};

/// The words a kernel of ABI `version` takes, or 0 for an unknown version.
static inline uint32_t fa_abi_num_words(uint32_t version) {
  return version == 1   ? FA_ABI_V1_NUM_WORDS
         : version == 2 ? FA_ABI_V2_NUM_WORDS
         : version == 3 ? FA_ABI_V3_NUM_WORDS
         : version == 4 ? FA_ABI_V4_NUM_WORDS
                        : 0;
}

/// Head-parameter words, after the version's words (see above).
enum {
  FA_ABI_HEAD_WORDS = 10,
  FA_ABI_ALIBI = 0, ///< offset of alibi_slopes' descriptor in the head words
  FA_ABI_SINKS = 5, ///< offset of sinks' descriptor in the head words
};

/// Trace words, after the version's words (see above; ABI version 1 only).
enum {
  FA_ABI_TRACE_WORDS = 8,
  FA_ABI_TRACE_BUFFER = 0, ///< offset of the descriptor in the trace words
  FA_ABI_TRACE_ROW = 5,    ///< offset of b, h, r in the trace words
  FA_ABI_TRACE_STATS = 2,  ///< m and l before the D outputs of a block
};

/// The most words any kernel takes: version 4's and the head words.
enum { FA_ABI_MAX_WORDS = FA_ABI_V4_NUM_WORDS + FA_ABI_HEAD_WORDS };

/// The words a kernel of ABI `version` takes: its version's, then the head
/// words when `head_params` is set (manifest `alibi` or `sinks`), then the
/// trace words when `trace` is set; 0 for an unknown version, a trace
/// kernel of another version than 1, or a trace kernel with head
/// parameters.
static inline uint32_t fa_kernel_abi_words(uint32_t version, int trace,
                                           int head_params) {
  const uint32_t words = fa_abi_num_words(version);
  if (words == 0 || (trace && (version != 1 || head_params)))
    return 0;
  return words + (head_params ? FA_ABI_HEAD_WORDS : 0) +
         (trace ? FA_ABI_TRACE_WORDS : 0);
}

/// fa_kernel_abi_words of a kernel without head parameters.
static inline uint32_t fa_kernel_num_words(uint32_t version, int trace) {
  return fa_kernel_abi_words(version, trace, 0);
}

/// Shuffle modes, as in gpu.shuffle.
enum {
  FA_SHUFFLE_XOR = 0,
  FA_SHUFFLE_DOWN = 1,
  FA_SHUFFLE_UP = 2,
  FA_SHUFFLE_IDX = 3
};

/// Per-thread environment handed to a host-target kernel entry point.
typedef struct fa_host_env {
  void *emu;    ///< Emulator state, opaque to the kernel.
  uint8_t *lds; ///< This workgroup's LDS (lds_bytes long, 16-byte aligned).
  /// Workgroup barrier: returns when every thread of the workgroup arrived.
  void (*barrier)(void *emu);
  /// Cross-lane exchange within the calling thread's wave: returns `value`
  /// of the lane selected by (mode, offset, width) as gpu.shuffle defines.
  uint32_t (*shuffle)(void *emu, uint32_t value, uint32_t offset,
                      uint32_t width, uint32_t mode);
  /// Called before every LDS access with its address and size in bytes.
  void (*lds_access)(void *emu, const void *addr, uint32_t bytes,
                     uint32_t is_write);
  uint32_t thread_id[3];
  uint32_t block_id[3];
  uint32_t block_dim[3];
  uint32_t grid_dim[3];
  uint32_t wave_size;
  /// Called before a vector access whose address is not as aligned as the
  /// access claims (`claimed_align` bytes; the compiler's alignment
  /// attribute), with its address and size. The access then runs unaligned:
  /// a GPU would not necessarily fault, so the emulator reports it instead.
  void (*misaligned)(void *emu, const void *addr, uint32_t bytes,
                     uint32_t claimed_align, uint32_t is_write);
} fa_host_env;

typedef void (*fa_host_kernel_fn)(const uint64_t *args, fa_host_env *env);

/// A host kernel `<name>` exports its entry point as `<name>`
/// FA_HOST_ENTRY_SUFFIX and its fa_host_info as the entry point's name +
/// FA_HOST_INFO_SUFFIX.
#define FA_HOST_ENTRY_SUFFIX "_host"
#define FA_HOST_INFO_SUFFIX "_info"

/// Element types in fa_host_info::dtype.
enum { FA_HOST_DTYPE_F32 = 1, FA_HOST_DTYPE_F16 = 2, FA_HOST_DTYPE_BF16 = 3 };

/// What a host kernel was compiled with, exported next to its entry point.
/// Every field is 8-byte sized or paired so that the record has no padding;
/// the compiler emits it as sizeof(fa_host_info) / 8 64-bit words.
typedef struct fa_host_info {
  uint32_t abi_version; ///< the kernel's ABI: 1 dense, 2 split-KV, 3 paged
  uint32_t info_bytes;  ///< sizeof(fa_host_info) there
  /// fa_kernel_abi_words(abi_version, trace, alibi || sinks): words read
  uint32_t num_words;
  uint32_t env_bytes;   ///< sizeof(fa_host_env) the kernel was compiled for
  uint64_t lds_bytes;   ///< bytes of env->lds the kernel addresses
  uint32_t threads;     ///< threads per workgroup (block = (threads, 1, 1))
  uint32_t wave_size;
  uint32_t dtype; ///< FA_HOST_DTYPE_*
  uint32_t head_dim;
  uint32_t block_m;
  uint32_t block_n;
  uint32_t has_lse;    ///< 1: writes the LSE buffer
  uint32_t index_bits; ///< width of the index arithmetic
  /// Sizes fixed at compile time (B, Hq, Hkv, Lq, Lk); -1: any.
  int64_t static_sizes[5];
} fa_host_info;

#ifdef __cplusplus
} // extern "C"

// The compiler writes fa_host_env's fields by byte offset (offsetof) and
// fa_host_info as 64-bit words: both layouts must be the LP64 ones.
static_assert(sizeof(void *) == 8, "the host ABI assumes 64-bit pointers");
static_assert(sizeof(fa_host_env) == 104, "fa_host_env layout changed");
static_assert(sizeof(fa_host_info) % 8 == 0 && sizeof(fa_host_info) == 96,
              "fa_host_info must be a whole number of 64-bit words");
#endif

#endif // FA_KERNELABI_H
