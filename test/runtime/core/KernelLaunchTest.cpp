//===- KernelLaunchTest.cpp - Argument checks, packing and real launches --===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "fa/Validate.h"

#include <cmath>

using namespace fa;
using test::failures;
using test::loadKernel;
using test::loadModule;

namespace {

ValidationReport validate(const std::string &name, AttentionShape shape,
                          Distribution dist = Distribution::Normal,
                          uint64_t seed = 1, bool checkRaces = true) {
  ValidationOptions o;
  o.shape = shape;
  o.dist = dist;
  o.seed = seed;
  o.launch.checkRaces = checkRaces;
  Expected<ValidationReport> r = validateKernel(loadKernel(name), o);
  EXPECT_TRUE(r.ok()) << r.status().toString();
  return r ? r.take() : ValidationReport();
}

// f32: GQA, Lq != Lk, partial blocks, single-row decode; checked against the
// fp64 reference with the documented criteria, race checking on.
TEST(KernelLaunchTest, F32MatchesFp64Reference) {
  for (AttentionShape shape :
       {AttentionShape{1, 2, 1, 40, 33}, AttentionShape{2, 4, 2, 17, 64},
        AttentionShape{1, 1, 1, 1, 50}}) {
    ValidationReport r = validate("attn_f32", shape);
    EXPECT_TRUE(r.verdict.pass) << shape.toString() << "\n" << failures(r);
    EXPECT_LT(r.ours.maxAbsDiff, 1e-5);
    EXPECT_TRUE(r.ours.lseCompared);
    EXPECT_LT(r.ours.lseMaxAbsDiff, 1e-5);
  }
}

TEST(KernelLaunchTest, F16CausalMatchesFp64Reference) {
  // Lq > Lk leaves rows with no visible key (output 0, LSE -inf).
  for (AttentionShape shape :
       {AttentionShape{2, 2, 2, 37, 50}, AttentionShape{1, 4, 1, 45, 20}}) {
    for (Distribution dist : {Distribution::Normal, Distribution::Outliers}) {
      ValidationReport r = validate("attn_f16_causal", shape, dist, 3);
      EXPECT_TRUE(r.verdict.pass) << shape.toString() << "\n" << failures(r);
      EXPECT_GT(r.naive.maxAbsDiff, 0); // f16 rounding is visible
    }
  }
}

TEST(KernelLaunchTest, F16WithoutLseAndBf16) {
  ValidationReport f16 = validate("attn_f16", {1, 2, 2, 70, 90});
  EXPECT_TRUE(f16.verdict.pass) << failures(f16);
  EXPECT_FALSE(f16.ours.lseCompared);
  ValidationReport bf16 =
      validate("attn_bf16", {1, 3, 1, 30, 19}, Distribution::Outliers, 11);
  EXPECT_TRUE(bf16.verdict.pass) << failures(bf16);
}

// The same data in a [B, L, H, D] layout, described by strides, must give
// the same output as the contiguous [B, H, L, D] launch.
TEST(KernelLaunchTest, HonoursStrides) {
  Kernel k = loadKernel("attn_f32");
  Device d = k.device();
  const int64_t B = 2, Hq = 2, Hkv = 1, Lq = 20, Lk = 24, D = 64;
  AttentionProblem p{{B, Hq, Hkv, Lq, Lk}, D, false, 0.125};
  AttentionData in = generateInputs(p, DType::F32, Distribution::Normal, 5);

  auto toBlhd = [&](const std::vector<float> &bhld, int64_t H, int64_t L) {
    std::vector<float> out(bhld.size());
    for (int64_t b = 0; b < B; ++b)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t l = 0; l < L; ++l)
          for (int64_t c = 0; c < D; ++c)
            out[((b * L + l) * H + h) * D + c] =
                bhld[((b * H + h) * L + l) * D + c];
    return out;
  };
  auto upload = [&](const std::vector<float> &v) {
    Expected<Buffer> buf = d.allocate(v.size() * 4);
    EXPECT_TRUE(buf.ok());
    EXPECT_TRUE(buf->copyFromHost(v.data(), v.size() * 4).ok());
    return buf.take();
  };
  Buffer q = upload(toBlhd(in.q, Hq, Lq)), kk = upload(toBlhd(in.k, Hkv, Lk)),
         v = upload(toBlhd(in.v, Hkv, Lk));
  Buffer o = d.allocate(p.qElements() * 4).take();
  // LSE rows padded: head stride Lq + 3.
  const int64_t lseHead = Lq + 3;
  Buffer lse = d.allocate(size_t(B * Hq * lseHead * 4)).take();
  AttentionArgs args;
  args.q = &q;
  args.k = &kk;
  args.v = &v;
  args.o = &o;
  args.lse = &lse;
  args.shape = p.shape;
  AttentionStrides s;
  s.q = s.o = {Lq * Hq * D, D, Hq * D};
  s.k = s.v = {Lk * Hkv * D, D, Hkv * D};
  s.lseBatch = Hq * lseHead;
  s.lseHead = lseHead;
  args.strides = s;
  LaunchOptions lo;
  lo.checkRaces = true;
  FA_ASSERT_OK(k.launch(args, lo));

  std::vector<float> got(p.qElements()), lsePadded(size_t(B * Hq * lseHead));
  FA_ASSERT_OK(o.copyToHost(got.data(), got.size() * 4));
  FA_ASSERT_OK(lse.copyToHost(lsePadded.data(), lsePadded.size() * 4));
  AttentionResult<double> ref = referenceAttentionF64(p, in);
  std::vector<double> refBlhd(ref.o.size());
  std::vector<float> lseGot(p.lseElements());
  for (int64_t b = 0; b < B; ++b)
    for (int64_t h = 0; h < Hq; ++h)
      for (int64_t l = 0; l < Lq; ++l) {
        lseGot[(b * Hq + h) * Lq + l] = lsePadded[(b * Hq + h) * lseHead + l];
        for (int64_t c = 0; c < D; ++c)
          refBlhd[((b * Lq + l) * Hq + h) * D + c] =
              ref.o[((b * Hq + h) * Lq + l) * D + c];
      }
  EXPECT_LT(compareOutputs(got, refBlhd).maxAbsDiff, 1e-5);
  OutputMetrics m;
  compareLse(m, lseGot, ref.lse);
  EXPECT_LT(m.lseMaxAbsDiff, 1e-5);
}

// The 44 words, word by word, as KernelAbi.h lays them out.
TEST(KernelLaunchTest, PacksTheAbiWords) {
  Device d = test::hostDevice();
  KernelInfo info = test::fixtureManifest("attn_f16_causal").kernels[0];
  AttentionShape shape{3, 4, 2, 33, 70};
  const int64_t D = info.headDim;
  Buffer q = d.allocate(3 * 4 * 33 * D * 2 + 6).take(); // a little slack
  Buffer k = d.allocate(3 * 2 * 70 * D * 2).take();
  Buffer v = d.allocate(3 * 2 * 70 * D * 2).take();
  Buffer o = d.allocate(3 * 4 * 33 * D * 2).take();
  Buffer lse = d.allocate(3 * 4 * 33 * 4).take();
  AttentionArgs args{&q, &k, &v, &o, &lse, shape, std::nullopt};
  Expected<PackedLaunch> p = packAttentionArgs(info, args, d.limits());
  FA_ASSERT_OK(p);
  const uint64_t *w = p->words.data();
  ASSERT_EQ(p->numWords, 44u);
  EXPECT_EQ(p->split.kvSplits, 1);
  EXPECT_FALSE(p->combineGeometry);
  const Buffer *buffers[] = {&q, &k, &v, &o, &lse};
  const uint64_t elems[] = {q.size() / 2, k.size() / 2, v.size() / 2,
                            o.size() / 2, lse.size() / 4};
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(w[i * 5 + 0], buffers[i]->address()) << i;
    EXPECT_EQ(w[i * 5 + 1], buffers[i]->address()) << i;
    EXPECT_EQ(w[i * 5 + 2], 0u) << i;
    EXPECT_EQ(w[i * 5 + 3], elems[i]) << i;
    EXPECT_EQ(w[i * 5 + 4], 1u) << i;
  }
  const uint64_t sizes[] = {3, 4, 2, 33, 70};
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(w[25 + i], sizes[i]);
  const uint64_t strides[] = {uint64_t(4 * 33 * D),
                              uint64_t(33 * D),
                              uint64_t(D), // Q
                              uint64_t(2 * 70 * D),
                              uint64_t(70 * D),
                              uint64_t(D), // K
                              uint64_t(2 * 70 * D),
                              uint64_t(70 * D),
                              uint64_t(D), // V
                              uint64_t(4 * 33 * D),
                              uint64_t(33 * D),
                              uint64_t(D), // O
                              4 * 33,
                              33}; // LSE
  for (int i = 0; i < 14; ++i)
    EXPECT_EQ(w[30 + i], strides[i]) << "stride " << i;
  // grid = (ceil(33 / 16), Hq, B), block = (threads, 1, 1).
  EXPECT_EQ(p->geometry.grid[0], 3u);
  EXPECT_EQ(p->geometry.grid[1], 4u);
  EXPECT_EQ(p->geometry.grid[2], 3u);
  EXPECT_EQ(p->geometry.block[0], 64u);
  EXPECT_EQ(p->geometry.block[1], 1u);
  EXPECT_EQ(p->geometry.block[2], 1u);
  EXPECT_EQ(p->geometry.ldsBytes, uint64_t(info.ldsBytes));

  // Without LSE output: null pointer and size 0 in the LSE words.
  info.hasLse = false;
  args.lse = nullptr;
  Expected<PackedLaunch> noLse = packAttentionArgs(info, args, d.limits());
  FA_ASSERT_OK(noLse);
  EXPECT_EQ(noLse->words[20], 0u);
  EXPECT_EQ(noLse->words[21], 0u);
  EXPECT_EQ(noLse->words[23], 0u);
}

// A kernel with 32-bit index arithmetic (sm_90's default) refuses a problem
// whose element offsets do not fit in int32, before looking at buffers.
TEST(KernelLaunchTest, ThirtyTwoBitIndexRefusesLargeOffsets) {
  Device d = test::hostDevice();
  KernelInfo info = test::fixtureManifest("attn_f16_causal").kernels[0];
  info.indexBits = 32;
  info.hasLse = false;
  ASSERT_EQ(info.headDim, 64);
  // 32 x 64 x 16384 rows of D=64: 2^31 elements (> INT32_MAX).
  AttentionShape big{32, 64, 64, 16384, 16384};
  AttentionArgs args{nullptr, nullptr, nullptr,     nullptr,
                     nullptr, big,     std::nullopt};
  Expected<PackedLaunch> p = packAttentionArgs(info, args, d.limits());
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find(
                "uses 32-bit index arithmetic (index_bits 32) but the offsets "
                "into Q reach 2147483648 elements (limit 2147483647); compile "
                "it with fac --index-bits=64"),
            std::string::npos)
      << p.status().message();
  // One row less per head fits (the check is exact, not a blanket limit);
  // what fails then is the missing buffer.
  AttentionShape fits{32, 64, 64, 16384 - info.blockM, 16384 - info.blockM};
  args.shape = fits;
  p = packAttentionArgs(info, args, d.limits());
  ASSERT_FALSE(p.ok());
  EXPECT_NE(p.status().message().find("buffer Q is missing"), std::string::npos)
      << p.status().message();
}

std::string launchError(const std::string &kernel, AttentionArgs args) {
  Status s = loadKernel(kernel).launch(args);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  return s.message();
}

TEST(KernelLaunchTest, RejectsWrongBufferSizes) {
  Device d = test::hostDevice();
  // attn_f32: D = 64, f32. Shape 1,2,1,8,8: Q/O need 2*8*64*4 = 4096 bytes,
  // K/V 1*8*64*4 = 2048, LSE 2*8*4 = 64.
  Buffer q = d.allocate(4096).take(), k = d.allocate(2048).take(),
         v = d.allocate(2047).take(), o = d.allocate(4096).take(),
         lse = d.allocate(64).take(), small = d.allocate(60).take();
  AttentionShape shape{1, 2, 1, 8, 8};
  EXPECT_EQ(launchError("attn_f32", {&q, &k, &v, &o, &lse, shape, {}}),
            "buffer V holds 2047 bytes but [B=1, H=1, L=8, D=64] of f32 with "
            "strides (512, 512, 64, 1) needs 2048 bytes");
  EXPECT_EQ(launchError("attn_f32", {&q, &k, &k, &o, &small, shape, {}}),
            "buffer LSE holds 60 bytes but [B=1, Hq=2, Lq=8] of f32 with "
            "strides (16, 8, 1) needs 64 bytes");
  EXPECT_EQ(launchError("attn_f32", {&q, &k, &k, &o, nullptr, shape, {}}),
            "kernel 'attn_f32' writes LSE: pass an LSE buffer (needs 64 "
            "bytes)");
  EXPECT_EQ(launchError("attn_f32", {&q, nullptr, &k, &o, &lse, shape, {}}),
            "buffer K is missing (needs 2048 bytes)");
  EXPECT_EQ(launchError("attn_f16", {&q, &k, &k, &o, &lse, shape, {}}),
            "kernel 'attn_f16' was compiled without an LSE output: pass no "
            "LSE buffer");
}

TEST(KernelLaunchTest, RejectsBadShapesAndStrides) {
  Device d = test::hostDevice();
  Buffer big = d.allocate(1 << 20).take();
  AttentionArgs args{&big, &big, &big, &big, &big, {1, 3, 2, 8, 8}, {}};
  EXPECT_EQ(launchError("attn_f32", args),
            "invalid shape: Hq (3) is not a multiple of Hkv (2)");
  args.shape = {1, 2, 2, 0, 8};
  EXPECT_EQ(launchError("attn_f32", args),
            "invalid shape: Lq is 0, must be at least 1");
  args.shape = {1, 2, 2, 8, 8};
  AttentionStrides s = AttentionStrides::contiguous(args.shape, 64);
  s.k.row = -64;
  args.strides = s;
  EXPECT_EQ(launchError("attn_f32", args),
            "invalid stride k.row = -64: strides must be non-negative");
  args.strides.reset();
  args.shape = {70000, 1, 1, 1, 1};
  Buffer huge = d.allocate(70000 * 64 * 4).take();
  Buffer hugeO = d.allocate(70000 * 64 * 4).take();
  Buffer hugeLse = d.allocate(70000 * 4).take();
  AttentionArgs wide{&huge, &huge, &huge, &hugeO, &hugeLse, {70000, 1, 1, 1, 1},
                     {}};
  EXPECT_EQ(launchError("attn_f32", wide),
            "grid (1, 1, 70000) exceeds the device's limit (2147483647, "
            "65535, 65535)");
}

/// Buffers for attn_f32 (D = 64, f32) at `shape`, each 1 MiB.
struct BigBuffers {
  Buffer q, k, v, o, lse;
  explicit BigBuffers(Device d)
      : q(d.allocate(1 << 20).take()), k(d.allocate(1 << 20).take()),
        v(d.allocate(1 << 20).take()), o(d.allocate(1 << 20).take()),
        lse(d.allocate(1 << 20).take()) {}
  AttentionArgs args(AttentionShape shape, const AttentionStrides &s) {
    return {&q, &k, &v, &o, &lse, shape, s};
  }
};

// Two different (b, h, l, d) of O, or (b, h, l) of LSE, at one address:
// rejected, naming the tensor, its strides and the dimension at fault.
TEST(KernelLaunchTest, RejectsOverlappingOutputStrides) {
  BigBuffers b(test::hostDevice());
  AttentionShape shape{2, 4, 2, 10, 12};
  AttentionStrides s = AttentionStrides::contiguous(shape, 64);
  s.o.row = 1; // rows 1 element apart, 64 elements long
  EXPECT_EQ(launchError("attn_f32", b.args(shape, s)),
            "strides of output O (2560, 640, 1, 1) for [B=2, Hq=4, Lq=10, "
            "D=64] overlap: the Lq stride 1 must be at least 64 to step over "
            "D");
  s.o = {0, 0, 0};
  EXPECT_EQ(launchError("attn_f32", b.args(shape, s)),
            "strides of output O (0, 0, 0, 1) for [B=2, Hq=4, Lq=10, D=64] "
            "overlap: the Lq stride 0 must be at least 1");
  s.o = {2560, 320, 64}; // heads overlap half of each other
  EXPECT_EQ(launchError("attn_f32", b.args(shape, s)),
            "strides of output O (2560, 320, 64, 1) for [B=2, Hq=4, Lq=10, "
            "D=64] overlap: the Hq stride 320 must be at least 640 to step "
            "over D, Lq");
  s = AttentionStrides::contiguous(shape, 64);
  s.lseHead = 0;
  EXPECT_EQ(launchError("attn_f32", b.args(shape, s)),
            "strides of output LSE (40, 0, 1) for [B=2, Hq=4, Lq=10] "
            "overlap: the Hq stride 0 must be at least 1");
  s.lseHead = 9;
  EXPECT_EQ(launchError("attn_f32", b.args(shape, s)),
            "strides of output LSE (40, 9, 1) for [B=2, Hq=4, Lq=10] "
            "overlap: the Hq stride 9 must be at least 10 to step over Lq");
  s.lseHead = 10;
  s.lseBatch = 30;
  EXPECT_EQ(launchError("attn_f32", b.args(shape, s)),
            "strides of output LSE (30, 10, 1) for [B=2, Hq=4, Lq=10] "
            "overlap: the B stride 30 must be at least 40 to step over Lq, "
            "Hq");

  // Allowed: zero strides of extent-1 dimensions, gaps, any order of
  // dimensions, and broadcast inputs (K and V of every batch and head the
  // same rows).
  AttentionShape one{1, 1, 1, 10, 12};
  AttentionStrides fine = AttentionStrides::contiguous(one, 64);
  fine.o = {0, 0, 100};
  fine.lseBatch = fine.lseHead = 0;
  FA_ASSERT_OK(loadKernel("attn_f32").launch(b.args(one, fine)));
  fine = AttentionStrides::contiguous(shape, 64);
  fine.o = {64, 128, 1024}; // [L, H, B, D] in memory
  fine.k = fine.v = {0, 0, 64};
  fine.q = {0, 0, 0};
  fine.lseBatch = 1000;
  fine.lseHead = 100;
  FA_ASSERT_OK(loadKernel("attn_f32").launch(b.args(shape, fine)));
  // A kernel without LSE output ignores the LSE strides.
  fine.lseHead = 0;
  Kernel noLse = loadKernel("attn_f16");
  AttentionArgs a = b.args(shape, fine);
  a.lse = nullptr;
  FA_ASSERT_OK(noLse.launch(a));
}

TEST(KernelLaunchTest, RejectsOutputsSharingBuffers) {
  BigBuffers b(test::hostDevice());
  AttentionShape shape{1, 2, 1, 8, 8};
  AttentionArgs args = b.args(shape, AttentionStrides::contiguous(shape, 64));
  args.o = const_cast<Buffer *>(args.q);
  EXPECT_EQ(launchError("attn_f32", args),
            "buffer O is also passed as Q: an output must not share memory "
            "with another operand");
  args.o = &b.o;
  args.lse = &b.o;
  EXPECT_EQ(launchError("attn_f32", args),
            "buffer LSE is also passed as O: an output must not share memory "
            "with another operand");
  args.lse = &b.lse;
  args.k = args.v = args.q; // inputs may alias
  FA_ASSERT_OK(loadKernel("attn_f32").launch(args));
}

// Each buffer is checked against its own strides: an O buffer that would
// fit Q's layout is too small for O's padded one.
TEST(KernelLaunchTest, ChecksEachBufferAgainstItsOwnStrides) {
  Device d = test::hostDevice();
  AttentionShape shape{1, 2, 1, 8, 8};
  AttentionLayout layout;
  layout.o.rowPad = 4;
  AttentionStrides s = AttentionStrides::fromLayout(shape, 64, layout);
  Buffer q = d.allocate(4096).take(), k = d.allocate(2048).take(),
         v = d.allocate(2048).take(), o = d.allocate(4096).take(),
         lse = d.allocate(64).take();
  EXPECT_EQ(launchError("attn_f32", {&q, &k, &v, &o, &lse, shape, s}),
            "buffer O holds 4096 bytes but [B=1, H=2, L=8, D=64] of f32 "
            "with strides (1088, 544, 68, 1) needs 4336 bytes");
  layout = AttentionLayout();
  layout.lsePad = 3;
  s = AttentionStrides::fromLayout(shape, 64, layout);
  EXPECT_EQ(launchError("attn_f32", {&q, &k, &v, &o, &lse, shape, s}),
            "buffer LSE holds 64 bytes but [B=1, Hq=2, Lq=8] of f32 with "
            "strides (22, 11, 1) needs 76 bytes");
}

TEST(KernelLaunchTest, ErrorsCarryKernelContext) {
  Device d = test::hostDevice();
  Buffer b = d.allocate(16).take();
  Status s = loadKernel("attn_f32").launch({&b, &b, &b, &b, &b, {}, {}});
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.kernel(), "attn_f32");
  EXPECT_EQ(s.target(), "host");
  EXPECT_EQ(s.device(), "host");
  EXPECT_NE(s.toString().find("[kernel: attn_f32, target: host, device: "
                              "host]"),
            std::string::npos)
      << s.toString();
}

} // namespace

namespace {

ValidationReport validateWith(const std::string &name, AttentionShape shape,
                              const AttentionLayout &layout,
                              Distribution dist = Distribution::Normal,
                              uint64_t seed = 1) {
  ValidationOptions o;
  o.shape = shape;
  o.dist = dist;
  o.seed = seed;
  o.layout = layout;
  o.launch.checkRaces = true;
  Expected<ValidationReport> r = validateKernel(loadKernel(name), o);
  EXPECT_TRUE(r.ok()) << r.status().toString();
  return r ? r.take() : ValidationReport();
}

bool failed(const ValidationReport &r, const std::string &check) {
  for (const Check &c : r.verdict.checks)
    if (c.name == check)
      return !c.pass;
  ADD_FAILURE() << "no check named " << check;
  return false;
}

// Correct kernels pass with every tensor in its own layout, and the report
// says which strides were used.
TEST(ValidateLayoutTest, CorrectKernelsPassWithDistinctStrides) {
  AttentionShape shape{2, 4, 2, 37, 50};
  AttentionLayout layout = AttentionLayout::distinct();
  for (const char *name :
       {"attn_f32", "attn_f16_causal", "attn_bf16", "attn_f16"}) {
    ValidationReport r = validateWith(name, shape, layout);
    EXPECT_TRUE(r.verdict.pass) << name << "\n" << failures(r);
    EXPECT_TRUE(r.ours.paddingChecked);
    EXPECT_EQ(r.ours.paddingWrites, 0u);
    AttentionStrides s =
        AttentionStrides::fromLayout(shape, r.problem.headDim, layout);
    EXPECT_EQ(r.strides.q, s.q);
    EXPECT_EQ(r.strides.o, s.o);
    EXPECT_EQ(r.strides.lseHead, 37 + 7);
  }
}

// The planted addressing bugs pass when tensors share strides (the blind
// spot of uniform layouts) and fail with distinct strides.
TEST(ValidateLayoutTest, DistinctStridesCatchStrideMixups) {
  AttentionShape shape{2, 4, 2, 37, 50};
  struct Case {
    const char *kernel;
    const char *check;
  } cases[] = {{"attn_bug_o_strides", "finite"},
               {"attn_bug_v_strides", "scaled"},
               {"attn_bug_lse_strides", "lse"}};
  for (const Case &c : cases) {
    ValidationReport uniform = validateWith(
        c.kernel, shape, AttentionLayout::uniform(TensorLayout::Blhd, 3));
    EXPECT_TRUE(uniform.verdict.pass) << c.kernel << "\n" << failures(uniform);
    ValidationReport distinct =
        validateWith(c.kernel, shape, AttentionLayout::distinct());
    EXPECT_FALSE(distinct.verdict.pass) << c.kernel;
    EXPECT_TRUE(failed(distinct, c.check)) << c.kernel << "\n"
                                           << failures(distinct);
  }
  // Writing O with Q's strides also lands in O's padding.
  ValidationReport o =
      validateWith("attn_bug_o_strides", shape, AttentionLayout::distinct());
  EXPECT_GT(o.ours.paddingWrites, 0u);
  EXPECT_TRUE(failed(o, "padding"));
}

// The causal loop one key short (fixture: BLOCK_M = 16) and the missing
// softmax scale fail on both distributions and every seed tried.
TEST(ValidateLayoutTest, NumericalBugsFail) {
  for (Distribution dist : {Distribution::Normal, Distribution::Outliers})
    for (uint64_t seed = 0; seed < 6; ++seed) {
      ValidationReport shortLoop = validateWith(
          "attn_bug_causal_short", {1, 2, 1, 100, 100}, {}, dist, seed);
      EXPECT_TRUE(failed(shortLoop, "scaled"))
          << distributionName(dist) << " seed " << seed;
      ValidationReport noScale =
          validateWith("attn_bug_no_scale", {1, 2, 1, 50, 70}, {}, dist, seed);
      EXPECT_TRUE(failed(noScale, "scaled"))
          << distributionName(dist) << " seed " << seed;
    }
}

TEST(ValidateLayoutTest, RejectsNegativePadding) {
  ValidationOptions o;
  o.shape = {1, 1, 1, 4, 4};
  o.layout.v.rowPad = -1;
  Expected<ValidationReport> r = validateKernel(loadKernel("attn_f32"), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "padding of V is -1, must be in [0, 4096]");
  o.layout = AttentionLayout();
  o.layout.lsePad = -3;
  r = validateKernel(loadKernel("attn_f32"), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "padding of LSE is -3, must be in [0, 4096]");
}

} // namespace

// The layouts fa-run offers: BHLD and BLHD, rows padded by `rowPad`.
TEST(AttentionStridesTest, StridedLayouts) {
  AttentionShape shape{2, 8, 2, 5, 7};
  AttentionStrides bhld =
      AttentionStrides::strided(shape, 64, TensorLayout::Bhld, 0);
  AttentionStrides contiguous = AttentionStrides::contiguous(shape, 64);
  EXPECT_EQ(bhld.q.row, contiguous.q.row);
  EXPECT_EQ(bhld.q.head, 5 * 64);
  EXPECT_EQ(bhld.k.batch, 2 * 7 * 64);

  AttentionStrides blhd =
      AttentionStrides::strided(shape, 64, TensorLayout::Blhd, 3);
  EXPECT_EQ(blhd.q.head, 67);
  EXPECT_EQ(blhd.q.row, 8 * 67);
  EXPECT_EQ(blhd.q.batch, 8 * 5 * 67);
  EXPECT_EQ(blhd.k.row, 2 * 67);
  EXPECT_EQ(blhd.lseHead, 5); // LSE stays contiguous
  EXPECT_EQ(blhd.lseBatch, 8 * 5);
}

// Every tensor its own layout; --distinct-strides gives all different
// strides, whatever the shape.
TEST(AttentionStridesTest, PerTensorLayouts) {
  AttentionShape shape{2, 8, 2, 5, 7};
  AttentionLayout l;
  l.q = {TensorLayout::Bhld, 1};
  l.k = {TensorLayout::Blhd, 2};
  l.v = {TensorLayout::Bhld, 3};
  l.o = {TensorLayout::Blhd, 5};
  l.lsePad = 7;
  AttentionStrides s = AttentionStrides::fromLayout(shape, 64, l);
  EXPECT_EQ(s.q, (TensorStrides{8 * 5 * 65, 5 * 65, 65}));
  EXPECT_EQ(s.k, (TensorStrides{2 * 7 * 66, 66, 2 * 66}));
  EXPECT_EQ(s.v, (TensorStrides{2 * 7 * 67, 7 * 67, 67}));
  EXPECT_EQ(s.o, (TensorStrides{8 * 5 * 69, 69, 8 * 69}));
  EXPECT_EQ(s.lseHead, 12);
  EXPECT_EQ(s.lseBatch, 8 * 12);
  EXPECT_EQ(l.toString(), "q=bhld+1 k=blhd+2 v=bhld+3 o=blhd+5 lse+7");
  EXPECT_EQ(AttentionLayout::distinct().toString(), l.toString());
  EXPECT_EQ(l.find("v"), &l.v);
  EXPECT_EQ(l.find("lse"), nullptr);
  EXPECT_EQ(parseTensorLayout("blhd"), TensorLayout::Blhd);
  EXPECT_FALSE(parseTensorLayout("bhdl").has_value());

  for (AttentionShape sh :
       {AttentionShape{1, 1, 1, 1, 1}, AttentionShape{1, 4, 4, 1, 1},
        AttentionShape{3, 8, 1, 100, 7}}) {
    for (int64_t d : {1, 16, 64}) {
      AttentionStrides t =
          AttentionStrides::fromLayout(sh, d, AttentionLayout::distinct());
      const TensorStrides all[] = {t.q, t.k, t.v, t.o};
      for (int i = 0; i < 4; ++i)
        for (int j = i + 1; j < 4; ++j)
          EXPECT_NE(all[i].row, all[j].row)
              << sh.toString() << " D=" << d << " tensors " << i << ", " << j;
      EXPECT_NE(t.lseHead, sh.seqQ);
    }
  }
}
