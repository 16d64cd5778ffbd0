#!/usr/bin/env bash
# Compiles what bench/gpu.sh runs on an NVIDIA GPU, where there is no LLVM:
#   OUT/bench/attn_d{64,128}_{full,causal}.cubin   fa's kernels (f16, any B, H, L)
#   OUT/bench/decode_d128*.cubin                    decode kernels (bench/decode.py)
#   OUT/bench/paged_d128*.cubin                     paged decode kernels (bench/decode.py)
#   OUT/bench/varlen_d128_{full,causal,decode}.cubin varlen kernels (bench/varlen.py,
#                                                   the sanitizer runs)
#   OUT/e2e/plan.json + kernels                     the e2e suite for sm_90
# usage: [BENCH_ONLY=1] bench/build-kernels.sh BUILD_DIR OUT_DIR [fac options...]
set -euo pipefail
build=$1 out=$2
shift 2
fac="$build/bin/fac"
here="$(cd "$(dirname "$0")/.." && pwd)"
mkdir -p "$out/bench"
for d in 64 128; do
  for mode in full causal; do
    attr=""
    [ "$mode" = causal ] && attr=" causal"
    t="tensor<?x?x?x${d}xf16>"
    src="$out/bench/attn_d${d}_${mode}.mlir"
    printf 'func.func @attention(%%q: %s, %%k: %s, %%v: %s) -> %s {\n  %%o = fa.attention %%q, %%k, %%v%s : %s, %s, %s -> %s\n  return %%o : %s\n}\n' \
      "$t" "$t" "$t" "$t" "$attr" "$t" "$t" "$t" "$t" "$t" > "$src"
    "$fac" "$src" --target=sm_90 --report -o "$out/bench/attn_d${d}_${mode}.cubin" "$@" 2>/dev/null \
      | grep '^ptxas:' || true
  done
done
# BENCH_ONLY=1: only the benchmark kernels (for an ablation variant).
[ "${BENCH_ONLY:-0}" = 1 ] && exit 0
# Decode (bench/decode.py), from the D=128 non-causal source, without the
# extra fac options: split-KV + GQA packing (decode_d128), split-KV only
# (decode_d128_nopack), split-KV + packing with the 16x64 tile of 4 waves
# (decode_d128_m16), and --index-bits=64 builds of the first two and of the
# dense default kernel (attn_d128_full above is the dense row) for the
# shapes whose offsets pass 2^31 elements. The tile: 4 rows (GQA 4:1 at
# Lq=1 packs exactly 4), 32 keys, one warp whose lanes each hold all 4 rows
# of a key column, K and V in one slot, f16 tiles in shared memory, K/V
# double-buffered by cp.async.cg: sm_90's decode tiles, 69.9-79% of the copy
# bandwidth at B >= 8, Lk >= 8k on an H200 (2026-12-04, bench/results/
# 2026-12-04-h200-decode-tiles; 4 x 32 over 4 warps, the earlier choice of
# ~40 builds, 56-66%).
# DECODE_TILE overrides it.
decode_tile=${DECODE_TILE:---block-m=4 --block-n=32 --waves=1 --kv-shared=on --widen-lds=off --stages=2}
# build NAME SOURCE [fac options...]: OUT/bench/NAME.cubin from
# OUT/bench/SOURCE.mlir, its ptxas line printed; a failure stops the script.
build() {
  local name=$1 src=$2
  shift 2
  rm -f "$out/bench/$name.cubin" "$out/bench/$name.cubin.json"
  "$fac" "$out/bench/$src.mlir" --target=sm_90 --report \
    -o "$out/bench/$name.cubin" "$@" 2>/dev/null | grep '^ptxas:' | sed "s/^/$name /" || true
  [ -f "$out/bench/$name.cubin.json" ] || { echo "$name: fac $* failed" >&2; exit 1; }
}
decode() {
  build "$1" attn_d128_full "${@:2}"
}
decode decode_d128 --kv-splits=runtime --gqa-pack=on $decode_tile
decode decode_d128_nopack --kv-splits=runtime $decode_tile
decode decode_d128_m16 --kv-splits=runtime --gqa-pack=on --block-m=16 --block-n=64 --waves=4
decode decode_d128_idx64 --kv-splits=runtime --gqa-pack=on $decode_tile --index-bits=64
decode decode_d128_nopack_idx64 --kv-splits=runtime $decode_tile --index-bits=64
decode decode_d128_dense_idx64 --index-bits=64
# A paged K/V cache (fa.attention paged): the decode build above over a
# [num_pages, page_size, Hkv, D] cache (paged_d128) and the dense-tile
# prefill build of the same source (paged_d128_nosplit), for the
# sanitizer runs of bench/gpu.sh and bench/decode.py's paged rows.
t="tensor<?x?x?x128xf16>" l="tensor<?x?x?xf32>" m="tensor<?x?xi32>" n="tensor<?xi32>"
printf 'func.func @attention(%%q: %s, %%k: %s, %%v: %s, %%table: %s, %%lens: %s) -> (%s, %s) {\n  %%o, %%lse = fa.attention %%q, %%k, %%v paged(%%table, %%lens) : %s, %s, %s, %s, %s -> %s, %s\n  return %%o, %%lse : %s, %s\n}\n' \
  "$t" "$t" "$t" "$m" "$n" "$t" "$l" "$t" "$t" "$t" "$m" "$n" "$t" "$l" "$t" "$l" \
  > "$out/bench/paged_d128.mlir"
paged() {
  build "$1" paged_d128 "${@:2}"
}
paged paged_d128 --kv-splits=runtime --gqa-pack=on $decode_tile
paged paged_d128_nosplit
# --index-bits=64 build of paged_d128 for the caches whose offsets pass 2^31
# elements (bench/decode.py: B=32 Lk=128k, B=128 Lk=32k).
paged paged_d128_idx64 --kv-splits=runtime --gqa-pack=on $decode_tile --index-bits=64
# Variable-length batches (fa.attention varlen, ABI 4; bench/varlen.py):
# Q, O [total_q, Hq, 128], K, V [total_k, Hkv, 128], LSE [Hq, total_q],
# cu_seqlens i32 [B+1], with the default (prefill) tiles, causal and not
# (varlen_d128_{full,causal}), and the decode build of the non-causal source
# (varlen_d128_decode: split-KV + packing, the decode tile) for the
# sanitizer runs of bench/gpu.sh.
t="tensor<?x?x128xf16>" l="tensor<?x?xf32>" n="tensor<?xi32>"
for mode in full causal; do
  attr=""
  [ "$mode" = causal ] && attr=" causal"
  op="fa.attention %q, %k, %v varlen(%cu_q, %cu_k : $n, $n)$attr : $t, $t, $t -> $t, $l"
  printf 'func.func @attention(%%q: %s, %%k: %s, %%v: %s, %%cu_q: %s, %%cu_k: %s) -> (%s, %s) {\n  %%o, %%lse = %s\n  return %%o, %%lse : %s, %s\n}\n' \
    "$t" "$t" "$t" "$n" "$n" "$t" "$l" "$op" "$t" "$l" > "$out/bench/varlen_d128_$mode.mlir"
  build "varlen_d128_$mode" "varlen_d128_$mode"
done
build varlen_d128_decode varlen_d128_full --kv-splits=runtime --gqa-pack=on $decode_tile
python3 "$here/test/e2e/e2e_matrix.py" "$fac" - "$here/test/data/golden" \
  "$out/e2e/k" --target sm_90 --write-plan "$out/e2e/plan.json"
