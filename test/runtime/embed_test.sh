#!/bin/sh
# embed_test.sh BUILD_DIR WORK_DIR EMBED_SOURCE CODE_OBJECT [CMAKE [MORE...]]
# Installs the fa_runtime component of BUILD_DIR into WORK_DIR/prefix, then
#   1. configures and builds EMBED_SOURCE (examples/embed) against it with
#      find_package(fa CONFIG), runs it on CODE_OBJECT, and checks that it
#      links fa::runtime alone (no DT_NEEDED on libfa_validate), and runs
#      it on each further code object MORE (a split-KV kernel: the
#      caller's workspace);
#   2. builds a one-line consumer of fa::validate from the same package and
#      runs it (the exported target and the installed RPATHs);
#   3. runs the installed fa-run (INSTALL_RPATH $ORIGIN/../lib) on
#      CODE_OBJECT.
set -eu
build=$1
work=$2
source=$3
code_object=$4
cmake=${5:-cmake}
if [ $# -ge 5 ]; then shift 5; else shift $#; fi

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
for more in "$@"; do
  "$work/build/embed" "$more"
done

needed=$(readelf -d "$work/build/embed" | grep NEEDED)
case $needed in
*libfa_runtime.so*) ;;
*)
  echo "embed_test: embed has no DT_NEEDED on libfa_runtime.so:"
  echo "$needed"
  exit 1
  ;;
esac
case $needed in
*libfa_validate*)
  echo "embed_test: embed links libfa_validate, but uses fa::runtime alone:"
  echo "$needed"
  exit 1
  ;;
esac

mkdir -p "$work/validate-consumer"
cat > "$work/validate-consumer/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.20)
project(fa_validate_consumer LANGUAGES CXX)
find_package(fa CONFIG REQUIRED)
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE fa::validate)
CMAKE
cat > "$work/validate-consumer/main.cpp" <<'CPP'
#include "fa/Validate.h"
int main() {
  fa::AttentionProblem p{{1, 1, 1, 8, 8}, 64, false, 0.125};
  return fa::checkShape(p).ok() && fa::parseReferenceKind("cpu") ? 0 : 1;
}
CPP
# shellcheck disable=SC2086
"$cmake" -S "$work/validate-consumer" -B "$work/validate-consumer/build" \
  $generator -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_BUILD_TYPE=Release
"$cmake" --build "$work/validate-consumer/build"
"$work/validate-consumer/build/consumer"

"$work/prefix/bin/fa-run" "$code_object" --shape 1,1,1,16,16 --device host \
  | grep "result    PASS"
echo "embed_test: ok"
