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
  AttentionStrides s;
  auto bhld = [&](int64_t heads, int64_t rows) {
    TensorStrides t;
    t.row = headDim;
    t.head = rows * headDim;
    t.batch = heads * rows * headDim;
    return t;
  };
  s.q = bhld(shape.headsQ, shape.seqQ);
  s.o = s.q;
  s.k = bhld(shape.headsKv, shape.seqK);
  s.v = s.k;
  s.lseHead = shape.seqQ;
  s.lseBatch = shape.headsQ * shape.seqQ;
  return s;
}
