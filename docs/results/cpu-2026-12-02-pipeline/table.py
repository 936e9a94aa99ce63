#!/usr/bin/env python3
"""table.py DIR — measure.sh's runs as a Markdown table: per size and
repetition the phased run (before) and the pipelined run (after): the
phases (slowest rank; read and write with their hidden seconds), the wall
from the record and from /usr/bin/time."""
import json
import sys

d = sys.argv[1]
runs = {}
for line in open(f"{d}/walls.txt"):
    n, rep, which, t = line.split()
    runs.setdefault(which, []).append((int(n), int(rep), float(t)))
rows = []
for which in ("old", "new"):
    recs = [json.loads(l) for l in open(f"{d}/rec-{which}.jsonl") if l.strip()]
    for (n, rep, t), r in zip(runs[which], recs):
        assert r["m"] == n, (r["m"], n)
        ph = {k: v["max"] for k, v in r["phases"].items()}
        p = r.get("pipeline")
        g = lambda k: ph.get(k, 0.0)
        hid = lambda k: f" ({p['hidden'][k]:.2f})" if p else ""
        rows.append((n, rep, which, f"| {n} | {rep} | {'after' if p else 'before'} | {g('setup'):.2f} | "
                     f"{g('read'):.2f}{hid('read')} | {g('multiply'):.2f} | {g('check'):.2f} | "
                     f"{g('write'):.2f}{hid('write')} | {g('teardown'):.2f} | {t:.2f} | "
                     f"{t - g('multiply'):.2f} |"))
print("| n | run | build | setup | read (hidden) | multiply | check | write (hidden) | teardown | "
      "wall | wall − multiply |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for row in sorted(rows, key=lambda x: (x[0], x[1], x[2] != "old")):
    print(row[3])
