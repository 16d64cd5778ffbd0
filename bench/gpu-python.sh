#!/usr/bin/env bash
# Runs on a machine with an NVIDIA GPU (CUDA driver, PyTorch, transformers;
# no LLVM): `import fa` there (bench/python_api.py: API checks, host
# overhead per call, transformers generate() with attn_implementation="fa").
# The GPU machine has no compiler: the kernels come from FA_CACHE_DIR,
# compiled here beforehand with the same fa (the cache key is fa's version,
# the source, the target and the options): the kernels python_api.py's
# KERNELS lists,
#   PYTHONPATH=python /usr/bin/python3 bench/python_api.py --compile CACHE
#   PYTHONPATH=python /usr/bin/python3 bench/mixed.py --compile CACHE
# First the mixed-batch benchmark (bench/mixed.py) into RESULTS_DIR/mixed;
# FA_ONLY_MIXED=1 runs only that.
# usage: bench/gpu-python.sh CACHE_DIR RESULTS_DIR
set -uo pipefail
cache=$1 results=$2
mkdir -p "$results"
nlohmann=${FA_NLOHMANN_INCLUDE_DIR:-}
if [ -z "$nlohmann" ] && [ -f build-deps/include/nlohmann/json.hpp ]; then
  nlohmann=$PWD/build-deps/include
fi
if [ ! -f build-gpu/build.ninja ]; then
  cmake -S runtime -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release \
    ${nlohmann:+-DFA_NLOHMANN_INCLUDE_DIR="$nlohmann"} > /tmp/fa-cmake.log 2>&1 \
    || { tail -30 /tmp/fa-cmake.log; exit 1; }
fi
ninja -C build-gpu fa_runtime > /tmp/fa-ninja.log 2>&1 || { tail -30 /tmp/fa-ninja.log; exit 1; }
lib=$(find "$PWD/build-gpu" -name 'libfa_runtime.so' | head -1)
status=0
# The vLLM-like mixed batch (bench/mixed.py; its kernels: mixed.py
# --compile CACHE), one mixed launch against separate ones.
FA_RUNTIME_LIBRARY="$lib" FA_CACHE_DIR="$cache" PYTHONUNBUFFERED=1 \
  PYTHONPATH=python python3 bench/mixed.py "$results/mixed" 2>&1 \
  | tee "$results/mixed.log"
[ "${PIPESTATUS[0]}" = 0 ] || status=1
if [ "${FA_ONLY_MIXED:-0}" != 1 ]; then
  FA_RUNTIME_LIBRARY="$lib" FA_CACHE_DIR="$cache" PYTHONUNBUFFERED=1 \
    python3 bench/python_api.py "$results" 2>&1 | tee "$results/python_api.log"
  [ "${PIPESTATUS[0]}" = 0 ] || status=1
fi
exit $status
