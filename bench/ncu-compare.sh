#!/usr/bin/env bash
# Where two builds of one kernel differ on the GPU (ncu, same shape): the
# warp stall reasons, issued instructions and occupancy of each.
# usage: bench/ncu-compare.sh RESULTS_DIR KERNEL SHAPE name=DIR ...
#   e.g. bench/ncu-compare.sh $OUT/ncu attn_d64_full 1,16,16,4096,4096 \
#        double=build-sm90/bench single=build-sm90-s1/bench
set -uo pipefail
results=$1 kernel=$2 shape=$3
shift 3
mkdir -p "$results"
if [ ! -x build-gpu/tools/fa-run/fa-run ] && ! find build-gpu -name fa-run -type f -perm -u+x 2>/dev/null | grep -q .; then
  cmake -S runtime -B build-gpu -G Ninja -DCMAKE_BUILD_TYPE=Release > "$results/cmake.log" 2>&1
  ninja -C build-gpu fa-run >> "$results/cmake.log" 2>&1 || { tail -30 "$results/cmake.log"; exit 1; }
fi
farun=$(find build-gpu -name fa-run -type f -perm -u+x | head -1)
for spec in "$@"; do
  name=${spec%%=*} dir=${spec#*=}
  ncu --section SpeedOfLight --section Occupancy --section WarpStateStats \
    --section InstructionStats --section SchedulerStats --section LaunchStats \
    -k attention_kernel -c 1 "$farun" "$dir/$kernel.cubin" --shape "$shape" \
    --device cuda --reference cpu > "$results/$name.txt" 2>&1
  echo "== $name"
  grep -E "Duration|Executed Instructions  |Issue Slots Busy|Registers Per|Achieved Occupancy|Warp Cycles Per Issued|Stall|No Eligible|Issued Warp" "$results/$name.txt" | head -24
done
