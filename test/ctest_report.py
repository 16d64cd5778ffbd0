#!/usr/bin/env python3
"""Runs ctest (the arguments after CTEST are passed on), then prints the ten
slowest tests with their share of their timeout, whether or not ctest
passed, and exits with ctest's status (issue 29: a suite that creeps
toward its timeouts is seen before it fails on a busy machine).

usage: ctest_report.py CTEST BUILD_DIR [ctest arguments...]
"""
import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

DEFAULT_TIMEOUT = 1500.0  # ctest's default (DART_TESTING_TIMEOUT)


def main():
    ctest, build = sys.argv[1:3]
    junit = os.path.join(build, "Testing", "ctest-results.xml")
    rc = subprocess.run([ctest] + sys.argv[3:] + ["--output-junit", junit],
                        cwd=build).returncode
    try:
        shown = subprocess.run([ctest, "--show-only=json-v1"], cwd=build,
                               capture_output=True, text=True, check=True)
        timeouts = {}
        for t in json.loads(shown.stdout)["tests"]:
            timeout = DEFAULT_TIMEOUT
            for p in t.get("properties", []):
                if p["name"] == "TIMEOUT":
                    timeout = float(p["value"])
            timeouts[t["name"]] = timeout
        times = [(float(c.get("time", 0)), c.get("name"), c.get("status"))
                 for c in ET.parse(junit).getroot().iter("testcase")]
    except (OSError, subprocess.CalledProcessError, ET.ParseError,
            ValueError, KeyError) as e:
        print(f"ctest_report: no timing report ({e})")
        return rc
    times.sort(reverse=True)
    print("\nThe ten slowest tests (seconds, share of their timeout):")
    for seconds, name, status in times[:10]:
        timeout = timeouts.get(name, DEFAULT_TIMEOUT)
        print(f"  {seconds:8.1f} s  {100 * seconds / timeout:5.1f}% of "
              f"{timeout:.0f} s  {name}"
              + ("" if status in (None, "run") else f"  ({status})"))
    print(f"  total of all tests: {sum(t[0] for t in times):.0f} s")
    return rc


if __name__ == "__main__":
    sys.exit(main())
