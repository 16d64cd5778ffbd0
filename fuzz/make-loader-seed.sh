#!/bin/sh
# make-loader-seed.sh FAC INPUT.mlir OUT_SEED [FAC OPTIONS...]
# A fuzz-loader input: the host code object fac compiles from INPUT.mlir,
# as `<manifest JSON> NUL <code object>`.
set -eu
fac=$1 input=$2 out=$3
shift 3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$fac" "$input" --target=host -o "$work/k.so" "$@"
{ cat "$work/k.so.json"; printf '\000'; cat "$work/k.so"; } >"$out"
