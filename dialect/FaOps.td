//===- FaOps.td - fa dialect operations --------------------*- tablegen -*-===//
//
// Part of the fa project.
//
//===----------------------------------------------------------------------===//

#ifndef FA_OPS_TD
#define FA_OPS_TD

include "dialect/FaDialect.td"
include "mlir/Interfaces/SideEffectInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

//===----------------------------------------------------------------------===//
// Level 0: tensor semantics
//===----------------------------------------------------------------------===//

def Fa_AttentionOp : Fa_Op<"attention", [Pure, AttrSizedOperandSegments]> {
  let summary = "Scaled dot-product attention (forward)";
  let description = [{
    `O = softmax(scale * Q Kᵀ + mask) V` on rank-4 tensors:
    Q `[B, Hq, Lq, D]`, K and V `[B, Hkv, Lk, D]`, O `[B, Hq, Lq, D]`.
    Query head `h` reads KV head `h / (Hq / Hkv)` (grouped-query attention).
    `scale` defaults to `1/sqrt(D)`. With `causal`, query `i` sees key `j`
    iff `j <= i + (Lk - Lq)` (bottom-right aligned, as FlashAttention 2); a
    row that sees no key produces 0. The optional second result is each
    row's natural-log log-sum-exp of the scaled scores, `[B, Hq, Lq]` f32
    (`-inf` for a row that sees no key). B, H and L may be dynamic; D is
    static. Element types: f16, f32, bf16 (all three the same).

    With `paged(%block_table, %cache_seqlens)` K and V are a paged cache
    (FlashAttention 2 / vLLM): `[num_pages, page_size, Hkv, D]`, with
    `block_table` `[B, max_pages]` i32 (the pages of each sequence, in
    order) and `cache_seqlens` `[B]` i32 (its keys): key `j` of sequence `b`
    is row `j mod page_size` of page `block_table[b, j / page_size]`, and
    sequence `b` has `Lk = cache_seqlens[b]` keys (causal: bottom-right
    within its own length). Pages may come in any order and be shared.

    With `varlen(%cu_seqlens_q, %cu_seqlens_k)` the batch is variable-length
    sequences packed along the rows (FlashAttention 2's varlen layout): Q
    and O `[total_q, Hq, D]`, K and V `[total_k, Hkv, D]`, the LSE
    `[Hq, total_q]`, and `cu_seqlens_q`, `cu_seqlens_k` `[B + 1]` i32 (0,
    then each sequence's end): sequence `b` is rows `cu_seqlens_q[b] ..
    cu_seqlens_q[b+1] - 1` of Q and rows `cu_seqlens_k[b] .. cu_seqlens_k[b+1]
    - 1` of K and V, attended as a dense attention of its own lengths
    (causal: bottom-right within them).

    `paged` and `varlen(%cu_seqlens_q)` together are a mixed batch over a
    paged cache (vLLM's, FlashAttention 2's `flash_attn_varlen_func` with
    `block_table` and `seqused_k`): Q and O packed `[total_q, Hq, D]` as in
    `varlen`, K and V the paged cache, and sequence `b`'s keys its
    `cache_seqlens[b]`. Its queries are the last rows of the sequence
    (causal bottom-right), so one launch serves prompt chunks of hundreds of
    rows and decode tokens of one row together.

    `window(left, right)` is sliding-window (local) attention with
    FlashAttention 2's `window_size`: query `i` sees key `j` iff
    `i + (Lk - Lq) - left <= j <= i + (Lk - Lq) + right`, each side
    unbounded where it is -1 (with `causal`, the intersection of both
    masks). `softcap(c)` caps the scaled scores before the softmax and its
    mask: `s = c * tanh(scale * q·k / c)` (Gemma 2's logit softcapping).
    Both compose with paged, varlen, GQA and the LSE.

    `alibi(%slopes : tensor<Hq x f32>)` adds ALiBi's linear bias (FlashAttention
    2's): query head `h`'s score of key `j` for query `i` becomes
    `s - slopes[h] * |i + (Lk - Lq) - j|`, after the softcap and before the
    mask. `sinks(%sinks : tensor<Hq x f32>)` are attention sinks (gpt-oss):
    head `h`'s logit `sinks[h]` joins every row's softmax denominator once
    and contributes no value, so `O_i = sum_j e^(s_ij) v_j / (sum_j e^(s_ij)
    + e^(sinks[h]))` and the LSE is the log of that denominator (a row that
    sees no key: O = 0, LSE = `sinks[h]`). Both are per query head, f32, and
    compose with every other option.

    ```mlir
    %o = fa.attention %q, %k, %v causal window(127, 0)
        alibi(%slopes : tensor<8xf32>) sinks(%sinks : tensor<8xf32>)
        : tensor<1x8x?x64xf16>, tensor<1x2x?x64xf16>,
          tensor<1x2x?x64xf16> -> tensor<1x8x?x64xf16>
    ```

    ```mlir
    %o = fa.attention %q, %k, %v causal window(4096, -1) softcap(50.0)
        : tensor<1x8x?x128xf16>, tensor<1x2x?x128xf16>,
          tensor<1x2x?x128xf16> -> tensor<1x8x?x128xf16>
    ```

    ```mlir
    %o, %lse = fa.attention %q, %k, %v
        varlen(%cu_q, %cu_k : tensor<?xi32>, tensor<?xi32>) causal
        : tensor<?x8x64xf16>, tensor<?x2x64xf16>, tensor<?x2x64xf16>
        -> tensor<?x8x64xf16>, tensor<8x?xf32>
    ```

    ```mlir
    %o = fa.attention %q, %k_cache, %v_cache paged(%table, %seqused_k)
        varlen(%cu_q : tensor<?xi32>) causal
        : tensor<?x32x128xf16>, tensor<?x16x8x128xf16>,
          tensor<?x16x8x128xf16>, tensor<?x?xi32>, tensor<?xi32>
        -> tensor<?x32x128xf16>
    ```

    ```mlir
    %o = fa.attention %q, %k, %v causal scale(0.125)
        : tensor<2x8x?x64xf16>, tensor<2x2x?x64xf16>, tensor<2x2x?x64xf16>
        -> tensor<2x8x?x64xf16>
    %o2, %lse = fa.attention %q, %k, %v
        : tensor<2x8x?x64xf16>, tensor<2x2x?x64xf16>, tensor<2x2x?x64xf16>
        -> tensor<2x8x?x64xf16>, tensor<2x8x?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$query, AnyRankedTensor:$key,
                       AnyRankedTensor:$value,
                       Optional<AnyRankedTensor>:$block_table,
                       Optional<AnyRankedTensor>:$cache_seqlens,
                       Optional<AnyRankedTensor>:$cu_seqlens_q,
                       Optional<AnyRankedTensor>:$cu_seqlens_k,
                       Optional<AnyRankedTensor>:$alibi_slopes,
                       Optional<AnyRankedTensor>:$sinks,
                       OptionalAttr<F32Attr>:$scale, UnitAttr:$causal,
                       OptionalAttr<I64Attr>:$window_left,
                       OptionalAttr<I64Attr>:$window_right,
                       OptionalAttr<F32Attr>:$softcap);
  let results = (outs AnyRankedTensor:$output,
                      Optional<AnyRankedTensor>:$lse);
  let assemblyFormat = [{
    $query `,` $key `,` $value
    (`paged` `(` $block_table^ `,` $cache_seqlens `)`)?
    (`varlen` `(` $cu_seqlens_q^ (`,` $cu_seqlens_k^)? `:`
     type($cu_seqlens_q) (`,` type($cu_seqlens_k)^)? `)`)?
    (`causal` $causal^)? (`scale` `(` $scale^ `)`)?
    (`window` `(` $window_left^ `,` $window_right `)`)?
    (`softcap` `(` $softcap^ `)`)?
    (`alibi` `(` $alibi_slopes^ `:` type($alibi_slopes) `)`)?
    (`sinks` `(` $sinks^ `:` type($sinks) `)`)?
    attr-dict `:` type($query) `,` type($key) `,` type($value)
    (`,` type($block_table)^ `,` type($cache_seqlens))? `->`
    type($output) (`,` type($lse)^)?
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The head dimension D (always static).
    int64_t getHeadDim();
    /// Whether K and V are a paged cache (`paged`).
    bool isPaged() { return static_cast<bool>(getBlockTable()); }
    /// Whether the batch is variable-length packed sequences (`varlen`).
    bool isVarlen() { return static_cast<bool>(getCuSeqlensQ()); }
    /// The scale in effect: the attribute, or 1/sqrt(D).
    float getEffectiveScale();
    /// The window's sides, -1 where unbounded (no `window`: both).
    int64_t getWindowLeftOr() {
      auto w = getWindowLeft();
      return w ? int64_t(*w) : -1;
    }
    int64_t getWindowRightOr() {
      auto w = getWindowRight();
      return w ? int64_t(*w) : -1;
    }
    /// The softcap, 0 without one.
    float getSoftcapOr() {
      auto c = getSoftcap();
      return c ? c->convertToFloat() : 0.0f;
    }
  }];
}

def Fa_MatmulOp : Fa_Op<"matmul", [Pure]> {
  let summary = "Batched matrix product with an f32 result";
  let description = [{
    `C[b, h, m, n] = sum_k A[b, h, m, k] * B[b, h / (Ha / Hb), k, n]` on
    rank-4 tensors (`B[b, h', n, k]` with `transpose_rhs`). The head
    dimension of the right operand may divide that of the left one (grouped
    heads). Operands share one float element type; the result is f32.

    ```mlir
    %s = fa.matmul %q, %k transpose_rhs
        : tensor<1x8x128x64xf16>, tensor<1x8x128x64xf16> -> tensor<1x8x128x128xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs,
                       UnitAttr:$transpose_rhs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`transpose_rhs` $transpose_rhs^)? attr-dict `:`
    type($lhs) `,` type($rhs) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Fa_SoftmaxOp : Fa_Op<"softmax", [Pure]> {
  let summary = "Row softmax over the last dimension, with scale and mask";
  let description = [{
    `P[b, h, i, :] = softmax(scale * S[b, h, i, :] + mask)` on a rank-4 f32
    tensor `[B, H, Lq, Lk]`. `scale` defaults to 1. With `causal`, entry
    `(i, j)` is masked iff `j > i + (Lk - Lq)`; with `window(l, r)`, iff
    `j < i + (Lk - Lq) - l` (l >= 0) or `j > i + (Lk - Lq) + r` (r >= 0);
    a fully masked row is 0. With `softcap(c)` the scaled scores are
    `c * tanh(scale * S / c)` before the mask. The result has the input's
    shape and any float element type (the rounding to that type happens
    after normalisation).

    ```mlir
    %p = fa.softmax %s causal scale(0.125)
        : tensor<1x8x128x128xf32> -> tensor<1x8x128x128xf16>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, OptionalAttr<F32Attr>:$scale,
                       UnitAttr:$causal, OptionalAttr<I64Attr>:$window_left,
                       OptionalAttr<I64Attr>:$window_right,
                       OptionalAttr<F32Attr>:$softcap);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input (`causal` $causal^)? (`scale` `(` $scale^ `)`)?
    (`window` `(` $window_left^ `,` $window_right `)`)?
    (`softcap` `(` $softcap^ `)`)? attr-dict `:`
    type($input) `->` type($result)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Level 1: tile level (produced by fa-tile)
//===----------------------------------------------------------------------===//

def Fa_LoadTileOp : Fa_Op<"load_tile", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Load a block of rows of one (batch, head) slice";
  let description = [{
    Reads rows `[row, row + R)` of `source[batch, head]` (a rank-4 memref
    `[B, H, L, D]`) into an `R x C` tile, `C >= D`, or of a rank-3 memref
    `[B, H, L]` into an `R` tile. Rows at or past `L`, and columns at or
    past `D` (a head dimension padded for the thread mapping), read as zero.
    From a rank-1 memref `[H]` of per-head values (ALiBi slopes, sinks) an
    `R` tile reads `source[head]` into every row (packed: the row's own
    head's), as if it were `[B, H, L]` with strides `(0, 1, 0)`.

    With `group(%g)` the rows are packed query heads (GQA packing): `head`
    is a KV head and packed row `p = row + r` is row `p mod L` of head
    `head * g + p / L`; rows `p >= g * L` read as zero.

    With `pages(%table, %rows)` the source is a paged cache `[num_pages,
    page_size, H, D]`: row `n` of sequence `batch` is row `n mod page_size`
    of page `table[batch, n / page_size]` (`table` `[B, max_pages]` i32),
    and the sequence has `rows` rows.

    With `seq(%start, %rows)` the rows are one sequence of a varlen batch
    (`fa.attention`'s `varlen`): row `p` is row `start + p` of
    `source[batch, head]`, existing below `rows` (which also takes `L`'s
    place in `group`'s packing). A varlen kernel's Q, K, V and O are views
    `[B, H, max_L, D]` of the packed rows with batch stride 0, so that
    `start` is `cu_seqlens[batch]`.

    ```mlir
    %t = fa.load_tile %k[%b, %h, %n0]
        : memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>> -> tensor<64x64xf16>
    ```
  }];
  let arguments = (ins AnyMemRef:$source, Index:$batch, Index:$head,
                       Index:$row, Optional<Index>:$group,
                       Optional<AnyMemRef>:$page_table,
                       Optional<Index>:$page_rows, Optional<Index>:$seq_start,
                       Optional<Index>:$seq_rows);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $source `[` $batch `,` $head `,` $row `]` (`group` `(` $group^ `)`)?
    (`pages` `(` $page_table^ `:` type($page_table) `,` $page_rows `)`)?
    (`seq` `(` $seq_start^ `,` $seq_rows `)`)?
    attr-dict `:` type($source) `->` type($result)
  }];
  let hasVerifier = 1;
}

def Fa_StoreTileOp : Fa_Op<"store_tile", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Store a block of rows into one (batch, head) slice";
  let description = [{
    Writes an `R x D` tile to rows `[row, row + R)` of `dest[batch, head]`
    (rank-4 memref `[B, H, L, D]`), or an `R` tile to `dest[batch, head,
    row : row + R]` (rank-3 memref `[B, H, L]`). Rows at or past `L` are not
    written, nor are the columns of a wider tile at or past `D`. With
    `group(%g)` the rows are packed query heads as in `fa.load_tile`; rows
    `p >= g * L` are not written. With `seq(%start, %rows)` the rows are
    one sequence of a varlen batch, as in `fa.load_tile`.

    ```mlir
    fa.store_tile %o, %out[%b, %h, %m0]
        : tensor<64x64xf16>, memref<?x?x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$tile, AnyMemRef:$dest, Index:$batch,
                       Index:$head, Index:$row, Optional<Index>:$group,
                       Optional<Index>:$seq_start, Optional<Index>:$seq_rows);
  let assemblyFormat = [{
    $tile `,` $dest `[` $batch `,` $head `,` $row `]`
    (`group` `(` $group^ `)`)? (`seq` `(` $seq_start^ `,` $seq_rows `)`)?
    attr-dict `:` type($tile) `,` type($dest)
  }];
  let hasVerifier = 1;
}

def Fa_MergeSplitsOp : Fa_Op<"merge_splits", [AttrSizedOperandSegments,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "Merge the split-KV partial results of a block of rows";
  let description = [{
    The split-KV combine's merge, over the workgroup's threads at once: for
    each row `r` of the `R`-row block at `row` of `(batch, head)`, with
    `x_s = lse[s * batches + batch, head, row + r]` and `O_s` row `row + r`
    of `o[s * batches + batch, head]` (`s < splits`; `o` `[S·B, H, L, D]`,
    `lse` `[S·B, H, L]`, f32, as the split kernel writes them):
    `m = max_s x_s`, `l = sum_s e^(x_s - ref)`, `acc = sum_s e^(x_s - ref)
    · O_s` with `ref = m`, or 0 where `m = -inf`. The results are
    `tensor<R>` (`m`, `l`) and `tensor<R x C>` (`acc`, `C >= D`, the
    columns past `D` zero). Rows at or past `L` (with `seq(%start, %rows)`:
    `rows`, the rows counted from 0 as the workspace of a varlen batch
    holds them) give `m = -inf`, `l = 0`, `acc = 0`.

    Where fa.combine's loop walks the splits one after another in every
    thread, the lowering spreads them over groups of threads (each group
    the block's live rows, four columns a thread) and merges the groups'
    states through LDS.

    ```mlir
    %m, %l, %acc = fa.merge_splits %ws_o, %ws_lse[%b, %h, %m0]
        splits(%s, %nb)
        : memref<?x?x?x128xf32>, memref<?x?x?xf32>
          -> tensor<4xf32>, tensor<4xf32>, tensor<4x128xf32>
    ```
  }];
  let arguments = (ins AnyMemRef:$o, AnyMemRef:$lse, Index:$batch,
                       Index:$head, Index:$row, Index:$splits,
                       Index:$batches, Optional<Index>:$seq_start,
                       Optional<Index>:$seq_rows);
  let results = (outs AnyRankedTensor:$m, AnyRankedTensor:$l,
                      AnyRankedTensor:$acc);
  let assemblyFormat = [{
    $o `,` $lse `[` $batch `,` $head `,` $row `]`
    `splits` `(` $splits `,` $batches `)`
    (`seq` `(` $seq_start^ `,` $seq_rows `)`)?
    attr-dict `:` type($o) `,` type($lse) `->` type($m) `,` type($l) `,`
    type($acc)
  }];
  let hasVerifier = 1;
}

def Fa_TraceRowOp : Fa_Op<"trace_row"> {
  let summary = "Write one query row's online-softmax state after a K/V block";
  let description = [{
    Validation layer 2 (`fa-tile trace=true`, `fac --trace`): where the tile
    of rows `[row, row + R)` of `(batch, head)` holds the traced query row
    `(trace_batch, trace_head, trace_row)`, writes that row's running max
    `m`, running sum `l` and its first `cols` unnormalised outputs `acc` to
    row `block` of `trace` (f32 `[n_blocks, 2 + cols]`: m, l, acc). Nothing
    is written where the tile does not hold the row. `m` and `l` are the
    kernel's statistics (log2 units, KernelAbi.h); `acc` is `R x C`, `C >=
    cols`.

    ```mlir
    fa.trace_row %m, %l, %acc, %trace[%n] rows(%b, %h, %m0)
        traced(%tb, %th, %tr) {cols = 64 : i64}
        : tensor<64xf32>, tensor<64xf32>, tensor<64x64xf32>, memref<?xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$m, AnyRankedTensor:$l,
                       AnyRankedTensor:$acc,
                       Arg<AnyMemRef, "trace", [MemWrite]>:$trace,
                       Index:$block, Index:$batch, Index:$head, Index:$row,
                       Index:$trace_batch, Index:$trace_head,
                       Index:$trace_row, I64Attr:$cols);
  let assemblyFormat = [{
    $m `,` $l `,` $acc `,` $trace `[` $block `]`
    `rows` `(` $batch `,` $head `,` $row `)`
    `traced` `(` $trace_batch `,` $trace_head `,` $trace_row `)`
    attr-dict `:` type($m) `,` type($l) `,` type($acc) `,` type($trace)
  }];
  let hasVerifier = 1;
}

def Fa_TileDotOp : Fa_Op<"tile_dot", [Pure]> {
  let summary = "Tile matrix product accumulated in f32";
  let description = [{
    `result = acc + lhs · rhs` (`rhs` transposed with `transpose_rhs`) on 2-D
    tiles. Operands are rounded values of the input type; products and sums
    are f32. Without `acc` the accumulator starts at zero.

    ```mlir
    %s = fa.tile_dot %q, %k transpose_rhs
        : tensor<64x64xf16>, tensor<64x64xf16> -> tensor<64x64xf32>
    %o = fa.tile_dot %p, %v, %acc
        : tensor<64x64xf16>, tensor<64x64xf16>, tensor<64x64xf32> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$lhs, AnyRankedTensor:$rhs,
                       Optional<AnyRankedTensor>:$acc,
                       UnitAttr:$transpose_rhs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`,` $acc^)? (`transpose_rhs` $transpose_rhs^)? attr-dict
    `:` type($lhs) `,` type($rhs) (`,` type($acc)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

def Fa_RowReduceOp : Fa_Op<"row_reduce", [Pure]> {
  let summary = "Reduce each row of a 2-D tile";
  let description = [{
    `result[i] = max_j x[i, j]` (`max`) or `sum_j x[i, j]` (`add`).

    `partial` (`add` only): each row's sum is left in parts, one per
    thread that holds a part of the row once the tile is distributed over
    a workgroup; `fa.row_combine` adds the parts up. Until then the value
    may only be multiplied by per-row values and added to other partial
    rows (both distribute over the parts), which lets a loop carry a
    running sum without reducing it across threads every trip.

    ```mlir
    %m = fa.row_reduce max %s : tensor<64x64xf32> -> tensor<64xf32>
    %l = fa.row_reduce add %p partial : tensor<64x64xf32> -> tensor<64xf32>
    ```
  }];
  let arguments = (ins Fa_ReduceKindAttr:$kind, AnyRankedTensor:$input,
                       UnitAttr:$partial);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $kind $input (`partial` $partial^)? attr-dict `:` type($input) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Fa_RowCombineOp : Fa_Op<"row_combine", [Pure]> {
  let summary = "Add up the parts of partial row sums";
  let description = [{
    The rows of a value computed from `fa.row_reduce add ... partial`
    (scaled per row, added together), summed over their parts: the row
    sums `fa.row_reduce add` would have given.

    ```mlir
    %l = fa.row_combine %lp : tensor<64xf32> -> tensor<64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Fa_RowBroadcastOp : Fa_Op<"row_broadcast", [Pure]> {
  let summary = "Broadcast a per-row value along the columns of a 2-D tile";
  let description = [{
    `result[i, j] = input[i]`.

    ```mlir
    %b = fa.row_broadcast %m : tensor<64xf32> -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasVerifier = 1;
}

def Fa_TileMaskOp : Fa_Op<"tile_mask", [Pure, AttrSizedOperandSegments,
    AllTypesMatch<["input", "result"]>]> {
  let summary = "Mask out-of-range and (optionally) causal entries with -inf";
  let description = [{
    Entry `(i, j)` of the tile is global position `(r, c) = (row + i, col + j)`
    of a `rows x cols` score matrix. It becomes `-inf` when `c >= cols`, or,
    with `causal`, when `c > r + (cols - rows)`; other entries pass through.
    Rows `r >= rows` are left as they are (they are never stored). With
    `period(%l)` (packed query heads, `fa.load_tile`'s `group`) row `r` is
    position `r mod l` of a query head of `l` rows: causal masks
    `c > r mod l + (cols - l)`. With `window(left, right)` (fa.attention's)
    it also becomes `-inf` when `c < r + (cols - rows) - left` (left >= 0)
    or `c > r + (cols - rows) + right` (right >= 0), r taken mod the period
    and rows the period where there is one. With `alibi(%slopes)` (an `R`
    f32 row tile: each row's ALiBi slope in the scores' units) every entry
    first becomes `x - slopes[i] * |r + (cols - rows) - c|` (r mod the
    period, rows the period where there is one).

    ```mlir
    %m = fa.tile_mask %s rows(%m0, %lq) cols(%n0, %lk) causal : tensor<64x64xf32>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$input, Index:$row, Index:$rows,
                       Index:$col, Index:$cols, Optional<Index>:$period,
                       Optional<AnyRankedTensor>:$alibi,
                       UnitAttr:$causal, OptionalAttr<I64Attr>:$window_left,
                       OptionalAttr<I64Attr>:$window_right);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $input `rows` `(` $row `,` $rows `)` `cols` `(` $col `,` $cols `)`
    (`period` `(` $period^ `)`)? (`causal` $causal^)?
    (`window` `(` $window_left^ `,` $window_right `)`)?
    (`alibi` `(` $alibi^ `:` type($alibi) `)`)? attr-dict `:`
    type($input)
  }];
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Level 1b: memory level (produced by fa-promote)
//===----------------------------------------------------------------------===//

def Fa_LdsBufferOp : Fa_Op<"lds_buffer"> {
  let summary = "A workgroup (LDS) buffer with an explicit layout";
  let description = [{
    Allocates one tile's worth of LDS for the workgroup. The memref type is
    the layout (`getLdsLayout` in FaOps.h):

    - row-major `memref<R x C x T, strided<[S, 1]>, #gpu.address_space<workgroup>>`:
      element (r, c) at r·S + c; `S - C` elements of padding per row;
    - pair-interleaved `memref<R/2 x C x 2 x T, strided<[2S, 2, 1]>, ...>`:
      rows r and r+1 (r even) are interleaved so that element (r, c) is at
      (r/2)·2S + 2c + r%2. The two elements of a row pair sit in one 32-bit
      word: the layout of V that lets P·V use a two-element dot product
      along the key dimension.

    Buffers with the same `slot` share their storage (the slot is as large
    as its largest buffer); the barriers fa-promote places treat a slot as
    one location.

    ```mlir
    %k = fa.lds_buffer "k" slot("kv")
        : memref<64x64xf16, strided<[66, 1]>, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins StrAttr:$name, OptionalAttr<StrAttr>:$slot);
  let results = (outs Res<AnyMemRef, "the buffer", [MemAlloc]>:$result);
  let assemblyFormat = [{
    $name (`slot` `(` $slot^ `)`)? attr-dict `:` type($result)
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    /// The storage this buffer uses: its slot, or its own name.
    ::llvm::StringRef getStorage() {
      return getSlot() ? *getSlot() : getName();
    }
  }];
}

def Fa_CopyTileOp : Fa_Op<"copy_tile", [AttrSizedOperandSegments]> {
  let summary = "Cooperative copy of a block of rows from global memory to LDS";
  let description = [{
    All threads of the workgroup together copy rows `[row, row + R)` of
    `source[batch, head]` (rank-4 `[B, H, L, D]`) into the LDS buffer
    `dest` in its layout. Rows at or past `L` become zero, and so do the
    columns of a wider buffer at or past `D`. Another thread
    may read the result only after a barrier. A 16-bit source may be
    stored in an f32 buffer (widened once here, not in every product step).
    With `group(%g)` the rows are packed query heads, with `pages(...)`
    rows of a paged cache, with `seq(...)` one sequence of a varlen batch,
    as in `fa.load_tile`.

    ```mlir
    fa.copy_tile %k[%b, %h, %n0] to %kbuf
        : memref<?x2x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
          to memref<64x64xf16, strided<[66, 1]>, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins Arg<AnyMemRef, "global source", [MemRead]>:$source,
                       Index:$batch, Index:$head, Index:$row,
                       Arg<AnyMemRef, "LDS destination", [MemWrite]>:$dest,
                       Optional<Index>:$group,
                       Optional<AnyMemRef>:$page_table,
                       Optional<Index>:$page_rows, Optional<Index>:$seq_start,
                       Optional<Index>:$seq_rows);
  let assemblyFormat = [{
    $source `[` $batch `,` $head `,` $row `]` (`group` `(` $group^ `)`)?
    (`pages` `(` $page_table^ `:` type($page_table) `,` $page_rows `)`)?
    (`seq` `(` $seq_start^ `,` $seq_rows `)`)?
    `to` $dest attr-dict `:` type($source) `to` type($dest)
  }];
  let hasVerifier = 1;
}

def Fa_FetchTileOp : Fa_Op<"fetch_tile", [AttrSizedOperandSegments]> {
  let summary = "First half of a copy: global rows into registers, for a buffer";
  let description = [{
    The global-memory half of `fa.copy_tile` (fa-double-buffer splits the
    copy so that the loads of K/V block n+1 are issued before block n is
    computed): all threads of the workgroup together load rows
    `[row, row + R)` of `source[batch, head]` into registers, distributed
    over the threads as `fa.copy_tile` would store them into `buffer` (the
    buffer only gives the distribution; it is not accessed). Rows at or past
    `L` become zero without a load. The result may only be stored with
    `fa.stage_tile` into the same buffer, directly or through the iteration
    arguments of `scf.for` loops. `pages(...)`: a paged cache, `seq(...)`:
    one sequence of a varlen batch, as in `fa.load_tile`.

    ```mlir
    %t = fa.fetch_tile %k[%b, %h, %n1] for %kbuf
        : memref<?x2x?x64xf16, strided<[?, ?, ?, 1], offset: ?>>
          for memref<64x64xf16, strided<[66, 1]>, #gpu.address_space<workgroup>>
          -> tensor<64x64xf16>
    ```
  }];
  let arguments = (ins Arg<AnyMemRef, "global source", [MemRead]>:$source,
                       Index:$batch, Index:$head, Index:$row,
                       AnyMemRef:$buffer, Optional<AnyMemRef>:$page_table,
                       Optional<Index>:$page_rows, Optional<Index>:$seq_start,
                       Optional<Index>:$seq_rows);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $source `[` $batch `,` $head `,` $row `]`
    (`pages` `(` $page_table^ `:` type($page_table) `,` $page_rows `)`)?
    (`seq` `(` $seq_start^ `,` $seq_rows `)`)?
    `for` $buffer attr-dict `:` type($source) `for` type($buffer) `->`
    type($result)
  }];
  let hasVerifier = 1;
}

def Fa_StageTileOp : Fa_Op<"stage_tile"> {
  let summary = "Second half of a copy: fetched registers into LDS";
  let description = [{
    Each thread stores the part of `tile` it fetched (`fa.fetch_tile` for
    this `dest`) into the LDS buffer, in the buffer's layout (a 16-bit tile
    may be widened to an f32 buffer here). Another thread may read the
    result only after a barrier. `fa.fetch_tile` then `fa.stage_tile` is
    `fa.copy_tile`.

    ```mlir
    fa.stage_tile %t to %kbuf : tensor<64x64xf16>
        to memref<64x64xf16, strided<[66, 1]>, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$tile,
                       Arg<AnyMemRef, "LDS destination", [MemWrite]>:$dest);
  let assemblyFormat = [{
    $tile `to` $dest attr-dict `:` type($tile) `to` type($dest)
  }];
  let hasVerifier = 1;
}

def Fa_WriteTileOp : Fa_Op<"write_tile"> {
  let summary = "Write a register tile to an LDS buffer";
  let description = [{
    Each thread writes the elements of `tile` it holds into `dest`. Used for
    an operand of a tile product that was computed in registers (P). A
    16-bit tile may be written to an f32 buffer (widened).

    ```mlir
    fa.write_tile %p to %pbuf : tensor<64x64xf16>
        to memref<64x64xf16, strided<[66, 1]>, #gpu.address_space<workgroup>>
    ```
  }];
  let arguments = (ins AnyRankedTensor:$tile,
                       Arg<AnyMemRef, "LDS destination", [MemWrite]>:$dest);
  let assemblyFormat = [{
    $tile `to` $dest attr-dict `:` type($tile) `to` type($dest)
  }];
  let hasVerifier = 1;
}

def Fa_LdsDotOp : Fa_Op<"lds_dot"> {
  let summary = "Tile matrix product of LDS operands, accumulated in f32";
  let description = [{
    `result = acc + lhs · rhs` (`rhs` transposed with `transpose_rhs`) where
    both operands are LDS buffers (fa.lds_buffer layouts) and the result is a
    register tile. Products and sums are f32.

    ```mlir
    %s = fa.lds_dot %qbuf, %kbuf transpose_rhs
        : memref<64x64xf16, strided<[66, 1]>, #gpu.address_space<workgroup>>,
          memref<64x64xf16, strided<[66, 1]>, #gpu.address_space<workgroup>>
          -> tensor<64x64xf32>
    ```
  }];
  let arguments = (ins Arg<AnyMemRef, "lhs", [MemRead]>:$lhs,
                       Arg<AnyMemRef, "rhs", [MemRead]>:$rhs,
                       Optional<AnyRankedTensor>:$acc,
                       UnitAttr:$transpose_rhs);
  let results = (outs AnyRankedTensor:$result);
  let assemblyFormat = [{
    $lhs `,` $rhs (`,` $acc^)? (`transpose_rhs` $transpose_rhs^)? attr-dict
    `:` type($lhs) `,` type($rhs) (`,` type($acc)^)? `->` type($result)
  }];
  let hasVerifier = 1;
}

#endif // FA_OPS_TD
