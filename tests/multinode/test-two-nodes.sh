#!/bin/bash
# Two nodes, for real launches (ctest -L multinode): dgemm-dist across two
# "nodes" made on this machine (tests/multinode/two-nodes.sh: network, UTS
# and mount namespaces joined by a veth pair, a slurmd on each, slurmctld on
# node1), on the CPU backend, launched
#   srun -N2 -n2 and -n4 (--mpi=pmix), and
#   mpirun -n 2 and -n 4 over TCP (its remote daemon started on node2 by
#   tests/multinode/rsh-agent.sh),
# checking for each launch that
#   - the ranks landed on both nodes, as many on each as asked (the run
#     record's per-rank devices name the host),
#   - the run is correct (exit status 0, the check line PASSED, the record's
#     check passed) and its data crossed the veth (byte counters),
#   - dgemm-dist's own node communicator saw one node per host (its default
#     BLAS threads are the host's cores over the ranks of that host),
# and, with tests/multinode/node_probe.c under both launchers, that a GPU
# would be picked by node-local rank: on each node the local ranks are
# 0..n-1, agree with the launcher's (SLURM_LOCALID,
# OMPI_COMM_WORLD_LOCAL_RANK) and give distinct GPUs.
#
#   test-two-nodes.sh DGEMM_DIST NODE_PROBE
#
# Exits 77 (ctest: skipped) with the reason where two nodes cannot be made:
# not root, no ip/unshare/nsenter, no Slurm or munge, no namespaces.  Every
# process, namespace and the veth are gone when it exits, pass or fail; the
# directory too, unless DD_KEEP=1 (on failure the daemons' logs are printed).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
# shellcheck source-path=SCRIPTDIR
# shellcheck source=two-nodes.sh
source "$here/two-nodes.sh"

DGEMM_DIST=${1:?usage: $0 DGEMM_DIST NODE_PROBE}
PROBE=${2:?usage: $0 DGEMM_DIST NODE_PROBE}
SIZE=${DD_MULTINODE_SIZE:-600}
SKIP=77

fail() {
  echo "FAIL (two nodes): $*" >&2
  exit 1
}
[[ -x $DGEMM_DIST ]] || fail "dgemm-dist '$DGEMM_DIST' is not executable (build it first)"
[[ -x $PROBE ]] || fail "node probe '$PROBE' is not executable (build target dd-node-probe)"

if ! mn_check; then
  echo "SKIP (two nodes): cannot make two nodes on this machine: $MN_WHY"
  exit $SKIP
fi

# A short path: munged's socket path has a length limit.
WORK=$(mktemp -d /tmp/dd-multinode.XXXXXX)
passed=""
cleanup() {
  local rc=$?
  mn_down
  if [[ -z $passed && $rc != "$SKIP" ]]; then
    echo "--- last lines of the daemons' logs ($WORK)" >&2
    tail -n 12 "$WORK"/ctld/slurmctld.log "$WORK"/node*/slurmd.log "$WORK"/node*/munged.log >&2 2>/dev/null || true
  fi
  if [[ -n ${DD_KEEP:-} ]]; then
    echo "files kept in $WORK" >&2
  else
    rm -rf "$WORK"
  fi
  return "$rc"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM HUP

t0=$SECONDS
rc=0
mn_up "$WORK" || rc=$?
if ((rc == SKIP)); then
  echo "SKIP (two nodes): the namespaces or the veth could not be made (reason above)"
  exit $SKIP
fi
((rc == 0)) || fail "the two nodes did not come up"
echo "nodes up in $((SECONDS - t0)) s"

mn_in node1 srun --mpi=list 2>&1 | grep -q pmix \
  || fail "srun has no --mpi=pmix here (slurm-wlm-basic-plugins provides mpi/pmix_v4)"

# The runs and jobs see a user's environment, not the one ctest gives every
# test (jobs/dgemm.sbatch would take its DD_MPIRUN for the launcher), and
# dgemm-dist's own thread default is then cores over the ranks of its host.
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_user_env
unset OMP_NUM_THREADS OPENBLAS_NUM_THREADS
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cores=$(getconf _NPROCESSORS_ONLN)
# What must cross the link in a run: the half of A or B that the other node
# owns and needs (f64), halved again for slack.
min_bytes=$((SIZE * SIZE * 8 / 4))

veth_stats() { ip -n "${MN_NS[0]}" -j -s link show dev "$MN_VETH" >"$1"; }

# The launch as a person would type it on node1.
shown() {
  local s="$*"
  s=${s/#srun_on/srun --mpi=pmix -N2}
  s=${s/#mn_mpirun/mpirun --mca plm_rsh_agent rsh-agent.sh --mca btl tcp,self}
  echo "$s"
}

# run NAME RANKS_PER_NODE LAUNCHER... : dgemm-dist across the nodes, checked.
run() {
  local name=$1 per_node=$2 rc=0 t=$SECONDS
  shift 2
  local out=$WORK/$name.out json=$WORK/$name.jsonl
  echo "== $name: $(shown "$@") dgemm-dist --size $SIZE --backend cpu"
  veth_stats "$WORK/$name.before"
  "$@" "$DGEMM_DIST" --size "$SIZE" --backend cpu --json "$json" >"$out" 2>&1 || rc=$?
  veth_stats "$WORK/$name.after"
  ((rc == 0)) || { cat "$out" >&2; fail "$name: exit status $rc"; }
  grep -q '\.\.\.\.\.\. PASSED$' "$out" || { cat "$out" >&2; fail "$name: no PASSED check line"; }
  grep -E '^(hosts|grid) ' "$out" | sed 's/^/   /' || true
  python3 "$here/check.py" record "$json" "$per_node" "$cores" | sed 's/^/   /' \
    || { cat "$out" >&2; fail "$name: the run record is wrong"; }
  python3 "$here/check.py" traffic "$WORK/$name.before" "$WORK/$name.after" "$min_bytes" | sed 's/^/   /' \
    || fail "$name: the run's data did not cross the veth between the nodes"
  echo "   $name passed in $((SECONDS - t)) s"
}

# batch NAME LAUNCHER: jobs/dgemm.sbatch on both nodes (2 ranks each), as a
# user submits it; srun, or mpirun inside the allocation (its remote daemon
# started by Slurm, not by the agent).
batch() {
  local name=$1 launcher=$2 id state t=$SECONDS json=$WORK/$1.jsonl
  echo "== $name: DD_LAUNCHER=$launcher sbatch --nodes=2 --ntasks-per-node=2 --cpus-per-task=1" \
    "--gpus-per-node=0 jobs/dgemm.sbatch --size $SIZE --backend cpu"
  veth_stats "$WORK/$name.before"
  id=$(cd "$WORK" && DGEMM_DIST=$DGEMM_DIST DD_LAUNCHER=$launcher mn_in node1 sbatch --parsable \
    --nodes=2 --ntasks-per-node=2 --cpus-per-task=1 --gpus-per-node=0 --time=5 \
    "$repo/jobs/dgemm.sbatch" --size "$SIZE" --backend cpu --json "$json") \
    || fail "$name: sbatch refused the job"
  # shellcheck disable=SC2016 # expanded by the inner shell
  DD_SLURM_WAIT=120 mn_in node1 bash -c 'source "$1" && dd_slurm_wait "$2"' wait \
    "$repo/tests/slurm/private-slurm.sh" "$id" || fail "$name: job $id did not finish"
  veth_stats "$WORK/$name.after"
  state=$(mn_in node1 scontrol show job "$id" | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p')
  local log=$WORK/dgemm-dist-$id.out
  [[ $state == COMPLETED ]] || { cat "$log" >&2 || true; fail "$name: job $id is ${state:-unknown}, not COMPLETED"; }
  grep -q '^dgemm.sbatch: exit status 0' "$log" || { cat "$log" >&2; fail "$name: no 'exit status 0' in the job log"; }
  grep -q '\.\.\.\.\.\. PASSED$' "$log" || { cat "$log" >&2; fail "$name: no PASSED check line in the job log"; }
  grep '^dgemm.sbatch: running:' "$log" | sed 's/^/   /' || true
  python3 "$here/check.py" record "$json" 2 "$cores" 1 "$id" | sed 's/^/   /' \
    || { cat "$log" >&2; fail "$name: the run record is wrong"; }
  python3 "$here/check.py" traffic "$WORK/$name.before" "$WORK/$name.after" "$min_bytes" | sed 's/^/   /' \
    || fail "$name: the run's data did not cross the veth between the nodes"
  echo "   $name: job $id COMPLETED in $((SECONDS - t)) s"
}

# probe NAME RANKS_PER_NODE LAUNCHER... : the GPU each rank would pick.
probe() {
  local name=$1 per_node=$2 rc=0
  shift 2
  echo "== $name: $(shown "$@") dd-node-probe"
  "$@" "$PROBE" >"$WORK/$name.out" 2>&1 || rc=$?
  ((rc == 0)) || { cat "$WORK/$name.out" >&2; fail "$name: exit status $rc"; }
  python3 "$here/check.py" probe "$WORK/$name.out" "$per_node" | sed 's/^/   /' \
    || { cat "$WORK/$name.out" >&2; fail "$name: local ranks wrong"; }
}

srun_on() { mn_in node1 srun --mpi=pmix -N2 "$@"; }
run srun_n2 1 srun_on -n2 --ntasks-per-node=1
run srun_n4 2 srun_on -n4 --ntasks-per-node=2
probe srun_probe_n4 2 srun_on -n4 --ntasks-per-node=2
run mpirun_n2 1 mn_mpirun -n 2 --host node1:1,node2:1
run mpirun_n4 2 mn_mpirun -n 4 --host node1:2,node2:2
probe mpirun_probe_n4 2 mn_mpirun -n 4 --host node1:2,node2:2
batch sbatch_srun srun
batch sbatch_mpirun mpirun

passed=1
echo "PASS (two nodes): srun, mpirun and jobs/dgemm.sbatch (both launchers) put ranks on node1 and" \
  "node2, local ranks 0..n-1 per node, results PASSED, data over the veth; $((SECONDS - t0)) s"
