#!/usr/bin/env python3
"""Checks for the two-node test (tests/multinode/test-two-nodes.sh).

  check.py record FILE.jsonl RANKS_PER_NODE CORES [THREADS [JOBID]]
      dgemm-dist's JSON record of a run across node1 and node2: status ok,
      check passed, ranks = 2 x RANKS_PER_NODE, hosts node1 and node2, and
      the per-rank devices ("CPU <host> (<T> BLAS threads)") put
      RANKS_PER_NODE ranks on each node.  Without THREADS, T must be what
      dgemm-dist derives from its own node communicator
      (MPI_Comm_split_type): the host's CORES over the ranks on that host;
      where that differs from what one shared node would give, it shows the
      split saw two nodes.  With THREADS (a job that sets OMP_NUM_THREADS),
      T must be THREADS; with JOBID, the record's slurm_job_id too.
  check.py probe FILE RANKS_PER_NODE
      node_probe's lines: on each node the node-local ranks are 0..n-1 in
      world-rank order, agree with the launcher's local rank, and would pick
      distinct GPUs.
  check.py traffic BEFORE AFTER MIN_BYTES
      `ip -j -s link` of the veth before and after a run: at least MIN_BYTES
      sent and received over it.

Prints one summary line; exits 1 with the reason on failure.
"""
import json
import re
import sys

NODES = ["node1", "node2"]


def fail(msg):
    print(f"check.py: {msg}", file=sys.stderr)
    sys.exit(1)


def record(path, per_node, cores, fixed=None, jobid=None):
    per_node, cores = int(per_node), int(cores)
    with open(path) as f:
        lines = [l for l in f if l.strip()]
    if len(lines) != 1:
        fail(f"{path}: {len(lines)} records, expected 1")
    r = json.loads(lines[0])
    if r.get("status") != "ok":
        fail(f"{path}: status {r.get('status')!r}")
    chk = r.get("check") or {}
    if chk.get("passed") is not True:
        fail(f"{path}: check not passed: {chk}")
    if r.get("ranks") != 2 * per_node:
        fail(f"{path}: {r.get('ranks')} ranks, expected {2 * per_node}")
    if sorted(r.get("hosts") or []) != NODES:
        fail(f"{path}: hosts {r.get('hosts')}, expected {NODES}")
    devs = r.get("devices") or []
    if len(devs) != r["ranks"]:
        fail(f"{path}: {len(devs)} devices for {r['ranks']} ranks")
    where, threads = [], []
    for d in devs:
        m = re.fullmatch(r"CPU (\S+) \((\d+) BLAS threads?\)", d)
        if not m:
            fail(f"{path}: device {d!r} is not 'CPU <host> (<n> BLAS threads)'")
        where.append(m.group(1))
        threads.append(int(m.group(2)))
    for n in NODES:
        if where.count(n) != per_node:
            fail(f"{path}: {where.count(n)} ranks on {n}, expected {per_node} (ranks: {where})")
    # dgemm-dist's default: cores over the ranks of the host, at least 1
    # (OPENBLAS_NUM_THREADS and OMP_NUM_THREADS unset by the test).
    def want(local):
        return cores // local if cores > local else 1

    if jobid is not None and r.get("slurm_job_id") != jobid:
        fail(f"{path}: slurm_job_id {r.get('slurm_job_id')!r}, expected {jobid!r}")
    right, wrong = want(per_node), want(2 * per_node)
    told = ""
    if fixed is not None:
        if any(t != int(fixed) for t in threads):
            fail(f"{path}: BLAS threads {threads}, expected {fixed} each (OMP_NUM_THREADS)")
        told = f", {fixed} BLAS thread(s) per rank as the job asked"
    elif right <= 64 and wrong <= 64:  # OpenBLAS's MAX_THREADS in Debian's build
        if any(t != right for t in threads):
            fail(f"{path}: BLAS threads {threads}, expected {right} each "
                 f"({cores} cores over {per_node} rank(s) per node; "
                 f"{wrong} would mean one node of {2 * per_node})")
        told = (f", {right} BLAS thread(s) per rank: node communicator of {per_node}"
                + (" (one node would give %d)" % wrong if wrong != right else ""))
    print(f"ranks on {', '.join(f'{i}:{h}' for i, h in enumerate(where))}{told}; "
          f"check passed, residual {chk.get('residual'):.2g}")


def probe(path, per_node):
    per_node = int(per_node)
    rows = []
    with open(path) as f:
        for line in f:
            m = re.fullmatch(r"rank (\d+) host (\S+) node_rank (\d+) node_size (\d+) "
                             r"launcher_local_rank (-?\d+) gpu (\d+)\n?", line)
            if m:
                rows.append((int(m[1]), m[2], int(m[3]), int(m[4]), int(m[5]), int(m[6])))
    if len(rows) != 2 * per_node:
        fail(f"{path}: {len(rows)} probe lines, expected {2 * per_node}")
    summary = []
    for n in NODES:
        mine = sorted(r for r in rows if r[1] == n)
        if len(mine) != per_node:
            fail(f"{path}: {len(mine)} ranks on {n}, expected {per_node}: {rows}")
        local = [r[2] for r in mine]
        if local != list(range(per_node)):
            fail(f"{path}: node ranks on {n} in world order are {local}, expected 0..{per_node - 1}")
        if any(r[3] != per_node for r in mine):
            fail(f"{path}: node sizes on {n} are {[r[3] for r in mine]}, expected {per_node}")
        if [r[4] for r in mine] != local:
            fail(f"{path}: launcher's local ranks on {n} are {[r[4] for r in mine]}, "
                 f"the node communicator's {local}")
        gpus = [r[5] for r in mine]
        if len(set(gpus)) != len(gpus):
            fail(f"{path}: ranks on {n} would share GPUs {gpus}")
        summary.append(f"{n}: ranks {[r[0] for r in mine]} local {local} gpu {gpus}")
    print("; ".join(summary))


def traffic(before, after, min_bytes):
    def stats(path):
        with open(path) as f:
            s = json.load(f)[0]["stats64"]
        return s["tx"]["bytes"], s["rx"]["bytes"]

    (tx0, rx0), (tx1, rx1) = stats(before), stats(after)
    tx, rx = tx1 - tx0, rx1 - rx0
    if tx < int(min_bytes) or rx < int(min_bytes):
        fail(f"only {tx} bytes sent and {rx} received over the veth, expected >= {min_bytes} each way")
    print(f"veth: {tx / 1e6:.2f} MB sent, {rx / 1e6:.2f} MB received by node1")


if __name__ == "__main__":
    cmds = {"record": record, "probe": probe, "traffic": traffic}
    if len(sys.argv) < 2 or sys.argv[1] not in cmds:
        fail("usage: check.py record|probe|traffic ARGS")
    cmds[sys.argv[1]](*sys.argv[2:])
