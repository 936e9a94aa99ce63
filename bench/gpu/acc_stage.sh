#!/usr/bin/env bash
# ozaki2-auto (the accuracy guard, issue 34) on a GPU host, in one go:
#   bench/gpu/acc_stage.sh BUILD_DIR OUTDIR
# 1. ozaki-bench --test (ozaki2, ozaki2-16 and ozaki2-auto on every class,
#    as ctest's gpu_ozaki2_vs_cublas_and_dd); 2. accuracy and time at
#    8192 and 16384 on issue 34's classes and GEMMul8's phi family,
#    ozaki2-auto beside ozaki2, ozaki2-16 and native cuBLAS (the note column
#    gives ozaki2-auto's moduli and fallbacks); 3. the guard's own cost:
#    ozaki2-auto (17 moduli on uniform data at k = 16384) between ozaki2-16
#    and ozaki2-18; 4. dgemm-dist --kernel ozaki2-auto at 8192 and 32768
#    (moduli in the record's kernel_note), --accuracy fp64 at 32768 (its
#    choice in accuracy_choice) and the default at 32768.
#    Each step under a time limit: a hang is a failure, not a lost call.
set -uo pipefail
B=$1
OUT=$2
mkdir -p "$OUT"
J="$OUT/acc.jsonl"
rc=0
step() {
    echo "== $(date +%T) $*" | tee -a "$OUT/acc.txt"
    timeout 500 "$@" 2>&1 | tee -a "$OUT/acc.txt"
    local r=${PIPESTATUS[0]}
    [ "$r" = 0 ] || { echo "== exit $r" | tee -a "$OUT/acc.txt"; rc=1; }
}
OB="$B/bench/ozaki-bench"
step "$OB" --test
step "$OB" --sizes 8192,16384 --kernels ozaki2,ozaki2-16,ozaki2-auto --reps 3 \
    --classes uniform,rowcol30,halves,lognormal,phi0.5,phi1,phi2,phi3,phi4 --json "$J"
step "$OB" --sizes 16384 --kernels ozaki2-16,ozaki2-18,ozaki2-auto --reps 5 --classes uniform \
    --json "$J"
step "$B/dgemm-dist" --backend cuda --kernel ozaki2-auto --size 8192 --repeat 3 --json "$OUT/dd.jsonl"
step "$B/dgemm-dist" --backend cuda --kernel ozaki2-auto --size 32768 --repeat 3 --json "$OUT/dd.jsonl"
step "$B/dgemm-dist" --backend cuda --accuracy fp64 --size 32768 --repeat 3 --json "$OUT/dd.jsonl"
step "$B/dgemm-dist" --backend cuda --size 32768 --repeat 3 --json "$OUT/dd.jsonl"
exit $rc
