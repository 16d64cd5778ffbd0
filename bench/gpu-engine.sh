#!/usr/bin/env bash
# Runs on a machine with an NVIDIA GPU (CUDA driver and toolkit headers,
# PyTorch; no LLVM): fa inside an engine.
#   1. builds libfa_runtime.so with CMake (build-gpu; nlohmann-json's
#      headers from build-deps/include, as bench/gpu.sh);
#   2. bench/launch_overhead.cpp: host time per launch of a decode
#      attention, raw cuLaunchKernel vs the AOT launcher vs
#      fa_module_enqueue vs the blocking call (launch_overhead.csv), at
#      Lk 1024 and 8192; with KERNELS_DIR/decode_launcher.{c,h} (fac
#      --emit=launcher of decode_d128) the AOT row too;
#   3. bench/engine.py: graph capture of a paged decode step (100 replays
#      with new lengths and tables, each validated in fp64) and the decode
#      step per token-layer in CUDA graphs, fa vs SDPA flash (engine.csv,
#      engine.md, engine.log).
# KERNELS_DIR holds decode_d128.cubin and paged_d128.cubin (fac --target=sm_90
# --kv-splits=runtime --gqa-pack=on and the decode tile; bench/build-kernels.sh
# writes them under OUT/bench). Exit status 1 when a check fails.
# usage: bench/gpu-engine.sh KERNELS_DIR RESULTS_DIR [engine.py options]
set -uo pipefail
kernels=$1 results=$2
shift 2
mkdir -p "$results"
nlohmann=${FA_NLOHMANN_INCLUDE_DIR:-}
if [ -z "$nlohmann" ] && [ -f build-deps/include/nlohmann/json.hpp ]; then
  nlohmann=$PWD/build-deps/include
fi
cmake -S runtime -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
  ${nlohmann:+-DFA_NLOHMANN_INCLUDE_DIR="$nlohmann"} > "$results/cmake.log" 2>&1 \
  || { tail -30 "$results/cmake.log"; exit 1; }
ninja -C build-gpu fa_runtime >> "$results/cmake.log" 2>&1 || { tail -30 "$results/cmake.log"; exit 1; }
lib=$(dirname "$(find build-gpu -name 'libfa_runtime.so' | head -1)")
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$results/gpu.txt"
status=0

echo "== launch overhead"
cuda=${CUDA_HOME:-/usr/local/cuda}
aot=()
if [ -f "$kernels/decode_launcher.c" ]; then
  cc -O2 -c "$kernels/decode_launcher.c" -I"$cuda/include" -o build-gpu/decode_launcher.o \
    && aot=(-DFA_AOT_HEADER="\"decode_launcher.h\"" -I"$kernels" build-gpu/decode_launcher.o)
fi
c++ -std=c++17 -O2 bench/launch_overhead.cpp "${aot[@]}" -Iruntime/include -Iruntime/lib \
  -I"$cuda/include" -L"$lib" -lfa_runtime -L"$cuda/lib64/stubs" -lcuda \
  -Wl,-rpath,"$PWD/$lib" -o build-gpu/launch_overhead 2> "$results/launch_overhead_build.log" \
  || { cat "$results/launch_overhead_build.log"; exit 1; }
{ build-gpu/launch_overhead "$kernels/decode_d128.cubin" 1024 \
  && build-gpu/launch_overhead "$kernels/decode_d128.cubin" 8192 | tail -n +2; } \
  > "$results/launch_overhead.csv" || status=1
cat "$results/launch_overhead.csv"
grep -q ",NO," "$results/launch_overhead.csv" && status=1

echo "== engine (graph capture, decode step per token-layer)"
FA_RUNTIME_LIBRARY="$PWD/$lib/libfa_runtime.so" PYTHONUNBUFFERED=1 \
  python3 bench/engine.py "$kernels" "$results" "$@" || status=1
exit $status
