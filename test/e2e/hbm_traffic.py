#!/usr/bin/env python3
"""HBM traffic by count (the seed's section 4.2): S and P never leave the chip.

Compiles the default f16 kernels for gfx906 (D 64 and 128, causal off and
on; split-KV builds, run at one split, where the split kernel writes O
itself), runs each on the gfx906 simulator with --profile-json and compares the
global bytes its machine code actually read and wrote with

  fa's own traffic, counted from the tiling: Q once, K and V once per
  (Q block, query head) for the K/V blocks the block visits (all of them
  without a causal mask), O (and LSE) once;
  unfused attention's: Q, K, V read, S = QK^T written in f32 and read back
  by the softmax, P written in f16 and read back by P.V, O written:
  B*Hq*Lq*Lk*(4 + 4 + 2 + 2) bytes more than fa's minimum.

Non-causal kernels must read and write exactly fa's count; causal ones at
most that (blocks past the diagonal are skipped). Every kernel must move
less than the unfused S and P traffic alone: the proof that no S- or
P-sized tensor goes through global memory.

usage: hbm_traffic.py FAC FA_RUN WORK_DIR [--markdown FILE] [--shared]

--shared: WORK_DIR is the e2e suite's shared kernel folder (the
e2e-gfx906-sim-kernels fixture), whose default kernels are these: they are
compiled once per make test, not again here.
"""
import json
import math
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_matrix  # noqa: E402

SHAPES = [(1, 8, 2, 1024, 1024), (2, 4, 4, 700, 1300)]


def main():
    fac, fa_run, work = sys.argv[1:4]
    markdown = sys.argv[sys.argv.index("--markdown") + 1] \
        if "--markdown" in sys.argv else None
    if "--shared" in sys.argv:
        e2e_matrix.prepare_shared_work(fac, work)
    else:
        # Kernels compiled by another fac must not be reused (emptied then).
        e2e_matrix.prepare_shared_work(fac, work)
    kernels = e2e_matrix.Kernels(fac, work, target="gfx906")
    rows, failures = [], 0
    for d in (64, 128):
        for causal in (False, True):
            path, meta = kernels.get("f16", d, causal)
            if path is None:
                print(f"hbm: FAIL f16 D={d}: {meta}")
                failures += 1
                continue
            bm, bn = meta["block_m"], meta["block_n"]
            for b, hq, hkv, lq, lk in SHAPES:
                shape = f"{b},{hq},{hkv},{lq},{lk}"
                prof = os.path.join(work, f"d{d}_{causal}_{lq}_{lk}.json")
                # One K/V split: the default kernels are split-KV builds,
                # and a split's workspace round trip is not this count's.
                p = subprocess.run([fa_run, path, "--device", "gfx906-sim",
                                    "--shape", shape, "--kv-splits", "1",
                                    "--profile-json", prof],
                                   capture_output=True, text=True)
                if p.returncode != 0:
                    print(f"hbm: FAIL D={d} causal={causal} {shape}: "
                          f"{(p.stderr or p.stdout).strip()[-500:]}")
                    failures += 1
                    continue
                with open(prof) as f:
                    profile = json.load(f)
                read = profile["global_bytes_read"]
                written = profile["global_bytes_written"]
                e = 2  # f16
                q_bytes = b * hq * lq * d * e
                kv_head = lk * d * e  # one K (or V) head
                qblocks = math.ceil(lq / bm)
                fa_read = q_bytes + b * hq * qblocks * 2 * kv_head
                fa_written = q_bytes + (b * hq * lq * 4 if meta["has_lse"]
                                        else 0)
                sp = b * hq * lq * lk * (4 + 4 + 2 + 2)
                unfused = q_bytes + 2 * b * hkv * kv_head + sp + q_bytes
                ok_read = read == fa_read if not causal else read <= fa_read
                ok = ok_read and written == fa_written and \
                    read + written < sp
                failures += not ok
                rows.append((d, causal, shape, read, written, fa_read,
                             fa_written, unfused, ok))
                print(f"hbm: {'PASS' if ok else 'FAIL'} f16 D={d} "
                      f"causal={int(causal)} {shape}: read {read} "
                      f"(fa's count {fa_read}), written {written} "
                      f"(O+LSE {fa_written}); unfused moves {unfused} "
                      f"({unfused / (read + written):.1f}x)")
    if markdown:
        with open(markdown, "w") as f:
            f.write("| kernel | shape | read | written | fa's count "
                    "(read / written) | unfused | unfused / fa |\n"
                    "|---|---|---|---|---|---|---|\n")
            for d, causal, shape, r, w, fr, fw, u, ok in rows:
                f.write(f"| f16 D={d}{' causal' if causal else ''} | "
                        f"{shape} | {r} | {w} | {fr} / {fw} | {u} | "
                        f"{u / (r + w):.1f} |\n")
    print(f"hbm: {len(rows)} runs, {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
