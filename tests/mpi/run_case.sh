#!/usr/bin/env bash
# run_case.sh RANKS M N K DTYPE [dgemm-dist options...]
# Generates inputs (on RANKS ranks), multiplies on RANKS ranks with --check,
# and asserts: exit 0, PASSED, C equal to the serial product (dd-compare),
# input file unchanged, no temporary file left, one valid JSON record.
# Environment: DD_BIN, DD_COMPARE, DD_MPIRUN (launcher prefix without -n).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_BIN DD_COMPARE DD_MPIRUN
ranks=$1 m=$2 n=$3 k=$4 dtype=$5
shift 5
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
read -r -a mpirun <<<"$DD_MPIRUN"

"${mpirun[@]}" -n "$ranks" "$DD_BIN" gen --out "$work/in.h5" -m "$m" -n "$n" -k "$k" \
    --dtype "$dtype" --seed 11 --quiet
before=$(sha256sum "$work/in.h5" | cut -d' ' -f1)

set +e
"${mpirun[@]}" -n "$ranks" "$DD_BIN" --in "$work/in.h5" --out "$work/c.h5" --check \
    --json "$work/run.jsonl" "$@" >"$work/out.log" 2>"$work/err.log"
rc=$?
set -e
cat "$work/out.log"
if [ "$rc" -ne 0 ]; then
    echo "FAIL: dgemm-dist exited $rc" >&2
    cat "$work/err.log" >&2
    exit 1
fi
grep -q 'PASSED$' "$work/out.log" || { echo "FAIL: no PASSED line" >&2; exit 1; }
[ "$(grep -c 'PASSED$' "$work/out.log")" -eq 1 ] || { echo "FAIL: PASSED printed more than once" >&2; exit 1; }
"$DD_COMPARE" product "$work/in.h5" "$work/c.h5"
after=$(sha256sum "$work/in.h5" | cut -d' ' -f1)
[ "$before" = "$after" ] || { echo "FAIL: the input file changed" >&2; exit 1; }
leftover=$(find "$work" -name '.*tmp*' | head -1)
[ -z "$leftover" ] || { echo "FAIL: temporary file left: $leftover" >&2; exit 1; }
[ "$(wc -l <"$work/run.jsonl")" -eq 1 ] || { echo "FAIL: expected one JSON record" >&2; exit 1; }
python3 - "$work/run.jsonl" "$ranks" "$m" "$n" "$k" "$dtype" <<'PY'
import json, sys
path, ranks, m, n, k, dtype = sys.argv[1:]
rec = json.loads(open(path).readline())
assert rec["ranks"] == int(ranks), rec["ranks"]
assert (rec["m"], rec["n"], rec["k"]) == (int(m), int(n), int(k))
assert rec["dtype"] == dtype
assert rec["grid"][0] * rec["grid"][1] == int(ranks)
assert rec["check"]["passed"] is True and rec["check"]["residual"] < 16
assert rec["tflops"] > 0 and rec["time_median"] > 0
# the rate is the median's, not the minimum's or the mean's
t = sorted(rec["multiply_times"])
med = t[len(t) // 2] if len(t) % 2 else (t[len(t) // 2 - 1] + t[len(t) // 2]) / 2
assert abs(rec["time_median"] - med) <= 1e-8 * med, (rec["time_median"], med)
assert abs(rec["tflops"] - 2 * int(m) * int(n) * int(k) / med / 1e12) <= 1e-6 * rec["tflops"]
# a product of this size leaves rounding differences: a residual of exactly 0
# would mean the check compared nothing
if min(int(m), int(n), int(k)) >= 8:
    assert rec["check"]["residual"] > 0, rec["check"]
for ph in ("read", "multiply", "exposed_comm", "write", "check"):
    p = rec["phases"][ph]
    assert 0 <= p["min"] <= p["avg"] <= p["max"], (ph, p)
print("json record ok")
PY
