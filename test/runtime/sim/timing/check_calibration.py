#!/usr/bin/env python3
"""The committed calibration of timing model v2 still describes the model.

bench/gfx906_llama.py calibrate estimates llama.cpp's FA kernels at
consecutive PRs (the ggml checkouts live outside this repository, so the
estimates are committed: bench/results/2026-12-05-gfx906-l1/
calibration.json, llama.cpp's kernels built by clang 19) and docs/gfx906-timing.md reports their errors against the
real MI50 llama-bench results. This check fails when
  - v2's parameters (fa-sim-timing-tests --describe-model 2) are not those
    the committed calibration ran with: the model drifted, re-run the
    calibration and update the doc;
  - a pair's committed error does not follow from the committed seconds and
    the published t/s (the table was edited by hand);
  - a pair's committed noise (two standard deviations of its measured
    delta) does not follow from the published t/s: each run's relative
    noise is the RMS, over sqrt(2), of the relative differences between the
    builds two PR pages both measured (same version, model and ubatch);
  - a pair's outcome against the +-25% target, or against +-25% plus that
    noise, differs from EXPECTED below (what the doc states): a target
    newly met or newly missed.

usage: check_calibration.py FA_SIM_TIMING_TESTS CALIBRATION_JSON
"""
import json
import math
import subprocess
import sys

TOLERANCE = 0.25
# (model, before, after, ubatch) -> whether v2's delta meets the +-25%
# target, and the target widened by two standard deviations of the measured
# delta (docs/gfx906-timing.md; llama.cpp's kernels by Debian's clang-19).
EXPECTED = {
    ("gemma 2B", "2fe19a69", "f6ffbc04", 16): (True, True),
    ("gemma 2B", "2fe19a69", "f6ffbc04", 32): (True, True),
    ("gemma 2B", "2fe19a69", "f6ffbc04", 512): (True, True),
    ("llama 1B", "2fe19a69", "f6ffbc04", 16): (False, False),
    ("llama 1B", "2fe19a69", "f6ffbc04", 32): (True, True),
    ("llama 1B", "2fe19a69", "f6ffbc04", 512): (True, True),
    ("gemma 2B", "f6ffbc04", "b6b3db51", 16): (True, True),
    ("gemma 2B", "f6ffbc04", "b6b3db51", 32): (False, False),
    ("gemma 2B", "f6ffbc04", "b6b3db51", 512): (True, True),
    ("llama 1B", "f6ffbc04", "b6b3db51", 16): (True, True),
    ("llama 1B", "f6ffbc04", "b6b3db51", 32): (False, False),
    ("gemma 2B", "b6b3db51", "5437f5bc", 16): (False, False),
    ("gemma 2B", "b6b3db51", "5437f5bc", 32): (False, False),
    ("gemma 2B", "b6b3db51", "5437f5bc", 64): (False, True),
    ("gemma 2B", "b6b3db51", "5437f5bc", 128): (False, False),
    ("gemma 2B", "b6b3db51", "5437f5bc", 256): (False, False),
    ("gemma 2B", "b6b3db51", "5437f5bc", 512): (False, False),
    ("gemma 2B", "b6b3db51", "5437f5bc", 1024): (True, True),
    ("gemma 2B", "b6b3db51", "5437f5bc", 2048): (True, True),
    ("gemma 2B", "fcc2a5c0", "0b56d427", 16): (False, True),
    ("gemma 2B", "fcc2a5c0", "0b56d427", 32): (True, True),
    ("gemma 2B", "fcc2a5c0", "0b56d427", 64): (False, True),
    ("gemma 2B", "fcc2a5c0", "0b56d427", 128): (False, False),
    ("gemma 2B", "fcc2a5c0", "0b56d427", 256): (False, True),
    ("gemma 2B", "fcc2a5c0", "0b56d427", 512): (True, True),
}


def run_noise(pairs):
    """Relative noise of one run's time, from the builds measured twice."""
    seen = {}
    for p in pairs:
        for v, tps in ((p["before"], p["tps_before"]),
                       (p["after"], p["tps_after"])):
            seen.setdefault((p["net"], v, p["ubatch"]), {})[p["source"]] = tps
    rel = []
    for d in seen.values():
        if len(d) > 1:
            t = list(d.values())
            rel.append((max(t) - min(t)) / (sum(t) / len(t)))
    return math.sqrt(sum(r * r for r in rel) / len(rel) / 2)


def main():
    binary, path = sys.argv[1], sys.argv[2]
    with open(path) as f:
        cal = json.load(f)
    now = subprocess.run([binary, "--describe-model", "2"], check=True,
                         capture_output=True, text=True).stdout.strip()
    v2 = cal["models"].index("version=2")
    committed = cal["model_params"][v2]
    fails = []
    sigma = run_noise(cal["pairs"])
    if abs(sigma - cal["repeat_sigma"]) > 1e-12:
        fails.append("run noise %.6f, committed %.6f" %
                     (sigma, cal["repeat_sigma"]))
    if committed != now:
        fails.append("v2's parameters changed since the committed "
                     "calibration:\n  committed %s\n  now       %s\n"
                     "re-run bench/gfx906_llama.py calibrate" %
                     (committed, now))
    for p in cal["pairs"]:
        key = (p["net"], p["before"], p["after"], p["ubatch"])
        tokens = p["tokens"]
        meas = tokens / p["tps_before"] - tokens / p["tps_after"]
        if abs(meas - p["measured_delta_s"]) > 1e-9:
            fails.append("%s: measured delta %.6f, committed %.6f" %
                         (key, meas, p["measured_delta_s"]))
        m = p["models"][v2]
        err = (m["fa_s"][0] - m["fa_s"][1]) / meas - 1
        if abs(err - m["error"]) > 1e-9:
            fails.append("%s: error %.6f, committed %.6f" %
                         (key, err, m["error"]))
        t0, t1 = tokens / p["tps_before"], tokens / p["tps_after"]
        noise = 2 * sigma * math.sqrt(t0 * t0 + t1 * t1)
        if abs(noise - p["noise_2sigma_s"]) > 1e-9:
            fails.append("%s: noise %.6f s, committed %.6f" %
                         (key, noise, p["noise_2sigma_s"]))
        met = (abs(err) <= TOLERANCE,
               abs(m["fa_s"][0] - m["fa_s"][1] - meas) <=
               TOLERANCE * abs(meas) + noise)
        if key not in EXPECTED:
            fails.append("%s: not in EXPECTED" % (key,))
        elif met != EXPECTED[key]:
            fails.append("%s: v2's error %+.0f%% (noise %.3f s): target "
                         "met %s, with noise %s; EXPECTED and "
                         "docs/gfx906-timing.md say %s" %
                         (key, 100 * err, noise, met[0], met[1],
                          EXPECTED[key]))
        print("%s, %s -> %s, ubatch %d%s: measured %.3f s (2 sigma %.3f), "
              "v2 %.3f s (%+.0f%%)" % (
            key[0], key[1], key[2], key[3],
            " (fit)" if p["fit"] else " (held out)",
            meas, noise, m["delta_s"], 100 * err))
    if len(cal["pairs"]) != len(EXPECTED):
        fails.append("%d pairs committed, %d expected" %
                     (len(cal["pairs"]), len(EXPECTED)))
    for f in fails:
        print("FAIL:", f)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
