#!/usr/bin/env python3
"""docs/results/figures.py — the current figures, made from the records.

    python3 docs/results/figures.py            print the table
    python3 docs/results/figures.py --write    put it into every page below
    python3 docs/results/figures.py --check    exit 1 where a page's table
                                               differs from the records'

The table lives between the lines "<!-- figures -->" and
"<!-- /figures -->" of README.md and docs/results/README.md; each page
gets links relative to its own folder.  CURRENT below names the records
each row is made from: it is the one place to change when a newer run of
a kind lands (an entry of docs/results, its README saying how it ran).
Kernel names in older records are read through kernels/kernels.def's
aliases (23_dmma_pipe is dgemm_dmma).  Every figure is computed here from
the JSON records, none is typed in."""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "../.."))
PAGES = ["README.md", "docs/results/README.md"]

# The records of each kind the table is made from (paths under docs/results).
CURRENT = {
    # gemm-bench: production kernels against cuBLAS in the same run
    "kernels": ["h200-2026-12-01-production-move/burst-new.jsonl",
                "h200-2026-12-01-production-move/sustain-new.jsonl"],
    # dgemm-dist on one GPU: FP64, FP32 and ozaki2 at n = 16384 and 32768
    "one_gpu": ["h200-2026-12-01-final-1gpu/pergpu.jsonl"],
    # gemm-bench: the emulation on the INT8 tensor cores against cuBLAS, same runs
    "emulation": ["h200-2026-12-03-call-g/after2/rates-f32.jsonl",
                  "h200-2026-12-03-call-g/after2/rates-f64.jsonl",
                  "h200-2026-12-03-call-g/after2/sustain-f32.jsonl",
                  "h200-2026-12-03-call-g/after2/sustain-f64.jsonl"],
    # dgemm-dist on 1 and 2 GPUs of one host, alternated in one call
    "two_gpus": ["h200x2-2026-12-01-pergpu-23/default8192/p.jsonl"],
    # dgemm-dist file to file, checked
    # file to file: the pipelined runs (pinned slots) of one call; the median wall
    "whole_run": ["h200-2026-12-04-call-q/r/pipeline/pipeline.jsonl"],
    # the drop-in on pageable host data against cuBLASXt pinned, one GPU (hostdata.sh);
    # each dtype from the first record file that holds it
    "host_data": ["h200-2026-12-02-call-d/stage2/hostdata/hostdata.jsonl",
                  "h200-2026-12-02-call-d/stage3/hostdata/hostdata.jsonl"],
}


def aliases():
    out = {}
    for line in open(os.path.join(ROOT, "kernels/kernels.def"), encoding="utf-8"):
        m = re.match(r'\s*DD_ALIAS\("([^"]+)",\s*"([^"]+)"\)', line)
        if m:
            out[m.group(1)] = m.group(2)
    return out


ALIAS = aliases()


def records(kind):
    rows = []
    for rel in CURRENT[kind]:
        mine = []
        for line in open(os.path.join(HERE, rel), encoding="utf-8"):
            if line.strip():
                r = json.loads(line)
                r["kernel"] = ALIAS.get(r.get("kernel"), r.get("kernel"))
                r["_entry"] = rel.split("/")[0]
                r["_file"] = rel
                mine.append(r)
        # bench/gpu/pipeline.sh names its runs in walls.txt beside its
        # records, one line each in their order, for the last of them
        walls = os.path.join(HERE, os.path.dirname(rel), "walls.txt")
        names = [l.split()[0] for l in open(walls, encoding="utf-8") if l.strip()] \
            if os.path.exists(walls) else []
        for r, name in zip(mine[len(mine) - len(names):], names):
            r["_run"] = name
        rows += mine
    if not rows:
        sys.exit(f"figures: no records in {CURRENT[kind]}")
    return rows


def span(xs, fmt, unit=""):
    """'a' or 'a–b' over the values xs, each formatted with fmt, then unit."""
    lo, hi = fmt.format(min(xs)), fmt.format(max(xs))
    return (lo if lo == hi else f"{lo}–{hi}") + unit


def need(xs, what):
    if not xs:
        sys.exit(f"figures: the records hold no {what}")
    return xs


def table(prefix):
    """The Markdown table, links to entries written as prefix + entry + '/'."""
    link = lambda e: f"[{e}]({prefix}{e}/)"
    dates, rows = set(), []

    k = records("kernels")
    dates.update(r["timestamp"][:10] for r in k)
    for kern, ref, label in (("dgemm_dmma", "DGEMM", "FP64"), ("sgemm_dmma", "SGEMM", "FP32")):
        burst = [span(need([r["pct_cublas"] for r in k if r["kernel"] == kern and r["mode"] == "burst"
                            and r["m"] == n], f"{kern} burst at {n}"), "{:.0f}", "%") for n in (4096, 8192, 16384)]
        sus = need([r["pct_cublas"] for r in k if r["kernel"] == kern and r["mode"] == "sustained"],
                   f"{kern} sustained")
        n_sus = {r["m"] for r in k if r["kernel"] == kern and r["mode"] == "sustained"}
        rows.append((f"{label} kernel `{kern}` against cuBLAS {ref}, n = 4096 / 8192 / 16384",
                     f"{' / '.join(burst)} (burst); {span(sus, '{:.0f}', '%')} sustained at "
                     f"n = {'/'.join(map(str, sorted(n_sus)))}", link(k[0]["_entry"])))

    one = records("one_gpu")
    dates.update(r["timestamp"][:10] for r in one)
    pick = lambda kern, dt, n: need([r["tflops"] for r in one if r["kernel"] == kern and r["dtype"] == dt
                                     and r["m"] == n and r["check"]["passed"]], f"{kern} {dt} at {n}")
    rows.append(("dgemm-dist on 1 GPU, multiply phase, FP64 (`dgemm_dmma`), n = 16384 / 32768",
                 f"{span(pick('dgemm_dmma', 'f64', 16384), '{:.1f}')} / "
                 f"{span(pick('dgemm_dmma', 'f64', 32768), '{:.1f}')} TFLOP/s, checked", link(one[0]["_entry"])))
    rows.append(("the same, FP32 (`sgemm_dmma`) at 16384; FP64 on the INT8 tensor cores (`ozaki2-14`) at 32768",
                 f"{span(pick('sgemm_dmma', 'f32', 16384), '{:.1f}')} TFLOP/s; "
                 f"{span(pick('ozaki2-14', 'f64', 32768), '{:.1f}')} TFLOP/s FP64-equivalent", link(one[0]["_entry"])))

    e = records("emulation")
    dates.update(r["timestamp"][:10] for r in e)
    cells = []
    for kern, dt, ref in (("ozaki2", "f32", "SGEMM"), ("ozaki2-14", "f64", "DGEMM")):
        mine = [r for r in e if r["kernel"] in (kern, kern + "-s8") and r["dtype"] == dt and r["m"] == 16384
                and r["status"] == "ok"]
        burst = need([r for r in mine if r["kernel"] == kern and r["mode"] == "burst"], f"{kern} {dt} burst")
        sus = need([r for r in mine if r["mode"] == "sustained"], f"{kern} {dt} sustained")
        cells.append(f"{'FP32 `ozaki2` (8 moduli)' if dt == 'f32' else 'FP64 `ozaki2-14`'} "
                     f"{span([r['tflops'] for r in burst], '{:.1f}')} TFLOP/s "
                     f"({span([r['pct_cublas'] / 100 for r in burst], '{:.2f}', '×')} cuBLAS {ref}), "
                     f"{span([r['tflops'] for r in sus], '{:.1f}')} sustained 10 s")
    rows.append(("emulation on the INT8 tensor cores (Ozaki scheme II), n = 16384, checked against cuBLAS, "
                 "at the 700 W cap", "; ".join(cells), link(e[0]["_entry"])))

    two = records("two_gpus")
    dates.update(r["timestamp"][:10] for r in two)
    per, speed = [], []
    for n in (16384, 32768):
        g1 = need([r["tflops"] for r in two if r["gpus"] == 1 and r["m"] == n and r["check"]["passed"]], f"1 GPU at {n}")
        g2 = need([r for r in two if r["gpus"] == 2 and r["m"] == n and r["check"]["passed"]], f"2 GPUs at {n}")
        per.append(span([r["tflops_per_gpu"] for r in g2], "{:.1f}"))
        speed.append(span([r["tflops"] / x for r in g2 for x in g1], "{:.2f}", "×"))
    rows.append(("dgemm-dist on 2 GPUs (NVLink, copy engines), FP64, n = 16384 / 32768: per GPU; "
                 "speed-up over each 1-GPU run of the same call",
                 f"{' / '.join(per)} TFLOP/s; {' / '.join(speed)}", link(two[0]["_entry"])))

    # the pipelined runs with the defaults (pipeline.sh's "pipelined-N", where it names them)
    w = need([r for r in records("whole_run") if (r.get("pipeline") or {}).get("slots") == "pinned"
              and r["check"]["passed"] and r.get("_run", "pipelined-").startswith("pipelined-")],
             "pipelined file-to-file runs")
    dates.update(r["timestamp"][:10] for r in w)
    w.sort(key=lambda r: r["wall_seconds"])
    r = w[(len(w) - 1) // 2]
    ph, hid = r["phases"], r["pipeline"]["hidden"]
    rows.append((f"whole run, file to file as one pipeline, n = {r['m']} FP64, {r['gpus']} GPU, checked",
                 f"{r['wall_seconds']:.2f} s from the launch (median of {len(w)} runs): read "
                 f"{ph['read']['max']:.2f} s ({hid['read']:.2f} hidden), multiply {ph['multiply']['max']:.2f} s, "
                 f"write {ph['write']['max']:.2f} s ({hid['write']:.2f} hidden)", link(r["_entry"])))

    h = records("host_data")
    dates.update(r["timestamp"][:10] for r in h if "timestamp" in r)
    cells, entries = [], []
    for dt in ("f64", "f32", "c128", "c64"):
        src = need([r["_file"] for r in h if r.get("dtype") == dt], f"host data {dt}")[0]
        mine = [r for r in h if r["_file"] == src and r.get("dtype") == dt]
        dd = need([r["seconds"] for r in mine if r.get("impl") == "dgemm-dist" and r.get("tag") == "pipeline"],
                  f"the drop-in's pipeline, {dt}")
        xt = need([r["time_median"] for r in mine if r.get("tool") == "cublasxt-bench"
                   and r.get("host_memory") == "pinned" and r.get("check") == "passed"], f"cuBLASXt pinned, {dt}")
        cells.append(f"{dt} {dd[0]:.3f} s against {xt[0]:.3f} s ({xt[0] / dd[0]:.2f}×)")
        if src.split("/")[0] not in entries:
            entries.append(src.split("/")[0])
    rows.append(("the `pdgemm_` drop-in on pageable host data, 1 GPU, n = 16384, against cuBLASXt "
                 "on pinned data (tile 8192)", "; ".join(cells), ", ".join(link(e) for e in entries)))

    when = f"{min(dates)} to {max(dates)}" if len(dates) > 1 else dates.pop()
    out = [f"Measured {when} on NVIDIA H200 (records: the entries named in the last column).", "",
           "| what | measured | record |", "| --- | --- | --- |"]
    out += [f"| {a} | {b} | {c} |" for a, b, c in rows]
    return "\n".join(out)


BLOCK = re.compile(r"(<!-- figures -->\n)(.*?)(<!-- /figures -->)", re.S)


def page_table(page):
    prefix = os.path.relpath(HERE, os.path.dirname(os.path.join(ROOT, page)))
    prefix = "" if prefix == "." else prefix + "/"
    return table(prefix)


def main(argv):
    mode = argv[1] if len(argv) > 1 else "--print"
    if mode == "--print":
        print(table("docs/results/"))
        return 0
    bad = 0
    for page in PAGES:
        path = os.path.join(ROOT, page)
        text = open(path, encoding="utf-8").read()
        m = BLOCK.search(text)
        if not m:
            print(f"figures: {page} has no <!-- figures --> ... <!-- /figures --> block")
            bad += 1
            continue
        want = page_table(page) + "\n"
        if mode == "--write":
            with open(path, "w", encoding="utf-8") as f:
                f.write(text[:m.start(2)] + want + text[m.end(2):])
        elif m.group(2) != want:
            print(f"figures: {page}'s table differs from the records' (python3 docs/results/figures.py --write):")
            for a, b in zip(m.group(2).split("\n"), want.split("\n")):
                if a != b:
                    print(f"  page:    {a}\n  records: {b}")
            bad += 1
    if mode == "--check":
        print(f"figures: {len(PAGES) - bad} of {len(PAGES)} pages agree with the records")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
