#!/usr/bin/env bash
# gemm_checks.sh WHAT — GEMM behaviours beyond the product itself:
#   colmajor  a column-major file written with plain HDF5 (dd-compare mkcol,
#             as MATLAB or Julia lay out the same matrices) read with
#             --order col as its writer meant it; C written back so that a
#             column-major reader gets C: bit for bit the transpose of the
#             row-major run's; gen --order col writes that same file; the
#             GPU's band loop (ring, pitched copies) run on the CPU with
#             several bands of transposed datasets gives the same bits
#   blas      BLAS's rules: beta = 0 never reads C (NaN there: PASSED, no
#             NaN out); alpha = 0 never reads A and B (NaN in B: PASSED,
#             C = beta·C_in); repetitions each start from beta·C_in;
#             --size gives the bits of gen + --in; the report, dry run,
#             JSON record and output attributes name the expression
#   refusals  one clear message, exit 2, no output: C of the wrong shape,
#             beta ≠ 0 without C, T that does not fit, bad values
#   faults    alpha or beta forgotten at load (DD_FAULT=no-alpha, no-beta)
#             is caught by the input read-back: exit 3, nothing written
# Environment: DD_BIN, DD_COMPARE, DD_MPIRUN (launcher prefix without -n).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_BIN DD_COMPARE DD_MPIRUN
what=${1:?usage: $0 colmajor|blas|refusals|faults}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
read -r -a mpirun <<<"$DD_MPIRUN"
fail() { echo "FAIL: $*" >&2; exit 1; }
cmp() { "$DD_COMPARE" "$@" >"$work/cmp" || { cat "$work/cmp"; fail "dd-compare $*"; }; echo "ok   $(cut -c13- "$work/cmp")"; }

# run NAME RANKS ARGS...: dgemm-dist must exit 0 with one PASSED line
run() {
    local name=$1 ranks=$2
    shift 2
    if ! "${mpirun[@]}" -n "$ranks" "$DD_BIN" "$@" >"$work/out" 2>"$work/err"; then
        cat "$work/out" "$work/err" >&2
        fail "$name: dgemm-dist failed"
    fi
    [ "$(grep -c 'PASSED$' "$work/out")" -eq 1 ] || { cat "$work/out"; fail "$name: no PASSED line"; }
    echo "ok   $name"
}

# refuse NAME STATUS PATTERN RANKS -- ARGS...: one error line matching, the
# status, no output file, no temporary, inputs unchanged
refuse() {
    local name=$1 status=$2 pattern=$3 ranks=$4 rc n sums
    shift 5
    sums=$(sha256sum "$work"/*.h5)
    rm -f "$work/out.h5"
    set +e
    if [ "$ranks" -eq 1 ]; then # a singleton: mpirun's teardown after an error costs seconds
        timeout 60 "$DD_BIN" "$@" >"$work/out" 2>"$work/err"
    else
        timeout 60 "${mpirun[@]}" -n "$ranks" "$DD_BIN" "$@" >"$work/out" 2>"$work/err"
    fi
    rc=$?
    set -e
    n=$(grep -c '^dgemm-dist: error:' "$work/err" || true)
    [ "$rc" -eq "$status" ] || { cat "$work/err"; fail "$name: exit $rc, expected $status"; }
    [ "$n" -eq 1 ] || { cat "$work/err"; fail "$name: $n error lines, expected one"; }
    grep -Eq -- "$pattern" "$work/err" || { cat "$work/err"; fail "$name: message does not match /$pattern/"; }
    ! grep -q HDF5-DIAG "$work/err" || fail "$name: HDF5 error stack printed"
    [ ! -e "$work/out.h5" ] || fail "$name: output written"
    [ -z "$(find "$work" -name '.*tmp*')" ] || fail "$name: temporary file left"
    [ "$(sha256sum "$work"/*.h5)" = "$sums" ] || fail "$name: an input changed"
    echo "ok   $name: $(grep '^dgemm-dist: error:' "$work/err")"
}

colmajor() {
    local in=$work/row.h5 col=$work/col.h5 g=$work/gcol.h5
    local opts=(--alpha -0.5 --beta 2.5 --transa T --panel 3)
    "${mpirun[@]}" -n 3 "$DD_BIN" gen --out "$in" -m 19 -n 11 -k 14 --transa T --with-c --quiet
    cmp mkcol "$in" "$col" A B C
    "${mpirun[@]}" -n 2 "$DD_BIN" gen --out "$g" -m 19 -n 11 -k 14 --transa T --with-c \
        --order col --quiet
    cmp equal "$col" "$g" A B C
    run "row-major run" 3 --in "$in" --out "$work/c-row.h5" "${opts[@]}"
    run "column-major run" 3 --in "$col" --out "$work/c-col.h5" --order col "${opts[@]}"
    cmp gemm "$col" "$work/c-col.h5" --order col --transa T --alpha -0.5 --beta 2.5
    cmp transposed "$work/c-row.h5" C "$work/c-col.h5" C
    run "column-major run, independent I/O, 2x2" 4 --in "$col" --out "$work/c-col2.h5" \
        --order col --io independent "${opts[@]}"
    cmp gemm "$col" "$work/c-col2.h5" --order col --transa T --alpha -0.5 --beta 2.5
    # several bands of every transposed dataset (1 MiB slots), straight and
    # through the GPU's ring loop on host memory: the same bits
    local big=$work/big.h5 ring=(--order col --transb T --beta -1 --alpha 0.75 --panel 64)
    "${mpirun[@]}" -n 2 "$DD_BIN" gen --out "$big" -m 300 -n 500 -k 450 --transb T --with-c \
        --order col --quiet
    DD_RING_MIB=1 run "bands, direct" 1 --in "$big" --out "$work/c-direct.h5" "${ring[@]}"
    DD_RING_MIB=1 DD_FAULT='stream-ring:*' run "bands, ring" 1 --in "$big" \
        --out "$work/c-ring.h5" "${ring[@]}"
    cmp equal "$work/c-direct.h5" "$work/c-ring.h5" C
    cmp gemm "$big" "$work/c-ring.h5" --order col --transb T --beta -1 --alpha 0.75
}

blas() {
    local in=$work/in.h5 nan=$work/nan.h5 bnan=$work/bnan.h5
    "${mpirun[@]}" -n 2 "$DD_BIN" gen --out "$in" -m 17 -n 13 -k 9 --transb T --with-c --quiet
    cp "$in" "$nan"
    cmp poison "$nan" C
    run "beta 0, NaN in C's input" 4 --in "$nan" --out "$work/c0.h5" --transb T --alpha -0.5
    cmp no-nan "$work/c0.h5" C
    cmp gemm "$nan" "$work/c0.h5" --transb T --alpha -0.5
    cp "$in" "$bnan"
    cmp poison "$bnan" B
    run "alpha 0, NaN in B" 3 --in "$bnan" --out "$work/ca.h5" --transb T --alpha 0 --beta 2.5
    cmp gemm "$bnan" "$work/ca.h5" --transb T --alpha 0 --beta 2.5
    # repetitions each from beta·C_in; --size makes what gen writes
    local g=(--transa T --transb T --alpha -0.5 --beta 2.5 --order col)
    "${mpirun[@]}" -n 2 "$DD_BIN" gen --out "$work/gen.h5" -m 17 -n 13 -k 9 --dtype f32 --seed 4 \
        --with-c "${g[@]:0:4}" --order col --quiet
    run "from the file, 3 timed + 2 warm-up" 4 --in "$work/gen.h5" --out "$work/c1.h5" "${g[@]}" \
        --repeat 3 --warmup 2 --panel 4 --json "$work/r.jsonl"
    cp "$work/out" "$work/report"
    run "generated" 4 --size 17,13,9 --dtype f32 --seed 4 --out "$work/c2.h5" "${g[@]}" --panel 4
    cmp equal "$work/c1.h5" "$work/c2.h5" C
    cmp gemm "$work/gen.h5" "$work/c1.h5" "${g[@]}"
    grep -q '^problem   C = -0.5·Aᵀ·Bᵀ + 2.5·C  f32  M=17 N=13 K=9 .*--order col' "$work/report" ||
        { cat "$work/report"; fail "report's problem line"; }
    "${mpirun[@]}" -n 4 "$DD_BIN" --size 17,13,9 "${g[@]}" --repeat 2 --dry-run --backend cpu \
        >"$work/dry"
    grep -q '^dry run: C = -0.5·Aᵀ·Bᵀ + 2.5·C  f64  M=17 N=13 K=9' "$work/dry" &&
        grep -q "C's input read, beta·C kept for each repetition" "$work/dry" ||
        { cat "$work/dry"; fail "dry run"; }
    python3 - "$work/r.jsonl" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
assert (r["transa"], r["transb"], r["alpha"], r["beta"], r["order"]) == ("T", "T", -0.5, 2.5, "col"), r
assert r["repeat"] == 3 and r["warmup"] == 2 and r["check"]["passed"] and r["tflops"] > 0
print("ok   JSON record: transa, transb, alpha, beta, order")
PY
    local a want got
    for a in transa:T transb:T alpha:-0.5 beta:2.5 order:col; do
        want=${a#*:}
        got=$("$DD_COMPARE" attr "$work/c1.h5" C "${a%%:*}") || fail "output attribute ${a%%:*}"
        [ "$got" = "$want" ] || fail "output attribute ${a%%:*} = $got, expected $want"
    done
    echo "ok   output attributes: transa, transb, alpha, beta, order"
}

refusals() {
    "${mpirun[@]}" -n 1 "$DD_BIN" gen --out "$work/ab.h5" -m 20 -n 40 -k 30 --quiet
    "${mpirun[@]}" -n 1 "$DD_BIN" gen --out "$work/abc.h5" -m 20 -n 40 -k 30 --with-c --quiet
    local o=(--out "$work/out.h5")
    refuse beta_without_c 2 '--beta 2.5 needs C.s input, but input file .* has no dataset "C"' 1 -- \
        --in "$work/ab.h5" --beta 2.5 "${o[@]}"
    refuse c_wrong_shape 2 'C \("B" in .*\) is stored 30×40 but op\(A\)·op\(B\) is 20×40' 3 -- \
        --in "$work/ab.h5" --beta 1 --c B "${o[@]}"
    refuse c_not_transposed 2 'must be stored 40×20 \(its transpose: --order col\)' 1 -- \
        --in "$work/abc.h5" --beta 1 --order col --transa T --transb T "${o[@]}"
    refuse transb_misfit 2 '^dgemm-dist: error: --transb T: op\(B\) is 40×30 but op\(A\) has 30 columns' 2 -- \
        --in "$work/ab.h5" --transb T "${o[@]}"
    refuse order_misfit 2 '--order col: op\(B\) is 40×30 but op\(A\) has 20 columns' 1 -- \
        --in "$work/ab.h5" --order col "${o[@]}"
    refuse alpha_nan 2 "bad value 'nan' for --alpha: expected a finite number" 2 -- \
        --in "$work/ab.h5" --alpha nan "${o[@]}"
    refuse beta_inf 2 "bad value '1e999' for --beta: expected a finite number" 1 -- \
        --in "$work/ab.h5" --beta 1e999 "${o[@]}"
    refuse transa_word 2 "bad value 'H' for --transa: expected N .*, T .* or C" 1 -- \
        --in "$work/ab.h5" --transa H "${o[@]}"
    refuse order_word 2 "bad value 'fortran' for --order: expected row .* or col" 1 -- \
        --in "$work/ab.h5" --order fortran "${o[@]}"
    refuse gen_alpha 2 "--alpha is a run option|gen does not take --alpha" 1 -- \
        gen --out "$work/out.h5" -m 2 -n 2 -k 2 --alpha 2
    refuse gen_c_named_twice 2 '--with-c writes dataset "C", which --a also names' 1 -- \
        gen --out "$work/out.h5" -m 2 -n 2 -k 2 --with-c --a C
}

faults() {
    "${mpirun[@]}" -n 1 "$DD_BIN" gen --out "$work/in.h5" -m 9 -n 8 -k 7 --with-c --transa T --quiet
    local o=(--out "$work/out.h5" --transa T --alpha -0.5 --beta 2.5)
    DD_FAULT='no-alpha:*' refuse alpha_forgotten 3 'matrix A in memory on rank 0 differs from .* \(times --alpha\)' 2 -- \
        --in "$work/in.h5" "${o[@]}"
    DD_FAULT='no-beta:1' refuse beta_forgotten 3 "C's input in memory on rank 1 differs from --beta times" 2 -- \
        --in "$work/in.h5" "${o[@]}"
}

"$what"
echo "all $what checks passed"
