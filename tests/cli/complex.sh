#!/usr/bin/env bash
# complex.sh — the program on the complex types with generated inputs
# (--size): --dtype c128 and c64 (and their short names z and c) at 1 and 4
# ranks, transa and transb in N, T, C (C: the conjugate transpose), alpha
# and beta other than 1 and 0; each run's check PASSED, its report naming
# the type and the expression (Aᴴ for 'C'), its JSON record the dtype and
# the transposes; the rate counting 8 flops per complex multiply-add (the
# record's tflops against 8·M·N·K over the median); a wrong element of C
# (DD_FAULT=corrupt-c) FAILS the complex check (exit 3); and --transa C on
# real data is --transa T (the same bits of C).
# Environment: DD_BIN, DD_COMPARE, DD_MPIRUN (launcher prefix without -n).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_BIN DD_COMPARE DD_MPIRUN
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
read -r -a mpirun <<<"$DD_MPIRUN"
fail() { echo "FAIL: $*" >&2; exit 1; }

n=0
for ranks in 1 4; do
    for spec in "c128 N C" "z C T" "c64 C C" "c T N"; do
        read -r dtype ta tb <<<"$spec"
        n=$((n + 1))
        json=$work/r$n.jsonl
        "${mpirun[@]}" -n "$ranks" "$DD_BIN" --backend cpu --size 37,29,23 --dtype "$dtype" \
            --transa "$ta" --transb "$tb" --alpha 0.5 --beta -2 --json "$json" >"$work/out" \
            2>"$work/err" || { cat "$work/out" "$work/err" >&2; fail "$dtype $ta$tb at $ranks ranks: exit $?"; }
        [ "$(grep -c 'PASSED$' "$work/out")" -eq 1 ] || { cat "$work/out"; fail "$dtype $ta$tb: no PASSED line"; }
        want=$dtype
        [ "$dtype" = z ] && want=c128
        [ "$dtype" = c ] && want=c64
        grep -q "^problem .* $want " "$work/out" || { cat "$work/out"; fail "$dtype: the report does not name $want"; }
        if [ "$ta" = C ]; then
            grep -q "Aᴴ" "$work/out" || { cat "$work/out"; fail "$dtype $ta$tb: no Aᴴ in the report"; }
        fi
        python3 - "$json" "$want" "$ta" "$tb" <<'PY' || fail "$dtype $ta$tb at $ranks ranks: the record"
import json, sys
r = json.loads(open(sys.argv[1]).readline())
want, ta, tb = sys.argv[2:5]
assert r["dtype"] == want, r["dtype"]
assert r["transa"] == ta and r["transb"] == tb, (r["transa"], r["transb"])
assert r["check"]["passed"] is True, r["check"]
t = r["time_median"]
want_tf = 8.0 * 37 * 29 * 23 / t / 1e12
assert t > 0 and abs(r["tflops"] - want_tf) <= 1e-6 * want_tf, (r["tflops"], want_tf)
PY
        echo "ok   $dtype transa $ta transb $tb at $ranks ranks: PASSED, report and record name $want"
    done
done

# a wrong element of C fails the complex check
rc=0
DD_FAULT='corrupt-c:*' "${mpirun[@]}" -n 2 "$DD_BIN" --backend cpu --size 17,7,9 --dtype c128 \
    --alpha 0.5 >"$work/out" 2>"$work/err" || rc=$?
[ "$rc" = 3 ] || { cat "$work/out" "$work/err"; fail "corrupt-c on c128: exit $rc, want 3"; }
grep -q 'FAILED$' "$work/out" || { cat "$work/out"; fail "corrupt-c on c128: no FAILED line"; }
echo "ok   a wrong element of C: the complex check FAILED, exit 3"

# 'C' on real data is 'T'
for t in C T; do
    "${mpirun[@]}" -n 2 "$DD_BIN" --backend cpu --size 9,8,7 --transa $t --out "$work/$t.h5" \
        --quiet >/dev/null 2>"$work/err" || { cat "$work/err"; fail "f64 --transa $t"; }
done
"$DD_COMPARE" equal "$work/C.h5" "$work/T.h5" C >"$work/cmp" ||
    { cat "$work/cmp"; fail "f64: --transa C and --transa T give different C"; }
echo "ok   f64 --transa C is --transa T"
echo "complex: all passed"
