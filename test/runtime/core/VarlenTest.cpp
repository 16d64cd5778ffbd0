//===- VarlenTest.cpp - Varlen launches: metadata, words, kernels ---------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The runtime's side of ABI version 4 (KernelAbi.h), on the hand-written
// varlen kernels of kernels/varlen_attention_host.cpp: the host-side checks
// of cu_seqlens, the 77 words (67-76 and the null paged words by hand), the
// packed tensors' sizes and strides, max_seqlen_q/k as Lq and Lk, the
// kernels validated against the fp64 varlen reference (lengths 0 and 1,
// Lq_b != Lk_b, GQA, causal, split-KV), the planted kernel bugs the
// validation catches, the errors, and on a CUDA device the words a kernel
// receives.
//
//===----------------------------------------------------------------------===//

#include "TestUtil.h"
#include "fa/Validate.h"
#include "gpu/Vendor.h"

#include <cmath>
#include <cstring>
#include <iterator>

using namespace fa;
using test::failures;
using test::loadKernel;
using test::loadModule;

namespace {

VarlenOptions lengths(std::vector<int32_t> q = {},
                      std::vector<int32_t> k = {}) {
  VarlenOptions v;
  v.seqlensQ = std::move(q);
  v.seqlensK = std::move(k);
  return v;
}

Expected<ValidationReport> tryValidate(const Kernel &kernel,
                                       AttentionShape shape,
                                       const VarlenOptions &varlen,
                                       uint64_t seed = 1, int64_t kvSplits = 0,
                                       Distribution dist = Distribution::Normal,
                                       AttentionLayout layout = {}) {
  ValidationOptions o;
  o.shape = shape;
  o.seed = seed;
  o.dist = dist;
  o.layout = layout;
  o.varlen = varlen;
  o.launch.kvSplits = kvSplits;
  o.launch.checkRaces = true;
  return validateKernel(kernel, o);
}

ValidationReport validate(const Kernel &kernel, AttentionShape shape,
                          const VarlenOptions &varlen, uint64_t seed = 1,
                          int64_t kvSplits = 0,
                          Distribution dist = Distribution::Normal,
                          AttentionLayout layout = {}) {
  Expected<ValidationReport> r =
      tryValidate(kernel, shape, varlen, seed, kvSplits, dist, layout);
  EXPECT_TRUE(r.ok()) << r.status().toString();
  return r ? r.take() : ValidationReport();
}

std::vector<int32_t> seqlens(const std::vector<int32_t> &cu) {
  std::vector<int32_t> l;
  for (size_t b = 0; b + 1 < cu.size(); ++b)
    l.push_back(cu[b + 1] - cu[b]);
  return l;
}

bool has(const std::vector<int32_t> &l, int32_t value) {
  return std::find(l.begin(), l.end(), value) != l.end();
}

//===----------------------------------------------------------------------===//
// Kernels against the fp64 varlen reference
//===----------------------------------------------------------------------===//

// Drawn lengths (a 0 and a 1 of each list, Lq_b != Lk_b), GQA, decode and
// prefill maxima, several seeds; given lists.
TEST(VarlenTest, F32MatchesTheVarlenReference) {
  Kernel k = loadKernel("varlen_f32");
  for (AttentionShape shape :
       {AttentionShape{6, 8, 2, 40, 70}, AttentionShape{4, 2, 1, 1, 300},
        AttentionShape{5, 4, 4, 33, 17}})
    for (uint64_t seed : {1, 2, 3}) {
      SCOPED_TRACE(shape.toString() + " seed " + std::to_string(seed));
      ValidationReport r = validate(k, shape, lengths(), seed);
      EXPECT_TRUE(r.verdict.pass) << failures(r);
      EXPECT_LT(r.ours.maxAbsDiff, 1e-5);
      EXPECT_LT(r.ours.lseMaxAbsDiff, 1e-5);
      ASSERT_TRUE(r.varlen);
      const VarlenProblem &p = *r.varlen;
      EXPECT_EQ(p.batch, shape.batch);
      // The shape's lengths are the maxima, whatever the longest drawn.
      EXPECT_EQ(p.maxSeqlenQ, shape.seqQ);
      EXPECT_EQ(p.maxSeqlenK, shape.seqK);
      const std::vector<int32_t> lq = seqlens(p.cuSeqlensQ),
                                 lk = seqlens(p.cuSeqlensK);
      for (size_t b = 0; b < lq.size(); ++b) {
        EXPECT_LE(lq[b], shape.seqQ);
        EXPECT_LE(lk[b], shape.seqK);
      }
      // The edge lengths, as B allows (B >= 4: all four).
      EXPECT_TRUE(has(lq, 0));
      EXPECT_TRUE(has(lk, 0));
      EXPECT_TRUE(has(lq, 1));
      EXPECT_TRUE(has(lk, 1));
      EXPECT_NE(lq, lk);
    }
  // Given lists: 0, 1, Lq > Lk, Lq < Lk, the maxima.
  ValidationReport r = validate(k, {5, 4, 2, 20, 30},
                                lengths({0, 1, 20, 7, 3}, {4, 0, 30, 2, 30}));
  EXPECT_TRUE(r.verdict.pass) << failures(r);
  EXPECT_EQ(r.varlen->cuSeqlensQ, (std::vector<int32_t>{0, 0, 1, 21, 28, 31}));
  EXPECT_EQ(r.varlen->cuSeqlensK, (std::vector<int32_t>{0, 4, 4, 34, 36, 66}));
  EXPECT_EQ(r.varlen->totalQ, 31);
  EXPECT_EQ(r.varlen->totalK, 66);
  // One list given, the other drawn.
  r = validate(k, {3, 2, 2, 9, 12}, lengths({9, 0, 4}));
  EXPECT_TRUE(r.verdict.pass) << failures(r);
  EXPECT_EQ(seqlens(r.varlen->cuSeqlensQ), (std::vector<int32_t>{9, 0, 4}));
}

// Causal bottom-right within each sequence's own lengths: rows of a
// sequence with Lq_b > Lk_b that see no key are O = 0, LSE = -inf.
TEST(VarlenTest, F16CausalWithinEachSequence) {
  Kernel k = loadKernel("varlen_f16_causal");
  for (Distribution dist : {Distribution::Normal, Distribution::Outliers})
    for (uint64_t seed : {3, 4}) {
      ValidationReport r =
          validate(k, {6, 4, 2, 37, 50}, lengths(), seed, 0, dist);
      EXPECT_TRUE(r.verdict.pass) << seed << "\n" << failures(r);
    }
  ValidationReport r = validate(k, {4, 2, 1, 30, 90},
                                lengths({30, 5, 1, 12}, {5, 90, 0, 12}), 4);
  EXPECT_TRUE(r.verdict.pass) << failures(r);
}

// GQA-packed rows, no LSE, bf16, distinct row padding of every tensor: the
// packed strides (0, D + pad, H * (D + pad)).
TEST(VarlenTest, Bf16PackedWithPaddedRows) {
  Kernel k = loadKernel("varlen_bf16_packed");
  ValidationReport r =
      validate(k, {5, 8, 2, 13, 40}, lengths(), 7, 0, Distribution::Outliers,
               AttentionLayout::distinct());
  EXPECT_TRUE(r.verdict.pass) << failures(r);
  EXPECT_FALSE(r.ours.lseCompared);
  EXPECT_EQ(r.strides.q, (TensorStrides{0, 33, 8 * 33}));
  EXPECT_EQ(r.strides.k, (TensorStrides{0, 34, 2 * 34}));
  EXPECT_EQ(r.strides.v, (TensorStrides{0, 35, 2 * 35}));
  EXPECT_EQ(r.strides.o, (TensorStrides{0, 37, 8 * 37}));
  EXPECT_EQ(r.layout.q.order, TensorLayout::Blhd);
  EXPECT_EQ(r.layout.v.order, TensorLayout::Blhd);
}

// A varlen split-KV pair: S over max_seqlen_k's K/V blocks, the combine
// kernel merging each sequence's rows; forced, automatic, more splits than
// blocks.
TEST(VarlenTest, SplitKvPairs) {
  Kernel k = loadKernel("varlen_split_f32");
  for (int64_t splits : {int64_t(1), int64_t(3), int64_t(0), int64_t(50)}) {
    SCOPED_TRACE("S=" + std::to_string(splits));
    ValidationReport r = validate(k, {5, 4, 2, 3, 200}, lengths(), 2, splits);
    EXPECT_TRUE(r.verdict.pass) << failures(r);
    EXPECT_LT(r.ours.lseMaxAbsDiff, 1e-5);
    Expected<KvSplitPlan> plan =
        planKvSplits(k.info(), {5, 4, 2, 3, 200}, k.device().limits(), splits);
    FA_ASSERT_OK(plan);
    EXPECT_EQ(r.kvSplits, plan->kvSplits);
    if (splits)
      EXPECT_EQ(r.kvSplits, splits);
  }
  Kernel packed = loadKernel("varlen_split_f16_packed_causal");
  for (int64_t splits : {int64_t(0), int64_t(2), int64_t(17)}) {
    ValidationReport r =
        validate(packed, {4, 8, 2, 9, 120}, lengths(), 5, splits);
    EXPECT_TRUE(r.verdict.pass) << splits << "\n" << failures(r);
  }
}

// No sequence has keys, or none has queries: every row O = 0 and LSE =
// -inf, or nothing to write, for the plain and the split kernel.
TEST(VarlenTest, EmptySequences) {
  for (const char *name : {"varlen_f32", "varlen_split_f32"}) {
    Kernel k = loadKernel(name);
    ValidationReport r =
        validate(k, {2, 2, 1, 3, 40}, lengths({3, 2}, {0, 0}), 1, 0);
    EXPECT_TRUE(r.verdict.pass) << name << "\n" << failures(r);
    r = validate(k, {2, 2, 1, 3, 40}, lengths({0, 0}, {4, 40}), 1, 0);
    EXPECT_TRUE(r.verdict.pass) << name << "\n" << failures(r);
    EXPECT_EQ(r.varlen->totalQ, 0);
  }
}

// Kernel bugs the varlen validation catches: each sequence's keys read
// from one row past cu_seqlens_k[b] (plain and split), the causal diagonal
// aligned to max_seqlen_q/k.
TEST(VarlenTest, CatchesPlantedKernelBugs) {
  for (const char *name :
       {"varlen_bug_cu_off_by_one", "varlen_split_bug_cu_off_by_one"}) {
    ValidationReport r =
        validate(loadKernel(name), {4, 2, 1, 10, 30}, lengths(), 1);
    EXPECT_FALSE(r.verdict.pass) << name;
  }
  ValidationReport causal =
      validate(loadKernel("varlen_bug_causal_max"), {3, 2, 1, 8, 100},
               lengths({5, 8, 3}, {37, 100, 3}));
  EXPECT_FALSE(causal.verdict.pass);
  // A batch of one sequence of the maximal lengths hides that bug: the
  // sequence's own lengths are the maxima.
  ValidationReport whole = validate(loadKernel("varlen_bug_causal_max"),
                                    {1, 2, 1, 8, 100}, lengths({8}, {100}));
  EXPECT_TRUE(whole.verdict.pass) << failures(whole);
}

//===----------------------------------------------------------------------===//
// The words and their checks
//===----------------------------------------------------------------------===//

/// A varlen launch's buffers and host metadata, on the host device: B = 3
/// sequences of (Lq, Lk) = (2, 5), (0, 3), (4, 0), Hq = 4, Hkv = 2, D = 64,
/// max_seqlen 4 and 6: total_q 6, total_k 8.
struct VarlenBuffers {
  Buffer q, k, v, o, lse, cuQ, cuK;
  std::vector<int32_t> hostCuQ{0, 2, 2, 6}, hostCuK{0, 5, 8, 8};
  int64_t totalQ = 6, totalK = 8;

  AttentionArgs args(const AttentionShape &shape = {3, 4, 2, 4, 6}) {
    AttentionArgs a{&q, &k, &v, &o, &lse, shape, std::nullopt, std::nullopt};
    VarlenArgs vl;
    vl.cuSeqlensQ = &cuQ;
    vl.cuSeqlensK = &cuK;
    vl.totalQ = totalQ;
    vl.totalK = totalK;
    vl.hostCuSeqlensQ = hostCuQ;
    vl.hostCuSeqlensK = hostCuK;
    a.varlen = vl;
    return a;
  }
};

VarlenBuffers varlenBuffers(const Device &d) {
  const size_t D = 64, Hq = 4, Hkv = 2;
  return VarlenBuffers{d.allocate(6 * Hq * D * 4).take(),
                       d.allocate(8 * Hkv * D * 4).take(),
                       d.allocate(8 * Hkv * D * 4).take(),
                       d.allocate(6 * Hq * D * 4).take(),
                       d.allocate(Hq * 6 * 4).take(),
                       d.allocate(4 * 4).take(),
                       d.allocate(4 * 4).take()};
}

// Words 67..76: the cu_seqlens descriptors (data pointer twice, offset 0,
// size in int32 elements, stride 1); words 55..66 null (descriptors of
// stride 1, page size and table stride 0); a plain varlen kernel's
// workspace null and S = 1; the sizes B, Hq, Hkv, max_seqlen_q/k; the
// packed strides (0, D, H * D), LSE (0, total_q); the grid over
// max_seqlen_q.
TEST(VarlenTest, PacksWordsSixtySevenToSeventySix) {
  Device d = test::hostDevice();
  KernelInfo info = test::fixtureManifest("varlen_f32").kernels[0];
  ASSERT_TRUE(info.varlen);
  ASSERT_FALSE(info.paged);
  ASSERT_EQ(info.abiVersion, 4);
  VarlenBuffers b = varlenBuffers(d);
  Expected<PackedLaunch> p = packAttentionArgs(info, b.args(), d.limits());
  FA_ASSERT_OK(p);
  EXPECT_EQ(p->numWords, 77u);
  const uint64_t *w = p->words.data();
  const uint64_t expected[10] = {b.cuQ.address(), b.cuQ.address(), 0, 4, 1,
                                 b.cuK.address(), b.cuK.address(), 0, 4, 1};
  for (int i = 0; i < 10; ++i)
    EXPECT_EQ(w[67 + i], expected[i]) << "word " << 67 + i;
  for (int i = 55; i < 67; ++i)
    EXPECT_EQ(w[i], i == 59 || i == 64 ? 1u : 0u) << "word " << i;
  for (int i = 44; i < 54; ++i)
    EXPECT_EQ(w[i], i == 48 || i == 53 ? 1u : 0u) << "word " << i;
  EXPECT_EQ(w[54], 1u); // S
  const uint64_t sizes[5] = {3, 4, 2, 4, 6};
  for (int i = 0; i < 5; ++i)
    EXPECT_EQ(w[25 + i], sizes[i]) << "size " << i;
  // q_b q_h q_l k_b k_h k_l v_b v_h v_l o_b o_h o_l lse_b lse_h
  const uint64_t strides[14] = {0,  64,  256, 0,  64,  128, 0,
                                64, 128, 0,   64, 256, 0,   6};
  for (int i = 0; i < 14; ++i)
    EXPECT_EQ(w[30 + i], strides[i]) << "stride " << i;
  // The buffers' descriptors: size in elements.
  EXPECT_EQ(w[FA_ABI_Q + 3], 6u * 4 * 64);
  EXPECT_EQ(w[FA_ABI_K + 3], 8u * 2 * 64);
  EXPECT_EQ(w[FA_ABI_LSE + 3], 24u);
  // Grid (ceil(max_seqlen_q / 16), Hq, B).
  EXPECT_EQ(p->geometry.grid[0], 1u);
  EXPECT_EQ(p->geometry.grid[1], 4u);
  EXPECT_EQ(p->geometry.grid[2], 3u);
  EXPECT_FALSE(p->combineGeometry);

  // A varlen split-KV kernel: S from max_seqlen_k, the workspace [S*B, Hq,
  // max_seqlen_q, D], the combine kernel's grid over max_seqlen_q.
  Manifest m = test::fixtureManifest("varlen_split_f32");
  KernelInfo split = m.kernels[0], combine = m.kernels[1];
  ASSERT_TRUE(split.splitKv && split.varlen && combine.isCombine());
  EXPECT_EQ(combine.abiVersion, 4);
  EXPECT_TRUE(combine.varlen);
  p = packAttentionArgs(split, b.args(), d.limits(), &combine, 3);
  FA_ASSERT_OK(p);
  EXPECT_EQ(p->numWords, 77u);
  EXPECT_EQ(p->words[FA_ABI_SPLITS], 3u);
  EXPECT_EQ(p->split.workspaceOBytes, uint64_t(3 * 3 * 4 * 4 * 64 * 4));
  EXPECT_EQ(p->split.workspaceLseBytes, uint64_t(3 * 3 * 4 * 4 * 4));
  EXPECT_EQ(p->geometry.grid[0], 3u); // 1 Q tile x 3 splits
  ASSERT_TRUE(p->combineGeometry);
  EXPECT_EQ(p->combineGeometry->grid[0], 1u); // ceil(4 / 8)
  EXPECT_EQ(p->combineGeometry->grid[2], 3u);
  Buffer wsO = d.allocate(p->split.workspaceOBytes).take();
  Buffer wsLse = d.allocate(p->split.workspaceLseBytes).take();
  FA_ASSERT_OK(bindWorkspace(*p, split, wsO, wsLse));
  EXPECT_EQ(p->words[FA_ABI_WS_O + 1], wsO.address());
  EXPECT_EQ(p->words[FA_ABI_CU_SEQLENS_Q + 1], b.cuQ.address());
  // max_seqlen_k = 0 (no sequence has keys) is a launch: one split.
  b.hostCuK = {0, 0, 0, 0};
  b.totalK = 0;
  p = packAttentionArgs(split, b.args({3, 4, 2, 4, 0}), d.limits(), &combine,
                        0);
  FA_ASSERT_OK(p);
  EXPECT_EQ(p->split.kvSplits, 1);
  EXPECT_EQ(p->words[FA_ABI_SIZES + 4], 0u);

  // 32-bit index arithmetic: the descriptors' size words fit in int32.
  info.indexBits = 32;
  b = varlenBuffers(d);
  p = packAttentionArgs(info, b.args(), d.limits());
  FA_ASSERT_OK(p);
  EXPECT_EQ(p->words[FA_ABI_CU_SEQLENS_K + 3], 4u);
}

// Version 4's kernarg segment: 77 words of 8 bytes with 64-bit indices
// (616 bytes); with 32-bit indices the cu_seqlens descriptors narrow like
// the others: 9 descriptors of 32 bytes and 22 words of 8 (464), then
// cu_seqlens_q (32) and cu_seqlens_k, whose stride ends the segment: 524.
TEST(VarlenTest, KernargSegmentOfVersionFour) {
  uint64_t words[FA_ABI_MAX_WORDS];
  for (int i = 0; i < FA_ABI_MAX_WORDS; ++i)
    words[i] = 0x1000 + i;
  std::vector<uint8_t> wide = detail::packKernargSegment(words, 77, 64);
  ASSERT_EQ(wide.size(), 616u);
  EXPECT_EQ(std::memcmp(wide.data(), words, 616), 0);
  std::vector<uint8_t> narrow = detail::packKernargSegment(words, 77, 32);
  ASSERT_EQ(narrow.size(), 524u);
  auto u64 = [&](size_t at) {
    uint64_t v;
    std::memcpy(&v, narrow.data() + at, 8);
    return v;
  };
  auto u32 = [&](size_t at) {
    uint32_t v;
    std::memcpy(&v, narrow.data() + at, 4);
    return v;
  };
  EXPECT_EQ(u64(448), words[FA_ABI_PAGE_SIZE]);
  EXPECT_EQ(u64(456), words[FA_ABI_BLOCK_TABLE_STRIDE]);
  for (int d = 0; d < 2; ++d) {
    const size_t base = 464 + 32 * size_t(d);
    const int first = FA_ABI_CU_SEQLENS_Q + 5 * d;
    EXPECT_EQ(u64(base), words[first]);
    EXPECT_EQ(u64(base + 8), words[first + 1]);
    EXPECT_EQ(u32(base + 16), uint32_t(words[first + 2]));
    EXPECT_EQ(u32(base + 20), uint32_t(words[first + 3]));
    EXPECT_EQ(u32(base + 24), uint32_t(words[first + 4]));
  }
  for (int i = 67; i < 77; ++i)
    EXPECT_EQ(detail::isDescriptorIndexWord(size_t(i)), (i - 67) % 5 >= 2) << i;
  // Version 4's words and the head words (ALiBi and sinks, KernelAbi.h).
  EXPECT_EQ(detail::kMaxKernelParams, size_t(87));
}

TEST(VarlenTest, MetadataErrorsNameTheFirstBadEntry) {
  Device d = test::hostDevice();
  KernelInfo info = test::fixtureManifest("varlen_f32").kernels[0];
  auto edited = [&](auto edit) {
    VarlenBuffers b = varlenBuffers(d);
    AttentionArgs a = b.args();
    edit(b, a);
    a.varlen->hostCuSeqlensQ = b.hostCuQ;
    a.varlen->hostCuSeqlensK = b.hostCuK;
    return test::packError(info, a);
  };
  using B = VarlenBuffers;
  using A = AttentionArgs;
  EXPECT_EQ(edited([](B &b, A &) {
              b.hostCuQ = {1, 2, 2, 6};
            }),
            "cu_seqlens_q[0] must be 0");
  EXPECT_EQ(edited([](B &b, A &) {
              b.hostCuK = {0, 5, 4, 8};
            }),
            "cu_seqlens_k is not non-decreasing: cu_seqlens_k[2] = 4 < "
            "cu_seqlens_k[1] = 5");
  EXPECT_EQ(edited([](B &b, A &) { b.hostCuQ.pop_back(); }),
            "cu_seqlens_q has 3 entries, B + 1 = 4");
  EXPECT_EQ(edited([](B &b, A &) { b.hostCuK.push_back(8); }),
            "cu_seqlens_k has 5 entries, B + 1 = 4");
  EXPECT_EQ(edited([](B &, A &a) { a.varlen->totalQ = 7; }),
            "cu_seqlens_q[3] = 6 does not match total_q = 7, the rows of "
            "packed Q");
  EXPECT_EQ(edited([](B &b, A &) {
              b.hostCuK = {0, 5, 8, 9};
            }),
            "cu_seqlens_k[3] = 9 does not match total_k = 8, the rows of "
            "packed K and V");
  // Every length within max_seqlen (the shape's Lq and Lk).
  EXPECT_EQ(edited([](B &, A &a) { a.shape.seqQ = 3; }),
            "max_seqlen_q = 3 is less than the length of sequence 2: "
            "cu_seqlens_q[3] - cu_seqlens_q[2] = 4");
  EXPECT_EQ(edited([](B &, A &a) { a.shape.seqK = 4; }),
            "max_seqlen_k = 4 is less than the length of sequence 0: "
            "cu_seqlens_k[1] - cu_seqlens_k[0] = 5");
  EXPECT_EQ(edited([](B &, A &a) { a.shape.seqK = -1; }),
            "invalid shape: Lk is -1, must be at least 0");
  EXPECT_EQ(edited([](B &, A &a) { a.shape.seqQ = 0; }),
            "invalid shape: Lq is 0, must be at least 1");
  // The buffers: the metadata's, the packed tensors'.
  EXPECT_EQ(edited([](B &, A &a) { a.varlen->cuSeqlensQ = nullptr; }),
            "buffer cu_seqlens_q is missing (needs 16 bytes)");
  EXPECT_EQ(
      edited([](B &b, A &) { b.cuK = test::hostDevice().allocate(12).take(); }),
      "buffer cu_seqlens_k holds 12 bytes but [B+1=4] of i32 needs 16 "
      "bytes");
  EXPECT_EQ(edited([](B &b, A &a) {
              b.hostCuK = {0, 5, 8, 9};
              a.varlen->totalK = 9; // one row more than K holds
            }),
            "buffer K holds 4096 bytes but packed [total_k=9, H=2, D=64] of "
            "f32 with strides (0, 64, 128, 1) needs 4608 bytes");
  EXPECT_EQ(edited([](B &b, A &) {
              b.o = test::hostDevice().allocate(5 * 4 * 64 * 4).take();
            }),
            "buffer O holds 5120 bytes but packed [total_q=6, H=4, D=64] of "
            "f32 with strides (0, 64, 256, 1) needs 6144 bytes");
  EXPECT_EQ(edited([](B &b, A &) {
              b.lse = test::hostDevice().allocate(23 * 4).take();
            }),
            "buffer LSE holds 92 bytes but [Hq=4, total_q=6] of f32 with "
            "strides (6, 1) needs 96 bytes");
  EXPECT_EQ(edited([](B &, A &a) { a.varlen->cuSeqlensK = a.lse; }),
            "buffer LSE is also passed as cu_seqlens_k: an output must not "
            "share memory with another operand");
  // Packed tensors: batch strides 0, outputs that do not overlap.
  EXPECT_EQ(edited([](B &, A &a) {
              AttentionStrides st = varlenStrides(a.shape, 64, 6);
              st.k.batch = 128;
              a.strides = st;
            }),
            "invalid stride k.batch = 128: a varlen launch's batch strides "
            "are 0 (its tensors are packed; cu_seqlens locate the "
            "sequences)");
  EXPECT_EQ(edited([](B &, A &a) {
              AttentionStrides st = varlenStrides(a.shape, 64, 6);
              st.o.row = 64; // rows on top of the heads
              a.strides = st;
            }),
            "strides of output O (64, 64, 1) for packed [total_q=6, Hq=4, "
            "D=64] overlap: the Hq stride 64 must be at least 384 to step "
            "over D, total_q");
  // Varlen arguments exactly for a varlen kernel.
  EXPECT_EQ(edited([](B &, A &a) { a.varlen.reset(); }),
            "kernel 'varlen_f32' takes a variable-length batch (ABI version "
            "4): its launch needs cu_seqlens_q, cu_seqlens_k, total_q and "
            "total_k (AttentionArgs::varlen)");
  KernelInfo dense = test::fixtureManifest("attn_f32").kernels[0];
  VarlenBuffers b = varlenBuffers(d);
  EXPECT_EQ(test::packError(dense, b.args()),
            "kernel 'attn_f32' takes a dense batch (its manifest does not say "
            "\"varlen\"): it takes no cu_seqlens (AttentionArgs::varlen)");
  KernelInfo wrong = info;
  wrong.abiVersion = 3;
  EXPECT_EQ(test::packError(wrong, b.args()),
            "kernel 'varlen_f32' has kernel ABI version 3, not 4 "
            "(variable-length batches)");
  // A paged kernel given varlen sequences: it needs its cache first.
  KernelInfo paged = test::fixtureManifest("paged_f32").kernels[0];
  EXPECT_EQ(test::packError(paged, b.args()),
            "kernel 'paged_f32' reads a paged K/V cache (ABI version 3): its "
            "launch needs the block table, cache_seqlens and page size "
            "(AttentionArgs::paged)");
}

// 32-bit index arithmetic: the packed rows' offsets, a block past the last
// row, must fit in int32, and as bytes in uint32 (an f32 kernel: 2^30 - 1
// elements), checked before the buffers' sizes.
TEST(VarlenTest, ThirtyTwoBitIndexLimits) {
  Device d = test::hostDevice();
  KernelInfo info = test::fixtureManifest("varlen_f32").kernels[0];
  info.indexBits = 32;
  VarlenBuffers b = varlenBuffers(d);
  // One sequence of 4194289 query rows of Hq * D = 256 elements: the
  // offsets reach (4194289 + 16 - 2) * 256 + 3 * 64 + 64 = 2^30 elements,
  // 2^32 bytes.
  b.hostCuQ = {0, 4194289, 4194289, 4194289};
  b.totalQ = 4194289;
  EXPECT_EQ(test::packError(info, b.args({3, 4, 2, 4194289, 6})),
            "kernel 'varlen_f32' uses 32-bit index arithmetic (index_bits 32) "
            "but the offsets into Q reach 1073741824 elements (limit "
            "1073741823); compile it with fac --index-bits=64");
  // One row less is within the limit: the buffer sizes are next.
  b.hostCuQ = {0, 4194288, 4194288, 4194288};
  b.totalQ = 4194288;
  EXPECT_EQ(test::packError(info, b.args({3, 4, 2, 4194288, 6})),
            "buffer Q holds 6144 bytes but packed [total_q=4194288, H=4, "
            "D=64] of f32 with strides (0, 64, 256, 1) needs 4294950912 "
            "bytes");
}

// checkVarlenMetadata on its own, and the same messages from
// checkVarlenProblem (shared code).
TEST(VarlenTest, MetadataCheckIsShared) {
  const std::vector<int32_t> cuQ = {0, 3, 3, 10}, cuK = {0, 2, 9, 9};
  FA_ASSERT_OK(checkVarlenMetadata(3, 10, 9, 7, 7, cuQ, cuK));
  EXPECT_EQ(checkVarlenMetadata(0, 0, 0, 1, 1, {}, {}).message(),
            "a variable-length batch of B = 0 sequences: B must be at least 1");
  EXPECT_EQ(checkVarlenMetadata(INT64_MAX, 0, 0, 1, 1, {}, {}).message(),
            "a variable-length batch of B = 9223372036854775807 sequences: B "
            "must be at most 2147483647");
  EXPECT_EQ(checkVarlenMetadata(3, 10, 9, 6, 7, cuQ, cuK).message(),
            "max_seqlen_q = 6 is less than the length of sequence 2: "
            "cu_seqlens_q[3] - cu_seqlens_q[2] = 7");
  EXPECT_EQ(checkVarlenMetadata(3, 10, 9, 7, 7, cuQ, Int32Span()).message(),
            "cu_seqlens_k has 0 entries, B + 1 = 4");
  EXPECT_EQ(
      checkVarlenMetadata(3, 10, 9, 7, 7, cuQ, Int32Span(nullptr, 4)).message(),
      "cu_seqlens_k has no host copy");
  VarlenProblem p =
      VarlenProblem::fromLengths(2, 1, 8, {3, 0, 7}, {2, 7, 0}, false, 0.5);
  FA_ASSERT_OK(checkVarlenProblem(p));
  p.maxSeqlenQ = 6;
  EXPECT_EQ(checkVarlenProblem(p).message(),
            checkVarlenMetadata(3, 10, 9, 6, 7, cuQ, cuK).message());
}

// The same checks on a real launch, before the kernel sees anything.
TEST(VarlenTest, LaunchChecksTheHostCopy) {
  Kernel k = loadKernel("varlen_f32");
  Device d = test::hostDevice();
  VarlenBuffers b = varlenBuffers(d);
  b.hostCuK = {0, 5, 3, 8};
  Status s = k.launch(b.args());
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(s.message(), "cu_seqlens_k is not non-decreasing: "
                         "cu_seqlens_k[2] = 3 < cu_seqlens_k[1] = 5");
  EXPECT_EQ(s.kernel(), "varlen_f32");
  // Validation and the launch helpers refuse a varlen kernel without
  // lengths, and lengths for a dense kernel.
  ValidationOptions o;
  o.shape = {1, 1, 1, 1, 8};
  Expected<ValidationReport> r = validateKernel(k, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "kernel 'varlen_f32' takes a variable-length batch (its manifest "
            "says \"varlen\": true): its inputs need sequence lengths (fa-run "
            "--varlen)");
  EXPECT_EQ(launchOnInputs(k, {1, 1, 1, 1, 8}).message(), r.status().message());
  o.varlen = lengths();
  r = validateKernel(loadKernel("attn_f32"), o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "kernel 'attn_f32' takes a dense batch (its manifest does not say "
            "\"varlen\"): it takes no sequence lengths (fa-run --varlen is "
            "for varlen kernels)");
  o.varlen.reset();
  o.paged = PagedCacheOptions();
  r = validateKernel(k, o);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "kernel 'varlen_f32' takes a variable-length batch (its manifest "
            "says \"varlen\": true), not a paged K/V cache (fa-run --paged is "
            "for paged kernels)");
  // Lists of the wrong count, negative, past the maxima.
  r = tryValidate(k, {2, 1, 1, 4, 50}, lengths({1, 2, 3}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "seqlens_q has 3 lengths, B = 2");
  r = tryValidate(k, {2, 1, 1, 4, 50}, lengths({}, {-1, 3}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "seqlens_k[0] = -1 is negative");
  r = tryValidate(k, {2, 1, 1, 4, 50}, lengths({4, 5}));
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(),
            "seqlens_q[1] = 5 is above max_seqlen_q = 4 (the shape's Lq)");
  // A varlen kernel benchmarks and launches on its own inputs.
  VarlenOptions vl = lengths();
  LaunchInfo info;
  FA_ASSERT_OK(launchOnInputs(k, {3, 2, 1, 5, 40}, {}, &info, nullptr, &vl));
  EXPECT_EQ(info.geometry.grid[2], 3u);
  Expected<BenchResult> bench =
      benchmarkKernel(k, {3, 2, 1, 5, 40}, 1, {}, nullptr, &vl);
  FA_ASSERT_OK(bench);
  EXPECT_GT(bench->flops, 0);
}

// The code object's record says version 3 where the manifest says 4.
TEST(VarlenTest, VersionMismatchIsRefused) {
  Expected<Module> m =
      Module::load(test::hostDevice(), test::fixturePath("varlen_bad_abi"));
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.status().code(), ErrorCode::ManifestError);
  EXPECT_EQ(m.status().message(),
            "kernel 'varlen_bad_abi': the manifest says abi_version 4, the "
            "code object says 3 (the manifest does not describe this code "
            "object)");
}

// FLOPs of the (query, key) pairs each sequence sees within its own
// lengths.
TEST(VarlenTest, Flops) {
  VarlenProblem p =
      VarlenProblem::fromLengths(4, 2, 8, {3, 0, 2}, {5, 4, 1}, false, 0.5);
  EXPECT_EQ(varlenAttentionFlops(p), 4.0 * 4 * 8 * (3 * 5 + 0 + 2 * 1));
  p.causal = true; // rows see 3, 4, 5 keys; none; 0 and 1
  EXPECT_EQ(varlenAttentionFlops(p), 4.0 * 4 * 8 * (3 + 4 + 5 + 0 + 1));
}

//===----------------------------------------------------------------------===//
// On a CUDA device
//===----------------------------------------------------------------------===//

/// The ABI words the PTX echo kernel stores to O (word 16, O's aligned
/// pointer), in order, as u64s: B, Lq, Lk, S, the workspace pointers, the
/// paged words' pointers, page size and stride, Q's row stride, LSE's head
/// stride, and words 67..76.
const int varlenEchoedWords[] = {25, 28, 29, 54, 44, 49, 55, 60, 65, 66, 32,
                           43, 67, 68, 69, 70, 71, 72, 73, 74, 75, 76};

/// A PTX kernel of the 77 u64 parameters of ABI version 4 whose thread 0
/// stores `varlenEchoedWords` to O.
std::string varlenEchoPtx() {
  std::string ptx = ".version 7.0\n.target sm_50\n.address_size 64\n\n"
                    ".visible .entry fa_varlen_echo(\n";
  for (int i = 0; i < FA_ABI_V4_NUM_WORDS; ++i)
    ptx += "  .param .u64 w" + std::to_string(i) +
           (i + 1 < FA_ABI_V4_NUM_WORDS ? ",\n" : "\n");
  ptx += ")\n{\n"
         "  .reg .pred %p;\n  .reg .b32 %r1;\n  .reg .b64 %rd<3>;\n"
         "  mov.u32 %r1, %tid.x;\n  setp.ne.u32 %p, %r1, 0;\n"
         "  @%p bra DONE;\n"
         "  ld.param.u64 %rd1, [w16];\n  cvta.to.global.u64 %rd1, %rd1;\n";
  for (size_t i = 0; i < std::size(varlenEchoedWords); ++i)
    ptx += "  ld.param.u64 %rd2, [w" + std::to_string(varlenEchoedWords[i]) +
           "];\n  st.global.u64 [%rd1+" + std::to_string(8 * i) + "], %rd2;\n";
  return ptx + "DONE:\n  ret;\n}\n";
}

// The CUDA backend passes a varlen kernel its 77 words: one parameter per
// word, the cu_seqlens descriptors among them, the paged words null.
TEST(VarlenCudaTest, KernelSeesTheSeventySevenWords) {
  Expected<Device> device = Device::open("cuda");
  if (!device)
    GTEST_SKIP() << "no CUDA device: " << device.status().message();
  std::string ptx = varlenEchoPtx();
  Manifest m;
  m.compiler = "VarlenTest";
  m.target = "sm_50";
  m.codeObjectFile = "echo.ptx";
  m.codeObjectFormat = "ptx";
  m.codeObjectBytes = ptx.size();
  m.codeObjectHash = formatFnv1a64(fnv1a64(ptx.data(), ptx.size()));
  KernelInfo k;
  k.name = k.symbol = "fa_varlen_echo";
  k.abiVersion = 4;
  k.varlen = true;
  k.dtype = DType::F32;
  k.headDim = 8;
  k.scale = 1;
  k.hasLse = true;
  k.blockM = 16;
  k.blockN = 16;
  k.threads = 32;
  k.waveSize = 32;
  m.kernels.push_back(k);
  Expected<Module> module = Module::loadFromMemory(
      *device, ptx.data(), ptx.size(), formatManifest(m), "echo.ptx");
  FA_ASSERT_OK(module);
  Expected<Kernel> kernel = module->kernel();
  FA_ASSERT_OK(kernel);

  // B = 2 sequences of (Lq, Lk) = (3, 5), (1, 0): total_q 4, total_k 5.
  std::vector<Buffer> buffers;
  for (size_t bytes : {4096, 4096, 4096, 4096, 4096, 12, 12}) {
    Expected<Buffer> b = device->allocate(bytes);
    FA_ASSERT_OK(b);
    buffers.push_back(b.take());
  }
  const std::vector<int32_t> cuQ = {0, 3, 4}, cuK = {0, 5, 5};
  FA_ASSERT_OK(buffers[5].copyFromHost(cuQ.data(), 12));
  FA_ASSERT_OK(buffers[6].copyFromHost(cuK.data(), 12));
  AttentionArgs args{&buffers[0], &buffers[1],     &buffers[2],  &buffers[3],
                     &buffers[4], {2, 2, 1, 3, 5}, std::nullopt, std::nullopt};
  VarlenArgs vl;
  vl.cuSeqlensQ = &buffers[5];
  vl.cuSeqlensK = &buffers[6];
  vl.totalQ = 4;
  vl.totalK = 5;
  vl.hostCuSeqlensQ = cuQ;
  vl.hostCuSeqlensK = cuK;
  args.varlen = vl;
  Expected<PackedLaunch> packed =
      packAttentionArgs(kernel->info(), args, device->limits());
  FA_ASSERT_OK(packed);
  FA_ASSERT_OK(kernel->launch(args));
  uint64_t echoed[std::size(varlenEchoedWords)] = {};
  FA_ASSERT_OK(buffers[3].copyToHost(echoed, sizeof(echoed)));
  for (size_t i = 0; i < std::size(varlenEchoedWords); ++i)
    EXPECT_EQ(echoed[i], packed->words[size_t(varlenEchoedWords[i])])
        << "word " << varlenEchoedWords[i];
  const uint64_t byHand[] = {2, 3, 5, 1, 0, 0, 0, 0, 0, 0, 2 * 8, 4};
  for (size_t i = 0; i < std::size(byHand); ++i)
    EXPECT_EQ(echoed[i], byHand[i]) << "word " << varlenEchoedWords[i];
  EXPECT_EQ(echoed[12], buffers[5].address());
  EXPECT_EQ(echoed[15], 3u); // cu_seqlens_q's size in int32
  EXPECT_EQ(echoed[16], 1u);
  EXPECT_EQ(echoed[17], buffers[6].address());
  EXPECT_EQ(echoed[21], 1u);
}

} // namespace
