//===- TileAttention.cpp - fa-tile: fa.attention -> tile-level IR ---------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements `fa-tile`, the seed's dataflow made explicit:
//
//   1. The kernel function becomes destination-passing: tensor arguments
//      become strided memrefs, results become output memref arguments.
//   2. A grid `scf.forall (%mb, %h, %b)` maps (Q block, head, batch) to
//      workgroups. The Q block is loaded once and stays resident (rule 2).
//   3. An inner `scf.for` streams K/V blocks; causal attention stops at the
//      diagonal block. Scores are scaled by scale·log2(e) once and the whole
//      softmax runs in exp2 (f32 statistics, rule 6).
//   4. Online softmax: running max m and sum l; O is rescaled by
//      exp2(m_old - m_new) BEFORE the new P·V is accumulated (rule 3); P is
//      rounded to the input type for the product.
//   5. Epilogue: O / l (0 for rows that saw no key), optional LSE.
//   6. With trace=true (validation layer 2), after each K/V block the
//      workgroup that holds the traced query row writes that row's m, l
//      and acc to the trace buffer (fa.trace_row; KernelAbi.h, "Trace").
//
// The tile sizes come from the target's budget model (LdsBudget.h) or are
// given explicitly and checked against it (rule 1).
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/LdsBudget.h"
#include "compiler/Analysis/TargetDesc.h"
#include "compiler/Testing/PlantedBugs.h"
#include "compiler/Transforms/PassDetail.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/PatternMatch.h"

#include <cmath>

namespace mlir::fa {
#define GEN_PASS_DEF_FATILEPASS
#include "compiler/Transforms/Passes.h.inc"
} // namespace mlir::fa

using namespace mlir;
using namespace mlir::fa;

/// The strided memref a kernel argument of tensor type `t` becomes: any
/// batch/head/row strides, unit stride along the last dimension.
static MemRefType kernelMemRefType(RankedTensorType t) {
  SmallVector<int64_t> strides(t.getRank(), ShapedType::kDynamic);
  strides.back() = 1;
  auto layout =
      StridedLayoutAttr::get(t.getContext(), ShapedType::kDynamic, strides);
  return MemRefType::get(t.getShape(), t.getElementType(), layout);
}

/// The kernel's view of a tensor of a varlen attention (packed rows):
/// [total, H, D] as [B, H, max_L, D] and the LSE [H, total] as [B, H,
/// max_L], with any strides. The batch stride is 0 (KernelAbi.h, version
/// 4): sequence b's rows begin at cu_seqlens[b], which the tile ops' `seq`
/// adds.
static MemRefType varlenViewType(RankedTensorType t) {
  const int64_t dyn = ShapedType::kDynamic;
  SmallVector<int64_t> shape =
      t.getRank() == 3
          ? SmallVector<int64_t>{dyn, t.getDimSize(1), dyn, t.getDimSize(2)}
          : SmallVector<int64_t>{dyn, t.getDimSize(0), dyn};
  return kernelMemRefType(RankedTensorType::get(shape, t.getElementType()));
}

namespace {
/// Builds the Level 1 body of one attention.
class TileBuilder {
public:
  TileBuilder(OpBuilder &b, Location loc, const TileConfig &config,
              int64_t headDim, const TargetDesc &target, PlantedBug bug,
              bool pack)
      : b(b), loc(loc), config(config), headDim(headDim), target(target),
        bug(bug), pack(pack) {}

  /// What `build` needs of `op` that reads its operand types: taken
  /// before the function's arguments become memrefs.
  struct OpFacts {
    Type elementType;
    float scale;
    int64_t headDim;
    bool paged;
    bool varlen;
    /// Paged: the block table and key lengths; varlen: cu_seqlens_q and
    /// (unless paged too: a mixed batch) cu_seqlens_k; null otherwise.
    Value table, seqlens, cuQ, cuK;
    /// ALiBi slopes and sinks ([Hq] f32 kernel arguments), or null.
    Value alibi, sinks;
  };
  static OpFacts factsOf(AttentionOp op) {
    return {op.getQuery().getType().getElementType(),
            op.getEffectiveScale(),
            op.getHeadDim(),
            op.isPaged(),
            op.isVarlen(),
            op.getBlockTable(),
            op.getCacheSeqlens(),
            op.getCuSeqlensQ(),
            op.getCuSeqlensK(),
            op.getAlibiSlopes(),
            op.getSinks()};
  }

  /// The traced row's arguments (fa.trace_row): the trace buffer and the
  /// traced batch, head and row; null: no trace.
  struct Trace {
    Value buffer, batch, head, row;
  } trace;

  /// The attention grid. With a workspace (`wsO`, `wsLse`: split-KV) it
  /// writes each split's partial O and LSE there instead of O and LSE.
  void build(AttentionOp op, const OpFacts &facts, Value q, Value k, Value v,
             Value o, Value lse, Value wsO = {}, Value wsLse = {});
  /// The split-KV combine grid: merges the workspace's splits into O and
  /// LSE as online softmax does.
  void buildCombine(AttentionOp op, const OpFacts &facts, Value q, Value k,
                    Value v, Value o, Value lse, Value wsO, Value wsLse);

private:
  /// The grid's common attributes (fa.tile, fa.scale, fa.causal, fa.args).
  /// `tiles`: the grid's tile configuration where it is not `config` (the
  /// combine grid's own workgroup).
  void annotate(scf::ForallOp grid, AttentionOp op, const OpFacts &facts,
                ArrayRef<Value> roles, const TileConfig *tiles = nullptr);
  /// The combine grid's tile configuration: the split kernel's rows, with
  /// its own workgroup (combineConfig's comment).
  TileConfig combineConfig() const;
  /// Whether the combine merges with fa.merge_splits (D = `d`, over
  /// `threads`).
  bool mergesSplits(int64_t d, int64_t threads) const;
  Value idx(int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); }
  Value splat(RankedTensorType t, double v) {
    return arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(t, b.getFloatAttr(t.getElementType(), v)));
  }
  RankedTensorType f32Tile(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, b.getF32Type());
  }
  /// O = acc / l, 0 for the rows where l = 0 (no key); and those rows.
  std::pair<Value, Value> normalize(Value acc, Value l) {
    auto accType = cast<RankedTensorType>(acc.getType());
    auto rowsType = cast<RankedTensorType>(l.getType());
    Value zero = splat(rowsType, 0.0);
    Value empty =
        arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, l, zero);
    Value inv = arith::DivFOp::create(b, loc, splat(rowsType, 1.0), l);
    inv = arith::SelectOp::create(b, loc, empty, zero, inv);
    return {arith::MulFOp::create(b, loc, acc,
                                  rowBroadcast(inv, accType.getDimSize(1))),
            empty};
  }
  /// cu_seqlens[i] (i32) as an index.
  Value seqBound(Value cu, Value i) {
    Value e = memref::LoadOp::create(b, loc, cu, ValueRange{i});
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), e);
  }
  Value rowBroadcast(Value rows, int64_t cols) {
    auto t = cast<RankedTensorType>(rows.getType());
    return RowBroadcastOp::create(b, loc, f32Tile({t.getDimSize(0), cols}),
                                  rows);
  }

  OpBuilder &b;
  Location loc;
  TileConfig config;
  int64_t headDim; ///< of the tiles: D, or D padded (tileHeadDim)
  const TargetDesc &target;
  PlantedBug bug; ///< test only: the bug to plant (PlantedBugs.h)
  bool pack;      ///< GQA packing: grid y over KV heads, rows packed
};
} // namespace

void TileBuilder::annotate(scf::ForallOp grid, AttentionOp op,
                           const OpFacts &facts, ArrayRef<Value> roles,
                           const TileConfig *tiles) {
  MLIRContext *ctx = b.getContext();
  const TileConfig &c = tiles ? *tiles : config;
  grid->setAttr("fa.tile", TileConfigAttr::get(ctx, b.getStringAttr(target.name),
                                               c.blockM, c.blockN, c.waves,
                                               target.waveSize, c.stages,
                                               c.ldsPad, c.kvShared));
  grid->setAttr("fa.scale", b.getF32FloatAttr(facts.scale));
  if (op.getCausal())
    grid->setAttr("fa.causal", b.getUnitAttr());
  if (op.getWindowLeft())
    grid->setAttr("fa.window", b.getDenseI64ArrayAttr(
                                   {op.getWindowLeftOr(), op.getWindowRightOr()}));
  if (op.getSoftcap())
    grid->setAttr("fa.softcap", b.getF32FloatAttr(op.getSoftcapOr()));
  // Which kernel arguments play Q, K, V, O, LSE (and, split-KV, the
  // workspace O and LSE); -1: none.
  SmallVector<int64_t> argNos;
  for (Value v : roles)
    argNos.push_back(
        v ? static_cast<int64_t>(cast<BlockArgument>(v).getArgNumber()) : -1);
  grid->setAttr("fa.args", b.getDenseI64ArrayAttr(argNos));
  // ALiBi slopes and sinks: the kernel arguments (-1: none) of the head
  // words (KernelAbi.h), on the split and the combine grid alike.
  if (facts.alibi || facts.sinks) {
    auto argOf = [](Value v) -> int64_t {
      return v ? static_cast<int64_t>(cast<BlockArgument>(v).getArgNumber())
               : int64_t(-1);
    };
    grid->setAttr("fa.head_params", b.getDenseI64ArrayAttr(
                                        {argOf(facts.alibi), argOf(facts.sinks)}));
  }
}

void TileBuilder::build(AttentionOp op, const OpFacts &facts, Value q, Value k,
                        Value v, Value o, Value lse, Value wsO, Value wsLse) {
  const int64_t bm = config.blockM, bn = config.blockN, d = headDim;
  Type elt = facts.elementType;
  const bool causal = op.getCausal();
  const bool split = static_cast<bool>(wsO);
  MLIRContext *ctx = b.getContext();

  Value c0 = idx(0), c1 = idx(1);
  Value batch = memref::DimOp::create(b, loc, q, 0);
  Value hq = memref::DimOp::create(b, loc, q, 1);
  Value lq = memref::DimOp::create(b, loc, q, 2);
  // Paged: K and V are [num_pages, page_size, Hkv, D]; each sequence's
  // length is read in the grid.
  Value table = facts.table, seqlens = facts.seqlens;
  // Varlen: Q and O (and K and V unless paged) are [B, H, max_L, D] views
  // of the packed rows; each sequence's rows and lengths are read in the
  // grid. Varlen and paged: a mixed batch (no cu_seqlens_k).
  Value cuQ = facts.cuQ, cuK = facts.cuK;
  Value hkv = memref::DimOp::create(b, loc, k, table ? 2 : 1);
  Value lk = table ? Value() : Value(memref::DimOp::create(b, loc, k, 2));
  Value group = arith::DivUIOp::create(b, loc, hq, hkv);
  // GQA packing: the rows of grid y = KV head h are the Lq rows of each of
  // its `group` query heads, one after the other.
  Value rows = pack ? Value(arith::MulIOp::create(b, loc, lq, group)) : lq;
  Value numMBlocks = arith::CeilDivUIOp::create(b, loc, rows, idx(bm));
  // Split-KV: S splits of every Q block's K/V range; the workspace holds
  // S * B batches.
  Value splits =
      split ? Value(arith::DivUIOp::create(
                  b, loc, memref::DimOp::create(b, loc, wsLse, 0), batch))
            : c1;
  Value gridX = split ? Value(arith::MulIOp::create(b, loc, numMBlocks, splits))
                      : numMBlocks;

  // One workgroup per (Q block [x split], head [KV head when packed], batch).
  auto mapping = b.getArrayAttr(
      {gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimX),
       gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimY),
       gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimZ)});
  auto grid = scf::ForallOp::create(
      b, loc, getAsOpFoldResult(ValueRange{gridX, pack ? hkv : hq, batch}),
      ValueRange{}, mapping);
  SmallVector<Value> roles{q, k, v, o, lse};
  if (split || table || cuQ)
    roles.append({wsO, wsLse});
  if (table || cuQ)
    roles.append({table, seqlens});
  if (cuQ)
    roles.append({cuQ, cuK});
  annotate(grid, op, facts, roles);
  if (split) {
    grid->setAttr("fa.kv_splits", b.getStringAttr("runtime"));
    // At S = 1 it writes O and LSE itself (the epilogue below).
    grid->setAttr("fa.split_direct", b.getUnitAttr());
  }
  if (pack)
    grid->setAttr("fa.gqa_packed", b.getUnitAttr());
  if (table)
    grid->setAttr("fa.paged", b.getUnitAttr());
  if (cuQ)
    grid->setAttr("fa.varlen", b.getUnitAttr());
  // The trace's kernel arguments: buffer, batch, head, row.
  if (trace.buffer) {
    SmallVector<int64_t> traceArgs;
    for (Value v : {trace.buffer, trace.batch, trace.head, trace.row})
      traceArgs.push_back(cast<BlockArgument>(v).getArgNumber());
    grid->setAttr("fa.trace", b.getDenseI64ArrayAttr(traceArgs));
  }

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(grid.getBody());
  Value x = grid.getInductionVar(0), h = grid.getInductionVar(1),
        bIdx = grid.getInductionVar(2);
  // Split s of Q block mb is grid x mb * S + s.
  Value mb = split ? Value(arith::DivUIOp::create(b, loc, x, splits)) : x;
  Value sIdx = split ? Value(arith::RemUIOp::create(b, loc, x, splits)) : c0;
  Value m0 = arith::MulIOp::create(b, loc, mb, idx(bm));
  Value hk = pack ? h
             : bug == PlantedBug::GqaModulo
                 ? Value(arith::RemUIOp::create(b, loc, h, hkv))
                 : Value(arith::DivUIOp::create(b, loc, h, group));
  Value rowGroup = pack ? group : Value();

  // Varlen: sequence b is rows [cu_q[b], cu_q[b+1]) of Q and O and rows
  // [cu_k[b], cu_k[b+1]) of K and V (a mixed batch: its pages); its
  // lengths replace Lq and Lk.
  Value qStart, kStart;
  if (cuQ) {
    Value next = arith::AddIOp::create(b, loc, bIdx, c1);
    qStart = seqBound(cuQ, bIdx);
    lq = arith::SubIOp::create(b, loc, seqBound(cuQ, next), qStart);
    if (cuK) {
      kStart = seqBound(cuK, bIdx);
      lk = arith::SubIOp::create(b, loc, seqBound(cuK, next), kStart);
      // (The planted bug takes the end as inclusive: one key short.)
      if (bug == PlantedBug::CuSeqlensOffByOne)
        lk = arith::MaxSIOp::create(
            b, loc, arith::SubIOp::create(b, loc, lk, c1), c0);
    }
    rows = pack ? Value(arith::MulIOp::create(b, loc, lq, group)) : lq;
  }
  // What packed rows are divided by to find their head: Lq, at least 1 (a
  // varlen sequence may have no query; then no row exists).
  Value lqDiv =
      pack && cuQ ? Value(arith::MaxUIOp::create(b, loc, lq, c1)) : lq;

  // Q block: loaded once, resident for the whole KV loop.
  auto qTileType = RankedTensorType::get({bm, d}, elt);
  auto kvTileType = RankedTensorType::get({bn, d}, elt);
  Value qTile =
      LoadTileOp::create(b, loc, qTileType, q, bIdx, h, m0, rowGroup, Value(),
                         Value(), qStart, qStart ? lq : Value());
  // ALiBi slopes and sinks of each row's query head (a packed row's own),
  // read like the Q block's rows: per-head values, the same for every row
  // of a head.
  auto headRows = [&](Value perHead) -> Value {
    return LoadTileOp::create(b, loc, f32Tile({bm}), perHead, bIdx, h, m0,
                              rowGroup, Value(), Value(), qStart,
                              qStart ? lq : Value());
  };
  Value slopeRows = facts.alibi ? headRows(facts.alibi) : Value();
  // A split-KV kernel leaves the sinks to its combine kernel.
  Value sinkRows = facts.sinks && !split ? headRows(facts.sinks) : Value();
  // Paged: this sequence's keys, cache_seqlens[b].
  if (table) {
    Value len = memref::LoadOp::create(b, loc, seqlens, ValueRange{bIdx});
    lk = arith::IndexCastOp::create(b, loc, b.getIndexType(), len);
  }

  // KV blocks to visit: those with a key some row of the Q block sees. The
  // block's last query position, pos (unpacked m0 + bm - 1; packed, the
  // last real row's position, or lq - 1 where the block spans two query
  // heads), sees keys up to pos + (lk - lq) + right, right = 0 if causal
  // (and the window's right side if tighter); its first position (m0,
  // packed m0 mod lq or 0) sees keys from first + (lk - lq) - left. Blocks
  // wholly outside are never loaded.
  const int64_t winLeft = op.getWindowLeftOr(), winRight = op.getWindowRightOr();
  int64_t right = causal ? 0 : -1;
  if (winRight >= 0)
    right = right < 0 ? winRight : std::min(right, winRight);
  // Packed: the block's last real row, and whether it holds one head.
  Value last, oneHead;
  if (pack && (right >= 0 || winLeft >= 0)) {
    last = arith::SubIOp::create(
        b, loc,
        arith::MinUIOp::create(
            b, loc, arith::AddIOp::create(b, loc, m0, idx(bm)), rows),
        c1);
    Value firstHead = arith::DivUIOp::create(b, loc, m0, lqDiv);
    Value lastHead = arith::DivUIOp::create(b, loc, last, lqDiv);
    oneHead = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                    firstHead, lastHead);
  }
  Value kvEnd = lk;
  if (right >= 0) {
    Value diag;
    if (pack) {
      Value lastPos = arith::RemUIOp::create(b, loc, last, lqDiv);
      Value pos = bug == PlantedBug::PackedCausalLastRow
                      ? lastPos
                      : arith::SelectOp::create(
                            b, loc, oneHead, lastPos,
                            arith::SubIOp::create(b, loc, lq, c1));
      diag = arith::AddIOp::create(b, loc, pos, c1);
    } else {
      diag = arith::AddIOp::create(b, loc, m0, idx(bm));
    }
    diag = arith::AddIOp::create(b, loc,
                                 arith::SubIOp::create(b, loc, diag, lq), lk);
    if (right > 0)
      diag = arith::AddIOp::create(b, loc, diag, idx(right));
    if (causal && bug == PlantedBug::CausalBoundKey)
      diag = arith::SubIOp::create(b, loc, diag, c1);
    diag = arith::MaxSIOp::create(b, loc, diag, c0);
    kvEnd = arith::MinSIOp::create(b, loc, diag, lk);
  }
  // Varlen: a Q block past its sequence's rows visits no key.
  if (cuQ)
    kvEnd = arith::SelectOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, m0, rows),
        kvEnd, c0);
  Value numKvBlocks = arith::CeilDivUIOp::create(b, loc, kvEnd, idx(bn));
  if (causal && bug == PlantedBug::CausalBoundBlock)
    numKvBlocks = arith::MaxSIOp::create(
        b, loc, arith::SubIOp::create(b, loc, numKvBlocks, c1), c0);
  // The window's left side: the first block with a key the block's first
  // position sees (the planted bug rounds up: it skips a block whose last
  // keys are still visible).
  Value firstBlock = c0;
  if (winLeft >= 0) {
    Value firstPos = m0;
    if (pack)
      firstPos = arith::SelectOp::create(
          b, loc, oneHead, arith::RemUIOp::create(b, loc, m0, lqDiv), c0);
    Value from = arith::SubIOp::create(
        b, loc, arith::AddIOp::create(b, loc, firstPos, lk),
        arith::AddIOp::create(b, loc, lq, idx(winLeft)));
    from = arith::MaxSIOp::create(b, loc, from, c0);
    firstBlock = bug == PlantedBug::WindowSkipsBlock
                     ? Value(arith::CeilDivUIOp::create(b, loc, from, idx(bn)))
                     : Value(arith::DivUIOp::create(b, loc, from, idx(bn)));
    firstBlock = arith::MinUIOp::create(b, loc, firstBlock, numKvBlocks);
  }
  // Split s visits blocks [first + s*c, min(first + (s+1)*c, n)),
  // c = ceil((n - first) / S).
  // (Without a window's left side, first is 0 and adds nothing.)
  const bool hasFirst = winLeft >= 0;
  Value kvLo = firstBlock, kvHi = numKvBlocks;
  if (split) {
    Value blocks = hasFirst ? Value(arith::SubIOp::create(
                                  b, loc, numKvBlocks, firstBlock))
                            : numKvBlocks;
    Value per = arith::CeilDivUIOp::create(b, loc, blocks, splits);
    Value offset = arith::MulIOp::create(b, loc, sIdx, per);
    Value start = hasFirst ? Value(arith::AddIOp::create(b, loc, firstBlock,
                                                         offset))
                           : offset;
    if (bug == PlantedBug::SplitOverlap)
      start = arith::MaxSIOp::create(
          b, loc, arith::SubIOp::create(b, loc, start, c1), c0);
    kvLo = arith::MinUIOp::create(b, loc, start, numKvBlocks);
    Value end = arith::AddIOp::create(
        b, loc,
        hasFirst ? Value(arith::AddIOp::create(b, loc, firstBlock, offset))
                 : Value(arith::MulIOp::create(b, loc, sIdx, per)),
        per);
    if (bug == PlantedBug::SplitShort)
      end = arith::SubIOp::create(b, loc, end, c1);
    kvHi = arith::MaxSIOp::create(
        b, loc, arith::MinSIOp::create(b, loc, end, numKvBlocks), kvLo);
  }

  auto rowsType = f32Tile({bm});
  auto sType = f32Tile({bm, bn});
  auto accType = f32Tile({bm, d});
  const double negInf = -std::numeric_limits<double>::infinity();
  Value mInit = splat(rowsType, negInf);
  Value lInit = splat(rowsType, 0.0);
  Value accInit = splat(accType, 0.0);
  Value zeroRows = splat(rowsType, 0.0);
  Value negInfRows = splat(rowsType, negInf);
  const double log2e = 1.4426950408889634;
  // The loop carries l as partial row sums (fa.row_reduce add partial):
  // each thread's part, rescaled and added to every trip, summed across
  // the row's threads once after the loop (fa.row_combine), not every
  // block, where the target takes it (TargetDesc::partialRowSums). (The
  // planted sink-per-block bug adds a whole row's term to l each block,
  // which needs the summed form: there l stays summed.)
  const bool partialL =
      target.partialRowSums && bug != PlantedBug::SinkPerBlock;
  // Sinks: each row's softmax starts with its sink's logit, once: m = the
  // sink (log2 units), l = 1. With partial sums the 1, rescaled by every
  // trip's alpha, is exp2(sink - m) once the parts are summed (fullL).
  if (sinkRows) {
    sinkRows =
        arith::MulFOp::create(b, loc, sinkRows, splat(rowsType, log2e));
    mInit = sinkRows;
    if (!partialL)
      lInit = splat(rowsType, 1.0);
  }
  // The row sums l stands for, with reference max mRef.
  auto fullL = [&](OpBuilder &nb, Location l, Value lv, Value mRef) {
    if (!partialL)
      return lv;
    Value sum = RowCombineOp::create(nb, l, lv.getType(), lv);
    if (sinkRows)
      sum = arith::AddFOp::create(
          nb, l, sum,
          math::Exp2Op::create(nb, l,
                               arith::SubFOp::create(nb, l, sinkRows, mRef)));
    return sum;
  };
  // ALiBi: the slopes in the scores' log2 units.
  if (slopeRows)
    slopeRows =
        arith::MulFOp::create(b, loc, slopeRows, splat(rowsType, log2e));
  const double scale = bug == PlantedBug::NoScale ? 1.0 : facts.scale;
  Value scoreScale = splat(sType, scale * log2e);
  const double softcap = op.getSoftcapOr();
  // Without softcap and ALiBi (which act on the scaled scores) the scale
  // folds into the exponent: the row max of the raw masked scores times
  // c = scale·log2(e) is the max of the scaled ones (c > 0; rounding is
  // monotone, so m is the same value), and P = 2^fma(s, c, -m), one fused
  // multiply-add per score where a multiply and a subtraction were.
  const bool foldScale = softcap <= 0 && !slopeRows && scale * log2e > 0;
  Value rowScale = foldScale ? splat(rowsType, scale * log2e) : Value();
  // Softcap c: the scores' factor 2·log2(e)·scale/c, and c·log2(e).
  Value capScale, capOut, ones, twos;
  if (softcap > 0) {
    capScale = splat(sType, 2.0 * log2e * scale / softcap);
    capOut = splat(sType, softcap * log2e);
    ones = splat(sType, 1.0);
    twos = splat(sType, 2.0);
  }

  // (The planted bug masks a mixed batch's queries as the first rows of
  // their sequence: Lk taken as Lq puts the diagonal at i.)
  Value maskLk = lk;
  if (bug == PlantedBug::MixedQueryAtStart && table && cuQ)
    maskLk = pack ? lqDiv : lq;
  auto loop = scf::ForOp::create(
      b, loc, kvLo, kvHi, c1, ValueRange{mInit, lInit, accInit},
      [&](OpBuilder &nb, Location l, Value n, ValueRange iter) {
        Value mOld = iter[0], lOld = iter[1], acc = iter[2];
        Value n0 = arith::MulIOp::create(nb, l, n, idx(bn));
        Value kTile = LoadTileOp::create(nb, l, kvTileType, k, bIdx, hk, n0,
                                         Value(), table, table ? lk : Value(),
                                         kStart, kStart ? lk : Value());
        Value vTile = LoadTileOp::create(nb, l, kvTileType, v, bIdx, hk, n0,
                                         Value(), table, table ? lk : Value(),
                                         kStart, kStart ? lk : Value());
        // S = (Q·Kᵀ)·scale·log2(e), masked.
        Value s = TileDotOp::create(nb, l, sType, qTile, kTile, Value(),
                                    /*transpose_rhs=*/true);
        auto masked = [&](Value scores) -> Value {
          const bool window = winLeft >= 0 || winRight >= 0;
          return TileMaskOp::create(
              nb, l, sType, scores, m0, rows, n0, maskLk,
              pack ? lqDiv : Value(), slopeRows, causal,
              window ? nb.getI64IntegerAttr(winLeft) : IntegerAttr(),
              window ? nb.getI64IntegerAttr(winRight) : IntegerAttr());
        };
        Value sForMax;
        if (softcap > 0) {
          // c·tanh(x / c)·log2(e), x the scaled score, with tanh(t) =
          // 1 - 2 / (e^(2t) + 1) (exp2 only: every target has it); before
          // the mask and the row max.
          Value dots = s;
          Value t = arith::MulFOp::create(nb, l, dots, capScale);
          Value e = math::Exp2Op::create(nb, l, t);
          Value ePlus1 = arith::AddFOp::create(nb, l, e, ones);
          Value frac = arith::DivFOp::create(nb, l, twos, ePlus1);
          Value th = arith::SubFOp::create(nb, l, ones, frac);
          s = masked(arith::MulFOp::create(nb, l, th, capOut));
          sForMax = s;
          // (The planted bug takes the row max of the uncapped scores.)
          if (bug == PlantedBug::SoftcapAfterMax)
            sForMax = masked(arith::MulFOp::create(nb, l, dots, scoreScale));
        } else if (foldScale) {
          s = masked(s);
          sForMax = s;
        } else {
          s = masked(arith::MulFOp::create(nb, l, s, scoreScale));
          sForMax = s;
        }
        // m_new = max(m_old, rowmax(S)); a row with no key so far keeps
        // m = -inf and uses 0 as its reference so exp2 yields 0, not NaN.
        Value rowMax =
            RowReduceOp::create(nb, l, rowsType, ReduceKind::max, sForMax);
        // (The planted bug leaves the raw max unscaled.)
        if (foldScale && bug != PlantedBug::FoldedMaxUnscaled)
          rowMax = arith::MulFOp::create(nb, l, rowMax, rowScale);
        // (maxnumf: one v_max_f32 on gfx906, where maximumf adds a NaN test
        // and a select per row; a NaN score still reaches O through P.)
        Value mNew = arith::MaxNumFOp::create(nb, l, mOld, rowMax);
        // (max(m_new, lowest finite float) does it in one v_max_f32 where
        // the compare and select take two, but v2 put gfx906's D=64
        // prefill 1.1% slower with it at three of four shapes: 2026-12-05,
        // docs/gfx906-timing.md, fifth pass.)
        Value noKey = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                            mNew, negInfRows);
        Value mRef = arith::SelectOp::create(nb, l, noKey, zeroRows, mNew);
        Value alpha = math::Exp2Op::create(
            nb, l, arith::SubFOp::create(nb, l, mOld, mRef));
        Value p =
            foldScale
                ? math::Exp2Op::create(
                      nb, l,
                      math::FmaOp::create(
                          nb, l, s, scoreScale,
                          rowBroadcast(arith::NegFOp::create(nb, l, mRef), bn)))
                : math::Exp2Op::create(
                      nb, l,
                      arith::SubFOp::create(nb, l, s, rowBroadcast(mRef, bn)));
        Value rowSum =
            RowReduceOp::create(nb, l, rowsType, ReduceKind::add, p, partialL);
        // (The planted bug adds the block's sum to an l it did not rescale.)
        Value lNew = arith::AddFOp::create(
            nb, l,
            bug == PlantedBug::LNoRescale
                ? lOld
                : Value(arith::MulFOp::create(nb, l, alpha, lOld)),
            rowSum);
        // (The planted bug counts the sink again with every block.)
        if (sinkRows && bug == PlantedBug::SinkPerBlock)
          lNew = arith::AddFOp::create(
              nb, l, lNew,
              math::Exp2Op::create(
                  nb, l, arith::SubFOp::create(nb, l, sinkRows, mRef)));
        // Rescale first, then accumulate (the planted bug does it after).
        const bool rescaleAfter = bug == PlantedBug::RescaleAfter;
        Value scaled =
            rescaleAfter
                ? acc
                : arith::MulFOp::create(nb, l, acc, rowBroadcast(alpha, d));
        Value pCast = p;
        if (!elt.isF32())
          pCast = arith::TruncFOp::create(
              nb, l, RankedTensorType::get({bm, bn}, elt), p);
        Value accNew = TileDotOp::create(nb, l, accType, pCast, vTile, scaled,
                                         /*transpose_rhs=*/false);
        if (rescaleAfter)
          accNew = arith::MulFOp::create(nb, l, accNew, rowBroadcast(alpha, d));
        // Validation layer 2: the state after block n, as the loop carries
        // it on.
        if (trace.buffer)
          TraceRowOp::create(nb, l, mNew, fullL(nb, l, lNew, mRef), accNew,
                             trace.buffer, n, bIdx, h, m0, trace.batch,
                             trace.head, trace.row, facts.headDim);
        scf::YieldOp::create(nb, l, ValueRange{mNew, lNew, accNew});
      });

  // Epilogue: O = acc / l (0 where no key was visible), LSE = ln(2)·(m +
  // log2 l) (-inf there). A split writes both, in f32, to the workspace
  // at batch s * B + b; at S = 1 it is the whole K/V range and writes O
  // and LSE as a dense kernel does (no combine kernel runs then).
  Value mFinal = loop.getResult(0), accFinal = loop.getResult(2);
  // (A row with no key so far has m = -inf, l's parts 0; the sink term
  // needs a finite m, which a row with a sink has from the start.)
  Value lFinal = fullL(b, loc, loop.getResult(1), mFinal);
  Value outRows = qStart ? lq : Value();
  auto store = [&](Value acc, Value m, Value l, Value dest, Value destLse,
                   Value batchIdx, Value start, bool wide) {
    auto [out, empty] = normalize(acc, l);
    if (!wide && !elt.isF32())
      out = arith::TruncFOp::create(b, loc, qTileType, out);
    StoreTileOp::create(b, loc, out, dest, batchIdx, h, m0, rowGroup, start,
                        outRows);
    if (!destLse)
      return;
    Value logL = math::Log2Op::create(b, loc, l);
    Value val = arith::MulFOp::create(
        b, loc, arith::AddFOp::create(b, loc, m, logL),
        splat(rowsType, std::log(2.0)));
    val = arith::SelectOp::create(b, loc, empty, negInfRows, val);
    StoreTileOp::create(b, loc, val, destLse, batchIdx, h, m0, rowGroup,
                        start, outRows);
  };
  if (!split) {
    store(accFinal, mFinal, lFinal, o, lse, bIdx, qStart, /*wide=*/false);
    return;
  }
  Value direct = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                       splits, c1);
  // (The planted bug writes the workspace at S = 1 too: O is never
  // written.)
  if (bug == PlantedBug::SplitNoDirect)
    direct = arith::ConstantIntOp::create(b, loc, 0, 1);
  auto branch = scf::IfOp::create(b, loc, TypeRange{}, direct,
                                  /*withElseRegion=*/true);
  {
    OpBuilder::InsertionGuard inner(b);
    b.setInsertionPointToStart(branch.thenBlock());
    Value m = mFinal, l = lFinal, acc = accFinal;
    // The sinks, which the split loop leaves out: m' = max(m, sink), l' =
    // l·2^(m - m') + 2^(sink - m'), acc' = acc·2^(m - m') (log2 units;
    // m' = -inf only with a -inf sink and no key: reference 0 then).
    if (facts.sinks) {
      Value sink = arith::MulFOp::create(b, loc, headRows(facts.sinks),
                                         splat(rowsType, log2e));
      m = arith::MaximumFOp::create(b, loc, mFinal, sink);
      Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ,
                                         m, negInfRows);
      Value ref = arith::SelectOp::create(b, loc, none, zeroRows, m);
      Value alpha = math::Exp2Op::create(
          b, loc, arith::SubFOp::create(b, loc, mFinal, ref));
      l = arith::AddFOp::create(
          b, loc, arith::MulFOp::create(b, loc, lFinal, alpha),
          math::Exp2Op::create(b, loc,
                               arith::SubFOp::create(b, loc, sink, ref)));
      acc = arith::MulFOp::create(b, loc, accFinal, rowBroadcast(alpha, d));
    }
    store(acc, m, l, o, lse, bIdx, qStart, /*wide=*/false);
  }
  b.setInsertionPointToStart(branch.elseBlock());
  // Varlen: a split's workspace batches are dense, rows from 0.
  Value wsBatch = arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, sIdx, batch), bIdx);
  store(accFinal, mFinal, lFinal, wsO, wsLse, wsBatch, qStart ? c0 : Value(),
        /*wide=*/true);
}

/// fa.merge_splits serves a split-KV combine whose rows hold one unit of
/// four columns per thread at most, on a target that has it
/// (TargetDesc::mergeSplits): its groups of threads walk disjoint splits.
bool TileBuilder::mergesSplits(int64_t d, int64_t threads) const {
  return target.mergeSplits && headDim % 4 == 0 && d % 4 == 0 &&
         config.blockM * (headDim / 4) <= threads;
}

/// The combine kernel walks the splits of each row one after another, so
/// its time is the instructions one thread issues per split: give each
/// thread about kCombineFloatsPerThread of the [BLOCK_M, D] tile, with up
/// to 256 threads. The decode tiles' 4 x 128 over one warp left each lane
/// 16 elements, 12 of them rows past Lq = 1, and its single warp issued
/// about 165 instructions per split (H200, ncu: at B = 1, S = 128 the
/// combine took 85 us against the split kernel's 22). Where no thread grid
/// of the larger workgroup maps the tiles, one of BLOCK_N = D is tried (the
/// combine has no S tile), then fewer threads, down to the split kernel's.
/// It has no LDS tile (fa.merge_splits' scratch is its lowering's): no
/// padding, no K/V slot.
TileConfig TileBuilder::combineConfig() const {
  constexpr int64_t kCombineFloatsPerThread = 4, kCombineMaxThreads = 256;
  TileConfig c = config;
  c.stages = 1;
  c.ldsPad = 0; // registers only: no LDS tile to pad or share
  c.kvShared = false;
  const int64_t wanted =
      std::min(kCombineMaxThreads, config.blockM * headDim /
                                       kCombineFloatsPerThread) /
      target.waveSize;
  for (int64_t w = wanted; w > config.waves; --w)
    for (int64_t bn : {config.blockN, headDim})
      if (chooseThreadMapping(config.blockM, bn, headDim, w * target.waveSize,
                              target.waveSize)) {
        c.waves = w;
        c.blockN = bn;
        return c;
      }
  return c;
}

void TileBuilder::buildCombine(AttentionOp op, const OpFacts &facts, Value q,
                               Value k, Value v, Value o, Value lse, Value wsO,
                               Value wsLse) {
  const int64_t bm = config.blockM, d = headDim;
  Type elt = facts.elementType;
  MLIRContext *ctx = b.getContext();
  Value c0 = idx(0), c1 = idx(1);
  Value batch = memref::DimOp::create(b, loc, q, 0);
  Value hq = memref::DimOp::create(b, loc, q, 1);
  Value lq = memref::DimOp::create(b, loc, q, 2);
  Value splits = arith::DivUIOp::create(
      b, loc, memref::DimOp::create(b, loc, wsLse, 0), batch);
  Value numMBlocks = arith::CeilDivUIOp::create(b, loc, lq, idx(bm));

  auto mapping = b.getArrayAttr(
      {gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimX),
       gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimY),
       gpu::GPUBlockMappingAttr::get(ctx, gpu::MappingId::DimZ)});
  auto grid = scf::ForallOp::create(
      b, loc, getAsOpFoldResult(ValueRange{numMBlocks, hq, batch}),
      ValueRange{}, mapping);
  // The combine kernel takes the split kernel's arguments (one ABI).
  SmallVector<Value> roles{q, k, v, o, lse, wsO, wsLse};
  Value cuQ = facts.cuQ;
  if (facts.paged || facts.varlen)
    roles.append({facts.table, facts.seqlens});
  if (facts.paged)
    grid->setAttr("fa.paged", b.getUnitAttr());
  if (facts.varlen) {
    roles.append({cuQ, facts.cuK});
    grid->setAttr("fa.varlen", b.getUnitAttr());
  }
  const TileConfig tiles = combineConfig();
  annotate(grid, op, facts, roles, &tiles);
  grid->setAttr("fa.combine", b.getUnitAttr());

  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(grid.getBody());
  Value mb = grid.getInductionVar(0), h = grid.getInductionVar(1),
        bIdx = grid.getInductionVar(2);
  // At S = 1 the split kernel wrote O and LSE itself: nothing to do.
  Value many =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, splits, c1);
  auto work = scf::IfOp::create(b, loc, TypeRange{}, many,
                                /*withElseRegion=*/false);
  b.setInsertionPointToStart(work.thenBlock());
  Value m0 = arith::MulIOp::create(b, loc, mb, idx(bm));
  // Varlen: the sequence's rows of the workspace (from 0) and of O and LSE
  // (from cu_q[b]).
  Value qStart, lqSeq, wsStart;
  if (cuQ) {
    qStart = seqBound(cuQ, bIdx);
    lqSeq = arith::SubIOp::create(
        b, loc, seqBound(cuQ, arith::AddIOp::create(b, loc, bIdx, c1)), qStart);
    wsStart = c0;
  }
  auto rowsType = f32Tile({bm});
  auto accType = f32Tile({bm, d});
  const double negInf = -std::numeric_limits<double>::infinity();
  const double log2e = 1.4426950408889634;
  Value zeroRows = splat(rowsType, 0.0);
  Value negInfRows = splat(rowsType, negInf);
  Value log2eRows = splat(rowsType, log2e);
  const int64_t threads = tiles.waves * target.waveSize;
  // O = acc / L and LSE = M + ln L (-inf for rows without a key).
  auto finish = [&](Value mFinal, Value lFinal, Value accFinal) {
    auto [out, empty] = normalize(accFinal, lFinal);
    if (!elt.isF32())
      out = arith::TruncFOp::create(b, loc, RankedTensorType::get({bm, d}, elt),
                                    out);
    StoreTileOp::create(b, loc, out, o, bIdx, h, m0, Value(), qStart, lqSeq);
    if (!lse)
      return;
    Value logL = math::Log2Op::create(b, loc, lFinal);
    Value lnL =
        arith::MulFOp::create(b, loc, logL, splat(rowsType, std::log(2.0)));
    Value val = arith::AddFOp::create(b, loc, mFinal, lnL);
    val = arith::SelectOp::create(b, loc, empty, negInfRows, val);
    StoreTileOp::create(b, loc, val, lse, bIdx, h, m0, Value(), qStart, lqSeq);
  };
  // The loop below: each trip merges `unroll` splits with one rescale:
  // their loads do not depend on each other, so they are in flight
  // together, and the rescale of O is paid once per trip. (On the H200
  // unrolling alone changed little: with one warp holding 16 elements a
  // lane, the instructions per split were the cost, which combineConfig's
  // workgroup cut.) A trip past the last split loads the last one again
  // and weighs it 0. The loaded tiles take at most a third of the
  // registers a thread has at the target's occupancy goal, so that the
  // wide prefill tiles (64 x 128 over 256 threads on gfx906) keep one split
  // per trip and their registers (two spilled a VGPR at 2 waves per SIMD).
  constexpr int64_t kCombineMaxUnroll = 8;
  const int64_t perThread = (bm * d + threads - 1) / threads;
  const int64_t loadedMost =
      target.maxRegsPerLane / std::max<int64_t>(1, target.occupancyGoal) / 3;
  int64_t unroll = 1;
  while (unroll < kCombineMaxUnroll && 2 * unroll * perThread <= loadedMost)
    unroll *= 2;
  // fa.merge_splits where the loop would take more than one trip and the
  // grid leaves CUs without a workgroup (decode at small B: one wave's
  // serial walk over the splits was the combine's time); the loop where
  // the grid fills the chip, whose throughput the merge's second phase and
  // barrier would cost (MI50 timing model v2, docs/gfx906-timing.md).
  if (mergesSplits(facts.headDim, threads)) {
    Value workgroups = arith::MulIOp::create(
        b, loc, arith::MulIOp::create(b, loc, numMBlocks, hq), batch);
    Value spread = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ugt, splits,
                              idx(unroll)),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, workgroups,
                              idx(target.computeUnits)));
    auto branch = scf::IfOp::create(b, loc, TypeRange{}, spread,
                                    /*withElseRegion=*/true);
    b.setInsertionPointToStart(branch.thenBlock());
    auto merged =
        MergeSplitsOp::create(b, loc, rowsType, rowsType, accType, wsO, wsLse,
                              bIdx, h, m0, splits, batch, wsStart, lqSeq);
    Value mFinal = merged.getM(), lFinal = merged.getL(),
          accFinal = merged.getAcc();
    // The sinks, once: M' = max(M, sink), L' = L·e^(M - ref) + e^(sink -
    // ref), acc' = acc·e^(M - ref), ref = M' (0 where M' = -inf).
    if (facts.sinks) {
      Value sink =
          LoadTileOp::create(b, loc, rowsType, facts.sinks, bIdx, h, m0,
                             Value(), Value(), Value(), qStart, lqSeq);
      Value m = arith::MaximumFOp::create(b, loc, mFinal, sink);
      Value none = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OEQ, m,
                                         negInfRows);
      Value ref = arith::SelectOp::create(b, loc, none, zeroRows, m);
      auto expOf = [&](Value x) -> Value {
        return math::Exp2Op::create(
            b, loc,
            arith::MulFOp::create(b, loc, arith::SubFOp::create(b, loc, x, ref),
                                  log2eRows));
      };
      Value alpha = expOf(mFinal);
      lFinal = arith::AddFOp::create(
          b, loc, arith::MulFOp::create(b, loc, lFinal, alpha), expOf(sink));
      accFinal =
          arith::MulFOp::create(b, loc, accFinal, rowBroadcast(alpha, d));
      mFinal = m;
    }
    finish(mFinal, lFinal, accFinal);
    b.setInsertionPointToStart(branch.elseBlock());
  }
  // Online softmax over the splits: M the largest lse_s so far, L the sum
  // of exp(lse_s - M), acc the sum of exp(lse_s - M) * O_s. With sinks the
  // row's sink starts it, once, for all splits: M = sink, L = 1.
  Value mInit = negInfRows, lInit = zeroRows;
  if (facts.sinks) {
    mInit = LoadTileOp::create(b, loc, rowsType, facts.sinks, bIdx, h, m0,
                               Value(), Value(), Value(), qStart, lqSeq);
    lInit = splat(rowsType, 1.0);
  }
  Value trips = unroll == 1
                    ? splits
                    : arith::CeilDivUIOp::create(b, loc, splits, idx(unroll));
  Value lastSplit =
      unroll == 1 ? Value() : arith::SubIOp::create(b, loc, splits, c1);
  auto loop = scf::ForOp::create(
      b, loc, c0, trips, c1, ValueRange{mInit, lInit, splat(accType, 0.0)},
      [&](OpBuilder &nb, Location l, Value trip, ValueRange iter) {
        Value mOld = iter[0], lOld = iter[1], acc = iter[2];
        Value first =
            unroll == 1 ? trip : arith::MulIOp::create(nb, l, trip, idx(unroll));
        SmallVector<Value> lses, valids, outs;
        for (int64_t i = 0; i < unroll; ++i) {
          Value s = first, valid;
          if (unroll > 1) {
            s = arith::AddIOp::create(nb, l, first, idx(i));
            valid = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult, s,
                                          splits);
            s = arith::MinUIOp::create(nb, l, s, lastSplit);
          }
          Value at = arith::AddIOp::create(
              nb, l, arith::MulIOp::create(nb, l, s, batch), bIdx);
          Value lseS =
              LoadTileOp::create(nb, l, rowsType, wsLse, at, h, m0, Value(),
                                 Value(), Value(), wsStart, lqSeq);
          // (The planted bug weighs the padding as a split.)
          if (valid && bug != PlantedBug::CombineTailWeighed)
            lseS = arith::SelectOp::create(nb, l, valid, lseS, negInfRows);
          lses.push_back(lseS);
          valids.push_back(valid);
          outs.push_back(LoadTileOp::create(nb, l, accType, wsO, at, h, m0,
                                            Value(), Value(), Value(), wsStart,
                                            lqSeq));
        }
        // maxnumf: one v_max_f32 a split where maximumf's NaN test cost
        // three more (a NaN LSE still reaches O through its weight).
        Value mNew = mOld;
        for (Value lseS : lses)
          mNew = arith::MaxNumFOp::create(nb, l, mNew, lseS);
        // Every split so far empty: reference 0, so that exp gives 0.
        Value noKey = arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ,
                                            mNew, negInfRows);
        Value mRef = arith::SelectOp::create(nb, l, noKey, zeroRows, mNew);
        auto expOf = [&](Value x) -> Value {
          return math::Exp2Op::create(
              nb, l,
              arith::MulFOp::create(
                  nb, l, arith::SubFOp::create(nb, l, x, mRef), log2eRows));
        };
        // (The planted bug adds the splits up as they are.)
        const bool noRescale = bug == PlantedBug::CombineNoRescale;
        Value one = splat(rowsType, 1.0);
        Value alpha = noRescale ? one : expOf(mOld);
        Value lNew = arith::MulFOp::create(nb, l, lOld, alpha);
        Value accNew =
            arith::MulFOp::create(nb, l, acc, rowBroadcast(alpha, d));
        for (int64_t i = 0; i < unroll; ++i) {
          Value w = !noRescale ? expOf(lses[i])
                    : valids[i]
                        ? arith::SelectOp::create(nb, l, valids[i], one,
                                                  zeroRows)
                              .getResult()
                        : one;
          lNew = arith::AddFOp::create(nb, l, lNew, w);
          accNew = math::FmaOp::create(nb, l, outs[i], rowBroadcast(w, d),
                                       accNew);
        }
        scf::YieldOp::create(nb, l, ValueRange{mNew, lNew, accNew});
      });
  finish(loop.getResult(0), loop.getResult(1), loop.getResult(2));
}

namespace {
struct FaTilePass : public mlir::fa::impl::FaTilePassBase<FaTilePass> {
  using FaTilePassBase::FaTilePassBase;
  void runOnOperation() override;

private:
  /// The tile configuration of `op` and the D of its tiles (`tileDim`).
  FailureOr<TileConfig> configFor(AttentionOp op, const TargetDesc &t,
                                  int64_t &tileDim);
  int64_t tileHeadDim(AttentionOp op, const TargetDesc &t, int64_t eltBytes,
                      int64_t sourceBytes, std::optional<bool> kvShared,
                      int64_t blockM, int64_t blockN, int64_t waves);
  LogicalResult tileFunction(func::FuncOp func, const TargetDesc &t);

  PlantedBug plantedBug = PlantedBug::None;
};
} // namespace

/// The head dimension of the tiles: D where the tiles serve it (the given
/// tiles: some thread grid splits D's columns; automatic tiles: some
/// configuration fits the budget, single-buffered), else D rounded up to a
/// multiple of 8 as FlashAttention does, or of 16, 32 or 64 (a decode
/// tile's 16 thread columns), the first that serves. The columns
/// past D are zero in LDS and registers (the copies fill them so) and are
/// never stored, so that Q·Kᵀ and P·V are those of D. An odd D splits only
/// over one lane per row; an even D whose half is odd over two, which
/// leaves too many columns per thread at large D (D=190).
int64_t FaTilePass::tileHeadDim(AttentionOp op, const TargetDesc &t,
                                int64_t eltBytes, int64_t sourceBytes,
                                std::optional<bool> shared, int64_t blockM,
                                int64_t blockN, int64_t waves) {
  const int64_t d = op.getHeadDim();
  const int64_t threads =
      (waves ? waves : std::max<int64_t>(1, 256 / t.waveSize)) * t.waveSize;
  auto serves = [&](int64_t width) {
    if (!blockM && !blockN)
      return chooseTileConfig(t, width, eltBytes, 1, waves, shared, sourceBytes)
          .has_value();
    return chooseThreadMapping(blockM ? blockM : blockN,
                               blockN ? blockN : blockM, width, threads,
                               t.waveSize)
        .has_value();
  };
  if (serves(d))
    return d;
  // The narrowest padding that serves: a multiple of 8 first, then of 16
  // (the 16 thread columns of a 4-row decode tile), 32 and 64.
  for (int64_t multiple : {8, 16, 32, 64}) {
    const int64_t padded = llvm::alignTo(d, multiple);
    if (padded != d && serves(padded))
      return padded;
  }
  // Where no padding serves either, the error names D as it is.
  return d;
}

FailureOr<TileConfig> FaTilePass::configFor(AttentionOp op, const TargetDesc &t,
                                            int64_t &tileDim) {
  auto qType = op.getQuery().getType();
  Type elt = qType.getElementType();
  int64_t eltBytes = elt.getIntOrFloatBitWidth() / 8;
  // Bytes per element in LDS: a target that widens 16-bit tiles keeps them
  // as f32 there (fa-promote widen=auto).
  const int64_t sourceBytes = eltBytes;
  const bool decode = kvSplits == "runtime";
  const int64_t autoStages = decode ? t.decodeStages : t.defaultStages;
  const bool widened =
      (decode ? t.decodeWidenLds : t.widenLds) && eltBytes == 2;
  if (widened)
    eltBytes = 4;
  std::string eltName;
  llvm::raw_string_ostream(eltName) << elt;

  if (elt.isBF16() && !t.nativeBf16 && !allowBf16)
    return op.emitOpError()
           << "bf16 is software-emulated on " << t.name
           << " (no native bf16 arithmetic): slow and lossy; use f16, or "
              "pass allow-bf16 to accept it";
  if (stages < 0 || stages > 2)
    return op.emitOpError()
           << "stages must be 0 (auto), 1 or 2, got " << stages.getValue();
  if (kvSplits != "off" && kvSplits != "runtime" && kvSplits != "auto")
    return op.emitOpError() << "kv-splits must be off, runtime or auto, got '"
                            << kvSplits.getValue() << "'";
  if (gqaPack != "off" && gqaPack != "on")
    return op.emitOpError()
           << "gqa-pack must be off or on, got '" << gqaPack.getValue() << "'";
  if (kvShared != "auto" && kvShared != "on" && kvShared != "off")
    return op.emitOpError() << "kv-shared must be auto, on or off, got '"
                            << kvShared.getValue() << "'";
  if (blockM < 0 || blockN < 0 || waves < 0)
    return op.emitOpError()
           << "tile sizes must be positive, got block-m=" << blockM.getValue()
           << " block-n=" << blockN.getValue() << " waves=" << waves.getValue();
  // No workgroup holds more (the budget's products stay far from overflow).
  constexpr int64_t kMaxBlock = 1024, kMaxWaves = 64;
  if (blockM > kMaxBlock || blockN > kMaxBlock || waves > kMaxWaves)
    return op.emitOpError()
           << "tile sizes must be at most " << kMaxBlock
           << " rows (block-m, block-n) and " << kMaxWaves
           << " waves, got block-m=" << blockM.getValue()
           << " block-n=" << blockN.getValue() << " waves=" << waves.getValue();

  // A split-KV kernel without explicit tiles takes the target's decode
  // tiles (few Q rows, a small workgroup), checked like explicit ones;
  // with more waves than the decode tiles have, each wave keeps its share
  // of the keys (the key block grows with the waves).
  int64_t blockM = this->blockM, blockN = this->blockN, waves = this->waves;
  const bool decodeTiles = blockM == 0 && blockN == 0 && kvSplits == "runtime";
  if (decodeTiles) {
    blockM = t.decodeBlockM;
    blockN = t.decodeBlockN;
    if (!waves)
      waves = t.decodeWaves;
    else if (waves > t.decodeWaves)
      blockN = t.decodeBlockN * ((waves + t.decodeWaves - 1) / t.decodeWaves);
  }

  // D as the tiles have it, and as the messages name it.
  std::optional<bool> shared;
  if (kvShared == "on" || kvShared == "off")
    shared = kvShared == "on";
  else if (decodeTiles && t.decodeKvShared)
    shared = true;
  const int64_t d = tileDim =
      tileHeadDim(op, t, eltBytes, sourceBytes, shared, blockM, blockN, waves);
  std::string dName = std::to_string(op.getHeadDim());
  if (d != op.getHeadDim()) {
    dName += " (padded to " + std::to_string(d) + ")";
    op.emitRemark() << "fa-tile: D=" << op.getHeadDim() << " padded to " << d
                    << " in LDS and registers: no thread grid of "
                    << (waves ? waves
                              : std::max<int64_t>(1, 256 / t.waveSize)) *
                           t.waveSize
                    << " threads that fits the budget splits D="
                    << op.getHeadDim() << "; the " << d - op.getHeadDim()
                    << (d - op.getHeadDim() == 1 ? " column past D is"
                                                 : " columns past D are")
                    << " zero and never stored";
  }

  TileConfig config;
  if (blockM == 0 && blockN == 0) {
    // stages=0: double-buffered (where the target's default is) unless that
    // costs occupancy or tile size.
    auto chosen = chooseTileConfig(t, d, eltBytes, stages ? stages : autoStages,
                                   waves, shared, sourceBytes);
    if (stages == 0 && autoStages == 2) {
      auto single =
          chooseTileConfig(t, d, eltBytes, 1, waves, shared, sourceBytes);
      auto worth = [&](const TileConfig &c) {
        Budget b = computeBudget(t, c, d, eltBytes, sourceBytes);
        return std::make_pair(creditedOccupancy(t, b), c.blockM * c.blockN);
      };
      if (single && (!chosen || worth(*chosen) < worth(*single))) {
        op.emitRemark() << "fa-tile: single-buffered: double buffering "
                           "would cost occupancy or tile size here ("
                        << single->blockM << "x" << single->blockN
                        << " with stages=1)";
        chosen = single;
      }
    }
    if (!chosen)
      return op.emitOpError()
             << "no tile configuration for D=" << dName << " " << eltName
             << " fits " << t.name << " (" << t.ldsBytes << " bytes of LDS, "
             << t.maxRegsPerLane << " registers per thread)";
    config = *chosen;
  } else {
    config.blockM = blockM ? blockM : blockN;
    config.blockN = blockN ? blockN : blockM;
    config.waves = waves ? waves : std::max<int64_t>(1, 256 / t.waveSize);
    config.stages = stages ? stages : autoStages;
    if (shared) {
      config.kvShared = *shared;
    } else {
      // Share when that is what lets LDS reach the occupancy goal, or what
      // lets the tiles fit at all (the automatic D=256 64x32 tile given
      // back explicitly: 69632 bytes with K and V apart).
      TileConfig oneSlot = config;
      oneSlot.kvShared = true;
      config.ldsPad = oneSlot.ldsPad = reservedLdsPad(eltBytes);
      Budget apartBudget = computeBudget(t, config, d, eltBytes);
      Budget sharedBudget = computeBudget(t, oneSlot, d, eltBytes);
      int64_t apart = apartBudget.ldsWavesPerSimd;
      int64_t together = sharedBudget.ldsWavesPerSimd;
      config.kvShared =
          (apart && apart < t.occupancyGoal && together > apart) ||
          (!apartBudget.fitsLds && sharedBudget.fitsLds);
      config.ldsPad = 0;
    }
  }

  if (stages == 0 && config.stages == 2 && (blockM || blockN)) {
    // Explicit tiles: double-buffered where the extra registers keep the
    // occupancy of single buffering (up to the target's goal).
    TileConfig single = config;
    single.stages = 1;
    Budget one = computeBudget(t, single, d, eltBytes, sourceBytes);
    Budget two = computeBudget(t, config, d, eltBytes, sourceBytes);
    auto valid = [&](const Budget &b) {
      return b.fitsLds && b.mappable &&
             (b.fitsRegs || !t.registerEstimateBinds);
    };
    if (!valid(one)) {
      config = single; // the errors below are about the tiles themselves
    } else if (!valid(two) ||
               creditedOccupancy(t, two) < creditedOccupancy(t, one)) {
      op.emitRemark() << "fa-tile: single-buffered: the " << two.prefetchRegs
                      << " registers per thread that hold K/V block n+1 "
                         "would lower the occupancy (estimate "
                      << two.regsPerThread << " registers)";
      config = single;
    }
  }
  Budget budget = computeBudget(t, config, d, eltBytes, sourceBytes);
  if (!budget.fitsLds)
    return op.emitOpError()
           << "BLOCK_M=" << config.blockM << " BLOCK_N=" << config.blockN
           << " with D=" << dName << " " << eltName << " needs "
           << budget.ldsBytes << " bytes of LDS (" << budget.ldsWithMargin
           << " with the " << static_cast<int>(kLdsMargin * 100)
           << "% margin), " << t.name << " has " << t.ldsBytes;
  if (!budget.mappable)
    return op.emitOpError()
           << "BLOCK_M=" << config.blockM << " BLOCK_N=" << config.blockN
           << " D=" << dName << " cannot be split over "
           << config.waves * t.waveSize << " threads (" << config.waves
           << " waves of " << t.waveSize << ", at most " << t.maxThreads
           << " threads)";
  if (!budget.fitsRegs && t.registerEstimateBinds)
    return op.emitOpError()
           << "BLOCK_M=" << config.blockM << " BLOCK_N=" << config.blockN
           << " with D=" << dName << " needs about " << budget.regsPerThread
           << " registers per thread (estimate"
           << (budget.prefetchRegs
                   ? ", " + std::to_string(budget.prefetchRegs) +
                         " of them for double buffering"
                   : std::string())
           << "), " << t.name << " has " << t.maxRegsPerLane
           << (budget.prefetchRegs ? "; use stages=1 or shrink BLOCK_M"
                                   : "; shrink BLOCK_M before accepting "
                                     "spills");
  if (report)
    op.emitRemark() << formatBudget(t, config, budget, d, eltName)
                    << (widened ? "\n  16-bit tiles are kept as f32 in LDS "
                                  "(fa-promote widen=auto)"
                                : "");
  return config;
}

LogicalResult FaTilePass::tileFunction(func::FuncOp func, const TargetDesc &t) {
  SmallVector<AttentionOp> ops;
  func.walk([&](AttentionOp op) { ops.push_back(op); });
  if (ops.empty())
    return success();

  // A kernel function: attention operands are its arguments (used by
  // nothing else) and its results are what it returns.
  auto ret = cast<func::ReturnOp>(func.getBody().back().getTerminator());
  for (AttentionOp op : ops) {
    if (op->getBlock() != &func.getBody().front())
      return op.emitOpError() << "must be at the top level of its function";
    for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
      auto arg = dyn_cast<BlockArgument>(operand);
      if (!arg || arg.getOwner() != &func.getBody().front())
        return op.emitOpError()
               << "operand #" << i
               << " must be an argument of the kernel function";
      // Each operand's role, from the op's operand segments.
      auto nameOf = [&](unsigned index) -> StringRef {
        const char *const roles[] = {
            "query",        "key",          "value",        "block table",
            "cache lengths", "cu_seqlens_q", "cu_seqlens_k", "alibi slopes",
            "sinks"};
        for (unsigned r = 0; r < std::size(roles); ++r) {
          auto [start, length] = op.getODSOperandIndexAndLength(r);
          if (index >= start && index < start + length)
            return roles[r];
        }
        return "operand";
      };
      for (auto [j, other] : llvm::enumerate(op->getOperands().take_front(i)))
        if (other == operand)
          return op.emitOpError()
                 << "operands #" << j << " (" << nameOf(j) << ") and #" << i
                 << " (" << nameOf(i)
                 << ") are the same kernel argument; the kernel ABI has one "
                    "buffer per role: pass them as separate arguments";
      for (Operation *user : arg.getUsers())
        if (!isa<AttentionOp>(user))
          return op.emitOpError() << "kernel argument #" << arg.getArgNumber()
                                  << " has a use other than fa.attention";
    }
    for (Value result : op->getResults())
      for (Operation *user : result.getUsers())
        if (user != ret)
          return op.emitOpError()
                 << "results may only be returned by the kernel function";
  }
  for (Value v : ret.getOperands())
    if (!v.getDefiningOp<AttentionOp>())
      return ret.emitOpError()
             << "a kernel function may only return fa.attention results";
  // Every output is returned exactly once. Checked before anything is
  // rewritten so that a rejected function is left as it was.
  llvm::SmallDenseSet<Value> returned(ret.getOperands().begin(),
                                      ret.getOperands().end());
  if (returned.size() != ret.getNumOperands())
    return ret.emitOpError() << "returns the same value twice";
  for (AttentionOp op : ops)
    if (!returned.contains(op.getOutput()))
      return op.emitOpError() << "output is not returned";

  // kv-splits=auto: split-KV with the dense tiles where the target says so
  // (TargetDesc::prefillKvSplits), for one dense attention that is not
  // traced (the trace words follow the dense ABI).
  const bool split =
      kvSplits == "runtime" ||
      (kvSplits == "auto" && t.prefillKvSplits && !trace && ops.size() == 1 &&
       !ops[0].isPaged() && !ops[0].isVarlen());
  if (split && ops.size() != 1)
    return ops[1].emitOpError()
           << "kv-splits=runtime takes one fa.attention per kernel function "
              "(the kernel ABI has one split-KV workspace), got "
           << ops.size();

  // The trace words follow the dense ABI's (KernelAbi.h): one traced
  // attention per kernel, dense.
  if (trace) {
    if (ops.size() != 1)
      return ops[1].emitOpError()
             << "trace=true takes one fa.attention per kernel function (the "
                "kernel ABI has one trace buffer), got "
             << ops.size();
    if (split || gqaPack == "on" || ops[0].isPaged() || ops[0].isVarlen())
      return ops[0].emitOpError()
             << "trace=true is for dense kernels; this one is "
             << (split              ? "split-KV (kv-splits=runtime)"
                 : gqaPack == "on"  ? "GQA-packed (gqa-pack=on)"
                 : ops[0].isPaged() ? "paged"
                                    : "varlen");
    if (ops[0].getAlibiSlopes() || ops[0].getSinks())
      return ops[0].emitOpError()
             << "trace=true does not take ALiBi or sinks yet (the layer-2 "
                "trace's reference statistics have neither)";
  }
  // ALiBi slopes and sinks are words of the kernel ABI: one attention.
  if (ops.size() > 1)
    for (AttentionOp op : ops)
      if (op.getAlibiSlopes() || op.getSinks())
        return op.emitOpError()
               << "alibi and sinks take one fa.attention per kernel function "
                  "(the kernel ABI has one set of head words), got "
               << ops.size();

  SmallVector<TileConfig> configs;
  SmallVector<int64_t> tileDims;
  for (AttentionOp op : ops) {
    int64_t tileDim = 0;
    FailureOr<TileConfig> config = configFor(op, t, tileDim);
    if (failed(config))
      return failure();
    configs.push_back(*config);
    tileDims.push_back(tileDim);
  }

  SmallVector<TileBuilder::OpFacts> facts;
  for (AttentionOp op : ops)
    facts.push_back(TileBuilder::factsOf(op));

  // Signature: tensor args -> memrefs, results -> trailing output memrefs.
  // From here on the ops' typed operand accessors (getQuery(), ...) no
  // longer hold: their operands are memrefs.
  // A varlen attention's Q, K, V, O and LSE become the kernel's views of
  // the packed rows (varlenViewType); a mixed batch's K and V stay the
  // paged cache.
  Block &entry = func.getBody().front();
  llvm::SmallDenseSet<Value> viewed;
  for (AttentionOp op : ops)
    if (op.isVarlen()) {
      for (Value v : op->getOperands().take_front(op.isPaged() ? 1 : 3))
        viewed.insert(v);
      for (Value v : op->getResults())
        viewed.insert(v);
    }
  auto argType = [&](Value v, RankedTensorType tt) {
    return viewed.contains(v) ? varlenViewType(tt) : kernelMemRefType(tt);
  };
  for (BlockArgument arg : entry.getArguments())
    if (auto tt = dyn_cast<RankedTensorType>(arg.getType()))
      arg.setType(argType(arg, tt));
  DenseMap<Value, Value> outArg;
  for (Value v : ret.getOperands()) {
    auto tt = cast<RankedTensorType>(v.getType());
    outArg[v] = entry.addArgument(argType(v, tt), v.getLoc());
  }
  // Split-KV: the workspace, f32 [S * B, Hq, Lq, D] and [S * B, Hq, Lq],
  // after the outputs.
  Value wsO, wsLse;
  if (split) {
    const int64_t dyn = ShapedType::kDynamic;
    Type f32 = Float32Type::get(func.getContext());
    Location l = ops.front().getLoc();
    wsO = entry.addArgument(kernelMemRefType(RankedTensorType::get(
                                {dyn, dyn, dyn, facts.front().headDim}, f32)),
                            l);
    wsLse = entry.addArgument(
        kernelMemRefType(RankedTensorType::get({dyn, dyn, dyn}, f32)), l);
  }
  // Trace: f32 [n_blocks * (2 + D)] and the traced batch, head and row.
  TileBuilder::Trace traceArgs;
  if (trace) {
    Location l = ops.front().getLoc();
    traceArgs.buffer =
        entry.addArgument(MemRefType::get({ShapedType::kDynamic},
                                          Float32Type::get(func.getContext())),
                          l);
    traceArgs.batch = entry.addArgument(IndexType::get(func.getContext()), l);
    traceArgs.head = entry.addArgument(IndexType::get(func.getContext()), l);
    traceArgs.row = entry.addArgument(IndexType::get(func.getContext()), l);
  }
  func.setType(
      FunctionType::get(func.getContext(), entry.getArgumentTypes(), {}));
  // The old argument and result attributes no longer fit the signature.
  // (setAllArgAttrs({}) asserts one dictionary per argument.)
  func.removeArgAttrsAttr();
  func.removeResAttrsAttr();

  OpBuilder b(ret);
  for (auto [op, config, tileDim, opFacts] :
       llvm::zip(ops, configs, tileDims, facts)) {
    Value o = outArg.lookup(op.getOutput());
    Value lse = op.getLse() ? outArg.lookup(op.getLse()) : Value();
    TileBuilder builder(b, op.getLoc(), config, tileDim, t, plantedBug,
                        gqaPack == "on");
    builder.trace = traceArgs;
    builder.build(op, opFacts, op->getOperand(0), op->getOperand(1),
                  op->getOperand(2), o, lse, wsO, wsLse);
    if (split)
      builder.buildCombine(op, opFacts, op->getOperand(0), op->getOperand(1),
                           op->getOperand(2), o, lse, wsO, wsLse);
  }
  func::ReturnOp::create(b, ret.getLoc());
  ret.erase();
  for (AttentionOp op : ops)
    op.erase();
  return success();
}

void FaTilePass::runOnOperation() {
  const TargetDesc *t = lookupTarget(target);
  if (!t) {
    getOperation().emitError() << "unknown target '" << target
                               << "'; known targets: " << knownTargetNames();
    return signalPassFailure();
  }
  if (std::string why =
          resolvePlantedBug(testPlantBug, getArgument(), plantedBug);
      !why.empty()) {
    getOperation().emitError() << why;
    return signalPassFailure();
  }
  if (mergeSplits != "auto" && mergeSplits != "on" && mergeSplits != "off") {
    getOperation().emitError() << "merge-splits must be auto, on or off, got '"
                               << mergeSplits << "'";
    return signalPassFailure();
  }
  // merge-splits on/off overrides the target's choice (TargetDesc::
  // mergeSplits); the combine's tile still decides whether it can merge.
  TargetDesc desc = *t;
  if (mergeSplits != "auto")
    desc.mergeSplits = mergeSplits == "on";
  for (auto func :
       llvm::make_early_inc_range(getOperation().getOps<func::FuncOp>()))
    if (failed(tileFunction(func, desc)))
      return signalPassFailure();
}
