//===- CApiTest.cpp - The C API -------------------------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "fa/fa_runtime.h"

#include <cmath>
#include <string>

extern "C" int faCApiRunsKernel(const char *path); // CApiCheck.c

using namespace fa;

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

} // namespace
