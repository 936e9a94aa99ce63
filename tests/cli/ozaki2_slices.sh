#!/usr/bin/env bash
# ozaki2_slices.sh — SUMMA's sliced panels (src/core/summa.c's loop, the
# sizes and the redo in src/core/summa_slices.c) on the CPU backend's ozaki2
# kernels (the host reference): with DD_OZAKI2_PANELS=slices
# each panel's owner slices it once and the blob travels;
# with fp64 the FP64 panel travels and every rank slices it.  On grids
# 1×2, 1×3, 2×2 and 2×3, file to file and phased, both give C bit for bit
# on inputs that stay in the moduli's range, the check PASSES, the kernel
# note says the panels were broadcast as slices (and fp64's does not);
# where rows of A and columns of B leave the range (wide.h5), the panels
# they are in are redone in FP64 on the ranks that need them, the note
# counts them and C is still the product; auto (the default) moves FP64
# panels on the CPU backend and through MPI; a knob that differs between
# ranks and an FP32 run of a CPU ozaki2 kernel are refused with one
# message, no rank left waiting.  On one rank the file-to-file bands
# multiply from slices with B's made once and kept (summa_rows_slices).
# The GPU test runs the same with DD_SLICES_BACKEND=cuda (ranks sharing one
# GPU, DD_SLICES_RANKS, DD_SLICES_ARGS such as --comm mpi): kernel.h's
# kernel_slices_* there; exit 77 without a GPU.
# Environment: DD_BIN, DD_COMPARE, DD_MKBAD, DD_MPIRUN.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_BIN DD_COMPARE DD_MKBAD DD_MPIRUN
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
read -r -a mpirun <<<"$DD_MPIRUN"
export OPENBLAS_NUM_THREADS=1
fail() { echo "FAIL: $*" >&2; exit 1; }
backend=${DD_SLICES_BACKEND:-cpu}
read -r -a ranks <<<"${DD_SLICES_RANKS:-2 3 4 6}"
read -r -a extra <<<"${DD_SLICES_ARGS:-}"
if [ "$backend" = cuda ] && ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "skipped: no GPU"
    exit 77
fi
cd "$work"
"$DD_MKBAD" . ozaki

# run NP MODE IN OUT [ARGS...]: dgemm-dist with ozaki2-14 on the backend, checked
run() {
    local np=$1 mode=$2 in=$3 out=$4
    shift 4
    rm -f "$out"
    DD_OZAKI2_PANELS=$mode "${mpirun[@]}" -n "$np" -x DD_OZAKI2_PANELS -x DD_FAULT \
        "$DD_BIN" --in "$in" --out "$out" --backend "$backend" --kernel ozaki2-14 --panel 64 \
        "${extra[@]}" "$@" \
        >out 2>err || { cat out err >&2; fail "$np ranks, $mode: dgemm-dist failed"; }
    grep -q 'PASSED$' out || { cat out; fail "$np ranks, $mode: no PASSED line"; }
}

for np in "${ranks[@]}"; do
    for phased in "" no-pipeline; do
        tag="$np ranks${phased:+, $phased}"
        export DD_FAULT=$phased
        run "$np" slices smooth.h5 c-s.h5
        # (on a GPU the kernels' counts of moduli come first)
        grep -Eq '^kernel    note: (ozaki2 \(GPU [0-9]+\): [0-9]+ multiplies at [0-9]+ moduli; )?panels broadcast as slices$' out ||
            { cat out; fail "$tag: the note does not say the panels were sliced (or names a redo)"; }
        run "$np" fp64 smooth.h5 c-f.h5
        ! grep -q 'broadcast as slices' out || fail "$tag: fp64 still slices"
        "$DD_COMPARE" equal c-s.h5 c-f.h5 C >/dev/null ||
            fail "$tag: sliced and FP64 panels give different C"
        echo "ok   $tag: sliced and FP64 panels, C bit for bit"
    done
done
unset DD_FAULT

# Out of range: the panels holding row 5 of A and column 3 of B are redone.
for np in "${ranks[@]:0:2}"; do
    run "$np" slices wide.h5 c-w.h5
    grep -Eq '^kernel    note: .*panels broadcast as slices, [1-9][0-9]* panel products? redone in f64' out ||
        { cat out; fail "$np ranks: wide.h5's panels were not redone"; }
    "$DD_COMPARE" product wide.h5 c-w.h5 >/dev/null || fail "$np ranks: wide.h5's C is not A·B"
    echo "ok   $np ranks: $(grep '^kernel    note' out)"
done

# auto (the default): FP64 panels on the CPU backend and through MPI.
if [ "$backend" = cpu ] || [[ " ${extra[*]} " == *" mpi "* ]]; then
    run 2 fp64 smooth.h5 c-f.h5
    run 2 auto smooth.h5 c-a.h5
    ! grep -q 'broadcast as slices' out || fail "auto sliced the panels on $backend ${extra[*]}"
    "$DD_COMPARE" equal c-a.h5 c-f.h5 C >/dev/null || fail "auto's C differs from fp64's"
    echo "ok   auto: FP64 panels on $backend ${extra[*]}"
fi

# One rank, file to file (the band pipeline, dd_plan_multiply_rows): the
# bands multiply from slices and B's are made once for every band
# (summa_rows_slices), C bit for bit the FP64 panels'; wide.h5's panels
# are redone and C is still the product; auto keeps that off on the CPU
# backend and on on a GPU.
run 1 slices smooth.h5 c-1s.h5
grep -q "^kernel    note: .*multiplied from slices, B's made once for every band$" out ||
    { cat out; fail "1 rank: the bands did not keep B's slices"; }
run 1 fp64 smooth.h5 c-1f.h5
! grep -q 'from slices' out || fail "1 rank, fp64: the bands still slice"
"$DD_COMPARE" equal c-1s.h5 c-1f.h5 C >/dev/null || fail "1 rank: kept slices and FP64 panels give different C"
run 1 slices wide.h5 c-1w.h5
grep -Eq "^kernel    note: .*multiplied from slices, B's made once for every band, [1-9][0-9]* panel products? redone in f64" out ||
    { cat out; fail "1 rank: wide.h5's panels were not redone"; }
"$DD_COMPARE" product wide.h5 c-1w.h5 >/dev/null || fail "1 rank: wide.h5's C is not A·B"
run 1 auto smooth.h5 c-1a.h5
if [ "$backend" = cpu ]; then
    ! grep -q 'from slices' out || fail "1 rank, auto: the CPU backend's bands sliced"
else
    grep -q 'from slices' out || { cat out; fail "1 rank, auto: the GPU's bands did not keep B's slices"; }
fi
"$DD_COMPARE" equal c-1a.h5 c-1f.h5 C >/dev/null || fail "1 rank: auto's C differs from fp64's"
echo "ok   1 rank: the bands from slices with B's made once, bit for bit; wide.h5 redone; auto on $backend"

# DD_OZAKI2_PANELS differing between ranks: refused on every rank.
cat >mixed.sh <<'SH'
#!/usr/bin/env bash
if [ "${OMPI_COMM_WORLD_RANK:-0}" = 1 ]; then export DD_OZAKI2_PANELS=fp64; else export DD_OZAKI2_PANELS=slices; fi
exec "$@"
SH
chmod +x mixed.sh
rm -f c-m.h5
if timeout 60 "${mpirun[@]}" -n 2 ./mixed.sh "$DD_BIN" --in smooth.h5 --out c-m.h5 \
    --backend "$backend" --kernel ozaki2-14 "${extra[@]}" >out 2>err; then
    fail "DD_OZAKI2_PANELS differing between ranks was taken"
fi
[ "$(grep -c 'DD_OZAKI2_PANELS is .* here but not on every rank' err)" = 1 ] ||
    { cat err; fail "no single message for DD_OZAKI2_PANELS differing between ranks"; }
[ ! -e c-m.h5 ] || fail "a refused run left c-m.h5"
echo "ok   DD_OZAKI2_PANELS differing between ranks refused"

# The CPU backend's ozaki2 kernels are FP64 only.
[ "$backend" = cpu ] || exit 0
if "${mpirun[@]}" -n 1 "$DD_BIN" --size 32 --dtype f32 --backend cpu --kernel ozaki2 >out 2>err; then
    fail "--dtype f32 with the CPU's ozaki2 was taken"
fi
grep -q "ozaki2 kernels multiply FP64 only" err || { cat err; fail "no message for f32 on the CPU's ozaki2"; }
echo "ok   f32 on the CPU's ozaki2 refused"
