#!/usr/bin/env bash
# Every bad input of docs/design.md §1: one clear message from one rank, a
# non-zero exit, no hang (each run under `timeout`), no HDF5 error-stack
# dump, no output file or temporary file, the input untouched.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_BIN DD_COMPARE DD_MKBAD DD_MPIRUN
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
read -r -a mpirun <<<"$DD_MPIRUN"
"$DD_MKBAD" "$work"
"${mpirun[@]}" -n 1 "$DD_BIN" gen --out "$work/good.h5" -m 6 -n 5 -k 4 --quiet
fails=0

# expect NAME STATUS PATTERN RANKS -- ARGS...   (STATUS: exit codes, e.g. 2 or 1|2)
expect() {
    local name=$1 status=$2 pattern=$3 ranks=$4
    shift 5
    local sums_before sums_after rc
    sums_before=$(cd "$work" && sha256sum ./*.h5 notes.txt)
    rm -f "$work/out.h5"
    set +e
    timeout 20 "${mpirun[@]}" -n "$ranks" "$DD_BIN" "$@" >"$work/stdout" 2>"$work/stderr"
    rc=$?
    set -e
    local why=""
    [ "$rc" -eq 124 ] && why="hung (killed after 20 s)"
    [ -z "$why" ] && ! [[ "$rc" =~ ^($status)$ ]] && why="exit status $rc, expected $status"
    [ -z "$why" ] && ! grep -Eq -- "$pattern" "$work/stderr" && why="message does not match /$pattern/"
    local n
    n=$(grep -c '^dgemm-dist: error:' "$work/stderr" || true)
    [ -z "$why" ] && [ "$n" -ne 1 ] && why="$n error lines, expected exactly one"
    grep -q 'HDF5-DIAG' "$work/stderr" && why="${why:+$why; }HDF5 error stack printed"
    [ -e "$work/out.h5" ] && why="${why:+$why; }output file was created"
    find "$work" -name '.*tmp*' | grep -q . && why="${why:+$why; }temporary file left"
    sums_after=$(cd "$work" && sha256sum ./*.h5 notes.txt)
    [ "$sums_before" = "$sums_after" ] || why="${why:+$why; }an input file changed"
    if [ -n "$why" ]; then
        echo "FAIL $name: $why"
        sed 's/^/    stderr: /' "$work/stderr" | head -20
        fails=$((fails + 1))
    else
        echo "ok   $name: $(grep '^dgemm-dist: error:' "$work/stderr")"
    fi
}

o="--out $work/out.h5"
# shellcheck disable=SC2086
{
expect missing_file        2 "no such file"                    2 -- --in "$work/nope.h5" $o
expect not_hdf5            2 "not an HDF5 file"                2 -- --in "$work/notes.txt" $o
expect missing_dataset     2 'no dataset "X"'                  2 -- --in "$work/good.h5" --a X $o
expect missing_B           2 'no dataset "B"'                  3 -- --in "$work/noB.h5" $o
expect rank_3d             2 "3-D"                             2 -- --in "$work/rank3.h5" $o
expect int_type            2 "8- or 4-byte floats"             2 -- --in "$work/int.h5" $o
expect shapes_mismatch     2 "columns must equal B's rows"     3 -- --in "$work/mismatch.h5" $o
expect mixed_types         2 "same element type"               2 -- --in "$work/mixed.h5" $o
expect empty_matrix        2 "non-empty"                       2 -- --in "$work/empty.h5" $o
expect grid_mismatch       2 "needs 4 ranks but MPI started 3" 3 -- --in "$work/good.h5" --grid 2x2 $o
expect bad_grid_syntax     2 "PxQ"                             2 -- --in "$work/good.h5" --grid 4 $o
expect unknown_option      2 "unknown argument"                2 -- --in "$work/good.h5" --frobnicate
expect no_input            2 "give an input"                   2 -- $o
expect output_is_input     2 "never overwrites its input"      2 -- --in "$work/good.h5" --out "$work/good.h5" --force
expect output_dir_missing  2 "does not exist"                  2 -- --in "$work/good.h5" --out "$work/no/dir/c.h5"
expect nccl_on_cpu         2 "needs the CUDA backend"          2 -- --in "$work/good.h5" --backend cpu --comm nccl $o
expect unknown_cpu_kernel  2 "kernel 'fast'"                   2 -- --in "$work/good.h5" --backend cpu --kernel fast $o
expect bad_panel           2 "--panel"                         2 -- --in "$work/good.h5" --panel 0 $o
}
# --backend cuda where no GPU is usable (CI) or the build lacks CUDA
if ! nvidia-smi -L >/dev/null 2>&1; then
    # shellcheck disable=SC2086
    # says there is no GPU, and never sends the user to upgrade a driver
    expect cuda_without_gpu "1|2" "no GPU on host|built without CUDA" 2 -- --in "$work/good.h5" --backend cuda $o
    grep -q "driver version is insufficient" "$work/stderr" &&
        { echo "FAIL cuda_without_gpu: blames the driver"; fails=$((fails + 1)); }
fi
# NaN and Inf in the inputs never pass the check; nothing is written
# shellcheck disable=SC2086
expect nan_input_fails_check 3 "check FAILED" 2 -- --in "$work/nan.h5" --check $o
# shellcheck disable=SC2086
expect inf_input_fails_check 3 "check FAILED" 3 -- --in "$work/inf.h5" --check $o
grep -q 'FAILED$' "$work/stdout" || { echo "FAIL inf_input_fails_check: no FAILED line"; fails=$((fails + 1)); }

# an existing output is kept without --force, replaced with it
cp "$work/good.h5" "$work/keep.h5"
set +e
timeout 20 "${mpirun[@]}" -n 2 "$DD_BIN" --in "$work/good.h5" --out "$work/keep.h5" --quiet 2>"$work/stderr"
rc=$?
set -e
if [ "$rc" -ne 2 ] || ! grep -q "exists; pass --force" "$work/stderr" || ! cmp -s "$work/good.h5" "$work/keep.h5"; then
    echo "FAIL existing_output_kept: rc=$rc"; cat "$work/stderr"; fails=$((fails + 1))
else
    echo "ok   existing_output_kept"
fi
timeout 20 "${mpirun[@]}" -n 2 "$DD_BIN" --in "$work/good.h5" --out "$work/keep.h5" --force --quiet
"$DD_COMPARE" product "$work/good.h5" "$work/keep.h5" >/dev/null && echo "ok   force_replaces_output"

if [ "$fails" -ne 0 ]; then
    echo "$fails bad-input case(s) failed"
    exit 1
fi
echo "all bad-input cases behaved"
