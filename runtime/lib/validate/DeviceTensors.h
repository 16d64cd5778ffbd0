//===- DeviceTensors.h - A problem's tensors on the device ------*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// Internal to fa::validate (Validate.cpp). The device buffers of one
// validated problem: Q, K, V, O and LSE placed in their layouts (each with
// its own strides and row padding), the outputs filled with NaN bytes so
// that an element the kernel does not write fails and padding it writes is
// seen, and for a paged kernel the K and V caches [num_pages, page_size,
// Hkv, D] with the block table and the sequence lengths, and for a varlen
// kernel Q, O packed [total_q, Hq, D], K, V [total_k, Hkv, D], LSE [Hq,
// total_q] with cu_seqlens_q and cu_seqlens_k, and for a mixed kernel both:
// Q, O and LSE packed with cu_seqlens_q, K and V the caches with the block
// table and the sequence lengths.
//
//===----------------------------------------------------------------------===//

#ifndef FA_LIB_VALIDATE_DEVICETENSORS_H
#define FA_LIB_VALIDATE_DEVICETENSORS_H

#include "fa/Half.h"
#include "fa/Module.h"
#include "fa/PagedVarlen.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <vector>

namespace fa {
namespace detail {

/// Moves a contiguous tensor to and from a strided device layout (strides
/// batch, head, row, 1). The contiguous order is [batch, heads, rows, d],
/// or with `rowsOutside` [batch, rows, heads, d] (a paged cache: [num_pages,
/// page_size, Hkv, D], batch being the page).
struct Placement {
  int64_t batch = 0, heads = 0, rows = 0, d = 0;
  TensorStrides strides;
  size_t elem = 0;
  bool rowsOutside = false;

  /// Elements of the device buffer: batch x the batch stride (so padding
  /// after the last row is there too), at least one past the last element;
  /// nothing when that overflows.
  std::optional<int64_t> span() const {
    if (rows == 0 || d == 0) // a varlen tensor of no rows
      return int64_t(0);
    return tensorSpan(batch, heads, rows, d, strides);
  }
  /// Bytes of the device buffer; only for a placement whose span() and its
  /// byte size fit (validationMemory checked them).
  size_t deviceBytes() const { return size_t(*span()) * elem; }
  template <typename F> void forEachRow(F f) const {
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t l = 0; l < rows; ++l)
          f((rowsOutside ? (b * rows + l) * heads + h
                         : (b * heads + h) * rows + l) *
                d,
            b * strides.batch + h * strides.head + l * strides.row);
  }
  /// The device bytes; what no element covers is `fill`.
  std::vector<uint8_t> scatter(const std::vector<uint8_t> &dense,
                               uint8_t fill = 0) const {
    std::vector<uint8_t> out(deviceBytes(), fill);
    forEachRow([&](int64_t from, int64_t to) {
      std::memcpy(&out[to * elem], &dense[from * elem], d * elem);
    });
    return out;
  }
  std::vector<uint8_t> gather(const std::vector<uint8_t> &strided) const {
    std::vector<uint8_t> out(size_t(batch * heads * rows * d) * elem);
    forEachRow([&](int64_t to, int64_t from) {
      std::memcpy(&out[to * elem], &strided[from * elem], d * elem);
    });
    return out;
  }
  /// Elements of `strided` outside the tensor that are no longer all `fill`
  /// bytes.
  size_t countChangedPadding(const std::vector<uint8_t> &strided,
                             uint8_t fill) const {
    std::vector<bool> covered(strided.size() / elem, false);
    forEachRow([&](int64_t, int64_t at) {
      for (int64_t c = 0; c < d; ++c)
        covered[size_t(at + c)] = true;
    });
    size_t changed = 0;
    for (size_t i = 0; i < covered.size(); ++i) {
      if (covered[i])
        continue;
      for (size_t byte = 0; byte < elem; ++byte)
        if (strided[i * elem + byte] != fill) {
          ++changed;
          break;
        }
    }
    return changed;
  }
};

/// What the output buffers hold before the launch: all-ones bytes, a NaN in
/// f32, f16 and bf16, so an element the kernel does not write fails, and
/// padding it writes is seen.
constexpr uint8_t outputFill = 0xff;

/// The strides of a paged cache laid out as [num_pages, page_size, Hkv,
/// D + rowPad]: (page, head, row within a page). Saturates like
/// TensorPlacement::strides.
inline TensorStrides cacheStrides(const PagedProblem &p, int64_t rowPad) {
  auto mul = [](int64_t a, int64_t b) {
    std::optional<int64_t> r = checkedMul(a, b);
    return r ? *r : INT64_MAX;
  };
  std::optional<int64_t> padded = checkedAdd(p.headDim, rowPad);
  const int64_t head = padded ? *padded : INT64_MAX;
  const int64_t row = mul(p.headsKv, head);
  return TensorStrides{mul(p.pageSize, row), head, row};
}

/// Device buffers for one problem, filled from `data`.
struct DeviceTensors {
  std::optional<Buffer> q, k, v, o, lse, blockTable, cacheSeqlens, cuSeqlensQ,
      cuSeqlensK, alibiSlopes, sinks;
  AttentionStrides strides;
  Placement qPlace, kPlace, vPlace, oPlace, lsePlace;
  /// A paged problem: K and V are its caches (its data's k and v).
  const PagedProblem *paged = nullptr;
  /// A varlen problem: the tensors are packed (its data's layout).
  const VarlenProblem *varlen = nullptr;
  /// A mixed problem: Q, O and LSE packed, K and V its caches (`paged`
  /// points at them).
  const MixedProblem *mixed = nullptr;

  /// The strides and placements of `p`'s tensors in `layout`; with `paged`,
  /// K and V are its caches, [num_pages, page_size, Hkv, D] with the row
  /// padding of `layout` (whose K and V orders do not apply).
  void place(const AttentionProblem &p, DType dtype,
             const AttentionLayout &layout,
             const PagedProblem *pagedProblem = nullptr,
             const VarlenProblem *varlenProblem = nullptr,
             const MixedProblem *mixedProblem = nullptr) {
    const AttentionShape &sh = p.shape;
    size_t elem = dtypeBytes(dtype);
    mixed = mixedProblem;
    paged = mixed ? &mixed->cache : pagedProblem;
    varlen = varlenProblem;
    // K and V as the paged caches [num_pages, page_size, Hkv, D].
    auto placeCaches = [&] {
      strides.k = cacheStrides(*paged, layout.k.rowPad);
      strides.v = cacheStrides(*paged, layout.v.rowPad);
      kPlace = {paged->numPages, sh.headsKv, paged->pageSize, p.headDim,
                strides.k,       elem,       true};
      vPlace = {paged->numPages, sh.headsKv, paged->pageSize, p.headDim,
                strides.v,       elem,       true};
    };
    if (varlen || mixed) {
      placePacked(p, elem, layout);
      if (mixed) {
        placeCaches();
      }
      return;
    }
    strides = AttentionStrides::fromLayout(sh, p.headDim, layout);
    qPlace = {sh.batch, sh.headsQ, sh.seqQ, p.headDim, strides.q, elem};
    kPlace = {sh.batch, sh.headsKv, sh.seqK, p.headDim, strides.k, elem};
    vPlace = {sh.batch, sh.headsKv, sh.seqK, p.headDim, strides.v, elem};
    if (paged) {
      placeCaches();
    }
    oPlace = {sh.batch, sh.headsQ, sh.seqQ, p.headDim, strides.o, elem};
    // LSE as a [B, Hq, 1, Lq] tensor: one "row" of Lq values per head.
    lsePlace = {sh.batch,
                sh.headsQ,
                1,
                sh.seqQ,
                {strides.lseBatch, strides.lseHead, 0},
                sizeof(float)};
  }

  /// A varlen problem's packed tensors: [total, H, D + rowPad] rows (batch
  /// stride 0; the orders of `layout` do not apply), LSE [Hq, total_q +
  /// lsePad].
  void placePacked(const AttentionProblem &p, size_t elem,
                   const AttentionLayout &layout) {
    const AttentionShape &sh = p.shape;
    auto packed = [&](int64_t heads, int64_t rowPad) {
      auto mul = [](int64_t a, int64_t b) {
        std::optional<int64_t> r = checkedMul(a, b);
        return r ? *r : INT64_MAX;
      };
      std::optional<int64_t> padded = checkedAdd(p.headDim, rowPad);
      const int64_t head = padded ? *padded : INT64_MAX;
      return TensorStrides{0, head, mul(heads, head)};
    };
    strides.q = packed(sh.headsQ, layout.q.rowPad);
    strides.k = packed(sh.headsKv, layout.k.rowPad);
    strides.v = packed(sh.headsKv, layout.v.rowPad);
    strides.o = packed(sh.headsQ, layout.o.rowPad);
    const int64_t tq = mixed ? mixed->totalQ : varlen->totalQ,
                  tk = mixed ? 0 : varlen->totalK;
    std::optional<int64_t> lseHead = checkedAdd(tq, layout.lsePad);
    strides.lseBatch = 0;
    strides.lseHead = lseHead ? *lseHead : INT64_MAX;
    qPlace = {1, sh.headsQ, tq, p.headDim, strides.q, elem, true};
    kPlace = {1, sh.headsKv, tk, p.headDim, strides.k, elem, true};
    vPlace = {1, sh.headsKv, tk, p.headDim, strides.v, elem, true};
    oPlace = {1, sh.headsQ, tq, p.headDim, strides.o, elem, true};
    lsePlace = {1, sh.headsQ, 1, tq, {0, strides.lseHead, 0}, sizeof(float)};
  }

  /// Allocates and fills the buffers; call place() and check
  /// validationMemory first.
  Status create(const Device &device, const KernelInfo &kernel,
                const AttentionProblem &p, const AttentionData &data,
                const AttentionLayout &layout,
                const PagedProblem *pagedProblem = nullptr,
                const VarlenProblem *varlenProblem = nullptr,
                const MixedProblem *mixedProblem = nullptr) {
    place(p, kernel.dtype, layout, pagedProblem, varlenProblem, mixedProblem);
    auto upload = [&](std::optional<Buffer> &slot, const void *bytes,
                      size_t size) -> Status {
      // Guard zones on every device: a write past either end of a tensor
      // is an error naming it (Kernel::launch checks them).
      Expected<Buffer> b = device.allocate(std::max<size_t>(size, 1),
                                           Buffer::kDefaultGuardBytes);
      if (!b)
        return b.takeStatus();
      slot.emplace(b.take());
      return slot->copyFromHost(bytes, size);
    };
    auto input = [&](std::optional<Buffer> &slot,
                     const std::vector<float> &values,
                     const Placement &place) -> Status {
      std::vector<uint8_t> bytes =
          place.scatter(encodeElements(kernel.dtype, values));
      return upload(slot, bytes.data(), bytes.size());
    };
    auto output = [&](std::optional<Buffer> &slot,
                      const Placement &place) -> Status {
      std::vector<uint8_t> bytes(place.deviceBytes(), outputFill);
      return upload(slot, bytes.data(), bytes.size());
    };
    Status s;
    if (!(s = input(q, data.q, qPlace)).ok() ||
        !(s = input(k, data.k, kPlace)).ok() ||
        !(s = input(v, data.v, vPlace)).ok() || !(s = output(o, oPlace)).ok())
      return s;
    if (paged) {
      const std::vector<int32_t> &table = paged->blockTable,
                                 &lengths = paged->cacheSeqlens;
      if (!(s = upload(blockTable, table.data(), table.size() * 4)).ok() ||
          !(s = upload(cacheSeqlens, lengths.data(), lengths.size() * 4)).ok())
        return s;
    }
    if (varlen) {
      const std::vector<int32_t> &cuQ = varlen->cuSeqlensQ,
                                 &cuK = varlen->cuSeqlensK;
      if (!(s = upload(cuSeqlensQ, cuQ.data(), cuQ.size() * 4)).ok() ||
          !(s = upload(cuSeqlensK, cuK.data(), cuK.size() * 4)).ok())
        return s;
    }
    if (mixed) {
      const std::vector<int32_t> &cuQ = mixed->cuSeqlensQ;
      if (!(s = upload(cuSeqlensQ, cuQ.data(), cuQ.size() * 4)).ok())
        return s;
    }
    // The head parameters, f32 [Hq], as the problem has them (the kernel
    // must take exactly those: packAttentionArgs checks).
    if (!p.alibiSlopes.empty() &&
        !(s = upload(alibiSlopes, p.alibiSlopes.data(),
                     p.alibiSlopes.size() * sizeof(float)))
             .ok())
      return s;
    if (!p.sinks.empty() &&
        !(s = upload(sinks, p.sinks.data(), p.sinks.size() * sizeof(float)))
             .ok())
      return s;
    if (kernel.hasLse)
      return output(lse, lsePlace);
    return Status::success();
  }

  /// The launch's arguments; a paged or mixed launch's Lk is its longest
  /// sequence.
  AttentionArgs args(const AttentionShape &shape) {
    AttentionArgs a;
    a.q = &*q;
    a.k = &*k;
    a.v = &*v;
    a.o = &*o;
    a.lse = lse ? &*lse : nullptr;
    a.shape = shape;
    a.strides = strides;
    a.alibiSlopes = alibiSlopes ? &*alibiSlopes : nullptr;
    a.sinks = sinks ? &*sinks : nullptr;
    if (paged) {
      PagedKvArgs pg;
      pg.blockTable = &*blockTable;
      pg.cacheSeqlens = &*cacheSeqlens;
      pg.pageSize = paged->pageSize;
      pg.maxPages = paged->maxPages;
      pg.numPages = paged->numPages;
      pg.hostBlockTable = paged->blockTable;
      pg.hostCacheSeqlens = paged->cacheSeqlens;
      a.paged = pg;
      a.shape.seqK = longestSequence(*paged);
    }
    if (varlen) {
      VarlenArgs vl;
      vl.cuSeqlensQ = &*cuSeqlensQ;
      vl.cuSeqlensK = &*cuSeqlensK;
      vl.totalQ = varlen->totalQ;
      vl.totalK = varlen->totalK;
      vl.hostCuSeqlensQ = varlen->cuSeqlensQ;
      vl.hostCuSeqlensK = varlen->cuSeqlensK;
      a.varlen = vl;
      a.shape.seqQ = varlen->maxSeqlenQ;
      a.shape.seqK = varlen->maxSeqlenK;
    }
    // A mixed batch: the cache's arguments above, and cu_seqlens_q (no
    // cu_seqlens_k); Lq is max_seqlen_q.
    if (mixed) {
      VarlenArgs vl;
      vl.cuSeqlensQ = &*cuSeqlensQ;
      vl.totalQ = mixed->totalQ;
      vl.hostCuSeqlensQ = mixed->cuSeqlensQ;
      a.varlen = vl;
      a.shape.seqQ = mixed->cache.seqQ;
    }
    return a;
  }

  /// max(cache_seqlens): the Lk of a paged launch.
  static int64_t longestSequence(const PagedProblem &p) {
    int64_t longest = 0;
    for (int32_t length : p.cacheSeqlens)
      longest = std::max<int64_t>(longest, length);
    return longest;
  }

  /// Reads `buffer` back through `place`: the tensor in contiguous order,
  /// and how many padding elements changed.
  static Status read(const Buffer &buffer, const Placement &place,
                     std::vector<uint8_t> &dense, size_t &paddingWrites) {
    std::vector<uint8_t> bytes(buffer.size());
    if (Status s = buffer.copyToHost(bytes.data(), bytes.size()); !s.ok())
      return s;
    dense = place.gather(bytes);
    paddingWrites = place.countChangedPadding(bytes, outputFill);
    return Status::success();
  }
};

} // namespace detail
} // namespace fa

#endif // FA_LIB_VALIDATE_DEVICETENSORS_H
