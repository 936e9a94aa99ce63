#!/bin/bash
# A broken launch is refused: Slurm starts N tasks but the MPI library does
# not learn of it, so each task would be a world of one rank and compute the
# whole product alone, N times over.
#
#   srun --mpi=none -n 2 dgemm-dist ...   must fail, saying why.
#
# With Debian's Open MPI, MPI_Init itself refuses this launch (it sees
# Slurm's step but no PMI), so either explanation is accepted there.  An MPI
# without that check comes up as a singleton; the second case makes Open MPI
# do so by hiding SLURM_STEP_ID from it, and then dgemm-dist's own check
# (SLURM_STEP_NUM_TASKS against the world size) must speak.  A correct
# srun --mpi=pmix launch of the same command must still run.
#
#   tests/slurm/test-broken-launch.sh DGEMM_DIST REPO_ROOT [WORK_DIR]
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=common.sh
source "$(dirname "$0")/common.sh"
slurm_test_init "$@"

args=(--backend cpu --size 32x32x32 --repeat 1)
mismatch='Slurm started 2 tasks but MPI sees a world of 1'

rc=0
out=$(srun --mpi=none -n 2 "$DGEMM_DIST" "${args[@]}" --json "$WORK/none.jsonl" 2>&1) || rc=$?
((rc != 0)) || fail "srun --mpi=none -n 2 succeeded:"$'\n'"$out"
grep -Eq "$mismatch|launched using \"srun\"" <<<"$out" \
  || fail "srun --mpi=none -n 2 failed without saying why:"$'\n'"$out"
[[ ! -s $WORK/none.jsonl ]] || fail "srun --mpi=none -n 2 wrote a run record"
why=$(grep -Eo "$mismatch|launched using \"srun\"" <<<"$out" | head -1)

rc=0
out=$(srun --mpi=none -n 2 env -u SLURM_STEP_ID "$DGEMM_DIST" "${args[@]}" --json "$WORK/single.jsonl" 2>&1) || rc=$?
((rc != 0)) || fail "2 singleton tasks succeeded:"$'\n'"$out"
grep -q "$mismatch" <<<"$out" || fail "2 singleton tasks: no message about the mismatch:"$'\n'"$out"
[[ ! -s $WORK/single.jsonl ]] || fail "2 singleton tasks wrote a run record"

out=$(srun --mpi=pmix -n 2 "$DGEMM_DIST" "${args[@]}" --json "$WORK/pmix.jsonl" 2>&1) \
  || fail "srun --mpi=pmix -n 2 failed:"$'\n'"$out"
grep -q '"ranks":2' "$WORK/pmix.jsonl" || fail "srun --mpi=pmix -n 2: record does not say 2 ranks"

pass "srun --mpi=none -n 2 refused ('$why'); singletons refused by dgemm-dist; srun --mpi=pmix runs"
