#!/usr/bin/env bash
# What limits the FP32 kernel: Nsight Compute on 07_warptile and cuBLAS
# SGEMM at n = 8192, one launch each (after one warm-up), the sections that
# say where issue slots go.  tests/gpu/ncu_f32.sh GEMM_BENCH OUTDIR
set -uo pipefail
GB=$1
OUT=$2
mkdir -p "$OUT"
secs=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats
      --section WarpStateStats --section SchedulerStats --section Occupancy)
for k in 07_warptile cublas; do
    pat='regex:warptile'
    [ "$k" = cublas ] && pat='regex:gemm|xmma|cutlass|sm90'
    timeout 240 ncu -k "$pat" --launch-skip 1 --launch-count 1 "${secs[@]}" \
        "$GB" --kernels "$k" --sizes 8192 --types f32 --reps 2 --warmup 1 \
        >"$OUT/ncu-f32-$k-8192.txt" 2>&1 || echo "ncu $k: exit $?"
done
