#!/bin/bash
# jobs/dgemm.sbatch submitted for real to a private Slurm whose node counts 4
# GPUs (gres without devices) and 32 CPUs:
#   - its own #SBATCH defaults (4 ranks, 4 GPUs, 8 CPUs per rank) with
#     --backend cpu, through srun --mpi=pmix: a checked run and its record;
#   - the CPU-only form (--gpus-per-node=0) through mpirun, bound to cores;
#   - what every rank receives: NCCL_* passed through with
#     NCCL_NVLS_ENABLE=0 unless set, SRUN_CPUS_PER_TASK, OMP_NUM_THREADS,
#     local ranks 0..3, for both launchers (a stand-in program prints them);
#   - a failing run fails the job; outside Slurm the script refuses.
#
#   tests/slurm/test-sbatch.sh DGEMM_DIST REPO_ROOT [WORK_DIR]
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
export DD_SLURM_GPUS=4 DD_SLURM_CPUS=32
slurm_test_init "$@"
sb=$REPO/jobs/dgemm.sbatch
export DD_MPIRUN_BIND="--bind-to none" DD_MPIRUN_ARGS="--oversubscribe"
unset OMP_NUM_THREADS # the script's default (--cpus-per-task) is under test

# ---- the defaults, srun, a checked run ------------------------------------------
j1=$(sbatch --parsable --output="$WORK/default-%j.out" "$sb" --backend cpu \
  --size 96,80,72 --repeat 2 --check --json "$WORK/default.jsonl")
# ---- CPU-only, mpirun ------------------------------------------------------------------
# mpirun's default mapping and binding (ppr, PE, cores): 2 ranks fit 2 cores.
j2=$(env -u DD_MPIRUN_BIND DD_LAUNCHER=mpirun sbatch --parsable --gpus-per-node=0 --ntasks-per-node=2 --cpus-per-task=1 \
  --output="$WORK/cpu-%j.out" "$sb" --backend cpu --size 64,64,64 --check --json "$WORK/cpu.jsonl")
# ---- the environment of every rank, both launchers ------------------------------
cat >"$WORK/envdump" <<'SH'
#!/bin/sh
# Under mpirun the batch step's SLURM_PROCID=0 is inherited: Open MPI's first.
rank=${OMPI_COMM_WORLD_RANK:-${SLURM_PROCID:-x}}
local_rank=${OMPI_COMM_WORLD_LOCAL_RANK:-${SLURM_LOCALID:-x}}
echo "rank=$rank local=$local_rank NCCL_DEBUG=${NCCL_DEBUG:-} NCCL_NVLS_ENABLE=${NCCL_NVLS_ENABLE:-}" \
  "SRUN_CPUS_PER_TASK=${SRUN_CPUS_PER_TASK:-} OMP_NUM_THREADS=${OMP_NUM_THREADS:-} args=$*"
SH
chmod +x "$WORK/envdump"
j3=$(env -u NCCL_NVLS_ENABLE DGEMM_DIST="$WORK/envdump" NCCL_DEBUG=WARN sbatch --parsable --cpus-per-task=2 \
  --output="$WORK/env-srun-%j.out" "$sb" --backend cpu --x 1)
j4=$(DGEMM_DIST=$WORK/envdump NCCL_DEBUG=WARN NCCL_NVLS_ENABLE=1 DD_LAUNCHER=mpirun \
  sbatch --parsable --cpus-per-task=2 --output="$WORK/env-mpirun-%j.out" "$sb" --backend cpu --x 1)
# ---- a run that fails ------------------------------------------------------------------
j5=$(sbatch --parsable --ntasks-per-node=2 --cpus-per-task=1 --output="$WORK/fail-%j.out" \
  "$sb" --backend cpu --in "$WORK/no-such-file.h5")
# a launcher with its arguments in DD_MPIRUN is refused, naming DD_MPIRUN_ARGS
j6=$(DD_LAUNCHER=mpirun DD_MPIRUN="mpirun --oversubscribe" sbatch --parsable --ntasks-per-node=1 \
  --output="$WORK/mpirunargs-%j.out" "$sb" --backend cpu --x 1)

dd_slurm_wait "$j1" "$j2" "$j3" "$j4" "$j5" "$j6" || fail "jobs did not finish"

show() { cat "$WORK"/*-"$1".out >&2; }
for j in "$j1" "$j2" "$j3" "$j4"; do
  [[ $(dd_slurm_state "$j") == COMPLETED ]] || { show "$j"; fail "job $j: $(dd_slurm_state "$j")"; }
done

log1=$WORK/default-$j1.out
grep -q '1 node(s) x 4 rank(s), 4 GPU(s)/node, 8 CPU(s)/rank (SRUN_CPUS_PER_TASK=8' "$log1" \
  || { show "$j1"; fail "defaults: expected 4 ranks, 4 GPUs and 8 CPUs per rank"; }
grep -q 'running: srun --mpi=pmix --ntasks=4 --ntasks-per-node=4 --kill-on-bad-exit=1 --gpu-bind=none' "$log1" \
  || { show "$j1"; fail "defaults: srun line"; }
grep -q 'PASSED' "$log1" || { show "$j1"; fail "defaults: no PASSED check line"; }
python3 - "$WORK/default.jsonl" "$j1" 4 "$WORK/cpu.jsonl" "$j2" 2 <<'PY' || fail "records"
import json, sys
a = sys.argv[1:]
for path, job, ranks in zip(a[0::3], a[1::3], a[2::3]):
    recs = [json.loads(l) for l in open(path) if l.strip()]
    assert len(recs) == 1, f"{path}: {len(recs)} records"
    r = recs[0]
    assert r["ranks"] == int(ranks), f"{path}: ranks {r['ranks']}"
    assert r["slurm_job_id"] == job, f"{path}: job {r['slurm_job_id']}"
    assert r["backend"] == "cpu" and r["check"]["passed"], f"{path}: {r['backend']} {r['check']}"
PY
grep -q 'running: mpirun -np 2 --map-by ppr:2:node:PE=1 --bind-to core' "$WORK/cpu-$j2.out" \
  || { show "$j2"; fail "CPU-only run did not use mpirun with its default binding"; }

for pair in "srun:$j3:NCCL_NVLS_ENABLE=0" "mpirun:$j4:NCCL_NVLS_ENABLE=1"; do
  IFS=: read -r how j nvls <<<"$pair"
  log=$WORK/env-$how-$j.out
  (($(grep -c '^rank=' "$log") == 4)) || { show "$j"; fail "$how: expected 4 ranks"; }
  for r in 0 1 2 3; do
    grep -q "^rank=$r local=$r NCCL_DEBUG=WARN $nvls SRUN_CPUS_PER_TASK=2 OMP_NUM_THREADS=2 args=--backend cpu --x 1\$" "$log" \
      || { show "$j"; fail "$how: rank $r did not get the expected environment and arguments"; }
  done
done

[[ $(dd_slurm_state "$j5") == FAILED ]] || { show "$j5"; fail "a failing run left its job $(dd_slurm_state "$j5")"; }
grep -q 'no-such-file.h5' "$WORK/fail-$j5.out" || { show "$j5"; fail "failing run: no message naming the file"; }
grep -Eq 'exit status [1-9]' "$WORK/fail-$j5.out" || { show "$j5"; fail "failing run: no exit status line"; }
[[ $(dd_slurm_state "$j6") == FAILED ]] || { show "$j6"; fail "DD_MPIRUN with arguments left its job $(dd_slurm_state "$j6")"; }
grep -q 'DD_MPIRUN_ARGS' "$WORK/mpirunargs-$j6.out" || { show "$j6"; fail "DD_MPIRUN with arguments: no message naming DD_MPIRUN_ARGS"; }

out=$(env -u SLURM_JOB_ID bash "$sb" --help 2>&1) && fail "outside Slurm the script should refuse"
grep -q 'not inside a Slurm job' <<<"$out" || fail "outside Slurm: message was: $out"

pass "defaults (4 ranks, 4 GPUs, srun/pmix), CPU-only mpirun, environment for both launchers, failure and refusal"
