//===- KernelMemory.cpp - Global <-> LDS <-> register movement ------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The memory half of KernelLowering (see KernelLowering.h): cooperative
// global -> LDS copies for fa.copy_tile (16-byte vectors when the base and
// strides are aligned, scalars otherwise; rows past the end become zero;
// two rows interleaved for a pair-interleaved buffer), fragments written
// to LDS for fa.write_tile, and bounds-checked fragment stores for
// fa.store_tile.
//
//===----------------------------------------------------------------------===//

#include "compiler/Lowering/KernelLowering.h"

#include <numeric>

using namespace mlir;
using namespace mlir::fa;

//===----------------------------------------------------------------------===//
// Memory: global <-> LDS <-> registers
//===----------------------------------------------------------------------===//

Value KernelLowering::columnsLeft(const Global &g, Value c, int64_t tileCols,
                                  int64_t width) {
  if (tileCols <= g.cols || g.cols % width != 0)
    return {};
  if (bug == PlantedBug::PaddedColumnsRead && g.role != kO)
    return {};
  return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, c,
                               idx(g.cols));
}

std::pair<Value, Value> KernelLowering::rowStart(const Global &g, Value base,
                                                 Value row0, Value r) {
  Value row = arith::AddIOp::create(b, loc, row0, r);
  if (paging.table) {
    // Row n of the sequence: row n mod page_size of page table[b][n / ps];
    // the table is read only for rows that exist.
    Value exists = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row,
                                         paging.rows);
    Value slot = arith::DivUIOp::create(b, loc, row, pageSize);
    if (bug == PlantedBug::PageIndexOffByOne)
      slot = arith::AddIOp::create(b, loc, slot, idx(1));
    Value at = arith::AddIOp::create(
        b, loc, arith::MulIOp::create(b, loc, paging.batch, tableStride), slot);
    const Global &t = globals.lookup(paging.table);
    auto read = scf::IfOp::create(
        b, loc, exists,
        [&](OpBuilder &tb, Location tl) {
          Value entry = memref::LoadOp::create(tb, tl, t.flat, ValueRange{at});
          scf::YieldOp::create(tb, tl,
                               ValueRange{arith::IndexCastOp::create(
                                   tb, tl, tb.getIndexType(), entry)});
        },
        [&](OpBuilder &eb, Location el) {
          scf::YieldOp::create(
              eb, el, ValueRange{arith::ConstantIndexOp::create(eb, el, 0)});
        });
    Value page = read.getResult(0);
    Value within = arith::RemUIOp::create(b, loc, row, pageSize);
    Value withinStride = bug == PlantedBug::PageOffsetWrongStride ? g.sh : g.sl;
    Value start = arith::AddIOp::create(
        b, loc,
        arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, page, g.sb),
                              arith::MulIOp::create(b, loc, paging.head, g.sh)),
        arith::MulIOp::create(b, loc, within, withinStride));
    return {start, exists};
  }
  if (!packing.group)
    return {arith::AddIOp::create(b, loc, base,
                                  arith::MulIOp::create(b, loc, r, g.sl)),
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row,
                                  rowLimit(g))};
  // Packed query heads: row p is position p mod L of head h*G + p / L (a
  // varlen sequence's L may be 0: no row exists, and p / 1 stands in).
  Value limit = rowLimit(g);
  Value divisor = sequence.rows
                      ? Value(arith::MaxUIOp::create(b, loc, limit, idx(1)))
                      : limit;
  Value headOf = arith::DivUIOp::create(b, loc, row, divisor);
  Value head =
      bug == PlantedBug::GqaPackWrongHead
          ? packing.head
          : Value(arith::MulIOp::create(b, loc, packing.head, packing.group));
  head = arith::AddIOp::create(b, loc, head, headOf);
  Value pos = arith::RemUIOp::create(b, loc, row, divisor);
  Value start = arith::AddIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc,
                            arith::MulIOp::create(b, loc, packing.batch, g.sb),
                            arith::MulIOp::create(b, loc, head, g.sh)),
      arith::MulIOp::create(b, loc, pos, g.sl));
  start = addSequenceOffset(g, start);
  Value exists = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::slt, row,
      arith::MulIOp::create(b, loc, limit, packing.group));
  return {start, exists};
}

Value KernelLowering::loadUnitRow(const Global &g, Value base, Value row0,
                                  Value r, Value c, int64_t width,
                                  int64_t tileCols, bool scalarLoads,
                                  Value valid) {
  Type elt = cast<MemRefType>(g.flat.getType()).getElementType();
  Type valueType = width == 1 ? elt : Type(VectorType::get({width}, elt));
  // Unpacked, as base + (r * stride + c): the association the backend has
  // always been given.
  Value rowBase, inRange, rowOffset;
  if (packing.group || paging.table) {
    std::tie(rowBase, inRange) = rowStart(g, base, row0, r);
  } else {
    inRange = rowsInRange
                  ? Value(arith::ConstantIntOp::create(b, loc, 1, 1))
                  : Value(arith::CmpIOp::create(
                        b, loc, arith::CmpIPredicate::slt,
                        arith::AddIOp::create(b, loc, row0, r), rowLimit(g)));
    rowOffset = arith::MulIOp::create(b, loc, r, g.sl);
  }
  if (valid)
    inRange = arith::AndIOp::create(b, loc, inRange, valid);
  // A tile wider than the rows (D padded): whole units past D read as zero;
  // a unit across D is loaded element by element.
  if (Value cOk = columnsLeft(g, c, tileCols, width))
    inRange = arith::AndIOp::create(b, loc, inRange, cOk);
  const bool straddles = tileCols > g.cols && g.cols % width != 0 &&
                         bug != PlantedBug::PaddedColumnsRead;
  Value off =
      rowBase ? Value(arith::AddIOp::create(b, loc, rowBase, c))
              : Value(arith::AddIOp::create(
                    b, loc, base, arith::AddIOp::create(b, loc, rowOffset, c)));
  auto load = scf::IfOp::create(
      b, loc, inRange,
      [&](OpBuilder &tb, Location tl) {
        Value v;
        if (width == 1) {
          v = memref::LoadOp::create(tb, tl, g.flat, off);
        } else if (!scalarLoads && !straddles) {
          v = vector::LoadOp::create(tb, tl, cast<VectorType>(valueType),
                                     g.flat, off, false, llvm::MaybeAlign(16));
        } else {
          auto cst = [&](int64_t x) {
            return arith::ConstantIndexOp::create(tb, tl, x);
          };
          Value zero = arith::ConstantOp::create(
              tb, tl, cast<TypedAttr>(tb.getZeroAttr(elt)));
          SmallVector<Value> elements;
          for (int64_t e = 0; e < width; ++e) {
            Value at = arith::AddIOp::create(tb, tl, off, cst(e));
            if (!straddles) {
              elements.push_back(memref::LoadOp::create(tb, tl, g.flat, at));
              continue;
            }
            // Past D: load the row's first element (it exists), use 0.
            Value ok = arith::CmpIOp::create(
                tb, tl, arith::CmpIPredicate::ult,
                arith::AddIOp::create(tb, tl, c, cst(e)), cst(g.cols));
            Value first =
                rowBase ? rowBase
                        : Value(arith::AddIOp::create(tb, tl, base, rowOffset));
            at = arith::SelectOp::create(tb, tl, ok, at, first);
            Value x = memref::LoadOp::create(tb, tl, g.flat, at);
            elements.push_back(arith::SelectOp::create(tb, tl, ok, x, zero));
          }
          v = vector::FromElementsOp::create(
              tb, tl, cast<VectorType>(valueType), elements);
        }
        scf::YieldOp::create(tb, tl, v);
      },
      [&](OpBuilder &eb, Location el) {
        Value zero = arith::ConstantOp::create(
            eb, el, cast<TypedAttr>(eb.getZeroAttr(valueType)));
        scf::YieldOp::create(eb, el, zero);
      });
  return load.getResult(0);
}

void KernelLowering::storeUnit(const LdsBuf &buf, Value u, Value c,
                               ArrayRef<Value> rows, int64_t width) {
  const LdsLayout &layout = buf.layout;
  Type ldsElt = layout.elementType;
  // A widened buffer (16-bit source, f32 in LDS) converts once here instead
  // of in every product step.
  SmallVector<Value> values;
  for (Value v : rows) {
    if (getElementTypeOrSelf(v.getType()) != ldsElt) {
      Type to = isa<VectorType>(v.getType())
                    ? Type(VectorType::get(
                          cast<VectorType>(v.getType()).getShape(), ldsElt))
                    : ldsElt;
      v = arith::ExtFOp::create(b, loc, to, v);
    }
    values.push_back(v);
  }
  // LDS stores are as aligned as the unit's start: a multiple of the
  // (pair-)row stride plus a multiple of the unit.
  const int64_t unitRows = layout.pairs ? 2 : 1;
  const int64_t eltBytes = ldsElt.getIntOrFloatBitWidth() / 8;
  const int64_t unitBytes = unitRows * width * eltBytes;
  const int64_t strideBytes = unitRows * layout.rowStride() * eltBytes;
  llvm::MaybeAlign ldsAlign(
      std::gcd(std::gcd<int64_t>(strideBytes, unitBytes), 16));
  if (!layout.pairs) {
    Value at = ldsIndex(b, loc, buf, u, c);
    if (width == 1)
      memref::StoreOp::create(b, loc, values[0], buf.mem, ValueRange{at});
    else
      vector::StoreOp::create(b, loc, values[0], buf.mem, ValueRange{at}, false,
                              ldsAlign);
    return;
  }
  // Rows 2u and 2u+1, interleaved: x0 y0 x1 y1 ...
  Value r = arith::MulIOp::create(b, loc, u, idx(2));
  Value both;
  if (width == 1) {
    const bool swap = bug == PlantedBug::ScalarVPairSwapped;
    both = vector::FromElementsOp::create(
        b, loc, VectorType::get({2}, ldsElt),
        ValueRange{values[swap ? 1 : 0], values[swap ? 0 : 1]});
  } else {
    SmallVector<int64_t> mask;
    for (int64_t e = 0; e < width; ++e)
      mask.append({e, width + e});
    both = vector::ShuffleOp::create(b, loc, values[0], values[1], mask);
  }
  vector::StoreOp::create(b, loc, both, buf.mem,
                          ValueRange{ldsIndex(b, loc, buf, r, c)}, false,
                          ldsAlign);
}

void KernelLowering::copyRows(const Global &g, Value base, Value row0,
                              const LdsBuf &buf, int64_t width) {
  const LdsLayout &layout = buf.layout;
  // A unit is `width` columns of one row, or of two rows for a
  // pair-interleaved buffer (stored interleaved: 2*width elements).
  const int64_t unitRows = layout.pairs ? 2 : 1;
  const int64_t perRow = layout.cols / width;
  const int64_t total = layout.rows / unitRows * perRow;
  const int64_t threads = mapping.threads;
  const int64_t iters = (total + threads - 1) / threads;
  auto body = [&](OpBuilder &nb, Location l, Value it, ValueRange) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
    // The vector path counts iterations (a short loop that unrolls); the
    // scalar path strides over units from the thread id, a loop LLVM keeps
    // rolled, so that its many addresses are not live across the caller.
    Value i =
        width == 1
            ? it
            : Value(arith::AddIOp::create(
                  b, l, tid, arith::MulIOp::create(b, l, it, idx(threads))));
    auto emit = [&] {
      Value u = arith::DivUIOp::create(b, l, i, idx(perRow));
      Value c = arith::MulIOp::create(
          b, l, arith::RemUIOp::create(b, l, i, idx(perRow)), idx(width));
      SmallVector<Value> rows;
      for (int64_t rr = 0; rr < unitRows; ++rr)
        rows.push_back(loadUnitRow(
            g, base, row0,
            arith::AddIOp::create(
                b, l, arith::MulIOp::create(b, l, u, idx(unitRows)), idx(rr)),
            c, width, layout.cols, /*scalarLoads=*/false));
      storeUnit(buf, u, c, rows, width);
    };
    if (total % threads == 0 || width == 1 ||
        bug == PlantedBug::CopyLastRoundUnguarded) {
      emit();
    } else {
      Value live =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult, i, idx(total));
      auto guardIf = scf::IfOp::create(b, l, live, /*withElse=*/false);
      OpBuilder::InsertionGuard g2(b);
      b.setInsertionPointToStart(guardIf.thenBlock());
      emit();
    }
    scf::YieldOp::create(b, l);
  };
  if (width == 1)
    scf::ForOp::create(b, loc, tid, idx(total), idx(threads), ValueRange{},
                       body);
  else
    scf::ForOp::create(b, loc, idx(0), idx(iters), idx(1), ValueRange{}, body);
}

int64_t KernelLowering::vectorWidth(CopyTileOp op) {
  FetchShape f = fetchShape(op.getSource().getType().getElementType(),
                            ldsBuffers[op.getDest()].layout);
  return f.width > 1 ? f.width : 0;
}

Value KernelLowering::vectorCopyOk(const Global &g) {
  // 16-byte loads need every row start 16-byte aligned: the base address
  // and all three strides.
  const int64_t eltBytes =
      cast<MemRefType>(g.flat.getType()).getElementTypeBitWidth() / 8;
  const int64_t width = 16 / eltBytes;
  Value ptr = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, g.flat);
  Value offset =
      memref::ExtractStridedMetadataOp::create(b, loc, g.flat).getOffset();
  Value addr = arith::AddIOp::create(
      b, loc, ptr, arith::MulIOp::create(b, loc, offset, idx(eltBytes)));
  Value bits = arith::OrIOp::create(
      b, loc, arith::OrIOp::create(b, loc, g.sb, g.sh), g.sl);
  Value stridesOk = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, loc, bits, idx(width)), idx(0));
  Value addrOk = arith::CmpIOp::create(
      b, loc, arith::CmpIPredicate::eq,
      arith::RemUIOp::create(b, loc, addr, idx(16)), idx(0));
  if (bug == PlantedBug::UnversionedVectorCopy)
    return arith::ConstantIntOp::create(b, loc, 1, 1);
  return arith::AndIOp::create(b, loc, stridesOk, addrOk);
}

Value KernelLowering::rowsBase(const Global &g, Value batch, Value head,
                               Value row0) {
  return arith::AddIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, batch, g.sb),
                            arith::MulIOp::create(b, loc, head, g.sh)),
      arith::MulIOp::create(b, loc, row0, g.sl));
}

void KernelLowering::copyTile(CopyTileOp op) {
  const LdsBuf &buf = ldsBuffers[op.getDest()];
  const Global &g = globals.lookup(op.getSource());

  Value row0 = *scalar(op.getRow());
  Value base = rowsBase(g, *scalar(op.getBatch()), *scalar(op.getHead()), row0);
  RowsScope rows =
      enterRows(op.getBatch(), op.getHead(), op.getGroup(), op.getPageTable(),
                op.getPageRows(), op.getSeqStart(), op.getSeqRows());
  base = addSequenceOffset(g, base);

  const int64_t width = vectorWidth(op);
  if (width == 0 || copyPath == CopyPath::Scalar) {
    copyRows(g, base, row0, buf, 1);
    return;
  }
  if (copyPath == CopyPath::Vector) {
    copyRows(g, base, row0, buf, width);
    return;
  }
  auto ifOp = scf::IfOp::create(b, loc, vectorCopyOk(g), /*withElse=*/true);
  OpBuilder::InsertionGuard guard(b);
  b.setInsertionPointToStart(ifOp.thenBlock());
  copyRows(g, base, row0, buf, width);
  b.setInsertionPointToStart(ifOp.elseBlock());
  copyRows(g, base, row0, buf, 1);
}

KernelLowering::FetchShape KernelLowering::fetchShape(Type sourceElt,
                                                      const LdsLayout &layout) {
  FetchShape f;
  f.unitRows = layout.pairs ? 2 : 1;
  const int64_t vec = 16 / (sourceElt.getIntOrFloatBitWidth() / 8);
  f.width = layout.cols % vec == 0 ? vec : 1;
  f.perRow = layout.cols / f.width;
  f.total = layout.rows / f.unitRows * f.perRow;
  f.iters = (f.total + mapping.threads - 1) / mapping.threads;
  return f;
}

std::pair<Value, Value> KernelLowering::unitAt(Value i, const FetchShape &f) {
  Value u = arith::DivUIOp::create(b, loc, i, idx(f.perRow));
  Value c = arith::MulIOp::create(
      b, loc, arith::RemUIOp::create(b, loc, i, idx(f.perRow)), idx(f.width));
  return {u, c};
}

Value KernelLowering::unitRow(Value u, int64_t rr, const FetchShape &f) {
  return arith::AddIOp::create(
      b, loc, arith::MulIOp::create(b, loc, u, idx(f.unitRows)), idx(rr));
}

Value KernelLowering::stagingSlot(Value i, int64_t rr, const FetchShape &f) {
  // Unit (it, rr) of thread tid, i = tid + it*threads, is at
  // ((it*unitRows + rr)*threads + tid)*width: consecutive threads take
  // consecutive 16-byte slots.
  return arith::AddIOp::create(
      b, loc,
      arith::MulIOp::create(b, loc, arith::SubIOp::create(b, loc, i, tid),
                            idx(f.unitRows * f.width)),
      arith::AddIOp::create(b, loc,
                            arith::MulIOp::create(b, loc, tid, idx(f.width)),
                            idx(rr * mapping.threads * f.width)));
}

Value KernelLowering::fetchRows(FetchTileOp op, bool scalarLoads) {
  const Global &g = globals.lookup(op.getSource());
  Type elt = op.getSource().getType().getElementType();
  const int64_t cols = ldsBuffers[op.getBuffer()].layout.cols;
  FetchShape f = fetchShape(elt, ldsBuffers[op.getBuffer()].layout);
  Value row0 = *scalar(op.getRow());
  Value base = rowsBase(g, *scalar(op.getBatch()), *scalar(op.getHead()), row0);
  RowsScope rows =
      enterRows(op.getBatch(), op.getHead(), Value(), op.getPageTable(),
                op.getPageRows(), op.getSeqStart(), op.getSeqRows());
  base = addSequenceOffset(g, base);
  const int64_t threads = mapping.threads;
  auto type = VectorType::get({f.iters * f.unitRows * f.width}, elt);
  Value all =
      arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(type)));
  if (Value stage = staging.lookup(op.getBuffer())) {
    // Staged in shared memory: each unit goes to the thread's own staging
    // slot, by cp.async where the copy is aligned (rows past the end read
    // nothing and are zero-filled), by loads and a store otherwise. No
    // register holds the tile across the products: the result is a
    // placeholder that stage_tile does not read.
    if (scalarLoads) {
      // A loop LLVM keeps rolled (it starts at the thread id), so that the
      // scalar loads' addresses are not all live at once.
      scf::ForOp::create(
          b, loc, tid, idx(f.iters * threads), idx(threads), ValueRange{},
          [&](OpBuilder &nb, Location l, Value i, ValueRange) {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
            auto [u, c] = unitAt(i, f);
            Value live = arith::CmpIOp::create(b, l, arith::CmpIPredicate::ult,
                                               i, idx(f.total));
            for (int64_t rr = 0; rr < f.unitRows; ++rr) {
              Value v = loadUnitRow(g, base, row0, unitRow(u, rr, f), c,
                                    f.width, cols, true, live);
              vector::StoreOp::create(b, l, v, stage,
                                      ValueRange{stagingSlot(i, rr, f)}, false,
                                      llvm::MaybeAlign(16));
            }
            scf::YieldOp::create(b, l);
          });
      return all;
    }
    SmallVector<Value> tokens;
    for (int64_t it = 0; it < f.iters; ++it) {
      Value i = arith::AddIOp::create(b, loc, tid, idx(it * threads));
      auto [u, c] = unitAt(i, f);
      for (int64_t rr = 0; rr < f.unitRows; ++rr) {
        Value r = unitRow(u, rr, f);
        Value pagedStart, valid;
        if (paging.table)
          std::tie(pagedStart, valid) = rowStart(g, base, row0, r);
        else
          valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt,
                                        arith::AddIOp::create(b, loc, row0, r),
                                        rowLimit(g));
        if (f.total % threads != 0)
          valid = arith::AndIOp::create(
              b, loc, valid,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i,
                                    idx(f.total)));
        // Columns past D (a padded tile) are not read: the copy zero-fills
        // them (the count is what is left of the row, at most the unit).
        Value elementsLeft = idx(f.width);
        if (cols > g.cols && bug != PlantedBug::PaddedColumnsRead) {
          valid = arith::AndIOp::create(
              b, loc, valid,
              arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, c,
                                    idx(g.cols)));
          elementsLeft = arith::MinUIOp::create(
              b, loc, elementsLeft,
              arith::SubIOp::create(b, loc, idx(g.cols), c));
        }
        Value off = arith::SelectOp::create(
            b, loc, valid,
            pagedStart
                ? Value(arith::AddIOp::create(b, loc, pagedStart, c))
                : Value(arith::AddIOp::create(
                      b, loc, base,
                      arith::AddIOp::create(
                          b, loc, arith::MulIOp::create(b, loc, r, g.sl), c))),
            idx(0));
        Value count =
            arith::SelectOp::create(b, loc, valid, elementsLeft, idx(0));
        Value slot = stagingSlot(i, rr, f);
        tokens.push_back(nvgpu::DeviceAsyncCopyOp::create(
            b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), stage,
            ValueRange{slot}, g.flat, ValueRange{off}, b.getIndexAttr(f.width),
            count, /*bypassL1=*/b.getUnitAttr()));
      }
    }
    if (!tokens.empty())
      nvgpu::DeviceAsyncCreateGroupOp::create(
          b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()), tokens);
    return all;
  }
  // Thread t holds units t, t + threads, ...: the units copyRows stores.
  for (int64_t it = 0; it < f.iters; ++it) {
    Value i = arith::AddIOp::create(b, loc, tid, idx(it * threads));
    Value live = f.total % threads == 0
                     ? Value()
                     : Value(arith::CmpIOp::create(
                           b, loc, arith::CmpIPredicate::ult, i, idx(f.total)));
    auto [u, c] = unitAt(i, f);
    for (int64_t rr = 0; rr < f.unitRows; ++rr) {
      Value v = loadUnitRow(g, base, row0, unitRow(u, rr, f), c, f.width, cols,
                            scalarLoads, live);
      int64_t at = (it * f.unitRows + rr) * f.width;
      if (f.width == 1) {
        all = vector::InsertOp::create(b, loc, v, all, ArrayRef<int64_t>{at});
        continue;
      }
      // Elements [at, at + width) from v (shuffle indices past `all`).
      SmallVector<int64_t> mask;
      const int64_t n = type.getNumElements();
      for (int64_t k = 0; k < n; ++k)
        mask.push_back(k >= at && k < at + f.width ? n + k - at : k);
      all = vector::ShuffleOp::create(b, loc, all, v, mask);
    }
  }
  return all;
}

Value KernelLowering::fetchTile(FetchTileOp op, bool guardedOnly) {
  // The distribution is the vector path's whichever loads fill it, so that
  // a fetch outside a loop versioned on alignment (the prologue) feeds
  // either version.
  Type elt = op.getSource().getType().getElementType();
  FetchShape f = fetchShape(elt, ldsBuffers[op.getBuffer()].layout);
  auto type = VectorType::get({f.iters * f.unitRows * f.width}, elt);
  // A block whose rows all exist (every one but a ragged last) takes a
  // version of the 16-byte loads without row guards, on a uniform branch:
  // no zero-fill, compare or exec mask per load (dense rows of a register-
  // staged fetch only; paged, varlen and staged fetches keep theirs).
  if (!guardedOnly && f.width > 1 && copyPath != CopyPath::Scalar &&
      !op.getPageTable() && !op.getSeqStart() &&
      !staging.lookup(op.getBuffer())) {
    const Global &g = globals.lookup(op.getSource());
    // (The planted bug also takes a block one row short of full.)
    const int64_t rows = ldsBuffers[op.getBuffer()].layout.rows -
                         (bug == PlantedBug::FullBlockOneRowShort ? 1 : 0);
    Value all = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::sle,
        arith::AddIOp::create(b, loc, *scalar(op.getRow()), idx(rows)),
        rowLimit(g));
    if (copyPath == CopyPath::Dynamic)
      all = arith::AndIOp::create(b, loc, all, vectorCopyOk(g));
    auto ifOp = scf::IfOp::create(b, loc, TypeRange{type}, all,
                                  /*withElseRegion=*/true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    rowsInRange = true;
    scf::YieldOp::create(b, loc, fetchRows(op, /*scalarLoads=*/false));
    rowsInRange = false;
    b.setInsertionPointToStart(ifOp.elseBlock());
    scf::YieldOp::create(b, loc, fetchTile(op, /*guardedOnly=*/true));
    return ifOp.getResult(0);
  }
  if (f.width == 1 || copyPath != CopyPath::Dynamic)
    return fetchRows(op, f.width == 1 || copyPath == CopyPath::Scalar);
  auto ifOp = scf::IfOp::create(b, loc, TypeRange{type},
                                vectorCopyOk(globals.lookup(op.getSource())),
                                /*withElseRegion=*/true);
  for (bool scalarLoads : {false, true}) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(scalarLoads ? ifOp.elseBlock()
                                           : ifOp.thenBlock());
    scf::YieldOp::create(b, loc, fetchRows(op, scalarLoads));
  }
  return ifOp.getResult(0);
}

void KernelLowering::stageTile(StageTileOp op) {
  Value stage = staging.lookup(op.getDest());
  const LdsBuf &buf = ldsBuffers[op.getDest()];
  Value all = *fragment(op.getTile());
  Type elt = cast<VectorType>(all.getType()).getElementType();
  FetchShape f = fetchShape(elt, buf.layout);
  const int64_t threads = mapping.threads;
  const bool async = bool(stage);
  if (async)
    NVVM::CpAsyncWaitGroupOp::create(b, loc, 0);
  for (int64_t it = 0; it < f.iters; ++it) {
    Value i = arith::AddIOp::create(b, loc, tid, idx(it * threads));
    auto [u, c] = unitAt(i, f);
    OpBuilder::InsertionGuard guard(b);
    if (f.total % threads != 0) {
      Value live = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, i,
                                         idx(f.total));
      auto guardIf = scf::IfOp::create(b, loc, live, /*withElse=*/false);
      b.setInsertionPointToStart(guardIf.thenBlock());
    }
    SmallVector<Value> rows;
    for (int64_t rr = 0; rr < f.unitRows; ++rr) {
      int64_t at = (it * f.unitRows + rr) * f.width;
      if (async) {
        // The unit this thread's fetch wrote (a cp.async's is visible to
        // it after the wait; no other thread reads it).
        rows.push_back(vector::LoadOp::create(
            b, loc, VectorType::get({f.width}, elt), stage,
            ValueRange{stagingSlot(i, rr, f)}, false, llvm::MaybeAlign(16)));
        continue;
      }
      rows.push_back(
          f.width == 1
              ? Value(vector::ExtractOp::create(b, loc, all,
                                                ArrayRef<int64_t>{at}))
              : Value(vector::ShuffleOp::create(
                    b, loc, all, all,
                    llvm::to_vector(llvm::seq<int64_t>(at, at + f.width)))));
    }
    storeUnit(buf, u, c, rows, f.width);
  }
}

void KernelLowering::writeTile(WriteTileOp op) {
  const LdsBuf &buf = ldsBuffers[op.getDest()];
  auto type = op.getTile().getType();
  Value frag = *fragment(op.getTile());
  const int64_t cc = colsPerThread(type);
  for (int64_t i = 0; i < mapping.rm; ++i) {
    Value r = rowOf(i);
    for (int64_t j = 0; j < cc; ++j) {
      Value v = vector::ExtractOp::create(b, loc, frag,
                                          ArrayRef<int64_t>{i * cc + j});
      if (v.getType() != buf.layout.elementType)
        v = arith::ExtFOp::create(b, loc, buf.layout.elementType, v);
      memref::StoreOp::create(b, loc, v, buf.mem,
                              ValueRange{ldsIndex(b, loc, buf, r, colOf(j))});
    }
  }
}

void KernelLowering::storeTile(StoreTileOp op) {
  auto type = op.getTile().getType();
  Value frag = *fragment(op.getTile());
  const Global &g = globals.lookup(op.getDest());
  Value bIdx = *scalar(op.getBatch()), h = *scalar(op.getHead()),
        row0 = *scalar(op.getRow());
  Value base =
      arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, bIdx, g.sb),
                            arith::MulIOp::create(b, loc, h, g.sh));
  RowsScope rows =
      enterRows(op.getBatch(), op.getHead(), op.getGroup(), Value(), Value(),
                op.getSeqStart(), op.getSeqRows());
  base = addSequenceOffset(g, base);
  const int64_t cc = colsPerThread(type);
  Value limit = rowLimit(g);
  Value firstLane =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tc, idx(0));
  for (int64_t i = 0; i < mapping.rm; ++i) {
    Value row = arith::AddIOp::create(b, loc, row0, rowOf(i));
    // Packed rows: where the row starts and whether it exists (rowStart);
    // the planted bug also stores the row past the end.
    Value packedBase, ok;
    if (packing.group) {
      std::tie(packedBase, ok) = rowStart(g, Value(), row0, rowOf(i));
      if (bug == PlantedBug::ORowPastEnd)
        ok = rowStart(g, Value(), row0,
                      arith::SubIOp::create(b, loc, rowOf(i), idx(1)))
                 .second;
    } else {
      ok = arith::CmpIOp::create(b, loc,
                                 bug == PlantedBug::ORowPastEnd
                                     ? arith::CmpIPredicate::sle
                                     : arith::CmpIPredicate::slt,
                                 row, limit);
    }
    // A row value is replicated over the TC lanes of its row: one stores.
    if (type.getRank() == 1)
      ok = arith::AndIOp::create(b, loc, ok, firstLane);
    auto ifOp = scf::IfOp::create(b, loc, ok, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value rowBase =
        packing.group
            ? packedBase
            : Value(arith::AddIOp::create(
                  b, loc, base, arith::MulIOp::create(b, loc, row, g.sl)));
    for (int64_t j = 0; j < cc; ++j) {
      Value v = vector::ExtractOp::create(b, loc, frag,
                                          ArrayRef<int64_t>{i * cc + j});
      Value col = type.getRank() == 2 ? colOf(j, cc) : Value();
      Value off = type.getRank() == 1
                      ? rowBase
                      : Value(arith::AddIOp::create(b, loc, rowBase, col));
      // A padded tile's columns past D are not stored.
      OpBuilder::InsertionGuard colGuard(b);
      if (Value cOk = type.getRank() == 2
                          ? columnsLeft(g, col, type.getDimSize(1), 1)
                          : Value()) {
        auto colIf = scf::IfOp::create(b, loc, cOk, /*withElse=*/false);
        b.setInsertionPointToStart(colIf.thenBlock());
      }
      memref::StoreOp::create(b, loc, v, g.flat, off);
    }
  }
}

Value KernelLowering::loadTile(LoadTileOp op) {
  auto type = op.getResult().getType();
  const Global &g = globals.lookup(op.getSource());
  Value bIdx = *scalar(op.getBatch()), h = *scalar(op.getHead()),
        row0 = *scalar(op.getRow());
  Value base = rowsBase(g, bIdx, h, row0);
  // A paged register load reads through the table as a copy does.
  RowsScope rows =
      enterRows(op.getBatch(), op.getHead(), op.getGroup(), op.getPageTable(),
                op.getPageRows(), op.getSeqStart(), op.getSeqRows());
  base = addSequenceOffset(g, base);
  Type elt = type.getElementType();
  const int64_t cc = colsPerThread(type);
  SmallVector<Value> elements;
  Value zero =
      arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(elt)));
  // Without padded columns the row's bound decides for all of its columns:
  // one branch loads them together (adjacent where contiguousColumns, so
  // that the backend merges them into wide loads).
  const bool perRow = type.getRank() == 2 &&
                      !columnsLeft(g, idx(0), type.getDimSize(1), 1);
  // A combine kernel's thread holds cc adjacent columns of a row: one
  // vector load of them (the backend's load merging did not see through
  // the row and column index arithmetic: 16 dword loads per split at D=64,
  // each touching 16 lines).
  const bool vectorRow = perRow && contiguousColumns && cc > 1 && cc <= 4;
  for (int64_t i = 0; i < mapping.rm; ++i) {
    auto [rowBase, ok] = rowStart(g, base, row0, rowOf(i));
    if (perRow) {
      SmallVector<Value> offs;
      for (int64_t j = 0; j < (vectorRow ? 1 : cc); ++j)
        offs.push_back(arith::AddIOp::create(b, loc, rowBase, colOf(j, cc)));
      auto load = scf::IfOp::create(
          b, loc, ok,
          [&](OpBuilder &tb, Location tl) {
            SmallVector<Value> vals;
            if (vectorRow) {
              Value vec = vector::LoadOp::create(
                  tb, tl, VectorType::get({cc}, elt), g.flat, offs[0]);
              for (int64_t j = 0; j < cc; ++j)
                vals.push_back(vector::ExtractOp::create(
                    tb, tl, vec, ArrayRef<int64_t>{j}));
            } else {
              for (Value off : offs)
                vals.push_back(memref::LoadOp::create(tb, tl, g.flat, off));
            }
            scf::YieldOp::create(tb, tl, vals);
          },
          [&](OpBuilder &eb, Location el) {
            scf::YieldOp::create(eb, el, SmallVector<Value>(cc, zero));
          });
      llvm::append_range(elements, load.getResults());
      continue;
    }
    for (int64_t j = 0; j < cc; ++j) {
      Value off = rowBase, inRange = ok;
      if (type.getRank() == 2) {
        Value col = colOf(j, cc);
        off = arith::AddIOp::create(b, loc, rowBase, col);
        if (Value cOk = columnsLeft(g, col, type.getDimSize(1), 1))
          inRange = arith::AndIOp::create(b, loc, inRange, cOk);
      }
      auto load = scf::IfOp::create(
          b, loc, inRange,
          [&](OpBuilder &tb, Location tl) {
            scf::YieldOp::create(
                tb, tl,
                ValueRange{memref::LoadOp::create(tb, tl, g.flat, off)});
          },
          [&](OpBuilder &eb, Location el) {
            scf::YieldOp::create(eb, el, ValueRange{zero});
          });
      elements.push_back(load.getResult(0));
    }
  }
  return vector::FromElementsOp::create(b, loc, fragmentType(type), elements);
}
