/*===- fa_runtime.h - C API of the fa runtime ------------------------------===*
 *
 * Part of the fa project.
 *
 *===----------------------------------------------------------------------===*
 *
 * A small C interface over the C++ runtime for applications and language
 * bindings: devices, buffers, modules and attention launches. Every call
 * returns FA_OK (0) or an error code (the values of fa::ErrorCode); the
 * message of the calling thread's last error is fa_last_error(). Handles are
 * owned by the caller and released with the matching *_free / *_close call.
 * No C++ exception crosses this interface: one raised inside a call becomes
 * FA_ERROR_OUT_OF_MEMORY (std::bad_alloc) or FA_ERROR_INTERNAL with its
 * message. It exposes no validation (fa::validate has no C API).
 *
 * Library: fa::runtime (libfa_runtime.so).
 *
 *===----------------------------------------------------------------------===*/

#ifndef FA_RUNTIME_C_H
#define FA_RUNTIME_C_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef int fa_status;
#define FA_OK 0
/* The error codes: fa::ErrorCode (fa/Status.h) in the same order. */
#define FA_ERROR_INVALID_ARGUMENT 1
#define FA_ERROR_NOT_FOUND 2
#define FA_ERROR_UNAVAILABLE 3
#define FA_ERROR_UNSUPPORTED 4
#define FA_ERROR_CORRUPT_CODE_OBJECT 5
#define FA_ERROR_MANIFEST 6
#define FA_ERROR_LOAD_FAILED 7
#define FA_ERROR_OUT_OF_MEMORY 8
#define FA_ERROR_IO 9
#define FA_ERROR_LAUNCH_FAILED 10
#define FA_ERROR_RACE_DETECTED 11
#define FA_ERROR_BARRIER_DIVERGENCE 12
#define FA_ERROR_INTERNAL 13

typedef struct fa_device fa_device;
typedef struct fa_buffer fa_buffer;
typedef struct fa_module fa_module;

/** The last error of the calling thread, with its context ("" if none). */
const char *fa_last_error(void);

/** Opens "auto", "host", "hip[:N]" or "cuda[:N]". */
fa_status fa_device_open(const char *spec, fa_device **out);
void fa_device_close(fa_device *device);
/** The opened device's name ("host", ...); valid until it is closed. */
const char *fa_device_name(const fa_device *device);

fa_status fa_buffer_alloc(fa_device *device, size_t bytes, fa_buffer **out);
/** A buffer over `bytes` of memory at `pointer` that the caller allocated
 * and keeps (an engine's tensor): device memory of this GPU for cuda and
 * hip, host memory for host and gfx906-sim. fa never frees it; the memory
 * must outlive the buffer and every launch that uses it. It has no guard
 * zones, so a write past its end is not reported. fa_buffer_free releases
 * the handle only. */
fa_status fa_buffer_wrap(fa_device *device, void *pointer, size_t bytes,
                         fa_buffer **out);
/** Frees an allocated buffer's memory (a wrapped one's handle only). */
void fa_buffer_free(fa_buffer *buffer);
size_t fa_buffer_size(const fa_buffer *buffer);
fa_status fa_buffer_write(fa_buffer *buffer, size_t offset, const void *src,
                          size_t bytes);
fa_status fa_buffer_read(const fa_buffer *buffer, size_t offset, void *dst,
                         size_t bytes);

/** Loads a code object and its sidecar manifest `<path>.json`. */
fa_status fa_module_load(fa_device *device, const char *path, fa_module **out);
void fa_module_unload(fa_module *module);

/** One attention call; see KernelAbi.h for the meaning of every field. */
typedef struct fa_attention_args {
  const fa_buffer *q, *k, *v;
  fa_buffer *o;
  fa_buffer *lse; /**< NULL unless the kernel writes LSE */
  int64_t batch, heads_q, heads_kv, seq_q, seq_k;
  /** The 14 ABI strides in ABI order, or NULL for contiguous BHLD. */
  const int64_t *strides;
  /** Host device: check LDS accesses for races. */
  int check_races;
} fa_attention_args;

/** Launches kernel `kernel` (NULL: the first that is not a combine kernel)
 * and waits for it. A split-KV kernel runs with its combine kernel over a
 * workspace the module keeps (at one split, a kernel whose manifest says
 * split_direct runs alone); the runtime chooses the number of splits. */
fa_status fa_module_launch(fa_module *module, const char *kernel,
                           const fa_attention_args *args);

/** Per-launch options (zero-initialize, then set what you need). */
typedef struct fa_launch_options {
  /** Split-KV kernels: the number of K/V splits, 1 to 1024, or 0 to let the
   * runtime choose (about two workgroups per compute unit). A dense kernel
   * takes 0 or 1. */
  int64_t kv_splits;
  /** Set by the launch: the number of K/V splits it used (1 for a dense
   * kernel). */
  int64_t kv_splits_used;
} fa_launch_options;

/** fa_module_launch with `options` (NULL: as fa_module_launch). */
fa_status fa_module_launch_with_options(fa_module *module, const char *kernel,
                                        const fa_attention_args *args,
                                        fa_launch_options *options);

/** The paged K/V cache of a kernel whose manifest says "paged": true (ABI
 * version 3, KernelAbi.h; FlashAttention 2 / vLLM's layout): the K and V
 * buffers of fa_attention_args are caches [num_pages, page_size, heads_kv,
 * D], and key n of sequence b is row n % page_size of page
 * block_table[b][n / page_size]. The kernel reads the device buffers and
 * trusts them; the runtime checks the host copies before the launch (every
 * table entry a sequence uses in [0, num_pages), every length in [0,
 * max_pages * page_size]), which must hold what the device buffers hold. */
typedef struct fa_paged_kv {
  const fa_buffer *block_table;   /**< int32 [batch, max_pages], device */
  const fa_buffer *cache_seqlens; /**< int32 [batch], device */
  int64_t page_size;              /**< rows per page, >= 1 */
  int64_t max_pages; /**< block_table's columns (its row stride), >= 1 */
  int64_t num_pages; /**< pages of each of the K and V caches, >= 1 */
  const int32_t *host_block_table;   /**< batch * max_pages entries */
  const int32_t *host_cache_seqlens; /**< batch entries */
} fa_paged_kv;

/** Launches paged kernel `kernel` (NULL: the first that is not a combine
 * kernel) over the cache `paged` and waits for it. In `args`, seq_k is the
 * longest sequence, max(cache_seqlens) (0 when every sequence is empty), and
 * `strides`, if given, holds K's and V's as (page, head, row within a page);
 * NULL strides: contiguous Q, O, LSE and caches. `options` may be NULL. A
 * dense kernel refuses `paged`, a paged kernel refuses the other launch
 * calls. */
fa_status fa_module_launch_paged(fa_module *module, const char *kernel,
                                 const fa_attention_args *args,
                                 const fa_paged_kv *paged,
                                 fa_launch_options *options);

/** The sequences of a kernel whose manifest says "varlen": true (ABI version
 * 4, KernelAbi.h; FlashAttention 2's flash_attn_varlen_func layout): the Q
 * and O buffers of fa_attention_args are packed [total_q, heads_q, D], K
 * and V [total_k, heads_kv, D], LSE [heads_q, total_q]; sequence b is rows
 * cu_seqlens_q[b] .. cu_seqlens_q[b+1]-1 of Q, O and LSE and rows
 * cu_seqlens_k[b] .. cu_seqlens_k[b+1]-1 of K and V. The kernel reads the
 * device buffers and trusts them; the runtime checks the host copies before
 * the launch (batch + 1 entries each, from 0, non-decreasing, ending at
 * total_q / total_k, no sequence longer than seq_q / seq_k), which must hold
 * what the device buffers hold. */
typedef struct fa_varlen {
  const fa_buffer *cu_seqlens_q;    /**< int32 [batch + 1], device */
  const fa_buffer *cu_seqlens_k;    /**< int32 [batch + 1], device */
  int64_t total_q;                  /**< rows of packed Q and O */
  int64_t total_k;                  /**< rows of packed K and V */
  const int32_t *host_cu_seqlens_q; /**< batch + 1 entries */
  const int32_t *host_cu_seqlens_k; /**< batch + 1 entries */
} fa_varlen;

/** Launches varlen kernel `kernel` (NULL: the first that is not a combine
 * kernel) over the sequences `varlen` and waits for it. In `args`, batch is
 * the number of sequences, seq_q and seq_k are max_seqlen_q and max_seqlen_k
 * (at least every sequence's length; seq_k may be 0), and `strides`, if
 * given, holds the packed tensors' (0, head, row) strides and LSE's (0,
 * head); NULL strides: contiguous packed tensors. `options` may be NULL. A
 * dense or paged kernel refuses `varlen`, a varlen kernel refuses the other
 * launch calls. */
fa_status fa_module_launch_varlen(fa_module *module, const char *kernel,
                                  const fa_attention_args *args,
                                  const fa_varlen *varlen,
                                  fa_launch_options *options);

/** Launches a mixed prefill/decode kernel (its manifest says both "paged"
 * and "varlen": true; ABI version 4, KernelAbi.h; vLLM v1, FlashAttention
 * 2's flash_attn_varlen_func with block_table and seqused_k) and waits for
 * it: the Q and O buffers of fa_attention_args are packed [total_q,
 * heads_q, D] and LSE [heads_q, total_q], cut by varlen->cu_seqlens_q, and
 * K and V are the caches of `paged`; sequence b's keys are its
 * cache_seqlens[b] cache rows and its queries are the last Lq_b =
 * cu_seqlens_q[b+1] - cu_seqlens_q[b] of them (causal bottom-right; Lq_b at
 * most cache_seqlens[b], checked). varlen->cu_seqlens_k and
 * host_cu_seqlens_k must be NULL (total_k is unused). In `args`, batch is
 * the number of sequences, seq_q max_seqlen_q and seq_k max(cache_seqlens);
 * `strides`, if given, holds Q's, O's and LSE's packed (0, head, row) and
 * K's and V's (page, head, row within a page). Passing both `paged` and
 * `varlen` to fa_module_launch_heads, fa_module_enqueue(_heads) or
 * fa_module_check_metadata is the same mixed launch; a kernel that is not
 * mixed refuses both. */
fa_status fa_module_launch_mixed(fa_module *module, const char *kernel,
                                 const fa_attention_args *args,
                                 const fa_paged_kv *paged,
                                 const fa_varlen *varlen,
                                 fa_launch_options *options);

/** The head parameters of a kernel whose manifest says "alibi": true and/or
 * "sinks": true (KernelAbi.h, "Head parameters"; FlashAttention 2's ALiBi,
 * gpt-oss's attention sinks): f32 [heads_q] device buffers, each given
 * exactly when the kernel takes it (NULL otherwise). Query head h subtracts
 * alibi_slopes[h] * |i + seq_k - seq_q - j| from its scores; exp(sinks[h])
 * joins each of its rows' softmax denominator (and LSE), never the output. */
typedef struct fa_head_params {
  const fa_buffer *alibi_slopes; /**< f32 [heads_q], device, or NULL */
  const fa_buffer *sinks;        /**< f32 [heads_q], device, or NULL */
} fa_head_params;

/** The blocking launch of any kernel with head parameters `heads` (NULL: none,
 * as the other launch calls): dense, or over `paged` or `varlen`, or both
 * for a mixed kernel (fa_module_launch_mixed); their host copies required,
 * as fa_module_launch_paged, fa_module_launch_varlen and
 * fa_module_launch_mixed. `options` may be NULL. A kernel with alibi or
 * sinks refuses the launch calls without `heads`. */
fa_status fa_module_launch_heads(fa_module *module, const char *kernel,
                                 const fa_attention_args *args,
                                 const fa_paged_kv *paged,
                                 const fa_varlen *varlen,
                                 const fa_head_params *heads,
                                 fa_launch_options *options);

/*===----------------------------------------------------------------------===*
 * The engine's launch: the caller's memory, stream and workspace.
 *===----------------------------------------------------------------------===*/

/** Options of fa_module_enqueue (zero-initialize, then set what you need). */
typedef struct fa_enqueue_options {
  /** CUstream / hipStream_t; NULL: the legacy default stream. The host
   * emulator and gfx906-sim ignore it and run the launch within the call. */
  void *stream;
  /** Split-KV kernels: at least fa_module_workspace_size bytes of this
   * device (a wrapped buffer is fine) that no launch still in flight uses.
   * Dense kernels ignore it. NULL with kv_splits 0 on a kernel whose
   * manifest says split_direct: one split, which writes O itself (no
   * workspace, no combine kernel). */
  fa_buffer *workspace;
  /** As fa_launch_options: 0 lets the runtime choose. */
  int64_t kv_splits;
  /** Set by the call: the K/V splits enqueued (1 for a dense kernel). */
  int64_t kv_splits_used;
} fa_enqueue_options;

/** Checks and packs the arguments and enqueues kernel `kernel` (NULL: the
 * first that is not a combine kernel) on options->stream: a split-KV kernel,
 * then its combine kernel, in order. Returns once they are enqueued: it does
 * not synchronise, allocate device memory, copy between host and device or
 * read device memory, so a CUDA/HIP graph can capture it. Errors the driver
 * reports at the launch are returned; a fault of the running kernel shows
 * where the caller synchronises (as with cuLaunchKernel).
 *
 * `paged` or `varlen` (NULL for a dense kernel; both for a mixed kernel,
 * fa_module_launch_mixed) describe the metadata as for the blocking calls, but
 * their host copies are optional: given, they are checked; NULL, the kernel
 * trusts the device buffers, as FlashAttention does (fa_module_check_metadata
 * checks those). For a paged kernel seq_k bounds cache_seqlens (at most
 * max_pages * page_size), so one captured launch serves later lengths.
 * `options` may be NULL for a dense kernel.
 *
 * Threads: a module may be enqueued from several threads at once, each with
 * its own outputs and workspace; see runtime/README.md, "Threads". */
fa_status fa_module_enqueue(fa_module *module, const char *kernel,
                            const fa_attention_args *args,
                            const fa_paged_kv *paged, const fa_varlen *varlen,
                            fa_enqueue_options *options);

/** fa_module_enqueue with head parameters `heads` (fa_head_params; NULL:
 * none): the engine's launch of a kernel with alibi or sinks. */
fa_status fa_module_enqueue_heads(fa_module *module, const char *kernel,
                                  const fa_attention_args *args,
                                  const fa_paged_kv *paged,
                                  const fa_varlen *varlen,
                                  const fa_head_params *heads,
                                  fa_enqueue_options *options);

/** Bytes of the workspace fa_module_enqueue needs for kernel `kernel` on the
 * shape of `args` (only its sizes are read; seq_k of a paged kernel is the
 * bound the enqueue will pass) with `kv_splits` (0: the runtime's choice on
 * this device, as the enqueue makes it): 0 for a dense kernel, and for a
 * split_direct kernel at one split. */
fa_status fa_module_workspace_size(fa_module *module, const char *kernel,
                                   const fa_attention_args *args,
                                   int64_t kv_splits, size_t *bytes);

/** Reads the device copies of a paged, varlen or mixed launch's metadata
 * (this synchronises with the device) and checks them as the blocking calls
 * check their host copies: every table entry a sequence uses in [0,
 * num_pages), lengths within max_pages pages and at most seq_k; cu_seqlens
 * from 0, non-decreasing, ending at total_q / total_k, no sequence longer
 * than seq_q / seq_k; for a mixed batch (both given) no sequence with more
 * queries than keys. FA_OK for a dense kernel. */
fa_status fa_module_check_metadata(fa_module *module, const char *kernel,
                                   const fa_attention_args *args,
                                   const fa_paged_kv *paged,
                                   const fa_varlen *varlen);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* FA_RUNTIME_C_H */
