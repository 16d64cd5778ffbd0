//===- SplitKv.cpp - Split count and workspace of split-KV launches -------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements what a split-KV launch (ABI version 2, KernelAbi.h)
// needs beyond a dense one: the number of K/V splits S, the workspace the
// split kernel writes and the combine kernel reads (its size, its two
// descriptors in the ABI words), and the pool that keeps workspaces for the
// next launch of the same kernel.
//
// The automatic S fills the compute units' resident workgroups: a decode
// problem (Lq = 1, a few heads) has far fewer Q tiles than the device has
// CUs, and splitting K/V multiplies the workgroups by S. Each split costs
// the combine kernel a serial step per row (S / 16 K/V blocks' worth in all),
// which keeps S low on short caches. More splits than K/V blocks would only
// add empty ones, and beyond 128 the combine's reads of the workspace start
// to cost more than the parallelism gains.
//
//===----------------------------------------------------------------------===//

#include "core/Backend.h"

#include <algorithm>
#include <cstdint>

using namespace fa;
using namespace fa::detail;

static Status invalid(const std::string &message) {
  return Status::error(ErrorCode::InvalidArgument, message);
}

int64_t fa::residentPerComputeUnit(const KernelInfo &kernel) {
  int64_t blocksPerSm = 0, wavesPerSimd = 0;
  for (const auto &[name, value] : kernel.resources) {
    if (name == "blocks_per_sm_estimate" ||
        name == "workgroups_per_cu_estimate")
      blocksPerSm = value;
    if (name == "waves_per_simd_estimate")
      wavesPerSimd = value;
  }
  if (blocksPerSm > 0) // sm_90: ptxas's occupancy; gfx906: fac's
    return blocksPerSm;
  if (wavesPerSimd > 0 && kernel.waveSize > 0 && kernel.threads > 0) {
    // gfx906: 4 SIMDs per CU, each holding wavesPerSimd waves.
    int64_t wavesPerGroup =
        (kernel.threads + kernel.waveSize - 1) / kernel.waveSize;
    return std::max<int64_t>(1, 4 * wavesPerSimd / wavesPerGroup);
  }
  return 2;
}

Expected<KvSplitPlan> fa::planKvSplits(const KernelInfo &kernel,
                                       const AttentionShape &sh,
                                       const DeviceLimits &limits,
                                       int64_t requested) {
  if (!kernel.splitKv) {
    if (requested == 0 || requested == 1)
      return KvSplitPlan{};
    return invalid("kernel '" + kernel.name +
                   "' is not a split-KV kernel: it takes no K/V split count "
                   "(asked for " +
                   std::to_string(requested) + ")");
  }
  if (requested < 0 || requested > maxKvSplits)
    return invalid("K/V split count " + std::to_string(requested) +
                   " is outside [1, " + std::to_string(maxKvSplits) +
                   "] (0: chosen by the runtime)");
  const std::pair<const char *, int64_t> sizes[] = {{"B", sh.batch},
                                                    {"Hq", sh.headsQ},
                                                    {"Hkv", sh.headsKv},
                                                    {"Lq", sh.seqQ},
                                                    {"Lk", sh.seqK}};
  // A paged launch's Lk, the longest sequence, may be 0; a varlen launch's
  // max_seqlen_k too.
  for (int i = 0; i < 5; ++i) {
    const int64_t least = (kernel.paged || kernel.varlen) && i == 4 ? 0 : 1;
    if (sizes[i].second < least)
      return invalid(std::string("invalid shape: ") + sizes[i].first + " is " +
                     std::to_string(sizes[i].second) + ", must be at least " +
                     std::to_string(least));
  }
  if (sh.headsQ % sh.headsKv != 0)
    return invalid("invalid shape: Hq (" + std::to_string(sh.headsQ) +
                   ") is not a multiple of Hkv (" + std::to_string(sh.headsKv) +
                   ")");

  using U128 = unsigned __int128;
  KvSplitPlan plan;
  if (requested > 0) {
    plan.kvSplits = requested;
  } else {
    // Q tiles x heads x batches of one split, against two per CU.
    U128 rows = kernel.gqaPacked
                    ? U128(sh.seqQ) * uint64_t(sh.headsQ / sh.headsKv)
                    : U128(sh.seqQ);
    U128 tiles = (rows + uint64_t(kernel.blockM) - 1) / uint64_t(kernel.blockM);
    U128 workgroups = tiles *
                      uint64_t(kernel.gqaPacked ? sh.headsKv : sh.headsQ) *
                      uint64_t(sh.batch);
    // The device runs `slots` workgroups at a time, in rounds; a split of
    // c K/V blocks costs about c + 1 (its prologue and epilogue: one
    // block's worth), and the combine kernel, whose grid is small at B = 1,
    // walks each row's S partials one after another: about S / 16 blocks
    // (H200, 2026-12-04: its threads 4 elements each, 8 splits' loads a
    // trip; fitted on bench/decode.py's S sweep at B 1, 8, 32 and Lk
    // 1k-128k, within 5% of the best S at every point). The least
    // 16 x rounds x (c + 1) + S wins, the smaller S on a tie: enough splits
    // to fill the device, none that leave a last round mostly idle, none
    // whose combine costs more than they save.
    U128 slots = U128(residentPerComputeUnit(kernel)) *
                 U128(std::max<uint32_t>(1, limits.computeUnits));
    int64_t kvBlocks = (sh.seqK + kernel.blockN - 1) / kernel.blockN;
    int64_t most =
        std::max<int64_t>(1, std::min<int64_t>(maxAutoKvSplits, kvBlocks));
    U128 best = 0;
    for (int64_t s = 1; s <= most; ++s) {
      U128 rounds = (workgroups * uint64_t(s) + slots - 1) / slots;
      U128 cost = 16 * rounds * U128((kvBlocks + s - 1) / s + 1) + uint64_t(s);
      if (s == 1 || cost < best) {
        best = cost;
        plan.kvSplits = s;
      }
    }
  }
  // At S = 1 such a kernel writes O itself: no workspace.
  if (kernel.splitDirect && plan.kvSplits == 1)
    return plan;
  U128 lse = U128(plan.kvSplits) * uint64_t(sh.batch) * uint64_t(sh.headsQ) *
             uint64_t(sh.seqQ);
  U128 lseBytes = lse * sizeof(float);
  U128 oBytes = lseBytes * uint64_t(kernel.headDim);
  if (lseBytes > SIZE_MAX || oBytes > SIZE_MAX)
    return invalid("the split-KV workspace of " +
                   std::to_string(plan.kvSplits) +
                   " splits of [B=" + std::to_string(sh.batch) +
                   ", Hq=" + std::to_string(sh.headsQ) +
                   ", Lq=" + std::to_string(sh.seqQ) +
                   ", D=" + std::to_string(kernel.headDim) +
                   "] of f32 does not fit in 64 bits of bytes");
  plan.workspaceOBytes = uint64_t(oBytes);
  plan.workspaceLseBytes = uint64_t(lseBytes);
  return plan;
}

/// Writes workspace descriptor `firstWord` over `bytes` at `addr`.
static void writeWorkspaceDescriptor(PackedLaunch &packed,
                                     const KernelInfo &kernel, int firstWord,
                                     uint64_t addr, uint64_t bytes) {
  uint64_t *desc = packed.words.data() + firstWord;
  desc[0] = desc[1] = addr;
  desc[2] = 0;
  desc[3] = bytes / sizeof(float);
  // The size word is a 32-bit parameter with 32-bit index arithmetic.
  if (kernel.indexBits == 32)
    desc[3] = std::min<uint64_t>(desc[3], uint64_t(INT32_MAX));
  desc[4] = 1;
}

static Status notSplitKv(const KernelInfo &kernel) {
  if (kernel.splitKv) // split_direct at S = 1
    return invalid("kernel '" + kernel.name +
                   "' writes O itself at one K/V split: its launch has no "
                   "workspace");
  return invalid("kernel '" + kernel.name +
                 "' is not a split-KV kernel: its launch has no workspace");
}

Status fa::bindWorkspace(PackedLaunch &packed, const KernelInfo &kernel,
                         const Buffer &workspaceO, const Buffer &workspaceLse) {
  if (!packed.combineGeometry || packed.numWords < FA_ABI_V2_NUM_WORDS)
    return notSplitKv(kernel);
  const struct {
    const char *name;
    const Buffer &buffer;
    uint64_t needed;
    int firstWord;
  } workspaces[] = {
      {"O", workspaceO, packed.split.workspaceOBytes, FA_ABI_WS_O},
      {"LSE", workspaceLse, packed.split.workspaceLseBytes, FA_ABI_WS_LSE}};
  for (const auto &ws : workspaces) {
    if (ws.buffer.size() < ws.needed)
      return invalid(std::string("workspace ") + ws.name + " holds " +
                     std::to_string(ws.buffer.size()) + " bytes but " +
                     std::to_string(packed.split.kvSplits) + " splits need " +
                     std::to_string(ws.needed));
    writeWorkspaceDescriptor(packed, kernel, ws.firstWord,
                             ws.buffer.address(), ws.buffer.size());
  }
  return Status::success();
}

uint64_t fa::workspaceLseOffset(const KvSplitPlan &plan) {
  if (plan.workspaceLseBytes == 0)
    return 0;
  if (plan.workspaceOBytes > UINT64_MAX - kWorkspaceAlign)
    return UINT64_MAX - kWorkspaceAlign + 1;
  return (plan.workspaceOBytes + kWorkspaceAlign - 1) / kWorkspaceAlign *
         kWorkspaceAlign;
}

uint64_t fa::workspaceBytes(const KvSplitPlan &plan) {
  if (plan.workspaceLseBytes == 0)
    return 0;
  const uint64_t at = workspaceLseOffset(plan);
  // Saturates: no buffer holds it, so the enqueue is refused.
  return at > UINT64_MAX - plan.workspaceLseBytes
             ? UINT64_MAX
             : at + plan.workspaceLseBytes;
}

Status fa::bindWorkspace(PackedLaunch &packed, const KernelInfo &kernel,
                         const Buffer &workspace) {
  if (!packed.combineGeometry || packed.numWords < FA_ABI_V2_NUM_WORDS)
    return notSplitKv(kernel);
  const uint64_t needed = workspaceBytes(packed.split);
  if (workspace.size() < needed)
    return invalid("the workspace holds " + std::to_string(workspace.size()) +
                   " bytes but " + std::to_string(packed.split.kvSplits) +
                   " K/V splits need " + std::to_string(needed) +
                   " (Kernel::workspaceSize, fa_module_workspace_size)");
  const uint64_t lseAt = workspaceLseOffset(packed.split);
  writeWorkspaceDescriptor(packed, kernel, FA_ABI_WS_O, workspace.address(),
                           lseAt);
  writeWorkspaceDescriptor(packed, kernel, FA_ABI_WS_LSE,
                           workspace.address() + lseAt,
                           workspace.size() - lseAt);
  return Status::success();
}

Expected<WorkspacePool::Workspace>
WorkspacePool::take(const Device &device, uint64_t oBytes, uint64_t lseBytes) {
  {
    std::lock_guard<std::mutex> lock(mutex);
    auto best = free.end(), small = free.end();
    for (auto it = free.begin(); it != free.end(); ++it) {
      bool fits = it->o.size() >= oBytes && it->lse.size() >= lseBytes;
      if (fits && (best == free.end() || it->o.size() < best->o.size()))
        best = it;
      if (!fits)
        small = it;
    }
    if (best != free.end()) {
      Workspace w = std::move(*best);
      free.erase(best);
      w.fresh = false;
      return w;
    }
    // The new one replaces it: the pool does not grow with every shape.
    if (small != free.end())
      free.erase(small);
  }
  Expected<Buffer> o = device.allocate(size_t(oBytes));
  if (!o)
    return o.takeStatus().prepend("cannot allocate the split-KV workspace O");
  Expected<Buffer> lse = device.allocate(size_t(lseBytes));
  if (!lse)
    return lse.takeStatus().prepend(
        "cannot allocate the split-KV workspace LSE");
  return Workspace{o.take(), lse.take(), true};
}

void WorkspacePool::give(Workspace workspace) {
  std::lock_guard<std::mutex> lock(mutex);
  free.push_back(std::move(workspace));
}
