#!/usr/bin/env bash
# tests/io/h5py_complex.sh TEST_IO RANKS — complex matrices between h5py and
# the I/O layer, on RANKS ranks:
#  1. h5py writes complex128 and complex64 datasets (members r/i, real/imag,
#     big-endian, chunked and compressed) and bad inputs (h5py_complex.py write);
#  2. every read path reads h5py's datasets and checks their values, the
#     direct path with pread where the bytes are the memory's; the probe
#     reports them complex, row- and column-major (test-io h5py-read);
#  3. every write path writes complex files (test-io h5py-write), and h5py
#     reads them back as complex128/complex64 with every value right
#     (h5py_complex.py check);
#  4. dgemm-dist refuses each bad input with exit 2 and one message naming
#     what is wrong: no output file, no temporary, the input untouched;
#  5. dgemm-dist on h5py's complex A and B never crashes: it writes C =
#     A @ B (checked by numpy) or, where it multiplies real matrices only,
#     refuses them as complex (exit 2, one message, no output).
# DD_PYTHON: the interpreter (default: the first of /usr/bin/python3 and
# python3 with numpy and h5py).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_BIN DD_MPIRUN
test_io=${1:?usage: $0 TEST_IO RANKS}
ranks=${2:?usage: $0 TEST_IO RANKS}
here=$(cd "$(dirname "$0")" && pwd)
read -r -a mpirun <<<"$DD_MPIRUN"
py=""
for c in ${DD_PYTHON:-} /usr/bin/python3 python3; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -c "import numpy, h5py" 2>/dev/null; then
        py=$c
        break
    fi
done
if [ -z "$py" ]; then
    echo "FAIL: no python3 with numpy and h5py (Debian: python3-numpy python3-h5py," \
        "as tests/install-deps.sh installs them)"
    exit 1
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0

"$py" "$here/h5py_complex.py" write "$work"
timeout 120 "${mpirun[@]}" -n "$ranks" "$test_io" h5py-read "$work" || fails=$((fails + 1))
timeout 120 "${mpirun[@]}" -n "$ranks" "$test_io" h5py-write "$work" || fails=$((fails + 1))
"$py" "$here/h5py_complex.py" check "$work" || fails=$((fails + 1))

# refuse NAME PATTERN: dgemm-dist on bad-NAME.h5 exits 2 with PATTERN in
# its one error line, and leaves no output and the input as it was
refuse() {
    local name=$1 pattern=$2 in="$work/bad-$1.h5" rc before why=""
    before=$(sha256sum "$in")
    set +e
    timeout 30 "${mpirun[@]}" -n "$ranks" "$DD_BIN" --in "$in" --out "$work/out.h5" \
        >"$work/stdout" 2>"$work/stderr"
    rc=$?
    set -e
    [ "$rc" -eq 2 ] || why="exit status $rc, expected 2"
    grep -q -- "$pattern" "$work/stderr" || why="${why:+$why; }no \"$pattern\" in the message"
    [ "$(grep -c '^dgemm-dist: error:' "$work/stderr" || true)" -eq 1 ] ||
        why="${why:+$why; }not exactly one error line"
    ! grep -q 'HDF5-DIAG' "$work/stderr" || why="${why:+$why; }HDF5 error stack printed"
    [ ! -e "$work/out.h5" ] || why="${why:+$why; }output file created"
    ! find "$work" -name '.*tmp*' | grep -q . || why="${why:+$why; }temporary left"
    [ "$(sha256sum "$in")" = "$before" ] || why="${why:+$why; }input changed"
    if [ -n "$why" ]; then
        echo "FAIL refuse $name: $why"
        sed 's/^/    stderr: /' "$work/stderr" | head -10
        fails=$((fails + 1))
    else
        echo "ok   refuse $name: $(grep '^dgemm-dist: error:' "$work/stderr")"
    fi
}
refuse mixed "members are of mixed types (r is an 8-byte float, i is int64)"
refuse sizes "members are of different sizes (r is 8 bytes, i 4)"
refuse three 'it has 3 members ("r", "i", "w")'
refuse names 'members are named "re" and "im"'
refuse c256 "members are 16-byte floats"
refuse realb "A is c128 (complex) but B is f64"

# 5: multiplied, or refused as complex; never a crash or a partial output
in="$work/h5py.h5"
before=$(sha256sum "$in")
rm -f "$work/out.h5"
set +e
timeout 60 "${mpirun[@]}" -n "$ranks" "$DD_BIN" --in "$in" --out "$work/out.h5" \
    >"$work/stdout" 2>"$work/stderr"
rc=$?
set -e
why=""
if [ "$rc" -eq 0 ]; then
    "$py" "$here/h5py_complex.py" product "$in" "$work/out.h5" || why="C is not A @ B"
elif [ "$rc" -eq 2 ]; then
    grep -q '^dgemm-dist: error:.*(complex)' "$work/stderr" || why="exit 2 without naming complex"
    [ ! -e "$work/out.h5" ] || why="${why:+$why; }output file created"
    [ -n "$why" ] || echo "ok   complex input refused: $(grep '^dgemm-dist: error:' "$work/stderr")"
else
    why="exit status $rc (0: multiplied, 2: refused)"
fi
[ "$(sha256sum "$in")" = "$before" ] || why="${why:+$why; }input changed"
if [ -n "$why" ]; then
    echo "FAIL complex input: $why"
    sed 's/^/    stderr: /' "$work/stderr" | head -10
    fails=$((fails + 1))
fi

if [ "$fails" -ne 0 ]; then
    echo "FAIL (h5py complex, $ranks ranks): $fails failed"
    exit 1
fi
echo "PASS (h5py complex, $ranks ranks)"
