//===- MemoryFaultTest.cpp - Kernel memory faults on the host emulator ----===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// A kernel's read or write far outside a buffer faults on the host device's
// inaccessible pages (host/GuardedMemory.h) and fails the launch with
// LaunchFailed naming the tensor, the offset, the workgroup and the kernel,
// instead of killing the process; the emulator runs the next launch. The
// planted bugs are fixture kernels (kernels/naive_attention_host.cpp, FA_BUG
// 10-13) launched through the runtime, and probe kernels run directly on a
// HostEmulator.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "fa/Validate.h"
#include "fa/fa_runtime.h"

#include <atomic>
#include <csignal>
#include <cstdio>
#include <sys/mman.h>

using namespace fa;

namespace {

// f32, D = 64: K and V are 8192 bytes (two pages), Q and O 17408 (68 x
// 256), so each buffer ends on a page boundary and V starts on one. The
// last workgroup is (2,1,0).
const AttentionShape kShape{1, 2, 1, 34, 32};

/// Launches fixture `name` on zero-filled buffers of kShape.
Status launchFixture(const std::string &name) {
  Device device = test::hostDevice();
  Expected<Module> m = Module::load(device, test::fixturePath(name));
  if (!m)
    return m.status();
  Expected<Kernel> k = m->kernel();
  if (!k)
    return k.status();
  const AttentionShape &s = kShape;
  auto allocate = [&](int64_t floats) {
    return device.allocate(size_t(floats) * sizeof(float));
  };
  Expected<Buffer> q = allocate(s.batch * s.headsQ * s.seqQ * 64),
                   kv[2] = {allocate(s.batch * s.headsKv * s.seqK * 64),
                            allocate(s.batch * s.headsKv * s.seqK * 64)},
                   o = allocate(s.batch * s.headsQ * s.seqQ * 64),
                   lse = allocate(s.batch * s.headsQ * s.seqQ);
  for (const Expected<Buffer> *b : {&q, &kv[0], &kv[1], &o, &lse})
    if (!*b)
      return b->status();
  AttentionArgs args{&*q, &*kv[0], &*kv[1], &*o, &*lse, s, std::nullopt};
  return k->launch(args);
}

void expectContains(const std::string &text, const std::string &part) {
  EXPECT_NE(text.find(part), std::string::npos)
      << "expected '" << part << "' in:\n"
      << text;
}

/// A clean kernel still validates after a fault, in the same process.
void expectEmulatorUsable() {
  Expected<Module> m =
      Module::load(test::hostDevice(), test::fixturePath("attn_f32"));
  ASSERT_TRUE(m.ok()) << m.status().toString();
  ValidationOptions o;
  o.shape = kShape;
  o.launch.checkRaces = true;
  Expected<ValidationReport> r = validateKernel(*m->kernel(), o);
  ASSERT_TRUE(r.ok()) << r.status().toString();
  EXPECT_TRUE(r->verdict.pass);
}

/// Launches `fixture`, which must fail with LaunchFailed and a message
/// holding every part; then checks the emulator is usable again.
Status expectLaunchFault(const std::string &fixture,
                         std::initializer_list<std::string> parts) {
  Status s = launchFixture(fixture);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::LaunchFailed);
  for (const std::string &part : parts)
    expectContains(s.message(), part);
  expectEmulatorUsable();
  return s;
}

TEST(MemoryFaultTest, ReadFarPastTheEndNamesTensorOffsetAndWorkgroup) {
  Status s = expectLaunchFault(
      "attn_bug_k_far_past_end",
      {"invalid read in workgroup (2,1,0) of kernel "
       "'attn_bug_k_far_past_end': thread 1 reads at 0x",
       ", 67108864 bytes past the end of K (byte offset 67117056 of a "
       "8192-byte buffer)",
       "; pc attn_bug_k_far_past_end_host+0x"});
  expectContains(s.toString(),
                 "[kernel: attn_bug_k_far_past_end, target: host, device: "
                 "host]");
}

TEST(MemoryFaultTest, ReadJustPastTheEnd) {
  (void)expectLaunchFault("attn_bug_k_past_end",
                          {"invalid read in workgroup (2,1,0) of kernel "
                           "'attn_bug_k_past_end': thread 1 reads at 0x",
                           ", 4 bytes past the end of K (byte offset 8196 of a "
                           "8192-byte buffer)"});
}

TEST(MemoryFaultTest, ReadBeforeTheStart) {
  (void)expectLaunchFault(
      "attn_bug_v_before_start",
      {"invalid read in workgroup (2,1,0) of kernel "
       "'attn_bug_v_before_start': thread 1 reads at 0x",
       ", 4 bytes before the start of V (byte offset -4 of a "
       "8192-byte buffer)"});
}

// A write past the guard zone faults too and is reported at once.
TEST(MemoryFaultTest, WriteFarPastTheEnd) {
  (void)expectLaunchFault("attn_bug_o_far_past_end",
                          {"invalid write in workgroup (2,1,0) of kernel "
                           "'attn_bug_o_far_past_end': thread 1 writes at 0x",
                           ", 1048576 bytes past the end of O (byte offset "
                           "1065984 of a 17408-byte buffer)"});
}

TEST(MemoryFaultTest, WriteIntoTheGuardZoneIsReportedByTheGuardCheck) {
  Expected<Module> m = Module::load(test::hostDevice(),
                                    test::fixturePath("attn_bug_o_past_end"));
  ASSERT_TRUE(m.ok()) << m.status().toString();
  ValidationOptions o;
  o.shape = {1, 2, 1, 34, 20};
  Expected<ValidationReport> r = validateKernel(*m->kernel(), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), ErrorCode::LaunchFailed);
  expectContains(r.status().message(),
                 "the kernel wrote past the end of O: byte offset 8704 (0 "
                 "bytes past its end; element 4352, 0 past the last of "
                 "4352); 2 of the 4096 guard bytes there changed");
  expectEmulatorUsable();
}

// The C API returns the error code and message.
TEST(MemoryFaultTest, CApiReturnsTheError) {
  fa_device *d = nullptr;
  ASSERT_EQ(fa_device_open("host", &d), FA_OK);
  fa_module *m = nullptr;
  ASSERT_EQ(
      fa_module_load(d, test::fixturePath("attn_bug_k_past_end").c_str(), &m),
      FA_OK)
      << fa_last_error();
  const AttentionShape &s = kShape;
  const size_t qBytes = size_t(s.batch * s.headsQ * s.seqQ * 64 * 4),
               kvBytes = size_t(s.batch * s.headsKv * s.seqK * 64 * 4),
               lseBytes = size_t(s.batch * s.headsQ * s.seqQ * 4);
  fa_buffer *b[5] = {};
  const size_t sizes[5] = {qBytes, kvBytes, kvBytes, qBytes, lseBytes};
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(fa_buffer_alloc(d, sizes[i], &b[i]), FA_OK);
  fa_attention_args args = {};
  args.q = b[0];
  args.k = b[1];
  args.v = b[2];
  args.o = b[3];
  args.lse = b[4];
  args.batch = s.batch;
  args.heads_q = s.headsQ;
  args.heads_kv = s.headsKv;
  args.seq_q = s.seqQ;
  args.seq_k = s.seqK;
  EXPECT_EQ(fa_module_launch(m, nullptr, &args), FA_ERROR_LAUNCH_FAILED);
  expectContains(fa_last_error(), "4 bytes past the end of K (byte offset "
                                  "8196 of a 8192-byte buffer)");
  fa_module_unload(m);
  for (fa_buffer *buffer : b)
    fa_buffer_free(buffer);
  fa_device_close(d);
}

//===----------------------------------------------------------------------===//
// Probe kernels on a HostEmulator
//===----------------------------------------------------------------------===//

HostLaunch probe(fa_host_kernel_fn fn, const uint64_t *args) {
  HostLaunch l;
  l.entry = fn;
  l.args = args;
  l.numWords = 0; // the words are no kernel ABI: no tensor names
  l.kernelName = "probe";
  l.waveSize = 1;
  return l;
}

/// Reads the byte at args[0].
void readKernel(const uint64_t *args, fa_host_env *) {
  (void)*reinterpret_cast<const volatile char *>(uintptr_t(args[0]));
}

TEST(MemoryFaultTest, ReadOutsideEveryTensor) {
  HostEmulator emu(1);
  const uint64_t args[1] = {16};
  Status s = emu.run(probe(&readKernel, args));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::LaunchFailed);
  expectContains(s.message(), "invalid read in workgroup (0,0,0) of kernel "
                              "'probe': thread 0 reads at 0x10, outside every "
                              "tensor");
}

/// Calls the code at args[0] (not checked by UBSan's -fsanitize=function,
/// which would read the callee's type signature before it).
#if defined(__clang__)
__attribute__((no_sanitize("function")))
#endif
void jumpKernel(const uint64_t *args, fa_host_env *) {
  reinterpret_cast<void (*)()>(uintptr_t(args[0]))();
}

TEST(MemoryFaultTest, JumpOutsideEveryTensor) {
  HostEmulator emu(1);
  const uint64_t args[1] = {16};
  Status s = emu.run(probe(&jumpKernel, args));
  ASSERT_FALSE(s.ok());
  expectContains(s.message(), "invalid instruction fetch in workgroup (0,0,0) "
                              "of kernel 'probe': thread 0 executes at 0x10, "
                              "outside every tensor; pc 0x10");
}

// x86-64 reports a non-canonical address as a general-protection fault,
// without the address.
TEST(MemoryFaultTest, NonCanonicalAddress) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "x86-64 only";
#endif
  HostEmulator emu(1);
  const uint64_t args[1] = {uint64_t(1) << 63};
  Status s = emu.run(probe(&readKernel, args));
  ASSERT_FALSE(s.ok());
  expectContains(s.message(),
                 "invalid access in workgroup (0,0,0) of kernel 'probe': "
                 "thread 0 accesses at an address the processor does not "
                 "report (a general-protection fault, as a non-canonical "
                 "address raises)");
}

// A mapping of an empty file: reading it raises SIGBUS.
TEST(MemoryFaultTest, SigbusIsReported) {
  std::FILE *file = std::tmpfile();
  ASSERT_NE(file, nullptr);
  void *page = ::mmap(nullptr, 4096, PROT_READ, MAP_SHARED, fileno(file), 0);
  ASSERT_NE(page, MAP_FAILED);
  HostEmulator emu(1);
  const uint64_t args[1] = {uint64_t(reinterpret_cast<uintptr_t>(page))};
  Status s = emu.run(probe(&readKernel, args));
  ::munmap(page, 4096);
  std::fclose(file);
  ASSERT_FALSE(s.ok());
  expectContains(s.message(), "invalid access in workgroup (0,0,0) of kernel "
                              "'probe': thread 0 accesses at 0x");
  expectContains(s.message(), ", outside every tensor (SIGBUS); pc ");
}

TEST(MemoryFaultTest, ReadPastABufferThatIsNoArgument) {
  Expected<Buffer> b = test::hostDevice().allocate(8192);
  ASSERT_TRUE(b.ok());
  HostEmulator emu(2);
  const uint64_t args[1] = {b->address() + 8192 + 4};
  Status s = emu.run(probe(&readKernel, args));
  ASSERT_FALSE(s.ok());
  expectContains(s.message(), ", 4 bytes past the end of a buffer that is no "
                              "argument of this kernel (byte offset 8196 of a "
                              "8192-byte buffer)");
  // The buffer's zones are readable again: its guard check passes.
  EXPECT_TRUE(b->checkGuards("B", 1).ok());
}

__attribute__((noinline)) uint32_t deepen(uint32_t n) {
  volatile uint8_t frame[256];
  frame[0] = uint8_t(n);
  if (n == 0)
    return frame[0];
  uint32_t r = deepen(n - 1);
  return r + frame[r & 255]; // the frame is live across the call
}

void overflowKernel(const uint64_t *args, fa_host_env *) {
  *reinterpret_cast<uint32_t *>(uintptr_t(args[0])) = deepen(1u << 20);
}

TEST(MemoryFaultTest, StackOverflowIsReported) {
  HostEmulator emu(1);
  uint32_t out = 0;
  const uint64_t args[1] = {uint64_t(reinterpret_cast<uintptr_t>(&out))};
  Status s = emu.run(probe(&overflowKernel, args));
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::LaunchFailed);
  expectContains(s.message(), "in workgroup (0,0,0) of kernel 'probe': "
                              "thread 0 ");
  expectContains(s.message(),
                 "in the guard page below thread 0's stack: a stack overflow "
                 "(each thread has 65536 bytes of stack, "
                 "LaunchOptions::fiberStackBytes)");
}

std::atomic<int> forwarded{0};
void countingHandler(int, siginfo_t *, void *) { ++forwarded; }
void raiseKernel(const uint64_t *, fa_host_env *) { ::raise(SIGSEGV); }

// A SIGSEGV that is no fault of the kernel's (here one sent) goes to the
// handler installed before the launch, which is back in place after it.
TEST(MemoryFaultTest, OtherSignalsGoToThePreviousHandler) {
  struct sigaction counting = {}, old = {}, now = {};
  counting.sa_sigaction = &countingHandler;
  counting.sa_flags = SA_SIGINFO;
  sigemptyset(&counting.sa_mask);
  ASSERT_EQ(::sigaction(SIGSEGV, &counting, &old), 0);
  HostEmulator emu(1);
  forwarded = 0;
  const uint64_t args[1] = {0};
  Status s = emu.run(probe(&raiseKernel, args));
  ::sigaction(SIGSEGV, nullptr, &now);
  ::sigaction(SIGSEGV, &old, nullptr);
  EXPECT_TRUE(s.ok()) << s.toString();
  EXPECT_EQ(forwarded.load(), 1);
  EXPECT_TRUE((now.sa_flags & SA_SIGINFO) &&
              now.sa_sigaction == &countingHandler);
}

} // namespace
