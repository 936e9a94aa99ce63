#!/usr/bin/env python3
"""Summary table of a GPU run (bench/gpu/run.sh): the design targets
(docs/design.md), each figure with the records it came from.
Usage: summarize.py OUTDIR"""
import json
import os
import sys


def load(path):
    if not os.path.exists(path):
        return []
    out = []
    for line in open(path):
        line = line.strip()
        if line:
            try:
                out.append(json.loads(line))
            except json.JSONDecodeError:
                pass
    return out


out = sys.argv[1]
runs = load(os.path.join(out, "runs.jsonl"))
kb = load(os.path.join(out, "gemm-bench.jsonl"))
xt = load(os.path.join(out, "cublasxt.jsonl"))


def find(ranks, m, n, k, dtype="f64", comm=None, cublas=False):
    for r in reversed(runs):
        if (r["ranks"], r["m"], r["n"], r["k"], r["dtype"]) != (ranks, m, n, k, dtype):
            continue
        if comm and r["comm"] != comm:
            continue
        if (r["kernel"] == "cublas") != cublas:
            continue
        return r
    return None


def bare(kernel, dtype, n):
    """cuBLAS's rate at n×n×n: from a cublas row, or from any kernel's row
    through its measured % of cuBLAS (gemm-bench times cuBLAS beside it)."""
    best = None
    for r in kb:
        name = r.get("kernel") or r.get("name")
        t = r.get("dtype") or r.get("type")
        if t != dtype or (r.get("m"), r.get("n"), r.get("k")) != (n, n, n) or r.get("status") != "ok":
            continue
        if name == kernel:
            best = r.get("tflops")
        elif kernel == "cublas" and r.get("pct_cublas") and best is None:
            best = r["tflops"] / (r["pct_cublas"] / 100.0)
    return best


sizes = sorted({r["m"] for r in runs if r["ranks"] == 1}) or [16384]
N = max(sizes)
gpu = runs[0]["devices"][0] if runs else "?"
rows = []


def row(what, value, target, ok, note=""):
    rows.append((what, value, target, "met" if ok else ("MISSED" if ok is not None else "n/a"), note))


r1 = find(1, N, N, N)
r1c = find(1, N, N, N, cublas=True)
cb = bare("cublas", "f64", N)
if r1 and cb:
    ratio = r1["tflops"] / cb
    row(f"1 GPU multiply phase vs bare cuBLAS DGEMM, n={N}",
        f"{r1['tflops']:.1f} / {cb:.1f} TFLOP/s = {100 * ratio:.1f}%", ">= 95%", ratio >= 0.95,
        f"kernel {r1['kernel']}")
if r1c and cb:
    ratio = r1c["tflops"] / cb
    row(f"1 GPU multiply phase (--kernel cublas) vs bare cuBLAS, n={N}",
        f"{r1c['tflops']:.1f} / {cb:.1f} TFLOP/s = {100 * ratio:.1f}%", "driver overhead", None)
s2 = find(2, N, N, N, comm="nccl")
if r1 and s2:
    sp = r1["time_median"] / s2["time_median"]
    row(f"strong scaling 1 -> 2 GPUs, n={N}, NCCL", f"{sp:.2f}x ({s2['tflops']:.1f} TFLOP/s)",
        ">= 1.9x", sp >= 1.9, f"grid {s2['grid']}")
    row("exposed communication, strong, 2 GPUs", f"{100 * s2['exposed_comm_fraction']:.2f}%",
        "<= 5%", s2["exposed_comm_fraction"] <= 0.05)
w2 = find(2, N, 2 * N, N, comm="nccl")
if r1 and w2:
    eff = w2["tflops_per_gpu"] / r1["tflops"]
    row(f"weak scaling 1 -> 2 GPUs ({N}x{2 * N}x{N} on 2)",
        f"{w2['tflops_per_gpu']:.1f} vs {r1['tflops']:.1f} TFLOP/s per GPU = {100 * eff:.1f}%",
        ">= 95%", eff >= 0.95)
    row("exposed communication, weak, 2 GPUs", f"{100 * w2['exposed_comm_fraction']:.2f}%",
        "<= 5%", w2["exposed_comm_fraction"] <= 0.05)
if s2 and xt:
    x = [r for r in xt if r.get("n") == N and r.get("dtype", "f64") == "f64"]
    if x:
        x = max(x, key=lambda r: r["tflops"])  # best block size
        ph = s2["phases"]
        if s2.get("host_to_host"):
            h2h, how = s2["host_to_host"], "streamed pass (--host-to-host)"
        else:
            h2h = ph.get("upload", {}).get("max", 0) + s2["time_median"] + ph.get("download", {}).get("max", 0)
            how = "upload + multiply + download, in sequence"
        tf = 2.0 * N ** 3 / h2h / 1e12
        row(f"2 GPUs host-to-host vs cuBLASXt (best block {x.get('block', '?')}), n={N}",
            f"{tf:.1f} vs {x['tflops']:.1f} TFLOP/s = {tf / x['tflops']:.2f}x", ">= 2x (design target), > 1x (issue 3)",
            tf / x["tflops"] >= 2.0, how)
m2 = find(2, N, N, N, comm="mpi")
if s2 and m2:
    row(f"2 GPUs MPI ({m2['comm_detail']}) vs NCCL, n={N}",
        f"multiply {1e3 * m2['time_median']:.1f} vs {1e3 * s2['time_median']:.1f} ms; exposed "
        f"{100 * m2['exposed_comm_fraction']:.1f}% vs {100 * s2['exposed_comm_fraction']:.1f}%", "-", None)
f1 = find(1, N, N, N, dtype="f32")
cbs = bare("cublas", "f32", N)
if f1 and cbs:
    row(f"1 GPU FP32 multiply phase vs bare cuBLAS SGEMM, n={N}",
        f"{f1['tflops']:.1f} / {cbs:.1f} TFLOP/s = {100 * f1['tflops'] / cbs:.1f}%", "-", None,
        f"kernel {f1['kernel']}")

print(f"# GPU run summary ({gpu})\n")
print("| what | measured | target | verdict | note |")
print("| --- | --- | --- | --- | --- |")
for r in rows:
    print("| " + " | ".join(r) + " |")
print("\n## dgemm-dist runs\n")
print("| ranks | grid | dtype | M×N×K | comm | kernel | median ms | TFLOP/s | per GPU | exposed | check |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for r in runs:
    chk = r["check"]
    print(f"| {r['ranks']} | {r['grid'][0]}x{r['grid'][1]} | {r['dtype']} | {r['m']}×{r['n']}×{r['k']} | "
          f"{r['comm']} | {r['kernel']} | {1e3 * r['time_median']:.2f} | {r['tflops']:.2f} | "
          f"{r['tflops_per_gpu']:.2f} | {100 * r['exposed_comm_fraction']:.2f}% | "
          f"{'PASSED' if chk and chk['passed'] else 'FAILED' if chk else '-'} {chk['residual'] if chk else ''} |")
