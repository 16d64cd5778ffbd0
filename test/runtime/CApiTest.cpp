//===- CApiTest.cpp - The C API -------------------------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "fa/fa_runtime.h"

#include <cmath>
#include <cstdlib>
#include <new>
#include <string>
#include <vector>

extern "C" int faCApiRunsKernel(const char *path);       // CApiCheck.c
extern "C" int faCApiRunsVarlenKernel(const char *path); // CApiCheck.c

using namespace fa;

// Allocation failure on demand: this binary replaces the global operator new
// (the runtime library's allocations come here too), and the N-th allocation
// of the calling thread after arming throws std::bad_alloc. Sanitizer
// runtimes define operator new themselves; there the test is skipped.
#if defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer) ||     \
    __has_feature(memory_sanitizer)
#define FA_TEST_SANITIZER 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define FA_TEST_SANITIZER 1
#endif

static thread_local long allocationsUntilFailure = -1; // -1: never fail

#ifndef FA_TEST_SANITIZER
void *operator new(std::size_t size) {
  if (allocationsUntilFailure >= 0 && allocationsUntilFailure-- == 0)
    throw std::bad_alloc();
  if (void *p = std::malloc(size ? size : 1))
    return p;
  throw std::bad_alloc();
}
void operator delete(void *p) noexcept { std::free(p); }
void operator delete(void *p, std::size_t) noexcept { std::free(p); }
#endif

namespace {

TEST(CApiTest, ErrorsAreCodesAndMessages) {
  fa_device *d = nullptr;
  EXPECT_EQ(fa_device_open("tpu", &d),
            static_cast<int>(ErrorCode::InvalidArgument));
  EXPECT_EQ(std::string(fa_last_error()).rfind("unknown device 'tpu'", 0), 0u);
  ASSERT_EQ(fa_device_open("host", &d), FA_OK);
  EXPECT_STREQ(fa_last_error(), "");
  EXPECT_STREQ(fa_device_name(d), "host");
  fa_module *m = nullptr;
  EXPECT_EQ(fa_module_load(d, "/nonexistent.so", &m),
            static_cast<int>(ErrorCode::NotFound));
  fa_buffer *b = nullptr;
  ASSERT_EQ(fa_buffer_alloc(d, 8, &b), FA_OK);
  char bytes[16] = {};
  EXPECT_NE(fa_buffer_write(b, 4, bytes, 8), FA_OK);
  EXPECT_NE(std::string(fa_last_error()).find("overruns a buffer of 8 bytes"),
            std::string::npos)
      << fa_last_error();
  fa_buffer_free(b);
  fa_device_close(d);
}

// The whole flow from C (CApiCheck.c, compiled as C).
TEST(CApiTest, RunsAKernelFromC) {
  EXPECT_EQ(faCApiRunsKernel(test::fixturePath("attn_f32").c_str()), 0)
      << fa_last_error();
}

// A varlen launch from C (fa_module_launch_varlen), its answer by hand.
TEST(CApiTest, RunsAVarlenKernelFromC) {
  EXPECT_EQ(faCApiRunsVarlenKernel(test::fixturePath("varlen_f32").c_str()), 0)
      << fa_last_error();
}

// No exception crosses the C API: loading and launching with the n-th
// allocation failing, for every n until one succeeds, returns an error code
// and message each time.
TEST(CApiTest, AllocationFailuresBecomeErrorCodes) {
#ifdef FA_TEST_SANITIZER
  GTEST_SKIP() << "the sanitizer runtime owns operator new";
#endif
  fa_device *d = nullptr;
  ASSERT_EQ(fa_device_open("host", &d), FA_OK);
  const std::string path = test::fixturePath("attn_f32");
  enum { L = 4, D = 64 };
  std::vector<float> zeros(L * D, 0.0f);
  fa_buffer *b[5] = {};
  for (int i = 0; i < 5; ++i)
    ASSERT_EQ(fa_buffer_alloc(
                  d, i < 4 ? sizeof(float) * L * D : sizeof(float) * L, &b[i]),
              FA_OK);
  fa_attention_args args = {};
  args.q = b[0];
  args.k = b[1];
  args.v = b[2];
  args.o = b[3];
  args.lse = b[4];
  args.batch = args.heads_q = args.heads_kv = 1;
  args.seq_q = args.seq_k = L;

  // Each step runs with allocation `n` of this thread failing.
  auto failing = [](long n, auto call) {
    fa_status rc = -1;
    allocationsUntilFailure = n;
    try {
      rc = call();
    } catch (const std::exception &e) {
      allocationsUntilFailure = -1;
      ADD_FAILURE() << "allocation " << n << ": " << e.what()
                    << " escaped the C API";
    }
    allocationsUntilFailure = -1;
    return rc;
  };
  int outOfMemory = 0;
  fa_module *m = nullptr;
  for (long n = 0; n < 100000; ++n) {
    fa_status rc =
        failing(n, [&] { return fa_module_load(d, path.c_str(), &m); });
    if (rc == FA_OK)
      break;
    ASSERT_NE(rc, -1);
    EXPECT_STRNE(fa_last_error(), "") << "allocation " << n;
    outOfMemory += rc == FA_ERROR_OUT_OF_MEMORY;
  }
  ASSERT_NE(m, nullptr);
  EXPECT_GT(outOfMemory, 0);
  // A launch allocates nothing on the calling thread (the packing and the
  // checks of a call that succeeds build no strings and no vectors): it
  // succeeds with the thread's first allocation failing.
  EXPECT_EQ(failing(0, [&] { return fa_module_launch(m, nullptr, &args); }),
            FA_OK)
      << fa_last_error();
  // A refused one reports out of memory where building its message fails.
  fa_attention_args bad = args;
  bad.seq_q = -1;
  int launchOutOfMemory = 0;
  for (long n = 0; n < 100000; ++n) {
    fa_status rc = failing(n, [&] { return fa_module_launch(m, nullptr, &bad); });
    ASSERT_NE(rc, -1);
    ASSERT_NE(rc, FA_OK);
    EXPECT_STRNE(fa_last_error(), "") << "allocation " << n;
    if (rc == FA_ERROR_INVALID_ARGUMENT)
      break;
    launchOutOfMemory += rc == FA_ERROR_OUT_OF_MEMORY;
  }
  EXPECT_GT(launchOutOfMemory, 0);
  // Still usable afterwards.
  EXPECT_EQ(fa_module_launch(m, nullptr, &args), FA_OK) << fa_last_error();
  fa_module_unload(m);
  for (fa_buffer *buffer : b)
    fa_buffer_free(buffer);
  fa_device_close(d);
}

// Sizes whose contiguous strides overflow int64 are refused, not wrapped.
TEST(CApiTest, OverflowingShapeIsRefused) {
  fa_device *d = nullptr;
  ASSERT_EQ(fa_device_open("host", &d), FA_OK);
  fa_module *m = nullptr;
  ASSERT_EQ(fa_module_load(d, test::fixturePath("attn_f32").c_str(), &m), FA_OK)
      << fa_last_error();
  fa_buffer *b[5] = {};
  for (fa_buffer *&buffer : b)
    ASSERT_EQ(fa_buffer_alloc(d, 4096, &buffer), FA_OK);
  fa_attention_args args = {};
  args.q = b[0];
  args.k = b[1];
  args.v = b[2];
  args.o = b[3];
  args.lse = b[4];
  args.batch = args.heads_q = args.heads_kv = args.seq_k = 1;
  // Lq * D = 2^62 * 64 wraps to 0 in int64.
  args.seq_q = int64_t(1) << 62;
  EXPECT_EQ(fa_module_launch(m, nullptr, &args), FA_ERROR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(fa_last_error()).find("bytes"), std::string::npos)
      << fa_last_error();
  fa_module_unload(m);
  for (fa_buffer *buffer : b)
    fa_buffer_free(buffer);
  fa_device_close(d);
}

} // namespace
