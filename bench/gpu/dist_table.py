#!/usr/bin/env python3
"""The dgemm-dist records of a JSON Lines file as one table: shape, panel,
median time, TFLOP/s per GPU, J per TFLOP, the lowest rank's mean SM clock,
process wall and the check.  Used by panel_energy.sh and local_share.sh.
    dist_table.py RECORDS.jsonl"""
import json
import sys

print("%4s %6s %6s %6s %6s %8s %8s %8s %8s %6s  %s" % ("GPUs", "m", "n", "k", "panel", "time s", "TF/GPU",
      "J/TF", "MHz", "wall", "check"))
for line in open(sys.argv[1]):
    r = json.loads(line)
    t = (r.get("telemetry") or {}).get("over_ranks") or {}
    print("%4d %6d %6d %6d %6d %8.4f %8.2f %8.2f %8.0f %6.2f  %s" % (
        r["ranks"], r["m"], r["n"], r["k"], r["panel"], r["time_median"], r["tflops"] / r["ranks"],
        t.get("j_per_tflop") or 0, t.get("sm_mhz_mean_min") or 0, r["wall_seconds"],
        "PASSED" if (r.get("check") or {}).get("passed") else "FAILED or unchecked"))
