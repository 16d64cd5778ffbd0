#!/usr/bin/env python3
"""Writes one module with an f16 causal attention function for every head
dimension from 1 to 256 (usage: head_dims.py dense|paged|varlen)."""
import sys

layout = sys.argv[1]
for d in range(1, 257):
    t = f"tensor<?x?x?x{d}xf16>"
    lse = "tensor<?x?x?xf32>"
    if layout == "varlen":
        t, lse = f"tensor<?x?x{d}xf16>", "tensor<?x?xf32>"
        extra, meta = ", %a: tensor<?xi32>, %b: tensor<?xi32>", \
            " varlen(%a, %b : tensor<?xi32>, tensor<?xi32>)"
        types = f"{t}, {t}, {t}"
    elif layout == "paged":
        extra, meta = ", %a: tensor<?x?xi32>, %b: tensor<?xi32>", \
            " paged(%a, %b)"
        types = f"{t}, {t}, {t}, tensor<?x?xi32>, tensor<?xi32>"
    else:
        extra, meta, types = "", "", f"{t}, {t}, {t}"
    print(f"func.func @attention_d{d}(%q: {t}, %k: {t}, %v: {t}{extra}) -> "
          f"({t}, {lse}) {{\n"
          f"  %o, %lse = fa.attention %q, %k, %v{meta} causal : {types} -> "
          f"{t}, {lse}\n"
          f"  return %o, %lse : {t}, {lse}\n}}")
