//===- Module.h - Loaded code objects and their kernels ---------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// A Module is a code object loaded on a device together with its manifest;
// loading checks that the two belong together (size and hash), that the
// device runs the manifest's target, and that every kernel speaks an ABI
// version this runtime implements and fits the device. A Kernel launches one
// attention: it checks the arguments against the manifest and packs the ABI
// words exactly as KernelAbi.h lays them out: 44 for a dense kernel (version
// 1); 55 for a split-KV kernel (version 2), whose launch is two kernels, the
// split kernel and its combine kernel, over a workspace the runtime
// allocates; 67 for a kernel over a paged K/V cache (version 3, split-KV or
// not), whose block table and sequence lengths the runtime checks on the
// host before the launch (PagedKvArgs); 77 for a variable-length batch
// (version 4, split-KV or not), whose cu_seqlens the runtime checks on the
// host before the launch (VarlenArgs); 77 too for a mixed prefill/decode
// batch (version 4 with both `paged` and `varlen`: packed queries over a
// paged cache, AttentionArgs::paged and ::varlen together). A RawKernel is
// code compiled at run time (NVRTC, hiprtc) with no manifest, launched with
// a plain list of 8-byte parameters.
//
// Library: fa::runtime (libfa_runtime.so).
//
//===----------------------------------------------------------------------===//

#ifndef FA_MODULE_H
#define FA_MODULE_H

#include "fa/AttentionShape.h"
#include "fa/Device.h"
#include "fa/KernelAbi.h"
#include "fa/LaunchOptions.h"
#include "fa/Manifest.h"

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace fa {

namespace detail {
struct ModuleState;
struct RawKernelState;
} // namespace detail

class Kernel;

/// A read-only view of host int32 values: a pointer and a count, or a
/// std::vector (which must outlive the view).
struct Int32Span {
  const int32_t *data = nullptr;
  size_t size = 0;

  Int32Span() = default;
  Int32Span(const int32_t *data, size_t size) : data(data), size(size) {}
  Int32Span(const std::vector<int32_t> &values)
      : data(values.data()), size(values.size()) {}
  int32_t operator[](size_t i) const { return data[i]; }
};

/// The paged K/V cache of a launch of a paged kernel (manifest `paged`, ABI
/// version 3; the FlashAttention 2 / vLLM layout, KernelAbi.h). K and V
/// (AttentionArgs::k, v) are the caches [num_pages, page_size, Hkv, D]: key
/// n of sequence b is row n % page_size of page block_table[b][n /
/// page_size]. The kernel reads the device buffers and trusts them, as
/// FlashAttention's kernels do; the runtime checks the host copies, which
/// must hold what the device buffers hold (runtime/README.md, "Paged K/V
/// launches").
struct PagedKvArgs {
  /// int32 [B, maxPages] page indices, row-major, on the device.
  const Buffer *blockTable = nullptr;
  /// int32 [B]: the number of keys of each sequence, on the device.
  const Buffer *cacheSeqlens = nullptr;
  /// Rows per page (>= 1).
  int64_t pageSize = 0;
  /// block_table's columns, which are also its row stride (>= 1).
  int64_t maxPages = 0;
  /// The pages of each of the K and V caches (>= 1).
  int64_t numPages = 0;
  /// Host copies of block_table (B * maxPages entries) and cache_seqlens
  /// (B entries), checked before the launch.
  Int32Span hostBlockTable;
  Int32Span hostCacheSeqlens;
};

/// The sequences of a launch of a varlen kernel (manifest `varlen`, ABI
/// version 4; FlashAttention 2's flash_attn_varlen_func layout,
/// KernelAbi.h). Q and O (AttentionArgs::q, o) are packed [total_q, Hq, D],
/// K and V [total_k, Hkv, D], LSE [Hq, total_q]: sequence b is rows
/// cu_seqlens_q[b] .. cu_seqlens_q[b+1]-1 of Q, O and LSE and rows
/// cu_seqlens_k[b] .. cu_seqlens_k[b+1]-1 of K and V. The launch's
/// shape.batch is the number of sequences, shape.seqQ / shape.seqK are
/// max_seqlen_q / max_seqlen_k (at least every sequence's length; they size
/// the grid). The kernel reads the device buffers and trusts them, as
/// FlashAttention's kernels do; the runtime checks the host copies, which
/// must hold what the device buffers hold (runtime/README.md,
/// "Variable-length batches").
///
/// A mixed prefill/decode batch (a kernel whose manifest says both `paged`
/// and `varlen`; vLLM v1, flash_attn_varlen_func with block_table and
/// seqused_k) takes VarlenArgs and PagedKvArgs together: Q, O and LSE are
/// packed by cu_seqlens_q as above, K and V are the paged caches, and
/// sequence b's keys are its cache_seqlens[b] cache rows, of which its
/// queries are the last Lq_b = cu_seqlens_q[b+1] - cu_seqlens_q[b] (Lq_b <=
/// cache_seqlens[b]; causal bottom-right). There cuSeqlensK is null,
/// hostCuSeqlensK empty and totalK unused: the kernel is passed a null
/// cu_seqlens_k.
struct VarlenArgs {
  /// int32 [B+1] row offsets of the sequences in packed Q, O and LSE, on the
  /// device.
  const Buffer *cuSeqlensQ = nullptr;
  /// int32 [B+1] row offsets in packed K and V, on the device; null for a
  /// mixed batch.
  const Buffer *cuSeqlensK = nullptr;
  /// Rows of packed Q (and O, and LSE's row length): cu_seqlens_q[B].
  int64_t totalQ = 0;
  /// Rows of packed K and V: cu_seqlens_k[B]; unused by a mixed batch.
  int64_t totalK = 0;
  /// Host copies of cu_seqlens_q and cu_seqlens_k (B + 1 entries each),
  /// checked before the launch; hostCuSeqlensK empty for a mixed batch.
  Int32Span hostCuSeqlensQ;
  Int32Span hostCuSeqlensK;
};

/// The trace of a launch of a trace kernel (manifest `trace`, `fac
/// --trace`; KernelAbi.h, "Trace"): the buffer, f32 [n_blocks, 2 + D] with
/// n_blocks = ceil(Lk / block_n), and the query row whose online-softmax
/// state the kernel writes there after each K/V block. A trace kernel
/// launched without one writes nothing.
struct TraceArgs {
  Buffer *buffer = nullptr;
  int64_t batch = 0, head = 0, row = 0;
};

/// The f32 elements of a launch's trace buffer: ceil(Lk / block_n) rows of
/// 2 + D (m, l and the D running outputs).
int64_t traceElements(const KernelInfo &kernel, const AttentionShape &shape);

/// The buffers and sizes of one attention call. Q, K, V, O are required;
/// LSE must be given exactly when the kernel has an LSE output. Strides
/// default to contiguous BHLD.
struct AttentionArgs {
  const Buffer *q = nullptr;
  const Buffer *k = nullptr;
  const Buffer *v = nullptr;
  Buffer *o = nullptr;
  Buffer *lse = nullptr;
  AttentionShape shape;
  std::optional<AttentionStrides> strides;
  /// Exactly for a paged kernel: its K/V cache. Then shape.seqK is the
  /// longest sequence, max(cache_seqlens) (0 when every sequence is empty),
  /// and the K and V strides are (page, head, row within a page), by default
  /// those of contiguous [num_pages, page_size, Hkv, D] caches.
  std::optional<PagedKvArgs> paged;
  /// Exactly for a varlen kernel: its sequences. Then shape is (B, Hq, Hkv,
  /// max_seqlen_q, max_seqlen_k) (max_seqlen_k may be 0: every sequence
  /// without keys), and the strides are (0, head, row) of the packed tensors,
  /// by default contiguous ones (varlenStrides).
  /// Both `paged` and `varlen`, exactly for a kernel whose manifest says
  /// both: a mixed prefill/decode batch (VarlenArgs). Then shape is (B, Hq,
  /// Hkv, max_seqlen_q, max(cache_seqlens)), Q, O and LSE strides are the
  /// packed tensors' (batch stride 0) and K and V strides the caches' (page,
  /// head, row within a page); by default contiguous ones (varlenStrides,
  /// pagedCacheStrides).
  std::optional<VarlenArgs> varlen;
  /// Only for a trace kernel (manifest `trace`): its trace buffer and
  /// traced row; absent, the kernel writes no trace.
  std::optional<TraceArgs> trace;
  /// Exactly for a kernel whose manifest says `alibi`: the ALiBi slopes,
  /// f32 [Hq] on the device (at least Hq elements; query head h subtracts
  /// alibiSlopes[h] * |i + Lk - Lq - j| from its scores).
  const Buffer *alibiSlopes = nullptr;
  /// Exactly for a kernel whose manifest says `sinks`: the attention sinks,
  /// f32 [Hq] on the device (exp(sinks[h]) joins the softmax denominator of
  /// each row of query head h, and its LSE; KernelAbi.h, "Head
  /// parameters").
  const Buffer *sinks = nullptr;
};

/// The host-side checks of a paged cache's metadata for `batch` sequences,
/// in this order: page_size, max_pages and num_pages at least 1; the table
/// of batch * max_pages entries and the lengths of batch; then sequence by
/// sequence, cache_seqlens[b] non-negative and within max_pages pages, and
/// each entry block_table[b][p] the sequence uses (p < ceil(cache_seqlens[b]
/// / page_size)) in [0, num_pages). InvalidArgument naming the first bad
/// entry ("block_table[1][3] = 17 is out of range: the cache has 16
/// pages"). Entries past a sequence's pages are not checked (a kernel never
/// reads them). fa::validate's checkPagedProblem runs the same checks.
/// With `entries` false, only the checks before the table's and lengths'
/// entries (what a trusting enqueue checks).
Status checkPagedKvMetadata(int64_t batch, int64_t pageSize, int64_t maxPages,
                            int64_t numPages, Int32Span blockTable,
                            Int32Span cacheSeqlens, bool entries = true);

/// The host-side checks of a variable-length batch's metadata for `batch`
/// sequences, in this order: batch at least 1; then for cu_seqlens_q
/// (against totalQ and maxSeqlenQ) and then cu_seqlens_k: B + 1 entries,
/// the first 0, non-decreasing, the last the packed tensor's rows (total),
/// and no sequence longer than max_seqlen. InvalidArgument naming the
/// first bad entry ("cu_seqlens_q is not non-decreasing: cu_seqlens_q[3] =
/// 10 < cu_seqlens_q[2] = 12", "max_seqlen_k = 10 is less than the length of
/// sequence 3: cu_seqlens_k[4] - cu_seqlens_k[3] = 11"). fa::validate's
/// checkVarlenProblem runs the same checks.
/// With `entries` false, only B and total_q, total_k not negative (what a
/// trusting enqueue checks).
Status checkVarlenMetadata(int64_t batch, int64_t totalQ, int64_t totalK,
                           int64_t maxSeqlenQ, int64_t maxSeqlenK,
                           Int32Span cuSeqlensQ, Int32Span cuSeqlensK,
                           bool entries = true);

/// The host-side checks of a mixed prefill/decode batch's queries (paged
/// and varlen together; its cache is checked by checkPagedKvMetadata
/// first), in this order: batch in [1, 2^31 - 1]; cu_seqlens_q as
/// checkVarlenMetadata checks it (against totalQ and maxSeqlenQ, the same
/// messages); then, where `cacheSeqlens` has B entries, each sequence's
/// queries at most its keys ("sequence 1 has 3 queries but only 2 keys: a
/// mixed batch's queries are the last rows of their sequence"). With
/// `entries` false, only B and total_q not negative (what a trusting
/// enqueue checks without a host copy of cu_seqlens_q).
Status checkMixedMetadata(int64_t batch, int64_t totalQ, int64_t maxSeqlenQ,
                          Int32Span cuSeqlensQ, Int32Span cacheSeqlens,
                          bool entries = true);

/// The strides of contiguous packed tensors as the ABI passes them for a
/// varlen launch: Q and O (0, D, Hq * D), K and V (0, D, Hkv * D), LSE
/// [Hq, total_q] (batch 0, head total_q).
AttentionStrides varlenStrides(const AttentionShape &shape, int64_t headDim,
                               int64_t totalQ);

/// The strides of contiguous [num_pages, page_size, Hkv, D] caches as the
/// ABI passes them for K and V: (page, head, row within a page) =
/// (page_size * Hkv * D, D, Hkv * D).
TensorStrides pagedCacheStrides(int64_t pageSize, int64_t headsKv,
                                int64_t headDim);

/// Grid and workgroup size of a launch, from the ABI's formula.
struct LaunchGeometry {
  uint32_t grid[3] = {1, 1, 1};
  uint32_t block[3] = {1, 1, 1};
  uint64_t ldsBytes = 0;
  /// Grid x is tile * periodX + split (a split-KV kernel: periodX = S):
  /// workgroups whose x differ by a multiple of it do alike work. 1: no
  /// such structure (what the gfx906 timing model samples along x).
  uint32_t periodX = 1;
};

/// The most K/V splits a launch may ask for (LaunchOptions::kvSplits), and
/// the most the automatic choice picks.
constexpr int64_t maxKvSplits = 1024;
constexpr int64_t maxAutoKvSplits = 128;

/// How a launch of a kernel on a shape is split over K/V: S, and the
/// workspace it needs (none for a dense kernel, S = 1).
struct KvSplitPlan {
  int64_t kvSplits = 1;
  /// f32 [S*B, Hq, Lq, D] and f32 [S*B, Hq, Lq], contiguous (KernelAbi.h).
  uint64_t workspaceOBytes = 0;
  uint64_t workspaceLseBytes = 0;
};

/// The split plan of `kernel` on `shape` (for a paged kernel, shape.seqK is
/// the longest sequence and may be 0; for a varlen kernel shape.seqQ and
/// shape.seqK are max_seqlen_q and max_seqlen_k, the latter may be 0). For a
/// split-KV kernel S is `requested` (1 to maxKvSplits), or for 0 the automatic
/// choice: with W = ceil(R / block_m) * Hg * B workgroups per split, n =
/// ceil(Lk / block_n) K/V blocks and k * CUs workgroups resident at a time (k =
/// residentPerComputeUnit), the S in [1, min(maxAutoKvSplits, n)] of least
///   16 * ceil(W * S / (k * CUs)) * (ceil(n / S) + 1) + S
/// (rounds of the device times the blocks of one split plus one for its
/// prologue and epilogue, plus S / 16 blocks for the combine kernel, which
/// reads each row's S partials one after another), the smallest on a tie;
/// R, Hg = Lq, Hq, or Lq * Hq/Hkv, Hkv for a gqa_packed kernel, and CUs =
/// limits.computeUnits (at least 1). A dense kernel takes `requested`
/// 0 or 1. A split_direct kernel at S = 1 needs no workspace (its sizes 0).
/// InvalidArgument for another count or a workspace whose size overflows 64
/// bits.
/// Workgroups of `kernel` one compute unit holds at a time, from the
/// manifest's `resources`: sm_90's `blocks_per_sm_estimate`, gfx906's
/// `workgroups_per_cu_estimate`, or (an older gfx906 manifest) 4 *
/// `waves_per_simd_estimate` / waves per workgroup (at least 1); 2 where
/// the manifest has none (the host emulator's kernels).
int64_t residentPerComputeUnit(const KernelInfo &kernel);

Expected<KvSplitPlan> planKvSplits(const KernelInfo &kernel,
                                   const AttentionShape &shape,
                                   const DeviceLimits &limits,
                                   int64_t requested);

/// The packed argument words and geometry of one launch.
struct PackedLaunch {
  std::array<uint64_t, FA_ABI_MAX_WORDS> words{};
  /// The words the kernel takes: fa_kernel_abi_words(its abi_version,
  /// trace, alibi || sinks).
  uint32_t numWords = FA_ABI_V1_NUM_WORDS;
  LaunchGeometry geometry;
  /// Split-KV (ABI version 2, or 3 with kv_splits): S (word FA_ABI_SPLITS
  /// too; 1 for a paged or varlen kernel that is not split-KV) and the
  /// workspace
  /// to bind (bindWorkspace), and the combine kernel's launch, which takes
  /// the same words after the split kernel's.
  KvSplitPlan split;
  std::optional<LaunchGeometry> combineGeometry;
};

/// Checks `args` against `kernel` (shape, strides, buffer sizes, LSE) and
/// `limits` (grids), and packs the ABI words. For a split-KV kernel
/// `combine` is its combine kernel and `kvSplits` the requested S
/// (planKvSplits); the workspace words stay 0 until bindWorkspace. For a
/// paged kernel `args.paged` is required (and refused for any other): its
/// metadata is checked (checkPagedKvMetadata, and shape.seqK =
/// max(cache_seqlens)), the caches' and metadata buffers' sizes too, and
/// words 55-66 packed; a paged kernel that is not split-KV gets null
/// workspace descriptors and S = 1. For a varlen kernel `args.varlen` is
/// required (and refused for any other): its cu_seqlens are checked
/// (checkVarlenMetadata against shape.seqQ / seqK as max_seqlen_q / k), the
/// packed tensors' and cu_seqlens buffers' sizes too, and words 67-76
/// packed; words 55-66 are null (descriptors of pointer, offset and size 0,
/// stride 1; page size and table stride 0), and a varlen kernel that is not
/// split-KV gets null workspace descriptors and S = 1. For a mixed kernel
/// (manifest paged and varlen) both are required (and refused for any
/// other): the paged metadata is checked as above, cu_seqlens_q and each
/// sequence's queries against its keys by checkMixedMetadata, words 55-66
/// and 67-71 packed and words 72-76 a null cu_seqlens_k (VarlenArgs'
/// cuSeqlensK and hostCuSeqlensK must be null and empty). A combine kernel is
/// not packed on its own. A kernel with alibi or sinks gets the head words
/// after its version's (KernelAbi.h, "Head parameters"): args.alibiSlopes
/// and args.sinks, each required exactly when the manifest says so and of
/// at least Hq f32 elements, a null descriptor for the one it lacks.
/// InvalidArgument on any mismatch, naming the buffer,
/// size or entry and the numbers involved.
///
/// With `trustDeviceMetadata` (Kernel::enqueue), the host copies of a paged
/// or varlen launch's metadata are optional: given, they are checked as
/// above; absent, the kernel trusts the device buffers, as FlashAttention's
/// do, and only what needs no entry is checked (page_size, max_pages and
/// num_pages at least 1; total_q and total_k not negative). A paged launch's
/// shape.seqK is then a bound on cache_seqlens (at most max_pages *
/// page_size), not necessarily its maximum, so that a captured launch
/// serves later lengths.
Expected<PackedLaunch> packAttentionArgs(const KernelInfo &kernel,
                                         const AttentionArgs &args,
                                         const DeviceLimits &limits,
                                         const KernelInfo *combine = nullptr,
                                         int64_t kvSplits = 0,
                                         bool trustDeviceMetadata = false);

/// The caller's workspace of a split-KV enqueue (Kernel::enqueue) is one
/// buffer: workspace O (f32 [S*B, Hq, Lq, D]) at offset 0 and workspace LSE
/// (f32 [S*B, Hq, Lq]) at workspaceLseOffset, the O part's bytes rounded up
/// to 256. workspaceBytes is the whole: what Kernel::workspaceSize says and
/// the AOT launcher's <name>_workspace_size computes.
constexpr uint64_t kWorkspaceAlign = 256;
uint64_t workspaceLseOffset(const KvSplitPlan &plan);
uint64_t workspaceBytes(const KvSplitPlan &plan);

/// Writes the workspace descriptors (words FA_ABI_WS_O, FA_ABI_WS_LSE) of a
/// split-KV launch packed by packAttentionArgs for kernel `kernel`:
/// InvalidArgument if the launch is not split-KV or a buffer holds less
/// than its plan needs.
Status bindWorkspace(PackedLaunch &packed, const KernelInfo &kernel,
                     const Buffer &workspaceO, const Buffer &workspaceLse);
/// bindWorkspace over one caller buffer laid out as workspaceBytes says: O
/// over [0, workspaceLseOffset), LSE over the rest. InvalidArgument, naming
/// the bytes needed, when it holds less than workspaceBytes(plan).
Status bindWorkspace(PackedLaunch &packed, const KernelInfo &kernel,
                     const Buffer &workspace);

/// What a launch ran, for a caller that asks (Kernel::launch).
struct LaunchInfo {
  /// The K/V splits S: 1 for a dense kernel.
  int64_t kvSplits = 1;
  LaunchGeometry geometry;
  /// Split-KV: the combine kernel's launch.
  std::optional<LaunchGeometry> combineGeometry;
  /// Split-KV: this launch allocated its workspace (the kernel's first
  /// launch, one that needed more than any workspace it kept, or one that
  /// ran while other launches of it held theirs); else it reused one.
  bool workspaceAllocated = false;
};

/// A code object loaded on a device. Copies share the loaded object, which
/// is unloaded when the last Module or Kernel referring to it goes away.
class Module {
public:
  /// Loads `path` and its sidecar manifest `<path>.json`. `path` may also
  /// name the manifest itself (`*.json`); the code object is then its
  /// `code_object.file`, relative to the manifest's folder.
  static Expected<Module> load(const Device &device, const std::string &path);

  /// Reads the manifest of `path` (`<path>.json`, or `path` itself when it
  /// names a `*.json`) without loading anything, e.g. to pick a device for
  /// its target: `Device::open("auto", manifest->target)`.
  static Expected<Manifest> readManifest(const std::string &path);

  /// Loads a code object held in memory with the manifest text.
  /// `displayName` appears in errors in place of a file name.
  static Expected<Module> loadFromMemory(const Device &device,
                                         const void *codeObject, size_t bytes,
                                         std::string_view manifestJson,
                                         std::string displayName = "<memory>");

  const Manifest &manifest() const;
  /// The code object's file name (or display name).
  const std::string &path() const;

  /// The kernel called `name`; if `name` is empty, the first kernel that is
  /// not a combine kernel (one is launched by its split kernel).
  Expected<Kernel> kernel(std::string_view name = {}) const;

private:
  explicit Module(std::shared_ptr<detail::ModuleState> state)
      : state(std::move(state)) {}
  static Expected<Module> loadBytes(const Device &device, Manifest manifest,
                                    std::vector<uint8_t> bytes,
                                    std::string displayName);
  std::shared_ptr<detail::ModuleState> state;
};

/// One kernel of a loaded module; cheap to copy.
class Kernel {
public:
  const KernelInfo &info() const;
  const std::string &name() const { return info().name; }
  const Manifest &manifest() const;
  /// The device the module is loaded on.
  Device device() const;

  /// Checks and packs `args` and runs the kernel to completion; `launched`,
  /// if given, receives what ran. A split-KV kernel runs as two launches: the
  /// split kernel, then its combine kernel, with the same words over a
  /// workspace that this Kernel keeps for the next launch. A combine kernel
  /// cannot be launched on its own (InvalidArgument naming its split
  /// kernel).
  Status launch(const AttentionArgs &args, const LaunchOptions &options = {},
                LaunchInfo *launched = nullptr) const;

  /// The engine's launch: checks and packs `args` as launch() does and
  /// enqueues the kernel (a split-KV kernel: the split kernel, then its
  /// combine kernel) on `stream` (a CUstream / hipStream_t; null: the
  /// legacy default stream), then returns. It does not synchronise,
  /// allocate device memory, copy between host and device or read device
  /// memory. Errors the driver reports at the launch are returned; a fault
  /// of the running kernel shows where the caller synchronises, as CUDA's
  /// and HIP's own launches do. A split-KV kernel needs `workspace`, at
  /// least workspaceSize() bytes of this device (it may be a wrapped
  /// buffer) that no other launch in flight uses; a dense kernel ignores it.
  /// A split_direct kernel (KernelInfo::splitDirect) given no workspace and
  /// kvSplits 0 runs one split, which writes O itself, without the combine
  /// kernel. The metadata of a paged or varlen launch is trusted where its host
  /// copies are not given (packAttentionArgs' trustDeviceMetadata;
  /// checkMetadata() checks the device copies). LaunchOptions::kvSplits
  /// applies; checkGuards does not (it reads device memory), nor do the
  /// emulator's options on GPUs. On the host emulator and gfx906-sim the
  /// stream is not used: the launch runs to completion within the call.
  /// A stream of another device is refused (InvalidArgument) where the
  /// vendor runtime can say whose it is (CUDA: cuStreamGetCtx; HIP:
  /// hipStreamGetDevice, ROCm 5.6 and later).
  Status enqueue(const AttentionArgs &args, void *stream,
                 const Buffer *workspace, const LaunchOptions &options = {},
                 LaunchInfo *launched = nullptr) const;

  /// Bytes of the workspace an enqueue of this kernel on `shape` with
  /// `kvSplits` (0: the runtime's choice on this device) needs: 0 for a
  /// dense kernel and a split_direct kernel at S = 1 (workspaceBytes; for a
  /// paged kernel shape.seqK is the bound the enqueue will pass). InvalidArgument as planKvSplits.
  Expected<uint64_t> workspaceSize(const AttentionShape &shape,
                                   int64_t kvSplits = 0) const;

  /// Reads the device copies of a paged or varlen launch's metadata (this
  /// synchronises with the device) and checks them as the blocking launch
  /// checks its host copies (checkPagedKvMetadata / checkVarlenMetadata,
  /// and for a mixed batch checkPagedKvMetadata then checkMixedMetadata;
  /// a paged shape.seqK must bound every cache_seqlens). What an engine
  /// calls once while debugging, or where it cannot vouch for its tables.
  /// Nothing to check for a dense launch.
  Status checkMetadata(const AttentionArgs &args) const;

private:
  friend class Module;
  Kernel(std::shared_ptr<detail::ModuleState> state, size_t index)
      : state(std::move(state)), index(index) {}
  std::shared_ptr<detail::ModuleState> state;
  size_t index;
};

/// One kernel of a code object compiled at run time for a GPU device
/// (NVRTC's cubin or PTX, hiprtc's hsaco), with no manifest: what the device
/// reference of fa::validate launches. It is not an fa attention kernel, so
/// nothing is checked against the ABI of KernelAbi.h; its parameters are
/// 8-byte words (pointers, int64, double bits), in order: the CUDA backend
/// passes one pointer per word, the HIP backend the words as the kernarg
/// buffer. Copies share the loaded code, unloaded with the last copy.
class RawKernel {
public:
  /// Loads `bytes`, a code object in `format` ("cubin", "ptx" with its
  /// terminating NUL, or "hsaco") that holds the extern "C" kernel `symbol`,
  /// to be launched with at most `maxThreads` threads per workgroup.
  /// Unsupported on the host emulator; LoadFailed, naming the driver call,
  /// when the driver refuses the code.
  static Expected<RawKernel> load(const Device &device,
                                  const std::vector<uint8_t> &bytes,
                                  const std::string &format,
                                  const std::string &symbol,
                                  int64_t maxThreads);

  /// Runs the kernel to completion on the grid and workgroup of `geometry`
  /// with the `count` parameter words at `params`.
  Status launch(const LaunchGeometry &geometry, const uint64_t *params,
                size_t count) const;

private:
  explicit RawKernel(std::shared_ptr<detail::RawKernelState> state)
      : state(std::move(state)) {}
  std::shared_ptr<detail::RawKernelState> state;
};

} // namespace fa

#endif // FA_MODULE_H
