#!/bin/sh
# embed_test.sh BUILD_DIR WORK_DIR EMBED_SOURCE CODE_OBJECT [CMAKE]
# Installs the fa_runtime component of BUILD_DIR into WORK_DIR/prefix,
# configures and builds EMBED_SOURCE (examples/embed) against it with
# find_package(fa CONFIG), and runs it on CODE_OBJECT.
set -eu
build=$1
work=$2
source=$3
code_object=$4
cmake=${5:-cmake}

rm -rf "$work"
mkdir -p "$work"
"$cmake" --install "$build" --prefix "$work/prefix" --component fa_runtime
generator=
if command -v ninja >/dev/null 2>&1; then
  generator="-G Ninja"
fi
# shellcheck disable=SC2086
"$cmake" -S "$source" -B "$work/build" $generator \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release
"$cmake" --build "$work/build"
"$work/build/embed" "$code_object"
