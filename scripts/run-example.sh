#!/usr/bin/env bash
# `make run`: the main job on the example, end to end.
#   1. fa-opt parses, verifies and prints examples/attention.mlir;
#   2. fa-fuse turns the unfused example into one fa.attention;
#   3. fac compiles it for gfx906 (tile config, LDS budget, .hsaco and the
#      backend's resource report) and for the host emulation target (shared
#      object + manifest);
#   4. fa-run runs it on the best available device (the host emulator where
#      no GPU is present) with the LDS race checker, and validates it;
#   5. fa-run runs the gfx906 code object itself: on an AMD GPU where there
#      is one, otherwise on the gfx906 simulator (the AMDGPU backend's
#      machine code executed instruction by instruction), and validates it.
set -euo pipefail
build=${1:-build}
out="$build/example"
mkdir -p "$out"

echo "== fa-opt examples/attention.mlir (parse, verify, print)"
"$build/bin/fa-opt" examples/attention.mlir

echo
echo "== fa-opt examples/attention_unfused.mlir --fa-fuse"
"$build/bin/fa-opt" examples/attention_unfused.mlir --fa-fuse

echo
echo "== fac --target=gfx906 --report -o $out/attention.gfx906.hsaco"
echo "   (tile config, LDS budget, the AMDGPU backend's resource figures;"
echo "    gpu-dialect kernel: $out/attention.gfx906.mlir)"
"$build/bin/fac" examples/attention.mlir --target=gfx906 --emit=mlir \
  -o "$out/attention.gfx906.mlir"
"$build/bin/fac" examples/attention.mlir --target=gfx906 --report \
  -o "$out/attention.gfx906.hsaco" 2>&1 |
  sed -e 's/^[^ ]*: remark: /  /' -e '/^    %/d' -e '/^ *\^$/d'

echo
echo "== fac --target=host -o $out/attention.host.so"
"$build/bin/fac" examples/attention.mlir --target=host -o "$out/attention.host.so"
echo "   wrote $out/attention.host.so and its manifest $out/attention.host.so.json"

echo
echo "== fa-run (device auto; the host emulator when no GPU is present)"
"$build/bin/fa-run" "$out/attention.host.so" --shape 2,8,2,300,300 \
  --dist normal --seed 1 --device auto --check-races

echo
echo "== fa-run $out/attention.gfx906.hsaco (device auto: an AMD GPU, else the gfx906 simulator)"
"$build/bin/fa-run" "$out/attention.gfx906.hsaco" --shape 2,8,2,300,300 \
  --dist normal --seed 1 --device auto --check-races
