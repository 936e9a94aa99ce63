#!/usr/bin/env bash
# FP64 rungs 12 (bulk-copy epilogue) and 13 (stream-K last wave) on a GPU
# host, in one go, beside 11 and cuBLAS in the same call:
#   tests/gpu/sk_stage.sh BUILD_DIR OUTDIR
# BUILD_DIR holds kernels/run-gpu.sh --build-only's kernel-test and
# gemm-bench.  1. kernel-test (every kernel against cuBLAS on edge shapes,
# stream-K's among them), 2. gemm-bench at the square sizes and the SUMMA
# panel shapes, 3. the same sizes again, the kernels in reverse order (the
# GPU's thermal state is part of each figure), 4. sustained at 8192.
# Each step under a time limit: a hang is a failure, not a lost call.
set -uo pipefail
B=$1
OUT=$2
mkdir -p "$OUT"
rc=0
step() {
    local log=$1
    shift
    echo "== $(date +%T) $*" | tee -a "$OUT/$log"
    timeout 300 "$@" 2>&1 | tee -a "$OUT/$log"
    local r=${PIPESTATUS[0]}
    [ "$r" = 0 ] || { echo "== exit $r" | tee -a "$OUT/$log"; rc=1; }
}
SIZES=1024,2048,4096,8192,16384,8192x8192x1024,16384x16384x1024,16384x16384x2048,16384x16384x4096
step kernel-test.txt "$B/kernel-test"
step bench.txt "$B/gemm-bench" --types f64 --kernels 11_dmma_k16,12_dmma_epi,13_dmma_sk \
    --reps 5 --sizes "$SIZES" --json "$OUT/bench.jsonl"
step bench-rev.txt "$B/gemm-bench" --types f64 --kernels 13_dmma_sk,12_dmma_epi,11_dmma_k16 \
    --reps 5 --sizes 4096,8192,8192x8192x1024 --json "$OUT/bench-rev.jsonl"
step sustain.txt "$B/gemm-bench" --types f64 --kernels 11_dmma_k16,13_dmma_sk --sizes 8192 \
    --sustain 8 --json "$OUT/sustain.jsonl"
exit $rc
