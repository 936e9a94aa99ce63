#!/usr/bin/env python3
"""ce_table.py CE.JSONL — the run.sh `ce` stage's table: per size, the
1-GPU run and the 2-GPU runs with NCCL and with the copy engines (--comm
ce): multiply time, per-GPU TFLOP/s and its % of the 1-GPU rate, exposed
communication, SM clock and power (rank 0's, the max over ranks)."""
import json
import sys


def tele(r):
    t = r.get("telemetry") or {}
    o = t.get("over_ranks") or {}
    if not o.get("measured"):
        return "-", "-", "-"
    j = o.get("j_per_tflop")
    return (f"{o['sm_mhz_mean_min']:.0f}", f"{o['power_w_max']:.0f}",
            f"{j:.2f}" if isinstance(j, (int, float)) else "-")


rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print(f"{'n':>6} {'GPUs':>4} {'comm':<6} {'time s':>8} {'TF/GPU':>7} {'% 1GPU':>7} "
      f"{'exposed s':>9} {'exp %':>6} {'MHz':>5} {'W max':>5} {'J/TF':>6} check")
for n in sorted({r["m"] for r in rows}):
    one = [r for r in rows if r["m"] == n and r["ranks"] == 1]
    base = one[-1]["tflops_per_gpu"] if one else None
    for r in [r for r in rows if r["m"] == n]:
        exp = (r.get("phases") or {}).get("exposed_comm", {}).get("max", float("nan"))
        pct = f"{100 * r['tflops_per_gpu'] / base:.1f}" if base else "-"
        chk = r.get("check") or {}
        mhz, w, j = tele(r)
        comm = r["comm"] if r["ranks"] > 1 else "-"
        print(f"{n:>6} {r['ranks']:>4} {comm:<6} {r['time_median']:>8.4f} "
              f"{r['tflops_per_gpu']:>7.2f} {pct:>7} {exp:>9.4f} "
              f"{100 * r['exposed_comm_fraction']:>6.1f} {mhz:>5} {w:>5} {j:>6} "
              f"{'PASSED' if chk.get('passed') else 'FAILED' if chk else '-'}")
