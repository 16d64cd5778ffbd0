//===- KernelLowering.h - Tile IR -> per-thread kernel code -----*- C++ -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//
//
// The thread-level half of fa-lower-to-gpu: turns the body of one tile grid
// into the body of a gpu.func. Tensors with BLOCK_M rows become per-thread
// fragments (ThreadMapping in LdsBudget.h): a tensor<BM x C> is a
// vector<RM * C/TC> holding rows tr*RM + i and columns tc + j*TC (row-major,
// element i*(C/TC) + j); a tensor<BM> is a vector<RM>. The LDS buffers,
// copies and barriers come from the memory level (fa-promote): each
// fa.lds_buffer storage becomes one 1-D workgroup attribution, addressed
// through the buffer's layout (LdsLayout in FaOps.h).
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_LOWERING_KERNEL_LOWERING_H
#define FA_COMPILER_LOWERING_KERNEL_LOWERING_H

#include "compiler/Analysis/LdsBudget.h"
#include "compiler/Analysis/TargetDesc.h"
#include "compiler/Lowering/PassDetail.h"
#include "compiler/Testing/PlantedBugs.h"

#include "mlir/IR/IRMapping.h"

namespace mlir::fa {

/// Buffer roles, in the ABI's order (KernelAbi.h). The first kNumRoles are
/// ABI version 1's buffers; a split-KV grid (fa.args of 7) also has the
/// workspace O and LSE, after the strides (ABI version 2).
enum Role {
  kQ = 0,
  kK = 1,
  kV = 2,
  kO = 3,
  kLse = 4,
  kNumRoles = 5,
  kWsO = 5,
  kWsLse = 6,
  kNumSplitRoles = 7,
  kTable = 7,   // paged K/V (ABI version 3): the block table
  kSeqLens = 8, // and the cache lengths
  kNumPagedRoles = 9,
  kCuQ = 9,  // varlen (ABI version 4): cu_seqlens_q
  kCuK = 10, // and cu_seqlens_k
  kNumVarlenRoles = 11
};
constexpr int64_t kNumSizes = 5;    // B, Hq, Hkv, Lq, Lk
constexpr int64_t kNumStrides = 14; // 3 each for Q, K, V, O; 2 for LSE
/// Kernel argument index of the workspace O; LSE and S follow (ABI version
/// 2), then the block table, the cache lengths, the page size and the
/// table's row stride (version 3).
constexpr int64_t kWsArg = kNumRoles + kNumSizes + kNumStrides;
constexpr int64_t kTableArg = kWsArg + 3;
constexpr int64_t kCuArg = kTableArg + 4; // cu_seqlens_q, _k (version 4)
/// A traced dense kernel's trace buffer, then its traced batch, head and
/// row, after version 1's arguments (KernelAbi.h, "Trace").
constexpr int64_t kTraceArg = kWsArg;
/// The head words' arguments (ALiBi slopes, then sinks; KernelAbi.h, "Head
/// parameters"): right after the arguments of the ABI version a grid of
/// `numRoles` fa.args has.
constexpr int64_t headParamsArg(size_t numRoles) {
  return numRoles >= kNumVarlenRoles  ? kCuArg + 2
         : numRoles >= kNumPagedRoles ? kCuArg
         : numRoles >= kNumSplitRoles ? kTableArg
                                      : kWsArg;
}

class KernelLowering {
public:
  KernelLowering(scf::ForallOp grid, gpu::GPUFuncOp kernel,
                 const TargetDesc &target, TileConfigAttr config,
                 ThreadMapping mapping, ArrayRef<int64_t> roles,
                 PlantedBug bug = PlantedBug::None, bool shareRows = false);

  /// Emits the kernel body. Fails (with a diagnostic) on IR it cannot map.
  LogicalResult run();

private:
  struct Global {
    int role;
    Value flat;       // memref<?xT, strided<[1], offset: ?>>
    Value sb, sh, sl; // element strides (index)
    int64_t cols = 0; // D (static); a wider tile's extra columns are zero
  };

  LogicalResult lowerBlock(Block &block);
  LogicalResult lowerOp(Operation *op);
  LogicalResult lowerFor(scf::ForOp op);
  /// An scf.if without results (a branch of the epilogue).
  LogicalResult lowerIf(scf::IfOp op);
  FailureOr<scf::ForOp> lowerLoop(scf::ForOp op, ValueRange inits);
  LogicalResult lowerElementwise(Operation *op);
  /// The kernel-side values (fragment or scalar) of tile-IR values.
  LogicalResult lowerValues(ValueRange values, SmallVectorImpl<Value> &out);
  /// Records `to` as the kernel-side values of `from`.
  void bindValues(ValueRange from, ValueRange to);

  /// An LDS buffer: its storage (a 1-D workgroup attribution) and layout.
  struct LdsBuf {
    Value mem;
    LdsLayout layout;
  };

  /// One workgroup attribution per LDS storage (slot) of the grid.
  LogicalResult allocateLds();
  void copyTile(CopyTileOp op);
  /// The element offset of row `row0` of `g[batch, head]`.
  Value rowsBase(const Global &g, Value batch, Value head, Value row0);
  /// Source elements per 16-byte vector load of `op`'s rows, or 0 when a
  /// row is not a whole number of them.
  int64_t vectorWidth(CopyTileOp op);
  /// Whether `g`'s base and strides allow 16-byte vector copies (i1).
  Value vectorCopyOk(const Global &g);
  /// How a fetched tile is spread over the threads: units of `width`
  /// columns of `unitRows` rows (two for a pair-interleaved buffer); thread
  /// t holds units t, t + threads, ... (`iters` of them, `total` in all).
  struct FetchShape {
    int64_t unitRows, width, perRow, total, iters;
  };
  FetchShape fetchShape(Type sourceElt, const LdsLayout &layout);
  /// Unit `i`'s (unit) row and first column in the buffer.
  std::pair<Value, Value> unitAt(Value i, const FetchShape &f);
  /// Row `rr` of unit row `u` (tile-relative).
  Value unitRow(Value u, int64_t rr, const FetchShape &f);
  /// The staging element index of row `rr` of unit `i` of this thread.
  Value stagingSlot(Value i, int64_t rr, const FetchShape &f);
  /// fa.fetch_tile: the thread's units as one vector (FetchShape order);
  /// `guardedOnly`: without the version for blocks whose rows all exist.
  Value fetchTile(FetchTileOp op, bool guardedOnly = false);
  Value fetchRows(FetchTileOp op, bool scalarLoads);
  /// fa.stage_tile: the fetched units into LDS, in the buffer's layout.
  void stageTile(StageTileOp op);
  /// `width` elements of row `r` (tile-relative) from column `c`: one
  /// 16-byte load, `width` scalar loads, or a scalar (width 1); zero past
  /// the end or where `valid` (optional) is false.
  /// `tileCols` is the tile's width: columns at or past `g.cols` (a padded
  /// head dimension) read as zero.
  Value loadUnitRow(const Global &g, Value base, Value row0, Value r, Value c,
                    int64_t width, int64_t tileCols, bool scalarLoads,
                    Value valid = {});
  /// For a tile `tileCols` wide over `g`'s rows: whether the unit of
  /// `width` columns at `c` lies before D (i1), or null where every unit
  /// does, or where D is not a multiple of `width` (units across D).
  Value columnsLeft(const Global &g, Value c, int64_t tileCols, int64_t width);
  /// Stores one unit (`rows`: one value per row of the unit) at unit row
  /// `u`, column `c` of `buf`, widened to the buffer's type, two rows
  /// interleaved for a pair-interleaved buffer.
  void storeUnit(const LdsBuf &buf, Value u, Value c, ArrayRef<Value> rows,
                 int64_t width);
  void writeTile(WriteTileOp op);
  void storeTile(StoreTileOp op);
  /// fa.load_tile left in registers (fa-promote): each thread loads its
  /// fragment, zero past the rows' end and past D.
  Value loadTile(LoadTileOp op);
  /// Where row `r` (tile-relative) of the rows at `row0` of `g` starts, and
  /// whether it exists (i1): `base` + r * row stride, r < L; or, while
  /// `packing` is set, row (row0 + r) mod L of query head
  /// head * group + (row0 + r) / L, existing below group * L.
  std::pair<Value, Value> rowStart(const Global &g, Value base, Value row0,
                                   Value r);
  Value ldsDot(LdsDotOp op);
  Value rowReduce(RowReduceOp op);
  /// fa.row_combine: a partial row sum's parts added up across threads.
  Value rowCombine(RowCombineOp op);
  /// max or add.
  Value rowCombineOf(Value x, Value y, bool isMax);
  /// A thread's part of a row combined over the row's lanes in its wave
  /// (a butterfly of xor shuffles).
  Value acrossRowLanes(Value r, bool isMax);
  /// Where a thread row spans several waves, each row's wave parts
  /// (`results`, after acrossRowLanes) combined through LDS, in place.
  void acrossRowWaves(SmallVector<Value> &results, bool isMax);
  Value rowBroadcast(RowBroadcastOp op);
  /// fa.merge_splits: groups of threads walk disjoint splits, then each
  /// thread merges the groups' states of its fragment's rows through LDS.
  LogicalResult mergeSplits(MergeSplitsOp op);
  /// fa.tile_mask: the masked fragment, under a branch on tileMaskNeeded
  /// where there is one.
  Value tileMask(TileMaskOp op);
  /// Whether the tile has an entry to hide (i1, the same in every thread):
  /// a key past the end, right of the first row's diagonal (causal, window
  /// right) or left of the last row's window; null where every block is
  /// masked (ALiBi, packed rows).
  Value tileMaskNeeded(TileMaskOp op);
  /// The fragment `frag` with every hidden entry -inf (ALiBi applied).
  Value maskEntries(TileMaskOp op, Value frag);
  /// fa.trace_row: the thread(s) holding the traced row store its m, l
  /// and outputs to row `block` of the trace.
  void traceRow(TraceRowOp op);

  /// The kernel-side value of a scalar (index) value of the tile IR,
  /// rematerialising pure computations defined outside the grid.
  FailureOr<Value> scalar(Value v);
  /// The fragment of a tensor value (splat constants are built on demand).
  FailureOr<Value> fragment(Value v);
  VectorType fragmentType(RankedTensorType t);
  int64_t colsPerThread(RankedTensorType t) {
    return t.getRank() == 2 ? t.getDimSize(1) / mapping.tc : 1;
  }

  Value idx(int64_t v);
  Value rowOf(int64_t i);          // tr*RM + i
  Value colOf(int64_t j);          // tc + j*TC
  /// Column j of a tile whose threads hold cc columns each: colOf(j), or
  /// tc*cc + j where the columns are contiguous (contiguousColumns).
  Value colOf(int64_t j, int64_t cc);
  Value rowLimit(const Global &g); // L of the buffer's rows
  /// The element index of logical (r, c) in `buf`'s storage.
  Value ldsIndex(OpBuilder &nb, Location l, const LdsBuf &buf, Value r,
                 Value c);
  /// The cooperative copy: `width` elements per global load; a
  /// pair-interleaved buffer takes two rows per unit and interleaves them.
  void copyRows(const Global &g, Value base, Value row0, const LdsBuf &buf,
                int64_t width);

  scf::ForallOp grid;
  gpu::GPUFuncOp kernel;
  const TargetDesc &target;
  TileConfigAttr config;
  ThreadMapping mapping;
  SmallVector<int64_t> roles;
  PlantedBug bug; ///< test only: the bug to plant (PlantedBugs.h)
  /// The lhs rows of the LDS products rotated around each thread row
  /// (share-rows; ldsDot says where it applies).
  bool shareRows = false;
  /// Each thread's columns of a [rows, D] tile are contiguous (tc*CC + j)
  /// instead of strided by TC: the split-KV combine kernel, whose tiles
  /// take part in no product or row reduction, so that a thread's loads
  /// and stores of a row are adjacent and merge into wide ones.
  bool contiguousColumns = false;
  OpBuilder b;
  Location loc;

  Value tid, tr, tc;
  Value sizes[kNumSizes]; // B, Hq, Hkv, Lq, Lk as index
  Value splits;           // S (split-KV grids), as index
  Value traceBuffer;      // the trace (fa.trace), f32 rank 1
  Value traceSource;      // the tile IR's trace argument
  /// Rows over several waves (ThreadMapping::wavesPerRow): each wave's
  /// partial row maxima and sums, f32 [TR * RM * waves per row].
  Value rowScratch;
  /// GQA packing of the tile being copied or stored (fa.load_tile's group);
  /// null group: rows are rows of one head.
  struct {
    Value batch, head, group;
  } packing;
  /// Paged K/V (ABI version 3): the page size and the block table's row
  /// stride (index), and the paging of the tile being copied or fetched
  /// (fa.load_tile's pages): its sequence, head and length; null table:
  /// rows of a dense [B, H, L, D] tensor.
  Value pageSize, tableStride;
  struct {
    Value batch, head, table, rows;
  } paging;
  /// Varlen (ABI version 4): the rows of the tile op are one sequence's,
  /// from row `start` of the packed rows, `rows` of them (fa.load_tile's
  /// seq); null start: the buffer's own L rows from row 0.
  struct {
    Value start, rows;
  } sequence;
  /// Sets `packing`, `paging` and `sequence` for the rows of one tile op
  /// (a null group, table or start leaves them unset) until the scope ends.
  struct RowsScope {
    KernelLowering &k;
    ~RowsScope() {
      k.packing = {};
      k.paging = {};
      k.sequence = {};
    }
  };
  [[nodiscard]] RowsScope enterRows(Value batch, Value head, Value group,
                                    Value table, Value rows,
                                    Value seqStart = {}, Value seqRows = {}) {
    if (group)
      packing = {*scalar(batch), *scalar(head), *scalar(group)};
    if (table)
      paging = {*scalar(batch), *scalar(head), table, *scalar(rows)};
    if (seqStart)
      sequence = {*scalar(seqStart), *scalar(seqRows)};
    return RowsScope{*this};
  }
  /// `base` moved to the sequence's first row of `g` (as it is without
  /// `sequence`).
  Value addSequenceOffset(const Global &g, Value base);
  DenseMap<Value, Global> globals; // tile-IR memref -> kernel buffer
  IRMapping scalars;
  DenseMap<Value, Value> fragments;   // tensor -> vector (registers)
  DenseMap<Value, LdsBuf> ldsBuffers; // fa.lds_buffer -> storage, layout
  /// Where the target copies asynchronously (cp.async): the shared staging
  /// area of each buffer fetched by fa.fetch_tile (one unit per thread per
  /// iteration, in FetchShape order).
  DenseMap<Value, Value> staging;

  /// How fa.copy_tile copies: decided per copy (a branch), or fixed by the
  /// version of a loop being lowered (lowerFor).
  enum class CopyPath { Dynamic, Vector, Scalar } copyPath = CopyPath::Dynamic;
  /// Set while lowering the version of a fetch whose rows all exist (a
  /// uniform branch): loadUnitRow then tests no row bound.
  bool rowsInRange = false;
  Operation *preambleEnd = nullptr; // values recomputed from outside go after
  std::string failure;
};

} // namespace mlir::fa

#endif // FA_COMPILER_LOWERING_KERNEL_LOWERING_H
