//===- KernelMemory.cpp - Global <-> LDS <-> register movement ------------===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The memory half of KernelLowering (see KernelLowering.h): cooperative
// global -> LDS copies for fa.load_tile (16-byte vectors when the base and
// strides are aligned, scalars otherwise; rows past the end become zero),
// register fragments written to LDS for a tile product, and bounds-checked
// fragment stores for fa.store_tile.
//
//===----------------------------------------------------------------------===//

#include "compiler/KernelLowering.h"

#include <numeric>

using namespace mlir;
using namespace mlir::fa;

//===----------------------------------------------------------------------===//
// Memory: global <-> LDS <-> registers
//===----------------------------------------------------------------------===//

void KernelLowering::copyRows(const Global &g, Value base, Value row0,
                              Value ldsBuf, int64_t rows, int64_t cols,
                              int64_t width) {
  Type elt = cast<MemRefType>(ldsBuf.getType()).getElementType();
  const int64_t perRow = cols / width, total = rows * perRow;
  const int64_t threads = mapping.threads;
  const int64_t iters = (total + threads - 1) / threads;
  Value limit = rowLimit(g);
  auto vecType = VectorType::get({width}, elt);
  // A padded row keeps 16-byte vector stores aligned only if its length
  // does; otherwise they are aligned to the largest power of two dividing
  // the row length (a row of 66 halves: 4 bytes, two-dword stores).
  const int64_t rowBytes = cast<MemRefType>(ldsBuf.getType()).getDimSize(1) *
                           (elt.getIntOrFloatBitWidth() / 8);
  llvm::MaybeAlign ldsAlign(std::gcd<int64_t>(rowBytes, 16));
  auto body = [&](OpBuilder &nb, Location l, Value it, ValueRange) {
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(nb.getInsertionBlock(), nb.getInsertionPoint());
    Value i = arith::AddIOp::create(
        b, l, tid, arith::MulIOp::create(b, l, it, idx(threads)));
    auto emit = [&] {
      Value r = arith::DivUIOp::create(b, l, i, idx(perRow));
      Value c = arith::MulIOp::create(
          b, l, arith::RemUIOp::create(b, l, i, idx(perRow)), idx(width));
      Value inRange =
          arith::CmpIOp::create(b, l, arith::CmpIPredicate::slt,
                                arith::AddIOp::create(b, l, row0, r), limit);
      Value off = arith::AddIOp::create(
          b, l, base,
          arith::AddIOp::create(b, l, arith::MulIOp::create(b, l, r, g.sl), c));
      Type valueType = width == 1 ? elt : Type(vecType);
      auto load = scf::IfOp::create(
          b, l, inRange,
          [&](OpBuilder &tb, Location tl) {
            Value v = width == 1
                          ? Value(memref::LoadOp::create(tb, tl, g.flat, off))
                          : Value(vector::LoadOp::create(tb, tl, vecType,
                                                         g.flat, off, false,
                                                         llvm::MaybeAlign(16)));
            scf::YieldOp::create(tb, tl, v);
          },
          [&](OpBuilder &eb, Location el) {
            Value zero = arith::ConstantOp::create(
                eb, el, cast<TypedAttr>(eb.getZeroAttr(valueType)));
            scf::YieldOp::create(eb, el, zero);
          });
      Value v = load.getResult(0);
      if (width == 1)
        memref::StoreOp::create(b, l, v, ldsBuf, ValueRange{r, c});
      else
        vector::StoreOp::create(b, l, v, ldsBuf, ValueRange{r, c}, false,
                                ldsAlign);
    };
    if (total % threads == 0) {
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
  scf::ForOp::create(b, loc, idx(0), idx(iters), idx(1), ValueRange{}, body);
}

Value KernelLowering::loadTile(LoadTileOp op) {
  auto type = op.getResult().getType();
  const int64_t rows = type.getDimSize(0), cols = type.getDimSize(1);
  Type elt = type.getElementType();
  const Global &g = globals.lookup(op.getSource());
  Value ldsBuf = lds(elt, rows, cols);

  Value bIdx = *scalar(op.getBatch()), h = *scalar(op.getHead()),
        row0 = *scalar(op.getRow());
  Value base = arith::AddIOp::create(
      b, loc,
      arith::AddIOp::create(b, loc, arith::MulIOp::create(b, loc, bIdx, g.sb),
                            arith::MulIOp::create(b, loc, h, g.sh)),
      arith::MulIOp::create(b, loc, row0, g.sl));

  const int64_t eltBytes = elt.getIntOrFloatBitWidth() / 8;
  const int64_t width = 16 / eltBytes;
  if (cols % width != 0) {
    copyRows(g, base, row0, ldsBuf, rows, cols, 1);
  } else {
    // 16-byte loads need every row start 16-byte aligned: the base address
    // and all three strides.
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
    Value aligned = arith::AndIOp::create(b, loc, stridesOk, addrOk);
    auto ifOp = scf::IfOp::create(b, loc, aligned, /*withElse=*/true);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(ifOp.thenBlock());
      copyRows(g, base, row0, ldsBuf, rows, cols, width);
      b.setInsertionPointToStart(ifOp.elseBlock());
      copyRows(g, base, row0, ldsBuf, rows, cols, 1);
    }
  }
  pendingBarrier = true;
  return ldsBuf;
}

Value KernelLowering::spillToLds(Value frag, RankedTensorType type) {
  const int64_t cc = colsPerThread(type);
  Value buf =
      lds(type.getElementType(), type.getDimSize(0), type.getDimSize(1));
  for (int64_t i = 0; i < mapping.rm; ++i) {
    Value r = rowOf(i);
    for (int64_t j = 0; j < cc; ++j) {
      Value v = vector::ExtractOp::create(b, loc, frag,
                                          ArrayRef<int64_t>{i * cc + j});
      memref::StoreOp::create(b, loc, v, buf, ValueRange{r, colOf(j)});
    }
  }
  pendingBarrier = true;
  return buf;
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
  const int64_t cc = colsPerThread(type);
  Value limit = rowLimit(g);
  Value firstLane =
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tc, idx(0));
  for (int64_t i = 0; i < mapping.rm; ++i) {
    Value row = arith::AddIOp::create(b, loc, row0, rowOf(i));
    Value ok =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, row, limit);
    // A row value is replicated over the TC lanes of its row: one stores.
    if (type.getRank() == 1)
      ok = arith::AndIOp::create(b, loc, ok, firstLane);
    auto ifOp = scf::IfOp::create(b, loc, ok, /*withElse=*/false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(ifOp.thenBlock());
    Value rowBase = arith::AddIOp::create(
        b, loc, base, arith::MulIOp::create(b, loc, row, g.sl));
    for (int64_t j = 0; j < cc; ++j) {
      Value v = vector::ExtractOp::create(b, loc, frag,
                                          ArrayRef<int64_t>{i * cc + j});
      Value off = type.getRank() == 1
                      ? rowBase
                      : Value(arith::AddIOp::create(b, loc, rowBase, colOf(j)));
      memref::StoreOp::create(b, loc, v, g.flat, off);
    }
  }
}
