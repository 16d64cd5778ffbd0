//===- SimBackend.cpp - The gfx906-sim device -----------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the `gfx906-sim` device: a detail::Backend whose
// kernels are gfx906 machine code executed by the simulator (Simulator.h).
//   Memory:  host memory; each allocation is a region of the memcheck's
//            memory map with its exact size, so a kernel's access one byte
//            past a buffer is an error even where hipMalloc's granularity
//            would hide it. Copies are checked against the regions too.
//   Loading: the HIP backend's checks (an ELF file for EM_AMDGPU, the
//            manifest against the AMDGPU metadata note, wave 64, the LDS and
//            thread limits of gfx906), then the kernel descriptor of each
//            kernel's `.kd` symbol and the text decoded once.
//   Launch:  the kernarg segment packed by the code that packs it for
//            hipModuleLaunchKernel (packKernargSegment, gpu/Vendor.h), so a
//            packing error shows as a wrong result here; LDS sized from the
//            descriptor plus the manifest's dynamic LDS; the dispatch itself
//            is sim/Dispatch.h's, which the fake HIP runtime shares.
//
//===----------------------------------------------------------------------===//

#include "core/Backend.h"
#include "gpu/AmdgpuMetadata.h"
#include "gpu/Vendor.h"
#include "sim/Dispatch.h"
#include "sim/Profile.h"
#include "sim/SimDevice.h"
#include "sim/Timing.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>

using namespace fa;
using namespace fa::detail;
using namespace fa::sim;

static void addStats(const SimStats &s);
static void setLastProfile(const SimProfile &p, LaunchStep step);
static void setLastEstimate(TimingEstimate e, LaunchStep step);

namespace {

constexpr const char *kName = "gfx906-sim";
/// gfx906: 64 KiB of LDS per workgroup, 1024 work-items.
constexpr uint64_t kMaxLds = 65536;
constexpr uint32_t kMaxThreads = 1024;
/// An MI50's CUs, as the timing model dispatches them: what the automatic
/// K/V split count fills.
constexpr uint32_t kComputeUnits = 60;

/// Allocations, by address. Shared by the backend and its loaded code.
struct Allocations {
  std::mutex mutex;
  std::map<uint64_t, size_t> blocks;
  /// Guard bytes at each end of an allocation (Backend::setGuardZones).
  std::map<uint64_t, size_t> guards;
  /// The caller's memory wrapped as buffers (Device::wrap), by address; a
  /// range may be wrapped more than once, and may overlap allocations.
  std::multimap<uint64_t, size_t> wrapped;

  bool contains(uint64_t addr, size_t bytes) {
    std::lock_guard<std::mutex> lock(mutex);
    auto inside = [&](const auto &map) {
      auto it = map.upper_bound(addr);
      if (it == map.begin())
        return false;
      --it;
      return addr >= it->first && bytes <= it->second &&
             addr - it->first <= it->second - bytes;
    };
    if (inside(blocks))
      return true;
    // Wrapped ranges may nest and overlap: any one holding the whole copy.
    for (const auto &[begin, size] : wrapped)
      if (begin <= addr && bytes <= size && addr - begin <= size - bytes)
        return true;
    return false;
  }
  std::vector<Region> regions() {
    std::lock_guard<std::mutex> lock(mutex);
    std::vector<Region> out;
    for (auto &[addr, size] : blocks) {
      // A kernel may touch the buffer between the guard zones only.
      auto g = guards.find(addr);
      size_t guard = g == guards.end() ? 0 : g->second;
      if (2 * guard < size)
        out.push_back(
            Region{addr + guard, addr + size - guard, true, "buffer"});
    }
    for (const auto &[addr, size] : wrapped)
      out.push_back(Region{addr, addr + size, true, "wrapped buffer"});
    // The memory map holds disjoint regions: wrapped ranges that overlap
    // each other or an allocation become one region.
    std::sort(out.begin(), out.end(), [](const Region &a, const Region &b) {
      return a.begin < b.begin;
    });
    std::vector<Region> merged;
    for (const Region &r : out)
      if (!merged.empty() && r.begin <= merged.back().end)
        merged.back().end = std::max(merged.back().end, r.end);
      else
        merged.push_back(r);
    return merged;
  }
};

struct SimKernelEntry {
  KernelInfo info;
  const CodeObjectKernel *kernel = nullptr;
  bool raw = false;
};

class SimCode : public LoadedCode {
public:
  SimCode(std::shared_ptr<Allocations> allocations,
          std::unique_ptr<SimModule> module)
      : allocations(std::move(allocations)), module(std::move(module)) {}

  Status launch(size_t index, const LaunchGeometry &g, const uint64_t *words,
                const LaunchOptions &options, LaunchStep step,
                LaunchQueue) override {
    const SimKernelEntry &e = kernels[index];
    std::vector<uint8_t> kernarg = packKernargSegment(
        words,
        fa_kernel_abi_words(uint32_t(e.info.abiVersion), e.info.trace,
                            e.info.hasHeadParams()),
        int(e.info.indexBits));
    return run(e, g, kernarg, &options, step);
  }
  Status launchRaw(size_t index, const LaunchGeometry &g, const uint64_t *args,
                   size_t count) override {
    std::vector<uint8_t> kernarg(count * sizeof(uint64_t));
    if (count)
      std::memcpy(kernarg.data(), args, kernarg.size());
    return run(kernels[index], g, kernarg, nullptr, LaunchStep{});
  }

  std::shared_ptr<Allocations> allocations;
  std::unique_ptr<SimModule> module;
  std::vector<SimKernelEntry> kernels;

private:
  Status run(const SimKernelEntry &e, const LaunchGeometry &g,
             std::vector<uint8_t> kernarg, const LaunchOptions *options,
             LaunchStep step);
};

class SimBackend : public Backend,
                   public std::enable_shared_from_this<SimBackend> {
public:
  SimBackend() : allocations(std::make_shared<Allocations>()) {
    limits_.maxThreadsPerWorkgroup = kMaxThreads;
    limits_.maxLdsBytes = kMaxLds;
    limits_.maxGrid[0] = 0x7fffffff;
    limits_.maxGrid[1] = 65535;
    limits_.maxGrid[2] = 65535;
    limits_.computeUnits = kComputeUnits;
  }

  const std::string &name() const override { return name_; }
  const std::vector<std::string> &targets() const override { return targets_; }
  const DeviceLimits &limits() const override { return limits_; }
  /// The simulator runs on the CPU in host memory: its timings are no
  /// performance figure and its memory is the host's (what the validation
  /// harness asks this for).
  bool isHostEmulator() const override { return true; }
  std::string description() const override {
    return "gfx906-sim (gfx906 instruction-level simulator)";
  }
  std::string lastProfile(bool json) const override;
  std::string lastEstimate(bool json, double flops) const override;

  Expected<uint64_t> allocate(size_t bytes) override {
    if (bytes > SIZE_MAX - 255)
      return Status::error(ErrorCode::OutOfMemory,
                           "cannot allocate " + std::to_string(bytes) +
                               " bytes on device 'gfx906-sim'");
    size_t rounded = (bytes + 255) / 256 * 256;
    void *p = std::aligned_alloc(256, rounded ? rounded : 256);
    if (!p)
      return Status::error(ErrorCode::OutOfMemory,
                           "cannot allocate " + std::to_string(bytes) +
                               " bytes on device 'gfx906-sim'");
    std::memset(p, 0, rounded);
    uint64_t addr = uint64_t(reinterpret_cast<uintptr_t>(p));
    std::lock_guard<std::mutex> lock(allocations->mutex);
    allocations->blocks[addr] = bytes;
    return addr;
  }
  void release(uint64_t addr) override {
    {
      std::lock_guard<std::mutex> lock(allocations->mutex);
      if (!allocations->blocks.erase(addr))
        return;
      allocations->guards.erase(addr);
    }
    std::free(reinterpret_cast<void *>(uintptr_t(addr)));
  }
  Status copyToDevice(uint64_t dst, const void *src, size_t bytes) override {
    if (!allocations->contains(dst, bytes))
      return badCopy("to", dst, bytes);
    std::memcpy(reinterpret_cast<void *>(uintptr_t(dst)), src, bytes);
    return Status::success();
  }
  Status copyToHost(void *dst, uint64_t src, size_t bytes) override {
    if (!allocations->contains(src, bytes))
      return badCopy("from", src, bytes);
    std::memcpy(dst, reinterpret_cast<const void *>(uintptr_t(src)), bytes);
    return Status::success();
  }
  void setGuardZones(uint64_t addr, size_t guardBytes) override {
    std::lock_guard<std::mutex> lock(allocations->mutex);
    if (allocations->blocks.count(addr))
      allocations->guards[addr] = guardBytes;
  }
  Status synchronize() override { return Status::success(); }
  Status wrap(uint64_t addr, size_t bytes) override {
    std::lock_guard<std::mutex> lock(allocations->mutex);
    allocations->wrapped.emplace(addr, bytes);
    return Status::success();
  }
  void unwrap(uint64_t addr, size_t bytes) override {
    std::lock_guard<std::mutex> lock(allocations->mutex);
    auto [first, last] = allocations->wrapped.equal_range(addr);
    for (auto it = first; it != last; ++it)
      if (it->second == bytes) {
        allocations->wrapped.erase(it);
        return;
      }
  }

  Expected<std::unique_ptr<LoadedCode>>
  loadCode(const Manifest &manifest, const std::vector<uint8_t> &bytes,
           const std::string &displayName) override {
    return load(manifest, bytes, displayName, /*faKernels=*/true);
  }
  Expected<std::unique_ptr<LoadedCode>>
  loadRawCode(const std::vector<uint8_t> &bytes, const std::string &format,
              const std::string &symbol, int64_t threads) override {
    Manifest m;
    m.target = "gfx906";
    m.codeObjectFormat = format;
    KernelInfo k;
    k.name = k.symbol = symbol;
    k.threads = threads;
    k.waveSize = 64;
    m.kernels.push_back(k);
    return load(m, bytes, "<run-time compiled " + symbol + ">",
                /*faKernels=*/false);
  }

private:
  Status badCopy(const char *dir, uint64_t addr, size_t bytes) const {
    return Status::error(ErrorCode::InvalidArgument,
                         "cannot copy " + std::to_string(bytes) + " bytes " +
                             dir + " device 'gfx906-sim' address " +
                             std::to_string(addr) +
                             ": not inside one allocation")
        .withDevice(name_);
  }

  Expected<std::unique_ptr<LoadedCode>> load(const Manifest &manifest,
                                             const std::vector<uint8_t> &bytes,
                                             const std::string &displayName,
                                             bool faKernels);

  std::string name_ = kName;
  std::vector<std::string> targets_ = {"gfx906"};
  DeviceLimits limits_;
  std::shared_ptr<Allocations> allocations;
};

} // namespace

Expected<std::unique_ptr<LoadedCode>>
SimBackend::load(const Manifest &manifest, const std::vector<uint8_t> &bytes,
                 const std::string &displayName, bool faKernels) {
  if (manifest.codeObjectFormat != "hsaco")
    return Status::error(ErrorCode::Unsupported,
                         "device 'gfx906-sim' loads 'hsaco' code objects, the "
                         "manifest says '" +
                             manifest.codeObjectFormat + "'");
  if (std::optional<std::string> why = targetProblem(manifest.target, "hsaco"))
    return Status::error(ErrorCode::Unsupported,
                         "code object is for target '" + manifest.target +
                             "' but device 'gfx906-sim' simulates gfx906" +
                             (why->empty() ? "" : ": " + *why));
  // The HIP backend's checks, so that what loads here loads on an MI50.
  if (Status s = checkGpuElf(bytes, /*EM_AMDGPU=*/224, "AMDGPU"); !s.ok())
    return s;
  if (faKernels)
    if (Status s = checkAmdgpuCodeObject(manifest, bytes); !s.ok())
      return s;
  for (const KernelInfo &k : manifest.kernels)
    if (k.waveSize != 64)
      return Status::error(ErrorCode::Unsupported,
                           "kernel '" + k.name + "' was compiled for wave " +
                               std::to_string(k.waveSize) +
                               ", device 'gfx906-sim' (gfx906) runs wave 64")
          .withKernel(k.name);

  Expected<std::unique_ptr<SimModule>> module = SimModule::load(bytes);
  if (!module)
    return Status(module.status()).withLog("while loading " + displayName);
  auto code = std::make_unique<SimCode>(allocations, module.take());
  for (const KernelInfo &k : manifest.kernels) {
    const CodeObjectKernel *ck = code->module->co.find(k.symbol);
    if (!ck)
      return Status::error(ErrorCode::NotFound,
                           "kernel '" + k.name + "': no kernel descriptor '" +
                               k.symbol + ".kd' in code object '" +
                               displayName + "'")
          .withKernel(k.name);
    if (Status s = checkDescriptor(k.name, ck->kd); !s.ok())
      return s;
    if (Status s =
            checkKernelFits(k, name_, ck->kd.groupSegmentFixedSize, kMaxThreads,
                            kMaxLds, "", "LDS per workgroup of gfx906");
        !s.ok())
      return s;
    code->kernels.push_back(SimKernelEntry{k, ck, !faKernels});
  }
  return std::unique_ptr<LoadedCode>(std::move(code));
}

Status SimCode::run(const SimKernelEntry &e, const LaunchGeometry &g,
                    std::vector<uint8_t> kernarg, const LaunchOptions *options,
                    LaunchStep step) {
  SimDispatch d;
  d.module = module.get();
  d.kernel = e.kernel;
  d.kernelName = e.info.name;
  for (int i = 0; i < 3; ++i) {
    d.grid[i] = g.grid[i];
    d.block[i] = g.block[i];
  }
  d.dynamicLdsBytes = uint32_t(e.info.dynamicLdsBytes);
  d.kernarg = std::move(kernarg);
  // fa's kernels have no hidden arguments; run-time compiled HIP reads them.
  d.hiddenArgsV5 = e.raw;
  d.memory = allocations->regions();
  if (options) {
    d.checks.races = options->checkRaces;
    d.checks.maxReports = options->maxRaceReports;
    d.poisonLds = options->poisonLds;
    d.workers = options->workers;
  }
  if (const char *budget = std::getenv("FA_SIM_WAVE_BUDGET"))
    if (uint64_t b = std::strtoull(budget, nullptr, 10))
      d.checks.waveBudget = b;
  SimStats stats;
  d.stats = &stats;
  std::optional<ProfileCounters> counters;
  if (options && options->profile) {
    counters.emplace();
    d.profile = &*counters;
  }
  std::optional<TimingRequest> timing;
  if (options && options->estimate) {
    timing.emplace();
    timing->sample(g.grid[0], std::max(1u, options->estimateSamples),
                   g.periodX);
    timing->onlyRecorded = options->estimateOnly;
    d.timing = &*timing;
  }
  TimingParams params;
  if (options && !options->estimateParams.empty())
    if (std::string why = params.apply(options->estimateParams); !why.empty())
      return Status::error(ErrorCode::InvalidArgument,
                           "gfx906-sim timing model: " + why);
  // The probe workgroups only serve the L2 model's sharing along y and z:
  // not simulated where the model does not use them (v1, no L2).
  if (timing)
    timing->probeYZ = params.l2ShareYZ && params.l2Bytes > 0;
  Status s = dispatch(d);
  addStats(stats);
  if (timing && s.ok()) {
    TimingEstimate est =
        estimateTiming(module->program, e.kernel->kd, g.grid, g.block,
                       e.kernel->kd.groupSegmentFixedSize + d.dynamicLdsBytes,
                       std::move(timing->traces), params, timing->periodX);
    est.kernel = e.info.name;
    setLastEstimate(std::move(est), step);
  }
  if (counters) {
    SimProfile p = summarizeProfile(module->program, *counters);
    p.kernel = e.info.name;
    p.workgroups = uint64_t(g.grid[0]) * g.grid[1] * g.grid[2];
    p.threadsPerWorkgroup = g.block[0] * g.block[1] * g.block[2];
    setOccupancy(p, e.kernel->kd.vgprCount(), e.kernel->kd.sgprCount(),
                 e.kernel->kd.groupSegmentFixedSize + d.dynamicLdsBytes,
                 p.threadsPerWorkgroup);
    setLastProfile(p, step);
  }
  return s;
}

// The profiles and estimates of the steps of the last call that asked for
// them: a split-KV attention's two launches, or a dense one's one. Its
// first step starts a new call.
static std::mutex profileMutex;
static std::vector<std::string> lastProfileTexts, lastProfileJsons;

static void setLastProfile(const SimProfile &p, LaunchStep step) {
  std::string text = p.text(), json = p.json();
  std::lock_guard<std::mutex> lock(profileMutex);
  if (step.index == 0) {
    lastProfileTexts.clear();
    lastProfileJsons.clear();
  }
  lastProfileTexts.push_back(std::move(text));
  lastProfileJsons.push_back(std::move(json));
}

static std::mutex estimateMutex;
static std::vector<TimingEstimate> lastEstimates;

static void setLastEstimate(TimingEstimate e, LaunchStep step) {
  std::lock_guard<std::mutex> lock(estimateMutex);
  if (step.index == 0)
    lastEstimates.clear();
  lastEstimates.push_back(std::move(e));
}

std::string SimBackend::lastEstimate(bool json, double flops) const {
  std::lock_guard<std::mutex> lock(estimateMutex);
  return json ? estimatesJson(lastEstimates, flops)
              : estimatesText(lastEstimates, flops);
}

std::string SimBackend::lastProfile(bool json) const {
  std::lock_guard<std::mutex> lock(profileMutex);
  if (lastProfileTexts.size() == 1)
    return json ? lastProfileJsons.front() : lastProfileTexts.front();
  // A split-KV call: each launch's profile, in order.
  std::string out;
  for (size_t i = 0; i < lastProfileTexts.size(); ++i)
    out +=
        json ? std::string(i ? ", " : "{\"launches\": [") + lastProfileJsons[i]
             : "launch " + std::to_string(i + 1) + " of " +
                   std::to_string(lastProfileTexts.size()) + ": " +
                   lastProfileTexts[i];
  return json && !out.empty() ? out + "]}" : out;
}

Expected<std::shared_ptr<Backend>> fa::detail::openSimBackend() {
  static std::mutex mutex;
  static std::weak_ptr<SimBackend> open;
  std::lock_guard<std::mutex> lock(mutex);
  if (std::shared_ptr<SimBackend> existing = open.lock())
    return std::shared_ptr<Backend>(existing);
  auto backend = std::make_shared<SimBackend>();
  open = backend;
  return std::shared_ptr<Backend>(backend);
}

static std::mutex statsMutex;
static SimStats statsTotal;

static void addStats(const SimStats &s) {
  std::lock_guard<std::mutex> lock(statsMutex);
  statsTotal.instructions += s.instructions;
  statsTotal.laneOps += s.laneOps;
  statsTotal.seconds += s.seconds;
}

SimStats fa::detail::simStatsTotal() {
  std::lock_guard<std::mutex> lock(statsMutex);
  return statsTotal;
}
