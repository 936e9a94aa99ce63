#!/usr/bin/env bash
# A check that can say FAILED, end to end: a wrong C, a block read from the
# wrong place, or a C written to the wrong place each end with exit 3, one
# message, nothing renamed into place (the old output intact, no temporary).
#  - DD_FAULT=corrupt-c:1: one element of C off by 1e-6 relative -> the
#    check line says FAILED;
#  - DD_FAULT=misread:R with --check: rank R reads B's block from row 0 ->
#    found by the sampled read-back of the inputs.  R must sit in grid row
#    1, where B's block does not start at row 0: on a 2x2 grid (r = p·Q + q)
#    that is rank 2 or 3 (rank 1 is in row 0, where the fault changes
#    nothing); on a 2x1 grid rank 1;
#  - DD_FAULT=miswrite:1 (no --check needed): rank 1 writes C at column 0
#    -> found by the read-back of the written file, on each I/O path.
# And the check is not fooled by magnitude: A ~1e300 with B ~1e-300 (and
# A ~1e307 with B ~1e-307) gives a finite C that PASSES and matches the
# serial product; the same inputs with a corrupted C still FAIL.
dir=$(cd "$(dirname "$0")" && pwd)
# shellcheck source=common.sh
. "$dir/common.sh"
cd "$work" || exit 1

"${mpirun[@]}" -n 2 "$DD_BIN" gen --out in.h5 -m 40 -n 36 -k 44 --quiet || exit 1
"$DD_MKBAD" "$work" faults || exit 1
"${mpirun[@]}" -n 1 "$DD_BIN" --in in.h5 --out c.h5 --quiet || exit 1
old=$(sum c.h5)
paths=(independent)
have_collective && paths=(collective independent)

# failed NAME RANKS FAULT PATTERN ARGS... — exit 3, c.h5 as it was
failed() {
    local n=$2 fault=$3 pattern=$4
    begin "$1"
    shift 4
    DD_FAULT=$fault run "$n" 30 --out c.h5 --force --quiet "$@"
    expect_rc 3 "$pattern"
    [ "$(sum c.h5)" = "$old" ] || problem "the old output was replaced"
    no_temporaries .
    end
}

failed corrupt_c_check_failed_2x2 4 corrupt-c:1 'check FAILED' --in in.h5 --grid 2x2 --check
grep -q 'FAILED$' "$work/stdout" || { echo "FAIL corrupt_c_check_failed_2x2: no FAILED check line"; fails=$((fails + 1)); }
failed corrupt_c_check_failed_1rank 1 corrupt-c:0 'check FAILED' --in in.h5 --check
for r in 2 3; do
    failed "misread_rank${r}_found_by_input_readback_2x2" 4 "misread:$r" 'differs from' \
        --in in.h5 --grid 2x2 --check
done
failed misread_rank1_found_by_input_readback_2x1 2 misread:1 'differs from' --in in.h5 --grid 2x1 --check
for io in "${paths[@]}"; do
    failed "miswrite_found_by_output_readback_2x2_$io" 4 miswrite:1 'does not read back' \
        --in in.h5 --grid 2x2 --io "$io"
done

# huge and tiny magnitudes: a finite product passes
for f in extreme extreme307; do
    for n in 1 4; do
        begin "${f}_magnitudes_pass_${n}rank"
        rm -f e.h5
        run "$n" 30 --in "$f.h5" --out e.h5 --check --panel 5 --quiet
        expect_rc 0 ''
        grep -q 'PASSED$' "$work/stdout" || problem "no PASSED check line"
        "$DD_COMPARE" product "$f.h5" e.h5 >/dev/null 2>&1 || problem "e.h5 is not the product"
        end
    done
done
failed extreme_magnitudes_corrupt_c_still_fails 4 corrupt-c:0 'check FAILED' --in extreme.h5 --check

finish
