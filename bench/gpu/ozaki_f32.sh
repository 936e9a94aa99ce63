#!/usr/bin/env bash
# ozaki2's FP32 launchers (kernels/ozaki2_s.cu) on one GPU, beside cuBLAS
# SGEMM (gemm-bench's 100% row) and sgemm_dmma, in one call; builds nothing:
#   bench/gpu/ozaki_f32.sh BUILD_DIR OUTDIR
# BUILD_DIR: a CUDA build tree (gemm-bench and ozaki-bench in its bench/);
# OUTDIR: where the logs and JSON Lines go (created).
# 1. gemm-bench --types f32 at n = 4096, 8192, 16384: each kernel is checked
#    against cuBLAS SGEMM first (FAILED rows are not timed, exit 1), then
#    timed (median of 5); kernels "ozaki2" (the FP32 slot: moduli from k:
#    8 up to k = 16384), ozaki2-s8/-s9/-s10 (name prefix) and sgemm_dmma;
# 2. the same at 16384 in reverse order (order effects: clocks, power);
# 3. ozaki-bench --types f32: accuracy on the input classes against an FP64
#    reference, ozaki2 next to cuBLAS SGEMM, with the fallbacks in the note.
# Each step under a time limit (step.sh); exit 1 if any step failed.
set -uo pipefail
B=$1
OUT=$2
mkdir -p "$OUT"
. "$(dirname "$0")/step.sh"
step bench.txt "$B/bench/gemm-bench" --types f32 --kernels ozaki2,sgemm_dmma --reps 5 \
    --sizes 4096,8192,16384 --json "$OUT/bench.jsonl"
step bench-rev.txt "$B/bench/gemm-bench" --types f32 --kernels sgemm_dmma,ozaki2-s10,ozaki2-s9,ozaki2-s8,ozaki2 \
    --reps 5 --sizes 16384 --json "$OUT/bench-rev.jsonl"
step accuracy.txt "$B/bench/ozaki-bench" --types f32 --sizes 4096,8192 \
    --json "$OUT/accuracy.jsonl"
exit $rc
