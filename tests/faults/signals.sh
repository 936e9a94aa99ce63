#!/usr/bin/env bash
# shellcheck disable=SC2015  # `test && test || problem` records a problem when either fails
# Signals during the write, and temporaries of runs that died
# (io/io_output_signals.c; the stale sweep in io/io_output.c, the
# file-size limit in io/io_output_checks.c): DD_FAULT=slow-write:0 makes
# rank 0 sleep 30 s inside the write, after the temporary file was
# created.  About 2 s into that
# sleep the run gets SIGTERM or SIGINT (through mpirun, or sent to every
# rank as a batch system does): it must end within seconds, leave no
# .c.h5.tmp.* behind, and keep the old output.  A lone rank killed with
# SIGKILL cannot clean up, but the next run to that output removes the
# temporary (its owner is gone).  A stale temporary whose owner is alive, or on another
# host, is left alone.  A file-size limit (ulimit -f) below the output or
# the record ends the run before the read with a message naming it, never
# SIGXFSZ.
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$dir/common.sh"
cd "$work" || exit 1
# background jobs of a script ignore SIGINT unless job control is on
set -m

"${mpirun[@]}" -n 1 "$DD_BIN" gen --out in.h5 -m 20 -n 18 -k 22 --quiet || exit 1
"${mpirun[@]}" -n 2 "$DD_BIN" --in in.h5 --out c.h5 --quiet || exit 1
old=$(sum c.h5)
host=$(hostname)

# every dgemm-dist process below PID
ranks_of() {
    local all=" $1 " pid ppid comm changed=1
    local table
    table=$(ps -e -o pid=,ppid=,comm=)
    while [ "$changed" -eq 1 ]; do
        changed=0
        while read -r pid ppid comm; do
            if [[ "$all" == *" $ppid "* && "$all" != *" $pid "* ]]; then
                all="$all$pid "
                changed=1
            fi
        done <<<"$table"
    done
    while read -r pid ppid comm; do
        [[ "$all" == *" $pid "* && "$comm" == dgemm-dist* ]] && echo "$pid"
    done <<<"$table"
}

# alive PID — running (a zombie has ended; its parent may be gone and the
# reaper slow)
alive() {
    kill -0 "$1" 2>/dev/null || return 1
    ! grep -q '^State:[[:space:]]*Z' "/proc/$1/status" 2>/dev/null
}

# sig_case NAME RANKS SIGNAL TARGET — TARGET: mpirun, ranks (every rank), rank0
sig_case() {
    local n=$2 sig=$3 target=$4 mp i t0 owner_pid
    local -a rank_pids
    begin "$1"
    DD_FAULT=slow-write:0 "${mpirun[@]}" -n "$n" "$DD_BIN" --in in.h5 --out c.h5 --force --quiet \
        >"$work/stdout" 2>"$work/stderr" &
    mp=$!
    for i in $(seq 200); do # the temporary file exists: rank 0 is in the write
        compgen -G '.c.h5.tmp.*/c.h5' >/dev/null && break
        kill -0 "$mp" 2>/dev/null || break
        sleep 0.1
    done
    if ! compgen -G '.c.h5.tmp.*/c.h5' >/dev/null; then
        problem "no temporary file appeared within 20 s"
    fi
    sleep 2
    mapfile -t rank_pids < <(ranks_of "$mp")
    owner_pid=$(cat .c.h5.tmp.*/owner 2>/dev/null | awk '{print $2}')
    [ "${#rank_pids[@]}" -gt 0 ] || problem "found no dgemm-dist process below mpirun"
    [ -n "$owner_pid" ] || problem "no owner file in the temporary"
    t0=$(now_ms)
    case $target in
    mpirun) kill "-$sig" "$mp" ;;
    ranks) kill "-$sig" "${rank_pids[@]}" ;;
    rank0) kill "-$sig" "$owner_pid" ;;
    esac
    for i in $(seq 150); do
        kill -0 "$mp" 2>/dev/null || break
        sleep 0.1
    done
    ms=$(($(now_ms) - t0))
    if kill -0 "$mp" 2>/dev/null; then
        problem "still running 15 s after SIG$sig"
        kill -KILL "$mp" "${rank_pids[@]}" 2>/dev/null
    fi
    wait "$mp"
    rc=$?
    sleep 0.2
    for i in "${rank_pids[@]}"; do
        alive "$i" && problem "rank process $i still alive" && kill -KILL "$i"
    done
    [ "$rc" -ne 0 ] || problem "the interrupted run exited 0"
    [ "$(sum c.h5)" = "$old" ] || problem "the old output changed"
    if [ "$sig" != KILL ]; then
        no_temporaries .
    fi
    end
}

sig_case sigterm_to_mpirun_mid_write_2ranks 2 TERM mpirun
sig_case sigint_to_mpirun_mid_write_2ranks 2 INT mpirun
sig_case sigterm_to_every_rank_mid_write_2ranks 2 TERM ranks
# one rank: nobody is left to remove the temporary of a killed rank 0
sig_case sigkill_rank0_mid_write_1rank 1 KILL rank0

begin next_run_removes_temporary_of_killed_run
compgen -G '.c.h5.tmp.*' >/dev/null || problem "the killed run left no temporary (nothing to test)"
run 2 30 --in in.h5 --out c.h5 --force --quiet
expect_rc 0 ''
"$DD_COMPARE" product in.h5 c.h5 >/dev/null 2>&1 || problem "c.h5 is not the product"
no_temporaries .
end
old=$(sum c.h5)

# ---- stale temporaries made by hand ------------------------------------------------
sh -c 'exit 0' &
dead=$!
wait "$dead"
stale() { # stale NAME OWNER-LINE
    mkdir "$1"
    echo "$2" >"$1/owner"
    echo "not HDF5" >"$1/c.h5"
}
begin stale_temporary_of_dead_process_removed
stale .c.h5.tmp.ABCDEF "$host $dead"
stale .c.h5.tmp.LIVE01 "$host $$"
stale .c.h5.tmp.OTHER1 "some-other-host $dead"
run 2 30 --in in.h5 --out c.h5 --force --quiet
expect_rc 0 ''
[ -e .c.h5.tmp.ABCDEF ] && problem ".c.h5.tmp.ABCDEF (owner $dead, gone) was not removed"
end

begin stale_temporary_of_live_process_kept
[ -f .c.h5.tmp.LIVE01/c.h5 ] && [ -f .c.h5.tmp.LIVE01/owner ] ||
    problem ".c.h5.tmp.LIVE01 (owner $$, alive) was touched"
end

begin stale_temporary_of_other_host_kept
[ -f .c.h5.tmp.OTHER1/c.h5 ] && [ -f .c.h5.tmp.OTHER1/owner ] ||
    problem ".c.h5.tmp.OTHER1 (owner on another host) was touched"
end
rm -rf .c.h5.tmp.*

# ---- SIGXFSZ: a file-size limit (ulimit -f) below the output ----------------------
# The kernel would kill every rank with SIGXFSZ (exit 153, no word, the
# temporary left with --io collective); the program ignores it and checks
# the limit before the read: exit 1, one message naming ulimit -f, the old
# output kept, no temporary.  8 MiB leaves room for MPI's own files; C of
# 2000×2000 f64 is 30.5 MiB.
paths=(direct independent)
have_collective && paths+=(collective)
old=$(sum c.h5)
limited() { # limited KIB RANKS SECS ARGS...: run under a soft file-size limit of KIB
    local kib=$1 hard
    shift
    hard=$(ulimit -H -f)
    ulimit -S -f "$kib"
    run "$@"
    ulimit -S -f "$hard"
}
for io in "${paths[@]}"; do
    begin "ulimit_f_below_output_2ranks_${io}"
    limited 8192 2 30 --size 2000,2000,16 --out c.h5 --force --io "$io" --quiet
    expect_rc 1 'ulimit -f'
    [ "$(sum c.h5)" = "$old" ] || problem "the old output changed"
    no_temporaries .
    end
done
begin ulimit_f_below_gen_output_2ranks
limited 8192 2 30 gen --out g.h5 -m 2000 -n 2000 -k 2000 --quiet
expect_rc 1 'ulimit -f'
[ -e g.h5 ] && problem "gen left g.h5"
no_temporaries .
end
# a JSON record that would grow past the limit: refused before the read
begin ulimit_f_below_json_record_2ranks
head -c $((8192 * 1024 - 100)) /dev/zero | tr '\0' ' ' >big.jsonl
big_sum=$(sum big.jsonl)
limited 8192 2 30 --in in.h5 --out j.h5 --json big.jsonl --quiet
expect_rc 1 'ulimit -f'
[ -e j.h5 ] && problem "the output j.h5 was written"
[ "$(sum big.jsonl)" = "$big_sum" ] || problem "big.jsonl changed"
no_temporaries .
end

finish
