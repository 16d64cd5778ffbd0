//===- Workgroup.cpp - One workgroup as cooperatively scheduled fibers ----===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the fiber scheduler of one workgroup:
//   1. every thread starts Ready; the scheduler resumes each Ready fiber in
//      thread order until it blocks (barrier, shuffle) or exits;
//   2. a wave whose live lanes all wait in a shuffle exchanges values and
//      its lanes become Ready; a wave with lanes in a shuffle and all others
//      exited can never complete it;
//   3. when nothing is Ready: all live threads at the barrier releases it
//      (a new barrier epoch) unless some thread exited, which is barrier
//      divergence; any other mix is a deadlock. Both are reported, naming
//      the threads in each state, instead of hanging.
// A fiber that misbehaves (bad shuffle arguments, a memory fault) is
// abandoned; its stack is simply reused by the next workgroup. A memory
// fault leaves the kernel through siglongjmp to the fiber's start
// (MemoryFaults.h), which returns to the scheduler like an exit.
//
//===----------------------------------------------------------------------===//

#include "host/Workgroup.h"
#include "host/GuardedMemory.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <dlfcn.h>
#include <pthread.h>
#include <sys/mman.h>
#include <unistd.h>

#if FA_FIBERS_ASAN
#include <sanitizer/asan_interface.h>
#endif

using namespace fa;
using namespace fa::detail;

//===----------------------------------------------------------------------===//
// StackArena
//===----------------------------------------------------------------------===//

StackArena::~StackArena() { release(); }

void StackArena::release() {
  if (memory)
    ::munmap(memory, mapped);
  memory = nullptr;
  mapped = count = bytes = slot = 0;
}

Status StackArena::reserve(size_t wantCount, size_t wantBytes) {
  size_t page = size_t(::sysconf(_SC_PAGESIZE));
  wantBytes = (wantBytes + page - 1) / page * page;
  if (memory && wantCount <= count && wantBytes == bytes)
    return Status::success();
  release();
  slot = wantBytes + page;
  mapped = slot * wantCount;
  void *p = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    size_t failed = mapped;
    mapped = 0;
    return Status::error(ErrorCode::OutOfMemory,
                         "cannot map " + std::to_string(failed) +
                             " bytes of fiber stacks (" +
                             std::to_string(wantCount) + " x " +
                             std::to_string(wantBytes) + ")")
        .withCall("mmap", std::strerror(errno));
  }
  memory = static_cast<uint8_t *>(p);
  for (size_t i = 0; i < wantCount; ++i)
    ::mprotect(memory + i * slot, page, PROT_NONE); // guard below each stack
  count = wantCount;
  bytes = wantBytes;
  return Status::success();
}

void *StackArena::stack(size_t index) const {
  return memory + index * slot + (slot - bytes);
}

bool StackArena::isGuard(uintptr_t addr, size_t &index) const {
  auto base = reinterpret_cast<uintptr_t>(memory);
  if (!memory || addr < base || addr >= base + slot * count)
    return false;
  index = (addr - base) / slot;
  return (addr - base) % slot < slot - bytes;
}

//===----------------------------------------------------------------------===//
// Hooks called by the kernel through fa_host_env
//===----------------------------------------------------------------------===//

void WorkgroupRunner::barrierHook(void *emu) {
  Fiber &f = *static_cast<Fiber *>(emu);
  WorkgroupRunner &r = *f.runner;
  f.state = State::AtBarrier;
  ++r.atBarrier;
  r.yield(f);
}

uint32_t WorkgroupRunner::shuffleHook(void *emu, uint32_t value,
                                      uint32_t offset, uint32_t width,
                                      uint32_t mode) {
  Fiber &f = *static_cast<Fiber *>(emu);
  WorkgroupRunner &r = *f.runner;
  if (width == 0 || width > r.launch->waveSize || mode > FA_SHUFFLE_IDX) {
    r.fault = "invalid shuffle " + r.where() + ": thread " +
              std::to_string(f.id) + " passed width " + std::to_string(width) +
              " and mode " + std::to_string(mode) + " (width must be in [1, " +
              std::to_string(r.launch->waveSize) + "], mode in [0, 3])";
    r.yield(f); // never resumed
  }
  f.shuffleValue = value;
  f.shuffleOffset = offset;
  f.shuffleWidth = width;
  f.shuffleMode = mode;
  f.state = State::InShuffle;
  ++r.inShuffle[f.wave];
  r.yield(f);
  return f.shuffleResult;
}

void WorkgroupRunner::ldsCheckHook(void *emu, const void *addr, uint32_t bytes,
                                   uint32_t isWrite) {
  Fiber &f = *static_cast<Fiber *>(emu);
  WorkgroupRunner &r = *f.runner;
  int64_t offset = static_cast<const uint8_t *>(addr) - r.lds;
  r.checker.access(f.id, offset, bytes, isWrite != 0);
}

void WorkgroupRunner::ldsIgnoreHook(void *, const void *, uint32_t, uint32_t) {}

/// The kernel's buffer arguments (their descriptors' first word), named as
/// Kernel::launch's guard checks name them.
static const std::pair<const char *, int> bufferArguments[] = {
    {"Q", FA_ABI_Q},
    {"K", FA_ABI_K},
    {"V", FA_ABI_V},
    {"O", FA_ABI_O},
    {"LSE", FA_ABI_LSE},
    {"workspace O", FA_ABI_WS_O},
    {"workspace LSE", FA_ABI_WS_LSE},
    {"block_table", FA_ABI_BLOCK_TABLE},
    {"cache_seqlens", FA_ABI_CACHE_SEQLENS},
    {"cu_seqlens_q", FA_ABI_CU_SEQLENS_Q},
    {"cu_seqlens_k", FA_ABI_CU_SEQLENS_K}};

static std::string hex(uintptr_t x) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx",
                static_cast<unsigned long long>(x));
  return text;
}

std::string WorkgroupRunner::describeAddress(const void *addr) const {
  auto at = reinterpret_cast<uintptr_t>(addr);
  auto ldsBase = reinterpret_cast<uintptr_t>(lds);
  if (at >= ldsBase && at < ldsBase + launch->ldsBytes)
    return "LDS (byte " + std::to_string(at - ldsBase) + ")";
  // The buffer whose aligned pointer (ABI word 1 of its descriptor) is the
  // closest at or below the address.
  const char *name = nullptr;
  uintptr_t base = 0;
  for (const auto &[n, word] : bufferArguments) {
    if (uint32_t(word + 1) >= launch->numWords)
      break;
    uintptr_t b = uintptr_t(launch->args[word + 1]);
    if (b != 0 && b <= at && (!name || b > base)) {
      name = n;
      base = b;
    }
  }
  if (!name)
    return "no kernel argument";
  return std::string(name) + " (byte " + std::to_string(at - base) + ")";
}

void WorkgroupRunner::misalignedHook(void *emu, const void *addr,
                                     uint32_t bytes, uint32_t claimed,
                                     uint32_t isWrite) {
  Fiber &f = *static_cast<Fiber *>(emu);
  WorkgroupRunner &r = *f.runner;
  if (!r.fault.empty())
    return; // the first report stands; the access runs unaligned
  auto at = reinterpret_cast<uintptr_t>(addr);
  uintptr_t actual = at & (~at + 1); // the lowest set bit
  r.fault = std::string("misaligned vector ") + (isWrite ? "store" : "load") +
            " " + r.where() + ": thread " + std::to_string(f.id) + " " +
            (isWrite ? "stores " : "loads ") + std::to_string(bytes) +
            " bytes at " + hex(at) + " in " + r.describeAddress(addr) +
            ", claimed alignment " + std::to_string(claimed) + ", actual " +
            std::to_string(actual);
}

//===----------------------------------------------------------------------===//
// Scheduling
//===----------------------------------------------------------------------===//

void WorkgroupRunner::yield(Fiber &fiber) {
  fiber.context.switchTo(schedulerContext);
}

void WorkgroupRunner::fiberMain(void *fiber) {
  Fiber &f = *static_cast<Fiber *>(fiber);
  WorkgroupRunner &r = *f.runner;
  if (sigsetjmp(f.resume, /*savemask=*/0) == 0) {
    r.launch->entry(r.launch->args, &f.env);
    f.state = State::Exited;
    ++r.exited;
    ++r.exitedInWave[f.wave];
  } else {
    // Out of the kernel after a memory fault (r.memoryFault). The handler
    // ran with the signal blocked; saving the mask at every fiber start
    // would cost a system call each.
    ::pthread_sigmask(SIG_SETMASK, &r.workerMask, nullptr);
#if FA_FIBERS_ASAN
    // The abandoned frames below this one may have left poisoned redzones.
    auto *bottom = static_cast<char *>(r.stacks.stack(f.id));
    auto *here = static_cast<char *>(__builtin_frame_address(0));
    if (here > bottom)
      __asan_unpoison_memory_region(bottom, size_t(here - bottom));
#endif
  }
  f.context.exitTo(r.schedulerContext); // never resumed
}

void WorkgroupRunner::resolveShuffle(uint32_t wave) {
  uint32_t ws = launch->waveSize;
  uint32_t first = wave * ws;
  uint32_t lanes = std::min(ws, threads - first);
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    Fiber &f = fibers[first + lane];
    // gpu.shuffle with `width`: lanes form segments of `width`; a source
    // outside the caller's segment (or the wave) yields the caller's value.
    uint32_t width = f.shuffleWidth, offset = f.shuffleOffset;
    int64_t segStart = int64_t(lane / width) * width;
    int64_t segEnd = std::min<int64_t>(segStart + width, lanes);
    int64_t src;
    switch (f.shuffleMode) {
    case FA_SHUFFLE_XOR:
      src = int64_t(lane ^ offset);
      break;
    case FA_SHUFFLE_DOWN:
      src = int64_t(lane) + offset;
      break;
    case FA_SHUFFLE_UP:
      src = int64_t(lane) - int64_t(offset);
      break;
    default: // FA_SHUFFLE_IDX
      src = offset < width ? segStart + offset : -1;
      break;
    }
    bool valid = src >= segStart && src < segEnd;
    f.shuffleResult =
        valid ? fibers[first + uint32_t(src)].shuffleValue : f.shuffleValue;
  }
  for (uint32_t lane = 0; lane < lanes; ++lane) {
    fibers[first + lane].state = State::Ready;
    ready.push_back(first + lane);
  }
  inShuffle[wave] = 0;
}

/// "[0-3,8,10-63]".
static std::string formatIds(const std::vector<uint32_t> &ids) {
  std::string out = "[";
  for (size_t i = 0; i < ids.size();) {
    size_t j = i;
    while (j + 1 < ids.size() && ids[j + 1] == ids[j] + 1)
      ++j;
    out += (i ? "," : "") + std::to_string(ids[i]);
    if (j > i)
      out += "-" + std::to_string(ids[j]);
    i = j + 1;
  }
  return out + "]";
}

std::string WorkgroupRunner::where() const {
  return "in workgroup (" + std::to_string(workgroup[0]) + "," +
         std::to_string(workgroup[1]) + "," + std::to_string(workgroup[2]) +
         ") of kernel '" + launch->kernelName + "'";
}

Status WorkgroupRunner::stuck(const char *what) const {
  std::vector<uint32_t> barrier, shuffle, gone;
  for (uint32_t t = 0; t < threads; ++t) {
    const Fiber &f = fibers[t];
    if (f.state == State::AtBarrier)
      barrier.push_back(f.id);
    else if (f.state == State::InShuffle)
      shuffle.push_back(f.id);
    else if (f.state == State::Exited)
      gone.push_back(f.id);
  }
  std::string message = std::string(what) + " " + where() + ":";
  const char *sep = " ";
  if (!barrier.empty()) {
    message += sep + std::string("threads ") + formatIds(barrier) +
               " at barrier " + std::to_string(barrierEpoch);
    sep = ", ";
  }
  if (!shuffle.empty()) {
    message +=
        sep + std::string("threads ") + formatIds(shuffle) + " in a shuffle";
    sep = ", ";
  }
  if (!gone.empty())
    message += sep + std::string("threads ") + formatIds(gone) + " exited";
  return Status::error(ErrorCode::BarrierDivergence, message)
      .withKernel(launch->kernelName);
}

/// "attn_host+0x1f4": the code at `pc`, by its nearest exported symbol.
static std::string codeLocation(uintptr_t pc) {
  Dl_info info;
  if (::dladdr(reinterpret_cast<void *>(pc), &info) == 0)
    return hex(pc);
  if (info.dli_sname && info.dli_saddr)
    return std::string(info.dli_sname) + "+" +
           hex(pc - reinterpret_cast<uintptr_t>(info.dli_saddr));
  return hex(pc);
}

std::string WorkgroupRunner::describeFaultAddress(uintptr_t addr) const {
  size_t stack = 0;
  if (stacks.isGuard(addr, stack))
    return "in the guard page below thread " + std::to_string(stack) +
           "'s stack: a stack overflow (each thread has " +
           std::to_string(stacks.stackBytes()) +
           " bytes of stack, LaunchOptions::fiberStackBytes)";
  std::optional<GuardedAllocation> a = GuardedMemory::get().find(addr);
  if (!a)
    return "outside every tensor";
  // The argument whose data is in this allocation.
  std::string name = "a buffer that is no argument of this kernel";
  for (const auto &[n, word] : bufferArguments) {
    if (uint32_t(word + 1) >= launch->numWords)
      break;
    uintptr_t b = uintptr_t(launch->args[word + 1]);
    if (b >= a->data && b <= a->data + a->bytes) {
      name = n;
      break;
    }
  }
  const std::string buffer =
      " of a " + std::to_string(a->bytes) + "-byte buffer)";
  if (addr >= a->data + a->bytes)
    return std::to_string(addr - (a->data + a->bytes)) +
           " bytes past the end of " + name + " (byte offset " +
           std::to_string(addr - a->data) + buffer;
  if (addr < a->data)
    return std::to_string(a->data - addr) + " bytes before the start of " +
           name + " (byte offset -" + std::to_string(a->data - addr) + buffer;
  return "in " + name + " (byte offset " + std::to_string(addr - a->data) +
         buffer;
}

Status WorkgroupRunner::memoryFaultStatus(uint32_t thread) const {
  const MemoryFault &m = memoryFault;
  const char *noun = "access", *verb = "accesses";
  switch (m.access) {
  case FaultAccess::Read:
    noun = "read", verb = "reads";
    break;
  case FaultAccess::Write:
    noun = "write", verb = "writes";
    break;
  case FaultAccess::Execute:
    noun = "instruction fetch", verb = "executes";
    break;
  case FaultAccess::Unknown:
    break;
  }
  std::string message = std::string("invalid ") + noun + " " + where() +
                        ": thread " + std::to_string(thread) + " " + verb + " ";
  if (m.addressKnown)
    message += "at " + hex(m.address) + ", " + describeFaultAddress(m.address);
  else
    message += "at an address the processor does not report (a "
               "general-protection fault, as a non-canonical address "
               "raises)";
  if (m.signal == SIGBUS)
    message += " (SIGBUS)";
  if (m.pc)
    message += "; pc " + codeLocation(m.pc);
  return Status::error(ErrorCode::LaunchFailed, message)
      .withKernel(launch->kernelName);
}

Status WorkgroupRunner::prepare(const HostLaunch &l, const LaunchOptions &o,
                                const ProtectedZones *zones) {
  launch = &l;
  options = &o;
  faultCatch.fault = &memoryFault;
  faultCatch.zones = zones;
  ::pthread_sigmask(SIG_SETMASK, nullptr, &workerMask);
  threads = l.block[0] * l.block[1] * l.block[2];
  waveCount = (threads + l.waveSize - 1) / l.waveSize;
  if (fibers.size() < threads)
    fibers.resize(threads); // no fiber is live between workgroups
  if (Status s = stacks.reserve(threads, o.fiberStackBytes); !s.ok())
    return s;
  size_t ldsAlloc = size_t(l.ldsBytes) + 16;
  ldsStorage.reset(new uint8_t[ldsAlloc]);
  lds = ldsStorage.get() + ((16 - (uintptr_t(ldsStorage.get()) & 15)) & 15);
  if (o.checkRaces)
    checker.configure(l.ldsBytes, o.maxRaceReports);
  checker.clearReports();
  inShuffle.assign(waveCount, 0);
  exitedInWave.assign(waveCount, 0);
  ready.reserve(threads);
  running.reserve(threads);
  return Status::success();
}

Status WorkgroupRunner::run(const uint32_t id[3], uint64_t linear) {
  const HostLaunch &l = *launch;
  for (int i = 0; i < 3; ++i)
    workgroup[i] = id[i];
  std::memset(lds, options->poisonLds ? 0xff : 0, size_t(l.ldsBytes));
  if (options->checkRaces)
    checker.beginWorkgroup(id, linear);
  atBarrier = exited = barrierEpoch = 0;
  std::fill(inShuffle.begin(), inShuffle.end(), 0);
  std::fill(exitedInWave.begin(), exitedInWave.end(), 0);
  fault.clear();
  memoryFault = MemoryFault();
  ready.clear();

  for (uint32_t t = 0; t < threads; ++t) {
    Fiber &f = fibers[t];
    f.runner = this;
    f.id = t;
    f.wave = t / l.waveSize;
    f.state = State::Ready;
    fa_host_env &env = f.env;
    env.emu = &f;
    env.lds = lds;
    env.barrier = &barrierHook;
    env.shuffle = &shuffleHook;
    env.lds_access = options->checkRaces ? &ldsCheckHook : &ldsIgnoreHook;
    env.misaligned = &misalignedHook;
    env.thread_id[0] = t % l.block[0];
    env.thread_id[1] = (t / l.block[0]) % l.block[1];
    env.thread_id[2] = t / (l.block[0] * l.block[1]);
    for (int i = 0; i < 3; ++i) {
      env.block_id[i] = id[i];
      env.block_dim[i] = l.block[i];
      env.grid_dim[i] = l.grid[i];
    }
    env.wave_size = l.waveSize;
    f.context.prepare(stacks.stack(t), stacks.stackBytes(), &fiberMain, &f);
    ready.push_back(t);
  }

  while (true) {
    running.swap(ready);
    ready.clear();
    for (uint32_t t : running) {
      faultCatch.resume = &fibers[t].resume;
      setFaultCatch(&faultCatch);
      schedulerContext.switchTo(fibers[t].context);
      setFaultCatch(nullptr);
      if (memoryFault.signal)
        return memoryFaultStatus(t);
      if (!fault.empty())
        return Status::error(ErrorCode::LaunchFailed, fault)
            .withKernel(l.kernelName);
    }
    for (uint32_t w = 0; w < waveCount; ++w) {
      if (inShuffle[w] == 0)
        continue;
      uint32_t lanes = std::min(l.waveSize, threads - w * l.waveSize);
      if (inShuffle[w] == lanes)
        resolveShuffle(w);
      else if (inShuffle[w] + exitedInWave[w] == lanes)
        return stuck("shuffle divergence (lanes of a wave exited while others "
                     "wait in a shuffle)");
    }
    if (!ready.empty())
      continue;
    uint32_t alive = threads - exited;
    if (alive == 0)
      return Status::success();
    if (atBarrier != alive)
      return stuck("barrier divergence (deadlock)");
    if (exited != 0)
      return stuck("barrier divergence");
    // Everyone arrived: release the barrier.
    ++barrierEpoch;
    atBarrier = 0;
    if (options->checkRaces)
      checker.barrier();
    for (uint32_t t = 0; t < threads; ++t) {
      fibers[t].state = State::Ready;
      ready.push_back(t);
    }
  }
}
