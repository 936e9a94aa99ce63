#!/bin/bash
# jobs/aggregate on made-up records whose answers are known: pooling of
# repetitions, median and min, speed-up and efficiency (strong: T1/(N TN);
# weak: per-GPU rate), the fallback baseline when no 1-rank run exists, a
# run that left no record, malformed lines, and the plots, whose legends
# name every series: each strong-time ideal line is titled with its own
# series, and a weak series from plain record files (series "weak") is
# named by backend, dtype and size.  Needs neither Slurm nor dgemm-dist.
#
#   tests/slurm/test-aggregate.sh REPO_ROOT
set -euo pipefail
repo=${1:?usage: $0 REPO_ROOT}
work=$(mktemp -d "${TMPDIR:-/tmp}/test-aggregate.XXXXXX")
trap 'rc=$?; if ((rc == 0)); then rm -rf "$work"; else echo "files kept in $work" >&2; fi' EXIT

python3 - "$work" <<'PY'
import json, os, sys
work = sys.argv[1]

def rec(ranks, m, n, k, times, grid, job, **kw):
    r = {"tool": "dgemm-dist", "version": "0", "status": "ok", "ranks": ranks, "grid": grid,
         "backend": "cuda", "gpus": ranks, "dtype": "f64", "m": m, "n": n, "k": k,
         "multiply_times": times, "time_min": min(times), "time_median": sorted(times)[len(times) // 2],
         "slurm_job_id": job, "hosts": ["n1"], "exposed_comm_fraction": 0.02,
         "phases": {"read": {"min": 1, "avg": 1.5, "max": 2},
                    "multiply": {"min": 1, "avg": 2.0, "max": 3},
                    "exposed_comm": {"min": 0, "avg": 0.25, "max": 0.5}}}
    r.update(kw)
    return json.dumps(r)

def study(name, kind, rows, records, conf=""):
    d = os.path.join(work, name)
    os.makedirs(os.path.join(d, "records"))
    with open(os.path.join(d, "study.conf"), "w") as f:
        f.write(f"study={kind}\n{conf}")
    with open(os.path.join(d, "runs.tsv"), "w") as f:
        f.write("series\tranks\tnodes\ttasks_per_node\tm\tn\tk\tdtype\tjob\trecord\n")
        for r in rows:
            f.write("\t".join(str(x) for x in r) + "\n")
    for path, lines in records.items():
        with open(os.path.join(d, path), "w") as f:
            f.write("\n".join(lines) + "\n")

# strong, no 1-rank run, ranks 2 pooled from two records, ranks 8 missing,
# ranks 4 listed twice (a study extended with --force)
S = 1000
study("strong", "strong", [
    ("1000x1000x1000", 2, 1, 2, S, S, S, "f64", 102, "records/a-g2.jsonl"),
    ("1000x1000x1000", 4, 1, 4, S, S, S, "f64", 104, "records/a-g4.jsonl"),
    ("1000x1000x1000", 4, 1, 4, S, S, S, "f64", 114, "records/a-g4.jsonl"),  # --force: same file again
    ("1000x1000x1000", 8, 2, 4, S, S, S, "f64", 108, "records/a-g8.jsonl"),
], {"records/a-g2.jsonl": [rec(2, S, S, S, [1.0, 3.0], [1, 2], "102"),
                           "{not json",
                           rec(2, S, S, S, [2.0], [1, 2], "102"),
                           rec(2, S, S, S, [0.001], [1, 2], "102", status="failed")],
    "records/a-g4.jsonl": [rec(4, S, S, S, [1.25, 1.25, 1.0], [2, 2], "104")]})

# weak, --grow memory: N*sqrt(g); per-GPU rate 1 GFLOP/s at 1 GPU, 0.9 at 2, 0.8 at 4
def t(n, g, per_gpu_rate):
    return 2 * n ** 3 / (per_gpu_rate * g)
study("weak", "weak", [
    ("100x100x100-per-gpu", 1, 1, 1, 100, 100, 100, "f64", 201, "records/w-g1.jsonl"),
    ("100x100x100-per-gpu", 2, 1, 2, 141, 141, 141, "f64", 202, "records/w-g2.jsonl"),
    ("100x100x100-per-gpu", 4, 1, 4, 200, 200, 200, "f64", 204, "records/w-g4.jsonl"),
], {"records/w-g1.jsonl": [rec(1, 100, 100, 100, [t(100, 1, 1e9)], [1, 1], "201")],
    "records/w-g2.jsonl": [rec(2, 141, 141, 141, [t(141, 2, 0.9e9)], [1, 2], "202")],
    "records/w-g4.jsonl": [rec(4, 200, 200, 200, [t(200, 4, 0.8e9)], [2, 2], "204")]},
    conf="grow=memory\n")

# plain JSON Lines files, strong, with a 1-rank run
with open(os.path.join(work, "plain.jsonl"), "w") as f:
    f.write(rec(1, S, S, S, [4.0, 4.0, 5.0], [1, 1], None) + "\n")
    f.write(rec(2, S, S, S, [2.5], [1, 2], None) + "\n")

# plain files, strong, two problems (two series, each with its ideal line)
with open(os.path.join(work, "plain2.jsonl"), "w") as f:
    for n, t in ((S, 4.0), (2 * S, 32.0)):
        f.write(rec(1, n, n, n, [t], [1, 1], None) + "\n")
        f.write(rec(2, n, n, n, [t / 1.8], [1, 2], None) + "\n")

# plain files, weak, as the GPU figures were made (jobs/aggregate --study
# weak runs.jsonl): one series, named "weak" in the table
with open(os.path.join(work, "plain-weak.jsonl"), "w") as f:
    f.write(rec(1, 128, 128, 64, [1.0], [1, 1], None) + "\n")
    f.write(rec(2, 128, 256, 64, [1.04], [1, 2], None) + "\n")
PY

agg=$repo/jobs/aggregate
out=$(python3 "$agg" "$work/strong" 2>&1) || { echo "$out"; exit 1; }
grep -q 'no 1-rank run' <<<"$out" || { echo "no baseline warning: $out"; exit 1; }
grep -q 'not JSON' <<<"$out" || { echo "malformed line not reported: $out"; exit 1; }
python3 "$agg" "$work/weak" >/dev/null
python3 "$agg" --study strong "$work/plain.jsonl" --out "$work/plain" --no-plots >/dev/null
python3 "$agg" --study strong "$work/plain2.jsonl" --out "$work/plain2" >/dev/null
python3 "$agg" --study weak "$work/plain-weak.jsonl" --out "$work/plain-weak" >/dev/null
if python3 "$agg" --study weak "$work/strong/runs.tsv" --out "$work/none" --no-plots 2>/dev/null; then
  echo "a file without records should fail"
  exit 1
fi

python3 - "$work" <<'PY'
import csv, math, os, sys
work = sys.argv[1]

def rows(d):
    with open(os.path.join(work, d, "scaling.csv"), newline="") as f:
        return {int(r["ranks"]): r for r in csv.DictReader(f)}

def close(a, b, what):
    if not math.isclose(float(a), b, rel_tol=1e-5):
        sys.exit(f"{what}: {a} != {b}")

s = rows("strong")
assert sorted(s) == [2, 4, 8], sorted(s)
# ranks 2: times 1, 3, 2 pooled (the failed record and the bad line skipped)
close(s[2]["time_median"], 2.0, "pooled median")
close(s[2]["time_min"], 1.0, "pooled min")
assert s[2]["repetitions"] == "3", s[2]["repetitions"]
close(s[2]["tflops"], 2e9 / 2.0 / 1e12, "tflops")
close(s[4]["tflops_per_gpu"], 2e9 / 1.25 / 1e12 / 4, "tflops_per_gpu")
# baseline 2 ranks: speedup = 2 * T2 / T4 = 3.2, efficiency = 0.8
assert s[4]["baseline_ranks"] == "2"
close(s[2]["speedup"], 2.0, "baseline speedup")
close(s[2]["efficiency"], 1.0, "baseline efficiency")
close(s[4]["speedup"], 3.2, "speedup")
close(s[4]["efficiency"], 0.8, "efficiency")
assert "no 1-rank run" in s[4]["note"], s[4]["note"]
assert s[8]["time_median"] == "" and "no record from job 108" in s[8]["note"], s[8]
assert s[4]["grid"] == "2x2" and s[4]["gpus"] == "4"
assert s[4]["repetitions"] == "3", "a record file listed twice was read twice"
assert s[4]["jobs"] == "104 114", s[4]["jobs"]
close(s[4]["read_s"], 1.5, "read phase")
close(s[4]["exposed_comm_fraction"], 0.02, "exposed fraction")

w = rows("weak")
for g, e in ((1, 1.0), (2, 0.9), (4, 0.8)):
    close(w[g]["efficiency"], e, f"weak efficiency at {g}")
    close(w[g]["speedup"], e * g, f"weak speedup at {g}")
    assert w[g]["note"] == "", w[g]["note"]

p = rows("plain")
close(p[2]["speedup"], 4.0 / 2.5, "plain speedup")
close(p[2]["efficiency"], 4.0 / (2 * 2.5), "plain efficiency")
PY

for f in strong/plots/strong-time strong/plots/strong-speedup strong/plots/strong-efficiency \
  strong/plots/strong-phases-1000x1000x1000 weak/plots/weak-efficiency \
  weak/plots/weak-phases-100x100x100-per-gpu; do
  png=$work/$f.png
  [[ -s $png && $(head -c 8 "$png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] \
    || { echo "$png: not a PNG"; exit 1; }
done
# The legends (the gnuplot scripts' titles): every measured line names its
# series, and every ideal line names the series whose ideal it is.
python3 - "$work" <<'PY'
import os, re, sys
work = sys.argv[1]
LINE = re.compile(r"index (\d+) using \S+ with (linespoints|lines)[^\n]*?(notitle|title \"([^\"]*)\")")

def titles(gp):
    """(index, kind, title) of each plotted series line; kind measured or ideal."""
    text = open(os.path.join(work, gp), encoding="utf-8").read()
    return [(int(m.group(1)), "measured" if m.group(2) == "linespoints" else "ideal", m.group(4))
            for m in LINE.finditer(text)]

def expect(gp, want):
    got = titles(gp)
    if got != want:
        sys.exit(f"{gp}: legend titles\n  {got}\nexpected\n  {want}")

a, b = "M×N×K = 1000×1000×1000", "M×N×K = 2000×2000×2000"
expect("plain2/plots/strong-time.gp", [
    (0, "measured", a), (1, "measured", b),
    (0, "ideal", f"ideal T_1 / N, {a}"), (1, "ideal", f"ideal T_1 / N, {b}")])
# no 1-rank run: the ideal follows the 2-rank baseline
expect("strong/plots/strong-time.gp", [(0, "measured", a), (0, "ideal", f"ideal 2·T_2 / N, {a}")])
expect("plain2/plots/strong-efficiency.gp", [(0, "measured", a), (1, "measured", b)])
expect("plain-weak/plots/weak-efficiency.gp", [(0, "measured", "cuda f64, 128×128×64 per GPU")])
expect("weak/plots/weak-efficiency.gp",
       [(0, "measured", "cuda f64, 100×100×100 per GPU (grow memory)")])
phases = open(os.path.join(work, "plain-weak/plots/weak-phases-weak.gp"), encoding="utf-8").read()
if "cuda f64, 128×128×64 per GPU: time per phase" not in phases:
    sys.exit("plain-weak/plots/weak-phases-weak.gp: the title does not name the series")
PY
for f in plain2/plots/strong-time plain-weak/plots/weak-efficiency; do
  [[ $(head -c 8 "$work/$f.png" | od -An -tx1 | tr -d ' \n') == 89504e470d0a1a0a ]] \
    || { echo "$work/$f.png: not a PNG"; exit 1; }
done
echo "PASS (test-aggregate): pooling, baselines, strong and weak efficiency, missing runs, plots, legends"
