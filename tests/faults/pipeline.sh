#!/usr/bin/env bash
# Faults in the middle of the file-to-file pipeline (src/driver/run_pipe.c,
# src/driver/run_pipe_loop.c's band loops, src/driver/run_pipe_io.c's threads):
# on one rank of 2 and of 4, the I/O thread's read of a band of op(A)
# (DD_FAULT=pipe-read:1), its write of a band of C (pipe-write:1), the main
# thread's store of a band (pipe-store:1), the multiply of a band
# (multiply:1), each at the middle band, and the put of the second band
# (pipe-stage:1 with pipe-slots:*, the GPU's moves on the CPU: in slots of
# dd_plan_host_alloc, and with pipe-pageable in plain slots through the
# staging; drained on the error path), and the read and the store with
# pipe-slots:* (failing in that loop).  Every rank
# ends within seconds
# with the same status (1) and one "dgemm-dist: error:" line naming the
# fault; the old output is kept, no temporary is left, nothing hangs (the
# I/O thread is joined on every path).  The same faults on rank 0 alone,
# and a pipelined run after them, which succeeds.
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$dir/common.sh"
cd "$work" || exit 1

"${mpirun[@]}" -n 1 "$DD_BIN" gen --out in.h5 -m 64 -n 40 -k 48 --quiet || exit 1
"${mpirun[@]}" -n 1 "$DD_BIN" --in in.h5 --out c.h5 --quiet || exit 1
old=$(sum c.h5)

for fault in pipe-read pipe-write pipe-store multiply pipe-stage plain-stage staged-read staged-store; do
    for where in "1 2" "1 4" "0 2"; do
        read -r rank n <<<"$where"
        begin "${fault}_fault_mid_pipeline_on_rank${rank}_of_${n}"
        faults="$fault:$rank"
        # the GPU's bands fail on the second band's put: in pinned slots moved
        # straight, and in plain slots through the staging (pipe-pageable)
        [ "$fault" = pipe-stage ] && faults="pipe-slots:*,pipe-stage:$rank"
        [ "$fault" = plain-stage ] && faults="pipe-slots:*,pipe-pageable:*,pipe-stage:$rank"
        # the read and the store failing inside the staged loop: message and
        # rank kept
        [ "$fault" = staged-read ] && faults="pipe-slots:*,pipe-read:$rank"
        [ "$fault" = staged-store ] && faults="pipe-slots:*,pipe-store:$rank"
        DD_FAULT="$faults" run "$n" 30 --in in.h5 --out c.h5 --force --panel 8 --quiet
        expect_rc 1 "injected fault"
        [ "$fault" = multiply ] || grep -q "rank $rank" "$work/stderr" ||
            problem "the message does not name rank $rank"
        [ "$ms" -le 15000 ] || problem "took $ms ms to end"
        [ "$(sum c.h5)" = "$old" ] || problem "the old output changed"
        no_temporaries .
        end
    done
done

begin "pipelined_run_after_the_faults_succeeds"
run 2 30 --in in.h5 --out c.h5 --force --panel 8 --json r.json --quiet
expect_rc 0 ""
grep -q '"pipeline":{"bands":' r.json || problem "the run was not pipelined"
no_temporaries .
end

finish
