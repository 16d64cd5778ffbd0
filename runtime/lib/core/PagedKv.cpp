//===- PagedKv.cpp - Metadata checks of paged K/V launches ----------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the host-side checks of a paged K/V cache's
// metadata (ABI version 3, KernelAbi.h): the block table and the sequence
// lengths a kernel reads from device memory without bounds checks, as
// FlashAttention's do. Kernel::launch runs them on the host copies before
// every paged launch; fa::validate's checkPagedProblem runs them too, so the
// two share every message.
//
//===----------------------------------------------------------------------===//

#include "fa/AttentionShape.h"
#include "fa/Module.h"

#include <string>

using namespace fa;

static std::string str(int64_t v) { return std::to_string(v); }

static Status invalid(std::string message) {
  return Status::error(ErrorCode::InvalidArgument, std::move(message));
}

Status fa::checkPagedKvMetadata(int64_t batch, int64_t pageSize,
                                int64_t maxPages, int64_t numPages,
                                Int32Span blockTable, Int32Span cacheSeqlens,
                                bool checkEntries) {
  if (pageSize < 1)
    return invalid("page_size = " + str(pageSize) + " must be at least 1");
  if (maxPages < 1)
    return invalid("max_pages = " + str(maxPages) +
                   " must be at least 1 (block_table's columns)");
  if (numPages < 1)
    return invalid("num_pages = " + str(numPages) +
                   " must be at least 1 (the pages of the K and V caches)");
  std::optional<int64_t> entries = checkedMul(batch, maxPages);
  if (batch < 1 || !entries)
    return invalid("block_table of B * max_pages = " + str(batch) + " * " +
                   str(maxPages) + " entries is not a table");
  if (!checkEntries)
    return Status::success();
  if (blockTable.size != uint64_t(*entries))
    return invalid("block_table has " + str(int64_t(blockTable.size)) +
                   " entries, B * max_pages = " + str(*entries));
  if (cacheSeqlens.size != uint64_t(batch))
    return invalid("cache_seqlens has " + str(int64_t(cacheSeqlens.size)) +
                   " entries, B = " + str(batch));
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t length = cacheSeqlens[size_t(b)];
    const std::string entry = "cache_seqlens[" + str(b) + "] = " + str(length);
    if (length < 0)
      return invalid(entry + " is negative");
    const int64_t pages = length / pageSize + (length % pageSize != 0);
    if (pages > maxPages)
      return invalid(entry + " needs " + str(pages) + " pages of " +
                     str(pageSize) + ", block_table has " + str(maxPages) +
                     " per sequence");
    for (int64_t j = 0; j < pages; ++j) {
      const int64_t page = blockTable[size_t(b * maxPages + j)];
      if (page < 0 || page >= numPages)
        return invalid("block_table[" + str(b) + "][" + str(j) +
                       "] = " + str(page) + " is out of range: the cache has " +
                       str(numPages) + " pages");
    }
  }
  return Status::success();
}

TensorStrides fa::pagedCacheStrides(int64_t pageSize, int64_t headsKv,
                                    int64_t headDim) {
  auto mul = [](int64_t a, int64_t b) {
    std::optional<int64_t> r = checkedMul(a, b);
    return r ? *r : INT64_MAX; // refused by the buffer size check
  };
  const int64_t row = mul(headsKv, headDim);
  return TensorStrides{mul(pageSize, row), headDim, row};
}
