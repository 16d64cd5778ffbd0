//===- MemoryFaults.cpp - Kernel memory faults as errors ------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the emulator's SIGSEGV / SIGBUS handler, its
// installation for the launches in flight, and the workers' alternate
// signal stacks. The handler only reads this thread's FaultCatch, writes
// the fault record and jumps (or, for a write into a guard zone, opens the
// page and returns); describing the fault happens after the jump.
//
//===----------------------------------------------------------------------===//

#include "host/MemoryFaults.h"
#include "host/GuardedMemory.h"

#include <mutex>
#include <sys/mman.h>
#include <ucontext.h>

using namespace fa::detail;

static thread_local FaultCatch *currentCatch = nullptr;

void fa::detail::setFaultCatch(FaultCatch *c) { currentCatch = c; }

namespace {
constexpr int kSignals[2] = {SIGSEGV, SIGBUS};
std::mutex installMutex;
unsigned installCount = 0;
/// The handlers installed before ours, by index in kSignals.
struct sigaction previous[2];

int slotOf(int sig) { return sig == SIGSEGV ? 0 : 1; }

/// x86-64 page faults say whether the access was a read, a write or an
/// instruction fetch (the page-fault error code's bits 1 and 4).
FaultAccess accessOf(int sig, const siginfo_t *info, const void *context) {
#if defined(__x86_64__)
  const auto *uc = static_cast<const ucontext_t *>(context);
  if (sig != SIGSEGV || info->si_code == SI_KERNEL ||
      uc->uc_mcontext.gregs[REG_TRAPNO] != 14)
    return FaultAccess::Unknown;
  greg_t error = uc->uc_mcontext.gregs[REG_ERR];
  if (error & 0x10)
    return FaultAccess::Execute;
  return error & 0x2 ? FaultAccess::Write : FaultAccess::Read;
#else
  (void)sig, (void)info, (void)context;
  return FaultAccess::Unknown;
#endif
}

uintptr_t pcOf(const void *context) {
  const auto *uc = static_cast<const ucontext_t *>(context);
#if defined(__x86_64__)
  return uintptr_t(uc->uc_mcontext.gregs[REG_RIP]);
#elif defined(__aarch64__)
  return uintptr_t(uc->uc_mcontext.pc);
#else
  (void)uc;
  return 0;
#endif
}

/// Hands the signal to the handler installed before ours.
void forward(int sig, siginfo_t *info, void *context) {
  const struct sigaction &p = previous[slotOf(sig)];
  if (p.sa_flags & SA_SIGINFO) {
    p.sa_sigaction(sig, info, context);
    return;
  }
  if (p.sa_handler != SIG_DFL && p.sa_handler != SIG_IGN) {
    p.sa_handler(sig);
    return;
  }
  // Default or ignored: put that back. A fault then happens again when the
  // instruction re-executes (and kills, as it would have); a signal that
  // was sent is sent again.
  ::sigaction(sig, &p, nullptr);
  if (info->si_code <= 0)
    ::raise(sig);
}

void onFault(int sig, siginfo_t *info, void *context) {
  FaultCatch *c = currentCatch;
  // si_code > 0: raised by the kernel for this thread's own access.
  if (!c || !c->resume || info->si_code <= 0) {
    forward(sig, info, context);
    return;
  }
  const auto addr = reinterpret_cast<uintptr_t>(info->si_addr);
  const FaultAccess access = accessOf(sig, info, context);
  if (access == FaultAccess::Write && c->zones && c->zones->openForWrite(addr))
    return; // the write goes into the guard pattern, checked after the launch
  MemoryFault &f = *c->fault;
  f.signal = sig;
  f.address = addr;
  f.addressKnown = info->si_code != SI_KERNEL;
  f.pc = pcOf(context);
  f.access = access;
  sigjmp_buf *resume = c->resume;
  currentCatch = nullptr;
  siglongjmp(*resume, 1);
}
} // namespace

FaultHandlerScope::FaultHandlerScope() {
  std::lock_guard<std::mutex> lock(installMutex);
  if (installCount++ > 0)
    return;
  struct sigaction ours = {};
  ours.sa_sigaction = &onFault;
  ours.sa_flags = SA_SIGINFO | SA_ONSTACK;
  sigemptyset(&ours.sa_mask);
  for (int i = 0; i < 2; ++i) {
    // The previous handler is read before ours is in place, so that
    // forward() never sees it half written.
    ::sigaction(kSignals[i], nullptr, &previous[i]);
    ::sigaction(kSignals[i], &ours, nullptr);
  }
}

FaultHandlerScope::~FaultHandlerScope() {
  std::lock_guard<std::mutex> lock(installMutex);
  if (--installCount > 0)
    return;
  for (int i = 0; i < 2; ++i) {
    // Unless someone replaced ours meanwhile: theirs stays.
    struct sigaction now;
    if (::sigaction(kSignals[i], nullptr, &now) == 0 &&
        (now.sa_flags & SA_SIGINFO) && now.sa_sigaction == &onFault)
      ::sigaction(kSignals[i], &previous[i], nullptr);
  }
}

/// An alternate stack already in place is kept if at least this large;
/// ours is this large. The handler needs little, but the kernel's signal
/// frame holds the vector state (about 11 KiB with AMX) and a forwarded
/// signal may run ASan's report on it.
static constexpr size_t kAltStackBytes = 256 * 1024;
static constexpr size_t kAltStackKeepBytes = 64 * 1024;

AltStack::~AltStack() {
  if (memory)
    ::munmap(memory, bytes);
}

AltStack::Scope::Scope(AltStack &s) {
  if (::sigaltstack(nullptr, &previous) != 0)
    return;
  if (!(previous.ss_flags & SS_DISABLE) &&
      previous.ss_size >= kAltStackKeepBytes)
    return;
  if (!s.memory) {
    void *p = ::mmap(nullptr, kAltStackBytes, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p == MAP_FAILED)
      return; // faults then kill the process, as before
    s.memory = p;
    s.bytes = kAltStackBytes;
  }
  stack_t ours = {};
  ours.ss_sp = s.memory;
  ours.ss_size = s.bytes;
  installed = ::sigaltstack(&ours, nullptr) == 0;
}

AltStack::Scope::~Scope() {
  if (!installed)
    return;
  if (previous.ss_flags & SS_DISABLE) {
    stack_t none = {};
    none.ss_flags = SS_DISABLE;
    ::sigaltstack(&none, nullptr);
  } else {
    ::sigaltstack(&previous, nullptr);
  }
}
