#!/usr/bin/env bash
# Runs on a machine with an NVIDIA GPU (CUDA driver, PyTorch, compute-
# sanitizer; no LLVM needed): builds the runtime and fa-run with CMake, then
#   1. the e2e suite on the GPU (fa-run --device cuda, plan from
#      bench/build-kernels.sh), validated against the fp64 CPU reference;
#   2. compute-sanitizer racecheck, synccheck and memcheck on the default
#      kernels (D 64 and 128, causal on and off) and on the decode kernels
#      (split-KV with and without GQA packing, at a decode shape);
#   3. bench/bench.py: fa vs PyTorch SDPA / eager / fp32 SGEMM;
#   4. bench/decode.py: decode (Lq = 1), dense and paged K/V caches, vs
#      PyTorch, K/V GB/s against the device copy (decode.csv, decode.md,
#      decode.png, decode.log);
#   5. bench/varlen.py: prefill through fa's varlen kernels vs its dense
#      kernel and PyTorch, TFLOP/s (varlen.csv, varlen.md, varlen.png,
#      varlen.log); skipped with a note where the varlen cubins are missing.
# FA_SKIP_PREFILL_BENCH=1 skips step 3. FA_DECODE_ARGS / FA_VARLEN_ARGS add
# options (--quick, --skip ...); FA_DECODE_BUDGET / FA_VARLEN_BUDGET (170 /
# 140 s) bound each benchmark's time, FA_GPU_DEADLINE (seconds from this
# script's start) both. FA_SANITIZE_VARLEN=1 adds a compute-sanitizer
# memcheck of a small varlen.py run. Exit status 1 when an fa output of
# steps 4-5 is off its fp64 reference.
# usage: bench/gpu.sh KERNELS_DIR RESULTS_DIR   (KERNELS_DIR from build-kernels.sh)
# The runtime needs nlohmann-json's headers, which the GPU machine lacks:
# copy them here first and carry the folder with the kernels,
#   mkdir -p build-deps/include && cp -r /usr/include/nlohmann build-deps/include/
# (build-* is git-ignored). FA_NLOHMANN_INCLUDE_DIR names another folder
# holding nlohmann/json.hpp; without either, CMake looks for an installed
# nlohmann_json package.
set -uo pipefail
kernels=$1 results=$2
mkdir -p "$results"
nlohmann=${FA_NLOHMANN_INCLUDE_DIR:-}
if [ -z "$nlohmann" ] && [ -f build-deps/include/nlohmann/json.hpp ]; then
  nlohmann=$PWD/build-deps/include
fi
cmake -S runtime -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
  ${nlohmann:+-DFA_NLOHMANN_INCLUDE_DIR="$nlohmann"} > "$results/cmake.log" 2>&1 \
  || { tail -30 "$results/cmake.log"; exit 1; }
ninja -C build-gpu fa-run >> "$results/cmake.log" 2>&1 || { tail -30 "$results/cmake.log"; exit 1; }
farun=$(find build-gpu -name fa-run -type f -perm -u+x | head -1)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$results/gpu.txt"

echo "== e2e on cuda"
python3 test/e2e/e2e_matrix.py --run-plan "$kernels/e2e/plan.json" "$farun" --device cuda \
  > "$results/e2e-cuda.log" 2>&1
tail -1 "$results/e2e-cuda.log"; grep -A2 FAIL "$results/e2e-cuda.log" | head -20

echo "== runtime tests on the GPU (CUDA backend, device reference)"
ninja -C build-gpu > /dev/null 2>&1 && (cd build-gpu && ctest -j8 --output-on-failure) \
  > "$results/runtime-tests-gpu.log" 2>&1
grep -E "tests passed|Skipped|Failed" "$results/runtime-tests-gpu.log" | head -20

if command -v ncu >/dev/null 2>&1; then
  echo "== ncu (where the time goes), D=128 non-causal, (1,16,4096,128)"
  ncu --section SpeedOfLight --section Occupancy --section LaunchStats \
    --section MemoryWorkloadAnalysis --section ComputeWorkloadAnalysis \
    --section WarpStateStats -k attention_kernel -c 1 \
    "$farun" "$kernels/bench/attn_d128_full.cubin" --shape 1,16,16,4096,4096 \
    --device cuda --reference cpu > "$results/ncu.txt" 2>&1
  grep -E "Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Registers Per|Stall|Issue Slots|Warp Cycles Per Issued" "$results/ncu.txt" | head -20
fi

echo "== compute-sanitizer"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
: > "$results/sanitizer.log"
# sanitize KERNEL RUN...: racecheck, synccheck and memcheck of fa-run on
# KERNEL.cubin once per RUN (fa-run arguments besides the kernel and the
# device), each logged as "### TOOL KERNEL RUN", the tool's output and
# "### exit STATUS"; a missing kernel is logged as not run.
sanitize() {
  local k=$1 run tool
  shift
  if [ ! -f "$kernels/bench/$k.cubin" ]; then
    printf '### %s missing\n### ERROR SUMMARY: not run\n### exit -\n' "$k" >> "$results/sanitizer.log"
    return
  fi
  for run in "$@"; do
    for tool in racecheck synccheck memcheck; do
      echo "### $tool $k $run" >> "$results/sanitizer.log"
      # shellcheck disable=SC2086
      "$san" --tool "$tool" --error-exitcode 9 "$farun" "$kernels/bench/$k.cubin" \
        --device cuda $run >> "$results/sanitizer.log" 2>&1
      echo "### exit $?" >> "$results/sanitizer.log"
    done
  done
}
for k in attn_d64_full attn_d64_causal attn_d128_full attn_d128_causal; do
  sanitize "$k" "--shape 1,2,2,200,333"
done
# Decode kernels at a decode shape (Lq = 1, GQA 8/2, 3000 keys: a partial
# last K/V block); fa-run launches the split kernel and its combine kernel,
# at the runtime's split count, 5 splits (uneven ones) and 128 (more splits
# than K/V blocks: empty ones).
for k in decode_d128 decode_d128_nopack; do
  sanitize "$k" "--shape 2,8,2,1,3000" "--shape 2,8,2,1,3000 --kv-splits 5" \
    "--shape 2,8,2,1,3000 --kv-splits 128"
done
# Paged kernels (a [num_pages, page_size, Hkv, D] cache read through a
# shuffled block table): lengths with a 0, a partial page and the capacity;
# shared pages; more splits than K/V blocks.
paged_runs=("--shape 4,8,2,1,3000 --paged 16 --cache-seqlens 0,1,2999,3000"
            "--shape 4,8,2,1,3000 --paged 64 --share-pages --cache-seqlens 1000,3000,17,2048")
sanitize paged_d128 "${paged_runs[@]}" "--shape 4,8,2,1,3000 --paged 256 --kv-splits 128"
sanitize paged_d128_nosplit "${paged_runs[@]}"
# Varlen kernels (packed sequences cut by cu_seqlens): lengths with 0s, 1s,
# Lq != Lk and the maxima; the decode build with more splits than blocks.
for k in varlen_d128_full varlen_d128_causal; do
  sanitize "$k" "--shape 4,8,2,300,333 --varlen --seqlens-q 0,1,300,77 --seqlens-k 333,0,1,200" \
    "--shape 5,16,2,700,500 --varlen"
done
sanitize varlen_d128_decode \
  "--shape 4,8,2,4,3000 --varlen --seqlens-q 0,1,4,2 --seqlens-k 3000,5,0,2999" \
  "--shape 3,8,2,1,3000 --varlen --kv-splits 128"
grep -E "^### |(ERROR|RACECHECK) SUMMARY" "$results/sanitizer.log" | paste - - - | head -120

shift 2
if [ -z "${FA_SKIP_PREFILL_BENCH:-}" ]; then
  echo "== bench"
  python3 bench/bench.py "$kernels/bench" "$results" "$@" 2>&1 | tee "$results/bench.log"
else
  echo "== bench: skipped (FA_SKIP_PREFILL_BENCH)"
fi

# The benchmarks' time budgets (decode.py / varlen.py --budget: no new shape
# after that many seconds; the files are still written). FA_GPU_DEADLINE
# (seconds from this script's start) lowers them to fit what is left.
budget() { # default, seconds to keep back for what follows
  local b=$1
  if [ -n "${FA_GPU_DEADLINE:-}" ]; then
    local left=$((FA_GPU_DEADLINE - SECONDS - $2))
    [ "$left" -lt "$b" ] && b=$left
    [ "$b" -lt 1 ] && b=1
  fi
  echo "$b"
}
varlen_budget=${FA_VARLEN_BUDGET:-140}
# The commit column of decode.csv and varlen.csv.
if [ -z "${FA_COMMIT:-}" ]; then
  if FA_COMMIT=$(git rev-parse --short HEAD 2>/dev/null); then
    git diff --quiet HEAD -- 2>/dev/null || FA_COMMIT="$FA_COMMIT+changes"
  else
    FA_COMMIT=unknown
  fi
  export FA_COMMIT
fi
status=0

echo "== decode (started at ${SECONDS} s)"
# shellcheck disable=SC2086
python3 bench/decode.py "$kernels/bench" "$results" \
  --budget "$(budget "${FA_DECODE_BUDGET:-170}" $((varlen_budget + 40)))" \
  ${FA_DECODE_ARGS:-} 2>&1 | tee "$results/decode.log" || status=1

echo "== varlen (started at ${SECONDS} s)"
if ls "$kernels"/bench/varlen_d128_*.cubin > /dev/null 2>&1; then
  # shellcheck disable=SC2086
  python3 bench/varlen.py "$kernels/bench" "$results" \
    --budget "$(budget "$varlen_budget" 20)" ${FA_VARLEN_ARGS:-} 2>&1 \
    | tee "$results/varlen.log" || status=1
else
  echo "varlen: skipped: no varlen_d128_{full,causal}.cubin in $kernels/bench" \
    "(bench/build-kernels.sh builds them once fac compiles fa.attention varlen)" \
    | tee "$results/varlen.log"
fi
# FA_SANITIZE_VARLEN=1: compute-sanitizer memcheck over a small varlen.py
# run (the varlen kernels through the driver, one allocation per tensor so
# that reads past a buffer are caught; torch's own kernels checked too).
if [ -n "${FA_SANITIZE_VARLEN:-}" ] && ls "$kernels"/bench/varlen_d128_*.cubin > /dev/null 2>&1; then
  echo "== varlen memcheck (started at ${SECONDS} s)"
  PYTORCH_NO_CUDA_MEMORY_CACHING=1 "$san" --tool memcheck --error-exitcode 9 \
    python3 bench/varlen.py "$kernels/bench" "$results/varlen-memcheck" --totals 1024 \
    --lengths 256 --heads 8/2 --skip dense_packed,sdpa,torch_varlen --reps 1 \
    > "$results/varlen-memcheck.log" 2>&1
  echo "varlen memcheck: exit $? ($(grep -m1 'ERROR SUMMARY' "$results/varlen-memcheck.log"))"
fi
echo "== done at ${SECONDS} s"
exit $status
