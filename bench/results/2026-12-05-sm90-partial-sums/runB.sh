#!/usr/bin/env bash
# H200, session 15, call B: speed of HEAD's sm_90 kernels against a918ecb's
# (build-h40/old): prefill (bench.py, old as a variant), decode (decode.py,
# old as a variant), varlen.
set -uo pipefail
cd "$(dirname "$0")/.."
o=${OUT:-/tmp/out}; k=build-h40/new; S=$SECONDS
export FA_COMMIT=$(cat build-h40/COMMIT)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $o/gpu.txt
cmake -S runtime -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_NLOHMANN_INCLUDE_DIR=$PWD/build-deps/include > $o/cmake.log 2>&1
ninja -C build-gpu fa-run >> $o/cmake.log 2>&1 || { tail $o/cmake.log; exit 1; }
echo "built at $((SECONDS-S)) s"
timeout 200 python3 bench/bench.py $k/bench $o/prefill --variants old=build-h40/old/bench > $o/prefill.log 2>&1
echo "bench exit $? at $((SECONDS-S)) s"; tail -25 $o/prefill.log
timeout 230 python3 bench/decode.py $k/bench $o/decode --batches 1,8,32 --lengths 1024,8192,32768 \
  --skip dense,paged,nosplit,sweep,torch --budget 150 \
  --variants old=build-h40/old/bench/decode_d128.cubin > $o/decode.log 2>&1; echo "decode.py exit $? at $((SECONDS-S)) s"
tail -30 $o/decode/decode.md 2>/dev/null
timeout 120 python3 bench/varlen.py $k/bench $o/varlen --budget 90 > $o/varlen.log 2>&1; echo "varlen exit $? at $((SECONDS-S)) s"
tail -15 $o/varlen.log
