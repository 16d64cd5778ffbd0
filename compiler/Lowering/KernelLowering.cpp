//===- KernelLowering.cpp - Tile IR -> per-thread kernel code -------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// This file implements the thread-level lowering used by fa-lower-to-gpu
// (see KernelLowering.h for the fragment layout). Each op of the memory
// level (fa-promote) becomes:
//
//   fa.lds_buffer   a 1-D workgroup attribution per storage slot
//   fa.copy_tile    cooperative copy global -> LDS (KernelMemory.cpp):
//                   16-byte vectors when the strides and the base are
//                   aligned, scalars otherwise; rows past the end are zero
//   fa.fetch_tile   the copy's global loads into a per-thread vector (the
//                   units the thread would store; KernelMemory.cpp)
//   fa.stage_tile   that vector stored into LDS in the buffer's layout
//   fa.write_tile   each thread writes its fragment elements to LDS
//   fa.lds_dot      a loop over the reduction dimension in pairs (the shape
//                   of v_dot2_f32_f16): each thread loads its RM lhs pairs
//                   and C/TC rhs pairs from LDS (one 32-bit word each where
//                   the layout keeps a pair contiguous) and does two f32
//                   vector FMAs over its fragment
//   gpu.barrier     itself (fa-promote placed it)
//   fa.row_reduce   a reduction within the thread, then xor shuffles over
//                   the TC lanes that share a row
//   fa.row_broadcast / fa.tile_mask / arith / math: fragment-wise vector ops
//   fa.store_tile   each thread stores its rows (bounds-checked)
//   fa.trace_row    the threads of the traced row store its m, l (lane 0
//                   of the row) and their output columns to the trace
//
//===----------------------------------------------------------------------===//

#include "compiler/Lowering/KernelLowering.h"

#include "fa/KernelAbi.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

using namespace mlir;
using namespace mlir::fa;

KernelLowering::KernelLowering(scf::ForallOp grid, gpu::GPUFuncOp kernel,
                               const TargetDesc &target, TileConfigAttr config,
                               ThreadMapping mapping, ArrayRef<int64_t> roles,
                               PlantedBug bug, bool shareRows)
    : grid(grid), kernel(kernel), target(target), config(config),
      mapping(mapping), roles(roles), bug(bug), shareRows(shareRows),
      contiguousColumns(grid->hasAttr("fa.combine")), b(kernel.getContext()),
      loc(grid.getLoc()) {}

Value KernelLowering::idx(int64_t v) {
  return arith::ConstantIndexOp::create(b, loc, v);
}

Value KernelLowering::rowOf(int64_t i) {
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, tr, idx(mapping.rm)), idx(i));
}

Value KernelLowering::colOf(int64_t j) {
  assert(!contiguousColumns && "a combine kernel's columns need colOf(j, cc)");
  return arith::AddIOp::create(b, loc, tc, idx(j * mapping.tc));
}

Value KernelLowering::colOf(int64_t j, int64_t cc) {
  if (!contiguousColumns)
    return colOf(j);
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, tc, idx(cc)), idx(j));
}

Value KernelLowering::rowLimit(const Global &g) {
  if (sequence.rows)
    return sequence.rows;
  return (g.role == kK || g.role == kV) ? sizes[4] : sizes[3];
}

Value KernelLowering::addSequenceOffset(const Global &g, Value base) {
  if (!sequence.start || bug == PlantedBug::SeqStartIgnored)
    return base;
  return arith::AddIOp::create(
      b, loc, base, arith::MulIOp::create(b, loc, sequence.start, g.sl));
}

Value KernelLowering::ldsIndex(OpBuilder &nb, Location l, const LdsBuf &buf,
                               Value r, Value c) {
  auto cst = [&](int64_t v) {
    return arith::ConstantIndexOp::create(nb, l, v);
  };
  const int64_t stride = buf.layout.rowStride();
  if (!buf.layout.pairs)
    return arith::AddIOp::create(
        nb, l, arith::MulIOp::create(nb, l, r, cst(stride)), c);
  // Rows 2i and 2i+1 interleaved: (r/2)*2S + 2c + r%2.
  Value pairRow = arith::DivUIOp::create(nb, l, r, cst(2));
  Value odd = arith::RemUIOp::create(nb, l, r, cst(2));
  Value base = arith::MulIOp::create(nb, l, pairRow, cst(2 * stride));
  Value col = arith::MulIOp::create(nb, l, c, cst(2));
  return arith::AddIOp::create(nb, l, arith::AddIOp::create(nb, l, base, col),
                               odd);
}

LogicalResult KernelLowering::allocateLds() {
  // Buffers sharing a slot share one attribution, as large as the largest.
  llvm::MapVector<StringRef, std::pair<Type, int64_t>> slots;
  SmallVector<LdsBufferOp> ops;
  WalkResult walk = grid.walk([&](LdsBufferOp op) {
    // The verifier guarantees a layout.
    auto layout = getLdsLayout(op.getResult().getType());
    assert(succeeded(layout) && "fa.lds_buffer verifier admits only layouts");
    auto [it, inserted] = slots.insert(
        {op.getStorage(), {layout->elementType, layout->elements()}});
    if (!inserted) {
      if (it->second.first != layout->elementType) {
        op.emitOpError() << "shares slot '" << op.getStorage()
                         << "' with a buffer of another element type";
        return WalkResult::interrupt();
      }
      it->second.second = std::max(it->second.second, layout->elements());
    }
    ops.push_back(op);
    return WalkResult::advance();
  });
  if (walk.wasInterrupted())
    return mlir::failure();
  auto space =
      gpu::AddressSpaceAttr::get(b.getContext(), gpu::AddressSpace::Workgroup);
  llvm::StringMap<Value> storage;
  llvm::StringMap<int64_t> attribution;
  for (auto &[name, slot] : slots) {
    attribution[name] = kernel.getNumWorkgroupAttributions();
    storage[name] = kernel.addWorkgroupAttribution(
        MemRefType::get({slot.second}, slot.first, MemRefLayoutAttrInterface(),
                        space),
        loc);
  }
  for (LdsBufferOp op : ops)
    ldsBuffers[op.getResult()] = {storage.lookup(op.getStorage()),
                                  *getLdsLayout(op.getResult().getType())};
  // The buffers in the kernel's LDS, with fa-pad-lds's predictions
  // (KernelInfo.h: fa.lds_buffers).
  auto predicted = grid->getAttrOfType<DictionaryAttr>("fa.lds_accesses");
  SmallVector<Attribute> buffers;
  for (LdsBufferOp op : ops) {
    LdsLayout l = *getLdsLayout(op.getResult().getType());
    SmallVector<NamedAttribute> entry = {
        b.getNamedAttr("name", op.getNameAttr()),
        b.getNamedAttr("slot", b.getStringAttr(op.getStorage())),
        b.getNamedAttr("attribution", b.getI64IntegerAttr(
                                          attribution.lookup(op.getStorage()))),
        b.getNamedAttr("rows", b.getI64IntegerAttr(l.rows)),
        b.getNamedAttr("cols", b.getI64IntegerAttr(l.cols)),
        b.getNamedAttr("pad", b.getI64IntegerAttr(l.pad)),
        b.getNamedAttr("pairs", b.getBoolAttr(l.pairs)),
        b.getNamedAttr(
            "element_bytes",
            b.getI64IntegerAttr(l.elementType.getIntOrFloatBitWidth() / 8))};
    if (predicted)
      if (Attribute accesses = predicted.get(op.getName()))
        entry.push_back(b.getNamedAttr("accesses", accesses));
    buffers.push_back(b.getDictionaryAttr(entry));
  }
  kernel->setAttr("fa.lds_buffers", b.getArrayAttr(buffers));
  // cp.async: a staging area per fetched buffer, for 16-byte units.
  if (target.asyncCopy)
    grid.walk([&](FetchTileOp fetch) {
      Type elt = fetch.getSource().getType().getElementType();
      FetchShape f = fetchShape(elt, ldsBuffers[fetch.getBuffer()].layout);
      if (f.width * elt.getIntOrFloatBitWidth() != 128 ||
          staging.count(fetch.getBuffer()))
        return;
      staging[fetch.getBuffer()] = kernel.addWorkgroupAttribution(
          MemRefType::get({f.iters * mapping.threads * f.unitRows * f.width},
                          elt, MemRefLayoutAttrInterface(), space),
          loc);
    });
  return success();
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
    bool workspace = role == kWsO || role == kWsLse;
    Value result;
    // A paged cache is [num_pages, page_size, Hkv, D]: fa-tile asks for
    // its heads only (and the page size, where a pass needs it).
    if (kv && pageSize && *d < 3) {
      if (*d == 0) {
        failure = "the number of pages of a paged cache is not a kernel "
                  "argument";
        return mlir::failure();
      }
      result = *d == 1 ? pageSize : sizes[2];
      scalars.map(v, result);
      return result;
    }
    switch (*d) {
    case 0: // the workspace holds S * B batches
      result = sizes[0];
      if (workspace) {
        result = arith::MulIOp::create(b, loc, splits, sizes[0]);
        preambleEnd = result.getDefiningOp();
      }
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

Value KernelLowering::ldsDot(LdsDotOp op) {
  const LdsBuf &lhs = ldsBuffers[op.getLhs()];
  const LdsBuf &rhs = ldsBuffers[op.getRhs()];
  auto resultType = op.getResult().getType();
  VectorType fragType = fragmentType(resultType);
  const int64_t cc = colsPerThread(resultType);
  const int64_t k = lhs.layout.cols;
  Value init = op.getAcc()
                   ? *fragment(op.getAcc())
                   : Value(arith::ConstantOp::create(
                         b, loc, cast<TypedAttr>(b.getZeroAttr(fragType))));
  SmallVector<Value> rows, cols;
  for (int64_t i = 0; i < mapping.rm; ++i)
    rows.push_back(rowOf(i));
  for (int64_t j = 0; j < cc; ++j)
    cols.push_back(colOf(j));
  const bool transpose = op.getTransposeRhs();
  // The reduction runs over pairs (kk, kk+1) so that each product has the
  // shape of v_dot2_f32_f16: acc + a0*b0 + a1*b1 with f16 pairs, f32 sums.
  // A pair that is contiguous in LDS (rows of Q, K and P; V stored
  // pair-interleaved) is one 32-bit load when the layout keeps it aligned.
  const int64_t step = k % 2 == 0 ? 2 : 1;
  Type elt = lhs.layout.elementType;
  auto pairType = VectorType::get({2}, elt);
  auto pairAlign = llvm::MaybeAlign(2 * elt.getIntOrFloatBitWidth() / 8);
  // One step of the reduction: the pair (kk, kk+1) into `acc`; the lhs
  // pairs (one vector<2 x elt> per row) given, or read from LDS.
  auto reduceStep = [&](OpBuilder &nb, Location l, Value kk, Value accIn,
                        ArrayRef<Value> lhsPairs = {}) -> Value {
    auto toF32 = [&](Value v) -> Value {
      return v.getType().isF32()
                 ? v
                 : Value(arith::ExtFOp::create(nb, l, nb.getF32Type(), v));
    };
    auto scalarAt = [&](const LdsBuf &buf, Value r, Value c) {
      return toF32(memref::LoadOp::create(
          nb, l, buf.mem, ValueRange{ldsIndex(nb, l, buf, r, c)}));
    };
    Value kk1 = step == 2
                    ? Value(arith::AddIOp::create(
                          nb, l, kk, arith::ConstantIndexOp::create(nb, l, 1)))
                    : Value();
    // The pair at index `at` when it is one aligned word.
    auto pairAt = [&](const LdsBuf &buf, Value at) -> SmallVector<Value> {
      Value pair = vector::LoadOp::create(nb, l, pairType, buf.mem,
                                          ValueRange{at}, false, pairAlign);
      return {
          toF32(vector::ExtractOp::create(nb, l, pair, ArrayRef<int64_t>{0})),
          toF32(vector::ExtractOp::create(nb, l, pair, ArrayRef<int64_t>{1}))};
    };
    // Elements (r, kk) [and (r, kk+1)] of a row-major buffer.
    auto alongRow = [&](const LdsBuf &buf, Value r) -> SmallVector<Value> {
      if (step == 1)
        return {scalarAt(buf, r, kk)};
      if (buf.layout.rowStride() % 2 == 0)
        return pairAt(buf, ldsIndex(nb, l, buf, r, kk));
      return {scalarAt(buf, r, kk), scalarAt(buf, r, kk1)};
    };
    // Elements (kk, c) [and (kk+1, c)] of the rhs.
    auto downColumn = [&](const LdsBuf &buf, Value c) -> SmallVector<Value> {
      if (step == 2 && buf.layout.pairs)
        return pairAt(buf, ldsIndex(nb, l, buf, kk, c));
      if (step == 1)
        return {scalarAt(buf, kk, c)};
      return {scalarAt(buf, kk, c), scalarAt(buf, kk1, c)};
    };
    // a[p][i], bv[p][j]: element p of the pair for lhs row i, rhs col j.
    SmallVector<SmallVector<Value>> a(step), bv(step);
    for (int64_t i = 0; i < mapping.rm; ++i) {
      SmallVector<Value> pair;
      if (!lhsPairs.empty()) {
        for (int64_t p = 0; p < 2; ++p)
          pair.push_back(toF32(vector::ExtractOp::create(
              nb, l, lhsPairs[i], ArrayRef<int64_t>{p})));
      } else {
        pair = alongRow(lhs, rows[i]);
      }
      for (int64_t p = 0; p < step; ++p)
        a[p].push_back(pair[p]);
    }
    for (int64_t j = 0; j < cc; ++j) {
      SmallVector<Value> pair =
          transpose ? alongRow(rhs, cols[j]) : downColumn(rhs, cols[j]);
      for (int64_t p = 0; p < step; ++p)
        bv[p].push_back(pair[p]);
    }
    Value acc = accIn;
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
    return acc;
  };
  // share-rows (P·V only): the 16 lanes of a thread row (TC = 16: one DPP
  // row of a wave) all need the same lhs rows. Lane c reads only the
  // pairs 16m + c of its rows from LDS and passes them one lane down its
  // row per step (gpu.shuffle idx from in-row lane c + 1, marked
  // fa.row_rotate = 1: DPP row_ror:15 on gfx906), so that in step r it
  // holds lane (c + r) mod 16's pairs and multiplies them with the rhs at
  // that pair's index. A lane's sum runs over the pairs in its own order;
  // every product is one the plain loop does. Both loops stay rolled
  // (unrolled, the backend hoists every step's rhs loads and spills).
  // Not in Q·Kᵀ (transposed rhs): there a thread has CC = BLOCK_N / 16
  // columns, so a rotation serves CC MACs (2 at BLOCK_N = 32) where P·V's
  // serve D / 16; every lane reading Q's pairs is an LDS broadcast instead
  // (4 row addresses per wave), and the K/V loop is VALU-bound (MI50
  // timing model v2: D=128 causal 1,8,2,512,4096 1468 -> 1292 us).
  const bool sharedRows =
      shareRows && !transpose && mapping.tc == 16 &&
      target.waveSize % 16 == 0 && step == 2 &&
      elt.getIntOrFloatBitWidth() == 16 && !lhs.layout.pairs &&
      lhs.layout.rowStride() % 2 == 0 && k % 32 == 0;
  if (sharedRows) {
    Type i32 = b.getI32Type();
    auto wordType = VectorType::get({1}, i32);
    constexpr int64_t kStepsPerTrip = 4;
    Value lane = arith::RemUIOp::create(b, loc, tid, idx(target.waveSize));
    Value rowBase = arith::SubIOp::create(b, loc, lane, tc);
    // The lane one up the row: the source of every rotation step.
    Value next = arith::IndexCastOp::create(
        b, loc, i32,
        arith::AddIOp::create(
            b, loc, rowBase,
            arith::AndIOp::create(
                b, loc, arith::AddIOp::create(b, loc, tc, idx(1)), idx(15))));
    Value width = arith::ConstantIntOp::create(b, loc, i32, target.waveSize);
    // 16 steps, as a bound the backend cannot see (min(Lq, 0) is 0: Lq is
    // a positive size): with a constant one the AMDGPU backend unrolls the
    // loop fully, hoists every step's LDS loads and spills.
    Value rotations = arith::AddIOp::create(
        b, loc, idx(16), arith::MinSIOp::create(b, loc, sizes[3], idx(0)));
    auto outer = scf::ForOp::create(
        b, loc, idx(0), idx(k), idx(32), ValueRange{init},
        [&](OpBuilder &nb, Location l, Value base, ValueRange iter) {
          auto cst = [&](int64_t v) {
            return arith::ConstantIndexOp::create(nb, l, v);
          };
          // The pair index owned by in-row lane (tc + r) mod 16.
          auto pairIndex = [&](OpBuilder &ib, Location il, Value r) -> Value {
            Value from = arith::AndIOp::create(
                ib, il, arith::AddIOp::create(ib, il, tc, r), cst(15));
            return arith::AddIOp::create(
                ib, il, base, arith::MulIOp::create(ib, il, from, cst(2)));
          };
          SmallVector<Value> inits{iter[0]};
          Value ownK = pairIndex(nb, l, cst(0));
          for (int64_t i = 0; i < mapping.rm; ++i) {
            Value pair = vector::LoadOp::create(
                nb, l, pairType, lhs.mem,
                ValueRange{ldsIndex(nb, l, lhs, rows[i], ownK)}, false,
                pairAlign);
            Value word = vector::BitCastOp::create(nb, l, wordType, pair);
            inits.push_back(
                vector::ExtractOp::create(nb, l, word, ArrayRef<int64_t>{0}));
          }
          // Four steps per trip (fewer loop overheads; still rolled).
          auto inner = scf::ForOp::create(
              nb, l, cst(0), rotations, cst(kStepsPerTrip), inits,
              [&](OpBuilder &ib, Location il, Value r0, ValueRange carried) {
                SmallVector<Value> words(carried.begin(), carried.end());
                for (int64_t u = 0; u < kStepsPerTrip; ++u) {
                  Value r = u ? Value(arith::AddIOp::create(
                                    ib, il, r0,
                                    arith::ConstantIndexOp::create(ib, il, u)))
                              : r0;
                  SmallVector<Value> pairs;
                  for (int64_t i = 0; i < mapping.rm; ++i) {
                    Value vec = vector::BroadcastOp::create(ib, il, wordType,
                                                            words[1 + i]);
                    pairs.push_back(
                        vector::BitCastOp::create(ib, il, pairType, vec));
                  }
                  // The planted bug reads the rhs at lane c - r, not c + r.
                  Value rhsStep =
                      bug == PlantedBug::SharedRowsMisrotated
                          ? Value(arith::SubIOp::create(
                                ib, il,
                                arith::ConstantIndexOp::create(ib, il, 16), r))
                          : r;
                  words[0] = reduceStep(ib, il, pairIndex(ib, il, rhsStep),
                                        words[0], pairs);
                  for (int64_t i = 0; i < mapping.rm; ++i) {
                    auto shuffle =
                        gpu::ShuffleOp::create(ib, il, words[1 + i], next,
                                               width, gpu::ShuffleMode::IDX);
                    shuffle->setAttr("fa.row_rotate", ib.getI32IntegerAttr(1));
                    words[1 + i] = shuffle.getShuffleResult();
                  }
                }
                scf::YieldOp::create(ib, il, words);
              });
          scf::YieldOp::create(nb, l, inner.getResult(0));
        });
    return outer.getResult(0);
  }
  // Kept as a loop: unrolled, the backend hoists the LDS loads of every
  // step and spills (measured on gfx906: 96 -> 128 VGPRs + 199 spilled).
  auto loop = scf::ForOp::create(
      b, loc, idx(0), idx(k), idx(step), ValueRange{init},
      [&](OpBuilder &nb, Location l, Value kk, ValueRange iter) {
        scf::YieldOp::create(nb, l, reduceStep(nb, l, kk, iter[0]));
      });
  return loop.getResult(0);
}

Value KernelLowering::rowReduce(RowReduceOp op) {
  Value frag = *fragment(op.getInput());
  const int64_t cc = colsPerThread(op.getInput().getType());
  bool isMax = op.getKind() == ReduceKind::max;
  SmallVector<Value> results;
  for (int64_t i = 0; i < mapping.rm; ++i) {
    // Row i's slice. A shuffle (not extract_strided_slice) lowers directly
    // in every backend's vector-to-LLVM conversion.
    SmallVector<int64_t> lanes;
    for (int64_t j = 0; j < cc; ++j)
      lanes.push_back(i * cc + j);
    Value slice = vector::ShuffleOp::create(b, loc, frag, frag, lanes);
    Value r = vector::ReductionOp::create(b, loc,
                                          isMax ? vector::CombiningKind::MAXNUMF
                                                : vector::CombiningKind::ADD,
                                          slice);
    // partial: each thread keeps its part of its rows (fa.row_combine adds
    // them up).
    results.push_back(op.getPartial() ? r : acrossRowLanes(r, isMax));
  }
  if (!op.getPartial())
    acrossRowWaves(results, isMax);
  return vector::FromElementsOp::create(
      b, loc, fragmentType(op.getResult().getType()), results);
}

Value KernelLowering::rowCombine(RowCombineOp op) {
  Value frag = *fragment(op.getInput());
  SmallVector<Value> results;
  for (int64_t i = 0; i < mapping.rm; ++i)
    results.push_back(acrossRowLanes(
        vector::ExtractOp::create(b, loc, frag, i), /*isMax=*/false));
  acrossRowWaves(results, /*isMax=*/false);
  return vector::FromElementsOp::create(
      b, loc, fragmentType(op.getResult().getType()), results);
}

Value KernelLowering::rowCombineOf(Value x, Value y, bool isMax) {
  if (isMax)
    return arith::MaxNumFOp::create(b, loc, x, y);
  return arith::AddFOp::create(b, loc, x, y);
}

Value KernelLowering::acrossRowLanes(Value r, bool isMax) {
  // The TC lanes of a row are consecutive lanes: a butterfly over xor 1,
  // 2, 4, ... up to the wave (rows wider than a wave combine their waves'
  // parts in acrossRowWaves). After the steps below `offset`, r is the same
  // (bit for bit: the combine commutes) on each aligned group of `offset`
  // lanes, which the shuffle says as fa.row_xor: gfx906 may then read any
  // lane of the partner group (DPP row_half_mirror / row_mirror for 4 and
  // 8, compiler/Targets/Gfx906/LowerToRocdl.cpp).
  for (int64_t offset = 1;
       offset < std::min(mapping.tc, int64_t(target.waveSize)); offset *= 2) {
    auto shuffle =
        gpu::ShuffleOp::create(b, loc, r, static_cast<int32_t>(offset),
                               static_cast<int32_t>(target.waveSize),
                               gpu::ShuffleMode::XOR);
    shuffle->setAttr("fa.row_xor", b.getUnitAttr());
    r = rowCombineOf(r, shuffle.getShuffleResult(), isMax);
  }
  return r;
}

void KernelLowering::acrossRowWaves(SmallVector<Value> &results, bool isMax) {
  if (const int64_t w = mapping.wavesPerRow(target.waveSize); w > 1) {
    // Each wave of a thread row now holds its part of the row's result in
    // every lane. Lane 0 of each wave stores it to the row's slot for that
    // wave; after a barrier every thread combines the w slots in wave order
    // (the same result, bit for bit, in every thread), and a second barrier
    // keeps the slots until all have read them.
    // One f32 per row and wave, allocated by the kernel's first reduction
    // (a kernel without one, the split-KV combine, has none).
    if (!rowScratch)
      rowScratch = kernel.addWorkgroupAttribution(
          MemRefType::get({mapping.tr * mapping.rm * w}, b.getF32Type(),
                          MemRefLayoutAttrInterface(),
                          gpu::AddressSpaceAttr::get(
                              b.getContext(), gpu::AddressSpace::Workgroup)),
          loc);
    Value wave = arith::DivUIOp::create(b, loc, tc, idx(target.waveSize));
    Value lane = arith::RemUIOp::create(b, loc, tc, idx(target.waveSize));
    // Row i's slot for wave `waveIdx`: (tr * RM + i) * w + waveIdx.
    auto slot = [&](Value waveIdx, int64_t i) -> Value {
      Value row = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, tr, idx(mapping.rm)), idx(i));
      return arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, row, idx(w)), waveIdx);
    };
    Value first = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                                        idx(0));
    auto store = scf::IfOp::create(b, loc, first, /*withElse=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&store.getThenRegion().front());
      for (int64_t i = 0; i < mapping.rm; ++i)
        memref::StoreOp::create(b, loc, results[i], rowScratch,
                                ValueRange{slot(wave, i)});
    }
    gpu::BarrierOp::create(b, loc);
    for (int64_t i = 0; i < mapping.rm; ++i) {
      Value r;
      for (int64_t v = 0; v < w; ++v) {
        Value part = memref::LoadOp::create(
            b, loc, rowScratch, ValueRange{slot(idx(v), i)});
        r = v ? rowCombineOf(r, part, isMax) : part;
      }
      // The planted bug keeps the wave's own part.
      results[i] = bug == PlantedBug::RowsAcrossWavesOwnWave
                       ? Value(memref::LoadOp::create(
                             b, loc, rowScratch,
                             ValueRange{slot(wave, i)}))
                       : r;
    }
    gpu::BarrierOp::create(b, loc);
  }
}

/// fa.merge_splits. Phase 1: the block's live rows (below L) as units of
/// four columns, U of them; the threads form up to T / U groups, thread t
/// unit t mod U of group t / U, and group g walks splits g, g + G, ...
/// (kMergeUnroll at once, loaded together under one guard) keeping a
/// running max, sum and four outputs. G is the fewest groups that take
/// every split in one trip, at most T / U: a large grid (B >= 8) leaves
/// the rest of its threads idle instead of weighing padding. Each thread
/// stores its state to LDS (field-major, slot t; an idle thread's is
/// m = -inf, l = 0, acc = 0, which weighs nothing). Phase 2: for each row
/// of its fragment a thread reads the T / U groups' states of the row (any
/// unit of a row holds its group's m and l: the same splits in the same
/// order) together, unrolled up to T / (columns / 4) groups, and merges
/// them. The tile's rows times its columns / 4 must not exceed the
/// threads, its columns and D be multiples of 4 (fa-tile only emits it so).
LogicalResult KernelLowering::mergeSplits(MergeSplitsOp op) {
  constexpr int64_t kMergeUnroll = 4, kFields = 6; // m, l, 4 outputs
  const Global &go = globals.lookup(op.getO());
  const Global &gl = globals.lookup(op.getLse());
  auto accType = op.getAcc().getType();
  const int64_t rowsR = accType.getDimSize(0), cols = accType.getDimSize(1);
  const int64_t quads = cols / 4, threads = mapping.threads;
  if (cols % 4 || go.cols % 4 || rowsR * quads > threads)
    return op.emitOpError()
           << "cannot lower: needs columns and D in multiples of 4 and at "
              "most one unit of 4 columns per thread ("
           << rowsR << " x " << cols << " over " << threads << " threads)";
  Type f32 = b.getF32Type();
  auto cf = [&](double v) -> Value {
    return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
  };
  const double negInf = -std::numeric_limits<double>::infinity();
  const double log2e = 1.4426950408889634;
  Value batch = *scalar(op.getBatch()), head = *scalar(op.getHead()),
        row0 = *scalar(op.getRow()), numSplits = *scalar(op.getSplits()),
        batches = *scalar(op.getBatches());
  Value start = op.getSeqStart() ? *scalar(op.getSeqStart()) : Value();
  Value bound = op.getSeqRows() ? *scalar(op.getSeqRows()) : sizes[3];
  // Live rows: min(max(L - row0, 0), R); units U; groups.
  Value live = arith::MinSIOp::create(
      b, loc,
      arith::MaxSIOp::create(b, loc, arith::SubIOp::create(b, loc, bound, row0),
                             idx(0)),
      idx(rowsR));
  Value units = arith::MulIOp::create(b, loc, live, idx(quads));
  Value unitsOr1 = arith::MaxUIOp::create(b, loc, units, idx(1));
  Value groupsAll = arith::DivUIOp::create(b, loc, idx(threads), unitsOr1);
  Value groups = arith::MaxUIOp::create(
      b, loc,
      arith::MinUIOp::create(
          b, loc, groupsAll,
          arith::CeilDivUIOp::create(b, loc, numSplits, idx(kMergeUnroll))),
      idx(1));
  Value g = arith::DivUIOp::create(b, loc, tid, unitsOr1);
  Value u = arith::RemUIOp::create(b, loc, tid, unitsOr1);
  Value r = arith::DivUIOp::create(b, loc, u, idx(quads));
  Value col = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, u, idx(quads)), idx(4));
  Value active = arith::AndIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, g, groups),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, units, idx(0)));
  // Row row0 + r of (s * batches + batch, head): element offsets without
  // the split's batch term, which is s * batches batch strides.
  Value row = arith::AddIOp::create(b, loc, row0, r);
  if (start)
    row = arith::AddIOp::create(b, loc, row, start);
  auto offset = [&](const Global &gg) -> Value {
    return arith::AddIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc,
                              arith::MulIOp::create(b, loc, batch, gg.sb),
                              arith::MulIOp::create(b, loc, head, gg.sh)),
        arith::MulIOp::create(b, loc, row, gg.sl));
  };
  // (max with 1, which it always is, keeps LLVM from factoring the batch
  // stride out of the per-lane sums below and rebuilding each split's
  // address in Horner form: 26 v_mul_lo_u32, a quarter-rate instruction
  // on GCN, against 11.)
  Value oSplit = arith::MaxUIOp::create(
      b, loc, arith::MulIOp::create(b, loc, batches, go.sb), idx(1));
  Value lSplit = arith::MaxUIOp::create(
      b, loc, arith::MulIOp::create(b, loc, batches, gl.sb), idx(1));
  // The trip's first split g + trip * G * unroll; split i of the trip
  // G * i further (uniform offsets).
  Value oBase = arith::AddIOp::create(
      b, loc, arith::AddIOp::create(b, loc, offset(go), col),
      arith::MulIOp::create(b, loc, g, oSplit));
  Value lBase = arith::AddIOp::create(b, loc, offset(gl),
                                      arith::MulIOp::create(b, loc, g, lSplit));
  Value oStep = arith::MulIOp::create(b, loc, groups, oSplit);
  Value lStep = arith::MulIOp::create(b, loc, groups, lSplit);
  Value stride = arith::MulIOp::create(b, loc, groups, idx(kMergeUnroll));
  Value end = arith::SelectOp::create(b, loc, active, numSplits, idx(0));
  // Columns past D (a padded tile) read as zero.
  Value colsIn = cols > go.cols
                     ? arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                             col, idx(go.cols))
                           .getResult()
                     : Value();
  // The rescaling reference of a running max m: m, or 0 where no split
  // had a key (m = -inf), so that e^(m - ref) stays 0, not NaN.
  auto refOf = [&](OpBuilder &nb, Location l, Value m) -> Value {
    Value none =
        arith::CmpFOp::create(nb, l, arith::CmpFPredicate::OEQ, m, cf(negInf));
    return arith::SelectOp::create(nb, l, none, cf(0.0), m);
  };
  auto exp2Of = [&](OpBuilder &nb, Location l, Value x, Value ref) -> Value {
    Value d = arith::SubFOp::create(nb, l, x, ref);
    return math::Exp2Op::create(nb, l,
                                arith::MulFOp::create(nb, l, d, cf(log2e)));
  };
  SmallVector<Value> init{cf(negInf), cf(0.0)};
  init.append(4, cf(0.0));
  init.append({oBase, lBase});
  auto walk = scf::ForOp::create(
      b, loc, g, end, stride, init,
      [&](OpBuilder &nb, Location l, Value s0, ValueRange st) {
        SmallVector<Value> xs, os;
        Value oAt = st[6], lAt = st[7];
        for (int64_t i = 0; i < kMergeUnroll; ++i) {
          Value s = arith::AddIOp::create(
              nb, l, s0, arith::MulIOp::create(nb, l, groups, idx(i)));
          Value in = arith::CmpIOp::create(nb, l, arith::CmpIPredicate::ult, s,
                                           numSplits);
          auto load = scf::IfOp::create(
              nb, l, in,
              [&](OpBuilder &tb, Location tl) {
                SmallVector<Value> vals{
                    memref::LoadOp::create(tb, tl, gl.flat, ValueRange{lAt})};
                // One 16-byte load (the backend need not prove four
                // scalar loads adjacent).
                auto quad = [&](OpBuilder &qb, Location ql) {
                  Value v = vector::LoadOp::create(
                      qb, ql, VectorType::get({4}, f32), go.flat,
                      ValueRange{oAt});
                  SmallVector<Value> q;
                  for (int64_t k = 0; k < 4; ++k)
                    q.push_back(vector::ExtractOp::create(qb, ql, v, k));
                  return q;
                };
                if (!colsIn) {
                  llvm::append_range(vals, quad(tb, tl));
                } else {
                  auto padded = scf::IfOp::create(
                      tb, tl, colsIn,
                      [&](OpBuilder &qb, Location ql) {
                        scf::YieldOp::create(qb, ql, quad(qb, ql));
                      },
                      [&](OpBuilder &qb, Location ql) {
                        Value z = arith::ConstantOp::create(
                            qb, ql, qb.getF32FloatAttr(0.0));
                        scf::YieldOp::create(qb, ql, SmallVector<Value>(4, z));
                      });
                  llvm::append_range(vals, padded.getResults());
                }
                scf::YieldOp::create(tb, tl, vals);
              },
              [&](OpBuilder &eb, Location el) {
                Value z =
                    arith::ConstantOp::create(eb, el, eb.getF32FloatAttr(0.0));
                SmallVector<Value> vals{arith::ConstantOp::create(
                    eb, el, eb.getF32FloatAttr(negInf))};
                vals.append(4, z);
                scf::YieldOp::create(eb, el, vals);
              });
          xs.push_back(load.getResult(0));
          for (int64_t k = 0; k < 4; ++k)
            os.push_back(load.getResult(1 + k));
          oAt = arith::AddIOp::create(nb, l, oAt, oStep);
          lAt = arith::AddIOp::create(nb, l, lAt, lStep);
        }
        Value mNew = st[0];
        for (Value x : xs)
          mNew = arith::MaxNumFOp::create(nb, l, mNew, x);
        Value ref = refOf(nb, l, mNew);
        Value alpha = exp2Of(nb, l, st[0], ref);
        SmallVector<Value> next{mNew,
                                arith::MulFOp::create(nb, l, st[1], alpha)};
        for (int64_t k = 0; k < 4; ++k)
          next.push_back(arith::MulFOp::create(nb, l, st[2 + k], alpha));
        for (int64_t i = 0; i < kMergeUnroll; ++i) {
          Value w = exp2Of(nb, l, xs[i], ref);
          next[1] = arith::AddFOp::create(nb, l, next[1], w);
          for (int64_t k = 0; k < 4; ++k)
            next[2 + k] =
                math::FmaOp::create(nb, l, os[i * 4 + k], w, next[2 + k]);
        }
        next.append({oAt, lAt});
        scf::YieldOp::create(nb, l, next);
      });
  // Each thread's state to slot tid of each field.
  Value scratch = kernel.addWorkgroupAttribution(
      MemRefType::get({kFields * threads}, f32, MemRefLayoutAttrInterface(),
                      gpu::AddressSpaceAttr::get(b.getContext(),
                                                 gpu::AddressSpace::Workgroup)),
      loc);
  auto field = [&](int64_t f, Value slot) -> Value {
    return arith::AddIOp::create(b, loc, slot, idx(f * threads));
  };
  for (int64_t f = 0; f < kFields; ++f)
    memref::StoreOp::create(b, loc, walk.getResult(f), scratch,
                            ValueRange{field(f, tid)});
  gpu::BarrierOp::create(b, loc);

  // Phase 2, per row of the fragment: the groups' states read at once
  // (group gg >= T / U weighs nothing: its m is taken as -inf), M = max_g
  // m_g, L and the columns' outputs weighed by e^(m_g - ref). (The planted
  // bug merges the first group only.)
  const int64_t maxGroups =
      bug == PlantedBug::MergeSplitsFirstGroup ? 1 : threads / quads;
  const int64_t cc = colsPerThread(accType);
  SmallVector<Value> ms, ls, accs;
  for (int64_t i = 0; i < mapping.rm; ++i) {
    Value rr = rowOf(i);
    Value rowLive =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, rr, live);
    auto rowIf = scf::IfOp::create(
        b, loc, rowLive,
        [&](OpBuilder &tb, Location tl) {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPoint(tb.getInsertionBlock(), tb.getInsertionPoint());
          Value rowUnit = arith::MulIOp::create(b, loc, rr, idx(quads));
          SmallVector<Value> quadOf, fieldOf;
          for (int64_t j = 0; j < cc; ++j) {
            Value c = colOf(j, cc);
            quadOf.push_back(arith::DivUIOp::create(b, loc, c, idx(4)));
            fieldOf.push_back(arith::MulIOp::create(
                b, loc,
                arith::AddIOp::create(
                    b, loc, arith::RemUIOp::create(b, loc, c, idx(4)), idx(2)),
                idx(threads)));
          }
          SmallVector<Value> mg, lg, ag;
          for (int64_t gg = 0; gg < maxGroups; ++gg) {
            // Slot of unit (rr, q) of group gg: gg * U + rr * quads + q,
            // group gg clamped to the last that exists.
            Value have = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::ult, idx(gg), groupsAll);
            Value at = arith::MulIOp::create(
                b, loc, arith::MinUIOp::create(b, loc, idx(gg), groupsAll),
                units);
            at = arith::AddIOp::create(b, loc, at, rowUnit);
            Value first = arith::MinUIOp::create(
                b, loc, at, idx(threads - 1)); // unit (rr, 0)
            Value m = memref::LoadOp::create(b, loc, scratch,
                                             ValueRange{field(0, first)});
            mg.push_back(arith::SelectOp::create(b, loc, have, m, cf(negInf)));
            lg.push_back(memref::LoadOp::create(b, loc, scratch,
                                                ValueRange{field(1, first)}));
            for (int64_t j = 0; j < cc; ++j) {
              Value slot = arith::MinUIOp::create(
                  b, loc, arith::AddIOp::create(b, loc, at, quadOf[j]),
                  idx(threads - 1));
              ag.push_back(memref::LoadOp::create(
                  b, loc, scratch,
                  ValueRange{arith::AddIOp::create(b, loc, slot, fieldOf[j])}));
            }
          }
          Value m = mg[0];
          for (int64_t gg = 1; gg < maxGroups; ++gg)
            m = arith::MaxNumFOp::create(b, loc, m, mg[gg]);
          Value ref = refOf(b, loc, m);
          SmallVector<Value> res{m, cf(0.0)};
          res.append(cc, cf(0.0));
          for (int64_t gg = 0; gg < maxGroups; ++gg) {
            Value w = exp2Of(b, loc, mg[gg], ref);
            res[1] = math::FmaOp::create(b, loc, lg[gg], w, res[1]);
            for (int64_t j = 0; j < cc; ++j)
              res[2 + j] =
                  math::FmaOp::create(b, loc, ag[gg * cc + j], w, res[2 + j]);
          }
          scf::YieldOp::create(tb, tl, res);
        },
        [&](OpBuilder &eb, Location el) {
          SmallVector<Value> res{
              arith::ConstantOp::create(eb, el, eb.getF32FloatAttr(negInf))};
          res.append(1 + cc, arith::ConstantOp::create(
                                 eb, el, eb.getF32FloatAttr(0.0)));
          scf::YieldOp::create(eb, el, res);
        });
    ms.push_back(rowIf.getResult(0));
    ls.push_back(rowIf.getResult(1));
    for (int64_t j = 0; j < cc; ++j)
      accs.push_back(rowIf.getResult(2 + j));
  }
  fragments[op.getM()] = vector::FromElementsOp::create(
      b, loc, fragmentType(op.getM().getType()), ms);
  fragments[op.getL()] = vector::FromElementsOp::create(
      b, loc, fragmentType(op.getL().getType()), ls);
  fragments[op.getAcc()] =
      vector::FromElementsOp::create(b, loc, fragmentType(accType), accs);
  return success();
}

Value KernelLowering::rowBroadcast(RowBroadcastOp op) {
  Value rows = *fragment(op.getInput());
  const int64_t cc = colsPerThread(op.getResult().getType());
  SmallVector<int64_t> mask;
  for (int64_t i = 0; i < mapping.rm; ++i)
    mask.append(cc, i);
  return vector::ShuffleOp::create(b, loc, rows, rows, mask);
}

Value KernelLowering::tileMaskNeeded(TileMaskOp op) {
  auto type = cast<RankedTensorType>(op.getInput().getType());
  // ALiBi changes every entry; packed rows (a period) may straddle heads.
  if (op.getAlibi() || op.getPeriod() || !type.hasStaticShape() ||
      type.getRank() != 2)
    return Value();
  const int64_t bm = type.getDimSize(0), bn = type.getDimSize(1);
  auto cmp = [&](arith::CmpIPredicate p, Value x, Value y) -> Value {
    return arith::CmpIOp::create(b, loc, p, x, y);
  };
  auto add = [&](Value x, int64_t c) -> Value {
    return arith::AddIOp::create(b, loc, x, idx(c));
  };
  Value row = *scalar(op.getRow()), col = *scalar(op.getCol());
  Value cols = *scalar(op.getCols());
  Value lastCol = add(col, bn - 1);
  // Keys past the end (the planted no-ragged-mask bug hides none).
  Value needed = bug == PlantedBug::NoRaggedMask
                     ? Value(arith::ConstantIntOp::create(b, loc, 0, 1))
                     : cmp(arith::CmpIPredicate::sge, lastCol, cols);
  const bool causal = op.getCausal();
  const int64_t left = op.getWindowLeft() ? int64_t(*op.getWindowLeft()) : -1;
  const int64_t right =
      op.getWindowRight() ? int64_t(*op.getWindowRight()) : -1;
  if (causal || left >= 0 || right >= 0) {
    Value shift = arith::SubIOp::create(b, loc, cols, *scalar(op.getRows()));
    // The first row's diagonal bounds the block's rightmost visible column
    // (the planted bug takes the last row's: the diagonal block unmasked).
    Value firstDiag = arith::AddIOp::create(b, loc, row, shift);
    Value lastDiag = add(firstDiag, bm - 1);
    Value rightBound =
        bug == PlantedBug::MaskSkipsDiagonal ? lastDiag : firstDiag;
    auto orWith = [&](Value c) {
      needed = arith::OrIOp::create(b, loc, needed, c);
    };
    if (causal)
      orWith(cmp(arith::CmpIPredicate::sgt, lastCol, rightBound));
    // (The window's planted bugs hide one more column: so does this test.)
    if (right >= 0)
      orWith(cmp(arith::CmpIPredicate::sgt, lastCol,
                 add(rightBound, bug == PlantedBug::WindowRightOffByOne
                                     ? right - 1
                                     : right)));
    // The last row's window starts furthest right.
    if (left >= 0)
      orWith(cmp(arith::CmpIPredicate::slt, col,
                 add(lastDiag, bug == PlantedBug::WindowLeftOffByOne
                                   ? 1 - left
                                   : -left)));
  }
  return needed;
}

Value KernelLowering::tileMask(TileMaskOp op) {
  // Only a block that has an entry to hide is masked: a uniform branch
  // (blocks left of every diagonal and inside Lk, the most of a long causal
  // or full attention, skip the compares and selects).
  Value frag = *fragment(op.getInput());
  Value needed = tileMaskNeeded(op);
  if (!needed)
    return maskEntries(op, frag);
  auto branch = scf::IfOp::create(b, loc, TypeRange{frag.getType()}, needed,
                                  /*withElseRegion=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(&branch.getThenRegion().front());
  scf::YieldOp::create(b, loc, maskEntries(op, frag));
  b.setInsertionPointToStart(&branch.getElseRegion().front());
  scf::YieldOp::create(b, loc, frag);
  return branch.getResult(0);
}

Value KernelLowering::maskEntries(TileMaskOp op, Value frag) {
  auto type = op.getInput().getType();
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
  // Each entry is hidden where its column is right of its row's last
  // visible column `hi` (the last key, the diagonal, the window's right
  // end: their minimum) or, with a left window, left of `lo`: one compare
  // per entry against per-row bounds (gfx906: one lane mask each, not one
  // per condition).
  // Planted bug: no column is past the end (keys >= Lk stay visible).
  Value hi = splat(bug == PlantedBug::NoRaggedMask
                       ? idx(std::numeric_limits<int64_t>::max())
                       : arith::SubIOp::create(b, loc, numCols, idx(1)));
  Value lo;
  const int64_t left = op.getWindowLeft() ? int64_t(*op.getWindowLeft()) : -1;
  const int64_t right =
      op.getWindowRight() ? int64_t(*op.getWindowRight()) : -1;
  auto fragType = cast<VectorType>(frag.getType());
  if (op.getAlibi() || op.getCausal() || left >= 0 || right >= 0) {
    // Bottom-right aligned: row r's diagonal is column r + (cols - rows); a
    // packed row is position r mod period of a head of `period` rows.
    Value period = op.getPeriod() ? *scalar(op.getPeriod()) : Value();
    if (period)
      rowsV = arith::RemUIOp::create(b, loc, rowsV, splat(period));
    Value shift = arith::SubIOp::create(
        b, loc, numCols, period ? period : *scalar(op.getRows()));
    Value diag = arith::AddIOp::create(b, loc, rowsV, splat(shift));
    // ALiBi: x - slope * |diag - c| (the planted bug measures |r - c|, from
    // the start).
    if (Value slopes = op.getAlibi()) {
      Value slopeFrag = *fragment(slopes);
      SmallVector<int64_t> perRow;
      for (int64_t i = 0; i < mapping.rm; ++i)
        for (int64_t j = 0; j < cc; ++j)
          perRow.push_back(i);
      Value slopeAt = vector::ShuffleOp::create(b, loc, slopeFrag, slopeFrag,
                                                perRow);
      Value from = bug == PlantedBug::AlibiWrongEnd ? rowsV : diag;
      Value delta = arith::SubIOp::create(b, loc, from, colsV);
      Value dist = arith::MaxSIOp::create(
          b, loc, delta,
          arith::SubIOp::create(b, loc, splat(idx(0)), delta));
      auto i64Vec = VectorType::get({n}, b.getI64Type());
      Value distF = arith::SIToFPOp::create(
          b, loc, fragType,
          arith::IndexCastOp::create(b, loc, i64Vec, dist));
      frag = arith::SubFOp::create(
          b, loc, frag, arith::MulFOp::create(b, loc, slopeAt, distF));
    }
    auto offset = [&](Value v, int64_t c) -> Value {
      return arith::AddIOp::create(b, loc, v, splat(idx(c)));
    };
    // Causal: columns past the diagonal.
    if (op.getCausal())
      hi = arith::MinSIOp::create(b, loc, hi, diag);
    // The window: columns past diag + right and before diag - left (the
    // planted bugs also hide the window's outermost column on that side).
    if (right >= 0)
      hi = arith::MinSIOp::create(
          b, loc, hi,
          offset(diag, bug == PlantedBug::WindowRightOffByOne ? right - 1
                                                               : right));
    if (left >= 0)
      lo = offset(diag, bug == PlantedBug::WindowLeftOffByOne ? 1 - left
                                                              : -left);
  }
  Value masked =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, colsV, hi);
  if (lo)
    masked = arith::OrIOp::create(
        b, loc, masked,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, colsV, lo));
  Value negInf = arith::ConstantOp::create(
      b, loc,
      DenseElementsAttr::get(
          fragType, b.getFloatAttr(fragType.getElementType(),
                                   -std::numeric_limits<double>::infinity())));
  return arith::SelectOp::create(b, loc, masked, negInf, frag);
}

void KernelLowering::traceRow(TraceRowOp op) {
  Value m = *fragment(op.getM()), l = *fragment(op.getL());
  Value acc = *fragment(op.getAcc());
  const int64_t cc = colsPerThread(op.getAcc().getType());
  const int64_t cols = op.getCols(), stride = FA_ABI_TRACE_STATS + cols;
  auto eq = [&](Value x, Value y) {
    return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, x, y);
  };
  // Row `block` of the trace, [m, l, acc[0..cols)], if the buffer has it
  // (a null descriptor has size 0).
  Value base =
      arith::MulIOp::create(b, loc, *scalar(op.getBlock()), idx(stride));
  Value fits =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ule,
                            arith::AddIOp::create(b, loc, base, idx(stride)),
                            memref::DimOp::create(b, loc, traceBuffer, 0));
  Value mine = arith::AndIOp::create(
      b, loc,
      arith::AndIOp::create(
          b, loc, eq(*scalar(op.getBatch()), *scalar(op.getTraceBatch())),
          eq(*scalar(op.getHead()), *scalar(op.getTraceHead()))),
      fits);
  Value row0 = *scalar(op.getRow()), traced = *scalar(op.getTraceRow());
  for (int64_t i = 0; i < mapping.rm; ++i) {
    Value hit = arith::AndIOp::create(
        b, loc, mine,
        eq(arith::AddIOp::create(b, loc, row0, rowOf(i)), traced));
    auto ifOp = scf::IfOp::create(b, loc, hit, /*withElseRegion=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    auto store = [&](Value value, Value at) {
      memref::StoreOp::create(b, loc, value, traceBuffer, ValueRange{at});
    };
    auto element = [&](Value vec, int64_t k) -> Value {
      return vector::ExtractOp::create(b, loc, vec, ArrayRef<int64_t>{k});
    };
    // m and l are the same in every lane of the row: lane 0 writes them.
    auto first = scf::IfOp::create(b, loc, eq(tc, idx(0)), false);
    {
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(first.thenBlock());
      store(element(m, i), base);
      store(element(l, i), arith::AddIOp::create(b, loc, base, idx(1)));
    }
    for (int64_t j = 0; j < cc; ++j) {
      Value col = colOf(j);
      Value at = arith::AddIOp::create(
          b, loc, base,
          arith::AddIOp::create(b, loc, col, idx(FA_ABI_TRACE_STATS)));
      if ((j + 1) * mapping.tc <= cols) {
        store(element(acc, i * cc + j), at);
        continue;
      }
      // A padded D: the columns past D are not traced.
      auto inD = scf::IfOp::create(
          b, loc,
          arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, col,
                                idx(cols)),
          false);
      OpBuilder::InsertionGuard inner(b);
      b.setInsertionPointToStart(inD.thenBlock());
      store(element(acc, i * cc + j), at);
    }
  }
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

FailureOr<scf::ForOp> KernelLowering::lowerLoop(scf::ForOp op,
                                                ValueRange inits) {
  FailureOr<Value> lb = scalar(op.getLowerBound()),
                   ub = scalar(op.getUpperBound()), step = scalar(op.getStep());
  if (mlir::failed(lb) || mlir::failed(ub) || mlir::failed(step))
    return mlir::failure();
  auto loop = scf::ForOp::create(b, loc, *lb, *ub, *step, inits);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(loop.getBody());
  scalars.map(op.getInductionVar(), loop.getInductionVar());
  bindValues(op.getRegionIterArgs(), loop.getRegionIterArgs());
  if (mlir::failed(lowerBlock(*op.getBody())))
    return mlir::failure();
  auto yield = cast<scf::YieldOp>(op.getBody()->getTerminator());
  SmallVector<Value> yielded;
  if (mlir::failed(lowerValues(yield.getOperands(), yielded)))
    return mlir::failure();
  scf::YieldOp::create(b, loc, yielded);
  return loop;
}

LogicalResult KernelLowering::lowerFor(scf::ForOp op) {
  SmallVector<Value> inits;
  if (mlir::failed(lowerValues(op.getInitArgs(), inits)))
    return mlir::failure();
  // A loop that copies tiles with 16-byte vectors when the buffers allow it
  // is versioned on that (uniform) condition: one copy of the loop with
  // only vector copies, one with only scalar copies. A per-copy branch
  // would keep the scalar path's addresses live across the whole loop.
  SmallVector<Value> sources;
  op.walk([&](CopyTileOp copy) {
    if (vectorWidth(copy) && !llvm::is_contained(sources, copy.getSource()))
      sources.push_back(copy.getSource());
  });
  op.walk([&](FetchTileOp fetch) {
    Type elt = fetch.getSource().getType().getElementType();
    if (fetchShape(elt, ldsBuffers[fetch.getBuffer()].layout).width > 1 &&
        !llvm::is_contained(sources, fetch.getSource()))
      sources.push_back(fetch.getSource());
  });
  if (sources.empty() || copyPath != CopyPath::Dynamic) {
    FailureOr<scf::ForOp> loop = lowerLoop(op, inits);
    if (mlir::failed(loop))
      return mlir::failure();
    bindValues(op.getResults(), loop->getResults());
    return success();
  }
  Value aligned;
  for (Value source : sources) {
    Value ok = vectorCopyOk(globals.lookup(source));
    aligned = aligned ? Value(arith::AndIOp::create(b, loc, aligned, ok)) : ok;
  }

  auto ifOp = scf::IfOp::create(b, loc, ValueRange(inits).getTypes(), aligned,
                                /*withElseRegion=*/true);
  for (CopyPath path : {CopyPath::Vector, CopyPath::Scalar}) {
    OpBuilder::InsertionGuard guard(b);
    Block *block =
        path == CopyPath::Vector ? ifOp.thenBlock() : ifOp.elseBlock();
    b.setInsertionPointToStart(block);
    copyPath = path;
    FailureOr<scf::ForOp> loop = lowerLoop(op, inits);
    copyPath = CopyPath::Dynamic;
    if (mlir::failed(loop))
      return mlir::failure();
    scf::YieldOp::create(b, loc, loop->getResults());
  }
  bindValues(op.getResults(), ifOp.getResults());
  return success();
}

LogicalResult KernelLowering::lowerOp(Operation *op) {
  loc = op->getLoc();
  if (isa<TileDotOp>(op) ||
      (isa<LoadTileOp>(op) &&
       llvm::any_of(op->getUsers(), llvm::IsaPred<TileDotOp>)))
    return op->emitOpError()
           << "is a tile in LDS without an explicit buffer: run fa-promote "
              "before fa-lower-to-gpu";
  // The tile-op helpers below assume that every operand has a kernel-side
  // value; check first so that malformed IR gets a diagnostic.
  if (isa<CopyTileOp, FetchTileOp, StageTileOp, WriteTileOp, LdsDotOp,
          StoreTileOp, LoadTileOp, RowReduceOp, RowCombineOp, RowBroadcastOp,
          TileMaskOp, MergeSplitsOp>(op)) {
    for (OpOperand &operand : op->getOpOperands()) {
      Value v = operand.get();
      if (auto m = dyn_cast<MemRefType>(v.getType())) {
        bool lds =
            gpu::GPUDialect::isWorkgroupMemoryAddressSpace(m.getMemorySpace());
        if (lds ? !ldsBuffers.count(v) : !globals.count(v))
          return op->emitOpError()
                 << "cannot lower: operand #" << operand.getOperandNumber()
                 << (lds ? " is not an fa.lds_buffer of this grid"
                         : " is not one of the kernel's buffers (fa.args)");
        continue;
      }
      if (mlir::failed(isa<RankedTensorType>(v.getType()) ? fragment(v)
                                                          : scalar(v)))
        return op->emitOpError() << "cannot lower: " << failure;
    }
  }
  if (isa<LdsBufferOp>(op))
    return success(); // allocated up front (allocateLds)
  if (isa<gpu::BarrierOp>(op)) {
    gpu::BarrierOp::create(b, loc);
    return success();
  }
  if (auto copy = dyn_cast<CopyTileOp>(op)) {
    copyTile(copy);
    return success();
  }
  if (auto fetch = dyn_cast<FetchTileOp>(op)) {
    fragments[fetch.getResult()] = fetchTile(fetch);
    return success();
  }
  if (auto load = dyn_cast<LoadTileOp>(op)) {
    fragments[load.getResult()] = loadTile(load);
    return success();
  }
  if (auto load = dyn_cast<memref::LoadOp>(op)) {
    // A paged kernel's sequence length, cache_seqlens[b]; a varlen
    // kernel's sequence bounds, cu_seqlens_q/k[b] and [b + 1].
    auto it = globals.find(load.getMemRef());
    if (it == globals.end() ||
        (it->second.role != kSeqLens && it->second.role != kCuQ &&
         it->second.role != kCuK) ||
        load.getIndices().size() != 1)
      return op->emitOpError()
             << "cannot lower: only the cache lengths (fa.args[8]) and "
                "cu_seqlens (fa.args[9], [10]) are read element by element";
    FailureOr<Value> at = scalar(load.getIndices()[0]);
    if (mlir::failed(at))
      return op->emitOpError() << "cannot lower: " << failure;
    scalars.map(load.getResult(),
                memref::LoadOp::create(b, loc, it->second.flat, ValueRange{*at})
                    .getResult());
    return success();
  }
  if (auto stage = dyn_cast<StageTileOp>(op)) {
    stageTile(stage);
    return success();
  }
  if (auto write = dyn_cast<WriteTileOp>(op)) {
    writeTile(write);
    return success();
  }
  if (auto store = dyn_cast<StoreTileOp>(op)) {
    storeTile(store);
    return success();
  }
  if (auto dot = dyn_cast<LdsDotOp>(op)) {
    fragments[dot.getResult()] = ldsDot(dot);
    return success();
  }
  if (auto merge = dyn_cast<MergeSplitsOp>(op))
    return mergeSplits(merge);
  if (auto reduce = dyn_cast<RowReduceOp>(op)) {
    fragments[reduce.getResult()] = rowReduce(reduce);
    return success();
  }
  if (auto combine = dyn_cast<RowCombineOp>(op)) {
    fragments[combine.getResult()] = rowCombine(combine);
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
  if (auto trace = dyn_cast<TraceRowOp>(op)) {
    if (!traceBuffer || trace.getTrace() != traceSource)
      return op->emitOpError()
             << "cannot lower: the trace is not the grid's fa.trace buffer";
    for (Value v : trace->getOperands())
      if (v != trace.getTrace() &&
          mlir::failed(isa<RankedTensorType>(v.getType()) ? fragment(v)
                                                          : scalar(v)))
        return op->emitOpError() << "cannot lower: " << failure;
    traceRow(trace);
    return success();
  }
  if (auto loop = dyn_cast<scf::ForOp>(op))
    return lowerFor(loop);
  if (auto branch = dyn_cast<scf::IfOp>(op))
    return lowerIf(branch);
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

LogicalResult KernelLowering::lowerIf(scf::IfOp op) {
  // A branch of the epilogue (a split kernel's direct write at S = 1, the
  // combine kernel's nothing-to-do): stores only, no values out.
  if (op.getNumResults() != 0)
    return op.emitOpError()
           << "cannot lower: an scf.if with results in tile IR";
  FailureOr<Value> cond = scalar(op.getCondition());
  if (mlir::failed(cond))
    return op.emitOpError() << "cannot lower: " << failure;
  const bool hasElse = !op.getElseRegion().empty();
  auto lowered = scf::IfOp::create(b, loc, TypeRange{}, *cond, hasElse);
  OpBuilder::InsertionGuard guard(b);
  for (auto [from, to] : {std::pair{op.thenBlock(), lowered.thenBlock()},
                          std::pair{op.elseBlock(), lowered.elseBlock()}}) {
    if (!from)
      continue;
    b.setInsertionPoint(to->getTerminator());
    if (mlir::failed(lowerBlock(*from)))
      return mlir::failure();
  }
  return success();
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
  if (roles.size() >= kNumSplitRoles)
    splits = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                        kernel.getArgument(kWsArg + 2));
  if (roles.size() >= kNumPagedRoles && roles[kTable] >= 0) {
    pageSize = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                          kernel.getArgument(kTableArg + 2));
    tableStride = arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                             kernel.getArgument(kTableArg + 3));
  }
  auto func = grid->getParentOfType<func::FuncOp>();
  for (int r = 0; r < static_cast<int>(roles.size()); ++r) {
    if (roles[r] < 0)
      continue;
    if (r == kTable || r == kSeqLens || r == kCuQ || r == kCuK) {
      // i32 metadata, read element by element: table[b][i] at b * stride +
      // i (the table's row stride word), lengths[b] at b, cu_seqlens[b] at
      // b.
      Global g;
      g.role = r;
      g.flat = kernel.getArgument(r >= kCuQ ? kCuArg + (r - kCuQ)
                                            : kTableArg + (r - kTable));
      globals[func.getArgument(roles[r])] = g;
      continue;
    }
    if (r == kWsO || r == kWsLse) {
      // The workspace is contiguous, f32 [S*B, Hq, Lq, D] and [S*B, Hq, Lq].
      Global g;
      g.role = r;
      g.flat = kernel.getArgument(kWsArg + (r - kWsO));
      auto argType = cast<MemRefType>(func.getArgument(roles[r]).getType());
      g.cols = r == kWsO ? argType.getDimSize(3) : 0;
      g.sl = r == kWsO ? idx(g.cols) : idx(1);
      g.sh = arith::MulIOp::create(b, loc, sizes[3], g.sl);
      g.sb = arith::MulIOp::create(b, loc, sizes[1], g.sh);
      globals[func.getArgument(roles[r])] = g;
      continue;
    }
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
    auto argType = cast<MemRefType>(func.getArgument(roles[r]).getType());
    if (argType.getRank() == 4)
      g.cols = argType.getDimSize(3);
    if (bug == PlantedBug::LseStridesIgnored && r == kLse) {
      g.sh = sizes[3];
      g.sb = arith::MulIOp::create(b, loc, sizes[1], sizes[3]);
    }
    globals[func.getArgument(roles[r])] = g;
  }
  // The head words: ALiBi slopes and sinks, [Hq] f32, read as [B, Hq, L]
  // with strides (0, 1, 0): every row of a head reads its head's value.
  if (auto head = grid->getAttrOfType<DenseI64ArrayAttr>("fa.head_params")) {
    for (int i = 0; i < 2; ++i) {
      if (head[i] < 0)
        continue;
      Global g;
      g.role = kNumVarlenRoles + i;
      g.flat = kernel.getArgument(headParamsArg(roles.size()) + i);
      g.sb = idx(0);
      g.sh = idx(1);
      g.sl = idx(0);
      globals[func.getArgument(head[i])] = g;
    }
  }
  // The trace words (fa-tile trace=true): the buffer and the traced
  // batch, head and row, as index values of the kernel.
  if (auto trace = grid->getAttrOfType<DenseI64ArrayAttr>("fa.trace")) {
    traceBuffer = kernel.getArgument(kTraceArg);
    traceSource = func.getArgument(trace[0]);
    for (int i = 1; i < 4; ++i)
      scalars.map(func.getArgument(trace[i]),
                  arith::IndexCastOp::create(b, loc, b.getIndexType(),
                                             kernel.getArgument(kTraceArg + i))
                      .getResult());
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
  if (mlir::failed(allocateLds()))
    return mlir::failure();
  return lowerBlock(*grid.getBody());
}
