//===- KernelLowering.cpp - Tile IR -> per-thread kernel code -------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the thread-level lowering used by fa-lower-to-gpu
// (see KernelLowering.h for the fragment layout). Each tile op becomes:
//
//   fa.load_tile    cooperative copy global -> LDS (KernelMemory.cpp):
//                   16-byte vectors when the strides and the base are
//                   aligned, scalars otherwise; rows past the end are zero
//   fa.tile_dot     a loop over the reduction dimension: each thread loads
//                   its RM lhs values and C/TC rhs values from LDS and does
//                   one f32 vector FMA over its fragment; a register operand
//                   (P) is first written to LDS; the reduction runs over
//                   pairs (the shape of v_dot2_f32_f16)
//   fa.row_reduce   a reduction within the thread, then xor shuffles over
//                   the TC lanes that share a row
//   fa.row_broadcast / fa.tile_mask / arith / math: fragment-wise vector ops
//   fa.store_tile   each thread stores its rows (bounds-checked)
//
//===----------------------------------------------------------------------===//

#include "compiler/KernelLowering.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::fa;

KernelLowering::KernelLowering(scf::ForallOp grid, gpu::GPUFuncOp kernel,
                               const TargetDesc &target, TileConfigAttr config,
                               ThreadMapping mapping, ArrayRef<int64_t> roles,
                               PlantedBug bug)
    : grid(grid), kernel(kernel), target(target), config(config),
      mapping(mapping), roles(roles), bug(bug), b(kernel.getContext()),
      loc(grid.getLoc()) {}

Value KernelLowering::idx(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value KernelLowering::rowOf(int64_t i) {
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, tr, idx(mapping.rm)), idx(i));
}

Value KernelLowering::colOf(int64_t j) {
  return arith::AddIOp::create(b, loc, tc, idx(j * mapping.tc));
}

Value KernelLowering::rowLimit(const Global &g) {
  return (g.role == kK || g.role == kV) ? sizes[4] : sizes[3];
}

Value KernelLowering::lds(Type elt, int64_t rows, int64_t cols) {
  auto space =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  auto type = MemRefType::get({rows, cols + config.getLdsPad()}, elt,
                              MemRefLayoutAttrInterface(), space);
  return kernel.addWorkgroupAttribution(type, loc);
}

void KernelLowering::barrierIfNeeded() {
  if (!pendingBarrier)
    return;
  gpu::BarrierOp::create(b, loc);
  pendingBarrier = false;
}

VectorType KernelLowering::fragmentType(RankedTensorType t) {
  return VectorType::get({mapping.rm * colsPerThread(t)}, t.getElementType());
}

FailureOr<Value> KernelLowering::scalar(Value v) {
  if (Value mapped = scalars.lookupOrNull(v))
    return mapped;
  Operation *def = v.getDefiningOp();
  if (!def) {
    // The kernel's only inputs are the ABI's buffers, sizes and strides.
    failure = "a block argument from outside the grid cannot be passed to "
              "the kernel";
    return mlir::failure();
  }
  if (grid->isProperAncestor(def)) {
    failure = "value used before it was lowered";
    return mlir::failure();
  }
  // Defined outside the grid: recompute it in the kernel's preamble.
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointAfter(preambleEnd);
  if (auto dim = dyn_cast<memref::DimOp>(def)) {
    auto it = globals.find(dim.getSource());
    std::optional<int64_t> d = dim.getConstantIndex();
    if (it == globals.end() || !d) {
      failure = "memref.dim of a value that is not a kernel buffer";
      return mlir::failure();
    }
    int role = it->second.role;
    bool kv = role == kK || role == kV;
    Value result;
    switch (*d) {
    case 0:
      result = sizes[0];
      break;
    case 1:
      result = kv ? sizes[2] : sizes[1];
      break;
    case 2:
      result = kv ? sizes[4] : sizes[3];
      break;
    default: // D: static
      result = idx(cast<MemRefType>(dim.getSource().getType()).getShape()[*d]);
      preambleEnd = result.getDefiningOp();
    }
    scalars.map(v, result);
    return result;
  }
  if (!isMemoryEffectFree(def) || def->getNumRegions() != 0 ||
      llvm::any_of(def->getResultTypes(), llvm::IsaPred<ShapedType>)) {
    failure = "cannot recompute '" + def->getName().getStringRef().str() +
              "' inside the kernel";
    return mlir::failure();
  }
  for (Value operand : def->getOperands())
    if (mlir::failed(scalar(operand)))
      return mlir::failure();
  b.setInsertionPointAfter(preambleEnd);
  preambleEnd = b.clone(*def, scalars);
  return scalars.lookup(v);
}

FailureOr<Value> KernelLowering::fragment(Value v) {
  if (Value f = fragments.lookup(v))
    return f;
  auto type = dyn_cast<RankedTensorType>(v.getType());
  DenseElementsAttr dense;
  if (type && type.getDimSize(0) == config.getBlockM() &&
      matchPattern(v, m_Constant(&dense)) && dense.isSplat()) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointAfter(preambleEnd);
    Value c = arith::ConstantOp::create(
        b, loc,
        DenseElementsAttr::get(fragmentType(type),
                               dense.getSplatValue<Attribute>()));
    preambleEnd = c.getDefiningOp();
    fragments[v] = c;
    return c;
  }
  failure = "tensor value has no per-thread fragment";
  return mlir::failure();
}

//===----------------------------------------------------------------------===//
// Compute
//===----------------------------------------------------------------------===//

Value KernelLowering::tileDot(TileDotOp op) {
  Value lhs = ldsTiles.lookup(op.getLhs());
  if (!lhs) {
    lhs = spillToLds(*fragment(op.getLhs()), op.getLhs().getType());
    ldsTiles[op.getLhs()] = lhs;
  }
  Value rhs = ldsTiles.lookup(op.getRhs());
  barrierIfNeeded();

  auto resultType = op.getResult().getType();
  VectorType fragType = fragmentType(resultType);
  const int64_t cc = colsPerThread(resultType);
  const int64_t k = op.getLhs().getType().getDimSize(1);
  Value init = op.getAcc()
                   ? *fragment(op.getAcc())
                   : Value(arith::ConstantOp::create(
                         b, loc, cast<TypedAttr>(b.getZeroAttr(fragType))));
  SmallVector<Value> rows, cols;
  for (int64_t i = 0; i < mapping.rm; ++i)
    rows.push_back(rowOf(i));
  for (int64_t j = 0; j < cc; ++j)
    cols.push_back(colOf(j));
  bool transpose = op.getTransposeRhs();
  // The reduction runs over pairs (kk, kk+1) so that each product has the
  // shape of v_dot2_f32_f16: acc + a0*b0 + a1*b1 with f16 pairs, f32 sums.
  // A pair that is contiguous in LDS (both operands of Q·Kᵀ, P of P·V) is
  // one 4-byte load when the padded rows keep it 4-byte aligned.
  const int64_t step = k % 2 == 0 ? 2 : 1;
  auto rowElems = [](Value buf) {
    return cast<MemRefType>(buf.getType()).getDimSize(1);
  };
  Type elt = cast<MemRefType>(lhs.getType()).getElementType();
  auto pairType = VectorType::get({2}, elt);
  auto pairAlign = llvm::MaybeAlign(2 * elt.getIntOrFloatBitWidth() / 8);
  auto loop = scf::ForOp::create(
      b, loc, idx(0), idx(k), idx(step), ValueRange{init},
      [&](OpBuilder &nb, Location l, Value kk, ValueRange iter) {
        auto toF32 = [&](Value v) -> Value {
          return v.getType().isF32()
                     ? v
                     : Value(arith::ExtFOp::create(nb, l, nb.getF32Type(), v));
        };
        Value kk1 =
            step == 2
                ? Value(arith::AddIOp::create(
                      nb, l, kk, arith::ConstantIndexOp::create(nb, l, 1)))
                : Value();
        // Loads elements (r, kk) [and (r, kk+1)] of a row-major LDS tile.
        auto loadAlongRow = [&](Value buf, Value r) -> SmallVector<Value> {
          if (step == 1)
            return {
                toF32(memref::LoadOp::create(nb, l, buf, ValueRange{r, kk}))};
          if (rowElems(buf) % 2 == 0) {
            Value pair = vector::LoadOp::create(
                nb, l, pairType, buf, ValueRange{r, kk}, false, pairAlign);
            return {toF32(vector::ExtractOp::create(nb, l, pair,
                                                    ArrayRef<int64_t>{0})),
                    toF32(vector::ExtractOp::create(nb, l, pair,
                                                    ArrayRef<int64_t>{1}))};
          }
          return {
              toF32(memref::LoadOp::create(nb, l, buf, ValueRange{r, kk})),
              toF32(memref::LoadOp::create(nb, l, buf, ValueRange{r, kk1}))};
        };
        // a[p][i], b[p][j]: element p of the pair for lhs row i, rhs col j.
        SmallVector<SmallVector<Value>> a(step), bv(step);
        for (int64_t i = 0; i < mapping.rm; ++i) {
          SmallVector<Value> pair = loadAlongRow(lhs, rows[i]);
          for (int64_t p = 0; p < step; ++p)
            a[p].push_back(pair[p]);
        }
        for (int64_t j = 0; j < cc; ++j) {
          if (transpose) {
            SmallVector<Value> pair = loadAlongRow(rhs, cols[j]);
            for (int64_t p = 0; p < step; ++p)
              bv[p].push_back(pair[p]);
          } else {
            bv[0].push_back(toF32(
                memref::LoadOp::create(nb, l, rhs, ValueRange{kk, cols[j]})));
            if (step == 2)
              bv[1].push_back(toF32(memref::LoadOp::create(
                  nb, l, rhs, ValueRange{kk1, cols[j]})));
          }
        }
        Value acc = iter[0];
        for (int64_t p = 0; p < step; ++p) {
          SmallVector<Value> aRep, bRep;
          for (int64_t i = 0; i < mapping.rm; ++i)
            for (int64_t j = 0; j < cc; ++j) {
              aRep.push_back(a[p][i]);
              bRep.push_back(bv[p][j]);
            }
          Value av = vector::FromElementsOp::create(nb, l, fragType, aRep);
          Value bvv = vector::FromElementsOp::create(nb, l, fragType, bRep);
          acc = math::FmaOp::create(nb, l, av, bvv, acc);
        }
        scf::YieldOp::create(nb, l, acc);
      });
  return loop.getResult(0);
}

Value KernelLowering::rowReduce(RowReduceOp op) {
  Value frag = *fragment(op.getInput());
  const int64_t cc = colsPerThread(op.getInput().getType());
  bool isMax = op.getKind() == ReduceKind::max;
  auto combine = [&](Value x, Value y) -> Value {
    if (isMax)
      return arith::MaximumFOp::create(b, loc, x, y);
    return arith::AddFOp::create(b, loc, x, y);
  };
  SmallVector<Value> results;
  for (int64_t i = 0; i < mapping.rm; ++i) {
    // Row i's slice. A shuffle (not extract_strided_slice) lowers directly
    // in every backend's vector-to-LLVM conversion.
    SmallVector<int64_t> lanes;
    for (int64_t j = 0; j < cc; ++j)
      lanes.push_back(i * cc + j);
    Value slice = vector::ShuffleOp::create(b, loc, frag, frag, lanes);
    Value r = vector::ReductionOp::create(
        b, loc,
        isMax ? vector::CombiningKind::MAXIMUMF : vector::CombiningKind::ADD,
        slice);
    // The TC lanes of a row are consecutive lanes of one wave.
    for (int64_t offset = mapping.tc / 2; offset >= 1; offset /= 2) {
      Value other =
          gpu::ShuffleOp::create(b, loc, r, static_cast<int32_t>(offset),
                                 static_cast<int32_t>(target.waveSize),
                                 gpu::ShuffleMode::XOR)
              .getShuffleResult();
      r = combine(r, other);
    }
    results.push_back(r);
  }
  return vector::FromElementsOp::create(
      b, loc, fragmentType(op.getResult().getType()), results);
}

Value KernelLowering::rowBroadcast(RowBroadcastOp op) {
  Value rows = *fragment(op.getInput());
  const int64_t cc = colsPerThread(op.getResult().getType());
  SmallVector<int64_t> mask;
  for (int64_t i = 0; i < mapping.rm; ++i)
    mask.append(cc, i);
  return vector::ShuffleOp::create(b, loc, rows, rows, mask);
}

Value KernelLowering::tileMask(TileMaskOp op) {
  auto type = op.getInput().getType();
  Value frag = *fragment(op.getInput());
  const int64_t cc = colsPerThread(type), n = mapping.rm * cc;
  auto indexVec = VectorType::get({n}, b.getIndexType());
  SmallVector<int64_t> rowOff, colOff;
  for (int64_t i = 0; i < mapping.rm; ++i)
    for (int64_t j = 0; j < cc; ++j) {
      rowOff.push_back(i);
      colOff.push_back(j * mapping.tc);
    }
  auto constVec = [&](ArrayRef<int64_t> v) -> Value {
    SmallVector<APInt> ints;
    for (int64_t x : v)
      ints.push_back(APInt(64, x));
    return arith::ConstantOp::create(b, loc,
                                     DenseElementsAttr::get(indexVec, ints));
  };
  auto splat = [&](Value s) -> Value {
    return vector::BroadcastOp::create(b, loc, indexVec, s);
  };
  Value rowBase =
      arith::AddIOp::create(b, loc, *scalar(op.getRow()),
                            arith::MulIOp::create(b, loc, tr, idx(mapping.rm)));
  Value colBase = arith::AddIOp::create(b, loc, *scalar(op.getCol()), tc);
  Value rowsV = arith::AddIOp::create(b, loc, splat(rowBase), constVec(rowOff));
  Value colsV = arith::AddIOp::create(b, loc, splat(colBase), constVec(colOff));
  Value numCols = *scalar(op.getCols());
  // Planted bug: no column is past the end (keys >= Lk stay visible).
  Value colEnd = bug == PlantedBug::NoRaggedMask
                     ? idx(std::numeric_limits<int64_t>::max())
                     : numCols;
  Value masked = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, colsV,
                                       splat(colEnd));
  if (op.getCausal()) {
    // Bottom-right aligned: row r sees columns c <= r + (cols - rows).
    Value shift = arith::SubIOp::create(b, loc, numCols, *scalar(op.getRows()));
    Value limit = arith::AddIOp::create(b, loc, rowsV, splat(shift));
    Value above =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, colsV, limit);
    masked = arith::OrIOp::create(b, loc, masked, above);
  }
  auto fragType = cast<VectorType>(frag.getType());
  Value negInf = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(
          fragType, b.getFloatAttr(fragType.getElementType(),
                                   -std::numeric_limits<double>::infinity())));
  return arith::SelectOp::create(b, loc, masked, negInf, frag);
}

//===----------------------------------------------------------------------===//
// Driver
//===----------------------------------------------------------------------===//

LogicalResult KernelLowering::lowerValues(ValueRange values,
                                          SmallVectorImpl<Value> &out) {
  for (Value v : values) {
    FailureOr<Value> m =
        isa<RankedTensorType>(v.getType()) ? fragment(v) : scalar(v);
    if (mlir::failed(m))
      return mlir::failure();
    out.push_back(*m);
  }
  return success();
}

void KernelLowering::bindValues(ValueRange from, ValueRange to) {
  for (auto [f, t] : llvm::zip(from, to)) {
    if (isa<RankedTensorType>(f.getType()))
      fragments[f] = t;
    else
      scalars.map(f, t);
  }
}

LogicalResult KernelLowering::lowerElementwise(Operation *op) {
  SmallVector<Value> operands;
  if (mlir::failed(lowerValues(op->getOperands(), operands)))
    return mlir::failure();
  SmallVector<Type> types;
  for (Type t : op->getResultTypes())
    types.push_back(fragmentType(cast<RankedTensorType>(t)));
  OperationState state(op->getLoc(), op->getName().getStringRef(), operands,
                       types, op->getAttrs());
  bindValues(op->getResults(), b.create(state)->getResults());
  return success();
}

LogicalResult KernelLowering::lowerFor(scf::ForOp op) {
  SmallVector<Value> inits;
  if (mlir::failed(lowerValues(op.getInitArgs(), inits)))
    return mlir::failure();
  FailureOr<Value> lb = scalar(op.getLowerBound()),
                   ub = scalar(op.getUpperBound()), step = scalar(op.getStep());
  if (mlir::failed(lb) || mlir::failed(ub) || mlir::failed(step))
    return mlir::failure();
  auto loop = scf::ForOp::create(b, loc, *lb, *ub, *step, inits);
  // The body rewrites LDS that the previous iteration read: all threads must
  // be done with it first.
  bool writesLds = false;
  op.getBody()->walk([&](Operation *inner) {
    if (isa<LoadTileOp>(inner))
      writesLds = true;
    if (auto dot = dyn_cast<TileDotOp>(inner))
      writesLds |= !dot.getLhs().getDefiningOp<LoadTileOp>();
  });
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  if (writesLds) {
    gpu::BarrierOp::create(b, loc);
    pendingBarrier = false;
  }
  scalars.map(op.getInductionVar(), loop.getInductionVar());
  bindValues(op.getRegionIterArgs(), loop.getRegionIterArgs());
  if (mlir::failed(lowerBlock(*op.getBody())))
    return mlir::failure();
  auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
  SmallVector<Value> yielded;
  if (mlir::failed(lowerValues(yield.getOperands(), yielded)))
    return mlir::failure();
  scf::YieldOp::create(b, loc, yielded);
  bindValues(op.getResults(), loop.getResults());
  return success();
}

LogicalResult KernelLowering::lowerOp(Operation *op) {
  loc = op->getLoc();
  if (auto dot = dyn_cast<TileDotOp>(op); dot && !ldsTiles.count(dot.getRhs()))
    return op->emitOpError() << "rhs must be a tile loaded with fa.load_tile";
  // The tile-op helpers below assume that every operand has a kernel-side
  // value; check first so that malformed tile IR gets a diagnostic.
  if (isa<LoadTileOp, StoreTileOp, TileDotOp, RowReduceOp, RowBroadcastOp,
          TileMaskOp>(op)) {
    for (OpOperand &operand : op->getOpOperands()) {
      Value v = operand.get();
      if (isa<BaseMemRefType>(v.getType())) {
        if (!globals.count(v))
          return op->emitOpError()
                 << "cannot lower: operand #" << operand.getOperandNumber()
                 << " is not one of the kernel's buffers (fa.args)";
        continue;
      }
      // Only fa.tile_dot reads lhs and rhs from LDS.
      bool fromLds = isa<TileDotOp>(op) && operand.getOperandNumber() < 2 &&
                     ldsTiles.count(v);
      if (fromLds)
        continue;
      if (mlir::failed(isa<RankedTensorType>(v.getType()) ? fragment(v)
                                                          : scalar(v)))
        return op->emitOpError() << "cannot lower: " << failure;
    }
  }
  if (auto load = dyn_cast<LoadTileOp>(op)) {
    ldsTiles[load.getResult()] = loadTile(load);
    return success();
  }
  if (auto store = dyn_cast<StoreTileOp>(op)) {
    storeTile(store);
    return success();
  }
  if (auto dot = dyn_cast<TileDotOp>(op)) {
    fragments[dot.getResult()] = tileDot(dot);
    return success();
  }
  if (auto reduce = dyn_cast<RowReduceOp>(op)) {
    fragments[reduce.getResult()] = rowReduce(reduce);
    return success();
  }
  if (auto bcast = dyn_cast<RowBroadcastOp>(op)) {
    fragments[bcast.getResult()] = rowBroadcast(bcast);
    return success();
  }
  if (auto mask = dyn_cast<TileMaskOp>(op)) {
    fragments[mask.getResult()] = tileMask(mask);
    return success();
  }
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return lowerFor(loop);
  bool tensorResults =
      llvm::any_of(op->getResultTypes(), llvm::IsaPred<RankedTensorType>);
  // Tensor constants are materialised as fragments where they are used;
  // scalar ones are cloned below like any other pure scalar op.
  if (tensorResults && isa<arith::ConstantOp>(op))
    return success();
  if (tensorResults && op->getNumRegions() == 0 &&
      isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
    return lowerElementwise(op);
  if (!tensorResults && isMemoryEffectFree(op) && op->getNumRegions() == 0) {
    for (Value operand : op->getOperands())
      if (mlir::failed(scalar(operand)))
        return op->emitOpError() << "cannot lower: " << failure;
    b.clone(*op, scalars);
    return success();
  }
  return op->emitOpError() << "is not supported in tile IR by fa-lower-to-gpu";
}

LogicalResult KernelLowering::lowerBlock(Block &block) {
  for (Operation &op : block.without_terminator()) {
    failure.clear();
    if (mlir::failed(lowerOp(&op)))
      return mlir::failure();
    if (!failure.empty())
      return op.emitOpError() << "cannot lower: " << failure;
  }
  return success();
}

LogicalResult KernelLowering::run() {
  Block &entry = kernel.getBody().front();
  b.setInsertionPointToEnd(&entry);
  auto ret = gpu::ReturnOp::create(b, loc);
  b.setInsertionPoint(ret);

  // ABI arguments: 5 buffers, 5 sizes, 14 strides (KernelAbi.h).
  for (int i = 0; i < kNumSizes; ++i)
    sizes[i] = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                          kernel.getArgument(kNumRoles + i));
  auto stride = [&](int i) -> Value {
    return arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        kernel.getArgument(kNumRoles + kNumSizes + i));
  };
  auto func = grid->getParentOfType<func::FuncOp>();
  for (int r = 0; r < kNumRoles; ++r) {
    if (roles[r] < 0)
      continue;
    // Planted bugs read another role's strides (or none).
    int strideRole = r;
    if (bug == PlantedBug::SwapKvStrides && (r == kK || r == kV))
      strideRole = r == kK ? kV : kK;
    if (bug == PlantedBug::OWithQStrides && r == kO)
      strideRole = kQ;
    Global g;
    g.role = r;
    g.flat = kernel.getArgument(r);
    g.sb = stride(3 * strideRole);
    g.sh = stride(3 * strideRole + 1);
    g.sl = r == kLse ? idx(1) : stride(3 * strideRole + 2);
    if (bug == PlantedBug::LseStridesIgnored && r == kLse) {
      g.sh = sizes[3];
      g.sb = arith::MulIOp::create(b, loc, sizes[1], sizes[3]);
    }
    globals[func.getArgument(roles[r])] = g;
  }
  tid = gpu::ThreadIdOp::create(b, loc, gpu::Dimension::x);
  tr = arith::DivUIOp::create(b, loc, tid, idx(mapping.tc));
  tc = arith::RemUIOp::create(b, loc, tid, idx(mapping.tc));
  gpu::Dimension dims[] = {gpu::Dimension::x, gpu::Dimension::y,
                           gpu::Dimension::z};
  for (int i = 0; i < 3; ++i) {
    auto id = gpu::BlockIdOp::create(b, loc, dims[i]);
    scalars.map(grid.getInductionVar(i), id.getResult());
    preambleEnd = id;
  }
  return lowerBlock(*grid.getBody());
}
