#!/usr/bin/env bash
# The option syntax of src/cli/cli.c (getopt_long, GNU conventions):
# --opt=VALUE and --opt VALUE, `--` ends the options, abbreviations refused,
# a value option given twice refused (flags may repeat), every number within
# its stated range, gen refusing a run's options, empty names refused, gen's
# A and B distinct, --help stating every option and range.
# Each refusal: exit status 2, exactly one "dgemm-dist: error:" line that
# names the problem (a fixed string), no hang, nothing written.
# Parse refusals run as MPI singletons (RANKS 0: fast); some under mpirun
# with 2 ranks, to show one message for all ranks.
# Environment: DD_BIN, DD_MPIRUN (launcher prefix without -n), DD_LOOKAHEAD_MAX.
set -u
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_BIN DD_MPIRUN DD_LOOKAHEAD_MAX
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
read -r -a mpirun <<<"$DD_MPIRUN"
la=$DD_LOOKAHEAD_MAX
mkdir "$work/o" # every output of every case goes here; it must stay empty
fails=0
fail() {
    echo "FAIL $1: $2"
    sed 's/^/    stderr: /' "$work/stderr" | head -10
    fails=$((fails + 1))
}

# launch RANKS ARGS...: RANKS 0 runs dgemm-dist as a singleton
launch() {
    local ranks=$1
    shift
    if [ "$ranks" -eq 0 ]; then
        timeout 60 "$DD_BIN" "$@" >"$work/stdout" 2>"$work/stderr"
    else
        timeout 60 "${mpirun[@]}" -n "$ranks" "$DD_BIN" "$@" >"$work/stdout" 2>"$work/stderr"
    fi
}

# refuse NAME MESSAGE RANKS -- ARGS...   (MESSAGE: a fixed string the error line holds)
refuse() {
    local name=$1 msg=$2 ranks=$3 rc n why=""
    shift 4
    launch "$ranks" "$@"
    rc=$?
    n=$(grep -c '^dgemm-dist: error:' "$work/stderr")
    if [ "$rc" -eq 124 ]; then
        why="hung (killed after 60 s)"
    elif [ "$rc" -ne 2 ]; then
        why="exit status $rc, expected 2"
    elif [ "$n" -ne 1 ]; then
        why="$n error lines, expected exactly one"
    elif ! grep '^dgemm-dist: error:' "$work/stderr" | grep -qF -- "$msg"; then
        why="message does not contain: $msg"
    fi
    [ -z "$(ls -A "$work/o")" ] || why="${why:+$why; }wrote $(ls -A "$work/o")"
    rm -rf "${work:?}/o"/* "${work:?}/o"/.[!.]*
    if [ -n "$why" ]; then
        fail "$name" "$why"
    else
        echo "ok   $name: $(grep '^dgemm-dist: error:' "$work/stderr")"
    fi
}

# accept NAME PATTERN RANKS -- ARGS...   (PATTERN: an ERE stdout must match)
accept() {
    local name=$1 pattern=$2 ranks=$3 rc
    shift 4
    launch "$ranks" "$@"
    rc=$?
    if [ "$rc" -ne 0 ]; then
        fail "$name" "exit status $rc, expected 0"
    elif grep -q 'dgemm-dist: error:' "$work/stderr"; then
        fail "$name" "an error line"
    elif ! grep -Eq -- "$pattern" "$work/stdout"; then
        fail "$name" "stdout does not match /$pattern/: $(head -3 "$work/stdout")"
    else
        echo "ok   $name"
    fi
}

"${mpirun[@]}" -n 1 "$DD_BIN" gen --out "$work/good.h5" -m 6 -n 6 -k 6 --quiet || exit 1
good=$work/good.h5
c=$work/o/c.h5
j=$work/o/r.jsonl
g=$work/o/g.h5
PASS='PASSED$'
DRY='^dry run: '

# 1. --opt=VALUE and --opt VALUE, `--`, no abbreviations, gen's short options
accept eq_form_size_quiet_check "$PASS" 2 -- --size=50,40,30 --quiet --check
[ "$(wc -l <"$work/stdout")" -eq 1 ] || fail eq_form_size_quiet_check "--quiet printed more than the check line"
accept eq_form_out_json "$PASS" 2 -- --size=50,40,30 --out="$c" --json="$j" --quiet --check
{ [ -s "$c" ] && [ "$(wc -l <"$j")" -eq 1 ]; } || fail eq_form_out_json "--out=FILE or --json=FILE not written"
rm -f "$c" "$j"
accept mixed_forms "$PASS" 2 -- --in "$good" --out "$c" --panel=2 --lookahead 2 --check --quiet --
[ -s "$c" ] || fail mixed_forms "--out FILE not written"
rm -f "$c"
accept gen_short_options '^gen: wrote' 2 -- gen -o "$g" -m6 -n 5 -k4
[ -s "$g" ] || fail gen_short_options "-o FILE not written"
rm -f "$g"
accept gen_eq_forms '^gen: wrote .*A 6x4, B 4x5' 0 -- gen --out="$g" --size=6,5,4 --dtype=f32
rm -f "$g"
refuse operand_after_dashdash "unexpected argument '--quiet' after '--'" 0 -- --size 9 --check -- --quiet
refuse stray_word "unknown argument 'c.h5' (see --help)" 0 -- --size 9 --out "$c" c.h5
refuse gen_not_first "'gen' must be the first argument" 0 -- --size 9 gen
refuse abbreviated "unknown argument '--chec': options are not abbreviated (did you mean --check?)" 2 -- --size 9 --chec
refuse abbreviated_eq "unknown argument '--thr': options are not abbreviated (did you mean --threads?)" 0 -- --size 9 --thr=2
refuse ambiguous_prefix "unknown argument '--h' (see --help)" 0 -- --size 9 --h
refuse flag_with_value "option --check takes no value" 0 -- --size 9 --check=yes
refuse missing_value "option --json needs a value" 0 -- --size 9 --json
refuse gen_missing_value "option -k needs a value" 0 -- gen --out "$g" -m 2 -n 2 -k
refuse run_takes_no_m "-m is a gen option: a run takes --size M,N,K" 0 -- -m 5 --out "$c"
refuse unknown_short "unknown argument '-x' (see --help)" 0 -- --size 9 -qx

# 2. a value option given twice; flags may repeat
refuse twice_in "--in given twice" 2 -- --in "$good" --in "$good" --out "$c"
refuse twice_size "--size given twice" 0 -- --size 9 --size=9
refuse twice_out "--out given twice" 0 -- --size 9 --out="$c" --out "$c"
refuse twice_panel "--panel given twice" 0 -- --size 9 --panel 4 --panel=8 --out "$c"
refuse twice_json "--json given twice" 0 -- --size 9 --json "$j" --json "$j"
refuse gen_twice_out "--out given twice" 0 -- gen -o "$g" --out "$g" -m 2 -n 2 -k 2
refuse gen_twice_m "-m given twice" 0 -- gen --out "$g" -m 2 -m 3 -n 2 -k 2
refuse gen_size_and_mnk "gen takes --size M,N,K or -m M -n N -k K, not both" 0 -- gen --out "$g" --size 2 -m 2
accept flags_repeat "$PASS" 2 -- --size 9 --check --check -q --quiet --force --force

# 3. every number within its range, the range in the message
range() { echo "bad value '$2' for $1: expected an integer from $3 to $4"; }
refuse panel_0 "$(range --panel 0 1 2147483647)" 0 -- --size 9 --panel 0 --out "$c"
refuse panel_2p31 "$(range --panel 2147483648 1 2147483647)" 0 -- --size 9 --panel 2147483648
refuse panel_2p63 "$(range --panel 9223372036854775807 1 2147483647)" 2 -- --size 9 --panel 9223372036854775807 --out "$c"
refuse panel_2p64 "$(range --panel 18446744073709551616 1 2147483647)" 0 -- --size 9 --panel 18446744073709551616
refuse lookahead_0 "$(range --lookahead 0 1 "$la")" 0 -- --size 9 --lookahead 0
refuse lookahead_max1 "$(range --lookahead $((la + 1)) 1 "$la")" 0 -- --size 9 --lookahead $((la + 1))
refuse repeat_0 "$(range --repeat 0 1 1000000)" 0 -- --size 9 --repeat 0
refuse repeat_max1 "$(range --repeat 1000001 1 1000000)" 0 -- --size 9 --repeat 1000001
refuse warmup_neg "$(range --warmup -1 0 1000000)" 0 -- --size 9 --warmup -1
refuse warmup_max1 "$(range --warmup 1000001 0 1000000)" 0 -- --size 9 --warmup 1000001
refuse threads_0 "$(range --threads 0 1 4096)" 0 -- --size 9 --threads 0
refuse threads_max1 "$(range --threads 4097 1 4096)" 0 -- --size 9 --threads 4097
refuse threads_junk "$(range --threads 4x 1 4096)" 0 -- --size 9 --threads 4x
refuse seed_2p64 "$(range --seed 18446744073709551616 0 18446744073709551615)" 0 -- --size 9 --seed 18446744073709551616
refuse seed_neg "$(range --seed -1 0 18446744073709551615)" 0 -- --size 9 --seed -1
refuse gen_k_0 "$(range -k 0 1 4611686018427387904)" 0 -- gen --out "$g" -m 2 -n 2 -k 0
refuse grid_overflow "bad value '641x6700417' for --grid: P*Q = 4294967297 ranks, more than 2147483647" 2 -- --size 9 --grid 641x6700417 --out "$c"
refuse grid_p_over "bad value '2147483648x1' for --grid: expected PxQ" 0 -- --size 9 --grid 2147483648x1
refuse grid_q_0 "bad value '2x0' for --grid: expected PxQ, e.g. 2x4, with P, Q >= 1 and P*Q <= 2147483647" 0 -- --size 9 --grid 2x0
size_msg="expected M,N,K or N, integers from 1 to 4611686018427387904 (2^62)"
refuse size_2p62_1 "bad value '4611686018427387905' for --size: $size_msg" 0 -- --size 4611686018427387905
refuse size_k_2p62_1 "bad value '1,1,4611686018427387905' for --size: $size_msg" 0 -- --size 1,1,4611686018427387905
refuse size_0 "bad value '5,0,5' for --size: $size_msg" 0 -- --size 5,0,5
refuse size_two "bad value '5,6' for --size: $size_msg" 0 -- --size 5,6
refuse size_empty_field "bad value '5,,6' for --size: $size_msg" 0 -- --size 5,,6
accept panel_max "$DRY.*panel 2147483647" 0 -- --size 9 --panel 2147483647 --dry-run --backend cpu
accept lookahead_max "$DRY.*lookahead $la" 0 -- --size 9 --lookahead "$la" --dry-run --backend cpu
accept repeat_warmup_threads_max "$DRY" 0 -- --size 9 --repeat 1000000 --warmup 1000000 --threads 4096 --dry-run --backend cpu
accept seed_max "$PASS" 2 -- --size 9 --seed 18446744073709551615 --warmup 0 --check --quiet

# 4. gen refuses what means nothing to it
for opt in --check --host-to-host --dry-run "--in $good" "--grid 1x1" "--panel 8" \
    "--lookahead 2" "--backend cpu" "--comm mpi" "--kernel openblas" "--threads 1" \
    "--repeat 2" "--warmup 1" "--json $j" "--c C"; do
    # shellcheck disable=SC2086  # the option and its value
    refuse "gen_refuses_${opt%% *}" "gen does not take ${opt%% *}" 0 -- gen --out "$g" -m 2 -n 2 -k 2 $opt
done

# 5. empty names
for opt in --in --out --json --a --b --c --kernel; do
    refuse "empty_${opt#--}" "empty value for $opt" 0 -- --size 9 "$opt" ""
done
refuse empty_out_eq "empty value for --out" 0 -- --size 9 --out=
refuse gen_empty_a "empty value for --a" 0 -- gen --out "$g" -m 2 -n 2 -k 2 --a ""
refuse gen_empty_o "empty value for --out" 0 -- gen -o "" -m 2 -n 2 -k 2

# 6. gen's A and B are two datasets; a run may multiply A by itself
refuse gen_same_a_b "--a and --b name the same dataset \"X\"" 2 -- gen --out "$g" -m 2 -n 2 -k 2 --a X --b X
refuse gen_a_is_default_b "--a and --b name the same dataset \"B\" (the default of --b)" 0 -- gen --out "$g" --size 2 --a B
accept run_a_times_a "$PASS" 2 -- --in "$good" --b A --check --quiet

# 7. --help states every option and its range
"$DD_BIN" --help >"$work/help" 2>&1 || fail help "exit status $?"
for want in --in --size --dtype --seed --a --b --c --out --force --io --grid --panel --lookahead \
    --backend --comm --kernel --threads --repeat --warmup --check --host-to-host --json \
    --dry-run --quiet --help --version "1..$la" "1..2147483647" "1..4096" "1..1000000" \
    "0..1000000" "0..2^64-1" "1..2^62" "<= 2147483647" "--opt=VALUE" "abbreviations are refused" \
    "given once"; do
    grep -qF -- "$want" "$work/help" || fail help "--help lacks '$want'"
done
"$DD_BIN" gen --help >"$work/help" 2>&1 || fail gen_help "exit status $?"
for want in "--out FILE, -o FILE" "-m M -n N -k K" --size --dtype --seed --a --b --force --io \
    --quiet "1..2^62" "0..2^64-1"; do
    grep -qF -- "$want" "$work/help" || fail gen_help "gen --help lacks '$want'"
done
echo "ok   help texts"

# A singleton's refusal, --help and --version need no MPI (src/cli/main.c
# answers them before MPI_Init): under an Open MPI setting that makes
# MPI_Init fail they still answer, while a run fails.
export_bad() { OMPI_MCA_pml=no-such-pml "$@"; }
export_bad timeout 60 "$DD_BIN" --size 0 >"$work/stdout" 2>"$work/stderr"
[ $? -eq 2 ] && grep -qF "bad value '0' for --size" "$work/stderr" ||
    fail no_mpi_refusal "a refusal needed MPI (exit status or message wrong)"
export_bad timeout 60 "$DD_BIN" --version >"$work/stdout" 2>"$work/stderr" &&
    grep -q '^dgemm-dist ' "$work/stdout" || fail no_mpi_version "--version needed MPI"
export_bad timeout 60 "$DD_BIN" --help >"$work/stdout" 2>"$work/stderr" &&
    grep -qF -- "--size" "$work/stdout" || fail no_mpi_help "--help needed MPI"
if export_bad timeout 60 "$DD_BIN" --size 16 --quiet >"$work/stdout" 2>"$work/stderr"; then
    fail no_mpi_control "a run succeeded with MPI_Init made to fail: the cases above prove nothing"
fi
echo "ok   refusals, --help and --version of a singleton answered without MPI"

if [ "$fails" -ne 0 ]; then
    echo "$fails option case(s) failed"
    exit 1
fi
echo "all option cases behaved"
