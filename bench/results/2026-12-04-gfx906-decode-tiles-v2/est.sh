#!/bin/bash
# est.sh HSACO SHAPE [samples] -> total us
out=$(/work/main/build/bin/fa-run "$1" --device gfx906-sim --shape "$2" --estimate-only --estimate-samples ${3:-6} 2>&1)
t=$(echo "$out" | grep -E "^total of" | sed -E 's/.*launches: ([0-9.]+) us.*/\1/')
[ -z "$t" ] && t=$(echo "$out" | grep -E "^  time" | head -1 | sed -E 's/.*time ([0-9.]+) us.*/\1/')
[ -z "$t" ] && t=$(echo "$out" | grep -E "time" | head -1)
echo "$t"
