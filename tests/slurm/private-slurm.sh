# shellcheck shell=bash
# A private single-node Slurm for the tests: munged, slurmctld and slurmd
# from Debian's packages (slurm-wlm, munge), with every file, socket and key
# in one temporary directory, so that it neither needs nor touches the host's
# /etc/slurm, /etc/munge or /run/munge.  Sourced, not run:
#
#   source tests/slurm/private-slurm.sh
#   dd_slurm_up "$dir"          # exports SLURM_CONF; node = $(hostname -s)
#   trap dd_slurm_down EXIT     # stops all three daemons, also on failure
#   jobid=$(sbatch --parsable ...)
#   dd_slurm_wait "$jobid" ...  # waits until every job has left the queue
#   dd_slurm_state "$jobid"     # COMPLETED, FAILED, CANCELLED, ...
#
# Why each setting:
# - CPUs=$DD_SLURM_CPUS (default 8) even where nproc is 2: the sweeps ask for
#   up to 4 tasks; SlurmdParameters=config_overrides keeps slurmd from
#   draining a node whose configuration exceeds its hardware.
# - proctrack/linuxproc and task/none: no cgroups (containers, CI runners).
# - No accounting database: job end states come from `scontrol show job`,
#   kept for MinJobAge seconds, and from jobcomp/filetxt as a record.
# - SlurmUser and SlurmdUser are whoever runs this (root in CI; any user
#   works, jobs then run as that user).  Ports are asked of the kernel (bind
#   to port 0) so that parallel CI jobs on one host do not collide.
# - sched_interval and friends are short so that dependent jobs start within
#   a second or two instead of the default minute.

dd_slurm_die() {
  echo "private-slurm: $*" >&2
  return 1
}

# Two free TCP ports, one per line.
dd_slurm_free_ports() {
  python3 - <<'PY'
import socket
socks = []
for _ in range(2):
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    socks.append(s)
for s in socks:
    print(s.getsockname()[1])
PY
}

dd_slurm_up() {
  local dir=$1 cpus=${DD_SLURM_CPUS:-8}
  local prog
  for prog in munged slurmctld slurmd sbatch squeue scontrol; do
    command -v "$prog" >/dev/null 2>&1 \
      || PATH=$PATH:/usr/sbin command -v "$prog" >/dev/null 2>&1 \
      || dd_slurm_die "'$prog' not found: install Debian's packages slurm-wlm and munge (apt-get install slurm-wlm munge)" \
      || return 1
  done
  PATH=$PATH:/usr/sbin
  export PATH

  DD_SLURM_DIR=$(cd "$dir" && pwd)
  export DD_SLURM_DIR
  local d=$DD_SLURM_DIR
  mkdir -p "$d/state" "$d/spool/$(hostname -s)" "$d/log"
  chmod 700 "$d"

  # munge: a private key and socket.
  dd if=/dev/urandom of="$d/munge.key" bs=1024 count=1 status=none
  chmod 400 "$d/munge.key"
  munged --force --socket="$d/munge.sock" --key-file="$d/munge.key" \
    --pid-file="$d/munged.pid" --log-file="$d/log/munged.log" \
    --seed-file="$d/munged.seed" \
    || dd_slurm_die "munged did not start; see $d/log/munged.log" || return 1

  local host ctld_port slurmd_port ports
  host=$(hostname -s)
  ports=$(dd_slurm_free_ports) || return 1
  ctld_port=$(sed -n 1p <<<"$ports")
  slurmd_port=$(sed -n 2p <<<"$ports")

  : >"$d/plugstack.conf"
  # Optional GPUs that are only counted (no device files): lets a test submit
  # the GPU request of a real cluster (--gpus-per-node) and run the CPU backend.
  local gres="" grestypes=""
  if ((${DD_SLURM_GPUS:-0} > 0)); then
    gres="Gres=gpu:$DD_SLURM_GPUS"
    grestypes="GresTypes=gpu"
    # slurmd drops GPUs without device files; plain files stand in for them.
    mkdir -p "$d/dev"
    local g
    for ((g = 0; g < DD_SLURM_GPUS; g++)); do : >"$d/dev/nvidia$g"; done
    echo "NodeName=$host Name=gpu File=$d/dev/nvidia[0-$((DD_SLURM_GPUS - 1))]" >"$d/gres.conf"
  fi
  cat >"$d/slurm.conf" <<CONF
ClusterName=ddtest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$ctld_port
SlurmdPort=$slurmd_port
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/munge.sock
StateSaveLocation=$d/state
SlurmdSpoolDir=$d/spool/%n
SlurmctldPidFile=$d/slurmctld.pid
SlurmdPidFile=$d/slurmd.pid
SlurmctldLogFile=$d/log/slurmctld.log
SlurmdLogFile=$d/log/slurmd.log
SlurmctldDebug=info
SlurmdDebug=${DD_SLURMD_DEBUG:-info}
PlugStackConfig=$d/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,sched_min_interval=100000,bf_interval=1
MpiDefault=none
$grestypes
ReturnToService=2
MinJobAge=86400
JobCompType=jobcomp/filetxt
JobCompLoc=$d/jobcomp.txt
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
NodeName=$host NodeAddr=127.0.0.1 CPUs=$cpus $gres RealMemory=1000 State=UNKNOWN
PartitionName=ddtest Nodes=$host Default=YES MaxTime=INFINITE OverSubscribe=YES State=UP
CONF
  export SLURM_CONF=$d/slurm.conf
  # Client commands read these too; keep the caller's own Slurm out.
  unset SLURM_JOB_ID SLURM_JOBID SLURM_NTASKS SLURM_NPROCS SLURM_STEP_NUM_TASKS

  slurmctld -c -f "$SLURM_CONF" \
    || dd_slurm_die "slurmctld did not start; see $d/log/slurmctld.log" || return 1
  slurmd -f "$SLURM_CONF" \
    || dd_slurm_die "slurmd did not start; see $d/log/slurmd.log" || return 1

  local i state=""
  for i in $(seq 1 60); do
    state=$(sinfo -h -n "$host" -o %T 2>/dev/null | head -1) || true
    case $state in
      idle|mixed|allocated) echo "private-slurm: node $host is $state (cpus=$cpus, ports $ctld_port/$slurmd_port, dir $d)"; return 0 ;;
    esac
    sleep 0.5
  done
  echo "private-slurm: node $host not ready (state '${state:-none}') after 30 s" >&2
  tail -n 20 "$d/log/slurmctld.log" "$d/log/slurmd.log" >&2 || true
  return 1
}

# Stop whatever dd_slurm_up started; safe to call twice or after a partial
# start.  Only the processes named in our own pid files are signalled.
dd_slurm_down() {
  local d=${DD_SLURM_DIR:-}
  [[ -n $d && -d $d ]] || return 0
  if [[ -f $d/slurmctld.pid ]]; then
    scontrol shutdown >/dev/null 2>&1 || true
  fi
  local f pid i
  for f in slurmd.pid slurmctld.pid munged.pid; do
    [[ -f $d/$f ]] || continue
    pid=$(cat "$d/$f" 2>/dev/null) || continue
    [[ $pid =~ ^[0-9]+$ ]] || continue
    for i in $(seq 1 20); do
      kill -0 "$pid" 2>/dev/null || break
      [[ $i == 1 ]] && kill "$pid" 2>/dev/null
      sleep 0.25
    done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
    rm -f "$d/$f"
  done
  return 0
}

# The state of one job: PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, ...
dd_slurm_state() {
  scontrol show job "$1" 2>/dev/null | sed -n 's/.*JobState=\([A-Z_]*\).*/\1/p' | head -1
}

# Wait until none of the given jobs is pending or running; fail after
# $DD_SLURM_WAIT seconds (default 480), printing the queue.
dd_slurm_wait() {
  local deadline=$((SECONDS + ${DD_SLURM_WAIT:-480})) id state busy
  while :; do
    busy=0
    for id in "$@"; do
      state=$(dd_slurm_state "$id")
      case $state in
        PENDING|RUNNING|CONFIGURING|COMPLETING|SUSPENDED|REQUEUED|RESIZING|"") busy=1 ;;
      esac
    done
    ((busy)) || return 0
    if ((SECONDS > deadline)); then
      echo "private-slurm: jobs still queued after ${DD_SLURM_WAIT:-480} s:" >&2
      squeue -o '%.10i %.20j %.10T %.20r' >&2 || true
      return 1
    fi
    sleep 1
  done
}
