#!/usr/bin/env python3
"""The panel sweep of bench/gpu/run.sh (stage panels) as a table: per size,
panel and comm backend the median multiply, the per-GPU rate against the
1-GPU run at the same panel and against the best 1-GPU run, the exposed
communication, the GPUs' mean SM clock and the check.

    bench/gpu/panels.py panels.jsonl
"""
import json
import sys


def clock(r):
    t = (r.get("telemetry") or {}).get("ranks") or []
    mhz = [g.get("sm_mhz_mean") for g in t if isinstance(g, dict) and g.get("sm_mhz_mean")]
    return f"{sum(mhz) / len(mhz):.0f}" if mhz else "-"


def main(path):
    rows = [json.loads(line) for line in open(path) if line.strip()]
    one = {(r["m"], r["panel"]): r["time_median"] for r in rows if r["ranks"] == 1}
    print("| n | panel | GPUs | comm | multiply s | TFLOP/s per GPU | per GPU vs 1 GPU, same panel "
          "| vs best 1 GPU | exposed | SM MHz | check |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in sorted(rows, key=lambda r: (r["m"], r["panel"], r["ranks"], r["comm"])):
        n, nb, g, t = r["m"], r["panel"], r["ranks"], r["time_median"]
        same = one.get((n, nb))
        best = min((v for (m, _), v in one.items() if m == n), default=None)
        rel = f"{same / (g * t) * 100:.1f}%" if same and g > 1 else "-"
        relb = f"{best / (g * t) * 100:.1f}%" if best else "-"
        chk = r.get("check") or {}
        print(f"| {n} | {nb} | {g} | {r['comm']} | {t:.4f} | {r['tflops_per_gpu']:.2f} | {rel} "
              f"| {relb} | {r['exposed_comm_fraction'] * 100:.2f}% | {clock(r)} "
              f"| {'PASSED' if chk.get('passed') else 'FAILED'} |")


if __name__ == "__main__":
    main(sys.argv[1])
