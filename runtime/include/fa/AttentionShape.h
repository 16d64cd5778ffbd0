//===- AttentionShape.h - Sizes and strides of one attention ----*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The dynamic sizes (B, Hq, Hkv, Lq, Lk) and element strides of one attention
// call, as the kernel ABI (KernelAbi.h) passes them. Q and O are [B,Hq,Lq,D],
// K and V are [B,Hkv,Lk,D], LSE is [B,Hq,Lq]; the innermost stride is 1.
//
//===----------------------------------------------------------------------===//

#ifndef FA_ATTENTIONSHAPE_H
#define FA_ATTENTIONSHAPE_H

#include <cstdint>
#include <string>

namespace fa {

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
};

/// The 14 strides of the ABI, in its order.
/// Order of the [B, H, L, D] dimensions in memory, outermost first.
enum class TensorLayout { Bhld, Blhd };

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
};

} // namespace fa

#endif // FA_ATTENTIONSHAPE_H
