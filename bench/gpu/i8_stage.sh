#!/usr/bin/env bash
# The own INT8 GEMM (kernels/i8gemm.cu) on a GPU host, in one go:
#   bench/gpu/i8_stage.sh GEMM_BENCH OUTDIR
# 1. exactness against cuBLAS INT8 on edge shapes (as ctest's
#    gpu_i8gemm_matches_cublas), 2. INT8 rows at 4096/8192/16384 and at
#    ozaki2's shape (14 products of 16384x16384, k 4096 and 16384 as SUMMA
#    panels and one whole multiply hand it), 3. ozaki2-14 with the own INT8
#    product and with cuBLAS's (DD_OZAKI2_INT8=cublas) beside native cuBLAS
#    DGEMM, in the same call.  Each step under a time limit: a hang is a
#    failure, not a lost call.
set -uo pipefail
GB=$1
OUT=$2
mkdir -p "$OUT"
J="$OUT/i8.jsonl"
rc=0
step() {
    echo "== $(date +%T) $*" | tee -a "$OUT/i8.txt"
    timeout 300 "$@" 2>&1 | tee -a "$OUT/i8.txt"
    local r=${PIPESTATUS[0]}
    [ "$r" = 0 ] || { echo "== exit $r" | tee -a "$OUT/i8.txt"; rc=1; }
}
step "$GB" --types i8 --i8-batch 3 --reps 1 --warmup 0 \
    --sizes 1x1x1,129x257x129,300x700x1000,1000x517x4111,2048,256x512x70000
step "$GB" --types i8 --reps 5 --warmup 2 --sizes 4096,8192,16384 --json "$J"
step "$GB" --types i8 --i8-batch 14 --reps 3 --warmup 1 \
    --sizes 16384x16384x4096,16384x16384x16384 --json "$J"
step "$GB" --types f64 --kernels ozaki2-14 --reps 3 --warmup 1 --sizes 8192,16384 --json "$J"
step env DD_OZAKI2_INT8=cublas "$GB" --types f64 --kernels ozaki2-14 --reps 3 --warmup 1 \
    --sizes 8192,16384 --json "$OUT/i8-cublas-int8.jsonl"
exit $rc
