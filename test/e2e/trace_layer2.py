#!/usr/bin/env python3
"""Validation layer 2: per-block statistics localise planted bugs.

    trace_layer2.py FAC FA_RUN WORK [--target host|gfx906]
                    [--device host|gfx906-sim]

Compiles examples/attention.mlir (f16, causal, GQA 8/2, D=64) with
`fac --trace` and BLOCK_M = BLOCK_N = 64, clean and with two planted
online-softmax bugs, and runs `fa-run --trace-row` on B=1 Hq=8 Hkv=2
L=300 (docs/validation.md, "Layer 2: per-block statistics"):

- the clean kernel: every K/V block's m, l and o match (exit 0);
- rescale-after (O rescaled after P.V is added): the first block that
  parts is block 0, on o only (m and l are right): alpha_0 = exp2(-inf -
  m_0) = 0 multiplies block 0's P.V away, where the right order multiplies
  the empty accumulator;
- l-no-rescale (l not rescaled when the max grows): the first block that
  parts is the first block after block 0 in which the reference's running
  max rises (the table's ^), on l; before it alpha = 1 and the bug changes
  nothing. Row 230 of head 3: block 2. Row 150 of head 3, whose max never
  rises after block 0, matches in every block.

Exit 0 when every expectation holds; each failure is printed.
"""

import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE = os.path.join(HERE, "..", "..", "examples", "attention.mlir")
SHAPE = "1,8,2,300,300"

BLOCK = re.compile(r"^\s+(\d+) \[(\d+),(\d+)\)\s+(\d+)\s+(.*)$")
FIRST = re.compile(r"first block that parts: (\d+) \(keys \[\d+,\d+\)\): (.*)$")


def option(args, name, default):
    if name in args:
        i = args.index(name)
        value = args[i + 1]
        del args[i : i + 2]
        return value
    return default


def parse(text):
    """The table's blocks (index, seen keys, max rises, visited, status) and
    the first block that parts with its quantities, or None."""
    blocks = []
    first = None
    for line in text.splitlines():
        m = BLOCK.match(line)
        if m:
            rest = m.group(5)
            visited = "not visited" not in rest
            blocks.append(
                {
                    "block": int(m.group(1)),
                    "seen": int(m.group(4)),
                    "rises": visited and rest.split()[1] == "^",
                    "visited": visited,
                    "ok": (not visited) or rest.rstrip().endswith(" ok"),
                }
            )
        f = FIRST.search(line)
        if f:
            first = (int(f.group(1)), [q.strip() for q in f.group(2).split(",")])
    return blocks, first


def main(argv):
    args = list(argv[1:])
    target = option(args, "--target", "host")
    device = option(args, "--device", "host")
    if len(args) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    fac, fa_run, work = args
    os.makedirs(work, exist_ok=True)
    ext = "so" if target == "host" else "hsaco"
    failures = []

    def compile_kernel(bug):
        out = os.path.join(work, "attn_%s.%s" % (bug or "clean", ext))
        cmd = [fac, SOURCE, "--target=" + target, "--trace", "--block-m=64",
               "--block-n=64", "-o", out]
        if bug:
            cmd.append("--test-plant-bug=" + bug)
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            failures.append("fac %s failed:\n%s" % (bug or "clean", p.stderr))
            return None
        return out

    def trace(kernel, row):
        p = subprocess.run(
            [fa_run, kernel, "--shape", SHAPE, "--device", device,
             "--trace-row", row],
            capture_output=True, text=True)
        blocks, first = parse(p.stdout)
        return p.returncode, p.stdout + p.stderr, blocks, first

    def expect(ok, what, output):
        if not ok:
            failures.append(what + "\n" + output)

    clean = compile_kernel(None)
    if clean:
        for row in ("0,3,230", "0,0,0", "0,7,299"):
            rc, out, blocks, first = trace(clean, row)
            expect(rc == 0 and first is None and "every block matches" in out
                   and blocks and all(b["ok"] for b in blocks),
                   "clean kernel, row %s: expected every block to match" % row,
                   out)

    bug = compile_kernel("rescale-after")
    if bug:
        rc, out, blocks, first = trace(bug, "0,3,230")
        expect(rc == 1 and first is not None and first[0] == 0 and
               first[1] == ["o"],
               "rescale-after, row 0,3,230: expected block 0 to part on o "
               "alone", out)

    bug = compile_kernel("l-no-rescale")
    if bug:
        rc, out, blocks, first = trace(bug, "0,3,230")
        rises = [b["block"] for b in blocks if b["rises"]]
        expect(rc == 1 and first is not None and rises and
               first[0] == rises[0] == 2 and "l" in first[1] and
               "m" not in first[1],
               "l-no-rescale, row 0,3,230: expected the first block whose "
               "reference max rises (2) to part on l", out)
        rc, out, blocks, first = trace(bug, "0,3,150")
        expect(first is None and "every block matches" in out and
               not any(b["rises"] for b in blocks),
               "l-no-rescale, row 0,3,150 (max never rises after block 0): "
               "expected every block to match", out)

    for f in failures:
        print("FAIL: " + f)
    if not failures:
        print("trace_layer2 (%s on %s): clean kernel matches in every "
              "block; rescale-after parts at block 0 (o), l-no-rescale at "
              "block 2 (l), where the max first rises" % (target, device))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
