#!/bin/sh
# dpp_kernel.sh LLVM_BIN KERNEL_CL WORK FA_SIM_DPP_KERNEL
# Builds dpp_kernel.cl for gfx906 with LLVM's clang (OpenCL C, no device
# libraries) and ld.lld, and runs fa-sim-dpp-kernel on it.
set -eu
bin=$1 cl=$2 work=$3 run=$4
mkdir -p "$work"
"$bin/clang" -cl-std=CL2.0 -target amdgcn-amd-amdhsa -mcpu=gfx906 -O2 \
  -nogpulib -c "$cl" -o "$work/dpp_kernel.o"
"$bin/ld.lld" -shared "$work/dpp_kernel.o" -o "$work/dpp_kernel.hsaco"
exec "$run" "$work/dpp_kernel.hsaco"
