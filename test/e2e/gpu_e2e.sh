#!/bin/sh
# The e2e suite on an NVIDIA GPU (ctest label `gpu`, `make test-gpu`):
# compiles every kernel for sm_90 with fac, then runs the cases with
# fa-run --device cuda (large shapes against the on-device fp64 reference).
# Exits 77 (ctest: skipped) where there is no NVIDIA GPU, saying so.
# usage: gpu_e2e.sh FAC FA_RUN GOLDEN_DIR WORK_DIR
fac=$1 farun=$2 golden=$3 work=$4
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "e2e-gpu-cuda: skipped: no NVIDIA GPU here (nvidia-smi -L fails);" \
       "on a GPU machine without LLVM use bench/build-kernels.sh + bench/gpu.sh"
  exit 77
fi
here=$(dirname "$0")
python3 "$here/e2e_matrix.py" "$fac" - "$golden" "$work/k" --target sm_90 \
  --write-plan "$work/plan.json" || exit 1
exec python3 "$here/e2e_matrix.py" --run-plan "$work/plan.json" "$farun" --device cuda
