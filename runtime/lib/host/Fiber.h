//===- Fiber.h - Stackful coroutine context switch --------------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal. The execution context of one emulated GPU thread (or of the
// scheduler that runs them). On x86-64 the switch is a few instructions of
// assembly saving the callee-saved registers and the x87/SSE control words:
// glibc's swapcontext also saves the signal mask with a system call on every
// switch, which made barriers and shuffles ~20x slower. Elsewhere, or when
// built with FA_FIBERS_UCONTEXT=1, ucontext is used.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_FIBER_H
#define FA_LIB_FIBER_H

#include <cstddef>

#if !defined(FA_FIBERS_UCONTEXT)
#if defined(__x86_64__)
#define FA_FIBERS_UCONTEXT 0
#else
#define FA_FIBERS_UCONTEXT 1
#endif
#endif

#if FA_FIBERS_UCONTEXT
#include <ucontext.h>
#endif

// Under AddressSanitizer every switch is announced to it
// (__sanitizer_start/finish_switch_fiber), so that it knows which stack is
// running (stack checks, fake stacks for detect_stack_use_after_return).
#if defined(__SANITIZE_ADDRESS__)
#define FA_FIBERS_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define FA_FIBERS_ASAN 1
#endif
#endif
#ifndef FA_FIBERS_ASAN
#define FA_FIBERS_ASAN 0
#endif

namespace fa {
namespace detail {

class FiberContext {
public:
  using Entry = void (*)(void *arg);

  /// Makes the next switch to this context call entry(arg) on the stack
  /// [stack, stack + bytes). `entry` must never return.
  void prepare(void *stack, size_t bytes, Entry entry, void *arg);

  /// Saves the running context into this object and resumes `to`.
  void switchTo(FiberContext &to);

  /// The last switch of a fiber whose entry is done: like switchTo, but
  /// this context is never resumed (ASan frees its fake stack).
  [[noreturn]] void exitTo(FiberContext &to);

private:
  /// The first code a fresh fiber runs: tells ASan the switch is done, then
  /// calls entry(arg).
  static void start(FiberContext *self);
  Entry entry = nullptr;
  void *arg = nullptr;
#if FA_FIBERS_ASAN
  /// This context's stack, for ASan: given to prepare(), or (the thread's
  /// own stack) learnt from ASan when it first switches away.
  const void *stackBottom = nullptr;
  size_t stackBytes = 0;
#endif
#if FA_FIBERS_UCONTEXT
  static void trampoline(unsigned low, unsigned high);
  ucontext_t context;
#else
  void *stackPointer = nullptr;
#endif
};

} // namespace detail
} // namespace fa

#endif // FA_LIB_FIBER_H
