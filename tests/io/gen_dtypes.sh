#!/usr/bin/env bash
# gen for every element type at 1 and 2 ranks (each rank reads back the
# first and last element of its band before the file takes its name), then
# the file multiplied with the check.  Label memsafe: it also runs in the
# sanitized tree (tests/sanitize), where a read-back that writes past its
# one-element buffer (16 bytes for c128) is a report.
set -uo pipefail
read -r -a mpirun <<<"$DD_MPIRUN"
work=$(mktemp -d "${TMPDIR:-/tmp}/gen-dtypes.XXXXXX")
trap 'rm -rf "$work"' EXIT
for dt in f64 f32 c128 c64; do
    for n in 1 2; do
        f=$work/$dt-$n.h5
        "${mpirun[@]}" -n "$n" "$DD_BIN" gen --out "$f" -m 13 -n 11 -k 7 --dtype "$dt" --with-c \
            --quiet || { echo "FAIL: gen --dtype $dt at $n ranks"; exit 1; }
        out=$("${mpirun[@]}" -n "$n" "$DD_BIN" --backend cpu --in "$f" --beta 1 2>&1) ||
            { echo "$out"; echo "FAIL: $dt file at $n ranks"; exit 1; }
        grep -q "PASSED" <<<"$out" || { echo "$out"; echo "FAIL: $dt file at $n ranks: no PASSED"; exit 1; }
    done
done
echo "gen: f64 f32 c128 c64 at 1 and 2 ranks written, read back and multiplied"
