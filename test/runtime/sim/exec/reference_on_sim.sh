#!/bin/sh
# reference_on_sim.sh LLVM_BIN DEVICE_LIBS DEVICE_REFERENCE_CPP WORK
#                     FA_SIM_REFERENCE DTYPE D
# Builds the fp64 device reference kernel for gfx906 (clang HIP device-only
# to bitcode with the device libraries, llc, lld: the recipe of
# decode/oracle_test.py) and runs fa-sim-reference on it.
set -eu
bin=$1 libs=$2 cpp=$3 work=$4 run=$5 dtype=$6 d=$7
mkdir -p "$work"
src=$work/reference.hip
name=$work/reference_t${dtype}_d${d}
{
  echo 'struct FaIdx { unsigned x, y, z; };'
  echo '#define blockIdx (FaIdx{__builtin_amdgcn_workgroup_id_x(), __builtin_amdgcn_workgroup_id_y(), __builtin_amdgcn_workgroup_id_z()})'
  echo '#define threadIdx (FaIdx{__builtin_amdgcn_workitem_id_x(), __builtin_amdgcn_workitem_id_y(), __builtin_amdgcn_workitem_id_z()})'
  echo '#define blockDim (FaIdx{(unsigned)__builtin_amdgcn_workgroup_size_x(), (unsigned)__builtin_amdgcn_workgroup_size_y(), (unsigned)__builtin_amdgcn_workgroup_size_z()})'
  sed -n '/R"FA_SRC(/,/)FA_SRC"/p' "$cpp" | sed '1s/.*R"FA_SRC(//' | sed '$d'
} > "$src"
"$bin/clang++" -x hip --offload-arch=gfx906 --offload-device-only -nogpuinc \
  -mcode-object-version=5 --rocm-device-lib-path="$libs" \
  -include __clang_hip_runtime_wrapper.h -O3 -DFA_DTYPE="$dtype" \
  -DFA_D="$d" -DFA_NAIVE=0 -emit-llvm -c "$src" -o "$name.bc"
"$bin/llc" -O3 -mtriple=amdgcn-amd-amdhsa -mcpu=gfx906 -filetype=obj \
  "$name.bc" -o "$name.o"
"$bin/lld" -flavor gnu -m elf64_amdgpu --no-undefined -shared "$name.o" \
  -o "$name.hsaco"
exec "$run" "$name.hsaco" "$dtype" "$d"
