#!/usr/bin/env bash
# Where one rank's setup goes (a benchmark, not a test): dgemm-dist on one
# rank, file to file (n x n f64 A and B, page-cached) and with --size,
# started as an MPI singleton and under mpirun -n 1, REPS times each; the
# record's setup_parts (docs/json-record.md: launch, mpi, inputs = the
# input's probe, devices, plan, comm, memory, warm) as medians, beside the
# wall of a program that only starts and ends MPI (the launcher's and
# MPI's own floor; mpi_floor.c, built here with mpicc).
#   bash bench/io/setup_bench.sh BUILD [N] [REPS] [BACKEND]
#   (defaults: 1024, 7, cpu; OUT=outdir: setup.jsonl, setup.log)
set -uo pipefail
B=${1:?usage: $0 BUILD [N] [REPS] [BACKEND]}
N=${2:-1024}
REPS=${3:-7}
BACKEND=${4:-cpu}
OUT="${OUT:-$PWD/out}"
W=$(mktemp -d "${TMPDIR:-/tmp}/dd-setup.XXXXXX")
trap 'rm -rf "$W"' EXIT
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
log="$OUT/setup.log"
echo "== $(date -u +%FT%TZ) $(uname -n): n=$N, $REPS reps, backend $BACKEND; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$log"

"$B/dgemm-dist" gen --out "$W/m.h5" -m "$N" -n "$N" -k "$N" --quiet --force || exit 1
cat "$W/m.h5" >/dev/null
cat >"$W/floor.c" <<'EOF'
#include <mpi.h>
int main(int argc, char **argv) { MPI_Init(&argc, &argv); MPI_Finalize(); return 0; }
EOF
mpicc -O2 -o "$W/floor" "$W/floor.c" || exit 1

# wall_ms command...: milliseconds from start to exit
wall_ms() {
    local t0 t1
    t0=$(date +%s%N)
    "$@" >/dev/null 2>&1
    t1=$(date +%s%N)
    echo $(((t1 - t0) / 1000000))
}
floor_single=()
floor_mpirun=()
for r in $(seq "$REPS"); do
    : "$r"
    floor_single+=("$(wall_ms "$W/floor")")
    floor_mpirun+=("$(wall_ms mpirun -n 1 --bind-to none "$W/floor")")
    for how in singleton mpirun; do
        pre=()
        [ "$how" = mpirun ] && pre=(mpirun -n 1 --bind-to none)
        rm -f "$W/c.h5"
        "${pre[@]}" "$B/dgemm-dist" --in "$W/m.h5" --out "$W/c.h5" --backend "$BACKEND" --threads 1 \
            --quiet --json "$OUT/setup-file-$how.jsonl" >>"$log" 2>&1
        "${pre[@]}" "$B/dgemm-dist" --size "$N" --backend "$BACKEND" --threads 1 \
            --quiet --json "$OUT/setup-size-$how.jsonl" >>"$log" 2>&1
    done
done
python3 - "$OUT" "${floor_single[*]}" "${floor_mpirun[*]}" <<'EOF' | tee -a "$log"
import json, statistics, sys
out = sys.argv[1]
med = lambda v: statistics.median(v) if v else float("nan")
print(f"MPI_Init+MPI_Finalize alone, wall: singleton {med([int(x) for x in sys.argv[2].split()])} ms, "
      f"mpirun -n 1 {med([int(x) for x in sys.argv[3].split()])} ms")
parts = ["launch", "mpi", "inputs", "devices", "plan", "comm", "memory", "warm"]
print(f"{'run':22s} {'setup':>7s} " + " ".join(f"{p:>7s}" for p in parts) + f" {'wall':>7s}  (ms, medians)")
for what in ["file", "size"]:
    for how in ["singleton", "mpirun"]:
        try:
            rows = [json.loads(l) for l in open(f"{out}/setup-{what}-{how}.jsonl") if l.strip()]
        except OSError:
            continue
        sp = lambda p: med([r["setup_parts"].get(p, 0) * 1e3 for r in rows if "setup_parts" in r])
        setup = med([r["phases"]["setup"]["max"] * 1e3 for r in rows])
        wall = med([r["wall_seconds"] * 1e3 for r in rows])
        print(f"{what + ', ' + how:22s} {setup:7.1f} " + " ".join(f"{sp(p):7.1f}" for p in parts)
              + f" {wall:7.1f}")
EOF
