#!/bin/sh
# replay-loader.sh FUZZ_LOADER FAC FUZZ_DIR WORK
# Replays fuzz-loader's corpus and regressions plus a seed fac makes now, so
# the replay follows the current ABI even where the committed seeds are
# older.
set -eu
loader=$1 fac=$2 dir=$3 work=$4
mkdir -p "$work/fresh"
sh "$dir/make-loader-seed.sh" "$fac" "$dir/../examples/attention.mlir" \
  "$work/fresh/attention"
exec "$loader" -runs=0 "$work/fresh" "$dir/corpus/fuzz-loader" \
  "$dir/regressions/fuzz-loader"
