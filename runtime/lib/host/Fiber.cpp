//===- Fiber.cpp - Stackful coroutine context switch ----------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements FiberContext. The x86-64 switch (System V ABI):
//   push rbp, rbx, r12-r15, then 8 bytes holding MXCSR and the x87 control
//   word; store rsp into *from; load rsp from `to`; undo in reverse; ret.
// A fresh fiber's stack is laid out so that this epilogue "returns" into
// faFiberStart with r12 = FiberContext::start, r13 = the context and rsp
// 16-byte aligned for the call, as if faFiberStart had been called.
//
//===----------------------------------------------------------------------===//

#include "host/Fiber.h"

#include <cstdint>
#include <cstring>

#if FA_FIBERS_ASAN
#include <sanitizer/common_interface_defs.h>
#endif

using namespace fa::detail;

#if FA_FIBERS_ASAN
/// The context the running code switched away from, so the side that
/// resumes can record that context's stack as ASan reports it.
static thread_local FiberContext *switchedFrom = nullptr;
#endif

void FiberContext::start(FiberContext *self) {
#if FA_FIBERS_ASAN
  __sanitizer_finish_switch_fiber(nullptr, &switchedFrom->stackBottom,
                                  &switchedFrom->stackBytes);
#endif
  self->entry(self->arg);
}

#if !FA_FIBERS_UCONTEXT
extern "C" __attribute__((visibility("hidden"))) void faSwitchFiber(void **save,
                                                                    void *load);
extern "C" __attribute__((visibility("hidden"))) void faFiberStart();
#endif

void FiberContext::exitTo(FiberContext &to) {
#if FA_FIBERS_ASAN
  switchedFrom = this;
  __sanitizer_start_switch_fiber(nullptr, to.stackBottom, to.stackBytes);
#endif
#if FA_FIBERS_UCONTEXT
  ::setcontext(&to.context);
#else
  // Saved into this context (never resumed), not a local: under ASan a
  // local may live on the fake stack the announcement above just freed.
  faSwitchFiber(&stackPointer, to.stackPointer);
#endif
  __builtin_unreachable();
}

#if FA_FIBERS_UCONTEXT

void FiberContext::trampoline(unsigned low, unsigned high) {
  start(reinterpret_cast<FiberContext *>((uintptr_t(high) << 32) | low));
}

void FiberContext::prepare(void *stack, size_t bytes, Entry fn, void *a) {
  entry = fn;
  arg = a;
#if FA_FIBERS_ASAN
  stackBottom = stack;
  stackBytes = bytes;
#endif
  ::getcontext(&context);
  context.uc_stack.ss_sp = stack;
  context.uc_stack.ss_size = bytes;
  context.uc_link = nullptr;
  uintptr_t self = reinterpret_cast<uintptr_t>(this);
  ::makecontext(&context, reinterpret_cast<void (*)()>(&trampoline), 2,
                unsigned(self & 0xffffffffu), unsigned(self >> 32));
}

void FiberContext::switchTo(FiberContext &to) {
#if FA_FIBERS_ASAN
  void *fakeStack = nullptr;
  switchedFrom = this;
  __sanitizer_start_switch_fiber(&fakeStack, to.stackBottom, to.stackBytes);
#endif
  ::swapcontext(&context, &to.context);
#if FA_FIBERS_ASAN
  __sanitizer_finish_switch_fiber(fakeStack, &switchedFrom->stackBottom,
                                  &switchedFrom->stackBytes);
#endif
}

#else // x86-64 assembly

asm(R"(
  .text
  .p2align 4
  .globl faSwitchFiber
  .hidden faSwitchFiber
  .type faSwitchFiber, @function
faSwitchFiber:
  .cfi_startproc
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .cfi_endproc
  .size faSwitchFiber, .-faSwitchFiber

  .p2align 4
  .globl faFiberStart
  .hidden faFiberStart
  .type faFiberStart, @function
faFiberStart:
  .cfi_startproc
  .cfi_undefined rip
  movq %r13, %rdi
  callq *%r12
  ud2
  .cfi_endproc
  .size faFiberStart, .-faFiberStart
)");

void FiberContext::prepare(void *stack, size_t bytes, Entry fn, void *a) {
  entry = fn;
  arg = a;
#if FA_FIBERS_ASAN
  stackBottom = stack;
  stackBytes = bytes;
#endif
  uintptr_t top = (reinterpret_cast<uintptr_t>(stack) + bytes) & ~uintptr_t(15);
  uint64_t *slot = reinterpret_cast<uint64_t *>(top);
  // From the top: a null word ending backtraces, the return address, rbp,
  // rbx, r12, r13, r14, r15, and the control words.
  slot[-1] = 0;
  slot[-2] = 0; // keeps rsp 16-byte aligned at faFiberStart's call
  slot[-3] = reinterpret_cast<uint64_t>(&faFiberStart);
  slot[-4] = 0;                                  // rbp
  slot[-5] = 0;                                  // rbx
  slot[-6] = reinterpret_cast<uint64_t>(&start); // r12
  slot[-7] = reinterpret_cast<uint64_t>(this);   // r13
  slot[-8] = 0;                                  // r14
  slot[-9] = 0;                                  // r15
  uint32_t mxcsr;
  uint16_t fpucw;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fpucw));
  uint64_t control = mxcsr | (uint64_t(fpucw) << 32);
  std::memcpy(&slot[-10], &control, 8);
  stackPointer = &slot[-10];
}

void FiberContext::switchTo(FiberContext &to) {
#if FA_FIBERS_ASAN
  void *fakeStack = nullptr;
  switchedFrom = this;
  __sanitizer_start_switch_fiber(&fakeStack, to.stackBottom, to.stackBytes);
#endif
  faSwitchFiber(&stackPointer, to.stackPointer);
#if FA_FIBERS_ASAN
  __sanitizer_finish_switch_fiber(fakeStack, &switchedFrom->stackBottom,
                                  &switchedFrom->stackBytes);
#endif
}

#endif
