# shellcheck shell=bash
# common.sh — sourced by the fault tests (tests/faults/*.sh).
#
# Each script checks a list of cases; a case is
#     begin NAME; run RANKS SECS ARGS...; expect_rc 1 'pattern'; [ check ] || problem WHY; end
# and prints one line, "ok   NAME: ..." or "FAIL NAME: why", and the script
# exits 1 when any case failed, 77 (ctest's SKIP_RETURN_CODE) when it cannot
# run here.  Every run is bounded with `timeout`.
# Environment (tests/CMakeLists.txt's DD_TEST_ENV; by hand: . build/tests/env.sh):
# DD_BIN, DD_MPIRUN, DD_COMPARE, DD_MKBAD.
set -uo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "${BASH_SOURCE[0]}")/../need.sh"
dd_need DD_BIN DD_MPIRUN DD_COMPARE DD_MKBAD
read -r -a mpirun <<<"$DD_MPIRUN"
export OPENBLAS_NUM_THREADS="${OPENBLAS_NUM_THREADS:-1}"
work=$(mktemp -d "${TMPDIR:-/tmp}/dd-faults.XXXXXX")
dd_cleanup_hooks=()
dd_cleanup() {
    local h
    for h in "${dd_cleanup_hooks[@]}"; do eval "$h"; done
    rm -rf "$work"
}
trap dd_cleanup EXIT
fails=0

skip() {
    echo "skipped: $*"
    exit 77
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# sha256 of a file (empty when it is missing)
sum() { sha256sum "$1" 2>/dev/null | cut -d' ' -f1; }

# run RANKS SECS ARGS... — dgemm-dist ARGS on RANKS ranks, killed after SECS.
# Each rank runs under a small shell that records its own exit status and
# then exits 0, so mpirun does not end the other ranks for us: a rank left
# behind by a failure elsewhere shows up as a hang.  Sets rc (the status
# every rank agreed on; 124 on a hang; 99 when ranks disagree, with
# rank_note saying how) and ms (wall time); stdout and stderr in
# $work/stdout and $work/stderr.
run_count=0
run() {
    local n=$1 secs=$2 t0 trc count codes rcs
    shift 2
    run_count=$((run_count + 1))
    rcs="$work/rcs.$run_count" # one per run: a straggler cannot write into the next
    mkdir "$rcs"
    t0=$(now_ms)
    # shellcheck disable=SC2016  # expanded by each rank's shell
    DD_RC_DIR="$rcs" timeout -k 5 "$secs" "${mpirun[@]}" -n "$n" \
        sh -c '"$@"; echo $? >"$DD_RC_DIR/$$"' dd-rank "$DD_BIN" "$@" >"$work/stdout" 2>"$work/stderr"
    trc=$?
    ms=$(($(now_ms) - t0))
    run_secs=$secs
    rank_note=""
    if [ "$trc" -eq 124 ] || [ "$trc" -eq 137 ]; then
        kill_stragglers "$rcs"
        rc=$trc
        return
    fi
    count=$(find "$rcs" -type f | wc -l)
    codes=$(cat "$rcs"/* 2>/dev/null | sort -u | tr '\n' ' ')
    if [ "$count" -ne "$n" ]; then
        rc=$((trc ? trc : 98))
        rank_note="only $count of $n ranks ended normally (statuses: ${codes:-none}; mpirun: $trc)"
    elif [ "$(echo "$codes" | wc -w)" -ne 1 ]; then
        rc=99
        rank_note="ranks exited with different statuses: $codes"
    else
        rc=${codes% }
    fi
}

# kill_stragglers RCS — after a timeout, ranks that mpirun could not end
# (found by the DD_RC_DIR=RCS in their environment) are killed, so that a
# hung run does not hold files or CPUs while the next case runs
kill_stragglers() {
    local p try left
    for try in 1 2 3 4 5; do
        : "$try"
        left=""
        for p in /proc/[0-9]*; do
            if grep -qzxF "DD_RC_DIR=$1" "$p/environ" 2>/dev/null; then
                grep -q '^State:[[:space:]]*Z' "$p/status" 2>/dev/null && continue
                left="$left ${p#/proc/}"
            fi
        done
        [ -z "$left" ] && return
        echo "    note: killing ranks left by a hung run:$left"
        # shellcheck disable=SC2086
        kill -KILL $left 2>/dev/null
        sleep 0.5
    done
}

begin() {
    name=$1
    why=""
}

problem() { why="${why:+$why; }$*"; }

# expect_rc STATUS PATTERN — the usual checks of a run that must fail:
# no hang, no crash, status STATUS (a regex such as 1 or 1|2), exactly one
# "dgemm-dist: error:" line and it matches PATTERN, no HDF5 error stack.
expect_rc() {
    local status=$1 pattern=$2 n
    if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
        problem "hung (killed after $run_secs s)"
        return
    fi
    [ -z "$rank_note" ] || problem "$rank_note"
    if [ "$rc" -gt 128 ] || grep -Eqi 'signal (6|7|8|11)|segmentation|core dumped|aborted \(' "$work/stderr"; then
        problem "crashed (status $rc)"
    fi
    [[ "$rc" =~ ^($status)$ ]] || problem "exit status $rc, expected $status"
    if [ "$rc" -ne 0 ]; then
        n=$(grep -c '^dgemm-dist: error:' "$work/stderr")
        [ "$n" -eq 1 ] || problem "$n error lines, expected exactly one"
        grep '^dgemm-dist: error:' "$work/stderr" | grep -Eqi -- "$pattern" ||
            problem "message does not match /$pattern/"
    fi
    grep -q 'HDF5-DIAG' "$work/stderr" && problem "HDF5 error stack printed"
    return 0
}

# no_temporaries DIR — no temporary of ours (.NAME.tmp.*) is left in DIR
no_temporaries() {
    local left
    left=$(find "$1" -maxdepth 1 -name '.*.tmp.*' -printf '%f ' 2>/dev/null)
    [ -z "$left" ] || problem "temporary left: $left"
}

end() {
    if [ -n "$why" ]; then
        echo "FAIL $name: $why"
        sed 's/^/    stderr: /' "$work/stderr" 2>/dev/null | grep -v '^    stderr: *-*$' | head -12
        fails=$((fails + 1))
    else
        local msg
        msg=$(grep -m1 '^dgemm-dist: error:' "$work/stderr" 2>/dev/null | cut -c20-150)
        echo "ok   $name (${ms:-0} ms)${msg:+: $msg}"
    fi
}

finish() {
    if [ "$fails" -ne 0 ]; then
        echo "$fails case(s) failed"
        exit 1
    fi
    echo "all cases behaved"
    exit 0
}

# whether this build has the collective (parallel HDF5) path
have_collective() {
    "$DD_BIN" --size 2 --io collective --dry-run --quiet >/dev/null 2>&1
}
