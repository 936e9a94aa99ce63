#!/usr/bin/env bash
# --accuracy native|fp64 (src/cli/cli.c, src/driver/run.c's fp64_kernel):
# refusals (a bad value, given twice, with --kernel: exit 2, one message);
# on the CPU backend fp64 keeps the default kernel and says why in the
# report ("accuracy  fp64: ...") and in the record (accuracy, accuracy_choice);
# without it the record says native and accuracy_choice is null.
# Environment: DD_BIN.
set -u
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_BIN
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fails=0
fail() {
    echo "FAIL $1: $2"
    sed 's/^/    stderr: /' "$work/stderr" | head -10
    fails=$((fails + 1))
}

# refuse NAME MESSAGE -- ARGS...
refuse() {
    local name=$1 msg=$2 rc n
    shift 3
    timeout 60 "$DD_BIN" "$@" >"$work/stdout" 2>"$work/stderr"
    rc=$?
    n=$(grep -c '^dgemm-dist: error:' "$work/stderr")
    if [ "$rc" -ne 2 ] || [ "$n" -ne 1 ] || ! grep -qF -- "$msg" "$work/stderr"; then
        fail "$name" "exit $rc, $n error lines, expected 2, 1 and: $msg"
    else
        echo "ok   $name"
    fi
}
refuse bad_value "bad value 'fast' for --accuracy: expected native or fp64" -- \
    --size 64 --accuracy fast
refuse twice "--accuracy given twice" -- --size 64 --accuracy fp64 --accuracy native
refuse with_kernel "--kernel and --accuracy both choose the local multiply kernel" -- \
    --size 64 --accuracy fp64 --kernel openblas
refuse native_with_kernel "--kernel and --accuracy both choose" -- \
    --size 64 --accuracy native --kernel openblas

# run CASE JSON ARGS...: a CPU run that must pass its check
run() {
    local name=$1 js=$2
    shift 2
    if ! timeout 120 "$DD_BIN" --backend cpu --json "$js" "$@" >"$work/stdout" 2>"$work/stderr" ||
        ! grep -q 'PASSED$' "$work/stdout"; then
        fail "$name" "the run failed or its check did not pass"
        return 1
    fi
}
if run fp64 "$work/fp64.json" --size 96,80,64 --accuracy fp64; then
    grep -q '^accuracy  fp64: the default kernel' "$work/stdout" ||
        fail fp64_report "no 'accuracy  fp64: the default kernel' line in the report"
    grep -q '"accuracy":"fp64"' "$work/fp64.json" || fail fp64_record "accuracy is not fp64"
    grep -q '"accuracy_choice":"the default kernel' "$work/fp64.json" ||
        fail fp64_choice "accuracy_choice does not name the default kernel"
    grep -q '"kernel":"openblas"' "$work/fp64.json" || fail fp64_kernel "kernel is not openblas"
    echo "ok   fp64 on the CPU backend: default kernel, reported and recorded"
fi
if run native "$work/native.json" --size 96,80,64; then
    grep -q '"accuracy":"native","accuracy_choice":null' "$work/native.json" ||
        fail native_record "accuracy native with a null accuracy_choice expected"
    ! grep -q '^accuracy ' "$work/stdout" || fail native_report "an accuracy line without fp64"
    echo "ok   native by default"
fi
[ "$fails" -eq 0 ] || { echo "$fails failure(s)"; exit 1; }
echo "accuracy.sh: all passed"
