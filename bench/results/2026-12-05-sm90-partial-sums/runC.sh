#!/usr/bin/env bash
# H200, session 16, call C: the e2e cases runA's 270 s left (553 of 808
# passed), then decode.py with fa's rows (runB's --skip dense left them out).
set -uo pipefail
cd "$(dirname "$0")/.."
o=${OUT:-/tmp/out}; k=build-h40/new; S=$SECONDS
export FA_COMMIT=$(cat build-h40/COMMIT)
farun=$(find build-gpu -name fa-run -type f -perm -u+x 2>/dev/null | head -1)
if [ -z "$farun" ]; then
  cmake -S runtime -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_NLOHMANN_INCLUDE_DIR=$PWD/build-deps/include > $o/cmake.log 2>&1
  ninja -C build-gpu fa-run >> $o/cmake.log 2>&1 || { tail $o/cmake.log; exit 1; }
  farun=$(find build-gpu -name fa-run -type f -perm -u+x | head -1)
fi
echo "built at $((SECONDS-S)) s"
timeout 220 python3 test/e2e/e2e_matrix.py --run-plan $k/e2e/plan-rest.json $farun --device cuda > $o/e2e-cuda-rest.log 2>&1
echo "e2e exit $? at $((SECONDS-S)) s"; tail -1 $o/e2e-cuda-rest.log; grep -A2 FAIL $o/e2e-cuda-rest.log | head
timeout 250 python3 bench/decode.py $k/bench $o/decode --batches 1,8,32 --lengths 1024,8192,32768 \
  --skip paged,nosplit,sweep --budget 180 \
  --variants old=build-h40/old/bench/decode_d128.cubin > $o/decode.log 2>&1; echo "decode.py exit $? at $((SECONDS-S)) s"
sed -n '/## B = 1/,$p' $o/decode/decode.md 2>/dev/null | head -40
