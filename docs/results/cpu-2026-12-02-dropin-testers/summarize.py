#!/usr/bin/env python3
"""summarize.py OUT — dpb3tim.sh's logs in one table: for each rank count
and N, the PDGEMM wall time of each way, median of the repetitions (and
the best, which the machine's other load disturbs least), each drop-in
way's speed relative to plain ScaLAPACK's (ScaLAPACK's time over the
drop-in's, from the medians and from the best), and the drop-in's own
count of served / handed-on calls on rank 0."""
import glob
import os
import re
import statistics
import sys

out = sys.argv[1]
times = {}  # (way, ranks) -> {N: [seconds]}
counts = {}
for path in sorted(glob.glob(os.path.join(out, "*-*rank-*.txt"))):
    m = re.fullmatch(r"(.+)-(\d+)rank-(\d+)\.txt", os.path.basename(path))
    if not m:
        continue
    way, ranks = m.group(1), int(m.group(2))
    text = open(path, encoding="utf-8", errors="replace").read()
    sizes = [int(x) for x in re.findall(r"^\s+(\d+)\s+\d+\s+\d+\s+L\s+[UL]\s+N\s+N", text, re.M)]
    secs = [float(x) for x in re.findall(r"\|\s+PDGEMM\s+([0-9.]+)\s", text)]
    for n, t in zip(sizes, secs):
        times.setdefault((way, ranks), {}).setdefault(n, []).append(t)
    c = re.search(r"rank 0: .*served (\d+), handed on (\d+)", text)
    if c:
        counts.setdefault((way, ranks), []).append((int(c.group(1)), int(c.group(2))))
print("| ranks | N | ScaLAPACK s, median (best) | drop-in cpu s | cpu speed vs ScaLAPACK, median (best) | drop-in auto s | auto speed vs ScaLAPACK | reps |")
print("| --- | --- | --- | --- | --- | --- | --- | --- |")
for ranks in sorted({r for _, r in times}):
    base = times.get(("scalapack", ranks), {})
    for n in sorted(base):
        b, bb = statistics.median(base[n]), min(base[n])
        row = [str(ranks), str(n), f"{b:.3f} ({bb:.3f})"]
        for way in ("dropin-cpu", "dropin-auto"):
            t = times.get((way, ranks), {}).get(n)
            if t:
                m, mb = statistics.median(t), min(t)
                row += [f"{m:.3f} ({mb:.3f})", f"{b / m:.2f}x ({bb / mb:.2f}x)"]
            else:
                row += ["-", "-"]
        row.append(str(len(base[n])))
        print("| " + " | ".join(row) + " |")
print()
for (way, ranks), c in sorted(counts.items()):
    served = sorted({s for s, _ in c})
    handed = sorted({h for _, h in c})
    print(f"{way}, {ranks} rank(s): rank 0 served {served}, handed on {handed} (per run)")
