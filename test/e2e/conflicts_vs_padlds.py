#!/usr/bin/env python3
"""The static report and the profile agree on LDS bank conflicts (issue 20,
second bullet).

Compiles the default f16 kernels for gfx906 (D 64 and 128, causal off and
on) with --share-rows=off (fa-pad-lds models the product reads of the
plain loop, where every lane reads its lhs rows; share-rows' sixteenth-
per-lane lhs reads and lane-rotated rhs reads are not modelled: their
degrees are in the profile and the benchmark, not predicted), with
fa-pad-lds's padding and without (--pad-lds=false: the pass then
only predicts the unpadded layout's degrees), reads `fac --report`'s "LDS
layout" (each fa.lds_buffer's offset as the AMDGPU backend placed it, its
row pitch, and every access fa-pad-lds models: read or write, bytes per
lane, the lane pattern lane -> (row, column), the predicted degree), runs
each kernel on the gfx906 simulator with --profile-json and takes the
profile's `ds` list (per DS instruction: the LDS bytes it touched, its
lanes' address pattern, the histogram of its measured conflict degrees).

Every DS instruction with a bank access is assigned to the buffer whose
slot holds the bytes it touched and to the access of that buffer whose
lane pattern, laid out in the buffer's padded rows, is its lanes' address
pattern (K and V share a slot: the pattern tells them apart). Then:

- the pass's degree, re-derived here from its lane pattern with
  docs/bank-conflicts.md's model, must be the one it reported;
- where the instruction moves what the pass models (one contiguous access
  of the same bytes per lane), the measured maximum degree must EQUAL the
  predicted one;
- where the backend emitted another shape (merged a lane's consecutive
  accesses into one wider instruction, two accesses into one ds_read2, or
  split a 16-byte store of rows that are not 16-byte aligned), the two
  cannot be compared: the pass models the access, not the instruction;
  the test says so;
- for every instruction, the bank model applied to the pass's lane
  pattern with the emitted shape must give the measured degree;
- an instruction no modelled access explains fails.

Shapes: full blocks only (non-causal Lq = 2 BLOCK_M, Lk = 4 BLOCK_N;
causal Lq = Lk = 4 max(BLOCK_M, BLOCK_N)): every execution has all lanes
active, as the pass assumes.

usage: conflicts_vs_padlds.py FAC FA_RUN WORK_DIR [--markdown FILE]
"""
import json
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import e2e_matrix  # noqa: E402

BANKS, BANK_BYTES, LANES = 32, 4, 64

BUFFER = re.compile(
    r"^ *LDS buffer (\w+): slot (\w+), offset (-?\d+), (\d+) bytes \(slot "
    r"(\d+)\), (\d+)x(\d+) of (\d+) B, row pitch (\d+) B \(pad (\d+)\)"
    r"(, pair-interleaved)?$")
ACCESS = re.compile(
    r"^ *(read|write) (\d+) B per lane, lane l = \(i, j\) = \(l/(\d+), "
    r"l%\d+\) at row (\d+)i\+(\d+)j, col (\d+)i\+(\d+)j: degree (\d+) -> "
    r"(\d+) \((.*)\)$")


def phase_lanes(bytes_per_lane):
    return 32 if bytes_per_lane <= 4 else 16 if bytes_per_lane <= 8 else 8


def degree(lane_dwords, bytes_per_lane):
    """docs/bank-conflicts.md: per phase, the most distinct dwords one bank
    serves; lane_dwords[l] is the set of dwords lane l touches (None:
    inactive)."""
    phase, worst = phase_lanes(bytes_per_lane), 0
    for first in range(0, len(lane_dwords), phase):
        banks = {}
        for dwords in lane_dwords[first:first + phase]:
            for d in dwords or ():
                banks.setdefault(d % BANKS, set()).add(d)
        worst = max([worst] + [len(s) for s in banks.values()])
    return worst


def parse_layout(report):
    """The report's LDS buffers, each with its modelled accesses."""
    buffers, by = [], None
    for line in report.splitlines():
        if "LDS layout of" in line:
            by = re.search(r"offsets placed by ([^;]*);", line).group(1)
        m = BUFFER.match(line)
        if m:
            (name, slot, offset, size, slot_bytes, rows, cols, eb, pitch,
             pad, pairs) = m.groups()
            buffers.append(dict(
                name=name, slot=slot, offset=int(offset), bytes=int(size),
                slot_bytes=int(slot_bytes), rows=int(rows), cols=int(cols),
                eb=int(eb), pitch=int(pitch), pad=int(pad),
                pairs=bool(pairs), accesses=[]))
            continue
        m = ACCESS.match(line)
        if m and buffers:
            kind, nbytes, q, ri, rj, ci, cj, unpadded, deg, what = m.groups()
            buffers[-1]["accesses"].append(dict(
                kind=kind, bytes=int(nbytes), q=int(q), ri=int(ri),
                rj=int(rj), ci=int(ci), cj=int(cj), unpadded=int(unpadded),
                degree=int(deg), what=what))
    return buffers, by


def element_offset(b, r, c):
    """Byte offset of logical element (r, c) in buffer b (dialect/FaOps.td's
    layouts: row-major with a row pitch, or two rows interleaved)."""
    stride = b["cols"] + b["pad"]
    if b["pairs"]:
        return ((r // 2) * 2 * stride + 2 * c + r % 2) * b["eb"]
    return (r * stride + c) * b["eb"]


def lane_offsets(b, a):
    """Each lane's byte offset in b under access a's lane pattern."""
    out = []
    for lane in range(LANES):
        i, j = lane // a["q"], lane % a["q"]
        out.append(element_offset(b, a["ri"] * i + a["rj"] * j,
                                  a["ci"] * i + a["cj"] * j))
    return out


def pass_degree(b, a):
    """The pass's degree re-derived from its pattern (BankConflicts.cpp:
    `bytes` per lane from the lane's address, one dword per 4 bytes)."""
    lanes = [{(o + k) // BANK_BYTES for k in range(0, a["bytes"], BANK_BYTES)}
             for o in lane_offsets(b, a)]
    return degree(lanes, a["bytes"])


def emitted_degree(b, a, ins, base):
    """The bank model on the pass's lane pattern with the instruction's
    shape: its elements (offsets, bytes) from each lane's address, every
    dword each touches (as the simulator counts)."""
    eb = ins["element_bytes"]
    lanes = []
    for o in lane_offsets(b, a):
        dwords = set()
        for off in ins["element_offsets"]:
            first = base + o + off
            dwords.update(range(first // BANK_BYTES,
                                (first + eb - 1) // BANK_BYTES + 1))
        lanes.append(dwords)
    return degree(lanes, eb * len(ins["element_offsets"]))


def matches(ins, b, a):
    """Whether the instruction's lanes' address pattern is access a's."""
    lanes = ins["lanes"]
    if lanes is None:
        return False
    want = lane_offsets(b, a)
    active = [lane for lane, d in enumerate(lanes) if d is not None]
    if not active:
        return False
    first = active[0]
    return all(lanes[lane] == want[lane] - want[first] for lane in active)


def shape_of(ins):
    """(bytes per lane, contiguous, text) of the instruction's elements."""
    eb, offs = ins["element_bytes"], ins["element_offsets"]
    contiguous = len(offs) == 1 or offs[1] == offs[0] + eb
    total = eb * len(offs)
    if len(offs) == 1:
        text = f"{eb} B"
    elif contiguous:
        text = f"2 x {eb} B"
    else:
        text = f"2 x {eb} B, {offs[1] - offs[0]} B apart"
    return total, contiguous, text


def compile_kernel(fac, work, d, causal, pad):
    name = f"attn_f16_d{d}_{'causal' if causal else 'full'}" + \
        ("" if pad else "_nopad")
    src = os.path.join(work, name + ".mlir")
    out = os.path.join(work, name + ".hsaco")
    with open(src, "w") as f:
        f.write(e2e_matrix.kernel_source("f16", d, causal))
    cmd = [fac, src, "--target=gfx906", "--report", "--share-rows=off",
           "-o", out]
    if not pad:
        cmd.append("--pad-lds=false")
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"fac {src}: {p.stderr.strip()[-500:]}")
    with open(out + ".json") as f:
        meta = json.load(f)["kernels"][0]
    return out, meta, p.stdout


def run_profile(fa_run, hsaco, shape, out):
    # One K/V split (gfx906's default kernels are split-KV builds): one
    # launch, the attention kernel's profile.
    p = subprocess.run([fa_run, hsaco, "--device", "gfx906-sim", "--shape",
                        shape, "--kv-splits", "1", "--profile-json", out],
                       capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError((p.stderr or p.stdout).strip()[-500:])
    with open(out) as f:
        return json.load(f)


def hist(h):
    return " ".join(f"{k}:{v}" for k, v in
                    sorted(h.items(), key=lambda kv: int(kv[0])))


def check_kernel(label, buffers, prof, fail, notes):
    """Rows of the table for one kernel; fail() for each unexplained
    mismatch."""
    rows = {}
    for b in buffers:
        if b["offset"] < 0:
            fail(f"{label}: buffer {b['name']}: no LDS offset in the report")
        for a in b["accesses"]:
            got = pass_degree(b, a)
            if got != a["degree"]:
                fail(f"{label}: {b['name']} {a['kind']} ({a['what']}): the "
                     f"pass reports degree {a['degree']}, its lane pattern "
                     f"gives {got} in the bank model")
    for ins in prof["ds"]:
        mn = ins["mnemonic"]
        kind = "read" if mn.startswith("ds_read") else \
            "write" if mn.startswith("ds_write") else "other"
        lo, hi = ins["lds_lowest"], ins["lds_highest"]
        where = f"{label}: pc {ins['pc']:#x} {mn} [{lo}, {hi}]"
        inside = [b for b in buffers
                  if b["offset"] <= lo and hi < b["offset"] + b["slot_bytes"]]
        if not inside:
            fail(f"{where}: in no LDS buffer's slot")
            continue
        if ins["lanes"] is None:
            fail(f"{where}: its lanes' address pattern changes between "
                 "executions; no modelled access to compare with")
            continue
        cands = [(b, a) for b in inside for a in b["accesses"]
                 if a["kind"] == kind and matches(ins, b, a)]
        if not cands:
            fail(f"{where}: no {kind} fa-pad-lds models in "
                 f"{'/'.join(b['name'] for b in inside)} has its lane "
                 f"pattern {ins['lanes'][:16]}...")
            continue
        if len({a["degree"] for _, a in cands}) > 1:
            fail(f"{where}: matches accesses with different predictions: " +
                 ", ".join(f"{b['name']} {a['what']}" for b, a in cands))
            continue
        b, a = cands[0]
        measured = ins["max_degree"]
        total, contiguous, text = shape_of(ins)
        same = contiguous and total == a["bytes"]
        # The lowest lane's byte address modulo 4 (the degree is the same
        # for any 4-byte-aligned shift).
        base = (lo - min(d for d in ins["lanes"] if d is not None) -
                min(ins["element_offsets"])) % BANK_BYTES
        emitted = emitted_degree(b, a, ins, base)
        if emitted != measured:
            fail(f"{where}: {b['name']} {a['kind']} ({a['what']}): the bank "
                 f"model on its lane pattern as {text} per lane gives "
                 f"{emitted}, the simulator measured {measured}")
            continue
        if measured == a["degree"]:
            verdict = "equal"
        elif same:
            verdict = "MISMATCH"
            fail(f"{where}: {b['name']} {a['kind']} ({a['what']}): "
                 f"predicted {a['degree']}, measured {measured} "
                 f"({hist(ins['degrees'])}), same shape ({text})")
        else:
            gap = ins["element_offsets"][-1] - ins["element_offsets"][0]
            if not contiguous:
                verdict = f"two accesses in one: {emitted}"
                why = (f"the backend put two of the pass's {a['bytes']} B "
                       f"accesses of a lane, {gap} B apart, into one {mn} "
                       f"({text} per lane, phases of {phase_lanes(total)} "
                       f"lanes, not {phase_lanes(a['bytes'])})")
            elif total > a["bytes"]:
                verdict = f"merged: {emitted}"
                why = (f"the backend merged {total // a['bytes']} consecutive "
                       f"{a['bytes']} B accesses of a lane into one {mn} "
                       f"({total} B per lane, phases of {phase_lanes(total)} "
                       f"lanes, not {phase_lanes(a['bytes'])})")
            else:
                verdict = f"split: {emitted}"
                aligned = b["pitch"] % a["bytes"] == 0
                why = (f"the backend split the {a['bytes']} B access into "
                       f"{mn} ({text} per lane, phases of "
                       f"{phase_lanes(total)} lanes, not "
                       f"{phase_lanes(a['bytes'])})" +
                       ("" if aligned else
                        f": rows of {b['pitch']} B are not "
                        f"{a['bytes']}-byte aligned"))
            notes.setdefault(
                f"{b['name']} {a['kind']} ({a['what']}) as {mn}: {why}; "
                f"predicted {a['degree']}, measured {measured}, the bank "
                f"model on the pass's lane pattern with that shape gives "
                f"{emitted}", set()).add(label)
        key = (b["name"], a["kind"], a["what"], mn, text)
        r = rows.setdefault(key, dict(pcs=0, executed=0, hist={},
                                      predicted=a["degree"],
                                      unpadded=a["unpadded"],
                                      verdicts=set()))
        r["pcs"] += 1
        r["executed"] += ins["executed"]
        for k, v in ins["degrees"].items():
            r["hist"][k] = r["hist"].get(k, 0) + v
        r["verdicts"].add(verdict)
    for b in buffers:
        for a in b["accesses"]:
            if not any(k[:3] == (b["name"], a["kind"], a["what"])
                       for k in rows):
                notes.setdefault(
                    f"{b['name']} {a['kind']} ({a['what']}): no executed "
                    "instruction has its lane pattern", set()).add(label)
    return rows


def main():
    fac, fa_run, work = sys.argv[1:4]
    markdown = sys.argv[sys.argv.index("--markdown") + 1] \
        if "--markdown" in sys.argv else None
    os.makedirs(work, exist_ok=True)
    failures = 0
    table = ["| kernel | padding | shape B,Hq,Hkv,Lq,Lk | buffer (offset, "
             "row pitch) | access (fa-pad-lds) | instructions | predicted | "
             "measured degree:executions | verdict |",
             "|---" * 9 + "|"]
    notes = {}  # reason -> kernels

    def fail(msg):
        nonlocal failures
        print("conflicts-vs-pad-lds: FAIL " + msg)
        failures += 1

    for d in (64, 128):
        for causal in (False, True):
            for pad in (True, False):
                label = (f"f16 D={d} {'causal' if causal else 'non-causal'}"
                         f"{'' if pad else ' unpadded'}")
                try:
                    path, meta, report = compile_kernel(fac, work, d, causal,
                                                        pad)
                except RuntimeError as e:
                    fail(f"{label}: {e}")
                    continue
                buffers, by = parse_layout(report)
                if not buffers:
                    fail(f"{label}: no LDS layout in fac --report")
                    continue
                if by != "the AMDGPU backend":
                    fail(f"{label}: LDS offsets placed by {by}")
                bm, bn = meta["block_m"], meta["block_n"]
                if causal:
                    n = 4 * max(bm, bn)
                    shape = f"1,1,1,{n},{n}"
                else:
                    shape = f"1,1,1,{2 * bm},{4 * bn}"
                out = path[:-len(".hsaco")] + ".profile.json"
                try:
                    prof = run_profile(fa_run, path, shape, out)
                except RuntimeError as e:
                    fail(f"{label} {shape}: {e}")
                    continue
                rows = check_kernel(label, buffers, prof, fail, notes)
                byname = {b["name"]: b for b in buffers}
                for (buf, kind, what, mn, text), r in sorted(
                        rows.items(),
                        key=lambda kv: (byname[kv[0][0]]["offset"],
                                        kv[0][0], kv[0][1], kv[0][3])):
                    b = byname[buf]
                    verdict = "; ".join(sorted(r["verdicts"]))
                    table.append(
                        f"| f16 D={d} {'causal' if causal else 'non-causal'}"
                        f" | {'fa-pad-lds' if pad else 'off'} | {shape} | "
                        f"{buf} ({b['offset']}, {b['pitch']} B"
                        f"{', pairs' if b['pairs'] else ''}) | {kind}: "
                        f"{what} | {r['pcs']} x {mn} ({text}) | "
                        f"{r['predicted']} | {hist(r['hist'])} | {verdict} |")
                print(f"conflicts-vs-pad-lds: {label}: {len(prof['ds'])} DS "
                      f"instructions with a bank access at {shape}")
    print("\n".join(table))
    notes = ["predicted: fa-pad-lds's degree for the access as compiled "
             "(padded, or the unpadded layout with --pad-lds=false); "
             "measured: the gfx906 simulator's histogram over all executions "
             "of the instructions; 'merged / split / two accesses in one: "
             "N': the backend emitted another shape than the pass models, "
             "and the bank model on the pass's lane pattern with that shape "
             "gives N, as measured"] + \
        [f"{reason} ({', '.join(sorted(kernels))})"
         for reason, kernels in sorted(notes.items())]
    return e2e_matrix.finish_report("conflicts-vs-pad-lds", table, notes, markdown,
                                    failures)


if __name__ == "__main__":
    sys.exit(main())
