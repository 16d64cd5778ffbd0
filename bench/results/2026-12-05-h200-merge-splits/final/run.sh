#!/usr/bin/env bash
# H200, session 12, third call: the final sm_90 build (fa-merge-guards and
# fa.merge_splits on, the combine's shared memory from offset 0): the e2e
# cases whose kernels changed, compute-sanitizer, decode.py base vs final.
set -uo pipefail
cd "$(dirname "$0")/.."
o=${OUT:-/tmp/out}
if ! find build-gpu -name fa-run -type f 2>/dev/null | grep -q .; then
  cmake -S runtime -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_NLOHMANN_INCLUDE_DIR=$PWD/build-deps/include > $o/cmake.log 2>&1
  ninja -C build-gpu fa-run >> $o/cmake.log 2>&1 || { tail $o/cmake.log; exit 1; }
fi
farun=$(find build-gpu -name fa-run -type f -perm -u+x | head -1)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $o/gpu.txt
timeout 200 python3 test/e2e/e2e_matrix.py --run-plan build-h39/final/e2e/plan-changed.json $farun --device cuda > $o/e2e-cuda-changed.log 2>&1
echo "e2e exit $?"; tail -1 $o/e2e-cuda-changed.log; grep -A2 FAIL $o/e2e-cuda-changed.log | head
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
: > $o/sanitizer.log
run() { # KERNEL ARGS...
  local k=$1; shift
  for tool in racecheck synccheck memcheck; do
    echo "### $tool $k $*" >> $o/sanitizer.log
    timeout 60 $san --tool $tool --error-exitcode 3 $farun $k --device cuda --reference cpu "$@" >> $o/sanitizer.log 2>&1
    echo "### exit $?" >> $o/sanitizer.log
  done
}
b=build-h39/final/bench
run $b/decode_d128.cubin --shape 1,32,8,1,8192
run $b/decode_d128.cubin --shape 1,32,8,1,4096 --kv-splits 22
run $b/decode_d128.cubin --shape 2,8,2,1,3000 --kv-splits 128
run $b/decode_d128_nopack.cubin --shape 1,8,2,1,5000 --kv-splits 64
run $b/paged_d128.cubin --shape 2,8,2,1,3000 --paged 16
grep -c "### exit 0" $o/sanitizer.log; grep "ERROR SUMMARY\|RACECHECK SUMMARY\|### exit [^0]" $o/sanitizer.log | sort | uniq -c
for i in 1 2; do
  python3 bench/decode.py build-h39/final/bench $o/decode$i --batches 1,8,32 --lengths 1024,8192,32768,131072 \
    --skip paged,nosplit,sweep,torch --budget 150 \
    --variants base=build-h39/base/decode_d128.cubin \
    > $o/decode$i.log 2>&1; echo "decode.py $i exit $?"
done
grep -h "^| fa_splitkv_packed \|^| fa_base" $o/decode*/decode.md
