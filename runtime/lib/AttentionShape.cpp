//===- AttentionShape.cpp - Sizes and strides of one attention ------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the contiguous BHLD stride rule and shape printing.
//
//===----------------------------------------------------------------------===//

#include "fa/AttentionShape.h"

using namespace fa;

std::string AttentionShape::toString() const {
  return "B=" + std::to_string(batch) + " Hq=" + std::to_string(headsQ) +
         " Hkv=" + std::to_string(headsKv) + " Lq=" + std::to_string(seqQ) +
         " Lk=" + std::to_string(seqK);
}

AttentionStrides AttentionStrides::contiguous(const AttentionShape &shape,
                                              int64_t headDim) {
  return strided(shape, headDim, TensorLayout::Bhld, 0);
}

AttentionStrides AttentionStrides::strided(const AttentionShape &shape,
                                           int64_t headDim, TensorLayout layout,
                                           int64_t rowPad) {
  AttentionStrides s;
  const int64_t rowLen = headDim + rowPad;
  auto make = [&](int64_t heads, int64_t rows) {
    TensorStrides t;
    if (layout == TensorLayout::Bhld) {
      t.row = rowLen;
      t.head = rows * rowLen;
    } else {
      t.head = rowLen;
      t.row = heads * rowLen;
    }
    t.batch = heads * rows * rowLen;
    return t;
  };
  s.q = make(shape.headsQ, shape.seqQ);
  s.o = s.q;
  s.k = make(shape.headsKv, shape.seqK);
  s.v = s.k;
  s.lseHead = shape.seqQ;
  s.lseBatch = shape.headsQ * shape.seqQ;
  return s;
}
