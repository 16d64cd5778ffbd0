//===- PagedVarlenTest.cpp - Paged KV cache and varlen validation ---------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The host-side checks of paged and variable-length problems (every message,
// exactly), the seeded generators (determinism, shuffled and shared pages,
// the lengths' properties, the inputs' distributions), and the fp64 / naive
// references: against hand-computed results on small cases built so that
// every key's value names it, and bit for bit against the dense reference of
// each sequence gathered into dense tensors, for page sizes 16, 64 and 256,
// GQA 1, 4 and 8, causal and not, with length-0 sequences and rows that see
// no key.
//
//===----------------------------------------------------------------------===//

#include "fa/PagedVarlen.h"
#include "TestUtil.h"
#include "fa/Validate.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <set>

using namespace fa;

namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();

/// The message of a failing check; "ok" when it passes.
std::string message(const Status &s) { return s.ok() ? "ok" : s.message(); }

template <typename T> bool sameBits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

//===----------------------------------------------------------------------===//
// Host-side checks: paged
//===----------------------------------------------------------------------===//

/// B = 3, page_size 64, 16 pages, 4 per sequence; sequences of 100, 250 and 7
/// keys use 2, 4 and 1 pages.
PagedProblem validPaged() {
  PagedProblem p;
  p.batch = 3;
  p.headsQ = 4;
  p.headsKv = 2;
  p.seqQ = 2;
  p.headDim = 8;
  p.numPages = 16;
  p.pageSize = 64;
  p.maxPages = 4;
  p.scale = 0.25;
  p.blockTable = {3,  9,  -1, -1, //
                  0,  15, 4,  7,  //
                  11, -1, -1, -1};
  p.cacheSeqlens = {100, 250, 7};
  return p;
}

TEST(PagedVarlenCheckTest, ValidPagedProblemPasses) {
  PagedProblem p = validPaged();
  EXPECT_EQ(message(checkPagedProblem(p)), "ok");
  // Entries past a sequence's pages are never read, so not checked.
  p.blockTable[2] = 99;
  p.blockTable[11] = std::numeric_limits<int32_t>::min();
  EXPECT_EQ(message(checkPagedProblem(p)), "ok");
  // A length of exactly max_pages pages, and a length of 0 (no page).
  p.cacheSeqlens = {256, 0, 64};
  p.blockTable = {3, 9, 1, 2, -1, -1, -1, -1, 11, -1, -1, -1};
  EXPECT_EQ(message(checkPagedProblem(p)), "ok");
}

TEST(PagedVarlenCheckTest, BlockTableEntryOutOfRange) {
  PagedProblem p = validPaged();
  p.blockTable[1 * 4 + 3] = 17;
  Status s = checkPagedProblem(p);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(message(s),
            "block_table[1][3] = 17 is out of range: the cache has 16 pages");
  p = validPaged();
  p.blockTable[1 * 4 + 3] = 16; // one past the last page
  EXPECT_EQ(message(checkPagedProblem(p)),
            "block_table[1][3] = 16 is out of range: the cache has 16 pages");
  p = validPaged();
  p.blockTable[1] = -1;
  EXPECT_EQ(message(checkPagedProblem(p)),
            "block_table[0][1] = -1 is out of range: the cache has 16 pages");
  p = validPaged();
  p.blockTable[2 * 4] = 15; // the last page is in range
  EXPECT_EQ(message(checkPagedProblem(p)), "ok");
}

TEST(PagedVarlenCheckTest, LengthNeedsMorePagesThanTheTableHas) {
  PagedProblem p = validPaged();
  p.cacheSeqlens[2] = 300;
  Status s = checkPagedProblem(p);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(message(s), "cache_seqlens[2] = 300 needs 5 pages of 64, "
                        "block_table has 4 per sequence");
  p.cacheSeqlens[2] = 257;
  EXPECT_EQ(message(checkPagedProblem(p)),
            "cache_seqlens[2] = 257 needs 5 pages of 64, "
            "block_table has 4 per sequence");
}

TEST(PagedVarlenCheckTest, NegativeLength) {
  PagedProblem p = validPaged();
  p.cacheSeqlens[1] = -3;
  EXPECT_EQ(message(checkPagedProblem(p)), "cache_seqlens[1] = -3 is negative");
}

// Any page size of at least 1 (the ABI's rule; 16 to 256 are typical).
TEST(PagedVarlenCheckTest, PageSizeIsAtLeastOne) {
  for (int64_t bad : {0, -16}) {
    PagedProblem p = validPaged();
    p.pageSize = bad;
    EXPECT_EQ(message(checkPagedProblem(p)),
              "page_size = " + std::to_string(bad) + " must be at least 1");
  }
  for (int64_t good : {1, 7, 16, 48, 100, 256, 512}) {
    PagedProblem p = validPaged();
    p.pageSize = good;
    p.maxPages = 250; // enough for 250 keys at 1 per page
    p.blockTable.assign(size_t(3 * 250), 0);
    EXPECT_EQ(message(checkPagedProblem(p)), "ok") << good;
  }
}

TEST(PagedVarlenCheckTest, ArraySizesAndShape) {
  PagedProblem p = validPaged();
  p.blockTable.pop_back();
  EXPECT_EQ(message(checkPagedProblem(p)),
            "block_table has 11 entries, B * max_pages = 12");
  p = validPaged();
  p.cacheSeqlens.pop_back();
  EXPECT_EQ(message(checkPagedProblem(p)),
            "cache_seqlens has 2 entries, B = 3");
  p = validPaged();
  p.headsQ = 3;
  EXPECT_EQ(message(checkPagedProblem(p)),
            "invalid paged problem: Hq (3) is not a multiple of Hkv (2)");
  p = validPaged();
  p.seqQ = 0;
  EXPECT_EQ(message(checkPagedProblem(p)),
            "invalid paged problem: B=3 Hq=4 Hkv=2 Lq=0 D=8 num_pages=16 "
            "max_pages=4 (all must be at least 1)");
  p = validPaged();
  p.numPages = int64_t(1) << 50;
  EXPECT_EQ(message(checkPagedProblem(p)),
            "invalid paged problem: the byte size of the K and V caches "
            "(num_pages*page_size*Hkv*D elements) overflows 64 bits");
  EXPECT_EQ(p.cacheElements(), size_t(1) << 60);
  p.numPages = int64_t(1) << 60;
  EXPECT_EQ(p.cacheElements(), SIZE_MAX);
}

TEST(PagedVarlenCheckTest, DataSizes) {
  PagedProblem p = validPaged();
  AttentionData d = generatePagedInputs(p, DType::F16, Distribution::Normal, 1);
  EXPECT_EQ(d.q.size(), 3u * 4 * 2 * 8);
  EXPECT_EQ(d.k.size(), 16u * 64 * 2 * 8);
  EXPECT_EQ(message(checkPagedData(p, d)), "ok");
  d.v.pop_back();
  EXPECT_EQ(message(checkPagedData(p, d)),
            "paged data has 192/16384/16383 elements for Q/K cache/V cache, "
            "the problem needs 192/16384/16384");
  EXPECT_TRUE(referencePagedAttentionF64(p, d).o.empty());
  EXPECT_TRUE(naivePagedAttention(p, DType::F16, d).o.empty());
  EXPECT_FALSE(gatherPagedSequences(p, d).ok());
  // A bad problem makes no inputs.
  p.pageSize = 48;
  EXPECT_TRUE(
      generatePagedInputs(p, DType::F16, Distribution::Normal, 1).q.empty());
}

//===----------------------------------------------------------------------===//
// Host-side checks: varlen
//===----------------------------------------------------------------------===//

/// B = 4: (Lq, Lk) = (3, 4), (9, 2), (0, 0), (5, 11).
VarlenProblem validVarlen() {
  return VarlenProblem::fromLengths(4, 2, 8, {3, 9, 0, 5}, {4, 2, 0, 11},
                                    /*causal=*/true, 0.25);
}

TEST(PagedVarlenCheckTest, FromLengths) {
  VarlenProblem p = validVarlen();
  EXPECT_EQ(p.batch, 4);
  EXPECT_EQ(p.cuSeqlensQ, (std::vector<int32_t>{0, 3, 12, 12, 17}));
  EXPECT_EQ(p.cuSeqlensK, (std::vector<int32_t>{0, 4, 6, 6, 17}));
  EXPECT_EQ(p.totalQ, 17);
  EXPECT_EQ(p.totalK, 17);
  EXPECT_EQ(p.maxSeqlenQ, 9);
  EXPECT_EQ(p.maxSeqlenK, 11);
  EXPECT_EQ(p.qElements(), 17u * 4 * 8);
  EXPECT_EQ(p.kvElements(), 17u * 2 * 8);
  EXPECT_EQ(p.lseElements(), 4u * 17);
  EXPECT_EQ(message(checkVarlenProblem(p)), "ok");
  // A larger max_seqlen than needed is fine (it only sizes the grid).
  p.maxSeqlenQ = 1000;
  EXPECT_EQ(message(checkVarlenProblem(p)), "ok");
}

TEST(PagedVarlenCheckTest, CuSeqlensNotNonDecreasing) {
  VarlenProblem p = validVarlen();
  p.cuSeqlensQ = {0, 3, 12, 10, 17};
  Status s = checkVarlenProblem(p);
  EXPECT_EQ(s.code(), ErrorCode::InvalidArgument);
  EXPECT_EQ(message(s), "cu_seqlens_q is not non-decreasing: "
                        "cu_seqlens_q[3] = 10 < cu_seqlens_q[2] = 12");
  // A negative length is the same thing.
  p = VarlenProblem::fromLengths(4, 2, 8, {3, 9, 0, 5}, {4, -2, 0, 15}, false,
                                 0.25);
  EXPECT_EQ(message(checkVarlenProblem(p)),
            "cu_seqlens_k is not non-decreasing: "
            "cu_seqlens_k[2] = 2 < cu_seqlens_k[1] = 4");
}

TEST(PagedVarlenCheckTest, CuSeqlensStartAtZero) {
  VarlenProblem p = validVarlen();
  p.cuSeqlensK = {3, 4, 6, 6, 17};
  EXPECT_EQ(message(checkVarlenProblem(p)), "cu_seqlens_k[0] must be 0");
  p = validVarlen();
  p.cuSeqlensQ[0] = -1;
  EXPECT_EQ(message(checkVarlenProblem(p)), "cu_seqlens_q[0] must be 0");
}

TEST(PagedVarlenCheckTest, TotalsMatchTheTensors) {
  VarlenProblem p = validVarlen();
  p.totalQ = 20;
  EXPECT_EQ(message(checkVarlenProblem(p)),
            "cu_seqlens_q[4] = 17 does not match total_q = 20, "
            "the rows of packed Q");
  p = validVarlen();
  p.totalK = 16;
  EXPECT_EQ(message(checkVarlenProblem(p)),
            "cu_seqlens_k[4] = 17 does not match total_k = 16, "
            "the rows of packed K and V");
  // And the data must have those rows.
  p = validVarlen();
  AttentionData d =
      generateVarlenInputs(p, DType::F32, Distribution::Normal, 2);
  EXPECT_EQ(message(checkVarlenData(p, d)), "ok");
  d.k.resize(d.k.size() + 16);
  EXPECT_EQ(message(checkVarlenData(p, d)),
            "varlen data has 544/288/272 elements for Q/K/V, "
            "the problem needs 544/272/272");
  EXPECT_TRUE(referenceVarlenAttentionF64(p, d).o.empty());
  EXPECT_FALSE(gatherVarlenSequences(p, d).ok());
}

TEST(PagedVarlenCheckTest, MaxSeqlenAndSizes) {
  VarlenProblem p = validVarlen();
  p.maxSeqlenK = 10;
  EXPECT_EQ(message(checkVarlenProblem(p)),
            "max_seqlen_k = 10 is less than the length of sequence 3: "
            "cu_seqlens_k[4] - cu_seqlens_k[3] = 11");
  p = validVarlen();
  p.cuSeqlensQ.pop_back();
  EXPECT_EQ(message(checkVarlenProblem(p)),
            "cu_seqlens_q has 4 entries, B + 1 = 5");
  p = validVarlen();
  p.headsKv = 3;
  EXPECT_EQ(message(checkVarlenProblem(p)),
            "invalid varlen problem: Hq (4) is not a multiple of Hkv (3)");
  p = validVarlen();
  p.headDim = 0;
  EXPECT_EQ(message(checkVarlenProblem(p)),
            "invalid varlen problem: B=4 Hq=4 Hkv=2 D=0 "
            "(all must be at least 1)");
  p = validVarlen();
  p.headsQ = p.headsKv = int64_t(1) << 58;
  EXPECT_EQ(message(checkVarlenProblem(p)),
            "invalid varlen problem: the byte size of Q and O "
            "(total_q*Hq*D elements) overflows 64 bits");
}

TEST(PagedVarlenCheckTest, GeneratorOptions) {
  PagedGeneratorOptions o;
  o.pageSize = 0;
  EXPECT_EQ(message(generatePagedProblem(o, 0).status()),
            "page_size = 0 must be at least 1");
  o = PagedGeneratorOptions();
  o.minSeqlenK = o.maxSeqlenK = 64;
  o.pageSize = 32;
  EXPECT_EQ(message(generatePagedProblem(o, 0).status()),
            "paged generator: no length in [64, 64] leaves the last page of "
            "32 partly filled");
  o.partialLastPage = false;
  EXPECT_TRUE(generatePagedProblem(o, 0).ok());
  o = PagedGeneratorOptions();
  o.maxPages = 2; // too few for lengths up to 300 at 16 per page
  EXPECT_NE(message(generatePagedProblem(o, 0).status())
                .find("pages of 16, block_table has 2 per sequence"),
            std::string::npos);
  o = PagedGeneratorOptions();
  o.headsQ = 6;
  o.headsKv = 4;
  EXPECT_EQ(message(generatePagedProblem(o, 0).status()),
            "invalid paged problem: Hq (6) is not a multiple of Hkv (4)");
  VarlenGeneratorOptions v;
  v.maxSeqlenQ = -1;
  EXPECT_EQ(message(generateVarlenProblem(v, 0).status()),
            "varlen generator: max_seqlen_q = -1, max_seqlen_k = 90 are not "
            "lengths in [0, 2147483647]");
}

//===----------------------------------------------------------------------===//
// Generators
//===----------------------------------------------------------------------===//

/// The table entries sequence b uses.
std::vector<int32_t> usedPages(const PagedProblem &p, int64_t b) {
  int64_t n = (p.cacheSeqlens[size_t(b)] + p.pageSize - 1) / p.pageSize;
  return std::vector<int32_t>(p.blockTable.begin() + b * p.maxPages,
                              p.blockTable.begin() + b * p.maxPages + n);
}

TEST(PagedVarlenGeneratorTest, PagedIsDeterministicPerSeed) {
  PagedGeneratorOptions o;
  o.batch = 5;
  o.sharedPrefixPages = 2;
  Expected<PagedProblem> a = generatePagedProblem(o, 42),
                         b = generatePagedProblem(o, 42),
                         c = generatePagedProblem(o, 43);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok()) << a.status().toString();
  EXPECT_EQ(a->blockTable, b->blockTable);
  EXPECT_EQ(a->cacheSeqlens, b->cacheSeqlens);
  EXPECT_EQ(a->numPages, b->numPages);
  EXPECT_TRUE(a->cacheSeqlens != c->cacheSeqlens ||
              a->blockTable != c->blockTable);
  AttentionData da =
      generatePagedInputs(*a, DType::F16, Distribution::Outliers, 7);
  AttentionData db =
      generatePagedInputs(*b, DType::F16, Distribution::Outliers, 7);
  EXPECT_EQ(da.q, db.q);
  EXPECT_EQ(da.k, db.k);
  EXPECT_EQ(da.v, db.v);
  EXPECT_NE(da.k,
            generatePagedInputs(*a, DType::F16, Distribution::Outliers, 8).k);
}

TEST(PagedVarlenGeneratorTest, PagesAreShuffledAndDistinct) {
  PagedGeneratorOptions o;
  o.batch = 4;
  o.minSeqlenK = 100;
  o.maxSeqlenK = 300;
  o.unusedPages = 5;
  for (uint64_t seed = 0; seed < 20; ++seed) {
    Expected<PagedProblem> p = generatePagedProblem(o, seed);
    ASSERT_TRUE(p.ok()) << p.status().toString();
    std::vector<int32_t> all;
    int64_t needed = 0;
    for (int64_t b = 0; b < p->batch; ++b) {
      std::vector<int32_t> pages = usedPages(*p, b);
      needed += int64_t(pages.size());
      all.insert(all.end(), pages.begin(), pages.end());
      // The entries past a sequence's pages hold the pad entry.
      for (int64_t j = int64_t(pages.size()); j < p->maxPages; ++j)
        EXPECT_EQ(p->blockTable[size_t(b * p->maxPages + j)], -1);
    }
    // No page is used twice without sharing; the rest are unused pages.
    EXPECT_EQ(std::set<int32_t>(all.begin(), all.end()).size(), all.size());
    EXPECT_EQ(p->numPages, needed + 5);
    EXPECT_EQ(p->maxPages, (*std::max_element(p->cacheSeqlens.begin(),
                                              p->cacheSeqlens.end()) +
                            15) /
                               16);
    // In shuffled order: at least 28 pages are never in increasing order
    // by chance (1 in 28!).
    EXPECT_FALSE(std::is_sorted(all.begin(), all.end())) << seed;
  }
}

TEST(PagedVarlenGeneratorTest, SharedPrefixPagesAreShared) {
  PagedGeneratorOptions o;
  o.batch = 6;
  o.minSeqlenK = 0;
  o.maxSeqlenK = 120;
  o.pageSize = 16;
  o.sharedPrefixPages = 3;
  o.unusedPages = 0;
  int sharedSeen = 0;
  for (uint64_t seed = 0; seed < 10; ++seed) {
    Expected<PagedProblem> p = generatePagedProblem(o, seed);
    ASSERT_TRUE(p.ok()) << p.status().toString();
    // Sequence by sequence, its first min(3, pages) pages are the same;
    // the others are its own.
    std::vector<int32_t> prefix;
    std::multiset<int32_t> own;
    for (int64_t b = 0; b < p->batch; ++b) {
      std::vector<int32_t> pages = usedPages(*p, b);
      for (size_t j = 0; j < pages.size(); ++j) {
        if (j < 3) {
          if (j >= prefix.size())
            prefix.push_back(pages[j]);
          else
            EXPECT_EQ(pages[j], prefix[j]) << "seed " << seed << " b " << b;
        } else {
          own.insert(pages[j]);
        }
      }
    }
    EXPECT_EQ(std::set<int32_t>(own.begin(), own.end()).size(), own.size());
    for (int32_t page : prefix)
      EXPECT_EQ(own.count(page), 0u);
    // The data is shared too: two sequences with a page of the prefix read
    // the same keys there.
    AttentionData d =
        generatePagedInputs(*p, DType::F32, Distribution::Normal, seed);
    Expected<std::vector<DenseSequence>> seqs = gatherPagedSequences(*p, d);
    ASSERT_TRUE(seqs.ok());
    for (int64_t b = 1; b < p->batch; ++b) {
      const DenseSequence &s0 = (*seqs)[0], &sb = (*seqs)[size_t(b)];
      int64_t common = std::min(
          {s0.problem.shape.seqK, sb.problem.shape.seqK, int64_t(3 * 16)});
      for (int64_t hk = 0; hk < p->headsKv; ++hk)
        for (int64_t j = 0; j < common; ++j)
          for (int64_t c = 0; c < p->headDim; ++c) {
            size_t i0 =
                size_t((hk * s0.problem.shape.seqK + j) * p->headDim + c);
            size_t ib =
                size_t((hk * sb.problem.shape.seqK + j) * p->headDim + c);
            ASSERT_EQ(s0.data.k[i0], sb.data.k[ib]);
            ASSERT_EQ(s0.data.v[i0], sb.data.v[ib]);
          }
      sharedSeen += common > 0;
    }
  }
  EXPECT_GT(sharedSeen, 20);
}

TEST(PagedVarlenGeneratorTest, PagedLengths) {
  for (int64_t ps : {16, 64, 256}) {
    PagedGeneratorOptions o;
    o.batch = 16;
    o.pageSize = ps;
    o.minSeqlenK = 0;
    o.maxSeqlenK = 3 * ps;
    std::set<int64_t> lastPageFill;
    for (uint64_t seed = 0; seed < 10; ++seed) {
      Expected<PagedProblem> p = generatePagedProblem(o, seed);
      ASSERT_TRUE(p.ok()) << p.status().toString();
      for (int32_t len : p->cacheSeqlens) {
        EXPECT_GE(len, 0);
        EXPECT_LE(len, 3 * ps);
        // Never a whole number of pages, except none.
        EXPECT_TRUE(len == 0 || len % ps != 0) << len;
        lastPageFill.insert(len % ps);
      }
    }
    EXPECT_GT(lastPageFill.size(), size_t(std::min<int64_t>(ps / 2, 40)));
  }
  // Without partialLastPage, whole pages happen.
  PagedGeneratorOptions o;
  o.minSeqlenK = o.maxSeqlenK = 128;
  o.pageSize = 64;
  o.partialLastPage = false;
  Expected<PagedProblem> p = generatePagedProblem(o, 3);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->cacheSeqlens, (std::vector<int32_t>{128, 128}));
  EXPECT_EQ(p->maxPages, 2);
}

// The options validation uses: given lengths, a 0 and a 1 put in, pages in
// order, the table's unused entries naming an unused (poisoned) page.
TEST(PagedVarlenGeneratorTest, EdgeLengthsOrderAndPadding) {
  PagedGeneratorOptions o;
  o.batch = 5;
  o.minSeqlenK = 10;
  o.maxSeqlenK = 100;
  o.edgeLengths = true;
  for (uint64_t seed = 0; seed < 5; ++seed) {
    Expected<PagedProblem> p = generatePagedProblem(o, seed);
    ASSERT_TRUE(p.ok()) << p.status().toString();
    std::multiset<int32_t> l(p->cacheSeqlens.begin(), p->cacheSeqlens.end());
    EXPECT_EQ(l.count(0), 1u);
    EXPECT_EQ(l.count(1), 1u);
    EXPECT_EQ(l.count(100), 1u); // the longest
    EXPECT_EQ(*l.rbegin(), 100);
  }
  o.batch = 3; // a 0, the longest and one drawn length
  Expected<PagedProblem> three = generatePagedProblem(o, 2);
  ASSERT_TRUE(three.ok());
  std::multiset<int32_t> l3(three->cacheSeqlens.begin(),
                            three->cacheSeqlens.end());
  EXPECT_EQ(l3.count(0), 1u);
  EXPECT_EQ(l3.count(100), 1u);
  o.maxSeqlenK = 96; // a whole number of pages: one less
  Expected<PagedProblem> partly = generatePagedProblem(o, 2);
  ASSERT_TRUE(partly.ok());
  EXPECT_EQ(
      std::count(partly->cacheSeqlens.begin(), partly->cacheSeqlens.end(), 95),
      1);
  o.batch = 2; // a 0 and one drawn length
  Expected<PagedProblem> two = generatePagedProblem(o, 1);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(std::count(two->cacheSeqlens.begin(), two->cacheSeqlens.end(), 0),
            1);
  o.batch = 1; // nothing put in
  EXPECT_GE(generatePagedProblem(o, 1)->cacheSeqlens[0], 10);

  // Given lengths, pages in order, unused entries an unused page.
  o = PagedGeneratorOptions();
  o.batch = 3;
  o.pageSize = 4;
  o.seqlens = {9, 0, 4};
  o.maxPages = 4;
  o.unusedPages = 2;
  o.shufflePages = false;
  o.padWithUnusedPage = true;
  Expected<PagedProblem> p = generatePagedProblem(o, 0);
  ASSERT_TRUE(p.ok()) << p.status().toString();
  EXPECT_EQ(p->cacheSeqlens, (std::vector<int32_t>{9, 0, 4}));
  EXPECT_EQ(p->numPages, 6);
  EXPECT_EQ(p->blockTable,
            (std::vector<int32_t>{0, 1, 2, 4, 4, 4, 4, 4, 3, 4, 4, 4}));
  o.seqlens = {9, -1, 4};
  EXPECT_EQ(message(generatePagedProblem(o, 0).status()),
            "cache_seqlens[1] = -1 is negative");
  o.seqlens = {9};
  EXPECT_EQ(message(generatePagedProblem(o, 0).status()),
            "paged generator: 1 lengths given for B = 3");
  // Page size 1: no page is partly filled, whatever partialLastPage says.
  o = PagedGeneratorOptions();
  o.pageSize = 1;
  o.minSeqlenK = o.maxSeqlenK = 5;
  EXPECT_EQ(generatePagedProblem(o, 0)->cacheSeqlens,
            (std::vector<int32_t>{5, 5}));
}

// The paged problem of a dense shape: Lk is the capacity per sequence.
TEST(PagedVarlenGeneratorTest, PagedProblemForAShape) {
  AttentionProblem dense{{4, 8, 2, 3, 100}, 64, true, 0.125};
  PagedCacheOptions o;
  o.pageSize = 16;
  Expected<PagedProblem> p = pagedProblemFor(dense, o, 7);
  ASSERT_TRUE(p.ok()) << p.status().toString();
  EXPECT_EQ(p->batch, 4);
  EXPECT_EQ(p->headsQ, 8);
  EXPECT_EQ(p->headsKv, 2);
  EXPECT_EQ(p->seqQ, 3);
  EXPECT_EQ(p->headDim, 64);
  EXPECT_TRUE(p->causal);
  EXPECT_EQ(p->scale, 0.125);
  EXPECT_EQ(p->maxPages, 7); // ceil(100 / 16)
  std::multiset<int32_t> l(p->cacheSeqlens.begin(), p->cacheSeqlens.end());
  EXPECT_EQ(l.count(0), 1u);
  EXPECT_EQ(l.count(1), 1u);
  EXPECT_EQ(l.count(100), 1u); // the capacity
  for (int32_t len : p->cacheSeqlens)
    EXPECT_TRUE(len <= 100 && (len == 0 || len % 16 != 0)) << len;
  // Deterministic per seed; shared prefixes.
  EXPECT_EQ(pagedProblemFor(dense, o, 7)->blockTable, p->blockTable);
  o.sharePages = true;
  o.cacheSeqlens = {100, 60, 20, 0};
  Expected<PagedProblem> shared = pagedProblemFor(dense, o, 7);
  ASSERT_TRUE(shared.ok());
  for (int j = 0; j < 3; ++j) // max(1, 7 / 2) pages
    EXPECT_EQ(shared->blockTable[size_t(7 + j)], shared->blockTable[size_t(j)])
        << j;
  EXPECT_EQ(shared->blockTable[14], shared->blockTable[0]);
  EXPECT_EQ(shared->blockTable[15], shared->blockTable[1]);
  // The errors.
  o.cacheSeqlens = {100, 101, 0, 0};
  EXPECT_EQ(message(pagedProblemFor(dense, o, 0).status()),
            "cache_seqlens[1] = 101 is above the cache's capacity Lk = 100");
  o.cacheSeqlens = {1, 2};
  EXPECT_EQ(message(pagedProblemFor(dense, o, 0).status()),
            "cache_seqlens has 2 lengths, B = 4");
  o.cacheSeqlens.clear();
  o.pageSize = 0;
  EXPECT_EQ(message(pagedProblemFor(dense, o, 0).status()),
            "page_size = 0 must be at least 1");
  o.pageSize = 16;
  dense.shape.seqK = int64_t(1) << 31;
  EXPECT_EQ(message(pagedProblemFor(dense, o, 0).status()),
            "the cache capacity Lk = 2147483648 is not in [1, 2147483647] "
            "(cache_seqlens are int32)");
}

TEST(PagedVarlenGeneratorTest, VarlenLengths) {
  VarlenGeneratorOptions o;
  o.batch = 7;
  for (uint64_t seed = 0; seed < 30; ++seed) {
    Expected<VarlenProblem> p = generateVarlenProblem(o, seed);
    ASSERT_TRUE(p.ok()) << p.status().toString();
    EXPECT_EQ(p->batch, 7);
    bool q0 = false, k0 = false, q1 = false, k1 = false, differ = false;
    for (int64_t b = 0; b < p->batch; ++b) {
      int64_t lq = p->cuSeqlensQ[size_t(b + 1)] - p->cuSeqlensQ[size_t(b)];
      int64_t lk = p->cuSeqlensK[size_t(b + 1)] - p->cuSeqlensK[size_t(b)];
      EXPECT_GE(lq, 0);
      EXPECT_LE(lq, 70);
      EXPECT_GE(lk, 0);
      EXPECT_LE(lk, 90);
      q0 |= lq == 0;
      k0 |= lk == 0 && lq > 0;
      q1 |= lq == 1;
      k1 |= lk == 1;
      differ |= lq != lk;
    }
    EXPECT_TRUE(q0 && k0 && q1 && k1 && differ) << seed;
  }
  // Deterministic per seed.
  EXPECT_EQ(generateVarlenProblem(o, 5)->cuSeqlensK,
            generateVarlenProblem(o, 5)->cuSeqlensK);
  EXPECT_NE(generateVarlenProblem(o, 5)->cuSeqlensK,
            generateVarlenProblem(o, 6)->cuSeqlensK);
  // Self-attention lengths.
  o.sameLengths = true;
  Expected<VarlenProblem> p = generateVarlenProblem(o, 1);
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->cuSeqlensQ, p->cuSeqlensK);
  // A sequence of length 0: two equal neighbours in cu_seqlens.
  EXPECT_NE(std::adjacent_find(p->cuSeqlensQ.begin(), p->cuSeqlensQ.end()),
            p->cuSeqlensQ.end());
}

// The inputs are generateInputs' distributions, in the same order: a dense
// problem with as many elements draws the same values.
TEST(PagedVarlenGeneratorTest, InputsAreTheDenseDistributions) {
  Expected<PagedProblem> p = generatePagedProblem(PagedGeneratorOptions(), 9);
  ASSERT_TRUE(p.ok());
  AttentionData paged =
      generatePagedInputs(*p, DType::BF16, Distribution::Outliers, 11);
  AttentionProblem dense{
      {1, p->batch * p->headsQ, p->headsKv, p->seqQ, p->numPages * p->pageSize},
      p->headDim,
      false,
      0.125};
  AttentionData same =
      generateInputs(dense, DType::BF16, Distribution::Outliers, 11);
  EXPECT_EQ(paged.q, same.q);
  EXPECT_EQ(paged.k, same.k);
  EXPECT_EQ(paged.v, same.v);

  VarlenProblem v = validVarlen();
  AttentionData varlen =
      generateVarlenInputs(v, DType::F16, Distribution::Normal, 4);
  AttentionProblem dense2{{1, 4, 2, 17, 17}, 8, false, 0.125};
  AttentionData same2 =
      generateInputs(dense2, DType::F16, Distribution::Normal, 4);
  EXPECT_EQ(varlen.q, same2.q);
  EXPECT_EQ(varlen.k, same2.k);
  EXPECT_EQ(varlen.v, same2.v);
}

TEST(PagedVarlenGeneratorTest, PoisonUnreadCacheRows) {
  // Pages of 16: sequence 0 reads pages 3 (16 rows) and 1 (4 rows), sequence
  // 1 reads page 3 (shared, 10 rows); pages 0 and 2 are unused.
  PagedProblem p;
  p.batch = 2;
  p.headsKv = 2;
  p.headsQ = 2;
  p.headDim = 4;
  p.numPages = 4;
  p.pageSize = 16;
  p.maxPages = 2;
  p.blockTable = {3, 1, 3, -1};
  p.cacheSeqlens = {20, 10};
  AttentionData d = generatePagedInputs(p, DType::F32, Distribution::Normal, 0);
  Expected<int64_t> n = poisonUnreadCacheRows(p, d);
  ASSERT_TRUE(n.ok()) << n.status().toString();
  EXPECT_EQ(*n, 16 + 12 + 16 + 0);
  for (int64_t page = 0; page < 4; ++page)
    for (int64_t row = 0; row < 16; ++row) {
      const bool read = page == 3 || (page == 1 && row < 4);
      const size_t at = size_t((page * 16 + row) * 8);
      for (size_t e = 0; e < 8; ++e) {
        EXPECT_EQ(std::isnan(d.k[at + e]), !read) << page << " " << row;
        EXPECT_EQ(std::isnan(d.v[at + e]), !read) << page << " " << row;
      }
    }
  // The reference reads none of them.
  AttentionResult<double> r = referencePagedAttentionF64(p, d);
  for (double x : r.o)
    EXPECT_TRUE(std::isfinite(x));
  d.q.pop_back();
  EXPECT_FALSE(poisonUnreadCacheRows(p, d).ok());
}

//===----------------------------------------------------------------------===//
// References: hand-computed
//===----------------------------------------------------------------------===//

// With scale 0 every visible key has the same weight, so O is the mean of
// the visible V rows and LSE = log(visible). The V value of each cache row
// names its page, row, KV head and column, so a wrong page, row, stride or
// head shows in O.
TEST(PagedVarlenReferenceTest, PagedByHand) {
  PagedProblem p;
  p.batch = 3;
  p.headsQ = 4;
  p.headsKv = 2;
  p.seqQ = 3;
  p.headDim = 2;
  p.numPages = 5;
  p.pageSize = 16;
  p.maxPages = 3;
  p.causal = true;
  p.scale = 0;
  p.blockTable = {4, 1,  -1, //
                  1, 0,  3,  //
                  2, -1, -1};
  p.cacheSeqlens = {20, 35, 1};
  ASSERT_EQ(message(checkPagedProblem(p)), "ok");
  auto value = [](int64_t page, int64_t row, int64_t hk, int64_t c) {
    return float(page * 1000 + row * 10 + hk * 100000 + c * 0.5);
  };
  AttentionData d;
  d.q.assign(p.qElements(), 1.0f);
  d.k.assign(p.cacheElements(), 1.0f);
  d.v.resize(p.cacheElements());
  for (int64_t page = 0; page < 5; ++page)
    for (int64_t row = 0; row < 16; ++row)
      for (int64_t hk = 0; hk < 2; ++hk)
        for (int64_t c = 0; c < 2; ++c)
          d.v[size_t(((page * 16 + row) * 2 + hk) * 2 + c)] =
              value(page, row, hk, c);
  AttentionResult<double> r = referencePagedAttentionF64(p, d);
  ASSERT_EQ(r.o.size(), p.qElements());
  for (int64_t b = 0; b < 3; ++b)
    for (int64_t h = 0; h < 4; ++h)
      for (int64_t i = 0; i < 3; ++i) {
        const int64_t lk = p.cacheSeqlens[size_t(b)];
        const int64_t visible = std::min(lk, i + lk - 3 + 1);
        const size_t row = size_t((b * 4 + h) * 3 + i);
        if (visible <= 0) {
          EXPECT_EQ(r.lse[row], -kInf);
          EXPECT_EQ(r.o[row * 2], 0.0);
          continue;
        }
        EXPECT_NEAR(r.lse[row], std::log(double(visible)), 1e-12);
        for (int64_t c = 0; c < 2; ++c) {
          double sum = 0;
          for (int64_t j = 0; j < visible; ++j)
            sum +=
                value(p.blockTable[size_t(b * 3 + j / 16)], j % 16, h / 2, c);
          EXPECT_NEAR(r.o[row * 2 + size_t(c)], sum / double(visible),
                      1e-9 * std::fabs(sum))
              << "b " << b << " h " << h << " i " << i << " c " << c;
        }
      }
}

TEST(PagedVarlenReferenceTest, VarlenByHand) {
  // (Lq, Lk): (2, 5), (0, 3), (4, 2), (3, 0), (1, 7).
  VarlenProblem p = VarlenProblem::fromLengths(
      8, 2, 3, {2, 0, 4, 3, 1}, {5, 3, 2, 0, 7}, /*causal=*/true, 0);
  ASSERT_EQ(message(checkVarlenProblem(p)), "ok");
  auto value = [](int64_t row, int64_t hk, int64_t c) {
    return float(row * 10 + hk * 1000 + c * 0.25);
  };
  AttentionData d;
  d.q.assign(p.qElements(), 0.5f);
  d.k.assign(p.kvElements(), 0.5f);
  d.v.resize(p.kvElements());
  for (int64_t row = 0; row < p.totalK; ++row)
    for (int64_t hk = 0; hk < 2; ++hk)
      for (int64_t c = 0; c < 3; ++c)
        d.v[size_t((row * 2 + hk) * 3 + c)] = value(row, hk, c);
  AttentionResult<double> r = referenceVarlenAttentionF64(p, d);
  ASSERT_EQ(r.o.size(), p.qElements());
  ASSERT_EQ(r.lse.size(), size_t(8 * p.totalQ));
  for (int64_t b = 0; b < 5; ++b) {
    const int64_t q0 = p.cuSeqlensQ[size_t(b)], k0 = p.cuSeqlensK[size_t(b)];
    const int64_t lq = p.cuSeqlensQ[size_t(b + 1)] - q0;
    const int64_t lk = p.cuSeqlensK[size_t(b + 1)] - k0;
    for (int64_t h = 0; h < 8; ++h)
      for (int64_t i = 0; i < lq; ++i) {
        const int64_t visible = std::min(lk, i + lk - lq + 1);
        const double lse = r.lse[size_t(h * p.totalQ + q0 + i)];
        const double *o = &r.o[size_t(((q0 + i) * 8 + h) * 3)];
        if (visible <= 0) {
          EXPECT_EQ(lse, -kInf) << b << " " << h << " " << i;
          EXPECT_EQ(o[0], 0.0);
          continue;
        }
        EXPECT_NEAR(lse, std::log(double(visible)), 1e-12);
        for (int64_t c = 0; c < 3; ++c) {
          double sum = 0;
          for (int64_t j = 0; j < visible; ++j)
            sum += value(k0 + j, h / 4, c);
          EXPECT_NEAR(o[c], sum / double(visible),
                      1e-9 * std::fabs(sum) + 1e-12)
              << "b " << b << " h " << h << " i " << i << " c " << c;
        }
      }
  }
}

//===----------------------------------------------------------------------===//
// References: against the dense reference of each gathered sequence
//===----------------------------------------------------------------------===//

/// Counts the elements of `got[gotAt(x)]` and `want[x]` that differ in a bit.
template <typename T, typename At>
int64_t bitDifferences(const std::vector<T> &got, const std::vector<T> &want,
                       At gotAt) {
  int64_t differ = 0;
  for (size_t x = 0; x < want.size(); ++x)
    differ += !sameBits(got[gotAt(x)], want[x]);
  return differ;
}

/// A paged result's sequence b against the dense result of that sequence;
/// with no dense counterpart (Lk = 0), its rows are O = 0, LSE = -inf.
template <typename T>
void expectPagedSequence(const PagedProblem &p, const AttentionResult<T> &r,
                         int64_t b, const DenseSequence &s,
                         const AttentionResult<T> *dense,
                         const std::string &what) {
  const size_t o0 = size_t(b * p.headsQ * p.seqQ * p.headDim);
  const size_t l0 = size_t(b * p.headsQ * p.seqQ);
  if (!dense) {
    ASSERT_EQ(s.problem.shape.seqK, 0) << what;
    for (size_t x = 0; x < size_t(p.headsQ * p.seqQ); ++x)
      EXPECT_EQ(r.lse[l0 + x], -std::numeric_limits<T>::infinity()) << what;
    for (size_t x = 0; x < size_t(p.headsQ * p.seqQ * p.headDim); ++x) {
      EXPECT_EQ(r.o[o0 + x], T(0)) << what;
      if (!r.magnitude.empty())
        EXPECT_EQ(r.magnitude[o0 + x], T(0)) << what;
    }
    return;
  }
  EXPECT_EQ(bitDifferences(r.o, dense->o, [&](size_t x) { return o0 + x; }), 0)
      << what << ": O of sequence " << b;
  EXPECT_EQ(bitDifferences(r.lse, dense->lse, [&](size_t x) { return l0 + x; }),
            0)
      << what << ": LSE of sequence " << b;
  if (!r.magnitude.empty())
    EXPECT_EQ(bitDifferences(r.magnitude, dense->magnitude,
                             [&](size_t x) { return o0 + x; }),
              0)
        << what << ": magnitude of sequence " << b;
}

TEST(PagedVarlenReferenceTest, PagedEqualsGatheredDense) {
  int cases = 0, emptySequences = 0, noKeyRows = 0;
  for (int64_t ps : {16, 64, 256})
    for (int64_t group : {1, 4, 8})
      for (bool causal : {false, true}) {
        PagedGeneratorOptions o;
        o.batch = 3;
        o.headsKv = 2;
        o.headsQ = 2 * group;
        o.headDim = 16;
        o.pageSize = ps;
        o.seqQ = causal ? 24 : 5;
        o.minSeqlenK = 0;
        o.maxSeqlenK = ps == 256 ? 600 : 200;
        o.sharedPrefixPages = cases % 2 ? 1 : 0;
        o.causal = causal;
        const uint64_t seed = uint64_t(100 + cases++);
        Expected<PagedProblem> p = generatePagedProblem(o, seed);
        ASSERT_TRUE(p.ok()) << p.status().toString();
        AttentionData d =
            generatePagedInputs(*p, DType::F16, Distribution::Outliers, seed);
        // The rows no sequence reads are NaN: a reference that read one
        // would have NaN in its result.
        Expected<int64_t> poisoned = poisonUnreadCacheRows(*p, d);
        ASSERT_TRUE(poisoned.ok());
        EXPECT_GE(*poisoned, o.unusedPages * ps);
        AttentionResult<double> r = referencePagedAttentionF64(*p, d);
        AttentionResult<float> n = naivePagedAttention(*p, DType::F16, d);
        Expected<std::vector<DenseSequence>> seqs = gatherPagedSequences(*p, d);
        ASSERT_TRUE(seqs.ok());
        ASSERT_EQ(seqs->size(), size_t(p->batch));
        const std::string what = "page_size " + std::to_string(ps) + " GQA " +
                                 std::to_string(group) + " causal " +
                                 std::to_string(causal) + " seed " +
                                 std::to_string(seed);
        for (int64_t b = 0; b < p->batch; ++b) {
          const DenseSequence &s = (*seqs)[size_t(b)];
          EXPECT_EQ(s.problem.shape.seqK, p->cacheSeqlens[size_t(b)]);
          if (s.problem.shape.seqK == 0) {
            ++emptySequences;
            expectPagedSequence<double>(*p, r, b, s, nullptr, what);
            expectPagedSequence<float>(*p, n, b, s, nullptr, what);
            continue;
          }
          AttentionResult<double> dr = referenceAttentionF64(s.problem, s.data);
          AttentionResult<float> dn =
              naiveAttention(s.problem, DType::F16, s.data);
          ASSERT_FALSE(dr.o.empty()) << what;
          expectPagedSequence(*p, r, b, s, &dr, what);
          expectPagedSequence(*p, n, b, s, &dn, what);
          noKeyRows += int(std::count(dr.lse.begin(), dr.lse.end(), -kInf));
        }
      }
  // The random cases include what they should.
  EXPECT_GT(emptySequences + noKeyRows, 0);
  EXPECT_GT(noKeyRows, 0);
}

/// A varlen result's sequence b against the dense result of that sequence.
template <typename T>
void expectVarlenSequence(const VarlenProblem &p, const AttentionResult<T> &r,
                          int64_t b, const AttentionResult<T> *dense,
                          const std::string &what) {
  const int64_t Hq = p.headsQ, D = p.headDim;
  const int64_t q0 = p.cuSeqlensQ[size_t(b)];
  const int64_t lq = p.cuSeqlensQ[size_t(b + 1)] - q0;
  // Dense [1, Hq, Lq, D] element x is (h, i, c).
  auto oAt = [&](size_t x) {
    int64_t c = int64_t(x) % D, i = int64_t(x) / D % lq,
            h = int64_t(x) / D / lq;
    return size_t(((q0 + i) * Hq + h) * D + c);
  };
  auto lseAt = [&](size_t x) {
    int64_t i = int64_t(x) % lq, h = int64_t(x) / lq;
    return size_t(h * p.totalQ + q0 + i);
  };
  if (!dense) {
    for (int64_t x = 0; x < Hq * lq; ++x)
      EXPECT_EQ(r.lse[lseAt(size_t(x))], -std::numeric_limits<T>::infinity())
          << what;
    for (int64_t x = 0; x < Hq * lq * D; ++x)
      EXPECT_EQ(r.o[oAt(size_t(x))], T(0)) << what;
    return;
  }
  EXPECT_EQ(bitDifferences(r.o, dense->o, oAt), 0)
      << what << ": O of sequence " << b;
  EXPECT_EQ(bitDifferences(r.lse, dense->lse, lseAt), 0)
      << what << ": LSE of sequence " << b;
  if (!r.magnitude.empty())
    EXPECT_EQ(bitDifferences(r.magnitude, dense->magnitude, oAt), 0)
        << what << ": magnitude of sequence " << b;
}

TEST(PagedVarlenReferenceTest, VarlenEqualsPerSequenceDense) {
  int cases = 0, emptyQ = 0, emptyK = 0, noKeyRows = 0;
  for (int64_t group : {1, 4, 8})
    for (bool causal : {false, true})
      for (bool same : {false, true}) {
        VarlenGeneratorOptions o;
        o.batch = 7;
        o.headsKv = 2;
        o.headsQ = 2 * group;
        o.headDim = 24;
        o.causal = causal;
        o.sameLengths = same;
        const uint64_t seed = uint64_t(200 + cases++);
        Expected<VarlenProblem> p = generateVarlenProblem(o, seed);
        ASSERT_TRUE(p.ok()) << p.status().toString();
        AttentionData d =
            generateVarlenInputs(*p, DType::BF16, Distribution::Outliers, seed);
        AttentionResult<double> r = referenceVarlenAttentionF64(*p, d);
        AttentionResult<float> n = naiveVarlenAttention(*p, DType::BF16, d);
        ASSERT_EQ(r.lse.size(), p->lseElements());
        Expected<std::vector<DenseSequence>> seqs =
            gatherVarlenSequences(*p, d);
        ASSERT_TRUE(seqs.ok());
        const std::string what = "GQA " + std::to_string(group) + " causal " +
                                 std::to_string(causal) + " seed " +
                                 std::to_string(seed);
        for (int64_t b = 0; b < p->batch; ++b) {
          const DenseSequence &s = (*seqs)[size_t(b)];
          const int64_t lq =
              p->cuSeqlensQ[size_t(b + 1)] - p->cuSeqlensQ[size_t(b)];
          const int64_t lk =
              p->cuSeqlensK[size_t(b + 1)] - p->cuSeqlensK[size_t(b)];
          EXPECT_EQ(s.problem.shape.seqQ, lq);
          EXPECT_EQ(s.problem.shape.seqK, lk);
          if (lq == 0 || lk == 0) {
            emptyQ += lq == 0;
            emptyK += lq > 0 && lk == 0;
            EXPECT_TRUE(s.data.q.empty());
            expectVarlenSequence<double>(*p, r, b, nullptr, what);
            expectVarlenSequence<float>(*p, n, b, nullptr, what);
            continue;
          }
          AttentionResult<double> dr = referenceAttentionF64(s.problem, s.data);
          AttentionResult<float> dn =
              naiveAttention(s.problem, DType::BF16, s.data);
          ASSERT_FALSE(dr.o.empty()) << what;
          expectVarlenSequence(*p, r, b, &dr, what);
          expectVarlenSequence(*p, n, b, &dn, what);
          noKeyRows += int(std::count(dr.lse.begin(), dr.lse.end(), -kInf));
        }
      }
  EXPECT_GT(emptyQ, 0);
  EXPECT_GT(emptyK, 0);
  EXPECT_GT(noKeyRows, 0);
}

// One dense problem seen as a paged one (its K/V copied into shuffled pages)
// and as a varlen batch of one: all three references agree bit for bit.
TEST(PagedVarlenReferenceTest, OneSequenceThreeWays) {
  AttentionProblem dense{{1, 8, 1, 37, 150}, 32, true, 0.17};
  AttentionData dd = generateInputs(dense, DType::F32, Distribution::Normal, 5);
  AttentionResult<double> want = referenceAttentionF64(dense, dd);

  PagedProblem p;
  p.headsQ = 8;
  p.headsKv = 1;
  p.seqQ = 37;
  p.headDim = 32;
  p.pageSize = 64;
  p.numPages = 4;
  p.maxPages = 3;
  p.causal = true;
  p.scale = 0.17;
  p.blockTable = {2, 0, 3};
  p.cacheSeqlens = {150};
  AttentionData pd;
  pd.q = dd.q;
  pd.k.assign(p.cacheElements(), NAN);
  pd.v.assign(p.cacheElements(), NAN);
  for (int64_t j = 0; j < 150; ++j)
    for (int64_t c = 0; c < 32; ++c) {
      size_t at = size_t((p.blockTable[size_t(j / 64)] * 64 + j % 64) * 32 + c);
      pd.k[at] = dd.k[size_t(j * 32 + c)];
      pd.v[at] = dd.v[size_t(j * 32 + c)];
    }
  AttentionResult<double> paged = referencePagedAttentionF64(p, pd);
  EXPECT_EQ(bitDifferences(paged.o, want.o, [](size_t x) { return x; }), 0);
  EXPECT_EQ(bitDifferences(paged.lse, want.lse, [](size_t x) { return x; }), 0);

  VarlenProblem v =
      VarlenProblem::fromLengths(8, 1, 32, {37}, {150}, true, 0.17);
  AttentionData vd;
  vd.q.resize(dd.q.size());
  for (int64_t h = 0; h < 8; ++h)
    for (int64_t i = 0; i < 37; ++i)
      for (int64_t c = 0; c < 32; ++c)
        vd.q[size_t((i * 8 + h) * 32 + c)] =
            dd.q[size_t((h * 37 + i) * 32 + c)];
  vd.k = dd.k; // Hkv = 1: [Lk, 1, D] is [1, 1, Lk, D]
  vd.v = dd.v;
  AttentionResult<double> varlen = referenceVarlenAttentionF64(v, vd);
  // LSE [Hq, total_q] with one sequence is the dense [1, Hq, Lq].
  EXPECT_EQ(bitDifferences(varlen.lse, want.lse, [](size_t x) { return x; }),
            0);
  EXPECT_EQ(bitDifferences(varlen.o, want.o,
                           [](size_t x) {
                             size_t c = x % 32, i = x / 32 % 37,
                                    h = x / 32 / 37;
                             return (i * 8 + h) * 32 + c;
                           }),
            0);
}

} // namespace
