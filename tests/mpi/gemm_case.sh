#!/usr/bin/env bash
# gemm_case.sh RANKS M N K DTYPE TRANSA TRANSB ALPHA BETA ORDER [dgemm-dist options...]
# One GEMM run, C = ALPHA·op(A)·op(B) + BETA·C, on RANKS ranks: gen writes
# the input as the run reads it (--transa/--transb shapes, --with-c, and
# --order ORDER: gen's own column-major writer), the run is checked
# (PASSED, exit 0) and C is compared with the independent serial product
# (dd-compare gemm, which reads each dataset as the writer meant it); the
# input is unchanged and one JSON record carries the GEMM keys.  With
# --backend cuda among the options it exits 77 (ctest: skipped) where no
# GPU exists.
# Environment: DD_BIN, DD_COMPARE, DD_MPIRUN (launcher prefix without -n).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_BIN DD_COMPARE DD_MPIRUN
ranks=$1 m=$2 n=$3 k=$4 dtype=$5 ta=$6 tb=$7 alpha=$8 beta=$9 order=${10}
shift 10
if [[ " $* " == *" --backend cuda "* ]] && ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "skipped: --backend cuda needs a GPU"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
read -r -a mpirun <<<"$DD_MPIRUN"
fail() { echo "FAIL: $*" >&2; exit 1; }

"${mpirun[@]}" -n "$ranks" "$DD_BIN" gen --out "$work/in.h5" -m "$m" -n "$n" -k "$k" \
    --dtype "$dtype" --seed 3 --transa "$ta" --transb "$tb" --order "$order" --with-c --quiet
before=$(sha256sum "$work/in.h5")
set +e
"${mpirun[@]}" -n "$ranks" "$DD_BIN" --in "$work/in.h5" --out "$work/c.h5" --transa "$ta" \
    --transb "$tb" --alpha "$alpha" --beta "$beta" --order "$order" --json "$work/run.jsonl" "$@" \
    >"$work/out" 2>"$work/err"
rc=$?
set -e
cat "$work/out"
[ "$rc" -eq 0 ] || { cat "$work/err" >&2; fail "dgemm-dist exited $rc"; }
[ "$(grep -c 'PASSED$' "$work/out")" -eq 1 ] || fail "no PASSED line"
"$DD_COMPARE" gemm "$work/in.h5" "$work/c.h5" --transa "$ta" --transb "$tb" --alpha "$alpha" \
    --beta "$beta" --order "$order"
[ "$(sha256sum "$work/in.h5")" = "$before" ] || fail "the input file changed"
[ -z "$(find "$work" -name '.*tmp*')" ] || fail "temporary file left"
python3 - "$work/run.jsonl" "$ranks" "$m" "$n" "$k" "$ta" "$tb" "$alpha" "$beta" "$order" <<'PY'
import json, sys
path, ranks, m, n, k, ta, tb, alpha, beta, order = sys.argv[1:]
rec = json.loads(open(path).readline())
assert rec["ranks"] == int(ranks) and (rec["m"], rec["n"], rec["k"]) == (int(m), int(n), int(k))
assert (rec["transa"], rec["transb"], rec["order"]) == (ta, tb, order), rec
assert rec["alpha"] == float(alpha) and rec["beta"] == float(beta), rec
assert rec["check"]["passed"] is True
print("json record ok")
PY
