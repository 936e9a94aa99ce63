#!/usr/bin/env bash
# pipeline.sh — file to file as one pipeline (src/driver/run_pipe.c): a
# single pass from --in to --out runs C in bands of rows, op(A) read and C
# written behind the multiply.  At 1, 2, 3 and 4 ranks, with alpha, beta
# and C's input, with a transposed B, and through the GPU's host slots
# (DD_FAULT=pipe-slots: slots of dd_plan_host_alloc moved straight by
# dd_plan_put_rows and dd_plan_take_rows_to; with pipe-pageable plain slots
# through the plan's staging, in pieces of 3 rows with pipe-narrow; the
# error path of each with pipe-stage; the CPU reads and writes bands in
# place): the check
# PASSED, C equal to the file's product within dd-compare's bound, the
# report's "pipeline" line with the hidden seconds, the JSON record's
# "pipeline" object, and every key of the record in docs/json-record.md;
# the phased run (DD_FAULT=no-pipeline on one rank, and --repeat 2, which
# keeps the in-memory path) gives C within rounding of it and a null
# "pipeline".
# Environment: DD_BIN, DD_COMPARE, DD_MPIRUN.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_BIN DD_COMPARE DD_MPIRUN
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
read -r -a mpirun <<<"$DD_MPIRUN"
export OPENBLAS_NUM_THREADS=1
fail() { echo "FAIL: $*" >&2; exit 1; }
here=$(cd "$(dirname "$0")" && pwd)
cd "$work"

# bands NAME: the record's pipeline.bands (0 for null)
bands() {
    python3 -c 'import json,sys
r=json.loads(open(sys.argv[1]).read().splitlines()[-1])
p=r["pipeline"]
print(0 if p is None else p["bands"])
if p is not None:
    h=p["hidden"]
    assert 0 <= h["read"] <= r["phases"]["read"]["max"] + 1e-9, h
    assert 0 <= h["write"] <= r["phases"]["write"]["max"] + 1e-9, h
    assert p["loop_seconds"] > 0, p
    assert 0 < p["band_bytes"] <= r["m"] * r["n"] * 8, p
    assert p["resident_seconds"] >= 0, p
    assert (p["slots_seconds"] > 0) == (p["slots"] == "pinned"), p' "$1"
}

# one RANKS TAG ARGS...: a pipelined run, checked
one() {
    local n=$1 tag=$2
    shift 2
    rm -f "c-$tag.h5" "r-$tag.json"
    "${mpirun[@]}" -n "$n" "$DD_BIN" --in in.h5 --out "c-$tag.h5" --json "r-$tag.json" "$@" \
        >out 2>err || { cat out err >&2; fail "$tag: dgemm-dist failed"; }
    grep -q 'PASSED$' out || { cat out; fail "$tag: no PASSED line"; }
    grep -Eq '^pipeline  [0-9]+ bands of C: read .* hidden\) · multiply .* · write .* hidden\)' out ||
        { cat out; fail "$tag: no pipeline line in the report"; }
    [ "$(bands "r-$tag.json")" -ge 2 ] || fail "$tag: the record's pipeline has fewer than 2 bands"
    echo "ok   $tag: $(grep '^pipeline' out)"
}

"${mpirun[@]}" -n 1 "$DD_BIN" gen --out in.h5 -m 70 -n 50 -k 60 --with-c --seed 7 --quiet
for n in 1 2 3 4; do
    one "$n" "np$n" --panel 8
    "$DD_COMPARE" product in.h5 "c-np$n.h5" >/dev/null || fail "np$n: C is not A·B"
    one "$n" "gemm$n" --panel 8 --alpha -0.5 --beta 2.5
    "$DD_COMPARE" gemm in.h5 "c-gemm$n.h5" --alpha -0.5 --beta 2.5 >/dev/null ||
        fail "gemm$n: C is not alpha·A·B + beta·C"
done
# slots NAME WHAT: the record's pipeline.slots is WHAT
slots() {
    python3 -c 'import json,sys
r=json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert r["pipeline"]["slots"] == sys.argv[2], r["pipeline"]' "r-$1.json" "$2" ||
        fail "$1: the bands' slots are not $2"
}
# the GPU's way on the CPU: bands through host slots of dd_plan_host_alloc,
# moved straight (dd_plan_put_rows, dd_plan_take_rows_to), three slots of
# op(A) turned with 5 or more bands
DD_FAULT='pipe-slots:*' one 3 slots --panel 8 --alpha 1.5 --beta -1
{ grep -Eq '^upload ' out && grep -Eq '^download ' out; } || fail "slots: no upload/download phases"
grep -q 'slots pinned$' out || fail "slots: the report does not say the slots are pinned"
slots slots pinned
"$DD_COMPARE" gemm in.h5 c-slots.h5 --alpha 1.5 --beta -1 >/dev/null || fail "slots: C is wrong"
[ "$(bands r-slots.json)" -ge 4 ] || fail "slots: fewer than 4 bands: the third slot not turned"
# the slots allocated before op(B)'s read (the bench's pipe-slots-first), the same C
DD_FAULT='pipe-slots:*,pipe-slots-first:*' one 2 first --panel 8 --alpha 1.5 --beta -1
slots first pinned
"$DD_COMPARE" gemm in.h5 c-first.h5 --alpha 1.5 --beta -1 >/dev/null || fail "first: C is wrong"
one 1 none --panel 8 --backend cpu
slots none "in place"
# plain slots through the plan's staging in pieces of 3 rows (DD_FAULT=pipe-pageable, as
# where pinned memory cannot be had; pipe-narrow: several pieces per band, both slots
# turned); pipe-stage fails the second band's put on rank 1 alone: the run ends with that
# message on every rank (each way's error path)
DD_FAULT='pipe-slots:*,pipe-pageable:*,pipe-narrow:*' one 2 narrow --panel 8 --alpha 1.5 --beta -1
slots narrow staged
"$DD_COMPARE" gemm in.h5 c-narrow.h5 --alpha 1.5 --beta -1 >/dev/null || fail "narrow: C is wrong"
for way in 'pipe-slots:*' 'pipe-slots:*,pipe-pageable:*'; do
    rm -f c-stage.h5
    if DD_FAULT="$way,pipe-stage:1" timeout 60 "${mpirun[@]}" -n 2 "$DD_BIN" --in in.h5 \
        --out c-stage.h5 --panel 8 >out 2>err; then
        fail "stage ($way): the injected staging fault did not fail the run"
    fi
    grep -q 'injected fault staging the second band of A on rank 1' err ||
        { cat out err >&2; fail "stage ($way): no message naming the staging fault"; }
    [ ! -e c-stage.h5 ] || fail "stage ($way): an output was left"
done
echo "ok   staged bands: pieces of 3 rows, and a staging fault on one rank, pinned and plain"
"${mpirun[@]}" -n 1 "$DD_BIN" gen --out bt.h5 -m 33 -n 41 -k 29 --transb T --quiet
rm -f c-bt.h5
"${mpirun[@]}" -n 2 "$DD_BIN" --in bt.h5 --out c-bt.h5 --transb T --json r-bt.json --quiet >out
[ "$(bands r-bt.json)" -ge 2 ] || fail "transb: not pipelined"
"$DD_COMPARE" gemm bt.h5 c-bt.h5 --transb T >/dev/null || fail "transb: C is not A·B^T"
echo "ok   transposed B pipelined"
# DD_PIPE_BAND_MIB: 1 MiB bands of an 8 MiB C are 8 bands of 1 MiB; auto (256 MiB) the least, 4
"${mpirun[@]}" -n 1 "$DD_BIN" gen --out big.h5 -m 1024 -n 1024 -k 16 --quiet
for mib in 1 auto; do
    rm -f c-mib.h5
    DD_PIPE_BAND_MIB=$mib "${mpirun[@]}" -n 1 "$DD_BIN" --in big.h5 --out c-mib.h5 \
        --json "r-mib$mib.json" --quiet >out || fail "DD_PIPE_BAND_MIB=$mib: dgemm-dist failed"
done
python3 -c 'import json,sys
p=[json.loads(open(f).read().splitlines()[-1])["pipeline"] for f in sys.argv[1:]]
assert (p[0]["bands"], p[0]["band_bytes"]) == (8, 1 << 20), p[0]
assert p[1]["bands"] == 4, p[1]' r-mib1.json r-mibauto.json || fail "DD_PIPE_BAND_MIB: not the bands asked for"
"$DD_COMPARE" product big.h5 c-mib.h5 >/dev/null || fail "DD_PIPE_BAND_MIB: C is not A·B"
echo "ok   DD_PIPE_BAND_MIB sets the bands' bytes"

# every key of a pipelined record is documented
python3 - r-np2.json "$here/../../docs/json-record.md" <<'PY' || fail "record keys not in docs/json-record.md"
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
doc = open(sys.argv[2]).read()
missing = [k for k in r if "`%s`" % k not in doc]
missing += ["pipeline." + k for k in r["pipeline"] if "`%s`" % k not in doc]
assert not missing, missing
PY
echo "ok   the record's keys are in docs/json-record.md"

# the phased run: the same C within rounding, no pipeline in the record
DD_FAULT=no-pipeline:1 "${mpirun[@]}" -n 2 "$DD_BIN" --in in.h5 --out c-phased.h5 --json r-ph.json \
    >out 2>err || { cat out err >&2; fail "phased run failed"; }
! grep -q '^pipeline' out || fail "phased run reports a pipeline"
[ "$(bands r-ph.json)" -eq 0 ] || fail "phased run's record has a pipeline"
"$DD_COMPARE" product in.h5 c-phased.h5 >/dev/null || fail "phased: C is not A·B"
"${mpirun[@]}" -n 2 "$DD_BIN" --in in.h5 --out c-rep.h5 --repeat 2 --json r-rep.json --quiet >out
[ "$(bands r-rep.json)" -eq 0 ] || fail "--repeat 2 was pipelined"
echo "ok   phased runs (DD_FAULT=no-pipeline:1, --repeat 2) keep the in-memory path"
