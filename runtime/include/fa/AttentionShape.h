//===- AttentionShape.h - Sizes and strides of one attention ----*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The dynamic sizes (B, Hq, Hkv, Lq, Lk) and element strides of one attention
// call, as the kernel ABI (KernelAbi.h) passes them. Q and O are [B,Hq,Lq,D],
// K and V are [B,Hkv,Lk,D], LSE is [B,Hq,Lq]; the innermost stride is 1.
// Every tensor has its own strides: AttentionLayout describes a memory layout
// per tensor (dimension order and row padding) and turns it into strides.
// Sizes and strides come from users and files, so every product and sum of
// them here is overflow-checked (checkedMul / checkedAdd): a shape whose
// sizes do not fit in int64 is refused, never wrapped around.
//
// Library: fa::runtime (libfa_runtime.so).
//
//===----------------------------------------------------------------------===//

#ifndef FA_ATTENTIONSHAPE_H
#define FA_ATTENTIONSHAPE_H

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace fa {

/// a * b, or nothing when the product does not fit in int64.
inline std::optional<int64_t> checkedMul(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// a + b, or nothing when the sum does not fit in int64.
inline std::optional<int64_t> checkedAdd(int64_t a, int64_t b) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r))
    return std::nullopt;
  return r;
}

/// The product of `factors`, or nothing when it (or a partial product)
/// does not fit in int64.
inline std::optional<int64_t>
checkedProduct(std::initializer_list<int64_t> factors) {
  int64_t r = 1;
  for (int64_t f : factors)
    if (__builtin_mul_overflow(r, f, &r))
      return std::nullopt;
  return r;
}

/// The sum of `terms`, or nothing when a partial sum does not fit in int64.
inline std::optional<int64_t> checkedSum(std::initializer_list<int64_t> terms) {
  int64_t r = 0;
  for (int64_t t : terms)
    if (__builtin_add_overflow(r, t, &r))
      return std::nullopt;
  return r;
}

struct AttentionShape {
  int64_t batch = 1;
  int64_t headsQ = 1;
  int64_t headsKv = 1;
  int64_t seqQ = 1;
  int64_t seqK = 1;

  /// "B=1 Hq=8 Hkv=2 Lq=77 Lk=203".
  std::string toString() const;
};

/// Element strides of a [B, H, L, D] tensor (the D stride is 1).
struct TensorStrides {
  int64_t batch = 0;
  int64_t head = 0;
  int64_t row = 0;

  bool operator==(const TensorStrides &o) const {
    return batch == o.batch && head == o.head && row == o.row;
  }
  bool operator!=(const TensorStrides &o) const { return !(*this == o); }
};

/// Order of the [B, H, L, D] dimensions in memory, outermost first.
enum class TensorLayout { Bhld, Blhd };

/// "bhld" or "blhd".
const char *tensorLayoutName(TensorLayout layout);
std::optional<TensorLayout> parseTensorLayout(std::string_view name);

/// Memory layout of one [B, H, L, D] tensor: its dimension order, and
/// `rowPad` unused elements after each row of D elements.
struct TensorPlacement {
  TensorLayout order = TensorLayout::Bhld;
  int64_t rowPad = 0;

  /// Strides of a [*, heads, rows, headDim] tensor laid out this way. A
  /// stride that overflows int64 is INT64_MAX (no buffer is that large, so
  /// a launch with it is refused); tensorSpan says so without a launch.
  TensorStrides strides(int64_t heads, int64_t rows, int64_t headDim) const;
};

/// Elements a [batch, heads, rows, headDim] tensor with `strides` (innermost
/// stride 1) spans: one past its last element, and at least batch x the
/// batch stride (so padding after the last row counts). Nothing when that
/// overflows int64 or a size is below 1.
std::optional<int64_t> tensorSpan(int64_t batch, int64_t heads, int64_t rows,
                                  int64_t headDim,
                                  const TensorStrides &strides);

/// Memory layouts of all five tensors of one attention call. LSE is always
/// [B, Hq, Lq] with unit stride along Lq; `lsePad` unused elements follow
/// each (batch, head) row of Lq values: head stride Lq + lsePad, batch stride
/// Hq * (Lq + lsePad).
struct AttentionLayout {
  TensorPlacement q, k, v, o;
  int64_t lsePad = 0;

  /// Q, K, V and O all in `order` with `rowPad`; LSE contiguous.
  static AttentionLayout uniform(TensorLayout order, int64_t rowPad);
  /// The layout of `fa-run --distinct-strides`: every tensor's strides differ
  /// from every other's for all shapes, so a kernel that uses one tensor's
  /// strides for another fails:
  ///   Q bhld, row pad 1;  K blhd, row pad 2;  V bhld, row pad 3;
  ///   O blhd, row pad 5;  LSE pad 7.
  static AttentionLayout distinct();

  /// The placement of "q", "k", "v" or "o"; null for any other name.
  TensorPlacement *find(std::string_view tensor);

  /// "q=bhld+1 k=blhd+2 v=bhld+3 o=blhd+5 lse+7" (+N: row padding).
  std::string toString() const;
};

/// The 14 strides of the ABI, in its order.
struct AttentionStrides {
  TensorStrides q, k, v, o;
  int64_t lseBatch = 0;
  int64_t lseHead = 0;

  /// Contiguous BHLD tensors of head dimension `headDim`.
  static AttentionStrides contiguous(const AttentionShape &shape,
                                     int64_t headDim);
  /// Q, K, V and O in `layout` with rows of headDim + rowPad elements; LSE
  /// contiguous.
  static AttentionStrides strided(const AttentionShape &shape, int64_t headDim,
                                  TensorLayout layout, int64_t rowPad);
  /// Each tensor laid out as `layout` says.
  static AttentionStrides fromLayout(const AttentionShape &shape,
                                     int64_t headDim,
                                     const AttentionLayout &layout);
};

} // namespace fa

#endif // FA_ATTENTIONSHAPE_H
