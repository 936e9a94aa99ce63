#!/usr/bin/env bash
# The user-facing surface: --help, --version, --dry-run, the report's
# contents, --quiet, --json appending one record per run, repeat/warmup.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_BIN DD_MPIRUN
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
read -r -a mpirun <<<"$DD_MPIRUN"
fail() { echo "FAIL: $*" >&2; exit 1; }

# grep reads all of it (-q would stop at the match and, once the text is
# past one pipe buffer, the writer would die of SIGPIPE under pipefail)
"$DD_BIN" --help | grep "usage: mpirun -np R" >/dev/null || fail "--help"
"$DD_BIN" gen --help | grep "gen --out FILE" >/dev/null || fail "gen --help"
"$DD_BIN" --version | grep -Eq '^dgemm-dist [0-9]+\.[0-9]+\.[0-9]+$' || fail "--version"

# dry run: decomposition for every rank, nothing computed or written
"${mpirun[@]}" -n 4 "$DD_BIN" --size 10,7,5 --dry-run --out "$work/c.h5" --backend cpu >"$work/dry"
grep -q "dry run: C = A·B  f64  M=10 N=7 K=5 on a 2x2 grid" "$work/dry" || fail "dry-run header"
[ "$(grep -Ec '^ +[0-3] +\([01],[01]\)' "$work/dry")" -eq 4 ] || fail "dry-run rows"
grep -Eq '^ +3 +\(1,1\) +5x3 +5x2 +2x3' "$work/dry" || { cat "$work/dry"; fail "dry-run blocks of rank 3"; }
[ ! -e "$work/c.h5" ] || fail "dry-run wrote output"

# the report
"${mpirun[@]}" -n 3 "$DD_BIN" --size 40,30,20 --dtype f32 --check --repeat 3 --warmup 1 \
    --backend cpu --json "$work/r.jsonl" >"$work/rep" 2>"$work/err"
for pat in "^problem +C = A·B  f32  M=40 N=30 K=20" "^grid +1x3 on 3 ranks" \
    "^backend +cpu \(--backend cpu\)" "^kernel +openblas" "^comm +mpi-host" \
    "^generate " "^multiply " "exposed comm" "3 timed \(\+1 warm-up\)" "FLOP/s total" \
    "^panels +[0-9]+, local multiply of each on its slowest rank: fastest .+ slowest .+ \(panel [0-9]+\); ranks up to" \
    "PASSED$"; do
    grep -Eq "$pat" "$work/rep" || { cat "$work/rep"; fail "report lacks /$pat/"; }
done
grep -q '^\[dgemm-dist\] multiply' "$work/err" || fail "no phase line on stderr"
# quiet: only the check line
"${mpirun[@]}" -n 2 "$DD_BIN" --size 9 --check --quiet --json "$work/r.jsonl" >"$work/q" 2>"$work/qerr"
[ "$(wc -l <"$work/q")" -eq 1 ] && grep -q 'PASSED$' "$work/q" || fail "--quiet output: $(cat "$work/q")"
[ ! -s "$work/qerr" ] || fail "--quiet printed to stderr"
# auto backend says why it chose
"${mpirun[@]}" -n 1 "$DD_BIN" --size 8 >"$work/auto"
grep -Eq '^backend +(cpu \(auto: .+\)|cuda \(auto: every rank has a GPU\))' "$work/auto" || fail "auto backend line"

python3 - "$work/r.jsonl" <<'PY'
import json, sys
def unique(pairs):  # a key given twice in one object is a defect of the writer
    keys = [k for k, _ in pairs]
    assert len(keys) == len(set(keys)), "duplicate keys: %s" % sorted(k for k in keys if keys.count(k) > 1)
    return dict(pairs)
recs = [json.loads(l, object_pairs_hook=unique) for l in open(sys.argv[1])]
assert len(recs) == 2, len(recs)
a, b = recs
assert a["ranks"] == 3 and a["grid"] == [1, 3] and a["dtype"] == "f32"
assert a["repeat"] == 3 and a["warmup"] == 1 and len(a["multiply_times"]) == 3
assert a["time_min"] <= a["time_median"]
assert abs(a["tflops"] - 2 * 40 * 30 * 20 / a["time_median"] / 1e12) < 1e-9 * max(1, a["tflops"])
assert a["check"]["passed"] and a["check"]["threshold"] == 16
assert a["backend"] == "cpu" and a["gpus"] == 0 and a["comm"] == "mpi-host"
assert len(a["devices"]) == 3 and a["hosts"]
assert set(a["versions"]) >= {"mpi", "hdf5", "blas"}
assert "generate" in a["phases"] and "read" not in a["phases"] and "write" not in a["phases"]
assert {"setup", "teardown"} <= set(a["phases"]) and a["wall_seconds"] > 0
# rank 0's phases follow one another inside its wall: what none accounts for is >= 0
assert 0 <= a["unaccounted_seconds"] < a["wall_seconds"], (a["unaccounted_seconds"], a["wall_seconds"])
assert a["status"] == "ok" and a["output"] is None
assert b["ranks"] == 2 and b["m"] == b["n"] == b["k"] == 9
# each panel's local multiply, fastest and slowest rank: on every rank they
# add up to at most its multiply phase (the same, median, repetition)
ps = a["panel_seconds"]
assert len(ps["min"]) == len(ps["max"]) >= 1 and all(0 <= x <= y for x, y in zip(ps["min"], ps["max"]))
assert sum(ps["max"]) > 0 and sum(ps["min"]) <= a["phases"]["multiply"]["max"], (ps, a["phases"])
print("report and records ok")
PY
# batch logs see life: progress lines at the --progress cadence (stderr is a
# file here, not a terminal), none with --quiet
"${mpirun[@]}" -n 2 "$DD_BIN" --size 2400 --panel 32 --repeat 12 --progress 1 --backend cpu \
    >"$work/prog.out" 2>"$work/prog.err"
grep -Eq '^\[dgemm-dist\] multiply  [0-9]+ of [0-9]+ panels \([0-9]+%\), .* GFLOP/s so far, about [0-9]+ s left$' \
    "$work/prog.err" || { cat "$work/prog.err"; fail "no progress line in a batch log"; }
"${mpirun[@]}" -n 2 "$DD_BIN" --size 2400 --panel 32 --repeat 2 --progress 1 --backend cpu \
    --quiet >"$work/prog.out" 2>"$work/prog.err"
! grep -q 'panels (' "$work/prog.err" || fail "--quiet printed progress"
# one log, a stable order: every phase line (stderr) before the report
# (stdout), as a batch system writes both into one file
"${mpirun[@]}" -n 1 "$DD_BIN" --size 300 --backend cpu --out "$work/one.h5" >"$work/both" 2>&1
grep -Eq '^grid +1x1 on 1 rank ' "$work/both" || fail "report says 'on 1 ranks'"
grep -Eq "^output +$work/one.h5\$" "$work/both" || fail "report does not name the output"
grep -Eq '^rate .* GFLOP/s total' "$work/both" || fail "a slow run's rate not in GFLOP/s"
last_phase=$(grep -n '^\[dgemm-dist\]' "$work/both" | tail -1 | cut -d: -f1)
header=$(grep -n '^dgemm-dist [0-9]' "$work/both" | head -1 | cut -d: -f1)
[ -n "$last_phase" ] && [ -n "$header" ] && [ "$last_phase" -lt "$header" ] ||
    { cat "$work/both"; fail "phase lines and the report interleave"; }
