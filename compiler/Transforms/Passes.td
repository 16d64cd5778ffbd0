//===- Passes.td - fa transformation passes -----------------*- tablegen -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#ifndef FA_COMPILER_TRANSFORMS_PASSES_TD
#define FA_COMPILER_TRANSFORMS_PASSES_TD

include "mlir/Pass/PassBase.td"

// The passes on the attention, tile and memory levels, in pipeline order:
// fa-fuse, fa-tile, fa-promote, fa-pad-lds, fa-double-buffer. One file per
// pass, named after its flag (Fuse.cpp implements fa-fuse).

def FaFusePass : Pass<"fa-fuse"> {
  let summary = "Fuse matmul -> softmax -> matmul into fa.attention";
  let description = [{
    Recognises standard attention spelled step by step,

    ```mlir
    %s = fa.matmul %q, %k transpose_rhs : ... -> tensor<...xf32>
    %p = fa.softmax %s causal scale(0.125) : tensor<...xf32> -> tensor<...xf16>
    %o32 = fa.matmul %p, %v : ... -> tensor<...xf32>
    %o = arith.truncf %o32 : tensor<...xf32> to tensor<...xf16>   // optional
    ```

    and replaces it with one `fa.attention %q, %k, %v causal scale(0.125)`.
    It declines (leaving the IR untouched, with a remark under
    `remarks=true`) when S or P has another use, when the operands do not
    form attention (first matmul without `transpose_rhs`, second with it,
    shapes that do not chain), or when element types do not fit (P rounded
    to a type other than Q's, mixed Q/K/V types).
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark for each chain that was not fused and why">
  ];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def FaTilePass : Pass<"fa-tile", "::mlir::ModuleOp"> {
  let summary = "Tile fa.attention into a fused online-softmax loop nest";
  let description = [{
    Rewrites every kernel function (a func.func whose fa.attention ops read
    function arguments and whose results are returned) into destination-
    passing, tile-level IR (Level 1):

    1. tensor arguments become strided memrefs; results become output
       memref arguments;
    2. a grid `scf.forall (%mb, %h, %b)` maps (Q block, head, batch) to
       workgroups; the Q block is loaded once and stays resident;
    3. an inner `scf.for` streams K/V blocks (causal: only up to the
       diagonal) with online softmax in f32: running max and sum, O
       rescaled by exp2(m_old - m_new) before P·V is accumulated;
    4. the tile configuration is chosen by the target's LDS budget model
       (or given explicitly and checked against it) and attached as
       `#fa.tile<...>`.
  }];
  let options = [
    Option<"target", "target", "std::string", /*default=*/"\"gfx906\"",
           "Target whose budget sizes the tiles (gfx906, sm_90, host)">,
    Option<"blockM", "block-m", "int64_t", /*default=*/"0",
           "Rows of Q per workgroup (0: choose for the target)">,
    Option<"blockN", "block-n", "int64_t", /*default=*/"0",
           "Rows of K/V per inner-loop step (0: choose for the target)">,
    Option<"waves", "waves", "int64_t", /*default=*/"0",
           "Waves (warps) per workgroup (0: choose for the target)">,
    Option<"stages", "stages", "int64_t", /*default=*/"0",
           "K/V pipeline stages: 2 (double-buffered, fa-double-buffer), 1, "
           "or 0 (auto: 2 unless its registers cost occupancy or tile size, "
           "with a remark)">,
    Option<"kvShared", "kv-shared", "std::string", /*default=*/"\"auto\"",
           "K and V in one LDS slot: auto (when that reaches the target's "
           "occupancy goal), on or off">,
    Option<"allowBf16", "allow-bf16", "bool", /*default=*/"false",
           "Accept bf16 on targets that only emulate it">,
    Option<"kvSplits", "kv-splits", "std::string", /*default=*/"\"off\"",
           "Split-KV (flash-decoding): off; runtime (the K/V range of each "
           "Q block is split over S workgroups, S a launch argument, and a "
           "combine grid merges the parts; kernel ABI version 2; the "
           "target's decode tiles unless given); or auto (fac's default: "
           "runtime with the dense tiles where the target says so, gfx906, "
           "for a dense attention that is not traced; else off)">,
    Option<"mergeSplits", "merge-splits", "std::string",
           /*default=*/"\"auto\"",
           "The split-KV combine's merge over groups of threads "
           "(fa.merge_splits) where its grid leaves CUs idle: auto (where the "
           "target has it: gfx906, host, sm_90), on (wherever the combine's "
           "tile allows it: one unit of 4 columns a thread at most) or off "
           "(the loop alone)">,
    Option<"gqaPack", "gqa-pack", "std::string", /*default=*/"\"off\"",
           "GQA packing: off, or on (the Hq/Hkv query heads of one KV head "
           "are rows of one Q tile; the grid's y is over KV heads)">,
    Option<"trace", "trace", "bool", /*default=*/"false",
           "Validation layer 2: the kernel takes a trace buffer and a traced "
           "(batch, head, row) and writes that row's running max, sum and "
           "output after every K/V block (fa.trace_row; dense kernels "
           "only)">,
    Option<"report", "report", "bool", /*default=*/"false",
           "Emit a remark with the LDS budget table of the chosen config">,
    Option<"testPlantBug", "test-plant-bug", "std::string", /*default=*/"\"\"",
           "Test only: plant this bug (PlantedBugs.h) in the kernel">
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect", "::mlir::math::MathDialect",
    "::mlir::memref::MemRefDialect", "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect", "::mlir::func::FuncDialect",
    "::mlir::gpu::GPUDialect"
  ];
}

def FaPromotePass : Pass<"fa-promote", "::mlir::ModuleOp"> {
  let summary = "Make the tiles in LDS explicit: buffers, copies, barriers (Level 1b)";
  let description = [{
    Creates the memory level. In every tile grid, each `fa.load_tile`
    becomes an `fa.lds_buffer` (its layout in its memref type: row-major
    with `lds_pad` elements of padding per row, or pair-interleaved for the
    right operand of P·V) and an `fa.copy_tile`; a product operand computed
    in registers (P) is written to a buffer of its own with
    `fa.write_tile`; `fa.tile_dot` becomes `fa.lds_dot`. With `kv_shared`
    in `#fa.tile`, K and V take turns in the slot "kv" and the second copy
    moves to just before its first reader. With `widen` (auto: on for
    sm_90/sm_80) 16-bit tiles are stored in LDS as f32, converted once by
    the copy instead of in every product step.

    Barriers are placed by a scan over the slots each op reads and writes
    (loops to a fixed point): a `gpu.barrier` goes before a read of a slot
    written since the last barrier and before a write to a slot read or
    written since then, and nowhere else.
  }];
  let options = [
    Option<"pairRhs", "pair-rhs", "bool", /*default=*/"true",
           "Store the right operand of P·V pair-interleaved (16-bit types)">,
    Option<"widen", "widen", "std::string", /*default=*/"\"auto\"",
           "Keep 16-bit tiles in LDS as f32: auto (the target's choice), "
           "on or off">,
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark per grid with its buffers and barriers">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect"];
}

def FaDoubleBufferPass : Pass<"fa-double-buffer", "::mlir::ModuleOp"> {
  let summary = "Software-pipeline the K/V loop: fetch block n+1 while block n is computed";
  let description = [{
    A pass over the memory level (run fa-promote first). In every tile grid
    whose `#fa.tile` has `stages = 2`, each `fa.copy_tile` in the body of
    an `scf.for` (the K/V loop) is split into `fa.fetch_tile` (global rows
    into registers) and `fa.stage_tile` (those registers into LDS, where the
    copy was). The fetch moves as early as the registers allow
    (register-staged: gfx906 has no asynchronous global-to-LDS copy):

    - the copies of the loop form groups (copies with no LDS read between
      them); a group's fetch goes right after the previous group's stage,
      so that its loads are in flight while that LDS data is used;
    - the first group's fetch for block n+1 goes after the last group's
      stage of block n and reaches the next iteration as an iteration
      argument (`scf.for` iter_args); the prologue fetches block 0 before
      the loop; in the last iteration the fetch's row is the source's
      length, so that it loads nothing (the epilogue has no code of its
      own).

    With `ahead=in-block` the first group is left a copy (no iteration
    argument) and only the later groups are fetched ahead: fewer registers
    live across the last group's products, for kernels that would spill
    otherwise (fac tries it before smaller tiles).

    With K and V in one slot (`kv_shared`) this fetches V while Q·Kᵀ and
    the softmax run and K of the next block while P·V runs, one tile of
    registers at a time; with separate slots both tiles of block n+1 are
    fetched at the top of iteration n. Barriers are removed and placed again
    by the memory level's slot scan (LdsSync.h).

    Grids with `stages = 1`, and loops whose copies cannot be moved (a row
    not computed from the induction variable by pure ops, a batch or head
    index defined in the loop), are left single-buffered with a remark;
    `#fa.tile` is set to `stages = 1` for the latter. Upstream
    `scf::pipelineForLoop` peels the epilogue (a second copy of the whole
    loop body, which is already versioned on copy alignment) or predicates
    every op, and `memref::multiBuffer` builds the two-slot strategy, which
    the gfx906 LDS budget has no room for at the tiles that keep 2 waves;
    hence this small pass.
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark per grid: the strategy, what is fetched ahead, "
           "the registers it holds">,
    Option<"ahead", "ahead", "std::string", /*default=*/"\"next-block\"",
           "next-block (the first group of block n+1 is fetched during "
           "block n) or in-block (the first group is copied in place, only "
           "the later groups are fetched ahead: fewer registers live across "
           "the products of the last group)">,
    Option<"testPlantBug", "test-plant-bug", "std::string", /*default=*/"\"\"",
           "Test only: plant a bug (PlantedBugs.h)">
  ];
  let dependentDialects = ["::mlir::gpu::GPUDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::arith::ArithDialect"];
}

def FaPadLdsPass : Pass<"fa-pad-lds", "::mlir::ModuleOp"> {
  let summary = "Choose the LDS row padding of each tile grid by bank-conflict analysis";
  let description = [{
    A pass over the memory level (run fa-promote first). For every tile
    grid, evaluates the K/V-loop LDS accesses of each `fa.lds_buffer` under
    the thread mapping fa-lower-to-gpu will use, one wave at a time, with
    the target's bank model (BankConflicts.h, docs/bank-conflicts.md): the
    fa.lds_dot operand reads (lhs row pairs, transposed rhs row pairs per
    thread column, a row-major rhs down a column, a pair-interleaved rhs one
    word per column), P's fa.write_tile and the copies' 16-byte stores.

    Each buffer gets the smallest padding (a multiple of two elements, so
    that pair loads stay aligned) with its lowest worst degree; paddings are
    kept most useful first while the LDS budget fits and the LDS-bound
    occupancy stays at the target's goal. The padding becomes the buffer's
    memref row stride; `#fa.tile`'s lds_pad records the largest. It does
    not fire when `lds_pad` was set by hand (non-zero) or there are no
    buffers; `remarks=true` says why and lists each access with its degree
    before and after.

    Every access's lane pattern and degrees (unpadded, as chosen) are
    recorded on the grid as `fa.lds_accesses` (KernelInfo.h), which
    fa-lower-to-gpu carries to the kernel and `fac --report` prints with
    the LDS layout. `apply=false` records and reports the degrees of the
    layout as it is and changes nothing else (fac --pad-lds=false).
  }];
  let options = [
    Option<"remarks", "remarks", "bool", /*default=*/"false",
           "Emit a remark per grid with the accesses, degrees and padding">,
    Option<"maxPad", "max-pad", "int64_t", /*default=*/"16",
           "Largest padding (elements per row) to consider">,
    Option<"unitBytes", "unit-bytes", "int64_t", /*default=*/"-1",
           "Pad by multiples of this many bytes (and of two elements); -1: "
           "the target's (TargetDesc::ldsPadBytes)">,
    Option<"apply", "apply", "bool", /*default=*/"true",
           "Pad; false only records and reports the degrees of the layout "
           "as it is (fac --pad-lds=false)">
  ];
}

#endif // FA_COMPILER_TRANSFORMS_PASSES_TD
