#!/usr/bin/env bash
# H200, session 16, call D: where sm_90 prefill lost (runB: D=64 full -5%,
# D=128 causal -2.6% against a918ecb). Variants: nopart (HEAD without the
# partial row sums: 128 registers, 2 blocks/SM at D=64 full), prepart
# (e890532's compiler), r128 (HEAD's D=64 full PTX with .maxnreg 128), old
# (a918ecb). bench.py twice, for the run-to-run spread.
set -uo pipefail
cd "$(dirname "$0")/.."
o=${OUT:-/tmp/out}; k=build-h40/new; S=$SECONDS
export FA_COMMIT=$(cat build-h40/COMMIT)
V="nopart=build-h40/nopart/bench prepart=build-h40/prepart/bench r128=build-h40/r128/bench old=build-h40/old/bench"
for i in 1 2; do
  timeout 250 python3 bench/bench.py $k/bench $o/prefill$i --variants $V > $o/prefill$i.log 2>&1
  echo "bench $i exit $? at $((SECONDS-S)) s"
  grep -E " (fa|nopart|prepart|r128|old) " $o/prefill$i.log
done
rm -f $o/prefill*/bench.png
