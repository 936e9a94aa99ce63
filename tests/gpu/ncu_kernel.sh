#!/usr/bin/env bash
# Where a ladder kernel's issue slots go: Nsight Compute on one launch (after
# one warm-up) of each named kernel, the sections on throughput, issue,
# warp stalls and occupancy.
#   tests/gpu/ncu_kernel.sh GEMM_BENCH OUTDIR TYPE SIZE KERNEL...
# e.g. ... f64 8192 12_dmma_epi 13_dmma_sk.  ncu fixes the clocks at base
# (its default), so the runs compare at one clock.  PAT: the ncu -k
# filter for the ladder kernels' functions (default: k10..k13,
# warptile_kernel, mbar_kernel).
set -uo pipefail
GB=$1
OUT=$2
T=$3
N=$4
shift 4
mkdir -p "$OUT"
secs=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats
      --section WarpStateStats --section SchedulerStats --section Occupancy
      --section MemoryWorkloadAnalysis --section LaunchStats)
for k in "$@"; do
    pat=${PAT:-'regex:^k[0-9]+$|^warptile_kernel$|^mbar_kernel$'}
    [ "$k" = cublas ] && pat='regex:gemm|xmma|cutlass|sm90'
    timeout 240 ncu -k "$pat" --launch-skip 1 --launch-count 1 "${secs[@]}" \
        "$GB" --kernels "$k" --sizes "$N" --types "$T" --reps 2 --warmup 1 \
        >"$OUT/ncu-$T-$k-$N.txt" 2>&1 || echo "ncu $k: exit $?"
done
