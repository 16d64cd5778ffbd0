#!/usr/bin/env python3
"""Mutation test: the e2e suite must fail on every planted bug.

For each bug that fac can plant (`fac --test-list-planted-bugs`,
compiler/Testing/PlantedBugs.h), compiles the suite's kernels with
`--test-plant-bug=<bug>` and runs the e2e cases of e2e_matrix.py in order
until one fails; prints the case that caught the bug. A bug that survives the
whole suite fails this test: the suite cannot see it.

usage: mutants.py FAC FA_RUN GOLDEN_DIR WORK_DIR [--count [--floor N,S]]
                  [--markdown FILE] [--target gfx906 --device gfx906-sim]
                  [--skip BUG[,BUG...]] [--shard I/N] [--clean-work DIR]
                  [BUG...]

--count runs every case for every bug and prints how many cases catch each
(slow: the whole suite per bug; for measuring the suite, not for make test).
With --floor N,S it fails unless every bug is caught by at least N cases in
at least S sections; --markdown writes the counts as a table
(docs/validation.md). --target/--device compile for another target and run
on another device (gfx906 on the gfx906 simulator: the planted bugs must be
caught in the machine code an MI50 would run too). --skip leaves out bugs
that are none on that target (say why where it is used). --shard I/N
takes every N-th listed bug from the I-th (ctest runs the shards at once).

--hints FILE (with --clean-work): the case that caught each bug last time,
per device (JSON: {device: {bug: "section: label"}}), runs first, alone;
if it passes (the hint is stale) the suite runs in order as without it.
A hint changes which case runs first, never what counts as caught, and
saves compiling and running every case before it. --write-hints FILE
records the cases that caught the bugs of this run into FILE (merged
with what is there).
"""
import json
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_matrix  # noqa: E402


def option(args, name):
    """The value after `name` in `args` (removing both), or None."""
    if name not in args:
        return None
    i = args.index(name)
    value = args[i + 1]
    del args[i:i + 2]
    return value


def main():
    fac, fa_run, golden, work = sys.argv[1:5]
    bugs = sys.argv[5:]
    floor = option(bugs, "--floor")
    markdown = option(bugs, "--markdown")
    floor = tuple(int(x) for x in floor.split(",")) if floor else None
    skip = (option(bugs, "--skip") or "").split(",")
    # --shard I/N: every N-th bug from the I-th (1-based), so that ctest
    # runs N entries at once, each with its own timeout.
    shard = option(bugs, "--shard")
    # --clean-work DIR: the clean suite's shared kernel folder (the
    # e2e-<device>-kernels fixture); a case whose kernel the bug left byte
    # for byte unchanged is not run again (it passed there).
    clean_work = option(bugs, "--clean-work")
    hints_path = option(bugs, "--hints")
    write_hints = option(bugs, "--write-hints")
    if clean_work:
        e2e_matrix.prepare_shared_work(fac, clean_work)
    target = option(bugs, "--target") or "host"
    device = option(bugs, "--device") or "host"
    count = "--count" in bugs
    bugs = [b for b in bugs if b != "--count"]
    rows = []
    if not bugs:
        p = subprocess.run([fac, "--test-list-planted-bugs"],
                           capture_output=True, text=True, check=True)
        bugs = [b for b in p.stdout.split() if b not in skip]
        if shard:
            index, total = (int(x) for x in shard.split("/"))
            bugs = bugs[index - 1::total]
    if not bugs:
        print("mutants: fac lists no planted bugs")
        return 1
    hints = {}
    if hints_path:
        if not clean_work:
            print("mutants: --hints needs --clean-work (the clean kernels)")
            return 2
        with open(hints_path) as f:
            hints = json.load(f).get(device, {})
    found = {}
    shutil.rmtree(work, ignore_errors=True)
    survivors = []
    for bug in bugs:
        bug_work = os.path.join(work, bug)
        os.makedirs(bug_work)
        if count:
            kernels = e2e_matrix.Kernels(fac, bug_work, bug, target=target)
            cases = list(e2e_matrix.all_cases(kernels, golden, large=False))
            sections = {}
            for case in cases:
                ok, _ = e2e_matrix.run_case(fa_run, case, device)
                hit = sections.setdefault(case.section, [0, 0])
                hit[0] += not ok
                hit[1] += 1
            total = sum(h[0] for h in sections.values())
            hit = [s for s, h in sections.items() if h[0]]
            print(f"  {bug}: caught by {total} of {len(cases)} cases in "
                  f"{len(hit)} sections (" +
                  ", ".join(f"{s} {h[0]}/{h[1]}" for s, h in sections.items())
                  + ")", flush=True)
            rows.append((bug, total, len(cases), sections))
            if total == 0 or (floor and (total < floor[0] or
                                         len(hit) < floor[1])):
                survivors.append(bug)
            continue
        caught = None
        if bug in hints:
            caught = e2e_matrix.hinted_failure(
                fac, fa_run, golden, bug_work, bug, target, device,
                clean_work, hints[bug])
            if caught is None:
                print(f"  stale hint for {bug} ({hints[bug]}): running the "
                      f"suite in order (update with --write-hints)")
        if caught is None:
            caught = e2e_matrix.first_failure(fac, fa_run, golden, bug_work,
                                              bug, target, device, clean_work)
        if caught is not None:
            found[bug] = caught[0]
        if caught is None:
            survivors.append(bug)
            print(f"  SURVIVED {bug}: every e2e case passed")
        else:
            label, detail = caught
            first_line = detail.splitlines()[0] if detail else ""
            print(f"  CAUGHT {bug} by {label}\n    {first_line[:300]}")
    if markdown and rows:
        with open(markdown, "w") as f:
            f.write("| planted bug | cases that catch it | sections |\n"
                    "|---|---|---|\n")
            for bug, total, n, sections in rows:
                hit = ", ".join(f"{s} {h[0]}/{h[1]}"
                                for s, h in sections.items() if h[0])
                f.write(f"| `{bug}` | {total} of {n} | {hit} |\n")
    if write_hints:
        try:
            with open(write_hints) as f:
                table = json.load(f)
        except OSError:
            table = {}
        table.setdefault(device, {}).update(found)
        table[device] = dict(sorted(table[device].items()))
        with open(write_hints, "w") as f:
            json.dump(dict(sorted(table.items())), f, indent=1)
            f.write("\n")
    what = "planted bugs caught" + (
        f" by at least {floor[0]} cases in {floor[1]} sections" if floor
        else "")
    print(f"mutants: {len(bugs) - len(survivors)} of {len(bugs)} {what}"
          + (f"; below: {', '.join(survivors)}" if survivors else ""))
    return 1 if survivors else 0


if __name__ == "__main__":
    sys.exit(main())
