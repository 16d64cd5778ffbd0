//===- Manifest.h - The sidecar manifest of a code object -------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The manifest (`<code object>.json`, docs/manifest.md) tells the runtime how
// to launch each kernel of a code object without the compiler: target, the
// code object's size and FNV-1a hash, and per kernel its ABI version, element
// type, head dimension, causal flag, sliding window, softcap, ALiBi and
// attention sinks, scale, LSE output and tile/launch sizes, for a split-KV
// attention (ABI version 2) which kernel combines its splits, whether K and V
// are a paged cache (ABI version 3), and whether the batch is of
// variable-length sequences (ABI version 4). This header reads, checks and
// writes it; fac fills a Manifest and writes it with formatManifest, so there
// is one writer and one hash.
//
// Library: fa::runtime (libfa_runtime.so).
//
//===----------------------------------------------------------------------===//

#ifndef FA_MANIFEST_H
#define FA_MANIFEST_H

#include "fa/DType.h"
#include "fa/Status.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace fa {

/// What a kernel is launched for (manifest field `role`).
enum class KernelRole {
  /// An attention, launched by Kernel::launch (`"attention"`, the default).
  Attention,
  /// The second kernel of a split-KV attention (`"combine"`): it merges the
  /// splits' partial results and runs only after its split kernel.
  Combine,
};

/// One entry of `kernels[]`.
struct KernelInfo {
  std::string name;
  std::string symbol;
  int64_t abiVersion = 0;
  DType dtype = DType::F32;
  int64_t headDim = 0;
  bool causal = false;
  /// The sliding window (`window_left`, `window_right`, optional, -1 =
  /// unbounded, FlashAttention 2's window_size): query i of Lq sees key j of
  /// Lk only if j >= i + Lk - Lq - windowLeft (when windowLeft >= 0) and
  /// j <= i + Lk - Lq + windowRight (when windowRight >= 0), on top of the
  /// causal mask. A compile-time property: the ABI does not change.
  int64_t windowLeft = -1;
  int64_t windowRight = -1;
  /// `softcap`, optional [0 = none]: scores s = scale * q.k become
  /// softcap * tanh(s / softcap) before masking and the softmax.
  double softcap = 0;
  double scale = 0;
  bool hasLse = false;
  int64_t blockM = 0;
  int64_t blockN = 0;
  int64_t threads = 0;
  int64_t waveSize = 0;
  /// Static LDS / shared memory the kernel allocates itself.
  int64_t ldsBytes = 0;
  /// Dynamic shared memory to pass at launch (CUDA's sharedMemBytes, for
  /// kernels above the 48 KiB static limit); manifest field
  /// `dynamic_lds_bytes`, optional, default 0. A kernel needs ldsBytes +
  /// dynamicLdsBytes in all.
  int64_t dynamicLdsBytes = 0;
  /// Width of the kernel's index arithmetic: 64, or 32 (sm_90 by default),
  /// in which case every element offset of a launch must fit in int32
  /// (manifest field `index_bits`, optional, default 64).
  int64_t indexBits = 64;
  /// Sizes fixed at compile time, in the order B, Hq, Hkv, Lq, Lk; -1 where
  /// the kernel takes any size (manifest field `static_sizes`, optional).
  int64_t staticSizes[5] = {-1, -1, -1, -1, -1};
  /// Informational compile-time facts (optional fields): the largest LDS row
  /// padding in bytes (`lds_pad`), the K/V pipeline depth (`stages`), and the
  /// backend's resource figures in its own names and order (`resources`,
  /// e.g. gfx906 "vgprs", sm_90 "registers"), all integers.
  int64_t ldsPad = 0;
  int64_t stages = 1;
  std::vector<std::pair<std::string, int64_t>> resources;
  /// `role`, optional: "attention" [default] or "combine".
  KernelRole role = KernelRole::Attention;
  /// `kv_splits`, optional: "runtime" (the only value) for a split-KV kernel
  /// of ABI version 2, whose split count S the runtime chooses per launch.
  bool splitKv = false;
  /// `split_direct`, optional [false], split-KV kernels only: at S = 1 the
  /// split kernel writes O and LSE itself and its combine kernel returns at
  /// once, so the runtime launches the split kernel alone, without a
  /// workspace (kernels from fac before 2026-12-03 lack it: the combine
  /// kernel runs at every S).
  bool splitDirect = false;
  /// `combine`: the name of a split-KV kernel's combine kernel, another
  /// entry of the manifest with role "combine" (required with kv_splits).
  std::string combine;
  /// `gqa_packed`, optional [false]: the Hq/Hkv query heads of one KV head
  /// are rows of one Q tile, so grid y runs over Hkv and grid x over
  /// ceil(Lq * Hq/Hkv / block_m) Q tiles (KernelAbi.h).
  bool gqaPacked = false;
  /// `paged`, optional [false]: K and V are a paged cache read through a
  /// block table (ABI version 3, KernelAbi.h): an attention kernel of
  /// version 3 is paged, and a paged kernel takes version 3. The combine
  /// kernel of a paged split-KV kernel takes the same 67 words (its
  /// abi_version is its split kernel's) and may say `paged` too.
  bool paged = false;
  /// `varlen`, optional [false]: a variable-length batch, Q/O packed
  /// [total_q, Hq, D], K/V [total_k, Hkv, D], cut by cu_seqlens_q/k (ABI
  /// version 4, KernelAbi.h): an attention kernel of version 4 is varlen,
  /// and a varlen kernel takes version 4. The combine kernel of a varlen
  /// split-KV kernel takes the same 77 words (its abi_version is its split
  /// kernel's) and may say `varlen` too. Never both `paged` and `varlen`.
  bool varlen = false;
  /// `trace`, optional [false]: the kernel takes the trace words after
  /// its ABI version's (KernelAbi.h, "Trace"; `fac --trace`, validation
  /// layer 2). Only a dense attention kernel (abi_version 1).
  bool trace = false;
  /// `alibi`, optional [false]: the kernel takes alibi_slopes f32 [Hq] and
  /// subtracts alibi_slopes[h] * |i + Lk - Lq - j| from each score (after
  /// the softcap, before the masks; FlashAttention 2's ALiBi).
  bool alibi = false;
  /// `sinks`, optional [false]: the kernel takes sinks f32 [Hq]; exp(sinks[h])
  /// joins each row's softmax denominator once (and its LSE), never the
  /// output (gpt-oss's attention sinks). Either of alibi and sinks adds the
  /// head-parameter words to the ABI (KernelAbi.h, "Head parameters"); a
  /// combine kernel states its split kernel's values or omits them.
  bool sinks = false;

  bool isCombine() const { return role == KernelRole::Combine; }
  /// A bounded window on either side.
  bool hasWindow() const { return windowLeft >= 0 || windowRight >= 0; }
  bool hasSoftcap() const { return softcap > 0; }
  /// The kernel takes the head-parameter words (alibi or sinks).
  bool hasHeadParams() const { return alibi || sinks; }
};

/// "attention" or "combine".
const char *kernelRoleName(KernelRole role);

/// A parsed manifest.
struct Manifest {
  int64_t version = 1;
  std::string compiler;
  std::string sourceHash;
  std::string target;
  std::string codeObjectFile;
  std::string codeObjectFormat;
  uint64_t codeObjectBytes = 0;
  std::string codeObjectHash;
  std::vector<KernelInfo> kernels;
};

/// FNV-1a 64 over `bytes`.
uint64_t fnv1a64(const void *data, size_t bytes);

/// "fnv1a64:%016llx".
std::string formatFnv1a64(uint64_t hash);

/// Parses and checks a manifest: every field present with the right type and
/// a sane value, the split-KV fields consistent (kv_splits only with
/// abi_version 2 or 3 and a `combine` that names a combine kernel of the
/// same abi_version, dtype, head_dim and has_lse, and of the same window,
/// softcap, alibi and sinks unless it omits them), trace never with alibi
/// or sinks, `paged` exactly on
/// the attention kernels of abi_version 3 and `varlen` exactly on those of
/// abi_version 4. Errors are ManifestError naming the
/// field. Whether this runtime implements an ABI version, and target
/// compatibility, are the loader's business, not checked here.
Expected<Manifest> parseManifest(std::string_view json);

/// Writes `manifest` as JSON in the documented layout (fac and tests use it).
/// Strings are escaped; bytes that are not valid UTF-8 become U+FFFD (JSON
/// text is UTF-8), which a caller can detect by reading the text back.
std::string formatManifest(const Manifest &manifest);

/// Checks that `codeObject` is the file the manifest describes (bytes and
/// hash); CorruptCodeObject naming both values otherwise.
Status checkCodeObjectIdentity(const Manifest &manifest,
                               const std::vector<uint8_t> &codeObject);

} // namespace fa

#endif // FA_MANIFEST_H
