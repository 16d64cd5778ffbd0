#!/usr/bin/env bash
# H200, session 15, call A: correctness of HEAD's sm_90 kernels (c262326's
# softmax scale in P's exponent, e890532's combine vector loads): e2e on
# cuda, runtime tests on the GPU, compute-sanitizer on the changed kernels.
set -uo pipefail
cd "$(dirname "$0")/.."
o=${OUT:-/tmp/out}; k=build-h40/new; S=$SECONDS
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $o/gpu.txt
cmake -S runtime -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_NLOHMANN_INCLUDE_DIR=$PWD/build-deps/include > $o/cmake.log 2>&1
ninja -C build-gpu fa-run >> $o/cmake.log 2>&1 || { tail $o/cmake.log; exit 1; }
farun=$(find build-gpu -name fa-run -type f -perm -u+x | head -1)
echo "built at $((SECONDS-S)) s"
timeout 270 python3 test/e2e/e2e_matrix.py --run-plan $k/e2e/plan.json $farun --device cuda > $o/e2e-cuda.log 2>&1
echo "e2e exit $? at $((SECONDS-S)) s"; tail -1 $o/e2e-cuda.log; grep -A2 FAIL $o/e2e-cuda.log | head
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
: > $o/sanitizer.log
sz() { local kk=$1; shift; for run in "$@"; do for tool in racecheck synccheck memcheck; do
  echo "### $tool $kk $run" >> $o/sanitizer.log
  timeout 60 $san --tool $tool --error-exitcode 9 $farun $k/bench/$kk.cubin --device cuda $run >> $o/sanitizer.log 2>&1
  echo "### exit $?" >> $o/sanitizer.log; done; done; }
for kk in attn_d64_full attn_d64_causal attn_d128_full attn_d128_causal; do sz $kk "--shape 1,2,2,200,333"; done
sz decode_d128 "--shape 2,8,2,1,3000" "--shape 2,8,2,1,3000 --kv-splits 5" "--shape 2,8,2,1,3000 --kv-splits 128"
echo "sanitizer at $((SECONDS-S)) s"; grep -E "^### |(ERROR|RACECHECK) SUMMARY" $o/sanitizer.log | paste - - - | awk '{print $2,$3,$NF, $0 ~ /0 errors|0 hazards/ ? "ok" : "CHECK"}' | sort | uniq -c
ninja -C build-gpu > $o/build-tests.log 2>&1 && (cd build-gpu && timeout 120 ctest -j8 --output-on-failure) > $o/runtime-tests-gpu.log 2>&1
grep -E "tests passed|Skipped|Failed" $o/runtime-tests-gpu.log | head; echo "done at $((SECONDS-S)) s"
