//===- FaOps.cpp - fa dialect operations and verifiers --------------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the verifiers of the fa operations. Each rule has one
// message that names the operand and the numbers involved.
//
//===----------------------------------------------------------------------===//

#include "dialect/FaOps.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "mlir/Interfaces/LoopLikeInterface.h"

#include <cmath>

using namespace mlir;
using namespace mlir::fa;

/// Prints a dimension: the number, or `?` when dynamic.
static std::string dimStr(int64_t d) {
  return ShapedType::isDynamic(d) ? "?" : std::to_string(d);
}

/// True when two dimensions may be equal at run time.
static bool dimsCompatible(int64_t a, int64_t b) {
  return ShapedType::isDynamic(a) || ShapedType::isDynamic(b) || a == b;
}

static bool isSupportedFloat(Type t) {
  return t.isF16() || t.isF32() || t.isBF16();
}

/// Checks that `value` is a rank-`rank` tensor of a supported float type.
static LogicalResult checkOperand(Operation *op, StringRef name, Value value,
                                  int64_t rank) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() != rank)
    return op->emitOpError()
           << name << " must have rank " << rank << ", got " << type.getRank();
  if (!isSupportedFloat(type.getElementType()))
    return op->emitOpError()
           << name << " element type must be f16, f32 or bf16, got "
           << type.getElementType();
  // [B, H, L, D]: a static head count or head dimension of 0 has no
  // attention to compute (and would divide by zero below).
  ArrayRef<int64_t> shape = type.getShape();
  for (int64_t i : {int64_t(1), int64_t(3)})
    if (i < rank && shape[i] == 0)
      return op->emitOpError()
             << name << (i == 1 ? " head count" : " head dimension")
             << " must be positive, got 0";
  return success();
}

//===----------------------------------------------------------------------===//
// AttentionOp
//===----------------------------------------------------------------------===//

int64_t AttentionOp::getHeadDim() {
  return getQuery().getType().getShape().back();
}

float AttentionOp::getEffectiveScale() {
  if (auto scale = getScale())
    return scale->convertToFloat();
  return 1.0f / std::sqrt(static_cast<float>(getHeadDim()));
}

/// The window's sides (each >= -1, not both -1: that is no window) and the
/// softcap (positive and finite), shared by fa.attention and fa.softmax.
static LogicalResult verifyMaskOptions(Operation *op,
                                       std::optional<int64_t> left,
                                       std::optional<int64_t> right,
                                       std::optional<APFloat> softcap) {
  if (left.has_value() != right.has_value())
    return op->emitOpError() << "window takes both sides";
  if (left && (*left < -1 || *right < -1))
    return op->emitOpError()
           << "window sides must be -1 (unbounded) or >= 0, got window("
           << *left << ", " << *right << ")";
  if (left && *left == -1 && *right == -1)
    return op->emitOpError() << "window(-1, -1) is no window: leave it out";
  if (softcap) {
    float c = softcap->convertToFloat();
    if (!(c > 0.0f) || !std::isfinite(c))
      return op->emitOpError()
             << "softcap must be positive and finite, got " << c;
  }
  return success();
}

/// ALiBi slopes and sinks: each a [Hq] f32 vector (`qHeads` the query's
/// head count, dynamic or not).
static LogicalResult verifyHeadParams(AttentionOp op, int64_t qHeads) {
  for (auto [name, value] :
       {std::pair<StringRef, Value>{"alibi slopes", op.getAlibiSlopes()},
        {"sinks", op.getSinks()}}) {
    if (!value)
      continue;
    auto t = cast<RankedTensorType>(value.getType());
    if (t.getRank() != 1 || !t.getElementType().isF32() ||
        !dimsCompatible(t.getShape()[0], qHeads))
      return op.emitOpError()
             << name << " must be tensor<" << dimStr(qHeads)
             << "xf32> (one f32 per query head), got " << t;
  }
  return success();
}

/// A paged cache: the block table [B, max_pages] and key lengths [B] i32
/// (B: `batch`, the query's or, in a mixed batch, cu_seqlens_q's B + 1,
/// named by `batchFrom`), K and V [num_pages, page_size, Hkv, D].
static LogicalResult verifyPagedCache(AttentionOp op, int64_t batch,
                                      StringRef batchFrom) {
  auto table = cast<RankedTensorType>(op.getBlockTable().getType());
  auto lens = cast<RankedTensorType>(op.getCacheSeqlens().getType());
  if (table.getRank() != 2 || !table.getElementType().isInteger(32))
    return op.emitOpError() << "block table must be [B, max_pages] i32, got "
                            << table;
  if (lens.getRank() != 1 || !lens.getElementType().isInteger(32))
    return op.emitOpError() << "cache lengths must be [B] i32, got " << lens;
  if (!dimsCompatible(batch, table.getShape()[0]) ||
      !dimsCompatible(batch, lens.getShape()[0]))
    return op.emitOpError()
           << "batch mismatch: " << batchFrom << " B=" << dimStr(batch)
           << ", block table B=" << dimStr(table.getShape()[0])
           << ", cache lengths B=" << dimStr(lens.getShape()[0]);
  ArrayRef<int64_t> ks = op.getKey().getType().getShape();
  if (ks[1] == 0)
    return op.emitOpError() << "page size must be positive, got 0";
  if (ks[2] == 0)
    return op.emitOpError() << "key/value head count must be positive, got 0";
  return success();
}

/// The varlen form: packed [total, H, D] queries cut by cu_seqlens_q, and
/// either packed K/V cut by cu_seqlens_k or (with `paged`: a mixed batch)
/// a paged K/V cache whose lengths are the paged operand's.
static LogicalResult verifyVarlen(AttentionOp op) {
  auto q = op.getQuery().getType(), k = op.getKey().getType(),
       v = op.getValue().getType();
  const bool paged = op.isPaged();
  if (static_cast<bool>(op.getBlockTable()) !=
      static_cast<bool>(op.getCacheSeqlens()))
    return op.emitOpError() << "paged takes a block table and cache lengths";
  if (!op.getCuSeqlensQ())
    return op.emitOpError() << "varlen takes cu_seqlens_q";
  if (paged && op.getCuSeqlensK())
    return op.emitOpError()
           << "varlen over a paged cache takes cu_seqlens_q only (the keys "
              "of each sequence are paged's cache lengths)";
  if (!paged && !op.getCuSeqlensK())
    return op.emitOpError() << "varlen takes cu_seqlens_q and cu_seqlens_k";
  // K and V: packed [total_k, Hkv, D], or paged [num_pages, page_size, Hkv,
  // D].
  const int64_t kvRank = paged ? 4 : 3;
  for (auto [name, value, rank] :
       {std::tuple<StringRef, Value, int64_t>{"query", op.getQuery(), 3},
        {"key", op.getKey(), kvRank},
        {"value", op.getValue(), kvRank}})
    if (failed(checkOperand(
            op,
            StringRef(name.str() + (rank == 3 ? " (varlen: [total, H, D])"
                                              : " (varlen over a paged cache: "
                                                "[num_pages, page_size, H, "
                                                "D])")),
            value, rank)))
      return failure();
  if (k.getElementType() != q.getElementType() ||
      v.getElementType() != q.getElementType())
    return op.emitOpError() << "query, key and value must have one element "
                               "type, got "
                            << q.getElementType() << ", " << k.getElementType()
                            << ", " << v.getElementType();
  ArrayRef<int64_t> qs = q.getShape(), ks = k.getShape(), vs = v.getShape();
  const int64_t qd = qs[2], kd = ks.back(), vd = vs.back();
  if (ShapedType::isDynamic(qd) || ShapedType::isDynamic(kd) ||
      ShapedType::isDynamic(vd))
    return op.emitOpError()
           << "head dimension D must be static, got query D=" << dimStr(qd)
           << ", key D=" << dimStr(kd) << ", value D=" << dimStr(vd);
  if (qd == 0)
    return op.emitOpError() << "query head dimension must be positive, got 0";
  if (kd != qd || vd != qd)
    return op.emitOpError() << "head dimension mismatch: query D=" << qd
                            << ", key D=" << kd << ", value D=" << vd;
  for (int i = 0; i + 1 < kvRank; ++i)
    if (!dimsCompatible(ks[i], vs[i]))
      return op.emitOpError() << "key and value shapes differ: key is " << k
                              << ", value is " << v;
  auto cq = cast<RankedTensorType>(op.getCuSeqlensQ().getType());
  auto ck = paged ? RankedTensorType()
                  : cast<RankedTensorType>(op.getCuSeqlensK().getType());
  for (auto [name, t] :
       {std::pair<StringRef, RankedTensorType>{"q", cq}, {"k", ck}})
    if (t && (t.getRank() != 1 || !t.getElementType().isInteger(32)))
      return op.emitOpError()
             << "cu_seqlens_" << name << " must be [B + 1] i32, got " << t;
  if (ck && !dimsCompatible(cq.getShape()[0], ck.getShape()[0]))
    return op.emitOpError()
           << "cu_seqlens_q and cu_seqlens_k must have one length (B + 1), "
              "got "
           << cq.getShape()[0] << " and " << ck.getShape()[0];
  for (auto [name, t] :
       {std::pair<StringRef, RankedTensorType>{"q", cq}, {"k", ck}})
    if (t && t.getShape()[0] == 0)
      return op.emitOpError()
             << "cu_seqlens_" << name << " must have B + 1 >= 1 entries, got 0";
  const int64_t batch = ShapedType::isDynamic(cq.getShape()[0])
                            ? ShapedType::kDynamic
                            : cq.getShape()[0] - 1;
  if (paged && failed(verifyPagedCache(op, batch, "cu_seqlens_q")))
    return failure();
  const int64_t kvHeads = ks[kvRank - 2];
  if (!ShapedType::isDynamic(qs[1]) && !ShapedType::isDynamic(kvHeads) &&
      qs[1] % kvHeads != 0)
    return op.emitOpError()
           << "query heads (" << qs[1]
           << ") must be a multiple of key/value heads (" << kvHeads << ")";
  auto o = op.getOutput().getType();
  if (o.getElementType() != q.getElementType() || o.getRank() != 3 ||
      !dimsCompatible(o.getShape()[0], qs[0]) ||
      !dimsCompatible(o.getShape()[1], qs[1]) || o.getShape()[2] != qs[2])
    return op.emitOpError()
           << "result type " << o << " does not match the query type " << q;
  if (Value lse = op.getLse()) {
    auto l = cast<RankedTensorType>(lse.getType());
    if (!l.getElementType().isF32() || l.getRank() != 2 ||
        !dimsCompatible(l.getShape()[0], qs[1]) ||
        !dimsCompatible(l.getShape()[1], qs[0]))
      return op.emitOpError()
             << "lse result must be tensor<" << dimStr(qs[1]) << "x"
             << dimStr(qs[0]) << "xf32> ([Hq, total_q] f32, varlen), got " << l;
  }
  if (auto scale = op.getScale(); scale && !(scale->convertToFloat() > 0.0f))
    return op.emitOpError()
           << "scale must be positive, got " << scale->convertToFloat();
  if (failed(verifyHeadParams(op, q.getShape()[1])))
    return failure();
  return verifyMaskOptions(op, op.getWindowLeft(), op.getWindowRight(),
                           op.getSoftcap());
}

LogicalResult AttentionOp::verify() {
  if (getCuSeqlensQ() || getCuSeqlensK())
    return verifyVarlen(*this);
  auto q = getQuery().getType(), k = getKey().getType(),
       v = getValue().getType();
  for (auto [name, value] : {std::pair<StringRef, Value>{"query", getQuery()},
                             {"key", getKey()},
                             {"value", getValue()}})
    if (failed(checkOperand(*this, name, value, 4)))
      return failure();

  if (k.getElementType() != q.getElementType() ||
      v.getElementType() != q.getElementType())
    return emitOpError() << "query, key and value must have one element "
                            "type, got "
                         << q.getElementType() << ", " << k.getElementType()
                         << ", " << v.getElementType();

  ArrayRef<int64_t> qs = q.getShape(), ks = k.getShape(), vs = v.getShape();
  if (ShapedType::isDynamic(qs[3]) || ShapedType::isDynamic(ks[3]) ||
      ShapedType::isDynamic(vs[3]))
    return emitOpError() << "head dimension D must be static, got query D="
                         << dimStr(qs[3]) << ", key D=" << dimStr(ks[3])
                         << ", value D=" << dimStr(vs[3]);
  if (ks[3] != qs[3] || vs[3] != qs[3])
    return emitOpError() << "head dimension mismatch: query D=" << qs[3]
                         << ", key D=" << ks[3] << ", value D=" << vs[3];
  for (int i = 0; i < 3; ++i)
    if (!dimsCompatible(ks[i], vs[i]))
      return emitOpError() << "key and value shapes differ: key is " << k
                           << ", value is " << v;
  // Paged: K and V are [num_pages, page_size, Hkv, D]; the batch is the
  // block table's and the lengths'.
  const bool paged = isPaged();
  if (static_cast<bool>(getBlockTable()) !=
      static_cast<bool>(getCacheSeqlens()))
    return emitOpError() << "paged takes a block table and cache lengths";
  const int64_t kvHeads = paged ? ks[2] : ks[1];
  if (paged) {
    if (failed(verifyPagedCache(*this, qs[0], "query")))
      return failure();
  } else if (!dimsCompatible(qs[0], ks[0])) {
    return emitOpError() << "batch mismatch: query B=" << qs[0]
                         << ", key/value B=" << ks[0];
  }
  if (!ShapedType::isDynamic(qs[1]) && !ShapedType::isDynamic(kvHeads) &&
      qs[1] % kvHeads != 0)
    return emitOpError() << "query heads (" << qs[1]
                         << ") must be a multiple of key/value heads ("
                         << kvHeads << ")";

  auto o = getOutput().getType();
  if (o.getElementType() != q.getElementType() || o.getRank() != 4 ||
      !dimsCompatible(o.getShape()[0], qs[0]) ||
      !dimsCompatible(o.getShape()[1], qs[1]) ||
      !dimsCompatible(o.getShape()[2], qs[2]) || o.getShape()[3] != qs[3])
    return emitOpError() << "result type " << o
                         << " does not match the query type " << q;

  if (Value lse = getLse()) {
    auto l = cast<RankedTensorType>(lse.getType());
    if (!l.getElementType().isF32() || l.getRank() != 3 ||
        !dimsCompatible(l.getShape()[0], qs[0]) ||
        !dimsCompatible(l.getShape()[1], qs[1]) ||
        !dimsCompatible(l.getShape()[2], qs[2]))
      return emitOpError() << "lse result must be tensor<" << dimStr(qs[0])
                           << "x" << dimStr(qs[1]) << "x" << dimStr(qs[2])
                           << "xf32> ([B, Hq, Lq] f32), got " << l;
  }
  if (auto scale = getScale(); scale && !(scale->convertToFloat() > 0.0f))
    return emitOpError() << "scale must be positive, got "
                         << scale->convertToFloat();
  if (failed(verifyHeadParams(*this, qs[1])))
    return failure();
  return verifyMaskOptions(*this, getWindowLeft(), getWindowRight(),
                           getSoftcap());
}

//===----------------------------------------------------------------------===//
// MatmulOp
//===----------------------------------------------------------------------===//

LogicalResult MatmulOp::verify() {
  if (failed(checkOperand(*this, "lhs", getLhs(), 4)) ||
      failed(checkOperand(*this, "rhs", getRhs(), 4)))
    return failure();
  auto a = getLhs().getType(), b = getRhs().getType();
  if (a.getElementType() != b.getElementType())
    return emitOpError() << "operands must have one element type, got "
                         << a.getElementType() << " and " << b.getElementType();
  ArrayRef<int64_t> as = a.getShape(), bs = b.getShape();
  if (!dimsCompatible(as[0], bs[0]))
    return emitOpError() << "batch mismatch: lhs B=" << dimStr(as[0])
                         << ", rhs B=" << dimStr(bs[0]);
  if (!ShapedType::isDynamic(as[1]) && !ShapedType::isDynamic(bs[1]) &&
      as[1] % bs[1] != 0)
    return emitOpError() << "lhs heads (" << as[1]
                         << ") must be a multiple of rhs heads (" << bs[1]
                         << ")";
  int64_t kDimB = getTransposeRhs() ? bs[3] : bs[2];
  int64_t nDim = getTransposeRhs() ? bs[2] : bs[3];
  if (!dimsCompatible(as[3], kDimB))
    return emitOpError() << "contraction mismatch: lhs has " << dimStr(as[3])
                         << ", rhs has " << dimStr(kDimB);
  auto c = getResult().getType();
  SmallVector<int64_t> expected = {as[0], as[1], as[2], nDim};
  bool ok = c.getElementType().isF32() && c.getRank() == 4;
  for (int i = 0; ok && i < 4; ++i)
    ok = dimsCompatible(c.getShape()[i], expected[i]);
  if (!ok)
    return emitOpError() << "result must be tensor<" << dimStr(expected[0])
                         << "x" << dimStr(expected[1]) << "x"
                         << dimStr(expected[2]) << "x" << dimStr(expected[3])
                         << "xf32>, got " << c;
  return success();
}

//===----------------------------------------------------------------------===//
// SoftmaxOp
//===----------------------------------------------------------------------===//

LogicalResult SoftmaxOp::verify() {
  if (failed(checkOperand(*this, "input", getInput(), 4)))
    return failure();
  auto in = getInput().getType(), out = getResult().getType();
  if (!in.getElementType().isF32())
    return emitOpError() << "input must be f32 scores, got "
                         << in.getElementType();
  if (!isSupportedFloat(out.getElementType()) || out.getRank() != 4 ||
      failed(verifyCompatibleShape(in.getShape(), out.getShape())))
    return emitOpError() << "result " << out
                         << " must have the input's shape and a float type";
  if (auto scale = getScale(); scale && !(scale->convertToFloat() > 0.0f))
    return emitOpError() << "scale must be positive, got "
                         << scale->convertToFloat();
  return verifyMaskOptions(*this, getWindowLeft(), getWindowRight(),
                           getSoftcap());
}

//===----------------------------------------------------------------------===//
// Tile-level ops
//===----------------------------------------------------------------------===//

/// Checks a 2-D (or, for LSE, 1-D) tile against a rank-(tile+2) memref whose
/// trailing dimensions it covers.
static LogicalResult checkTileAgainstMemref(Operation *op, RankedTensorType t,
                                            MemRefType m) {
  // A per-head vector [H] (fa.load_tile only): every row of a head reads
  // its head's value.
  const bool perHead = isa<LoadTileOp>(op) && t.getRank() == 1 &&
                       m.getRank() == 1;
  if (m.getRank() != t.getRank() + 2 && !perHead)
    return op->emitOpError()
           << "a rank-" << t.getRank() << " tile needs a rank-"
           << t.getRank() + 2 << " memref, got rank " << m.getRank();
  if (!t.hasStaticShape())
    return op->emitOpError() << "tile shape must be static, got " << t;
  if (t.getElementType() != m.getElementType())
    return op->emitOpError()
           << "tile element type " << t.getElementType()
           << " differs from memref element type " << m.getElementType();
  // A tile may be wider than the rows (a head dimension padded for the
  // thread mapping, fa-tile): the extra columns read as zero and are not
  // written.
  if (t.getRank() == 2 && (ShapedType::isDynamic(m.getShape()[3]) ||
                           m.getShape()[3] > t.getShape()[1]))
    return op->emitOpError()
           << "tile has " << t.getShape()[1] << " columns, memref rows have "
           << dimStr(m.getShape()[3]);
  return success();
}

void LoadTileOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getSourceMutable(),
                       SideEffects::DefaultResource::get());
}

/// `pages(%table, %rows)`: both or neither, a [B, max_pages] i32 table, on
/// a rank-4 source.
static LogicalResult verifyPages(Operation *op, Value table, Value rows,
                                 MemRefType source) {
  if (static_cast<bool>(table) != static_cast<bool>(rows))
    return op->emitOpError() << "pages takes a block table and a row count";
  if (!table)
    return success();
  auto t = cast<MemRefType>(table.getType());
  if (t.getRank() != 2 || !t.getElementType().isInteger(32))
    return op->emitOpError() << "block table must be a [B, max_pages] i32 "
                                "memref, got "
                             << t;
  if (source.getRank() != 4)
    return op->emitOpError() << "a paged source is [num_pages, page_size, H, "
                                "D], got rank "
                             << source.getRank();
  return success();
}

/// `seq(%start, %rows)`: both or neither, not with `pages`, on a rank-4 or
/// rank-3 memref.
static LogicalResult verifySeq(Operation *op, Value start, Value rows,
                               Value table) {
  if (static_cast<bool>(start) != static_cast<bool>(rows))
    return op->emitOpError() << "seq takes a start row and a row count";
  if (start && table)
    return op->emitOpError() << "seq and pages exclude each other";
  return success();
}

LogicalResult LoadTileOp::verify() {
  if (failed(verifyPages(*this, getPageTable(), getPageRows(),
                         getSource().getType())) ||
      failed(verifySeq(*this, getSeqStart(), getSeqRows(), getPageTable())))
    return failure();
  auto t = getResult().getType();
  if (t.getRank() != 1 && t.getRank() != 2)
    return emitOpError() << "result must be a 1-D or 2-D tile, got " << t;
  return checkTileAgainstMemref(*this, t, getSource().getType());
}

void StoreTileOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Write::get(), &getDestMutable(),
                       SideEffects::DefaultResource::get());
}

LogicalResult StoreTileOp::verify() {
  if (failed(verifySeq(*this, getSeqStart(), getSeqRows(), Value())))
    return failure();
  auto t = getTile().getType();
  if (t.getRank() != 1 && t.getRank() != 2)
    return emitOpError() << "tile must be 1-D or 2-D, got " << t;
  return checkTileAgainstMemref(*this, t, getDest().getType());
}

void MergeSplitsOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>>
        &effects) {
  effects.emplace_back(MemoryEffects::Read::get(), &getOMutable(),
                       SideEffects::DefaultResource::get());
  effects.emplace_back(MemoryEffects::Read::get(), &getLseMutable(),
                       SideEffects::DefaultResource::get());
}

LogicalResult MergeSplitsOp::verify() {
  if (failed(verifySeq(*this, getSeqStart(), getSeqRows(), Value())))
    return failure();
  auto m = getM().getType(), l = getL().getType(), acc = getAcc().getType();
  if (m.getRank() != 1 || m != l || !m.getElementType().isF32() ||
      !m.hasStaticShape())
    return emitOpError() << "m and l must be one static f32 row tile, got " << m
                         << " and " << l;
  if (acc.getRank() != 2 || acc.getDimSize(0) != m.getDimSize(0))
    return emitOpError() << "acc must be tensor<" << m.getDimSize(0)
                         << "xCxf32>, got " << acc;
  if (failed(checkTileAgainstMemref(*this, acc, getO().getType())) ||
      failed(checkTileAgainstMemref(*this, m, getLse().getType())))
    return failure();
  return success();
}

LogicalResult TraceRowOp::verify() {
  auto m = getM().getType(), l = getL().getType(), acc = getAcc().getType();
  auto trace = getTrace().getType();
  if (m.getRank() != 1 || m != l || !m.getElementType().isF32() ||
      !m.hasStaticShape())
    return emitOpError() << "m and l must be one static f32 row tile, got " << m
                         << " and " << l;
  if (acc.getRank() != 2 || !acc.hasStaticShape() ||
      acc.getDimSize(0) != m.getDimSize(0) || !acc.getElementType().isF32())
    return emitOpError() << "acc must be tensor<" << m.getDimSize(0)
                         << "xCxf32>, got " << acc;
  if (getCols() < 1 || getCols() > acc.getDimSize(1))
    return emitOpError() << "cols must be in [1, " << acc.getDimSize(1)
                         << "], got " << getCols();
  auto memref = dyn_cast<MemRefType>(trace);
  if (!memref || memref.getRank() != 1 || !memref.getElementType().isF32())
    return emitOpError() << "trace must be a rank-1 f32 memref, got " << trace;
  return success();
}

LogicalResult TileDotOp::verify() {
  auto a = getLhs().getType(), b = getRhs().getType(),
       c = getResult().getType();
  if (a.getRank() != 2 || b.getRank() != 2 || !a.hasStaticShape() ||
      !b.hasStaticShape())
    return emitOpError() << "operands must be static 2-D tiles";
  if (a.getElementType() != b.getElementType())
    return emitOpError() << "operands must have one element type, got "
                         << a.getElementType() << " and " << b.getElementType();
  int64_t k = getTransposeRhs() ? b.getShape()[1] : b.getShape()[0];
  int64_t n = getTransposeRhs() ? b.getShape()[0] : b.getShape()[1];
  if (a.getShape()[1] != k)
    return emitOpError() << "contraction mismatch: lhs has " << a.getShape()[1]
                         << ", rhs has " << k;
  if (c.getRank() != 2 || c.getShape()[0] != a.getShape()[0] ||
      c.getShape()[1] != n || !c.getElementType().isF32())
    return emitOpError() << "result must be tensor<" << a.getShape()[0] << "x"
                         << n << "xf32>, got " << c;
  if (getAcc() && getAcc().getType() != c)
    return emitOpError() << "accumulator type " << getAcc().getType()
                         << " differs from result type " << c;
  return success();
}

LogicalResult RowReduceOp::verify() {
  auto in = getInput().getType(), out = getResult().getType();
  if (in.getRank() != 2 || out.getRank() != 1 ||
      in.getShape()[0] != out.getShape()[0] ||
      in.getElementType() != out.getElementType())
    return emitOpError() << "expects an MxN tile and an M result of the same "
                            "element type, got "
                         << in << " -> " << out;
  if (getPartial() && getKind() != ReduceKind::add)
    return emitOpError() << "partial applies to 'add' only";
  return success();
}

LogicalResult RowCombineOp::verify() {
  auto in = getInput().getType(), out = getResult().getType();
  if (in.getRank() != 1 || in != out)
    return emitOpError() << "expects M rows and the same result type, got "
                         << in << " -> " << out;
  return success();
}

LogicalResult RowBroadcastOp::verify() {
  auto in = getInput().getType(), out = getResult().getType();
  if (in.getRank() != 1 || out.getRank() != 2 ||
      in.getShape()[0] != out.getShape()[0] ||
      in.getElementType() != out.getElementType())
    return emitOpError() << "expects an M input and an MxN result of the same "
                            "element type, got "
                         << in << " -> " << out;
  return success();
}

LogicalResult TileMaskOp::verify() {
  auto t = getInput().getType();
  if (t.getRank() != 2 || !t.getElementType().isF32())
    return emitOpError() << "expects a 2-D f32 tile, got " << t;
  if (Value alibi = getAlibi()) {
    auto a = cast<RankedTensorType>(alibi.getType());
    if (a.getRank() != 1 || !a.getElementType().isF32() ||
        a.getDimSize(0) != t.getDimSize(0))
      return emitOpError() << "alibi must be tensor<" << t.getDimSize(0)
                           << "xf32> (one slope per row), got " << a;
  }
  return verifyMaskOptions(*this, getWindowLeft(), getWindowRight(),
                           std::nullopt);
}

//===----------------------------------------------------------------------===//
// Memory-level ops (Level 1b)
//===----------------------------------------------------------------------===//

MemRefType LdsLayout::type(MLIRContext *ctx) const {
  auto space = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
  if (pairs)
    return MemRefType::get(
        {rows / 2, cols, 2}, elementType,
        StridedLayoutAttr::get(ctx, 0, {2 * rowStride(), 2, 1}), space);
  return MemRefType::get({rows, cols}, elementType,
                         StridedLayoutAttr::get(ctx, 0, {rowStride(), 1}),
                         space);
}

FailureOr<LdsLayout> mlir::fa::getLdsLayout(MemRefType type, std::string *why) {
  auto fail = [&](const Twine &reason) -> FailureOr<LdsLayout> {
    if (why)
      *why = reason.str();
    return failure();
  };
  if (!gpu::GPUDialect::isWorkgroupMemoryAddressSpace(type.getMemorySpace()))
    return fail("an LDS buffer must be in #gpu.address_space<workgroup>");
  if (!type.hasStaticShape() || (type.getRank() != 2 && type.getRank() != 3))
    return fail("an LDS buffer must have a static rank-2 (row-major) or "
                "rank-3 (pair-interleaved) shape");
  if (!isSupportedFloat(type.getElementType()))
    return fail("an LDS buffer holds f16, bf16 or f32");
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) || offset != 0)
    return fail("an LDS buffer's layout must be strided with offset 0");
  LdsLayout l;
  l.elementType = type.getElementType();
  ArrayRef<int64_t> shape = type.getShape();
  if (type.getRank() == 2) {
    l.rows = shape[0];
    l.cols = shape[1];
    if (strides[1] != 1 || strides[0] < l.cols)
      return fail("a row-major LDS buffer needs strides [S, 1] with S >= " +
                  Twine(l.cols));
    l.pad = strides[0] - l.cols;
  } else {
    l.pairs = true;
    l.rows = 2 * shape[0];
    l.cols = shape[1];
    if (shape[2] != 2 || strides[2] != 1 || strides[1] != 2 ||
        strides[0] % 2 != 0 || strides[0] < 2 * l.cols)
      return fail("a pair-interleaved LDS buffer needs shape [R/2, C, 2] and "
                  "strides [2S, 2, 1] with S >= " +
                  Twine(l.cols));
    l.pad = strides[0] / 2 - l.cols;
  }
  if (l.rows <= 0 || l.cols <= 0)
    return fail("an LDS buffer must not be empty");
  return l;
}

/// Whether values of `from` may be stored in an LDS buffer of `to`: the
/// same type, or a 16-bit type widened to f32 (converted once, when stored).
static bool storableAs(Type from, Type to) {
  return from == to || ((from.isF16() || from.isBF16()) && to.isF32());
}

/// The layout of an LDS operand of `op`, or an error naming the operand.
static FailureOr<LdsLayout> ldsOperand(Operation *op, StringRef name, Value v) {
  std::string why;
  auto layout = getLdsLayout(cast<MemRefType>(v.getType()), &why);
  if (failed(layout)) {
    op->emitOpError() << name << ": " << why << ", got " << v.getType();
    return failure();
  }
  return layout;
}

LogicalResult LdsBufferOp::verify() {
  if (getName().empty())
    return emitOpError() << "needs a name";
  return ldsOperand(*this, "result", getResult());
}

/// The checks a copy from global rows into an LDS buffer shares with its
/// first half (fa.fetch_tile): the buffer's layout, or failure.
static FailureOr<LdsLayout> verifyCopySource(Operation *op, StringRef name,
                                             MemRefType src, Value buffer) {
  auto layout = ldsOperand(op, name, buffer);
  if (failed(layout))
    return failure();
  if (src.getRank() != 4)
    return op->emitOpError()
           << "source must be a rank-4 memref, got rank " << src.getRank();
  if (!storableAs(src.getElementType(), layout->elementType))
    return op->emitOpError()
           << "source element type " << src.getElementType()
           << " cannot be stored in a buffer of " << layout->elementType;
  if (ShapedType::isDynamic(src.getShape()[3]) ||
      src.getShape()[3] > layout->cols)
    return op->emitOpError() << "source rows have " << dimStr(src.getShape()[3])
                             << " elements, the buffer's rows " << layout->cols;
  return layout;
}

LogicalResult CopyTileOp::verify() {
  if (failed(verifyPages(*this, getPageTable(), getPageRows(),
                         getSource().getType())) ||
      failed(verifySeq(*this, getSeqStart(), getSeqRows(), getPageTable())))
    return failure();
  return verifyCopySource(*this, "dest", getSource().getType(), getDest());
}

LogicalResult FetchTileOp::verify() {
  if (failed(verifyPages(*this, getPageTable(), getPageRows(),
                         getSource().getType())) ||
      failed(verifySeq(*this, getSeqStart(), getSeqRows(), getPageTable())))
    return failure();
  auto src = getSource().getType();
  auto layout = verifyCopySource(*this, "buffer", src, getBuffer());
  if (failed(layout))
    return failure();
  auto expected =
      RankedTensorType::get({layout->rows, layout->cols}, src.getElementType());
  if (getResult().getType() != expected)
    return emitOpError() << "result " << getResult().getType() << " must be "
                         << expected
                         << " (the buffer's tile, the source's element type)";
  return success();
}

/// The fa.fetch_tile whose result reaches `v`, directly or through the
/// iteration arguments of scf.for loops (every incoming value must agree).
static FetchTileOp fetchOf(Value v, int depth = 0) {
  if (depth > 8)
    return {};
  if (auto fetch = v.getDefiningOp<FetchTileOp>())
    return fetch;
  auto arg = dyn_cast<BlockArgument>(v);
  auto loop = arg ? dyn_cast<LoopLikeOpInterface>(arg.getOwner()->getParentOp())
                  : LoopLikeOpInterface();
  OpOperand *in = loop ? loop.getTiedLoopInit(arg) : nullptr;
  OpOperand *out = loop ? loop.getTiedLoopYieldedValue(arg) : nullptr;
  if (!in || !out)
    return {};
  FetchTileOp init = fetchOf(in->get(), depth + 1);
  FetchTileOp next = fetchOf(out->get(), depth + 1);
  return init && next && init.getBuffer() == next.getBuffer() ? init
                                                              : FetchTileOp();
}

LogicalResult StageTileOp::verify() {
  if (failed(ldsOperand(*this, "dest", getDest())))
    return failure();
  FetchTileOp fetch = fetchOf(getTile());
  if (!fetch)
    return emitOpError() << "tile must come from fa.fetch_tile (directly or "
                            "through scf.for iteration arguments)";
  if (fetch.getBuffer() != getDest())
    return emitOpError() << "tile was fetched for another buffer: its "
                            "distribution over the threads is that buffer's";
  return success();
}

LogicalResult WriteTileOp::verify() {
  auto layout = ldsOperand(*this, "dest", getDest());
  if (failed(layout))
    return failure();
  auto t = getTile().getType();
  if (layout->pairs)
    return emitOpError() << "writes only row-major buffers";
  if (t.getRank() != 2 || t.getShape()[0] != layout->rows ||
      t.getShape()[1] != layout->cols ||
      !storableAs(t.getElementType(), layout->elementType))
    return emitOpError() << "tile " << t << " does not match the buffer's "
                         << layout->rows << "x" << layout->cols << "x"
                         << layout->elementType;
  return success();
}

LogicalResult LdsDotOp::verify() {
  auto a = ldsOperand(*this, "lhs", getLhs());
  auto b = ldsOperand(*this, "rhs", getRhs());
  if (failed(a) || failed(b))
    return failure();
  if (a->pairs)
    return emitOpError() << "lhs must be row-major";
  if (b->pairs && getTransposeRhs())
    return emitOpError() << "a pair-interleaved rhs cannot be transposed";
  if (a->elementType != b->elementType)
    return emitOpError() << "operands must have one element type, got "
                         << a->elementType << " and " << b->elementType;
  int64_t k = getTransposeRhs() ? b->cols : b->rows;
  int64_t n = getTransposeRhs() ? b->rows : b->cols;
  if (a->cols != k)
    return emitOpError() << "contraction mismatch: lhs has " << a->cols
                         << ", rhs has " << k;
  auto c = getResult().getType();
  if (c.getRank() != 2 || c.getShape()[0] != a->rows || c.getShape()[1] != n ||
      !c.getElementType().isF32())
    return emitOpError() << "result must be tensor<" << a->rows << "x" << n
                         << "xf32>, got " << c;
  if (getAcc() && getAcc().getType() != c)
    return emitOpError() << "accumulator type " << getAcc().getType()
                         << " differs from result type " << c;
  return success();
}

#define GET_OP_CLASSES
#include "dialect/FaOps.cpp.inc"
