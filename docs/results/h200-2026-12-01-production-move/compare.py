#!/usr/bin/env python3
"""compare.py [ENTRY] — the production kernels before and after the move,
from this entry's records: per kernel, type, size and mode, the % of
cuBLAS (each binary timed cuBLAS itself, in the same run) of every run of
the old binary (2a17873, names 23_dmma_pipe, 24_sgemm_dmma) and the new
one (c326bbf, dgemm_dmma, sgemm_dmma), and new minus old in points."""
import json
import os
import sys

here = sys.argv[1] if len(sys.argv) > 1 else os.path.dirname(os.path.abspath(__file__))
alias = {"23_dmma_pipe": "dgemm_dmma", "24_sgemm_dmma": "sgemm_dmma"}
rows = {}
for side in ("old", "new"):
    for kind in ("burst", "sustain"):
        for line in open(os.path.join(here, f"{kind}-{side}.jsonl")):
            r = json.loads(line)
            k = alias.get(r["kernel"], r["kernel"])
            if k == "cublas" or (kind == "sustain" and r["mode"] != "sustained"):
                continue
            rows.setdefault((k, r["dtype"], r["m"], r["mode"]), {}).setdefault(side, []).append(
                r["pct_cublas"])
print("| kernel | type | n | mode | old % of cuBLAS | new % of cuBLAS | new − old |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for (k, t, n, mode), v in sorted(rows.items(), key=lambda x: (x[0][1], x[0][3], x[0][2])):
    o, w = v.get("old", []), v.get("new", [])
    d = sum(w) / len(w) - sum(o) / len(o) if o and w else float("nan")
    print(f"| {k} | {t} | {n} | {mode} | {' / '.join(f'{x:.1f}' for x in o)} | "
          f"{' / '.join(f'{x:.1f}' for x in w)} | {d:+.1f} |")
