#!/usr/bin/env bash
# FP32 kernels (F32_KERNELS, default 07_warptile) on a GPU host, in one go,
# beside cuBLAS SGEMM (no TF32) in the same call:
#   tests/gpu/f32_stage.sh BUILD_DIR OUTDIR
# BUILD_DIR holds kernels/run-gpu.sh --build-only's kernel-test and
# gemm-bench.  1. kernel-test (every kernel against cuBLAS on edge shapes;
# with KT_PREFIX only those whose names start with it), 2. gemm-bench FP32
# at the square sizes and SUMMA panel shapes, 3. again with the kernels in
# reverse order, 4. 8 s sustained at 8192.  Each step under a time limit.
set -uo pipefail
B=$1
OUT=$2
KS=${F32_KERNELS:-07_warptile}
mkdir -p "$OUT"
. "$(dirname "$0")/step.sh"
rev=$(echo "$KS" | tr , '\n' | tac | paste -sd,)
step kernel-test.txt "$B/kernel-test" ${KT_PREFIX:-}
step bench.txt "$B/gemm-bench" --types f32 --kernels "$KS" --reps 5 \
    --sizes 2048,4096,8192,16384,8192x8192x1024,16384x16384x1024,16384x16384x4096 \
    --json "$OUT/bench.jsonl"
step bench-rev.txt "$B/gemm-bench" --types f32 --kernels "$rev" --reps 5 \
    --sizes 4096,8192,16384 --json "$OUT/bench-rev.jsonl"
step sustain.txt "$B/gemm-bench" --types f32 --kernels "$KS" --sizes 8192 --sustain 8 \
    --json "$OUT/sustain.jsonl"
exit $rc
