#!/usr/bin/env python3
"""fa's split-KV prefill build (the default prefill tiles compiled with
--kv-splits=runtime) against llama.cpp's tile kernel on the prefill shapes
of bench/results/2026-12-03-gfx906-timing-v2/vs_llama.json, under the MI50
timing model v2: ESTIMATES, never measurements. llama.cpp's times are read
from that file (bench/gfx906_vs_llama.py made them); fa's default and split
builds are compiled and estimated here. Run from a scratch folder:
  python3 ROOT/bench/gfx906_split_prefill.py [BUILD_DIR]
Prints one line per shape and writes out.json there."""
import json, subprocess, os, re, sys
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = sys.argv[1] if len(sys.argv) > 1 else os.path.join(ROOT, "build")
FAC = os.path.join(BUILD, "bin", "fac"); RUN = os.path.join(BUILD, "bin", "fa-run")
d=json.load(open(os.path.join(ROOT, 'bench/results/2026-12-03-gfx906-timing-v2/vs_llama.json')))
rows=[r for r in d['rows'] if r['section']=='prefill' and r['model']=='version=2']
out=[]
def build(D, split):
    src=f"a{D}.mlir"
    t=f"tensor<?x?x?x{D}xf16>"
    open(src,"w").write(f"func.func @attention(%q: {t}, %k: {t}, %v: {t}) -> {t} {{\n  %o = fa.attention %q, %k, %v causal : {t}, {t}, {t} -> {t}\n  return %o : {t}\n}}\n")
    name=f"d{D}_{'split' if split else 'def'}.hsaco"
    if not os.path.exists(name):
        subprocess.run([FAC,src,"--target=gfx906","-o",f"d{D}_def.hsaco"],check=True)
        m=json.load(open(f"d{D}_def.hsaco.json"))["kernels"][0]
        subprocess.run([FAC,src,"--target=gfx906","--kv-splits=runtime",f"--block-m={m['block_m']}",f"--block-n={m['block_n']}",f"--waves={m['threads']//64}","-o",f"d{D}_split.hsaco"],check=True)
    return name
for r in rows:
    D=r['d']; shape=",".join(map(str,r['shape']))
    res={}
    for split in (False,True):
        k=build(D,split)
        subprocess.run([RUN,k,"--device","gfx906-sim","--shape",shape,"--estimate-only","--estimate-samples","8","--estimate-json","e.json"],capture_output=True)
        e=json.load(open("e.json")); res[split]=(e["seconds"], e.get("limited_by"))
        if split:
            s=re.search(r"kv splits (\d+)", subprocess.run([RUN,k,"--device","gfx906-sim","--shape",shape,"--estimate-only","--estimate-samples","1"],capture_output=True,text=True).stdout)
            res['S']=s.group(1) if s else "?"
    out.append((D,shape,r['llama_s'],r['fa_s'],res[False][0],res[True][0],res['S'],res[True][1]))
    print(D,shape,f"llama {r['llama_s']*1e3:.3f} ms, fa(table) {r['fa_s']*1e3:.3f}, fa default {res[False][0]*1e3:.3f}, fa split {res[True][0]*1e3:.3f} (S={res['S']}) ratio default {r['llama_s']/res[False][0]:.2f} split {r['llama_s']/res[True][0]:.2f}",flush=True)
json.dump(out,open("out.json","w"))
