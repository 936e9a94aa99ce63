#!/bin/bash
# mpirun's "ssh" between the two nodes of tests/multinode/two-nodes.sh
# (--mca plm_rsh_agent): Open MPI calls it as
#
#   rsh-agent.sh HOST COMMAND WORDS...
#
# as it would call `ssh HOST COMMAND WORDS...`, to start its daemon (orted)
# on HOST.  HOST is a node's name or address; the command is run there as
# ssh would run it (the words joined, given to a shell), in that node's
# network, UTS and mount namespaces, joined through the pid of the process
# that holds them ($MN_DIR/<node>/holder.pid).  MN_DIR comes from mpirun's
# environment (two-nodes.sh exports it).
set -euo pipefail
die() {
  echo "rsh-agent: $*" >&2
  exit 255 # what ssh returns when it cannot connect
}
(($# >= 2)) || die "usage: $0 HOST COMMAND..."
[[ -n ${MN_DIR:-} && -d $MN_DIR ]] || die "MN_DIR is not set to the two nodes' directory"
host=$1
shift
node=""
while read -r addr name; do
  if [[ $host == "$name" || $host == "$addr" ]]; then node=$name; fi
done <"$MN_DIR/hosts"
[[ -n $node && -s $MN_DIR/$node/holder.pid ]] || die "no node '$host' (nodes: $(cut -d' ' -f2 "$MN_DIR/hosts" | tr '\n' ' '))"
exec nsenter -t "$(cat "$MN_DIR/$node/holder.pid")" --net --uts --mount --wd=/ -- /bin/sh -c "$*"
