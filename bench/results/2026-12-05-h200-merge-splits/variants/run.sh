#!/usr/bin/env bash
# H200, session 12, second call: compute-sanitizer on fa.merge_splits'
# combine kernels (sm_90), then decode.py three times (base, guards, merge).
set -uo pipefail
cd "$(dirname "$0")/.."
o=${OUT:-/tmp/out}
if [ ! -x build-gpu/fa-run ] && ! find build-gpu -name fa-run -type f 2>/dev/null | grep -q .; then
  cmake -S runtime -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release -DFA_NLOHMANN_INCLUDE_DIR=$PWD/build-deps/include > $o/cmake.log 2>&1
  ninja -C build-gpu fa-run >> $o/cmake.log 2>&1 || { tail $o/cmake.log; exit 1; }
fi
farun=$(find build-gpu -name fa-run -type f -perm -u+x | head -1)
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
run build-h39/gsplit/decode_d128.cubin --shape 1,32,8,1,8192
run build-h39/gsplit/decode_d128.cubin --shape 1,32,8,1,4096 --kv-splits 22
run build-h39/hm/k/attn_f16_d128_full_splitkv_gqapack.cubin --shape 1,8,2,1,17000
run build-h39/hm/k/attn_f16_d128_full_splitkv_gqapack.cubin --shape 1,4,4,4,1000 --kv-splits 64
grep -c "### exit 0" $o/sanitizer.log; grep "ERROR SUMMARY\|RACECHECK SUMMARY\|### exit [^0]" $o/sanitizer.log | sort | uniq -c
for i in 1 2 3; do
  python3 bench/decode.py build-h39/base $o/decode$i --batches 1,8,32 --lengths 1024,8192,32768 \
    --skip paged,nosplit,sweep,torch --budget 100 \
    --variants guards=build-h39/guards/decode_d128.cubin merge=build-h39/gsplit/decode_d128.cubin \
    > $o/decode$i.log 2>&1; echo "decode.py $i exit $?"
done
grep -h "^| fa_" $o/decode*/decode.md
