//===- KernelLaunchTest.cpp - Argument checks, packing and real launches --===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"

#include <cmath>

using namespace fa;

namespace {

Kernel loadKernel(const std::string &name) {
  Expected<Module> m =
      Module::load(test::hostDevice(), test::fixturePath(name));
  EXPECT_TRUE(m.ok()) << m.status().toString();
  Expected<Kernel> k = m->kernel();
  EXPECT_TRUE(k.ok()) << k.status().toString();
  return k.take();
}

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

std::string failures(const ValidationReport &r) {
  std::string out;
  for (const Check &c : r.verdict.checks)
    if (!c.pass)
      out += c.text + "\n";
  return out;
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
  ASSERT_EQ(p->words.size(), 44u);
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
  AttentionArgs wide{&huge, &huge, &huge, &huge, &huge, {70000, 1, 1, 1, 1},
                     {}};
  EXPECT_EQ(launchError("attn_f32", wide),
            "grid (1, 1, 70000) exceeds the device's limit (2147483647, "
            "65535, 65535)");
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
