#!/usr/bin/env bash
# Installs the Debian 12 packages fa needs, skipping those already present
# (with --bench, also the benchmark's chart library).
# Idempotent: a second run installs nothing. No other downloads.
set -euo pipefail

packages=(
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools clang-22 lld-22
  libclang-rt-22-dev
  libamdhip64-dev rocm-device-libs
  cmake ninja-build g++ make libgtest-dev nlohmann-json3-dev python3
  python3-torch python3-numpy
)
# `install-deps.sh --bench`: also what `make bench-gfx906` draws its chart
# with (the CSV and the summary need nothing more).
if [ "${1:-}" = "--bench" ]; then
  packages+=(python3-matplotlib)
fi

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
