#!/usr/bin/env bash
# Runs on a machine with an NVIDIA GPU (CUDA driver, compute-sanitizer; no
# LLVM): a plan of some e2e sections, compiled here for sm_90 with
#   python3 test/e2e/e2e_matrix.py build/bin/fac - test/data/golden \
#     OUT/k --target sm_90 --write-plan OUT/plan.json --sections S[,S...]
# (e.g. the new features' sections, window,alibi-sinks), then
#   1. the plan's cases on the GPU (fa-run --device cuda) against the fp64
#      CPU reference (e2e-cuda.log);
#   2. compute-sanitizer racecheck, synccheck and memcheck of each kernel
#      of the plan on its first case (sanitizer.log; a split-KV kernel
#      launches its combine kernel too).
# The runtime needs nlohmann-json's headers: carry build-deps (see
# bench/gpu.sh). Exit status 1 when a case fails or a tool reports errors.
# usage: bench/gpu-sections.sh PLAN_DIR RESULTS_DIR
set -uo pipefail
plan=$1/plan.json results=$2
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
status=0
echo "== e2e on cuda"
python3 test/e2e/e2e_matrix.py --run-plan "$plan" "$farun" --device cuda \
  > "$results/e2e-cuda.log" 2>&1 || status=1
tail -1 "$results/e2e-cuda.log"; grep -A2 FAIL "$results/e2e-cuda.log" | head -20
echo "== compute-sanitizer"
san=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
: > "$results/sanitizer.log"
# Each kernel's first case: "KERNEL<TAB>ARGS" (arguments without the seed's
# randomness changing anything the tools look at).
python3 - "$plan" > "$results/sanitize-cases.txt" <<'PY'
import json, os, sys
plan = sys.argv[1]
base = os.path.dirname(os.path.abspath(plan))
seen = set()
for c in json.load(open(plan))["cases"]:
    if c["kernel"] and c["kernel"] not in seen:
        seen.add(c["kernel"])
        print(os.path.join(base, c["kernel"]) + "\t" + " ".join(c["args"]))
PY
while IFS=$'\t' read -r kernel args; do
  for tool in racecheck synccheck memcheck; do
    echo "### $tool $(basename "$kernel") $args" >> "$results/sanitizer.log"
    # shellcheck disable=SC2086
    "$san" --tool "$tool" --error-exitcode 9 "$farun" "$kernel" --device cuda \
      $args >> "$results/sanitizer.log" 2>&1
    rc=$?
    echo "### exit $rc" >> "$results/sanitizer.log"
    [ "$rc" = 0 ] || status=1
  done
done < "$results/sanitize-cases.txt"
echo "sanitizer: $(grep -c '^### exit 0' "$results/sanitizer.log") clean runs of" \
  "$(grep -c '^### exit' "$results/sanitizer.log"); errors:"
grep "ERROR SUMMARY" "$results/sanitizer.log" | sort | uniq -c
exit $status
