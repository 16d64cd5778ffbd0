//===- MemoryFaults.h - Kernel memory faults as errors ----------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. While a launch runs, SIGSEGV and SIGBUS go to a handler of the
// emulator (installed by the first launch in flight, the previous handler
// put back by the last). A fault raised by kernel code on a fiber of a
// worker (the thread has a FaultCatch set) is recorded and the fiber jumps
// back to its start, out of the kernel, through siglongjmp; the workgroup
// runner then fails the launch with a message naming the tensor. Any other
// SIGSEGV or SIGBUS (another thread, the runtime's own code, a signal sent
// with kill) goes to the handler installed before: ASan's, a program's, or
// the default action.
//
// The handler runs on an alternate signal stack (a fault may be a fiber's
// stack overflow), which each worker installs for the launch unless its
// thread has one.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_MEMORYFAULTS_H
#define FA_LIB_MEMORYFAULTS_H

#include <csetjmp>
#include <csignal>
#include <cstddef>
#include <cstdint>

namespace fa {
namespace detail {

class ProtectedZones;

enum class FaultAccess : uint8_t { Unknown, Read, Write, Execute };

/// What the handler saw.
struct MemoryFault {
  int signal = 0; ///< 0: no fault
  uintptr_t address = 0;
  /// False for a general-protection fault (SI_KERNEL: a non-canonical
  /// address on x86-64), whose address the processor does not report.
  bool addressKnown = true;
  uintptr_t pc = 0;
  FaultAccess access = FaultAccess::Unknown;
};

/// Set on a worker thread while one of its fibers runs kernel code.
struct FaultCatch {
  sigjmp_buf *resume = nullptr; ///< the running fiber's way out
  MemoryFault *fault = nullptr; ///< where the handler records the fault
  /// Zone pages a faulting write may open (GuardedMemory.h); may be null.
  const ProtectedZones *zones = nullptr;
};

/// This thread's catch (null: faults here are not the emulator's).
void setFaultCatch(FaultCatch *c);

/// Installs the handler for its lifetime (counted across launches).
class FaultHandlerScope {
public:
  FaultHandlerScope();
  ~FaultHandlerScope();
  FaultHandlerScope(const FaultHandlerScope &) = delete;
  FaultHandlerScope &operator=(const FaultHandlerScope &) = delete;
};

/// An alternate signal stack for one worker thread, mapped on first use.
class AltStack {
public:
  AltStack() = default;
  ~AltStack();
  AltStack(const AltStack &) = delete;
  AltStack &operator=(const AltStack &) = delete;

  /// Makes it the calling thread's alternate stack for the scope's
  /// lifetime, unless the thread already has one large enough.
  class Scope {
  public:
    explicit Scope(AltStack &stack);
    ~Scope();
    Scope(const Scope &) = delete;
    Scope &operator=(const Scope &) = delete;

  private:
    stack_t previous{};
    bool installed = false;
  };

private:
  void *memory = nullptr;
  size_t bytes = 0;
};

} // namespace detail
} // namespace fa

#endif // FA_LIB_MEMORYFAULTS_H
