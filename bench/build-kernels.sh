#!/usr/bin/env bash
# Compiles what bench/gpu.sh runs on an NVIDIA GPU, where there is no LLVM:
#   OUT/bench/attn_d{64,128}_{full,causal}.cubin   fa's kernels (f16, any B, H, L)
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
python3 "$here/test/e2e/e2e_matrix.py" "$fac" - "$here/test/data/golden" \
  "$out/e2e/k" --target sm_90 --write-plan "$out/e2e/plan.json"
