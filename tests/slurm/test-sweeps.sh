#!/bin/bash
# Strong and weak scaling sweeps submitted for real to a private Slurm, on
# the CPU backend with tiny sizes at 1, 2 and 4 ranks: every job completes,
# the aggregation writes a CSV with the right rows and consistent speed-up
# and efficiency, and the plots are valid PNGs.
#
#   tests/slurm/test-sweeps.sh DGEMM_DIST REPO_ROOT [WORK_DIR]
#
# Launchers: the strong sweep starts its ranks with srun --mpi=pmix (Debian
# 12's slurm-wlm ships mpi/pmix_v4 and its Open MPI links the same libpmix2,
# so direct launch works), the weak sweep with mpirun inside the job (Open
# MPI reads the allocation from Slurm).  Both launchers of jobs/dgemm.sbatch
# are thus exercised.  The node has 2 real cores: Slurm is told 8 CPUs and
# mpirun gets --oversubscribe --bind-to none.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
slurm_test_init "$@"

ranks="1 2 4"
common=(--backend cpu --gpus "$ranks" --tasks-per-node 4 --cpus-per-task 1
  --repeat 3 --warmup 1 --time 00:05:00 --dgemm-dist "$DGEMM_DIST")

# ---- dry run: the commands, nothing submitted ---------------------------------
dry=$("$REPO/jobs/strong-scaling" "${common[@]}" --sizes "64 48x40x56" --out "$WORK/dry" --dry-run)
[[ ! -e $WORK/dry ]] || fail "--dry-run created the study directory"
(($(grep -c 'sbatch --parsable' <<<"$dry") == 2 + 6 + 1)) \
  || fail "--dry-run should print 2 input, 6 run and 1 aggregation sbatch commands:"$'\n'"$dry"
# shellcheck disable=SC2016  # a literal ${gen_0}
grep -q 'dependency=afterok:${gen_0}' <<<"$dry" || fail "--dry-run: runs do not depend on their input job"
bash -n <<<"$dry" || fail "--dry-run output is not valid shell"

# ---- submit both studies -------------------------------------------------------
"$REPO/jobs/strong-scaling" "${common[@]}" --launcher srun \
  --sizes "64 48x40x56" --out "$WORK/strong" || fail "strong-scaling did not submit"
DD_MPIRUN_BIND="--bind-to none" DD_MPIRUN_ARGS="--oversubscribe" \
  "$REPO/jobs/weak-scaling" "${common[@]}" --launcher mpirun \
  --size-per-gpu 40 --grow memory --out "$WORK/weak" || fail "weak-scaling did not submit"

jobs_of() { # study dir -> every job id it submitted
  sed -n -e 's/^gen_jobs=//p' -e 's/^run_jobs=//p' -e 's/^aggregate_job=//p' "$1/study.conf" | tr '\n' ' '
}
strong_jobs=$(jobs_of "$WORK/strong")
weak_jobs=$(jobs_of "$WORK/weak")
# A study whose input generation fails: its runs are cancelled, not left
# pending for ever, and the aggregation still runs and reports them.
"$REPO/jobs/strong-scaling" "${common[@]}" --gpus "1 2" --sizes 8 --dgemm-dist /bin/false \
  --out "$WORK/broken" >/dev/null || fail "strong-scaling did not submit the broken study"
broken_jobs=$(jobs_of "$WORK/broken")

# shellcheck disable=SC2086  # lists of job ids
dd_slurm_wait $strong_jobs $weak_jobs $broken_jobs || fail "jobs did not finish in time"

read -r bgen brun1 brun2 bagg <<<"$broken_jobs"
assert_state "$bgen" FAILED "broken study, input job"
assert_state "$brun1" CANCELLED "broken study, run after a failed input"
assert_state "$brun2" CANCELLED "broken study, run after a failed input"
assert_state "$bagg" FAILED "broken study, aggregation (no records: exit status 1)"
grep -q "no record from job $brun1 (CANCELLED" "$WORK"/broken/logs/aggregate-"$bagg".out \
  || fail "broken study: the aggregation did not name the cancelled run"

for study in strong weak; do
  dir=$WORK/$study
  for id in $(jobs_of "$dir"); do
    state=$(dd_slurm_state "$id")
    if [[ $state != COMPLETED ]]; then
      tail -n 30 "$dir"/logs/*-"$id".out >&2 || true
      fail "$study: job $id ended $state"
    fi
  done
  for log in "$dir"/logs/*g[0-9]*-*.out; do
    grep -q 'exit status 0' "$log" || fail "$log: the run did not report exit status 0"
  done
done
grep -q -- '--mpi=pmix' "$WORK"/strong/logs/64x64x64-g4-*.out || fail "strong runs did not use srun --mpi=pmix"
grep -q -- 'running: mpirun' "$WORK"/weak/logs/40x40x40-per-gpu-g4-*.out || fail "weak runs did not use mpirun"

# ---- the tables -------------------------------------------------------------------
python3 - "$WORK/strong" "$WORK/weak" <<'PY' || fail "CSV check failed"
import csv, json, math, os, sys

def load(d):
    with open(os.path.join(d, "scaling.csv"), newline="") as f:
        return list(csv.DictReader(f))

def check(cond, msg):
    if not cond:
        sys.exit("  " + msg)

need = {"study", "series", "ranks", "gpus", "grid", "m", "n", "k", "dtype", "time_min",
        "time_median", "tflops", "tflops_per_gpu", "speedup", "efficiency",
        "exposed_comm_fraction", "baseline_ranks", "note"}
grids = {1: "1x1", 2: "1x2", 4: "2x2"}

strong_dir, weak_dir = sys.argv[1:3]
rows = load(strong_dir)
check(need <= set(rows[0]), f"strong: columns missing: {sorted(need - set(rows[0]))}")
check(len(rows) == 6, f"strong: {len(rows)} rows, expected 2 sizes x 3 rank counts")
series = {}
for r in rows:
    series.setdefault(r["series"], {})[int(r["ranks"])] = r
check(sorted(series) == ["48x40x56", "64x64x64"], f"strong: series {sorted(series)}")
for s, by in series.items():
    check(sorted(by) == [1, 2, 4], f"strong {s}: ranks {sorted(by)}")
    t1 = float(by[1]["time_median"])
    for g, r in by.items():
        tn, tmin = float(r["time_median"]), float(r["time_min"])
        check(r["study"] == "strong" and r["dtype"] == "f64", f"strong {s} g{g}: study/dtype {r}")
        check(r["grid"] == grids[g], f"strong {s} g{g}: grid {r['grid']}")
        check(f"{r['m']}x{r['n']}x{r['k']}" == s, f"strong {s} g{g}: size {r['m']},{r['n']},{r['k']}")
        check(0 < tmin <= tn < 60, f"strong {s} g{g}: times {tmin} {tn}")
        check(r["baseline_ranks"] == "1" and r["note"] == "", f"strong {s} g{g}: baseline {r['baseline_ranks']} note {r['note']!r}")
        sp, eff = float(r["speedup"]), float(r["efficiency"])
        check(math.isclose(sp, t1 / tn, rel_tol=1e-4), f"strong {s} g{g}: speedup {sp} != T1/TN {t1 / tn}")
        check(math.isclose(eff, t1 / (g * tn), rel_tol=1e-4), f"strong {s} g{g}: efficiency {eff}")
        check(0 < eff <= 4, f"strong {s} g{g}: implausible efficiency {eff}")
        tf = 2 * int(r["m"]) * int(r["n"]) * int(r["k"]) / tn / 1e12
        check(math.isclose(float(r["tflops"]), tf, rel_tol=1e-4), f"strong {s} g{g}: tflops")
        check(math.isclose(float(r["tflops_per_gpu"]), tf / g, rel_tol=1e-4), f"strong {s} g{g}: tflops_per_gpu")
        check(0 <= float(r["exposed_comm_fraction"]) <= 1, f"strong {s} g{g}: exposed_comm_fraction")
        check(int(r["repetitions"]) == 3, f"strong {s} g{g}: {r['repetitions']} repetitions, expected 3")
    check(by[1]["speedup"] == "1" and by[1]["efficiency"] == "1", f"strong {s}: baseline not 1")

rows = load(weak_dir)
check(need <= set(rows[0]), "weak: columns missing")
check(len(rows) == 3, f"weak: {len(rows)} rows, expected 3")
by = {int(r["ranks"]): r for r in rows}
check(sorted(by) == [1, 2, 4], f"weak: ranks {sorted(by)}")
sizes = {g: round(40 * math.sqrt(g)) for g in by}   # --grow memory: N*sqrt(g)
r1 = 2 * 40 ** 3 / float(by[1]["time_median"])
for g, r in by.items():
    check(r["study"] == "weak" and r["grid"] == grids[g], f"weak g{g}: {r['study']} {r['grid']}")
    check(int(r["m"]) == int(r["n"]) == int(r["k"]) == sizes[g], f"weak g{g}: size {r['m']} expected {sizes[g]}")
    rate = 2 * sizes[g] ** 3 / float(r["time_median"])
    eff = float(r["efficiency"])
    check(math.isclose(eff, rate / g / r1, rel_tol=1e-4), f"weak g{g}: efficiency {eff} != per-rank rate ratio {rate / g / r1}")
    check(0 < eff <= 4, f"weak g{g}: implausible efficiency {eff}")

# every run's record names its own Slurm job
for d in (strong_dir, weak_dir):
    with open(os.path.join(d, "runs.tsv")) as f:
        for entry in csv.DictReader(f, delimiter="\t"):
            with open(os.path.join(d, entry["record"])) as rf:
                recs = [json.loads(l) for l in rf if l.strip()]
            check(len(recs) == 1, f"{entry['record']}: {len(recs)} records")
            check(recs[0]["slurm_job_id"] == entry["job"], f"{entry['record']}: job {recs[0]['slurm_job_id']} != {entry['job']}")
            check(recs[0]["ranks"] == int(entry["ranks"]), f"{entry['record']}: ranks")
print("CSV checks passed")
PY

# ---- the plots ---------------------------------------------------------------------
for f in strong-time strong-speedup strong-efficiency strong-phases-64x64x64 strong-phases-48x40x56; do
  assert_png "$WORK/strong/plots/$f.png"
done
for f in weak-efficiency weak-phases-40x40x40-per-gpu; do
  assert_png "$WORK/weak/plots/$f.png"
done

pass "strong (srun) and weak (mpirun) sweeps: $(wc -w <<<"$strong_jobs $weak_jobs") jobs completed, CSV and plots checked; a failed input cancels its runs and the aggregation reports them"
