#!/usr/bin/env bash
# gemm_matrix.sh RANKS M N K FIRST_DTYPE [dgemm-dist options...]
# GEMM, C = alpha·op(A)·op(B) + beta·C, on RANKS ranks: every op combination
# (--transa, --transb in N, T) × alpha in {1, -0.5} × beta in {0, 1, 2.5},
# 24 runs, each against the independent serial product (dd-compare gemm).
#  - For each op combination gen writes the file the run reads (--transa,
#    --transb: A K×M, B N×K; --with-c: C), and dd-compare mkcol writes its
#    column-major twin (every dataset transposed with plain HDF5, as MATLAB
#    or Julia would store the same matrices); runs with alpha = -0.5 read the
#    twin with --order col, so C is also written column-major.
#  - The element type alternates by op combination, starting with
#    FIRST_DTYPE: a second call with the other type covers every
#    combination in both types.
# Asserts per run: exit 0, one PASSED line, C right; at the end: the inputs
# unchanged, no temporary left.
# Environment: DD_BIN, DD_COMPARE, DD_MPIRUN (launcher prefix without -n).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_BIN DD_COMPARE DD_MPIRUN
ranks=$1 m=$2 n=$3 k=$4 first=$5
shift 5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
read -r -a mpirun <<<"$DD_MPIRUN"
fail() { echo "FAIL: $*" >&2; exit 1; }
other() { [ "$1" = f64 ] && echo f32 || echo f64; }

runs=0 dtype=$first
for ops in NN NT TN TT; do
    ta=${ops:0:1} tb=${ops:1:1}
    row="$work/$ops.h5" col="$work/$ops-col.h5"
    "${mpirun[@]}" -n "$ranks" "$DD_BIN" gen --out "$row" -m "$m" -n "$n" -k "$k" --dtype "$dtype" \
        --seed 5 --transa "$ta" --transb "$tb" --with-c --quiet
    "$DD_COMPARE" mkcol "$row" "$col" A B C >/dev/null
    sums=$(sha256sum "$row" "$col")
    for alpha in 1 -0.5; do
        order=row in=$row
        [ "$alpha" = 1 ] || { order=col in=$col; }
        for beta in 0 1 2.5; do
            what="$ops $dtype alpha=$alpha beta=$beta order=$order ranks=$ranks"
            out="$work/c-$ops-$alpha-$beta.h5"
            set +e
            "${mpirun[@]}" -n "$ranks" "$DD_BIN" --in "$in" --out "$out" --transa "$ta" \
                --transb "$tb" --alpha "$alpha" --beta "$beta" --order "$order" --quiet "$@" \
                >"$work/out" 2>"$work/err"
            rc=$?
            set -e
            [ "$rc" -eq 0 ] || { cat "$work/out" "$work/err" >&2; fail "$what: exit $rc"; }
            [ "$(grep -c 'PASSED$' "$work/out")" -eq 1 ] || fail "$what: no PASSED line"
            "$DD_COMPARE" gemm "$in" "$out" --transa "$ta" --transb "$tb" --alpha "$alpha" \
                --beta "$beta" --order "$order" >"$work/cmp" || { cat "$work/cmp"; fail "$what: C wrong"; }
            echo "ok   $what: $(cut -c13- "$work/cmp")"
            runs=$((runs + 1))
        done
    done
    [ "$(sha256sum "$row" "$col")" = "$sums" ] || fail "$ops: an input file changed"
    dtype=$(other "$dtype")
done
leftover=$(find "$work" -name '.*tmp*' | head -1)
[ -z "$leftover" ] || fail "temporary file left: $leftover"
echo "all $runs GEMM cases right at $ranks rank(s)"
