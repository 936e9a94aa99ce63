#!/usr/bin/env bash
# bench_options.sh BENCH... — every bench refuses a bad option before it
# measures anything: --reps x, --reps -1, --reps 1e99 (each a number its
# parser must not take: atoi read them as 0, -1 and 1) and an unknown
# option each end the bench with status 2, one line on stderr that names
# the option, nothing on stdout; --help prints the usage with status 0.
# The benches' one parser is bench/common/bench_opts.c (test_bench_opts.c
# holds it to its rules); this holds every bench to using it.  The MPI
# benches run as singletons (no mpirun, whose own lines would mix in).
set -uo pipefail
[ "$#" -gt 0 ] || { echo "usage: $0 BENCH..." >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-options.XXXXXX")
trap 'rm -rf "$work"' EXIT
fails=0
for bench in "$@"; do
    name=$(basename "$bench")
    for args in "--reps x" "--reps -1" "--reps 1e99" "--no-such-option"; do
        opt=${args%% *}
        # shellcheck disable=SC2086  # the words of args are the arguments
        timeout 30 "$bench" $args >"$work/out" 2>"$work/err"
        rc=$?
        lines=$(wc -l <"$work/err")
        if [ "$rc" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -q -- "$opt" "$work/err" ||
            [ -s "$work/out" ]; then
            echo "FAIL $name $args: status $rc, $lines line(s) on stderr, $(wc -c <"$work/out") bytes on stdout"
            sed 's/^/    /' "$work/err" "$work/out" | head -8
            fails=$((fails + 1))
        else
            echo "ok   $name $args: $(cat "$work/err")"
        fi
    done
    timeout 30 "$bench" --help >"$work/out" 2>"$work/err"
    rc=$?
    if [ "$rc" -ne 0 ] || ! grep -q "^usage: .*$name" "$work/out"; then
        echo "FAIL $name --help: status $rc"
        fails=$((fails + 1))
    else
        echo "ok   $name --help"
    fi
done
[ "$fails" -eq 0 ] && echo "every bench refused every bad option" || echo "$fails case(s) failed"
exit $((fails != 0))
