//===- SizesTest.cpp - Overflow-checked sizes and the memory check --------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "fa/Validate.h"

#include <cstdint>

using namespace fa;

namespace {

constexpr int64_t big = int64_t(1) << 62;

TEST(SizesTest, CheckedArithmetic) {
  EXPECT_EQ(checkedMul(3, 4), 12);
  EXPECT_EQ(checkedMul(big, 2), std::nullopt);
  EXPECT_EQ(checkedAdd(INT64_MAX, 1), std::nullopt);
  EXPECT_EQ(checkedProduct({2, 3, 7}), 42);
  EXPECT_EQ(checkedProduct({big, 1, 1, 2}), std::nullopt);
  EXPECT_EQ(checkedSum({INT64_MAX - 1, 1}), INT64_MAX);
  EXPECT_EQ(checkedSum({INT64_MAX - 1, 1, 1}), std::nullopt);
}

// Strides that overflow saturate, so no buffer satisfies them; spans say so.
TEST(SizesTest, StridesSaturateAndSpansOverflow) {
  AttentionShape s{1, 1, 1, big, 1};
  AttentionStrides st = AttentionStrides::contiguous(s, 64);
  EXPECT_EQ(st.q.head, INT64_MAX);
  EXPECT_EQ(st.q.batch, INT64_MAX);
  EXPECT_EQ(st.k.batch, 64);
  EXPECT_EQ(tensorSpan(1, 1, big, 64, st.q), std::nullopt);
  EXPECT_EQ(
      tensorSpan(
          2, 3, 5, 7,
          AttentionStrides::contiguous(AttentionShape{2, 3, 3, 5, 5}, 7).q),
      2 * 3 * 5 * 7);
  // Padding after the last row counts: batch stride 3 * 5 * (7 + 2).
  TensorStrides padded =
      TensorPlacement{TensorLayout::Bhld, 2}.strides(3, 5, 7);
  EXPECT_EQ(tensorSpan(2, 3, 5, 7, padded), 2 * 3 * 5 * 9);
  EXPECT_EQ(tensorSpan(0, 3, 5, 7, padded), std::nullopt);
}

TEST(SizesTest, CheckShapeRefusesOverflow) {
  AttentionProblem p{{1, 1, 1, big, 1}, 64, false, 0.125};
  Status s = checkShape(p);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_NE(s.message().find("the byte size of Q and O (B*Hq*Lq*D elements) "
                             "overflows 64 bits"),
            std::string::npos)
      << s.message();
  EXPECT_EQ(p.qElements(), SIZE_MAX);
  p.shape = {1, 1, 1, 1, INT64_MAX};
  s = checkShape(p);
  EXPECT_NE(s.message().find("K and V"), std::string::npos) << s.message();
  // Neither makes inputs nor a reference.
  EXPECT_TRUE(generateInputs(p, DType::F32, Distribution::Normal, 0).q.empty());
  // 2^60 - 1 elements of 8 bytes still fit.
  p.shape = {1, 1, 1, (int64_t(1) << 54) - 1, 1};
  EXPECT_TRUE(checkShape(p).ok());
}

TEST(SizesTest, ValidationMemoryCountsBuffersAndReferences) {
  AttentionProblem p{{2, 4, 2, 100, 300}, 64, false, 0.125};
  Expected<ValidationMemory> m =
      validationMemory(p, DType::F16, /*hasLse=*/true, AttentionLayout());
  ASSERT_TRUE(m.ok()) << m.status().toString();
  const uint64_t q = 2 * 4 * 100 * 64, kv = 2 * 2 * 300 * 64, lse = 2 * 4 * 100;
  // Q, K, V, O in f16, LSE in f32, each rounded up by up to 256 bytes and
  // between two guard zones.
  const uint64_t extra = 5 * (256 + 2 * Buffer::kDefaultGuardBytes);
  EXPECT_EQ(m->deviceBytes, 2 * (q + 2 * kv + q) + 4 * lse + extra);
  EXPECT_GE(m->inputBytes, 4 * (q + 2 * kv));
  // The fp64 reference alone holds O, its magnitudes and LSE in double.
  EXPECT_GE(m->referenceBytes, 8 * (2 * q + lse));

  // Padding is counted.
  Expected<ValidationMemory> padded = validationMemory(
      p, DType::F16, true, AttentionLayout::uniform(TensorLayout::Blhd, 64));
  ASSERT_TRUE(padded.ok());
  EXPECT_EQ(padded->deviceBytes, 2 * 2 * (q + 2 * kv + q) + 4 * lse + extra);

  // Sizes that fit alone but whose padded buffers overflow.
  p.shape = {1, 1, 1, int64_t(1) << 52, 1};
  p.headDim = 1;
  EXPECT_TRUE(checkShape(p).ok());
  Expected<ValidationMemory> over = validationMemory(
      p, DType::F32, true, AttentionLayout::uniform(TensorLayout::Bhld, 4096));
  ASSERT_FALSE(over.ok());
  EXPECT_NE(over.status().message().find("the device buffer of Q overflows"),
            std::string::npos)
      << over.status().message();
}

TEST(SizesTest, MemoryBeyondTheHostIsRefused) {
  uint64_t available = hostMemoryAvailable();
  ASSERT_GT(available, 0u);
  Device host = test::hostDevice();
  AttentionProblem p{{1, 1, 1, 8, 8}, 64, false, 0.125};
  EXPECT_TRUE(checkMemory(host, p, 1000, 1000).ok());
  // Twice what is available now: MemAvailable moves while other processes
  // run (ctest -j on the H200 saw it grow between the two reads), never by
  // that much.
  Status s = checkMemory(host, p, 2 * available, 1000);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::OutOfMemory);
  EXPECT_NE(s.message().find("needs " + std::to_string(2 * available + 1000) +
                             " bytes of host memory (device buffers 1000"),
            std::string::npos)
      << s.message();
  EXPECT_NE(s.message().find("bytes available"), std::string::npos);
}

// validateKernel refuses before allocating: these would throw bad_alloc or
// length_error, or write out of bounds, if it allocated first.
TEST(SizesTest, ValidateKernelRefusesHugeProblems) {
  Expected<Module> m =
      Module::load(test::hostDevice(), test::fixturePath("attn_f32"));
  ASSERT_TRUE(m.ok()) << m.status().toString();
  Expected<Kernel> k = m->kernel();
  ASSERT_TRUE(k.ok());
  const std::pair<AttentionShape, ErrorCode> cases[] = {
      {{100000, 8, 8, 100000, 100000}, ErrorCode::OutOfMemory},
      {{1, 1, 1, 1, INT64_MAX}, ErrorCode::InvalidArgument},
      {{1, 1, 1, big, 1}, ErrorCode::InvalidArgument}};
  for (const auto &[shape, code] : cases) {
    ValidationOptions o;
    o.shape = shape;
    Expected<ValidationReport> r = validateKernel(*k, o);
    ASSERT_FALSE(r.ok()) << shape.toString();
    EXPECT_EQ(r.status().code(), code) << r.status().toString();
    Expected<BenchResult> b = benchmarkKernel(*k, shape, 1);
    ASSERT_FALSE(b.ok()) << shape.toString();
    EXPECT_EQ(b.status().code(), code) << b.status().toString();
  }
}

} // namespace
