#!/usr/bin/env bash
# complex_scalars.sh WHAT [BACKEND] — complex --alpha and --beta (src/cli/cli_scalar.c's
# parse_scalar, src/driver/run.c's check_scalars):
#   parse  every spelling taken (RE, IMi, RE+IMi, RE-IMi, i, -i, j for i,
#          numpy's (1+2j), --alpha=V) shows as the dry run's expression;
#          malformed values (a second sign, no i, i first, spaces, inf,
#          nan, an unclosed parenthesis, ...) exit 2 with one message; an
#          imaginary part on real data (--dtype f64, f32, a real file) exits
#          2 with one message naming the fix and writes nothing, while 2+0i
#          is real; a complex beta without C's input named as given; the
#          record's alpha_im and beta_im, documented in docs/json-record.md
#   files  gen --dtype c128|c64 --with-c, then runs with complex alpha and
#          beta at 1 and 4 ranks, op N, T, C: from the file to --out (the
#          phased path: the record's pipeline null) and from --size (the
#          generated in-memory path, against gen's file), each C against
#          numpy's alpha·op(A)@op(B) + beta·C and the output's attributes;
#          pure imaginary alpha and beta, alpha 0 (C = beta·C_in) and beta 0;
#          a real file to file pipelined with --alpha 1.5+0i; alpha or beta
#          forgotten at load (DD_FAULT=no-alpha, no-beta) caught by the
#          input sampler, which scales by the complex value (exit 3)
# BACKEND (files): --backend for every multiply, cpu (the default) or cuda
# (the engine's complex scale on the GPU against the sampler's, bit for
# bit; exits 77, ctest's skipped, where there is no GPU).
# Environment: DD_BIN, DD_MPIRUN (launcher prefix without -n); DD_PYTHON:
# the interpreter (default: the first of /usr/bin/python3 and python3 with
# numpy and h5py).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_BIN DD_MPIRUN
what=${1:?usage: $0 parse|files [cpu|cuda]}
backend=${2:-cpu}
if [ "$backend" = cuda ] && ! nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then
    echo "skipped: --backend cuda needs a GPU"
    exit 77
fi
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
read -r -a mpirun <<<"$DD_MPIRUN"
export OPENBLAS_NUM_THREADS=1
fail() { echo "FAIL: $*" >&2; exit 1; }
py=""
for c in ${DD_PYTHON:-} /usr/bin/python3 python3; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -c "import numpy, h5py" 2>/dev/null; then
        py=$c
        break
    fi
done
[ -n "$py" ] || fail "no python3 with numpy and h5py (Debian: python3-numpy python3-h5py)"

# refuse NAME STATUS PATTERN ARGS...: a singleton run exits STATUS with one
# error line matching PATTERN, and writes no output
refuse() {
    local name=$1 status=$2 pattern=$3 rc n
    shift 3
    rm -f "$work/out.h5"
    set +e
    timeout 60 "$DD_BIN" "$@" >"$work/out" 2>"$work/err"
    rc=$?
    set -e
    n=$(grep -c '^dgemm-dist: error:' "$work/err" || true)
    [ "$rc" -eq "$status" ] || { cat "$work/out" "$work/err"; fail "$name: exit $rc, expected $status"; }
    [ "$n" -eq 1 ] || { cat "$work/err"; fail "$name: $n error lines, expected one"; }
    grep -Eq -- "$pattern" "$work/err" || { cat "$work/err"; fail "$name: message does not match /$pattern/"; }
    [ ! -e "$work/out.h5" ] || fail "$name: output written"
    [ -z "$(find "$work" -name '.*tmp*')" ] || fail "$name: temporary file left"
}

parse() {
    local spec v want
    # VALUE|EXPRESSION the dry run shows for --alpha VALUE (beta 0)
    for spec in "1.5|C = 1.5·A·B" "-0.5|C = -0.5·A·B" "2-0.5i|C = (2-0.5i)·A·B" \
        "-1+2i|C = (-1+2i)·A·B" "0.5i|C = 0.5i·A·B" "-2i|C = -2i·A·B" "i|C = 1i·A·B" \
        "-i|C = -1i·A·B" "+i|C = 1i·A·B" "j|C = 1i·A·B" "1+2j|C = (1+2i)·A·B" \
        "(1+2j)|C = (1+2i)·A·B" "(-0.5)|C = -0.5·A·B" "1e-3+i|C = (0.001+1i)·A·B" \
        "2.5e-1-1e1j|C = (0.25-10i)·A·B" "3-i|C = (3-1i)·A·B" "1e+2-2.5e-1i|C = (100-0.25i)·A·B" \
        "1+0i|C = A·B" "0+0i|C = 0·A·B" "0x1p-2+0x1p1i|C = (0.25+2i)·A·B"; do
        v=${spec%%|*}
        want=${spec#*|}
        "$DD_BIN" --size 5,4,3 --dtype c128 --dry-run --alpha="$v" >"$work/out" 2>"$work/err" ||
            { cat "$work/err"; fail "--alpha=$v refused"; }
        grep -qF "dry run: $want  c128" "$work/out" ||
            { cat "$work/out"; fail "--alpha=$v: no \"$want\" in the dry run"; }
    done
    echo "ok   --alpha: 20 spellings taken, each the expression it means"
    for spec in "0.5i|C = A·B + 0.5i·C" "-2i|C = A·B - 2i·C" "1-1i|C = A·B + (1-1i)·C" \
        "(-1-1j)|C = A·B + (-1-1i)·C" "-1|C = A·B - C" "0+0i|C = A·B  " "2.5|C = A·B + 2.5·C"; do
        v=${spec%%|*}
        want=${spec#*|}
        "$DD_BIN" --size 5,4,3 --dtype c64 --dry-run --beta "$v" >"$work/out" 2>"$work/err" ||
            { cat "$work/err"; fail "--beta $v refused"; }
        grep -qF "dry run: $want" "$work/out" ||
            { cat "$work/out"; fail "--beta $v: no \"$want\" in the dry run"; }
    done
    echo "ok   --beta: 7 spellings taken, each the expression it means"
    local n=0
    for v in "1+2" "2i+1" "1++2i" "1+-2i" "1-+2i" "1 +2i" "1+ 2i" " 1" "1 " "" "+" "-" "inf" \
        "nan" "-inf+1i" "1+infi" "1+nani" "1e999i" "1e999" "1+2k" "1+2I" "()" "(1+2j" "1+2j)" \
        "((1))" "ii" "1+2ii" "1e" "i2" "j1" "1+i2" "2*i" "1,2" "i+1" "1+i+i"; do
        refuse "bad '$v'" 2 "bad value '.*' for --alpha: expected a finite number" \
            --size 5,4,3 --dtype c128 --alpha="$v"
        n=$((n + 1))
    done
    refuse "bad beta" 2 "bad value '1\+2' for --beta: expected a finite number, .* RE\+IMi" \
        --size 5,4,3 --dtype c128 --beta 1+2
    echo "ok   $n malformed values for --alpha (and one for --beta): exit 2, one message"

    # an imaginary part on real data, generated or from a file
    refuse "f64 alpha" 2 "--alpha 1\+2i has an imaginary part, but --dtype f64 is real: give --alpha a real value, or use --dtype c128 or c64" \
        --size 5,4,3 --alpha 1+2i --out "$work/out.h5"
    refuse "f32 beta" 2 "--beta 0.5i has an imaginary part, but --dtype f32 is real" \
        --size 5,4,3 --dtype f32 --beta 0.5i
    refuse "f64 beta j" 2 "--beta -1-2i has an imaginary part" --size 5,4,3 --dtype f64 --beta "(-1-2j)"
    "$DD_BIN" gen --out "$work/real.h5" -m 5 -n 4 -k 3 --with-c --quiet
    refuse "real file" 2 "--beta 2-1i has an imaginary part, but .*/real.h5 holds real matrices \(f64\): give --beta a real value" \
        --in "$work/real.h5" --out "$work/out.h5" --beta 2-1i
    echo "ok   an imaginary part on f64, f32 and a real file: exit 2, one message naming the fix, nothing written"
    "$DD_BIN" gen --out "$work/ab.h5" -m 5 -n 4 -k 3 --dtype c128 --quiet
    refuse "beta 0.5i without C" 2 "--beta 0.5i needs C's input, but input file .*/ab.h5 has no dataset \"C\"" \
        --in "$work/ab.h5" --out "$work/out.h5" --beta 0.5i
    refuse "beta 1-2i without C" 2 "--beta 1-2i needs C's input" --in "$work/ab.h5" --beta 1-2i
    echo "ok   a complex beta without C's input: the message names it as given"
    "$DD_BIN" --size 5,4,3 --alpha 2+0i --beta "(-1+0j)" --json "$work/real.jsonl" >"$work/out" 2>&1 ||
        { cat "$work/out"; fail "f64 with --alpha 2+0i refused"; }
    grep -qF "C = 2·A·B - C" "$work/out" || { cat "$work/out"; fail "f64 2+0i: not C = 2·A·B - C"; }
    "$py" "$here/complex_scalars.py" record "$work/real.jsonl" 2 -1 0 || fail "f64 2+0i: the record"
    echo "ok   2+0i on f64 is the real 2: PASSED, alpha_im 0 in the record"
    "$DD_BIN" --size 5,4,3 --dtype c64 --alpha 2-0.5i --beta 0.5i --json "$work/c.jsonl" \
        >"$work/out" 2>&1 || { cat "$work/out"; fail "c64 complex alpha, beta"; }
    grep -qF "C = (2-0.5i)·A·B + 0.5i·C  c64" "$work/out" || { cat "$work/out"; fail "c64: the report's problem line"; }
    "$py" "$here/complex_scalars.py" record "$work/c.jsonl" 2-0.5i 0.5i 0 || fail "c64: the record"
    "$py" - "$work/c.jsonl" "$here/../../docs/json-record.md" <<'PY' || fail "record keys not in docs/json-record.md"
import json, sys
r = json.loads(open(sys.argv[1]).read().splitlines()[-1])
doc = open(sys.argv[2]).read()
missing = [k for k in r if "`%s`" % k not in doc]
assert not missing, missing
PY
    echo "ok   the report shows (2-0.5i)·A·B + 0.5i·C, the record alpha_im -0.5, beta_im 0.5, documented"
}

# gemm NAME RANKS IN OUT TA TB ALPHA BETA [ARGS...]: a run with --out
# exits 0 with one PASSED line and numpy agrees with C
gemm() {
    local name=$1 ranks=$2 in=$3 out=$4 ta=$5 tb=$6 alpha=$7 beta=$8
    shift 8
    rm -f "$out"
    local rc=0
    "${mpirun[@]}" -n "$ranks" "$DD_BIN" --backend "$backend" --out "$out" --transa "$ta" \
        --transb "$tb" --alpha "$alpha" --beta "$beta" --json "$work/r.jsonl" "$@" \
        >"$work/out" 2>"$work/err" || rc=$?
    [ "$rc" -eq 0 ] || { cat "$work/out" "$work/err" >&2; fail "$name: exit $rc"; }
    grep -q "^backend   $backend " "$work/out" || { cat "$work/out"; fail "$name: not on the $backend backend"; }
    [ "$(grep -c 'PASSED$' "$work/out")" -eq 1 ] || { cat "$work/out"; fail "$name: no PASSED line"; }
    "$py" "$here/complex_scalars.py" gemm "$in" "$out" "$ta" "$tb" "$alpha" "$beta" >"$work/py" ||
        { cat "$work/py"; fail "$name: C is not numpy's"; }
    echo "ok   $name: $(cut -c6- "$work/py")"
}

files() {
    local spec dtype ta tb alpha beta ranks f
    for spec in "c128 N N 2-0.5i 0.5+1i" "c128 T C -1+2i (0.25-1j)" "c128 C T 0.5i -i" \
        "c64 C C 1.5-2i 0.5i" "c64 N T -0.75i 2+0.5i" "c64 T N 3+i -1-1i"; do
        read -r dtype ta tb alpha beta <<<"$spec"
        f=$work/$dtype-$ta$tb.h5
        "${mpirun[@]}" -n 2 "$DD_BIN" gen --out "$f" -m 37 -n 29 -k 23 --dtype "$dtype" \
            --transa "$ta" --transb "$tb" --with-c --seed 7 --quiet
        for ranks in 1 4; do
            gemm "$dtype $ta$tb file at $ranks ranks" "$ranks" "$f" "$work/c.h5" "$ta" "$tb" \
                "$alpha" "$beta" --in "$f"
            "$py" "$here/complex_scalars.py" record "$work/r.jsonl" "$alpha" "$beta" 0 ||
                fail "$dtype $ta$tb file: the record"
            gemm "$dtype $ta$tb generated at $ranks ranks" "$ranks" "$f" "$work/c.h5" "$ta" "$tb" \
                "$alpha" "$beta" --size 37,29,23 --dtype "$dtype" --seed 7
        done
    done
    f=$work/c128-NN.h5
    gemm "c128 alpha 0, beta 1-1i (C = beta·C_in)" 4 "$f" "$work/c.h5" N N 0+0i 1-1i --in "$f"
    gemm "c128 alpha 2i, beta 0 (C's input not read)" 3 "$f" "$work/c.h5" N N 2i 0 --in "$f"
    "$py" "$here/complex_scalars.py" record "$work/r.jsonl" 2i 0 0 || fail "alpha 2i: the record"

    # a real file to file with 1.5+0i: the pipeline, as for --alpha 1.5
    "${mpirun[@]}" -n 1 "$DD_BIN" gen --out "$work/real.h5" -m 37 -n 29 -k 23 --with-c --quiet
    gemm "f64 --alpha 1.5+0i --beta -0.5 file to file at 2 ranks" 2 "$work/real.h5" "$work/c.h5" \
        N N 1.5+0i -0.5 --in "$work/real.h5"
    "$py" "$here/complex_scalars.py" record "$work/r.jsonl" 1.5 -0.5 1 ||
        fail "f64 1.5+0i: not pipelined, or the record"
    echo "ok   f64 1.5+0i pipelined"

    # the input sampler scales by the complex alpha and beta: forgetting one is caught
    f=$work/c128-TC.h5
    DD_FAULT='no-alpha:*' refuse "no-alpha" 3 'matrix A in memory on rank 0 differs from .* \(times --alpha\)' \
        --backend "$backend" --in "$f" --out "$work/out.h5" --transa T --transb C --alpha 0.5+2i --beta 1
    DD_FAULT='no-beta:*' refuse "no-beta" 3 "C's input in memory on rank 0 differs from --beta times" \
        --backend "$backend" --in "$f" --out "$work/out.h5" --transa T --transb C --alpha 2 --beta 1-0.5i
    echo "ok   alpha 0.5+2i or beta 1-0.5i forgotten at load: the sampler FAILED it, exit 3, nothing written"
}

"$what"
echo "complex scalars: all $what checks passed${2:+ on the $backend backend}"
