#!/bin/bash
# Bad environment knobs in a run are never taken silently, and good ones
# change nothing but what they set:
#  - a 2-rank run with DD_RING_MIB=0, DD_API_THREADS=many, DD_API_TIMING=2
#    and DD_MODEL_LINK=warp (each malformed or out of range) still PASSES,
#    and stderr holds exactly one warning for each, naming the knob, the
#    value and what is used instead (one from the two ranks);
#  - DD_IO_THREADS=four (a strict knob) is refused before the read: exit
#    2, one message naming it, no output file;
#  - valid values (DD_RING_MIB=1, DD_API_THREADS=2, DD_IO_THREADS=2,
#    DD_API_TIMING=0) warn of nothing and PASS.
#
#   tests/cli/knob_warnings.sh DGEMM_DIST MPIRUN...
set -euo pipefail
bin=${1:?usage: $0 DGEMM_DIST MPIRUN...}
shift
mpirun=("$@")
work=$(mktemp -d "${TMPDIR:-/tmp}/knob-warnings.XXXXXX")
trap 'rm -rf "$work"' EXIT
bad=0
fail() {
    echo "FAIL: $*"
    bad=1
}

# 1. malformed and out-of-range knobs: one warning each, the run unchanged
rc=0
env DD_RING_MIB=0 DD_API_THREADS=many DD_API_TIMING=2 DD_MODEL_LINK=warp \
    timeout 120 "${mpirun[@]}" -n 2 "$bin" --size 96,80,64 --grid 1x2 --quiet \
    >"$work/out1" 2>"$work/err1" || rc=$?
[ "$rc" = 0 ] || fail "bad knobs: exit $rc (want 0): $(cat "$work/err1")"
grep -q PASSED "$work/out1" || fail "bad knobs: the run did not PASS: $(cat "$work/out1")"
for want in \
    'dgemm-dist: warning: DD_RING_MIB="0" is out of range (1..4096 MiB); using 64 (the default)' \
    'dgemm-dist: warning: DD_API_THREADS="many" is not a whole number (1..64 or auto); using auto (the default)' \
    'dgemm-dist: warning: DD_API_TIMING="2" is not a boolean (0|1); using 0 (the default)' \
    'dgemm-dist: warning: DD_MODEL_LINK="warp" is not a link of src/model/tables/links.csv; using mpi-shm'; do
    n=$(grep -cxF -- "$want" "$work/err1" || true)
    [ "$n" = 1 ] || fail "bad knobs: '$want' seen $n times, not once; stderr: $(cat "$work/err1")"
done
n=$(grep -c 'warning: DD_' "$work/err1" || true)
[ "$n" = 4 ] || fail "bad knobs: $n warnings, not 4: $(cat "$work/err1")"

# 2. a strict knob refused before anything is read or written
rc=0
env DD_IO_THREADS=four timeout 120 "${mpirun[@]}" -n 2 "$bin" --size 64 --io direct \
    --out "$work/c.h5" --quiet >"$work/out2" 2>"$work/err2" || rc=$?
[ "$rc" = 2 ] || fail "DD_IO_THREADS=four: exit $rc, not 2: $(cat "$work/err2")"
n=$(grep -c 'DD_IO_THREADS="four" is not a whole number; set it to 1..256 or auto' "$work/err2" || true)
[ "$n" = 1 ] || fail "DD_IO_THREADS=four: the refusal seen $n times, not once: $(cat "$work/err2")"
[ ! -e "$work/c.h5" ] || fail "DD_IO_THREADS=four: an output was written"

# 3. valid values: silent, and the run PASSES
rc=0
env DD_RING_MIB=1 DD_API_THREADS=2 DD_IO_THREADS=2 DD_API_TIMING=0 \
    timeout 120 "${mpirun[@]}" -n 2 "$bin" --size 96,80,64 --io direct --out "$work/c.h5" \
    --quiet >"$work/out3" 2>"$work/err3" || rc=$?
[ "$rc" = 0 ] || fail "good knobs: exit $rc: $(cat "$work/err3")"
grep -q PASSED "$work/out3" || fail "good knobs: the run did not PASS"
! grep -q 'DD_' "$work/err3" || fail "good knobs: a word about them: $(cat "$work/err3")"

[ "$bad" = 0 ] && echo "PASS (knob warnings): bad knobs warned once each, the strict one refused, good ones silent"
exit "$bad"
