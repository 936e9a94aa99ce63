#!/usr/bin/env bash
# The write of C against its yardsticks, in one call (a benchmark, not a
# test), on the file system of DIR:
#   - dd of the same bytes, 64 MiB blocks: into the page cache, with
#     oflag=direct, and with conv=fdatasync;
#   - io-bench --writers: the direct path as dgemm-dist writes C (a fresh
#     HDF5 file, space reserved, io_write_pieces) against a plain parallel
#     pwrite of the same bytes with the same threads per rank, into a fresh
#     file and into a reserved one, for each thread count, alternated,
#     medians; then the same with --sync;
#   - dgemm-dist --size N,N,64 --out (C of GIB GiB, a short multiply) with
#     DD_IO_THREADS=1, 2, 4 and unset (the default), and with --sync: its
#     write phase (download, write and
#     read-back, from the JSON record) as GB/s of C.
# Prints one table; records in OUTDIR (write.jsonl from io-bench and the
# runs, write.log).
#   bash bench/io/write_bench.sh BUILD [GIB] [DIR] [RANKS] [REPS]
#   (defaults: 2 GiB, $TMPDIR or /tmp, 1 rank, 5 repetitions; OUT=outdir)
set -uo pipefail
B=${1:?usage: $0 BUILD [GIB] [DIR] [RANKS] [REPS]}
GIB=${2:-2}
DIR=${3:-${TMPDIR:-/tmp}}
RANKS=${4:-1}
REPS=${5:-5}
OUT="${OUT:-$PWD/out}"
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OPENBLAS_NUM_THREADS=1
mpi=(mpirun -n "$RANKS" --oversubscribe --bind-to none)
log="$OUT/write.log"
echo "== $(date -u +%FT%TZ) $(uname -n): $GIB GiB into $DIR ($(df -T "$DIR" | awk 'NR==2{print $2}')), $RANKS rank(s), $REPS reps; $(nproc) cores; load $(cut -d' ' -f1-3 /proc/loadavg)" | tee -a "$log"

mib=$(python3 -c "print(int($GIB * 1024))")
count=$((mib / 64))
bytes=$((count * 64 * 1048576))
f="$DIR/write-bench.$$"
# ddrate FLAGS...: the median GB/s of REPS dd runs writing $bytes into $f
ddrate() {
    local r t0 t1 ts=()
    for r in $(seq "$REPS"); do
        : "$r"
        rm -f "$f"
        t0=$(date +%s%N)
        dd if=/dev/zero of="$f" bs=64M count="$count" "$@" status=none || { echo nan; return; }
        t1=$(date +%s%N)
        ts+=($(((t1 - t0) / 1000)))
    done
    rm -f "$f"
    python3 -c "import statistics,sys; print(f'{$bytes / (statistics.median([int(x) for x in sys.argv[1:]]) / 1e6) / 1e9:.2f}')" "${ts[@]}"
}
dd_cache=$(ddrate)
dd_direct=$(ddrate oflag=direct)
dd_sync=$(ddrate conv=fdatasync)
echo "dd bs=64M: page cache $dd_cache GB/s, oflag=direct $dd_direct GB/s, conv=fdatasync $dd_sync GB/s" | tee -a "$log"

"${mpi[@]}" "$B/bench/io-bench" --gib "$GIB" --dir "$DIR" --reps "$REPS" --writers 1,2,4 \
    --json "$OUT/write.jsonl" 2>&1 | tee -a "$log"
"${mpi[@]}" "$B/bench/io-bench" --gib "$GIB" --dir "$DIR" --reps "$REPS" --writers 1,2,4 --sync \
    --json "$OUT/write.jsonl" 2>&1 | tee -a "$log"

# dgemm-dist's own write phase: C of n x n doubles = GIB GiB
n=$(python3 -c "import math; print(int(math.sqrt($GIB * 2**30 / 8)))")
echo "dgemm-dist --size $n,$n,64 --out (C: $(python3 -c "print(f'{$n*$n*8/2**30:.2f}')") GiB), write phase (download, write, read-back):" | tee -a "$log"
for setting in 1 2 4 default sync; do
    for r in $(seq "$REPS"); do
        : "$r"
        rm -f "$DIR/write-bench-c.h5"
        env_args=()
        extra=()
        case $setting in
        default) ;;
        sync) extra=(--sync) ;;
        *) env_args=(-x DD_IO_THREADS="$setting") ;;
        esac
        "${mpi[@]}" "${env_args[@]}" "$B/dgemm-dist" --size "$n,$n,64" --out "$DIR/write-bench-c.h5" \
            --no-check --threads 1 --quiet "${extra[@]}" --json "$OUT/write-runs-$setting.jsonl" >>"$log" 2>&1 ||
            echo "dgemm-dist ($setting) failed" | tee -a "$log"
    done
    rm -f "$DIR/write-bench-c.h5"
done
python3 - "$OUT" "$n" <<'EOF' | tee -a "$log"
import json, statistics, sys
out, n = sys.argv[1], int(sys.argv[2])
c = n * n * 8
names = {"1": "DD_IO_THREADS=1", "2": "DD_IO_THREADS=2", "4": "DD_IO_THREADS=4",
         "default": "default threads", "sync": "default, --sync"}
for s in names:
    try:
        rows = [json.loads(l) for l in open(f"{out}/write-runs-{s}.jsonl") if l.strip()]
    except OSError:
        continue
    w = [r["phases"]["write"]["max"] for r in rows if "write" in r.get("phases", {})]
    if w:
        m = statistics.median(w)
        print(f"  {names[s]:16s} write phase median {m:.3f} s = {c / m / 1e9:.2f} GB/s "
              f"(of {len(w)}: {', '.join(f'{x:.3f}' for x in w)})")
EOF
