#!/bin/sh
# layering_test.sh RUNTIME_DIR
# Checks the layers of runtime/lib (runtime/CMakeLists.txt): every folder
# includes only the layers below it.
#   core      nothing of host/, gpu/, validate/
#   host      core only
#   gpu       core only
#   sim       core, and of gpu only its pure helpers gpu/AmdgpuMetadata.h and
#             gpu/Vendor.h (the metadata checks and the kernarg packing the
#             HIP backend uses)
#   top       (lib/*.cpp) core, host, gpu, sim; not validate/
#   validate  fa::runtime's public headers, its own folder, and of core only
#             the header-only core/Files.h, core/JsonParse.h and
#             core/DynamicLibrary.h
# and the public headers: none includes lib/, and no header of fa::runtime
# includes one of fa::validate.
set -eu
rt=$1
lib=$rt/lib
inc=$rt/include/fa
failed=0

# forbid WHAT FOLDERS ALLOWED FILES...: fails on each #include of a header
# in one of FOLDERS (an alternation, "host|gpu") unless it matches the
# extended regex ALLOWED.
forbid() {
  what=$1 folders=$2 allowed=$3
  shift 3
  hits=$(grep -EHn "^[[:space:]]*#[[:space:]]*include[[:space:]]*\"($folders)/" \
    "$@" 2>/dev/null | grep -Ev "$allowed" || true)
  if [ -n "$hits" ]; then
    echo "layering: $what:"
    echo "$hits"
    failed=1
  fi
}

none='^$'
forbid "core reaches up" "host|gpu|sim|validate" "$none" "$lib"/core/*
forbid "host reaches beyond core" "gpu|sim|validate" "$none" "$lib"/host/*
forbid "gpu reaches beyond core" "host|sim|validate" "$none" "$lib"/gpu/*.h \
  "$lib"/gpu/*.cpp
forbid "sim reaches beyond core and gpu's pure helpers" "host|gpu|validate" \
  '"gpu/(AmdgpuMetadata|Vendor)\.h"' "$lib"/sim/*.h "$lib"/sim/*.cpp
forbid "the top reaches into validate" "validate" "$none" "$lib"/*.cpp
forbid "validate reaches into fa::runtime's internals" "core|host|gpu|sim" \
  '"core/(Files|JsonParse|DynamicLibrary)\.h"' "$lib"/validate/*
forbid "a public header includes lib/" "core|host|gpu|sim|validate" "$none" \
  "$inc"/*
for h in "$inc"/*; do
  case $(basename "$h") in
  Reference.h | Inputs.h | Metrics.h | Golden.h | Validate.h | DeviceReference.h | PagedVarlen.h | Trace.h) ;;
  *)
    hits=$(grep -EHn '#[[:space:]]*include[[:space:]]*"fa/(Reference|Inputs|Metrics|Golden|Validate|DeviceReference|PagedVarlen|Trace)\.h"' "$h" || true)
    if [ -n "$hits" ]; then
      echo "layering: a header of fa::runtime includes one of fa::validate:"
      echo "$hits"
      failed=1
    fi
    ;;
  esac
done

[ "$failed" = 0 ] && echo "layering: ok"
exit "$failed"
