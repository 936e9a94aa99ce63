#!/usr/bin/env python3
"""ladder_table.py — kernels/README.md's table of the ladder and the
production kernels against cuBLAS, from one gemm-bench run's JSON records.

    kernels/ladder_table.py RECORDS.jsonl [--size N] [--def kernels/kernels.def]

RECORDS: what `gemm-bench --json FILE` wrote (JSON Lines, one record per
row).  The table takes the burst rows (L2 flushed, median of the timed runs)
of the square shape N × N × N (default 4096) with beta 0, every kernel of
kernels.def in its order there (records under an earlier name, a DD_ALIAS
of kernels.def, count as the kernel's), cuBLAS last: TFLOP/s and % of
cuBLAS measured in the same run, FP32 and FP64.  A kernel or type without a
record prints "—", a failed check "FAILED".  The records must come from one
gemm-bench run (one command on one GPU): figures are only compared within
one run.  Exit 0, or 2 with a message (no record, several runs).
"""
import argparse
import json
import os
import re
import sys


def kernels_def(path):
    """The kernels in order and the aliases (old name -> name)."""
    order, alias = [], {}
    for line in open(path, encoding="utf-8"):
        m = re.match(r'^DD_KERNEL\([A-Za-z0-9_/]+, "([^"]+)", ', line)
        if m:
            order.append(m.group(1))
        m = re.match(r'^DD_ALIAS\("([^"]+)", "([^"]+)"\)', line)
        if m:
            alias[m.group(1)] = m.group(2)
    return order, alias


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("records")
    ap.add_argument("--size", type=int, default=4096)
    ap.add_argument("--def", dest="defs", default=os.path.join(here, "kernels.def"))
    a = ap.parse_args()
    order, alias = kernels_def(a.defs)
    rows, runs = {}, set()
    for line in open(a.records, encoding="utf-8"):
        line = line.strip()
        if not line:
            continue
        r = json.loads(line)
        if r.get("tool") != "gemm-bench" or r.get("dtype") not in ("f32", "f64"):
            continue
        if r.get("mode", "burst") != "burst" or r.get("beta") != 0:
            continue
        if not (r.get("m") == r.get("n") == r.get("k") == a.size):
            continue
        runs.add((r.get("command"), r.get("gpu")))
        name = alias.get(r["kernel"], r["kernel"])
        rows[(name, r["dtype"])] = r
    if not rows:
        sys.stderr.write(f"ladder_table.py: no burst record of {a.size}^3, beta 0, in "
                         f"{a.records}\n")
        return 2
    if len(runs) > 1:
        sys.stderr.write(f"ladder_table.py: {a.records} holds records of {len(runs)} runs "
                         "(figures are compared within one run):\n")
        for cmd, gpu in sorted(runs, key=str):
            sys.stderr.write(f"  {gpu}: {cmd}\n")
        return 2
    any_row = next(iter(rows.values()))

    def cells(name, dt):
        r = rows.get((name, dt))
        if r is None:
            return "—", "—"
        if r.get("status") != "ok":
            return "FAILED", "—"
        pct = "100%" if name == "cublas" else f"{r['pct_cublas']:.1f}%"
        return f"{r['tflops']:.2f}", pct

    names = [n for n in order if n != "cublas"] + ["cublas"]
    print(f"{any_row.get('gpu')}, cuBLAS {any_row.get('cublas')}, CUDA "
          f"{any_row.get('cuda_runtime')}; commit {any_row.get('commit', '?')}, "
          f"{any_row.get('timestamp', '?')}; n = {a.size}, beta 0, burst medians")
    print(f"command: {any_row.get('command')}")
    print()
    print("| kernel | FP32 TFLOP/s | % cuBLAS | FP64 TFLOP/s | % cuBLAS |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for n in names:
        s, sp = cells(n, "f32")
        d, dp = cells(n, "f64")
        if (s, d) == ("—", "—"):
            continue
        print(f"| {n} | {s} | {sp} | {d} | {dp} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
