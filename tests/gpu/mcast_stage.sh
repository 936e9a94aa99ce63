#!/usr/bin/env bash
# FP64 rung 18 (clusters of 2 CTAs, B multicast by TMA) on a GPU host,
# beside 12 (its base) and 13 (production) and cuBLAS in the same call:
#   tests/gpu/mcast_stage.sh BUILD_DIR OUTDIR [KERNEL_TEST_PREFIX]
# BUILD_DIR holds kernels/run-gpu.sh --build-only's kernel-test and
# gemm-bench.  1. kernel-test for the kernels whose names start with the
# prefix (default 18_: the odd tile rows, edges and layouts against
# cuBLAS), 2. gemm-bench at the square sizes and panel shapes, 3. again in
# reverse order (the thermal state is part of each figure), 4. sustained
# at 8192 and 16384.  Each step under a time limit.
set -uo pipefail
B=$1
OUT=$2
mkdir -p "$OUT"
. "$(dirname "$0")/step.sh"
K=${K64:-12_dmma_epi,13_dmma_sk,18_dmma_mcast}
KREV=$(echo "$K" | tr ',' '\n' | tac | paste -sd,)
SIZES=4096,8192,16384,8192x8192x1024,16384x16384x1024,16384x16384x4096,32768x16384x4096
step kernel-test.txt "$B/kernel-test" "${3:-18_}"
step bench.txt "$B/gemm-bench" --types f64 --kernels "$K" --reps 5 --sizes "$SIZES" \
    --json "$OUT/bench.jsonl"
step bench-rev.txt "$B/gemm-bench" --types f64 --kernels "$KREV" --reps 5 \
    --sizes 4096,8192,16384,8192x8192x1024 --json "$OUT/bench-rev.jsonl"
step sustain.txt "$B/gemm-bench" --types f64 --kernels 13_dmma_sk,18_dmma_mcast \
    --sizes 8192,16384 --sustain 6 --json "$OUT/sustain.jsonl"
exit $rc
