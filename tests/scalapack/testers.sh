#!/usr/bin/env bash
# tests/scalapack/testers.sh — ScaLAPACK's own testers (Debian's
# scalapack-mpi-test, their input files from scalapack-test-common) with
# the drop-in in front of ScaLAPACK (LD_PRELOAD) and DD_SCALAPACK_BACKEND=cpu,
# so that dgemm-dist serves their PDGEMM/PSGEMM/PZGEMM/PCGEMM calls.
#
#   testers.sh pblas TESTER DAT RANKS GRIDS DROPIN WORK
#       the PBLAS level-3 tester (dpb3tst, spb3tst, zpb3tst, cpb3tst) on a
#       copy of its .dat (PDBLAS3TST.dat, PSBLAS3TST.dat, PZ..., PC...) written into WORK with the GEMM
#       rows alone and the grids GRIDS ("1x2 2x1"); passes when every test
#       passes (the summary's FAILED 0, PASSED > 0), every error exit gives
#       PBLAS's number (no "SHOULD HAVE BEEN" line), and the drop-in's count
#       on rank 0 (process (0,0) of every grid: it makes every call) is
#       served = the tests passed, refused = the 53 error exits, handed on 0
#   testers.sh pblas-first TESTER DAT RANKS GRIDS DROPIN WORK
#       the same with the .dat's first blocks (IMB_, INB_) other than its
#       blocks (MB_, NB_), smaller and larger, and the first blocks' places
#       (RSRC_, CSRC_) varied: DTYPE_ 2's own distribution
#   testers.sh pblas-conj TESTER DAT RANKS GRIDS DROPIN WORK
#       the complex testers (zpb3tst, cpb3tst) with all 8 of the .dat's
#       problems and TRANSA, TRANSB taking 'C' (the conjugate transpose)
#       against each of 'N', 'T', 'C'
#   testers.sh lapack TESTER DAT RANKS - DROPIN WORK
#       the LU or inversion tester (xdlu, xdinv) on its own .dat (LU.dat,
#       INV.dat): every test passes its residual check, none fails or is
#       skipped, and the drop-in served calls on every rank (none handed on)
# Exit 77 (ctest's SKIP_RETURN_CODE) when TESTER or DAT is not installed.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$here/../need.sh"
dd_need DD_MPIRUN
kind=$1 tester=$2 dat=$3 ranks=$4 grids=$5 dropin=$6 work=$7
if [ ! -x "$tester" ] || [ ! -f "$dat" ]; then
    echo "skipped: $tester or $dat not installed (tests/install-deps.sh: scalapack-mpi-test, scalapack-test-common)"
    exit 77
fi
[ -f "$dropin" ] || { echo "FAIL: no drop-in at $dropin" >&2; exit 1; }
rm -rf "$work"
mkdir -p "$work"
name=$(basename "$dat")
if [ "$kind" != lapack ]; then
    # the grids, and every routine but xGEMM off (pblas-first: the first
    # blocks and their places too)
    read -r -a gl <<<"$grids"
    ps="" qs=""
    for g in "${gl[@]}"; do
        ps+="${g%x*} " qs+="${g#*x} "
    done
    awk -v n="${#gl[@]}" -v ps="$ps" -v qs="$qs" -v first="$([ "$kind" = pblas-first ] && echo 1)" \
        -v conj="$([ "$kind" = pblas-conj ] && echo 1)" '
        conj && /number of tests problems/ { print "8\t\tnumber of tests problems"; next }
        conj && /values of TRANSA/ { print "\047N\047 \047C\047 \047C\047 \047T\047 \047C\047 \047N\047 \047T\047 \047C\047\t\tvalues of TRANSA"; next }
        conj && /values of TRANSB/ { print "\047C\047 \047N\047 \047C\047 \047C\047 \047T\047 \047T\047 \047N\047 \047C\047\t\tvalues of TRANSB"; next }
        first && /values of IMB_/ { print " 1  7  2  9  5  3  8  1\t\t" substr($0, index($0, "values")); next }
        first && /values of INB_/ { print " 3  1  9  2  7  4  1  6\t\t" substr($0, index($0, "values")); next }
        first && /values of RSRC_/ { print " 0  1  1  0  1  0  1  0\t\t" substr($0, index($0, "values")); next }
        first && /values of CSRC_/ { print " 1  0  1  0  0  1  1  0\t\t" substr($0, index($0, "values")); next }
        /number of process grids/ { print n "\t\tnumber of process grids (ordered pairs of P & Q)"; next }
        /values of P$/ && !/values of P[A-Z_]/ { print ps "\tvalues of P"; next }
        /values of Q$/ { print qs "\tvalues of Q"; next }
        /^P[SDZC][A-Z0-9]+ +[TF]/ && $1 !~ /GEMM$/ { sub(/ T/, " F") }
        { print }' "$dat" >"$work/$name"
    grep -q "values of P" "$work/$name" || { echo "FAIL: $name: no grid lines to rewrite" >&2; exit 1; }
else
    cp "$dat" "$work/$name"
fi
# the tester's report (stdout) apart from the drop-in's lines (stderr):
# mpirun joins different ranks' output mid-line
log=$work/out.txt err=$work/err.txt
rc=0
(cd "$work" && $DD_MPIRUN -n "$ranks" -x LD_PRELOAD="$dropin" -x DD_SCALAPACK_BACKEND=cpu \
    -x DD_SCALAPACK_SUMMARY=1 "$tester") >"$log" 2>"$err" || rc=$?
fail() {
    echo "FAIL: $*" >&2
    tail -40 "$log" >&2
    tail -20 "$err" >&2
    exit 1
}
[ "$rc" = 0 ] || fail "$(basename "$tester") exited $rc"
wrong=$(grep -c "SHOULD HAVE BEEN" "$log" || true)
[ "$wrong" = 0 ] || fail "$wrong error exits gave a number other than PBLAS's"
count() { # count RANK WHAT: the drop-in's count of WHAT on that rank
    # (anywhere in a line: mpirun may join the ranks' output mid-line)
    grep -o "dgemm-dist-scalapack: rank $1: PDGEMM/PSGEMM/PZGEMM/PCGEMM calls: served [0-9]*, handed on [0-9]*, refused [0-9]*" "$err" |
        sed 's/.*served \([0-9]*\), handed on \([0-9]*\), refused \([0-9]*\)/\1 \2 \3/' |
        awk -v w="$2" 'NR == 1 { print w == "served" ? $1 : w == "handed" ? $2 : $3 }'
}
if [ "$kind" != lapack ]; then
    grep -q "End of Tests." "$log" || fail "the tester did not finish"
    grep -q "Error-exit tests completed." "$log" || fail "no error-exit tests"
    row=$(grep -E '^ *\| *P[SDZC]GEMM ' "$log" | head -1)
    read -r _ _ total passed failed skipped <<<"$row"
    [ -n "${skipped:-}" ] || fail "no summary row for GEMM"
    if [ "$failed" != 0 ] || [ "$passed" -le 0 ] || [ $((passed + skipped)) != "$total" ]; then
        fail "GEMM: $total tests, $passed passed, $failed failed, $skipped skipped"
    fi
    served=$(count 0 served) handed=$(count 0 handed) refused=$(count 0 refused)
    [ -n "$served" ] || fail "no summary line from the drop-in on rank 0"
    if [ "$served" != "$passed" ] || [ "$handed" != 0 ] || [ "$refused" != 53 ]; then
        fail "rank 0: the drop-in served $served, handed on $handed, refused $refused; want $passed, 0, 53"
    fi
    echo "$(basename "$tester") on $ranks ranks ($grids): $passed passed, $skipped skipped, 53 error exits as PBLAS's; the drop-in served $served, handed on 0, refused 53: all passed"
else
    grep -q "END OF TESTS." "$log" || fail "the tester did not finish"
    read -r tests <<<"$(sed -n 's/^Finished *\([0-9]*\) tests.*/\1/p' "$log")"
    good=$(sed -n 's/^ *\([0-9]*\) tests completed and passed residual checks\./\1/p' "$log")
    bad=$(sed -n 's/^ *\([0-9]*\) tests completed and failed residual checks\./\1/p' "$log")
    skip=$(sed -n 's/^ *\([0-9]*\) tests skipped because of illegal input values\./\1/p' "$log")
    if [ -z "$tests" ] || [ "$tests" -le 0 ] || [ "$good" != "$tests" ] || [ "$bad" != 0 ] || [ "$skip" != 0 ]; then
        fail "${tests:-no} tests: $good passed, $bad failed, $skip skipped"
    fi
    total=0
    for ((r = 0; r < ranks; r++)); do
        s=$(count "$r" served) h=$(count "$r" handed)
        if [ -z "$s" ] || [ "$s" -le 0 ] || [ "$h" != 0 ]; then
            fail "rank $r: the drop-in served ${s:-no count}, handed on ${h:-?}"
        fi
        total=$((total + s))
    done
    echo "$(basename "$tester") on $ranks ranks: $good of $tests residual checks passed; the drop-in served $(count 0 served) calls on rank 0 ($total over the ranks), handed on 0: all passed"
fi
