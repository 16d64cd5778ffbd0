#!/usr/bin/env python3
"""End-to-end suite on the host device: compile with fac, run with fa-run.

Sections, in the order they run (all with the LDS race checker on):
  1. boundary shapes, derived from each kernel's own BLOCK_M / BLOCK_N (read
     from its manifest): Lk - Lq = 1 and BLOCK_N - 1 (mod BLOCK_N), Lq > Lk
     causal (rows that see no key), L = BLOCK_M - 1, BLOCK_M, BLOCK_M + 1, a
     single KV block, a ragged last KV block;
  2. independent strides: Q, K, V, O and LSE each with its own padded
     strides and layout (fa-run --distinct-strides);
  3. the pairwise matrix: f16/f32 x D in {64,128} x causal x GQA x Lq != Lk
     x lengths {1, 17, 100, 257} x both input distributions (every pair of
     factor values at least once); Lq != Lk pairings are chosen from the
     tile size so that no case degenerates to one key;
  4. other head dimensions and layouts, explicit tile configurations; head
     dimensions no thread grid within the budget splits (odd D, D=190;
     padded to a multiple of 8);
  5. bf16 on the host target;
  6. K/V buffering (fa-double-buffer, --stages=2, with the next-block and
     in-block schedules) and single buffering
     (--stages=1) x LDS padding (fa-pad-lds) on and off x D 64/128 x causal x
     L in {1, 63, 64, 65, 1000}, each also with Lq != Lk (one of them Lq > Lk:
     causal rows that see no key), GQA; race checker on for every case (a
     missing barrier in the pipelined loop is only visible to it); plus
     padding on and off with the default stages at D 80;
  7. the independent golden vectors (test/data/golden);
  8. coverage: every kernel built above again with a misaligned layout
     (--row-pad 1), with --distinct-strides and, if causal, with Lq > Lk.

On the host every case runs with the race checker and --poison-lds (LDS
filled with NaN bytes), and fa-run's guard zones around every buffer.

The same cases serve the mutation test (mutants.py): with a planted bug the
suite must fail, and `first_failure` names the case that caught it.

usage: e2e_matrix.py FAC FA_RUN GOLDEN_DIR WORK_DIR
       e2e_matrix.py FAC FA_RUN GOLDEN_DIR WORK_DIR --target gfx906 \
                     --device gfx906-sim
       e2e_matrix.py FAC FA_RUN GOLDEN_DIR WORK_DIR [--target T --device D]
                     --sections S[,S...] [--compile-only | --list]
       e2e_matrix.py FAC - GOLDEN_DIR WORK_DIR --target sm_90 --write-plan P
                     [--sections S[,S...]]
       e2e_matrix.py --run-plan P FA_RUN --device cuda

The second form compiles the suite for gfx906 and runs it on the gfx906
simulator (the AMDGPU backend's machine code, executed instruction by
instruction; race checker and poisoned LDS on, as on the host). The third
compiles the suite's kernels for a GPU target here (where LLVM is) and
writes the cases to the plan P (paths relative to P's folder); the fourth
runs a plan on a machine with the GPU and only the runtime (a plan of
--sections' cases only, where given). With
--sections (names in SECTIONS) only those sections run, in a work folder
shared with the other section entries: ctest compiles every kernel once
(the e2e-*-kernels fixtures, --compile-only) and keeps them while fac is
unchanged; --list prints the cases.
"""
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import zlib

FACTORS = {
    "dtype": ["f16", "f32"],
    "d": [64, 128],
    "causal": [False, True],
    "gqa": [False, True],
    "lq_ne_lk": [False, True],
    "length": [1, 17, 100, 257],
    "dist": ["normal", "outliers"],
    "lse": [True, False],
}


def other_length(lq, bn):
    """The key length paired with `lq` when Lq != Lk, from the tile's
    BLOCK_N: every pairing has several keys and a ragged last block."""
    return {1: bn + 2,          # decode: Lk - Lq = BLOCK_N + 1 = 1 (mod BLOCK_N)
            17: 17 + bn - 1,    # Lk - Lq = BLOCK_N - 1
            100: 100 + bn + 1,  # Lk - Lq = 1 (mod BLOCK_N)
            257: 257 - bn - 3,  # Lq > Lk: causal rows with no visible key
            }[lq]


def pairwise_cases():
    names = list(FACTORS)
    uncovered = set()
    for (i, a), (j, b) in itertools.combinations(enumerate(names), 2):
        for va in FACTORS[a]:
            for vb in FACTORS[b]:
                uncovered.add((i, va, j, vb))
    candidates = list(itertools.product(*FACTORS.values()))
    cases = []
    while uncovered:
        def gain(c):
            return sum((i, c[i], j, c[j]) in uncovered
                       for i, j in itertools.combinations(range(len(c)), 2))
        best = max(candidates, key=gain)
        for i, j in itertools.combinations(range(len(best)), 2):
            uncovered.discard((i, best[i], j, best[j]))
        cases.append(dict(zip(names, best)))
    return cases


# Head dimensions that are not powers of two (D=40, 80: fewer lanes per row;
# D=40 rows are not 16-byte multiples for f32) and non-contiguous layouts
# (BLHD, padded rows: the scalar copy path).
EXTRA = [
    ("f16", 40, True, "1,2,1,70,90", []),
    ("f32", 40, False, "1,2,1,70,90", []),
    ("f16", 80, True, "1,4,2,90,70", []),
    ("f16", 256, False, "1,2,2,33,65", []),
    ("f16", 64, True, "2,8,2,100,77", ["--layout", "blhd"]),
    ("f16", 64, True, "2,8,2,100,77", ["--row-pad", "1"]),
    ("f32", 128, False, "1,4,2,65,130", ["--layout", "blhd", "--row-pad", "3"]),
]
# Head dimensions no thread grid within the budget splits (odd D, D=190):
# fa-tile pads D to a multiple of 8 in LDS and registers, the copies zero
# the columns past D and the O store skips them. Rows padded to a 16-byte
# multiple take the vector
# copy path with a unit across D (f16 D=59 + 5, f32 D=57 + 3, where f32's
# last unit lies wholly past D); both buffering modes.
HEAD_DIMS = [
    ("f16", 1, False, "1,2,1,33,40", [], None),
    ("f32", 1, True, "1,2,2,70,90", [], None),
    ("f16", 33, True, "2,4,2,65,100", [], None),
    ("f16", 59, False, "1,4,2,113,203", [], 1),
    ("f16", 59, True, "1,4,2,113,203", ["--row-pad", "5"], 2),
    ("f16", 59, False, "1,2,1,130,70", ["--row-pad", "5"], 1),
    ("f32", 57, False, "1,2,1,90,70", ["--row-pad", "3"], None),
    ("f32", 57, True, "1,2,1,90,133", [], 1),
    ("f16", 111, True, "1,2,2,200,257", [], None),
    ("f32", 111, False, "1,2,1,64,65", ["--layout", "blhd"], None),
    ("f16", 255, True, "1,2,1,64,65", [], None),
    # Even, but its half is odd: two lanes per row leave 95 columns of O
    # per thread, so it is padded to 192 as well.
    ("f16", 190, False, "1,2,1,70,90", [], None),
]
# Explicit tile configurations (block-m, block-n, waves): other thread grids
# than the automatic choice, down to one wave and 16x16 tiles.
TILE_CONFIGS = [
    ("f16", 40, True, (16, 16, 1)),
    ("f32", 64, False, (32, 16, 2)),
    ("f16", 128, True, (64, 32, 8)),
    ("f16", 80, False, (16, 64, 2)),
    ("f32", 80, True, (128, 16, 4)),
]


def finish_report(name, table, notes, markdown, failures):
    """The end of a model-vs-execution test (static_vs_profile.py,
    conflicts_vs_padlds.py): prints the notes, writes the table and notes
    to `markdown` if given, says PASS or how many failures; the exit
    status."""
    for n in notes:
        print("note: " + n)
    if markdown:
        with open(markdown, "w") as f:
            f.write("\n".join(table) + "\n\n" +
                    "".join(f"- {n}\n" for n in notes))
    if failures:
        print(f"{name}: {failures} failures")
        return 1
    print(f"{name}: PASS")
    return 0


def kernel_source(dtype, d, causal, scale=None, lse=True, paged=False,
                  varlen=False, window=None, softcap=None, alibi=False,
                  sinks=False):
    t = f"tensor<?x?x?x{d}x{dtype}>"
    l = "tensor<?x?x?xf32>"
    h = "tensor<?xf32>"
    attrs = (" causal" if causal else "") + \
        (f" scale({scale})" if scale is not None else "") + \
        (" window({}, {})".format(*window) if window else "") + \
        (f" softcap({float(softcap)})" if softcap else "") + \
        (f" alibi(%slopes : {h})" if alibi else "") + \
        (f" sinks(%sinks : {h})" if sinks else "")
    # ALiBi slopes and sinks: [Hq] f32 arguments after the others.
    heads = (f", %slopes: {h}" if alibi else "") + \
        (f", %sinks: {h}" if sinks else "")
    if varlen and paged:
        # A mixed batch: packed Q, O [total_q, Hq, D] and the LSE [Hq,
        # total_q] cut by cu_seqlens_q [B + 1], over K and V caches read
        # through the block table with the key lengths [B].
        tq, tc = f"tensor<?x?x{d}x{dtype}>", t
        l, c, m = "tensor<?x?xf32>", "tensor<?xi32>", "tensor<?x?xi32>"
        return (f"func.func @attention(%q: {tq}, %k: {tc}, %v: {tc}, "
                f"%table: {m}, %lens: {c}, %cu_q: {c}{heads}) -> "
                f"({tq}, {l}) {{\n"
                f"  %o, %lse = fa.attention %q, %k, %v paged(%table, %lens) "
                f"varlen(%cu_q : {c}){attrs} : {tq}, {tc}, {tc}, {m}, {c} -> "
                f"{tq}, {l}\n"
                f"  return %o, %lse : {tq}, {l}\n}}\n")
    if varlen:
        # Packed Q, K, V, O [total, H, D], the LSE [Hq, total_q], cut by
        # cu_seqlens_q/k [B + 1].
        t, l, c = f"tensor<?x?x{d}x{dtype}>", "tensor<?x?xf32>", \
            "tensor<?xi32>"
        return (f"func.func @attention(%q: {t}, %k: {t}, %v: {t}, "
                f"%cu_q: {c}, %cu_k: {c}{heads}) -> ({t}, {l}) {{\n"
                f"  %o, %lse = fa.attention %q, %k, %v varlen(%cu_q, %cu_k : "
                f"{c}, {c}){attrs} : {t}, {t}, {t} -> {t}, {l}\n"
                f"  return %o, %lse : {t}, {l}\n}}\n")
    if paged:
        # K and V: caches [num_pages, page_size, Hkv, D], read through the
        # block table [B, max_pages] with the lengths [B].
        m, n = "tensor<?x?xi32>", "tensor<?xi32>"
        return (f"func.func @attention(%q: {t}, %k: {t}, %v: {t}, "
                f"%table: {m}, %lens: {n}{heads}) -> ({t}, {l}) {{\n"
                f"  %o, %lse = fa.attention %q, %k, %v paged(%table, %lens)"
                f"{attrs} : {t}, {t}, {t}, {m}, {n} -> {t}, {l}\n"
                f"  return %o, %lse : {t}, {l}\n}}\n")
    if not lse:
        return (f"func.func @attention(%q: {t}, %k: {t}, %v: {t}{heads}) -> "
                f"{t} {{\n"
                f"  %o = fa.attention %q, %k, %v{attrs} : {t}, {t}, {t} -> {t}\n"
                f"  return %o : {t}\n}}\n")
    return (f"func.func @attention(%q: {t}, %k: {t}, %v: {t}{heads}) -> "
            f"({t}, {l}) {{\n"
            f"  %o, %lse = fa.attention %q, %k, %v{attrs} : {t}, {t}, {t} -> {t}, {l}\n"
            f"  return %o, %lse : {t}, {l}\n}}\n")


class Kernels:
    """Compiles kernels once per work directory, optionally with a bug."""

    def __init__(self, fac, work, plant_bug=None, target="host"):
        self.fac, self.work, self.plant_bug = fac, work, plant_bug
        self.target = target
        self.ext = {"host": ".so", "gfx906": ".hsaco"}.get(target, ".cubin")
        self.errors = {}
        # The get() arguments of every kernel name asked for: the mutation
        # test compiles a hinted case's kernel alone (hinted_failure).
        self.requests = {}
        # Every kernel compiled, in order: name -> (path, manifest entry,
        # dtype, causal); the coverage section runs each of them again.
        self.built = {}

    def get(self, dtype, d, causal, scale=None, tile=None, pad=True,
            stages=None, fetch_ahead=None, lse=True, share_rows=None,
            splits=False, pack=False, paged=False, varlen=False,
            window=None, softcap=None, alibi=False, sinks=False):
        """(path of the .so, its manifest entry) or (None, error text).
        stages: None leaves fac's default (auto); 1 or 2 passes --stages.
        fetch_ahead: None (auto) or in-block / next-block. lse: whether the
        kernel also returns the LSE. share_rows: None (the target's
        default) or "on" / "off" (fac --share-rows). splits: split-KV
        (fac --kv-splits=runtime), False: fac's default (gfx906: split-KV
        with the dense tiles; host and sm_90: dense), "off": dense
        (--kv-splits=off); pack: GQA packing (--gqa-pack=on);
        paged: K and V a paged cache (fa.attention paged); varlen: packed
        variable-length sequences (fa.attention varlen); both: a mixed
        batch, packed queries over a paged cache."""
        name = f"attn_{dtype}_d{d}_{'causal' if causal else 'full'}"
        options = []
        if paged:
            name += "_paged"
        if varlen:
            name += "_varlen"
        if splits == "off":
            name += "_dense"
            options.append("--kv-splits=off")
        elif splits:
            name += "_splitkv"
            options.append("--kv-splits=runtime")
        if pack:
            name += "_gqapack"
            options.append("--gqa-pack=on")
        if scale is not None:
            name += f"_scale{scale}"
        if window:
            name += "_win{}_{}".format(*window).replace("-1", "inf")
        if softcap:
            name += f"_cap{softcap}"
        if alibi:
            name += "_alibi"
        if sinks:
            name += "_sinks"
        if not lse:
            name += "_nolse"
        if tile is not None:
            name += "_tile{}x{}w{}".format(*tile)
            options += ["--block-m={}".format(tile[0]),
                        "--block-n={}".format(tile[1]),
                        "--waves={}".format(tile[2])]
        if not pad:
            name += "_nopad"
            options.append("--pad-lds=false")
        if stages is not None:
            name += f"_stages{stages}"
            options.append(f"--stages={stages}")
        if fetch_ahead is not None:
            name += "_" + fetch_ahead.replace("-", "")
            options.append(f"--fetch-ahead={fetch_ahead}")
        if share_rows is not None:
            name += "_share" + share_rows
            options.append(f"--share-rows={share_rows}")
        if self.plant_bug:
            options.append("--test-plant-bug=" + self.plant_bug)
        if dtype == "bf16":
            options.append("--allow-bf16")
        self.requests.setdefault(name, dict(
            dtype=dtype, d=d, causal=causal, scale=scale, tile=tile, pad=pad,
            stages=stages, fetch_ahead=fetch_ahead, lse=lse,
            share_rows=share_rows, splits=splits, pack=pack, paged=paged,
            varlen=varlen, window=window, softcap=softcap, alibi=alibi,
            sinks=sinks))
        src = os.path.join(self.work, name + ".mlir")
        out = os.path.join(self.work, name + self.ext)
        if name in self.errors:
            return None, self.errors[name]
        if not os.path.exists(out):
            # Written under a private name and renamed: entries that share
            # the work folder (ctest runs sections at once) never read a
            # half-written kernel.
            tmp = f"{os.path.join(self.work, name)}.{os.getpid()}"
            with open(tmp + ".mlir", "w") as f:
                f.write(kernel_source(dtype, d, causal, scale, lse, paged,
                                      varlen, window, softcap, alibi, sinks))
            os.replace(tmp + ".mlir", src)
            p = subprocess.run([self.fac, src, "--target=" + self.target,
                                "-o", tmp + self.ext]
                               + options, capture_output=True, text=True)
            if p.returncode != 0:
                self.errors[name] = f"fac {src}: {p.stderr.strip()}"
                return None, self.errors[name]
            os.replace(tmp + self.ext + ".json", out + ".json")
            os.replace(tmp + self.ext, out)
        with open(out + ".json") as f:
            meta = json.load(f)["kernels"][0]
        if not paged and not varlen:  # the coverage section's are dense
            self.built.setdefault(name, (out, meta, dtype, causal))
        return out, meta


class Case:
    def __init__(self, section, label, kernel, args):
        self.section, self.label, self.kernel, self.args = \
            section, label, kernel, args


def boundary_cases(kernels):
    """Shapes at the edges of the tiling, from each kernel's tile sizes."""
    kinds = [("f16", 64, True, False), ("f32", 128, True, False),
             ("f16", 64, False, False), ("f32", 64, False, False)]
    # gfx906's default is split-KV (the dense tiles, S chosen at launch):
    # its dense build (--kv-splits=off) at the tiling's edges too.
    if kernels.target == "gfx906":
        kinds.append(("f16", 64, True, "off"))
    for n, (dtype, d, causal, splits) in enumerate(kinds):
        so, meta = kernels.get(dtype, d, causal, splits=splits)
        dense = " dense" if splits == "off" else ""
        if so is None:
            yield Case("boundary", f"{dtype} D={d}{dense}", None, meta)
            continue
        bm, bn = meta["block_m"], meta["block_n"]
        shapes = [
            ("Lk-Lq=1 mod BN", 100, 100 + bn + 1),
            ("Lk-Lq=BN-1 mod BN", bm + 1, bm + 1 + 2 * bn - 1),
            ("Lq>Lk (empty rows if causal)", bm + 3, bn // 2 + 3),
            ("L=BM-1", bm - 1, bm - 1),
            ("L=BM", bm, bm),
            ("L=BM+1", bm + 1, bm + 1),
            ("single KV block", 2 * bm + 1, bn - 3),
            ("ragged last KV block", 37, 2 * bn + 5),
        ]
        for k, (what, lq, lk) in enumerate(shapes):
            for dist in ("normal", "outliers"):
                shape = f"1,4,2,{lq},{lk}"
                yield Case("boundary",
                           f"{dtype} D={d}{dense} causal={int(causal)} "
                           f"{what} shape={shape} dist={dist}", so,
                           ["--shape", shape, "--dist", dist,
                            "--seed", str(100 * n + k)])


def stride_cases(kernels):
    kinds = [("f16", 64, True, "2,8,2,100,165"),
             ("f32", 128, False, "2,4,2,77,131"),
             ("f16", 40, False, "1,4,4,65,64")]
    for n, (dtype, d, causal, shape) in enumerate(kinds):
        so, meta = kernels.get(dtype, d, causal)
        yield Case("strides", f"{dtype} D={d} causal={int(causal)} "
                   f"shape={shape} --distinct-strides", so,
                   meta if so is None else
                   ["--shape", shape, "--distinct-strides", "--seed", str(n)])


def matrix_cases(kernels):
    for n, c in enumerate(pairwise_cases()):
        so, meta = kernels.get(c["dtype"], c["d"], c["causal"], lse=c["lse"])
        if so is None:
            yield Case("pairwise", f"{c['dtype']} D={c['d']}", None, meta)
            continue
        lq = c["length"]
        lk = other_length(lq, meta["block_n"]) if c["lq_ne_lk"] else lq
        hq, hkv = (8, 2) if c["gqa"] else (4, 4)
        shape = f"2,{hq},{hkv},{lq},{lk}"
        yield Case("pairwise", f"{c['dtype']} D={c['d']} "
                   f"causal={int(c['causal'])} lse={int(c['lse'])} "
                   f"shape={shape} dist={c['dist']}", so,
                   ["--shape", shape, "--dist", c["dist"], "--seed", str(n)])


def extra_cases(kernels):
    for dtype, d, causal, shape, extra in EXTRA:
        so, meta = kernels.get(dtype, d, causal)
        yield Case("layouts", f"{dtype} D={d} causal={int(causal)} "
                   f"shape={shape} {' '.join(extra)}", so,
                   meta if so is None else ["--shape", shape] + extra)
    for n, (dtype, d, causal, tile) in enumerate(TILE_CONFIGS):
        so, meta = kernels.get(dtype, d, causal, tile=tile)
        shape = "1,4,2,77,131"
        yield Case("tiles", f"{dtype} D={d} causal={int(causal)} "
                   f"block_m={tile[0]} block_n={tile[1]} waves={tile[2]} "
                   f"shape={shape}", so,
                   meta if so is None else
                   ["--shape", shape, "--seed", str(n)])
    for n, (causal, shape, dist) in enumerate(
            [(False, "2,4,2,100,165", "normal"),
             (True, "1,8,2,77,131", "outliers")]):
        so, meta = kernels.get("bf16", 64, causal)
        yield Case("bf16", f"bf16 D=64 causal={int(causal)} shape={shape} "
                   f"dist={dist}", so,
                   meta if so is None else
                   ["--shape", shape, "--dist", dist, "--seed", str(n)])


def head_dim_cases(kernels):
    for n, (dtype, d, causal, shape, extra, stages) in enumerate(HEAD_DIMS):
        so, meta = kernels.get(dtype, d, causal, stages=stages)
        yield Case("head dims", f"{dtype} D={d} causal={int(causal)} "
                   f"shape={shape} stages={stages or 'auto'} "
                   f"{' '.join(extra)}", so,
                   meta if so is None else
                   ["--shape", shape, "--seed", str(n),
                    "--dist", ("normal", "outliers")[n % 2]] + extra)


def buffering_lengths(bn):
    """(Lq, Lk) pairs of the buffering section: each length square and with
    an Lq != Lk partner; every partner but one short one spans several K/V
    blocks (the pipelined loop runs), and two have Lq > Lk (causal rows that
    see no key)."""
    partner = {1: 2 * bn + 5,      # decode over several blocks, ragged last
               63: 63 + 37,        # Lq < Lk, two blocks
               64: 64 + bn + 1,    # Lk - Lq = 1 (mod BLOCK_N)
               65: 28,             # Lq > Lk, one block: 37 empty causal rows
               700: 700 - 37,      # Lq > Lk, many blocks: 37 empty rows
               }
    # (700, not 1000 since 2026-12-03: still 11-22 K/V blocks, the
    # pipelined loop's slots wrapping many times, at half the cost.)
    for length in (1, 63, 64, 65, 700):
        yield length, length
        yield length, partner[length]


def buffering_cases(kernels, part=None):
    """K/V double buffering (--stages=2) and single buffering (--stages=1)
    x LDS padding on/off x D 64/128 x causal on/off x buffering_lengths, f16,
    GQA (Hq = 2 Hkv); every case with the LDS race checker. Then padding on/off with the
    default stages at D 80 (the old padding section)."""
    n = 0
    # (stages, fetch distance, padding): next-block double buffering, the
    # in-block schedule (what fac picks for the gfx906 D=128 defaults) and
    # single buffering.
    schedules = [(2, None, True), (2, None, False), (2, "in-block", True),
                 (1, None, True), (1, None, False)]
    # part "double" (the --stages=2 schedules) or "single" (--stages=1 and
    # the D=80 padding cases): the halves ctest runs as two entries.
    for stages, ahead, pad in schedules:
        if part and (stages == 2) != (part == "double"):
            continue
        for d in (64, 128):
            for causal in (False, True):
                so, meta = kernels.get("f16", d, causal, pad=pad,
                                       stages=stages, fetch_ahead=ahead)
                what = (f"f16 D={d} causal={int(causal)} "
                        f"stages={stages}"
                        + (f" fetch-ahead={ahead}" if ahead else "")
                        + f" pad={'on' if pad else 'off'}")
                if so is None:
                    yield Case("buffering", what, None, meta)
                    continue
                if meta.get("stages", stages) != stages:
                    yield Case("buffering", what, None,
                               f"manifest says stages={meta['stages']}")
                    continue
                if ahead and meta.get("fetch_ahead", ahead) != ahead:
                    yield Case("buffering", what, None,
                               "manifest says fetch_ahead="
                               f"{meta['fetch_ahead']}")
                    continue
                for lq, lk in buffering_lengths(meta["block_n"]):
                    # L=700 dominates the run time (the emulator, the race
                    # checker and the fp64 reference): GQA with fewer heads.
                    heads = "2,1" if max(lq, lk) > 500 else "4,2"
                    shape = f"1,{heads},{lq},{lk}"
                    n += 1
                    yield Case("buffering", f"{what} shape={shape}", so,
                               ["--shape", shape, "--seed", str(n),
                                "--check-races"])
    for pad in (True, False):
        if part == "double":
            break
        for causal in (False, True):
            so, meta = kernels.get("f16", 80, causal, pad=pad)
            for length in (1, 63, 64, 65, 300):
                shape = f"1,2,1,{length},{length}"
                n += 1
                yield Case("buffering", f"f16 D=80 causal={int(causal)} "
                           f"stages=default pad={'on' if pad else 'off'} "
                           f"shape={shape}", so, meta if so is None else
                           ["--shape", shape, "--seed", str(n),
                            "--check-races"])


def share_rows_cases(kernels):
    """The lhs rows of the LDS products read by every lane (--share-rows=off)
    next to the default (on for host and gfx906: rotated around each 16-lane
    row), f16 D 64/128, causal on/off, GQA, across one and several K/V
    blocks, Lq > Lk; race checker on."""
    n = 0
    for share in ("off", "on"):
        for d in (64, 128):
            for causal in (False, True):
                so, meta = kernels.get("f16", d, causal, share_rows=share)
                what = f"f16 D={d} causal={int(causal)} share-rows={share}"
                for lq, lk in ((1, 1), (63, 100), (200, 163)):
                    shape = f"1,4,2,{lq},{lk}"
                    yield Case("share-rows", f"{what} shape={shape}", so,
                               meta if so is None else
                               ["--shape", shape, "--seed", str(n),
                                "--check-races"])
                    n += 1


# Query heads per KV head of the packed-causal shapes: 32 packed heads
# give more rows than a 64-row block at Lq = 3.
PACKED_CAUSAL_HEADS = "32,1"


def packed_causal_lengths(bm, bn):
    """(Lq, Lk) pairs whose GQA-packed Q blocks straddle two query heads
    where the causal bound matters (PACKED_CAUSAL_HEADS): with Lq = 3 the
    first block's last row is a head's row 0 (bm - 1 is a multiple of 3
    for the 4-, 16- and 64-row tiles), with Lq = bm + 1 the second block
    ends at a head's row bm - 2; the previous head's last rows need 2 keys
    more than the block's last row, and Lk = c * bn + 2 puts those 2 keys
    in a K/V block of their own (a bound taken from the last row drops
    it)."""
    return [(3, 2 * bn + 2), (bm + 1, 3 * bn + 2)]


# The decode kernels: (dtype, D, causal, split-KV, GQA packing, tile). Small
# Q tiles are what decode runs (a Q tile of the Hq/Hkv query heads of one
# KV head; None: the target's decode tiles, 4 x 16 for gfx906); the 64-row
# tile packs several heads' prefill rows.
DECODE_KERNELS = [
    ("f16", 128, False, True, True, None),  # the target's decode tiles
    ("f16", 128, False, True, True, (16, 64, 4)),
    ("f16", 128, True, True, True, (16, 64, 4)),
    ("f16", 64, True, True, False, (16, 64, 4)),
    ("f32", 64, False, True, True, (16, 32, 4)),
    ("f16", 64, True, False, True, (64, 64, 4)),
    # D=40: the 4 x 16 decode tile pads it to 48 (issue 28: refused before)
    ("f16", 40, True, True, True, None),
    # The rows over both waves of 128 threads (64-lane waves; sm_90: over
    # the 2 warps of 64 threads): thread grid 1 x threads, the waves' row
    # maxima and sums combined through LDS (ThreadMapping::wavesPerRow)
    ("f16", 128, True, True, True, (4, 128, 2)),
]


def decode_cases(kernels):
    """Split-KV (flash-decoding) and GQA packing: Lq 1, 2, 4, 16 against
    long and short K/V (1 to 17000 keys), GQA 1/4/8, causal and not, split
    counts 1 to 64 (automatic, and more splits than K/V blocks: splits that
    see no key), LSE on; shapes from each kernel's tiles."""
    n = 0
    for dtype, d, causal, splits, pack, tile in DECODE_KERNELS:
        so, meta = kernels.get(dtype, d, causal, tile=tile, splits=splits,
                               pack=pack)
        what = (f"{dtype} D={d} causal={int(causal)} "
                f"split-kv={int(splits)} gqa-pack={int(pack)}" +
                (" tile={}x{}w{}".format(*tile) if tile else ""))
        if so is None:
            yield Case("decode", what, None, meta)
            continue
        bm, bn = meta["block_m"], meta["block_n"]
        if splits:
            shapes = [("1,8,2,1,1", 0), ("1,8,2,1,17000", 0),
                      ("2,8,1,2,300", 3), ("1,4,4,4,1000", 64),
                      ("3,8,2,1,2 * bn + 1", 7), ("1,8,2,16,2 * bn", 1),
                      ("1,8,8,1,bn - 1", 5), ("2,16,2,4,5 * bn + 3", 2),
                      ("1,8,2,bm + 3,4 * bn", 4)]
        else:
            shapes = [("1,8,2,1,17000", None), ("2,8,2,bm - 3,bn + 5", None),
                      ("1,16,2,bm + 7,3 * bn", None),
                      ("1,4,4,2 * bm + 1,bn // 2", None)]
        if causal and pack:
            shapes += [(f"2,{PACKED_CAUSAL_HEADS},{lq},{lk}",
                        0 if splits else None)
                       for lq, lk in packed_causal_lengths(bm, bn)]
        for shape, count in shapes:
            shape = ",".join(str(eval(x, {"bm": bm, "bn": bn}))
                             for x in shape.split(","))
            args = ["--shape", shape, "--seed", str(n)]
            if count is not None:
                args += ["--kv-splits", str(count)]
            yield Case("decode", f"{what} shape={shape}"
                       + (f" splits={count or 'auto'}" if splits else ""),
                       so, args)
            n += 1


# The paged kernels: (dtype, D, causal, split-KV + GQA packing, tile).
PAGED_KERNELS = [
    ("f16", 128, False, True, None),
    ("f16", 128, True, True, None),
    ("f16", 64, True, False, None),
    ("f32", 64, False, False, (32, 32, 4)),
]


def paged_cases(kernels):
    """A paged K/V cache (FlashAttention 2 / vLLM): page sizes 16, 64 and
    256; pages shuffled (fa-run's default), in order, and shared between
    sequences (prefix sharing); sequence lengths from the seed (with a 0
    and a 1, none a whole number of pages) and given, including lengths
    past the K/V block and page boundaries; GQA 1/4/8, causal and not,
    decode and prefill rows, split-KV and not. Cache rows no sequence reads
    are poisoned, so that a row read through a wrong page fails."""
    n = 0
    for dtype, d, causal, decode, tile in PAGED_KERNELS:
        so, meta = kernels.get(dtype, d, causal, tile=tile, splits=decode,
                               pack=decode, paged=True)
        what = (f"{dtype} D={d} causal={int(causal)} "
                f"split-kv+pack={int(decode)}")
        if so is None:
            yield Case("paged", what, None, meta)
            continue
        bn = meta["block_n"]
        cases = [("3,8,2,1,300", ["--paged", "16"]),
                 ("2,8,2,1,1000", ["--paged", "64", "--share-pages"]),
                 ("2,8,8,4,700", ["--paged", "256", "--no-shuffle-pages"]),
                 ("4,4,4,2,2000", ["--paged", "16", "--cache-seqlens",
                                   f"0,1,{bn + 1},2000"]),
                 ("2,16,2,37,500", ["--paged", "64", "--cache-seqlens",
                                    f"{2 * bn - 1},37"])]
        if decode:
            cases.append(("2,8,2,1,5000", ["--paged", "16", "--kv-splits",
                                           "64"]))
        if causal and decode:
            for lq, lk in packed_causal_lengths(meta["block_m"], bn):
                cases.append((f"2,{PACKED_CAUSAL_HEADS},{lq},{lk}",
                              ["--paged", "16", "--cache-seqlens",
                               f"{lk},{lk - 1}"]))
        for shape, extra in cases:
            yield Case("paged", f"{what} shape={shape} {' '.join(extra)}",
                       so, ["--shape", shape, "--seed", str(n)] + extra)
            n += 1


# The varlen kernels: (dtype, D, causal, split-KV + GQA packing, tile).
VARLEN_KERNELS = [
    ("f16", 64, True, False, None),   # the target's prefill tiles
    ("f16", 128, False, False, (32, 64, 4)),
    ("f16", 128, True, True, None),   # the target's decode tiles
    ("f32", 64, True, True, (16, 32, 4)),
    ("bf16", 32, False, False, (64, 32, 4)),
]


def varlen_cases(kernels):
    """Variable-length batches (FlashAttention 2's varlen layout): lengths
    drawn from the seed (with a 0 and a 1) and given, Lq != Lk per
    sequence, empty sequences of queries and of keys, lengths across the
    Q and K/V block boundaries, GQA 1/4/8, causal and not, split-KV with
    packing (automatic and forced split counts, more splits than blocks);
    shapes from each kernel's tiles. The shape's Lq and Lk are the maxima
    (the grid's)."""
    n = 0
    for dtype, d, causal, decode, tile in VARLEN_KERNELS:
        so, meta = kernels.get(dtype, d, causal, tile=tile, splits=decode,
                               pack=decode, varlen=True)
        what = (f"{dtype} D={d} causal={int(causal)} "
                f"split-kv+pack={int(decode)}")
        if so is None:
            yield Case("varlen", what, None, meta)
            continue
        bm, bn = meta["block_m"], meta["block_n"]
        cases = [("3,8,2,{},{}".format(2 * bm + 3, 3 * bn + 1), []),
                 ("4,4,4,{},{}".format(bm + 1, bn + 1),
                  ["--seqlens-q", f"0,1,{bm},{bm + 1}",
                   "--seqlens-k", f"{bn + 1},0,1,{bn}"]),
                 ("2,8,1,{},{}".format(bm - 1, 2 * bn),
                  ["--seqlens-q", f"{bm - 1},1",
                   "--seqlens-k", f"{2 * bn},{bm - 1}"]),
                 ("5,16,2,{},{}".format(3 * bm, 2 * bn + 5), [])]
        if causal and decode:
            (lq1, lk1), (lq2, lk2) = packed_causal_lengths(bm, bn)
            cases.append((f"2,{PACKED_CAUSAL_HEADS},{max(lq1, lq2)},"
                          f"{max(lk1, lk2)}",
                          ["--seqlens-q", f"{lq1},{lq2}",
                           "--seqlens-k", f"{lk1},{lk2}"]))
        if decode:
            cases += [("3,8,2,1,5000", ["--kv-splits", "64"]),
                      ("2,8,2,4,3000", ["--seqlens-q", "4,1",
                                        "--seqlens-k", "3000,2999"]),
                      ("4,8,2,2,700", ["--kv-splits", "5"])]
        for shape, extra in cases:
            yield Case("varlen", f"{what} shape={shape} {' '.join(extra)}",
                       so, ["--shape", shape, "--seed", str(n), "--varlen"]
                       + extra)
            n += 1


# The mixed-batch kernels (varlen queries over a paged cache): (dtype, D,
# causal, split-KV + GQA packing, tile, window, softcap, alibi + sinks).
MIXED_KERNELS = [
    ("f16", 64, True, False, None, None, None, False),  # prefill tiles
    ("f16", 128, True, True, None, None, None, False),  # decode tiles
    ("f32", 64, False, False, (32, 32, 4), None, None, False),
    ("bf16", 128, True, True, (16, 64, 4), None, None, False),
    ("f16", 64, True, False, None, (48, -1), 30.0, True),
]


def mixed_cases(kernels):
    """Mixed prefill/decode batches (vLLM's; flash_attn_varlen_func with
    block_table and seqused_k): packed queries of mixed lengths, each
    sequence's the last rows of its paged K/V history (causal bottom-right
    within its own lengths). Drawn batches (decode rows and prefill chunks
    together, keys at least the queries), given lengths with an empty
    query sequence, a decode row, a chunk as long as its keys and lengths
    across the tiles' and pages' edges, shared and in-order pages, split-KV
    with packing (automatic and forced), and the window, softcap, ALiBi and
    sinks over it; shapes from each kernel's tiles (the shape's Lq and Lk
    are the longest chunk and history)."""
    n = 0
    for (dtype, d, causal, decode, tile, window, cap,
         head) in MIXED_KERNELS:
        so, meta = kernels.get(dtype, d, causal, tile=tile, splits=decode,
                               pack=decode, paged=True, varlen=True,
                               window=window, softcap=cap, alibi=head,
                               sinks=head)
        what = (f"{dtype} D={d} causal={int(causal)} "
                f"split-kv+pack={int(decode)} window={window} "
                f"softcap={cap} alibi+sinks={int(head)}")
        if so is None:
            yield Case("mixed", what, None, meta)
            continue
        bm, bn = meta["block_m"], meta["block_n"]
        cases = [("6,8,2,{},{}".format(2 * bm + 3, 4 * bn + 5),
                  ["--paged", "16"]),
                 ("4,4,4,{},{}".format(bm + 1, 3 * bn),
                  ["--paged", "16", "--seqlens-q", f"0,1,{bm + 1},{bm}",
                   "--cache-seqlens", f"{bn},{2 * bn + 1},{bm + 1},"
                                      f"{3 * bn}"]),
                 ("3,8,2,{},{}".format(bm, 2 * bn),
                  ["--paged", "64", "--share-pages"]),
                 ("2,16,2,{},{}".format(bm - 1, bm + 2 * bn),
                  ["--paged", "32", "--no-shuffle-pages", "--seqlens-q",
                   f"{bm - 1},1", "--cache-seqlens",
                   f"{bm - 1 + 2 * bn},{bm}"])]
        if decode:
            cases += [("8,8,2,{},5000".format(bm), ["--paged", "16",
                                                   "--kv-splits", "16"]),
                      ("4,8,2,3,700", ["--paged", "16", "--kv-splits",
                                       "5"])]
        if causal and decode:
            (lq1, lk1), (lq2, lk2) = packed_causal_lengths(bm, bn)
            cases.append((f"2,{PACKED_CAUSAL_HEADS},{max(lq1, lq2)},"
                          f"{max(lk1, lk2)}",
                          ["--paged", "16", "--seqlens-q", f"{lq1},{lq2}",
                           "--cache-seqlens", f"{lk1},{lk2}"]))
        if head:
            cases.append(("3,8,2,{},1500".format(bm), ["--paged", "16",
                                                      "--alibi=bloom", "--sinks"]))
        for shape, extra in cases:
            yield Case("mixed", f"{what} shape={shape} {' '.join(extra)}",
                       so, ["--shape", shape, "--seed", str(n), "--varlen"]
                       + extra)
            n += 1


def golden_cases(kernels, golden):
    for case in sorted(os.listdir(golden)):
        meta_path = os.path.join(golden, case, "meta.json")
        if not os.path.exists(meta_path):
            continue
        with open(meta_path) as f:
            meta = json.load(f)
        default = 1.0 / (meta["D"] ** 0.5)
        scale = None if abs(meta["scale"] - default) < 1e-7 else meta["scale"]
        so, info = kernels.get(meta["dtype"], meta["D"], meta["causal"], scale)
        yield Case("golden", case, so, info if so is None else
                   ["--golden", os.path.join(golden, case)])


# GPU only: shapes too large for the CPU fp64 reference (validated against
# the on-device fp64 reference): L up to 16384, B*Hq up to 256, f16 and f32,
# D 64/80/128, causal, GQA, Lq != Lk, both distributions, other layouts.
LARGE = [
    ("f16", 128, True, "1,16,16,16384,16384", "normal", []),
    ("f16", 64, False, "4,64,8,4096,4096", "outliers", []),
    ("f32", 80, True, "2,32,8,3000,5000", "outliers", ["--distinct-strides"]),
    ("f16", 128, False, "8,32,32,2048,2048", "normal", ["--layout", "blhd"]),
    ("f32", 64, False, "2,16,4,8192,8192", "outliers", []),
    ("f16", 80, True, "1,8,2,16384,9000", "normal", []),
]


def large_cases(kernels):
    for n, (dtype, d, causal, shape, dist, extra) in enumerate(LARGE):
        so, meta = kernels.get(dtype, d, causal)
        yield Case("large", f"{dtype} D={d} causal={int(causal)} "
                   f"shape={shape} dist={dist} {' '.join(extra)}", so,
                   meta if so is None else
                   ["--shape", shape, "--dist", dist, "--seed", str(n),
                    "--reference", "device"] + extra)


def coverage_cases(kernels):
    """Every kernel the sections above built, again: with a misaligned
    layout (rows padded by one element: the K/V loop's scalar version, the
    unaligned copies), with independent strides for every tensor, and, if
    causal, with Lq > Lk (rows that see no key). Shapes follow each kernel's
    own tiles: a ragged last Q block and several K/V blocks. Each kernel's
    seeds and input distributions follow from its name, not from its place
    in the list, so that a section that adds kernels does not redraw the
    inputs of every case after them."""
    for name, (so, meta, dtype, causal) in list(kernels.built.items()):
        n = zlib.crc32(name.encode()) % 100003
        bm, bn = meta["block_m"], meta["block_n"]
        what = f"{name} (block_m={bm} block_n={bn})"
        shapes = [("--row-pad 1", f"1,4,2,{bm + 5},{2 * bn + 3}",
                   ["--row-pad", "1"]),
                  ("--distinct-strides", f"2,4,2,{bm + 3},{bn + 7}",
                   ["--distinct-strides"])]
        if causal:
            shapes.append(("causal Lq>Lk", f"1,4,2,{bm + bn + 9},{bn // 2 + 5}",
                           []))
        for k, (label, shape, extra) in enumerate(shapes):
            yield Case("coverage", f"{what} shape={shape} {label}", so,
                       ["--shape", shape, "--seed", str(3 * n + k),
                        "--dist", ("normal", "outliers")[(n + k) % 2]] +
                       extra)


# The sections in the order all_cases runs them, by the name the ctest
# entries and --sections use (one generator may yield several Case
# sections: matrix_cases gives "pairwise", extra_cases "tiles" and
# "layouts").
def layout_shapes(layout, bm, bn, paged_keys=0):
    """The paged or varlen shapes of the feature sections (window,
    alibi-sinks), (shape, fa-run options) from the kernel's tiles: paged,
    decode rows over 300 keys in 16-row pages and 4 rows over `paged_keys`
    with an empty sequence and one of two blocks and a bit; varlen, ragged
    sequences, then an empty query sequence, one without keys and lengths
    at the tiles' edges."""
    if layout == "paged":
        return [("3,8,2,1,300", ["--paged", "16"]),
                (f"2,8,2,4,{paged_keys}", ["--paged", "64", "--cache-seqlens",
                                           f"0,{2 * bn + 7}"])]
    return [("3,8,2,{},{}".format(2 * bm + 3, 3 * bn + 1), ["--varlen"]),
            ("4,4,4,{},{}".format(bm + 1, bn + 1),
             ["--varlen", "--seqlens-q", f"0,1,{bm},{bm + 1}",
              "--seqlens-k", f"{bn + 1},0,1,{bn}"])]


# Sliding window and softcap (issue 32): (dtype, D, causal, window,
# softcap, split-KV + packing, layout, tile) and the shapes each runs.
WINDOW_KERNELS = [
    ("f16", 64, True, (32, -1), None, False, "dense", None),
    ("f32", 128, False, (17, 5), None, False, "dense", None),
    ("f16", 64, False, (-1, 0), None, False, "dense", None),
    ("f16", 64, True, (40, -1), None, True, "dense", (16, 64, 4)),
    ("f16", 64, True, (50, -1), None, True, "paged", (16, 64, 4)),
    ("f16", 64, False, (20, 3), None, False, "varlen", None),
    ("f16", 64, True, None, 30.0, False, "dense", None),
    ("f32", 40, False, (64, -1), 5.0, False, "dense", None),
    ("bf16", 64, True, (33, -1), 50.0, True, "dense", (16, 64, 4)),
]


def window_cases(kernels):
    """Sliding windows (FlashAttention 2's window_size: each side bounded or
    -1) and softcapping, alone and together, with causal, GQA, split-KV
    with packing, paged and varlen; windows narrower and wider than a K/V
    block, Lq < Lk and Lq > Lk (rows that see no key), keys from 1 to
    several thousand (most K/V blocks never visited), outliers that only
    the softcap keeps finite-ranged; shapes from each kernel's tiles."""
    n = 0
    for dtype, d, causal, window, cap, decode, layout, tile in WINDOW_KERNELS:
        so, meta = kernels.get(dtype, d, causal, tile=tile, splits=decode,
                               pack=decode, paged=layout == "paged",
                               varlen=layout == "varlen", window=window,
                               softcap=cap)
        what = (f"{dtype} D={d} causal={int(causal)} window={window} "
                f"softcap={cap} split-kv+pack={int(decode)} {layout}")
        if so is None:
            yield Case("window", what, None, meta)
            continue
        bm, bn = meta["block_m"], meta["block_n"]
        if layout == "paged":
            cases = layout_shapes(layout, bm, bn, 2000) + \
                [("2,8,2,1,5000", ["--paged", "16", "--kv-splits", "64"])]
        elif layout == "varlen":
            cases = layout_shapes(layout, bm, bn)
        elif decode:
            cases = [("1,8,2,1,4000", []), ("2,8,2,4,1000", []),
                     ("1,8,2,1,3000", ["--kv-splits", "64"]),
                     ("2,8,2,3,2", [])]
        else:
            cases = [("1,4,2,{},{}".format(3 * bm + 5, 3 * bm + 5), []),
                     ("2,8,2,{},{}".format(bm - 3, 4 * bn + 9), []),
                     ("1,4,4,{},{}".format(2 * bm + 1, bn // 2), []),
                     ("1,4,2,7,{}".format(5 * bn + 3), [])]
        for shape, extra in cases:
            for dist in (("normal", "outliers") if cap else ("normal",)):
                yield Case("window",
                           f"{what} shape={shape} {' '.join(extra)} "
                           f"dist={dist}", so,
                           ["--shape", shape, "--seed", str(n),
                            "--dist", dist] + extra)
                n += 1
    # Scores far past the cap (scale 2: the uncapped row max is tens above
    # it): a max taken before the cap sends the capped exponentials below
    # f16's range (softcap-after-max), whatever the seed.
    so, meta = kernels.get("f16", 64, False, scale=2.0, softcap=5.0)
    what = "f16 D=64 causal=0 scale=2 softcap=5.0 (scores far past the cap)"
    if so is None:
        yield Case("window", what, None, meta)
        return
    for shape in ("1,4,2,37,200", "2,4,4,70,33"):
        yield Case("window", f"{what} shape={shape}", so,
                   ["--shape", shape, "--seed", str(n)])
        n += 1


# ALiBi and attention sinks (issue 32): (dtype, D, causal, window, softcap,
# alibi, sinks, split-KV + packing, layout, tile). fa-run draws the slopes
# (BLOOM's series times a factor per head) and the sinks (some rows where
# the sink dominates) from the seed.
ALIBI_SINKS_KERNELS = [
    ("f16", 64, True, None, None, True, False, False, "dense", None),
    ("f32", 128, False, None, None, False, True, False, "dense", None),
    ("f16", 64, True, (32, -1), None, True, True, False, "dense", None),
    ("f16", 64, True, None, None, True, True, True, "dense", (16, 64, 4)),
    ("f16", 64, True, None, None, False, True, True, "paged", (16, 64, 4)),
    ("f16", 64, False, None, None, True, True, False, "varlen", None),
    ("bf16", 64, True, None, 50.0, True, True, True, "dense", (16, 64, 4)),
    ("f32", 40, False, (64, 9), None, True, False, False, "dense", None),
]


def alibi_sinks_cases(kernels):
    """ALiBi slopes and attention sinks, alone and together, with causal,
    the window, softcap, GQA, split-KV with packing, paged and varlen: Lq <
    Lk (ALiBi's distance from the end), long keys (ALiBi's bias grows to
    thousands), Lq > Lk and empty sequences (rows that see no key: O = 0,
    LSE = the sink)."""
    n = 0
    for (dtype, d, causal, window, cap, alibi, sinks, decode, layout,
         tile) in ALIBI_SINKS_KERNELS:
        so, meta = kernels.get(dtype, d, causal, tile=tile, splits=decode,
                               pack=decode, paged=layout == "paged",
                               varlen=layout == "varlen", window=window,
                               softcap=cap, alibi=alibi, sinks=sinks)
        what = (f"{dtype} D={d} causal={int(causal)} window={window} "
                f"softcap={cap} alibi={int(alibi)} sinks={int(sinks)} "
                f"split-kv+pack={int(decode)} {layout}")
        if so is None:
            yield Case("alibi-sinks", what, None, meta)
            continue
        bm, bn = meta["block_m"], meta["block_n"]
        if layout in ("paged", "varlen"):
            cases = layout_shapes(layout, bm, bn, 1500)
        elif decode:
            cases = [("1,8,2,1,3000", []), ("2,8,2,4,700", []),
                     ("2,8,2,3,2", [])]
        else:
            cases = [("1,4,2,{},{}".format(bm - 3, 3 * bn + 9), []),
                     ("1,4,4,{},{}".format(2 * bm + 1, bn // 2), []),
                     ("1,2,1,5,{}".format(8 * bn + 3), [])]
        for shape, extra in cases:
            yield Case("alibi-sinks",
                       f"{what} shape={shape} {' '.join(extra)}", so,
                       ["--shape", shape, "--seed", str(n)] + extra)
            n += 1


SECTIONS = ["decode", "paged", "varlen", "mixed", "window", "alibi-sinks", "boundary",
            "strides", "matrix", "extra", "head-dims", "buffering-double",
            "buffering-single", "share-rows", "golden", "coverage"]


def section_cases(kernels, golden, name):
    if name == "coverage":
        # Every kernel the other sections build, again: their generators
        # fill kernels.built (compiled once, by whichever entry was first).
        for other in SECTIONS[:-1]:
            for _ in section_cases(kernels, golden, other):
                pass
        return coverage_cases(kernels)
    generators = {"decode": decode_cases, "paged": paged_cases,
                  "varlen": varlen_cases, "mixed": mixed_cases,
                  "window": window_cases,
                  "alibi-sinks": alibi_sinks_cases,
                  "boundary": boundary_cases,
                  "strides": stride_cases, "matrix": matrix_cases,
                  "extra": extra_cases, "head-dims": head_dim_cases,
                  "buffering-double":
                      lambda k: buffering_cases(k, "double"),
                  "buffering-single":
                      lambda k: buffering_cases(k, "single"),
                  "share-rows": share_rows_cases}
    if name == "golden":
        return golden_cases(kernels, golden)
    return generators[name](kernels)


def all_cases(kernels, golden, large=True):
    """Every section in order; `large` (GPU targets only) adds the shapes
    that need the on-device fp64 reference."""
    if kernels.target != "host" and large:
        yield from large_cases(kernels)
    # First: the mutation test (mutants.py) runs the cases in order until
    # one fails, and the split-KV and packing bugs show only here.
    yield from decode_cases(kernels)
    yield from paged_cases(kernels)
    yield from varlen_cases(kernels)
    yield from mixed_cases(kernels)
    yield from window_cases(kernels)
    yield from alibi_sinks_cases(kernels)
    yield from boundary_cases(kernels)
    yield from stride_cases(kernels)
    yield from matrix_cases(kernels)
    yield from extra_cases(kernels)
    yield from head_dim_cases(kernels)
    yield from buffering_cases(kernels)
    yield from share_rows_cases(kernels)
    yield from golden_cases(kernels, golden)
    yield from coverage_cases(kernels)


def run_case(fa_run, case, device="host"):
    """(passed, detail). A kernel that did not compile fails the case."""
    if case.kernel is None:
        return False, case.args
    # On the host: the race checker, and LDS filled with NaN bytes before
    # each workgroup, so that a read of LDS nobody wrote is seen.
    emulated = device in ("host", "gfx906-sim")
    checks = ["--check-races"] if emulated and \
        "--check-races" not in case.args else []
    if emulated:
        checks.append("--poison-lds")
    p = subprocess.run([fa_run, case.kernel] + case.args + checks +
                       ["--device", device, "--json"],
                       capture_output=True, text=True)
    if p.returncode < 0:
        # A crash is reported as one, with the last of what fa-run said.
        try:
            sig = signal.Signals(-p.returncode).name
        except ValueError:
            sig = f"signal {-p.returncode}"
        tail = (p.stderr.strip() or p.stdout.strip())[-1000:]
        return False, f"fa-run was killed by {sig}" + \
            (f"; its last output: {tail}" if tail else "; it printed nothing")
    try:
        report = json.loads(p.stdout)
    except json.JSONDecodeError:
        report = {}
    metrics = report.get("metrics", {})
    if p.returncode == 0:
        return True, f"max_abs={metrics.get('max_abs_diff', '?')}"
    def num(x):
        return f"{x:.4g}" if isinstance(x, (int, float)) else str(x)
    failed = [f"{c['name']} {num(c['value'])} (limit {num(c['limit'])})"
              for c in report.get("checks", []) if not c["pass"]]
    if failed:
        return False, "failed checks: " + ", ".join(failed)
    return False, p.stderr.strip() or json.dumps(report)[:2000]


def same_as_clean(kernel, clean_work):
    """Whether `kernel` (compiled with a planted bug) is byte for byte the
    kernel of the same name in `clean_work` (the clean suite's shared
    folder, whose cases the section entries ran): the bug did not reach
    it, so its cases cannot catch the bug and need not run again."""
    if not clean_work or kernel is None:
        return False
    clean = os.path.join(clean_work, os.path.basename(kernel))
    try:
        with open(kernel, "rb") as a, open(clean, "rb") as b:
            return a.read() == b.read()
    except OSError:
        return False


def hinted_failure(fac, fa_run, golden, work, plant_bug, target, device,
                   clean_work, hint):
    """Runs first the case `hint` ("section: label", where this bug was
    caught before): its kernel alone is compiled with the bug. Returns
    (case label, detail) if it fails, or None (then the caller runs the
    suite in order, as without a hint): the hint only changes which case
    runs first, never what counts as caught. The case list comes from the
    clean suite's folder (every kernel there already, nothing compiled);
    a hint whose kernel the bug gave other tiles (a manifest that differs
    in more than its register counts) is not used: its shapes would not be
    the mutant suite's."""
    clean = Kernels(fac, clean_work, target=target)
    for case in all_cases(clean, golden, large=False):
        if f"{case.section}: {case.label}" != hint:
            continue
        if case.kernel is None:
            return None
        name = os.path.splitext(os.path.basename(case.kernel))[0]
        mutant = Kernels(fac, work, plant_bug, target=target)
        path, meta = mutant.get(**clean.requests[name])
        if path is None:  # the bug broke the compile: the case fails
            return hint, meta
        with open(case.kernel + ".json") as f:
            clean_meta = json.load(f)["kernels"][0]
        # Registers may differ; what the cases are made of (tiles, stages,
        # scale...) must not.
        if {k: v for k, v in clean_meta.items() if k != "resources"} != \
                {k: v for k, v in meta.items() if k != "resources"}:
            return None
        if same_as_clean(path, clean_work):
            return None
        ok, detail = run_case(fa_run, Case(case.section, case.label, path,
                                           case.args), device)
        return None if ok else (hint, detail)
    return None


def first_failure(fac, fa_run, golden, work, plant_bug, target="host",
                  device="host", clean_work=None):
    """The first case of the suite that fails with `plant_bug` planted, as
    (case label, detail), or None when every case passes. With
    `clean_work`, cases whose kernel the bug left unchanged are skipped
    (same_as_clean)."""
    kernels = Kernels(fac, work, plant_bug, target=target)
    for case in all_cases(kernels, golden, large=False):
        if same_as_clean(case.kernel, clean_work):
            continue
        ok, detail = run_case(fa_run, case, device)
        if not ok:
            return f"{case.section}: {case.label}", detail
    return None


def write_plan(fac, golden, work, target, plan_path, sections=None):
    """Compiles every kernel of the suite (or of `sections`) for `target`;
    writes the cases."""
    base = os.path.dirname(os.path.abspath(plan_path))
    cases = []
    kernels = Kernels(fac, work, target=target)
    chosen = all_cases(kernels, golden) if not sections else \
        (c for name in sections for c in section_cases(kernels, golden, name))
    for case in chosen:
        rel = lambda p: os.path.relpath(p, base)
        args = [rel(a) if isinstance(a, str) and a.startswith(golden) else a
                for a in case.args] if case.kernel else case.args
        cases.append({"section": case.section, "label": case.label,
                      "kernel": rel(case.kernel) if case.kernel else None,
                      "args": args})
    with open(plan_path, "w") as f:
        json.dump({"target": target, "cases": cases}, f, indent=1)
    bad = [c for c in cases if c["kernel"] is None]
    print(f"e2e: wrote {len(cases)} cases for {target} to {plan_path}"
          + (f"; {len(bad)} kernels did not compile" if bad else ""))
    return 1 if bad else 0


def run_plan(plan_path, fa_run, device):
    base = os.path.dirname(os.path.abspath(plan_path))
    with open(plan_path) as f:
        plan = json.load(f)
    failures = 0
    for c in plan["cases"]:
        args = [os.path.join(base, a) if i > 0 and c["args"][i - 1] ==
                "--golden" else a for i, a in enumerate(c["args"])]
        case = Case(c["section"], c["label"],
                    os.path.join(base, c["kernel"]) if c["kernel"] else None,
                    args)
        ok, detail = run_case(fa_run, case, device)
        failures += not ok
        print(f"  {'PASS' if ok else 'FAIL'} {case.section}: {case.label} "
              + (detail if ok else f"\n    {detail}"), flush=True)
    print(f"e2e on {device}: {len(plan['cases'])} cases, "
          f"{failures} failure(s)")
    return 1 if failures else 0


def main():
    if sys.argv[1] == "--run-plan":
        device = sys.argv[sys.argv.index("--device") + 1]
        return run_plan(sys.argv[2], sys.argv[3], device)
    fac, fa_run, golden, work = sys.argv[1:5]
    target = sys.argv[sys.argv.index("--target") + 1] \
        if "--target" in sys.argv else "host"
    if "--write-plan" in sys.argv:
        plan = sys.argv[sys.argv.index("--write-plan") + 1]
        if "--shared-work" in sys.argv:
            prepare_shared_work(fac, work)  # the section entries' kernels
        else:
            shutil.rmtree(work, ignore_errors=True)
            os.makedirs(work)
        # --sections a,b: a plan of those sections only.
        only = sys.argv[sys.argv.index("--sections") + 1].split(",") \
            if "--sections" in sys.argv else None
        return write_plan(fac, golden, work, target, plan, only)
    # --target T --device D: compile for T here and run on D here (gfx906
    # on the gfx906-sim device); the large section needs a GPU's reference.
    device = sys.argv[sys.argv.index("--device") + 1] \
        if "--device" in sys.argv else "host"
    # --sections a,b: only those (SECTIONS' names), in the work folder the
    # other entries share, whose kernels are kept while fac is the same
    # binary; --compile-only compiles their kernels and runs nothing;
    # --list prints the cases (section and label) and runs nothing.
    sections = sys.argv[sys.argv.index("--sections") + 1].split(",") \
        if "--sections" in sys.argv else None
    if sections:
        unknown = [x for x in sections if x not in SECTIONS]
        if unknown:
            print(f"e2e: unknown section(s) {unknown}; known: {SECTIONS}")
            return 2
        prepare_shared_work(fac, work)
    else:
        # Start clean: kernels compiled by an older fac must not be reused.
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work)
    kernels = Kernels(fac, work, target=target)
    if sections:
        cases = itertools.chain.from_iterable(
            section_cases(kernels, golden, x) for x in sections)
    else:
        cases = all_cases(kernels, golden, large=False)
    if "--list" in sys.argv:
        for case in cases:
            print(f"{case.section}: {case.label}")
        return 0
    compile_only = "--compile-only" in sys.argv
    failures = count = 0
    section = None
    for case in cases:
        if compile_only:
            count += 1
            failures += case.kernel is None
            continue
        if case.section != section:
            section = case.section
            print(f"e2e: {section}", flush=True)
        ok, detail = run_case(fa_run, case, device)
        count += 1
        failures += not ok
        print(f"  {'PASS' if ok else 'FAIL'} {case.label} "
              + (detail if ok else f"\n    {detail}"), flush=True)
    if compile_only:
        print(f"e2e: compiled the kernels of {count} cases for {target}, "
              f"{failures} did not compile")
        for name, error in kernels.errors.items():
            print(f"  {name}: {error}")
        return 1 if failures else 0
    print(f"e2e: {count} cases, {failures} failure(s)")
    return 1 if failures else 0


def prepare_shared_work(fac, work):
    """The shared work folder, emptied when fac or this script changed (a
    stamp of their paths, sizes and times): kernels are compiled once per
    fac binary and reused by every section entry and the next make
    test."""
    stamp = "".join(f"{os.path.realpath(x)} {os.stat(x).st_size} "
                    f"{os.stat(x).st_mtime_ns}\n"
                    for x in (fac, os.path.abspath(__file__)))
    stamp_path = os.path.join(work, "fac.stamp")
    try:
        with open(stamp_path) as f:
            same = f.read() == stamp
    except OSError:
        same = False
    if not same:
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work, exist_ok=True)
        with open(stamp_path, "w") as f:
            f.write(stamp)


if __name__ == "__main__":
    sys.exit(main())
