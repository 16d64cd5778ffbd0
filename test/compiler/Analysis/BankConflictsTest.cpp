//===- BankConflictsTest.cpp - The LDS bank model -------------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/BankConflicts.h"

#include <gtest/gtest.h>

using namespace mlir::fa;

namespace {
BankModel gfx906() { return bankModelFor(*lookupTarget("gfx906")); }
BankModel sm90() { return bankModelFor(*lookupTarget("sm_90")); }
} // namespace

TEST(BankConflicts, PhasesByWidth) {
  EXPECT_EQ(gfx906().phaseLanes(2), 32);
  EXPECT_EQ(gfx906().phaseLanes(4), 32);
  EXPECT_EQ(gfx906().phaseLanes(8), 16);
  EXPECT_EQ(gfx906().phaseLanes(16), 8);
  EXPECT_EQ(sm90().phaseLanes(4), 32);
  EXPECT_EQ(sm90().lanes, 32);
}

TEST(BankConflicts, BroadcastIsFree) {
  std::vector<int64_t> same(64, 128);
  EXPECT_EQ(conflictDegree(gfx906(), same, 4), 1);
}

// A column of a 128-f16-per-row buffer, one row per lane: every row starts
// in bank 0, so the 32 lanes of a b32 phase hit one bank 32 times apart...
// unless one dword of padding staggers the rows.
TEST(BankConflicts, ColumnReadOf128HalvesPerRow) {
  auto column = [](int64_t lane) { return std::make_pair(lane, int64_t(0)); };
  TileAccess read{column, 2};
  EXPECT_EQ(conflictDegree(gfx906(), read, 128, 2), 32);
  EXPECT_EQ(conflictDegree(gfx906(), read, 128 + 2, 2), 1);
  EXPECT_EQ(choosePadding(gfx906(), {read}, 128, 2, /*align=*/2, 16), 2);
  EXPECT_EQ(conflictDegree(sm90(), read, 128, 2), 32);
}

// A row read with 16 bytes per lane (b128): 8 lanes cover one 128-byte
// row segment, conflict-free without padding, and padding must keep the
// 16-byte alignment (8 halves).
TEST(BankConflicts, RowContiguousB128IsConflictFree) {
  auto rows = [](int64_t lane) {
    return std::make_pair(lane / 8, (lane % 8) * 8);
  };
  TileAccess read{rows, 16};
  EXPECT_EQ(conflictDegree(gfx906(), read, 64, 2), 1);
  EXPECT_EQ(choosePadding(gfx906(), {read}, 64, 2, /*align=*/8, 32), 0);
}

// A K-tile read by 16 rows of lanes at once (lane l reads row l % 16,
// columns in 4-byte pairs): the Q·K^T operand pattern of a 16x16 thread
// grid; the padding search finds the dword that removes the conflicts.
TEST(BankConflicts, PaddingFoundForRowStridedPairs) {
  auto pairs = [](int64_t lane) {
    return std::make_pair(lane % 16, (lane / 16) * 2);
  };
  TileAccess read{pairs, 4};
  int64_t unpadded = conflictDegree(gfx906(), read, 64, 2);
  EXPECT_GT(unpadded, 1);
  int64_t pad = choosePadding(gfx906(), {read}, 64, 2, /*align=*/2, 16);
  EXPECT_GT(pad, 0);
  EXPECT_EQ(conflictDegree(gfx906(), read, 64 + pad, 2), 1);
}

TEST(BankConflicts, InactiveLanesDoNotCount) {
  std::vector<int64_t> addresses(64, -1);
  addresses[0] = 0;
  addresses[1] = 128; // same bank, another dword
  EXPECT_EQ(conflictDegree(gfx906(), addresses, 4), 2);
}
