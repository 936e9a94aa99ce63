#!/usr/bin/env bash
# File to file as one pipeline on 1 GPU (a benchmark, not a test; issue 33
# item 1): dgemm-dist --in m.h5 --out c.h5, n×n FP64, the check on, where C
# is computed in bands of rows and op(A) read and C written behind the
# multiply (src/driver/run_pipe.c).  Correctness first (a small pipelined
# run must say PASSED and report its pipeline), then the input generated,
# the pipelined run twice (PIPE_RUNS), once with plain band slots through the staging
# (DD_FAULT=pipe-pageable:0, as where pinned memory cannot be had) and the
# phased run once (DD_FAULT=no-pipeline:0, the phases one after another)
# under /usr/bin/time, then the h5py + PyTorch script on the same file
# (bench/gpu/baseline_h5py_torch.py, where python3 has both).  Per run: the
# phases (upload and download: the bands' moves between host slots and the
# GPU), what of read and write was hidden, the target
#   wall <= 1.25 x (setup + max(read, multiply, write) + teardown)
# and the script's wall over the run's (issue 33 asks >= 6).
# Records: $OUT/pipeline.jsonl (dgemm-dist's), $OUT/pipeline.log, and
# $OUT/pipeline.md (the table).  About 2 minutes at n = 32768.
#   bench/gpu/pipeline.sh BUILD_DIR [N]      (a CUDA build; N default 32768)
# PIPE_RUNS=N: the pinned run N times (default 2).
# READ_SWEEP="8 16 ...": before those runs, the input read alone
# (dgemm-dist --in m.h5, no output) once per DD_IO_THREADS value, in that
# order twice: the read phase against the reader's thread count.
# BAND_SWEEP="128 64 32 ...": after the pinned runs, one pinned run per
# DD_PIPE_BAND_MIB value, in that order twice (band-V-1, then band-V-2).
# SLOTS_FIRST=1: also one run with the pinned slots allocated before
# op(B)'s read rather than beside it (DD_FAULT=pipe-slots-first:0): the
# two measured apart (the record's pipeline.resident_seconds and
# slots_seconds; the table shows both).
# PIPE_ARGS="--kernel ozaki2 ...": more options for every timed run.
# GEN_ARGS="--dtype f32": more options for the input's generation.
# NO_SCRIPT=1: no h5py + PyTorch script (its column reads nan).
# Every timed run (and the script) starts after a sync, so none of them pays
# for the dirty pages of the one before.
# RANKS=2: every run on 2 ranks, one GPU each (GPUs 0..RANKS-1; default 1).
set -uo pipefail
B=${1:?usage: bench/gpu/pipeline.sh BUILD_DIR [N]}
N=${2:-32768}
OUT="${OUT:-$PWD/out}"
W="${DD_PIPE_DIR:-/tmp/dd-pipe}"
mkdir -p "$OUT" "$W"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
RANKS=${RANKS:-1}
export CUDA_VISIBLE_DEVICES=${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((RANKS - 1)))}
log() { echo "== $(date +%T) $*" | tee -a "$OUT/pipeline.log"; }
if [ ! -x "$B/dgemm-dist" ]; then
    log "building dgemm-dist in $B"
    cmake --build "$B" -j16 --target dgemm-dist >>"$OUT/pipeline.log" 2>&1 || { log "build failed"; exit 1; }
fi
bin="$B/dgemm-dist"
# wall VAR TAG command...: under /usr/bin/time, output to $W/TAG.out and the log
wall() {
    local var=$1 tag=$2
    shift 2
    /usr/bin/time -f "%e" -o "$W/time" "$@" >"$W/$tag.out" 2>&1
    local rc=$?
    cat "$W/$tag.out" >>"$OUT/pipeline.log"
    printf -v "$var" '%s' "$(tail -1 "$W/time")"
    [ "$rc" -eq 0 ] || log "FAILED (exit $rc): $*"
    return $rc
}

log "correctness: n=2048 file to file, pipelined, check on"
rm -f "$W"/*.h5
mpirun -n 1 --bind-to none "$bin" gen --out "$W/s.h5" -m 2048 -n 2048 -k 2048 --quiet ||
    { log "gen failed"; exit 1; }
wall t_small small mpirun -n "$RANKS" --bind-to none "$bin" --in "$W/s.h5" --out "$W/cs.h5" --check ||
    exit 1
grep -q 'PASSED$' "$W/small.out" || { log "small run: no PASSED"; exit 1; }
grep -q '^pipeline ' "$W/small.out" || { log "small run was not pipelined"; exit 1; }
log "ok: $(grep '^pipeline ' "$W/small.out")"
rm -f "$W/s.h5" "$W/cs.h5"

in="$W/m.h5"
log "input: gen n=$N ($((2 * N * N * 8 >> 30)) GiB) into $in"
mpirun -n 8 --oversubscribe --bind-to none "$bin" gen --out "$in" -m "$N" -n "$N" -k "$N" --quiet --force ${GEN_ARGS:-} ||
    { log "gen failed"; exit 1; }
sync
cat "$in" >/dev/null # the page cache warm, as the runs of issue 33 found it
: >"$OUT/walls.txt"
t=nan
if [ -n "${READ_SWEEP:-}" ]; then
    : >"$OUT/read-sweep.txt"
    for pass in 1 2; do
        for th in $READ_SWEEP; do
            sync
            wall t "read-$th-$pass" env DD_IO_THREADS="$th" mpirun -n "$RANKS" --bind-to none -x DD_IO_THREADS \
                "$bin" --in "$in" --check --json "$OUT/read-sweep.jsonl" || continue
            echo "threads $th pass $pass wall $t $(grep -E '^read ' "$W/read-$th-$pass.out" | tr -s ' ')" |
                tee -a "$OUT/read-sweep.txt"
        done
    done
fi
sweep=""
for pass in 1 2; do
    for v in ${BAND_SWEEP:-}; do sweep="$sweep band-$v-$pass"; done
done
[ "${SLOTS_FIRST:-0}" = 1 ] && sweep="$sweep slots-first"
for run in $(seq -f "pipelined-%g" 1 "${PIPE_RUNS:-2}") $sweep pageable phased; do
    fault="" mib=""
    [ "$run" = phased ] && fault="no-pipeline:0"
    [ "$run" = pageable ] && fault="pipe-pageable:0"
    [ "$run" = slots-first ] && fault="pipe-slots-first:0"
    case $run in band-*) mib=${run#band-} mib=${mib%-*} ;; esac
    log "$run: dgemm-dist --in --out on $RANKS GPU(s), check on${mib:+, DD_PIPE_BAND_MIB=$mib}"
    rm -f "$W/c.h5"
    sync
    wall t "$run" env ${fault:+DD_FAULT=$fault} DD_PIPE_BAND_MIB="$mib" mpirun -n "$RANKS" --bind-to none \
        -x DD_PIPE_BAND_MIB "$bin" --in "$in" --out "$W/c.h5" \
        --check --force --json "$OUT/pipeline.jsonl" ${PIPE_ARGS:-} || continue
    grep -E '^(setup|read|upload|multiply|download|check|write|teardown|pipeline|wall) ' "$W/$run.out" | tee -a "$OUT/pipeline.log"
    echo "$run $t" >>"$OUT/walls.txt"
done
rm -f "$W/c.h5"
t_py=nan
if [ "${NO_SCRIPT:-0}" = 1 ]; then
    log "NO_SCRIPT=1: no baseline"
elif python3 -c "import h5py, torch" 2>/dev/null; then
    log "h5py + PyTorch on 1 GPU, the same file"
    sync
    CUDA_VISIBLE_DEVICES=0 wall t_py baseline python3 "$(dirname "$0")/baseline_h5py_torch.py" \
        "$in" "$W/cpy.h5" || t_py=nan
    rm -f "$W/cpy.h5"
else
    log "no h5py and torch in python3: no baseline"
fi
rm -f "$in" "$W/c.h5"

python3 - "$OUT/pipeline.jsonl" "$OUT/walls.txt" "$N" "$RANKS" "$t_py" <<'PY' | tee "$OUT/pipeline.md"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
walls = [l.split() for l in open(sys.argv[2]) if l.strip()]
n = int(sys.argv[3])
recs = recs[-len(walls):] if walls else []
t_py = float(sys.argv[5])
kinds = sorted({f"{r['dtype']} {r['kernel']}" for r in recs})
print(f"# file to file, n = {n} ({', '.join(kinds)}), {sys.argv[4]} GPU(s), check on\n")
print(f"h5py + PyTorch script, same file, same call: {t_py:.2f} s\n")
print("| run | slots | bands | setup | read (hidden) | of it B + prepare | slots pinned in | upload + download | "
      "multiply | check | write (hidden) | teardown | wall (/usr/bin/time) | "
      "target 1.25x(setup+max+teardown) | met | script ÷ wall |")
print("| --- " * 16 + "|")
for (name, t), r in zip(walls, recs):
    ph = {k: v["max"] for k, v in r["phases"].items()}
    p = r.get("pipeline") or {"hidden": {"read": 0, "write": 0}}
    g = lambda k: ph.get(k, 0.0)
    target = 1.25 * (g("setup") + max(g("read"), g("multiply"), g("write")) + g("teardown"))
    t = float(t)
    q = r.get("pipeline") or {}
    slots = q.get("slots", "-")
    bands = f"{q['bands']} of {q['band_bytes'] / 2**20:.0f} MiB" if q else "-"
    res = f"{q['resident_seconds']:.2f}" if q else "-"
    pin = f"{q['slots_seconds']:.2f}" if q else "-"
    print(f"| {name} | {slots} | {bands} | {g('setup'):.2f} | {g('read'):.2f} ({p['hidden']['read']:.2f}) | {res} | {pin} | "
          f"{g('upload') + g('download'):.2f} | {g('multiply'):.2f} | {g('check'):.2f} | {g('write'):.2f} ({p['hidden']['write']:.2f}) | "
          f"{g('teardown'):.2f} | {t:.2f} | {target:.2f} | {'yes' if t <= target else 'no'} | {t_py / t:.2f} |")
PY
