//===- Varlen.cpp - Metadata checks of variable-length launches -----------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the host-side checks of a variable-length batch's
// metadata (ABI version 4, KernelAbi.h): cu_seqlens_q and cu_seqlens_k,
// which a kernel reads from device memory without bounds checks, as
// FlashAttention's do. Kernel::launch runs them on the host copies before
// every varlen launch; fa::validate's checkVarlenProblem runs them too, so
// the two share every message. A mixed batch (paged and varlen together)
// has cu_seqlens_q only: checkMixedMetadata.
//
//===----------------------------------------------------------------------===//

#include "fa/AttentionShape.h"
#include "fa/Module.h"

#include <cstdint>
#include <string>
#include <utility>

using namespace fa;

static std::string str(int64_t v) { return std::to_string(v); }

static Status invalid(std::string message) {
  return Status::error(ErrorCode::InvalidArgument, std::move(message));
}

/// cu_seqlens_X of B + 1 entries, from 0, non-decreasing, ending at the
/// packed tensors' total, and no length above max_seqlen_X.
static Status checkCuSeqlens(const char *which, Int32Span cu, int64_t batch,
                             int64_t total, int64_t maxSeqlen,
                             const char *rows) {
  const std::string name = std::string("cu_seqlens_") + which;
  auto at = [&](int64_t i) {
    return name + "[" + str(i) + "] = " + str(cu[size_t(i)]);
  };
  if (int64_t(cu.size) != batch + 1)
    return invalid(name + " has " + str(int64_t(cu.size)) +
                   " entries, B + 1 = " + str(batch + 1));
  if (!cu.data)
    return invalid(name + " has no host copy");
  if (cu[0] != 0)
    return invalid(name + "[0] must be 0");
  for (int64_t b = 0; b < batch; ++b)
    if (cu[size_t(b + 1)] < cu[size_t(b)])
      return invalid(name + " is not non-decreasing: " + at(b + 1) + " < " +
                     at(b));
  if (cu[size_t(batch)] != total)
    return invalid(at(batch) + " does not match total_" + which + " = " +
                   str(total) + ", the rows of " + rows);
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t length = int64_t(cu[size_t(b + 1)]) - cu[size_t(b)];
    if (length > maxSeqlen)
      return invalid("max_seqlen_" + std::string(which) + " = " +
                     str(maxSeqlen) + " is less than the length of sequence " +
                     str(b) + ": " + name + "[" + str(b + 1) + "] - " + name +
                     "[" + str(b) + "] = " + str(length));
  }
  return Status::success();
}

Status fa::checkVarlenMetadata(int64_t batch, int64_t totalQ, int64_t totalK,
                               int64_t maxSeqlenQ, int64_t maxSeqlenK,
                               Int32Span cuSeqlensQ, Int32Span cuSeqlensK,
                               bool entries) {
  if (batch < 1)
    return invalid("a variable-length batch of B = " + str(batch) +
                   " sequences: B must be at least 1");
  if (batch > INT32_MAX) // cu_seqlens of B + 1 int32 offsets
    return invalid("a variable-length batch of B = " + str(batch) +
                   " sequences: B must be at most 2147483647");
  if (!entries) {
    for (const auto &[name, total] :
         {std::pair<const char *, int64_t>{"total_q", totalQ},
          {"total_k", totalK}})
      if (total < 0)
        return invalid(std::string(name) + " = " + str(total) +
                       " is negative");
    return Status::success();
  }
  if (Status s = checkCuSeqlens("q", cuSeqlensQ, batch, totalQ, maxSeqlenQ,
                                "packed Q");
      !s.ok())
    return s;
  return checkCuSeqlens("k", cuSeqlensK, batch, totalK, maxSeqlenK,
                        "packed K and V");
}

Status fa::checkMixedMetadata(int64_t batch, int64_t totalQ, int64_t maxSeqlenQ,
                              Int32Span cuSeqlensQ, Int32Span cacheSeqlens,
                              bool entries) {
  if (batch < 1 || batch > INT32_MAX)
    return invalid("a mixed batch of B = " + str(batch) +
                   " sequences: B must be in [1, 2147483647]");
  if (!entries) {
    if (totalQ < 0)
      return invalid("total_q = " + str(totalQ) + " is negative");
    return Status::success();
  }
  if (Status s = checkCuSeqlens("q", cuSeqlensQ, batch, totalQ, maxSeqlenQ,
                                "packed Q");
      !s.ok())
    return s;
  // The queries are the last rows of their sequence: never more of them
  // than keys.
  if (int64_t(cacheSeqlens.size) != batch || !cacheSeqlens.data)
    return Status::success();
  for (int64_t b = 0; b < batch; ++b) {
    const int64_t queries =
        int64_t(cuSeqlensQ[size_t(b + 1)]) - cuSeqlensQ[size_t(b)];
    const int64_t keys = cacheSeqlens[size_t(b)];
    if (queries > keys)
      return invalid("sequence " + str(b) + " has " + str(queries) +
                     " queries but only " + str(keys) +
                     " keys: a mixed batch's queries are the last rows of "
                     "their sequence (cu_seqlens_q[" +
                     str(b + 1) + "] - cu_seqlens_q[" + str(b) +
                     "] = " + str(queries) + " > cache_seqlens[" + str(b) +
                     "] = " + str(keys) + ")");
  }
  return Status::success();
}

AttentionStrides fa::varlenStrides(const AttentionShape &sh, int64_t headDim,
                                   int64_t totalQ) {
  auto mul = [](int64_t a, int64_t b) {
    std::optional<int64_t> r = checkedMul(a, b);
    return r ? *r : INT64_MAX; // refused by the buffer size check
  };
  AttentionStrides st;
  st.q = st.o = TensorStrides{0, headDim, mul(sh.headsQ, headDim)};
  st.k = st.v = TensorStrides{0, headDim, mul(sh.headsKv, headDim)};
  st.lseBatch = 0;
  st.lseHead = totalQ;
  return st;
}
