# shellcheck shell=bash
# Two "nodes" on one machine, for launches across hosts without a cluster:
# each node is a network namespace (its own interfaces, address, ports) with
# its own hostname (UTS namespace) and a private mount namespace, the two
# joined by a veth pair; a Slurm of one slurmctld and one slurmd per node,
# and a launch agent that lets mpirun start its remote daemon on the other
# node.  Needs root.  Sourced, not run:
#
#   source tests/multinode/two-nodes.sh
#   mn_check || exit 77          # why not in MN_WHY: not root, no ip, ...
#   mn_up "$dir"                 # nodes, link, munged, Slurm; trap mn_down
#   mn_in node1 srun -N2 ...     # run a command on a node
#   mn_mpirun -n 4 prog ...      # mpirun from node1 across both nodes
#   mn_down                      # everything gone: processes, namespaces, link
#
# What each node sees:
#   hostname      node1 / node2 (MN_NODES)
#   address       10.217.17.1 / .2 on a veth in 10.217.17.0/24 (MN_SUBNET),
#                 plus its own loopback; no route anywhere else
#   /etc/hosts    the two nodes and localhost (a bind mount in the node's
#                 mount namespace; the machine's own file is not touched)
#   $dir/run      the node's own directory ($dir/node1, $dir/node2), bind
#                 mounted: munged's socket, slurmd's spool, pid and log files,
#                 PMIx's directories, so that one slurm.conf names the same
#                 paths on both nodes; TMPDIR is $dir/run/tmp (Open MPI's
#                 session directories)
#   /dev/shm      the node's own ($dir/<node>/shm: Open MPI's shared memory)
# Every address and port lives in the test's own namespaces, so the fixed
# Slurm ports (6817, 6818) collide neither with the machine nor with another
# copy of this test, and no traffic leaves the two namespaces.
#
# Cleanup (mn_down, also from a watchdog if the caller is killed without
# running its traps): every process in the two network namespaces (the
# node holders, daemons, job steps, ranks: all started here) is stopped,
# then the namespaces are deleted, which deletes the veth pair with them.

MN_NODES=(node1 node2)
MN_SUBNET=10.217.17.0/24
MN_ADDRS=(10.217.17.1 10.217.17.2)
MN_LIB=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The daemons and ip live in sbin, which a user's PATH may lack.
PATH=$PATH:/usr/sbin:/sbin
export PATH

mn_say() { echo "two-nodes: $*" >&2; }

# Can namespaces, a veth and Slurm be had here?  If not, returns 1 with the
# reason in MN_WHY.
mn_check() {
  MN_WHY=""
  local why
  why=$(mn_check_ 2>&1 >/dev/null) && return 0
  export MN_WHY=${why#two-nodes: } # for the caller
  return 1
}
mn_check_() {
  if (($(id -u) != 0)); then
    mn_say "not root (uid $(id -u)): network namespaces and veth pairs need root"
    return 1
  fi
  local prog
  for prog in ip unshare nsenter setsid mount hostname python3; do
    command -v "$prog" >/dev/null 2>&1 || { mn_say "'$prog' not found (packages iproute2, util-linux, python3)"; return 1; }
  done
  for prog in munged slurmctld slurmd srun sinfo scontrol; do
    command -v "$prog" >/dev/null 2>&1 || { mn_say "'$prog' not found (apt-get install slurm-wlm munge)"; return 1; }
  done
  command -v mpirun >/dev/null 2>&1 || { mn_say "'mpirun' not found (apt-get install openmpi-bin)"; return 1; }
  # The capability itself: a throwaway namespace with its own hostname.
  local out
  if ! out=$(unshare --uts --net --mount sh -c 'hostname dd-probe && hostname' 2>&1) || [[ $out != dd-probe ]]; then
    mn_say "cannot make UTS/network/mount namespaces here (unshare: ${out:-failed}); a container without CAP_SYS_ADMIN?"
    return 1
  fi
  return 0
}

mn_pid() { # node -> its holder's pid
  local f=$MN_DIR/$1/holder.pid
  [[ -s $f ]] || { mn_say "no node '$1'"; return 1; }
  cat "$f"
}

# Run a command on a node: its network, hostname and mounts, the caller's
# working directory and environment, and the node's own TMPDIR.
mn_in() {
  local node=$1 pid
  shift
  pid=$(mn_pid "$node") || return 1
  nsenter -t "$pid" --net --uts --mount --wd="$PWD" -- env TMPDIR="$MN_DIR/run/tmp" "$@"
}

# mpirun on node1 across both nodes over TCP on the veth; the remote
# daemon is started by tests/multinode/rsh-agent.sh (mpirun's "ssh").
mn_mpirun() {
  mn_in node1 mpirun --mca plm_rsh_agent "$MN_LIB/rsh-agent.sh" \
    --mca btl tcp,self --mca btl_tcp_if_include "$MN_SUBNET" \
    --mca oob_tcp_if_include "$MN_SUBNET" --bind-to none "$@"
}

mn_node_up() { # index
  local i=$1 node=${MN_NODES[$1]} ns=${MN_NS[$1]} d=$MN_DIR/${MN_NODES[$1]}
  mkdir -p "$d/spool" "$d/pmix" "$d/shm" "$d/tmp" || return 1
  chmod 711 "$d" || return 1 # munged: its socket's directory searchable by all
  chmod 1777 "$d/shm" "$d/tmp" || return 1
  # (Callers test this function's status, which turns set -e off inside it:
  # every step that can fail says so.)
  { ip -n "$ns" addr add "${MN_ADDRS[$i]}/${MN_SUBNET#*/}" dev "$MN_VETH" \
    && ip -n "$ns" link set lo up && ip -n "$ns" link set "$MN_VETH" up; } \
    || { mn_say "could not address and raise $MN_VETH in $ns"; return 1; }
  # The holder: owns the node's UTS and mount namespaces for as long as the
  # node lives; every command on the node joins it (mn_in).  nsenter, not
  # `ip netns exec`: that remounts /sys, which hides /sys/fs/cgroup, and
  # slurmd will not start without it.
  # shellcheck disable=SC2016
  nsenter --net="/run/netns/$ns" unshare --uts --mount --propagation private -- bash -c '
    set -e
    hostname "$1"
    mount --bind "$2/hosts" /etc/hosts
    mount --bind "$2/$1/shm" /dev/shm
    mount --bind "$2/$1" "$2/run"
    echo $$ >"$2/$1/holder.pid.tmp"
    mv "$2/$1/holder.pid.tmp" "$2/$1/holder.pid"
    exec sleep infinity' holder "$node" "$MN_DIR" </dev/null >"$d/holder.log" 2>&1 &
  for _ in $(seq 1 50); do
    [[ -s $d/holder.pid ]] && break
    kill -0 $! 2>/dev/null || break
    sleep 0.1
  done
  [[ -s $d/holder.pid ]] || { mn_say "node $node did not come up: $(cat "$d/holder.log")"; return 1; }
  [[ $(mn_in "$node" hostname) == "$node" ]] || { mn_say "node $node has hostname '$(mn_in "$node" hostname)'"; return 1; }
  mn_in "$node" munged --force --socket="$MN_DIR/run/munge.sock" --key-file="$MN_DIR/munge.key" \
    --pid-file="$MN_DIR/run/munged.pid" --log-file="$MN_DIR/run/munged.log" \
    --seed-file="$MN_DIR/run/munged.seed" </dev/null \
    || { mn_say "munged did not start on $node; see $d/munged.log"; return 1; }
}

mn_write_conf() {
  local d=$MN_DIR cpus=${MN_CPUS:-4} i
  # The settings of tests/slurm/private-slurm.sh (see there why), for two
  # nodes at their own addresses.
  {
    cat <<CONF
ClusterName=ddmulti
SlurmctldHost=${MN_NODES[0]}(${MN_ADDRS[0]})
SlurmctldPort=6817
SlurmdPort=6818
SlurmUser=$(id -un)
SlurmdUser=$(id -un)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$d/run/munge.sock
StateSaveLocation=$d/ctld/state
SlurmdSpoolDir=$d/run/spool
SlurmctldPidFile=$d/ctld/slurmctld.pid
SlurmdPidFile=$d/run/slurmd.pid
SlurmctldLogFile=$d/ctld/slurmctld.log
SlurmdLogFile=$d/run/slurmd.log
SlurmctldDebug=info
SlurmdDebug=info
PlugStackConfig=$d/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SlurmdParameters=config_overrides
SchedulerType=sched/backfill
SchedulerParameters=sched_interval=1,sched_min_interval=100000,bf_interval=1
MpiDefault=none
ReturnToService=2
MinJobAge=86400
JobCompType=jobcomp/filetxt
JobCompLoc=$d/ctld/jobcomp.txt
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
MailProg=/bin/true
SlurmctldTimeout=30
SlurmdTimeout=30
InactiveLimit=0
KillWait=5
CONF
    for i in 0 1; do
      echo "NodeName=${MN_NODES[$i]} NodeAddr=${MN_ADDRS[$i]} CPUs=$cpus RealMemory=1000 State=UNKNOWN"
    done
    echo "PartitionName=ddmulti Nodes=${MN_NODES[0]},${MN_NODES[1]} Default=YES MaxTime=INFINITE OverSubscribe=YES State=UP"
  } >"$d/slurm.conf"
  : >"$d/plugstack.conf"
  # srun --mpi=pmix: slurmstepd's PMIx server makes its directories under
  # /tmp by default, named by job and step only, so the two nodes (one /tmp)
  # and any other Slurm on the machine would collide; each node its own.
  echo "PMIxCliTmpDirBase=$d/run/pmix" >"$d/mpi.conf"
}

# Start both nodes and Slurm in DIR (short: munge's socket path has a
# length limit).  Exports SLURM_CONF and MN_DIR.
mn_up() {
  MN_DIR=$(cd "$1" && pwd)
  export MN_DIR
  chmod 711 "$MN_DIR"
  local tag=$$ i
  MN_NS=("dd-mn$tag-${MN_NODES[0]}" "dd-mn$tag-${MN_NODES[1]}")
  MN_VETH=ddmn$tag # at most 11 characters (interface names: 15)
  printf '%s\n' "${MN_NS[@]}" >"$MN_DIR/namespaces"
  # The watchdog: if this shell dies without running mn_down (SIGKILL, a
  # ctest timeout), it does the cleanup; mn_down stops it.
  setsid bash "$MN_LIB/two-nodes.sh" --watch $$ "$MN_DIR" </dev/null >/dev/null 2>&1 &

  mkdir -p "$MN_DIR/run" "$MN_DIR/ctld/state" || return 1
  {
    echo "127.0.0.1 localhost"
    for i in 0 1; do echo "${MN_ADDRS[$i]} ${MN_NODES[$i]}"; done
  } >"$MN_DIR/hosts" || return 1
  dd if=/dev/urandom of="$MN_DIR/munge.key" bs=1024 count=1 status=none || return 1
  chmod 400 "$MN_DIR/munge.key" || return 1

  # Returns 77 where the machine cannot: the caller skips.
  if ! ip netns add "${MN_NS[0]}" || ! ip netns add "${MN_NS[1]}"; then
    mn_say "cannot make named network namespaces (ip netns add)"
    return 77
  fi
  # Both ends are made inside the namespaces: nothing appears on the host.
  ip link add "$MN_VETH" netns "${MN_NS[0]}" type veth peer name "$MN_VETH" netns "${MN_NS[1]}" \
    || { mn_say "cannot make a veth pair (kernel module veth?)"; return 77; }
  mn_node_up 0 || return 1
  mn_node_up 1 || return 1
  # node1 reaches node2 by name: a refused connection is an answer.
  mn_in node1 python3 -c '
import socket, sys
try:
    socket.create_connection(("node2", 9), 2)
except ConnectionRefusedError:
    sys.exit(0)
except OSError as e:
    sys.exit(f"{e}")' || { mn_say "node1 cannot reach node2 over the veth"; return 1; }

  mn_write_conf || return 1
  export SLURM_CONF=$MN_DIR/slurm.conf
  unset SLURM_JOB_ID SLURM_JOBID SLURM_NTASKS SLURM_NPROCS SLURM_STEP_NUM_TASKS SLURM_NODELIST

  mn_in node1 slurmctld -c -f "$SLURM_CONF" </dev/null \
    || { mn_say "slurmctld did not start; see $MN_DIR/ctld/slurmctld.log"; return 1; }
  for i in 0 1; do
    mn_in "${MN_NODES[$i]}" slurmd -f "$SLURM_CONF" </dev/null \
      || { mn_say "slurmd did not start on ${MN_NODES[$i]}; see $MN_DIR/${MN_NODES[$i]}/slurmd.log"; return 1; }
  done
  local states=""
  for i in $(seq 1 60); do
    states=$(mn_in node1 sinfo -h -N -o '%N=%T' 2>/dev/null | sort -u | tr '\n' ' ') || true
    if [[ " $states" =~ \ node1=(idle|mixed)\  && " $states" =~ \ node2=(idle|mixed)\  ]]; then
      mn_say "up: node1 ${MN_ADDRS[0]} and node2 ${MN_ADDRS[1]} on veth $MN_VETH," \
        "namespaces ${MN_NS[*]}, slurm: $states(dir $MN_DIR)"
      return 0
    fi
    sleep 0.5
  done
  mn_say "nodes not ready after 30 s (sinfo: '${states:-nothing}')"
  tail -n 15 "$MN_DIR"/ctld/slurmctld.log "$MN_DIR"/node*/slurmd.log >&2 || true
  return 1
}

# Stop every process in the namespaces (all of them started by this test),
# then delete the namespaces (and with them the veth pair).  Safe to call
# twice and after a partial start.  Leaves MN_DIR for the caller.
mn_teardown() { # dir
  local dir=$1 ns pids left i
  [[ -f $dir/namespaces ]] || return 0
  for i in $(seq 1 20); do
    left=""
    while read -r ns; do
      [[ -n $ns && -e /run/netns/$ns ]] || continue
      pids=$(ip netns pids "$ns" 2>/dev/null | tr '\n' ' ')
      [[ -n ${pids// /} ]] || continue
      left+=" $pids"
      # shellcheck disable=SC2086 # pids: a list of numbers
      if ((i == 1)); then kill $pids 2>/dev/null; elif ((i == 20)); then kill -9 $pids 2>/dev/null; fi
    done <"$dir/namespaces"
    [[ -n ${left// /} ]] || break
    sleep 0.25
  done
  while read -r ns; do
    [[ -n $ns && -e /run/netns/$ns ]] || continue
    ip netns del "$ns" 2>/dev/null || mn_say "could not delete namespace $ns"
  done <"$dir/namespaces"
  rm -f "$dir/namespaces"
}

mn_down() {
  [[ -n ${MN_DIR:-} && -d $MN_DIR ]] || return 0
  mn_teardown "$MN_DIR"
  # The watchdog is the leader of its own process group (setsid).
  local w
  w=$(cat "$MN_DIR/watchdog.pid" 2>/dev/null) || true
  if [[ $w =~ ^[0-9]+$ ]]; then
    kill -- "-$w" 2>/dev/null || kill "$w" 2>/dev/null || true
  fi
  rm -f "$MN_DIR/watchdog.pid"
  return 0
}

# The watchdog: bash two-nodes.sh --watch PID DIR
if [[ ${1:-} == --watch && ${BASH_SOURCE[0]} == "$0" ]]; then
  echo $$ >"$3/watchdog.pid"
  tail --pid="$2" -f /dev/null
  mn_teardown "$3"
  rm -rf "$3"
fi
