#!/bin/bash
# Run one command inside a private single-node Slurm, then stop it: for
# trying jobs/ on a workstation or CI machine without a cluster, and for the
# CPU results in docs/results/.  Same Slurm as the tests (private-slurm.sh).
#
#   tests/slurm/with-private-slurm.sh [--cpus N] [--gpus N] [--keep DIR] -- COMMAND [ARGS...]
#
#   --cpus N   CPUs the node claims (default 8; more than the cores is fine)
#   --gpus N   GPUs the node counts, without devices (default 0)
#   --keep DIR put Slurm's state and logs in DIR and keep them
#
# Inside COMMAND, sbatch/squeue/scontrol talk to the private Slurm
# (SLURM_CONF is exported).  Example (the CPU plots of docs/cluster.md):
#   tests/slurm/with-private-slurm.sh -- jobs/strong-scaling --backend cpu \
#     --sizes 1536 --gpus "1 2 4" --tasks-per-node 4 --cpus-per-task 1 --wait ...
set -euo pipefail
# shellcheck source-path=SCRIPTDIR
# shellcheck source=private-slurm.sh
source "$(dirname "$0")/private-slurm.sh"

keep=""
while (($#)); do
  case $1 in
    --cpus) export DD_SLURM_CPUS=${2:?}; shift 2 ;;
    --gpus) export DD_SLURM_GPUS=${2:?}; shift 2 ;;
    --keep) keep=${2:?}; shift 2 ;;
    --) shift; break ;;
    -h | --help) sed -n '2,16s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) break ;;
  esac
done
(($#)) || { echo "usage: $0 [--cpus N] [--gpus N] [--keep DIR] -- COMMAND [ARGS...]" >&2; exit 2; }

if [[ -n $keep ]]; then
  mkdir -p "$keep"
  dir=$keep
else
  dir=$(mktemp -d "${TMPDIR:-/tmp}/private-slurm.XXXXXX")
fi
cleanup() {
  dd_slurm_down
  [[ -n $keep ]] || rm -rf "$dir"
}
trap cleanup EXIT
if (($(id -u) == 0)); then
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
dd_slurm_up "$dir" >&2
"$@"
