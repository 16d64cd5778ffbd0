//===- AttentionShape.cpp - Sizes and strides of one attention ------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the layout-to-stride rules (overflow-checked) and
// shape printing.
//
//===----------------------------------------------------------------------===//

#include "fa/AttentionShape.h"

#include <algorithm>

using namespace fa;

std::string AttentionShape::toString() const {
  return "B=" + std::to_string(batch) + " Hq=" + std::to_string(headsQ) +
         " Hkv=" + std::to_string(headsKv) + " Lq=" + std::to_string(seqQ) +
         " Lk=" + std::to_string(seqK);
}

const char *fa::tensorLayoutName(TensorLayout layout) {
  return layout == TensorLayout::Bhld ? "bhld" : "blhd";
}

std::optional<TensorLayout> fa::parseTensorLayout(std::string_view name) {
  if (name == "bhld")
    return TensorLayout::Bhld;
  if (name == "blhd")
    return TensorLayout::Blhd;
  return std::nullopt;
}

/// The value, or INT64_MAX when it overflowed.
static int64_t saturate(std::optional<int64_t> v) { return v ? *v : INT64_MAX; }

TensorStrides TensorPlacement::strides(int64_t heads, int64_t rows,
                                       int64_t headDim) const {
  const int64_t rowLen = saturate(checkedAdd(headDim, rowPad));
  TensorStrides t;
  if (order == TensorLayout::Bhld) {
    t.row = rowLen;
    t.head = saturate(checkedMul(rows, rowLen));
  } else {
    t.head = rowLen;
    t.row = saturate(checkedMul(heads, rowLen));
  }
  t.batch = saturate(checkedProduct({heads, rows, rowLen}));
  return t;
}

std::optional<int64_t> fa::tensorSpan(int64_t batch, int64_t heads,
                                      int64_t rows, int64_t headDim,
                                      const TensorStrides &strides) {
  if (batch < 1 || heads < 1 || rows < 1 || headDim < 1)
    return std::nullopt;
  std::optional<int64_t> b = checkedMul(batch - 1, strides.batch);
  std::optional<int64_t> h = checkedMul(heads - 1, strides.head);
  std::optional<int64_t> r = checkedMul(rows - 1, strides.row);
  std::optional<int64_t> all = checkedMul(batch, strides.batch);
  if (!b || !h || !r || !all)
    return std::nullopt;
  std::optional<int64_t> last = checkedSum({*b, *h, *r, headDim});
  if (!last)
    return std::nullopt;
  return std::max(*last, *all);
}

AttentionLayout AttentionLayout::uniform(TensorLayout order, int64_t rowPad) {
  AttentionLayout l;
  l.q = l.k = l.v = l.o = {order, rowPad};
  return l;
}

AttentionLayout AttentionLayout::distinct() {
  AttentionLayout l;
  l.q = {TensorLayout::Bhld, 1};
  l.k = {TensorLayout::Blhd, 2};
  l.v = {TensorLayout::Bhld, 3};
  l.o = {TensorLayout::Blhd, 5};
  l.lsePad = 7;
  return l;
}

TensorPlacement *AttentionLayout::find(std::string_view tensor) {
  if (tensor == "q")
    return &q;
  if (tensor == "k")
    return &k;
  if (tensor == "v")
    return &v;
  if (tensor == "o")
    return &o;
  return nullptr;
}

std::string AttentionLayout::toString() const {
  auto one = [](const char *name, const TensorPlacement &p) {
    return std::string(name) + "=" + tensorLayoutName(p.order) + "+" +
           std::to_string(p.rowPad);
  };
  return one("q", q) + " " + one("k", k) + " " + one("v", v) + " " +
         one("o", o) + " lse+" + std::to_string(lsePad);
}

AttentionStrides AttentionStrides::contiguous(const AttentionShape &shape,
                                              int64_t headDim) {
  return strided(shape, headDim, TensorLayout::Bhld, 0);
}

AttentionStrides AttentionStrides::strided(const AttentionShape &shape,
                                           int64_t headDim, TensorLayout layout,
                                           int64_t rowPad) {
  return fromLayout(shape, headDim, AttentionLayout::uniform(layout, rowPad));
}

AttentionStrides AttentionStrides::fromLayout(const AttentionShape &shape,
                                              int64_t headDim,
                                              const AttentionLayout &layout) {
  AttentionStrides s;
  s.q = layout.q.strides(shape.headsQ, shape.seqQ, headDim);
  s.k = layout.k.strides(shape.headsKv, shape.seqK, headDim);
  s.v = layout.v.strides(shape.headsKv, shape.seqK, headDim);
  s.o = layout.o.strides(shape.headsQ, shape.seqQ, headDim);
  s.lseHead = saturate(checkedAdd(shape.seqQ, layout.lsePad));
  s.lseBatch = saturate(checkedMul(shape.headsQ, s.lseHead));
  return s;
}
