#!/bin/sh
# expect.sh STATUS PATTERN COMMAND...
# Runs COMMAND; passes if it exits with STATUS and its combined output
# matches the extended regular expression PATTERN.
want_status=$1
pattern=$2
shift 2
output=$("$@" 2>&1)
status=$?
if [ "$status" -ne "$want_status" ]; then
  printf '%s\n' "$output"
  echo "expect.sh: exit status $status, expected $want_status"
  exit 1
fi
if ! printf '%s\n' "$output" | grep -Eq -- "$pattern"; then
  printf '%s\n' "$output"
  echo "expect.sh: output does not match '$pattern'"
  exit 1
fi
exit 0
