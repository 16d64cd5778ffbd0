#!/usr/bin/env python3
"""The section entries of ctest run exactly the suite's cases: the cases of
e2e_matrix.py's SECTIONS, each section listed on its own (as its ctest
entry runs it), concatenated, equal the whole suite's list (all_cases,
as the single entry ran it before the split), case for case and in order,
and no two cases share a label.
Kernels come from the shared work folder (the e2e-<device>-kernels
fixture), so listing compiles nothing new.

usage: sections_cover.py FAC FA_RUN GOLDEN_DIR WORK_DIR [--target T]
                         [--device D]
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_matrix  # noqa: E402


def main():
    fac, _, golden, work = sys.argv[1:5]
    target = sys.argv[sys.argv.index("--target") + 1] \
        if "--target" in sys.argv else "host"
    e2e_matrix.prepare_shared_work(fac, work)

    def label(c):
        return f"{c.section}: {c.label}"
    whole = [label(c) for c in e2e_matrix.all_cases(
        e2e_matrix.Kernels(fac, work, target=target), golden, large=False)]
    split = []
    for name in e2e_matrix.SECTIONS:
        kernels = e2e_matrix.Kernels(fac, work, target=target)
        cases = [label(c) for c in
                 e2e_matrix.section_cases(kernels, golden, name)]
        print(f"  {name}: {len(cases)} cases")
        split += cases
    missing = [c for c in whole if c not in split]
    extra = [c for c in split if c not in whole]
    print(f"sections cover the suite ({target}): {len(whole)} cases whole, "
          f"{len(split)} in the sections; {len(missing)} missing, "
          f"{len(extra)} extra")
    for c in missing[:10]:
        print(f"  missing {c}")
    for c in extra[:10]:
        print(f"  extra {c}")
    # Every case has its own label: a failure names one case, and the
    # mutation test's hints (mutants.py --hints) find the case they name.
    seen, twice = set(), []
    for c in whole:
        if c in seen:
            twice.append(c)
        seen.add(c)
    for c in twice[:10]:
        print(f"  label used twice: {c}")
    return 0 if whole == split and not twice else 1


if __name__ == "__main__":
    sys.exit(main())
