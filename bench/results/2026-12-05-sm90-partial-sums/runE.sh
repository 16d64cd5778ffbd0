#!/usr/bin/env bash
# H200/H100, session 16, call E: HEAD's sm_90 kernels with l summed every
# block again (TargetDesc::partialRowSums off for sm_90): e2e on cuda (the
# plan in 4 parallel parts), sanitizer on two changed kernels, prefill and
# decode against 804d41b's (part) and a918ecb's (old) in the same run.
set -uo pipefail
cd "$(dirname "$0")/.."
o=${OUT:-/tmp/out}; k=build-h40/new2; S=$SECONDS
export FA_COMMIT=$(cat $k/COMMIT)
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee $o/gpu.txt
farun=$(find build-gpu -name fa-run -type f -perm -u+x 2>/dev/null | head -1)
if [ -z "$farun" ]; then
  cmake -S runtime -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_NLOHMANN_INCLUDE_DIR=$PWD/build-deps/include > $o/cmake.log 2>&1
  ninja -C build-gpu fa-run >> $o/cmake.log 2>&1 || { tail $o/cmake.log; exit 1; }
  farun=$(find build-gpu -name fa-run -type f -perm -u+x | head -1)
fi
echo "built at $((SECONDS-S)) s"
for i in 0 1 2 3; do
  timeout 240 python3 test/e2e/e2e_matrix.py --run-plan $k/e2e/plan$i.json $farun --device cuda > $o/e2e-cuda-$i.log 2>&1 &
done
wait
echo "e2e at $((SECONDS-S)) s"; tail -qn1 $o/e2e-cuda-?.log; grep -h -A2 FAIL $o/e2e-cuda-?.log | head
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
: > $o/sanitizer.log
for run in "attn_d64_full --shape 1,2,2,200,333" "attn_d128_causal --shape 1,2,2,200,333" "decode_d128 --shape 2,8,2,1,3000 --kv-splits 5"; do
  set -- $run; kk=$1; shift
  for tool in racecheck synccheck memcheck; do
    echo "### $tool $kk" >> $o/sanitizer.log
    timeout 60 $san --tool $tool --error-exitcode 9 $farun $k/bench/$kk.cubin --device cuda "$@" >> $o/sanitizer.log 2>&1
    echo "### exit $?" >> $o/sanitizer.log
  done
done
echo "sanitizer at $((SECONDS-S)) s"; grep -c "### exit 0" $o/sanitizer.log; grep "### exit [1-9]" $o/sanitizer.log
timeout 150 python3 bench/bench.py $k/bench $o/prefill --variants part=build-h40/new/bench old=build-h40/old/bench > $o/prefill.log 2>&1
echo "bench exit $? at $((SECONDS-S)) s"; grep -E " (fa|part|old) " $o/prefill.log
timeout 150 python3 bench/decode.py $k/bench $o/decode --batches 1,8,32 --lengths 1024,8192,32768 \
  --skip paged,nosplit,sweep,torch --budget 120 \
  --variants part=build-h40/new/bench/decode_d128.cubin old=build-h40/old/bench/decode_d128.cubin > $o/decode.log 2>&1
echo "decode.py exit $? at $((SECONDS-S)) s"
sed -n '/## B = 1/,$p' $o/decode/decode.md 2>/dev/null | grep -E "^## |fa_splitkv_packed |fa_part|fa_old"
rm -f $o/prefill/bench.png
