#!/usr/bin/env bash
# Why warps wait: Nsight Compute's stall reasons (cycles per issued
# instruction, by reason) and the launch configuration of one launch (after
# one warm-up) of each named kernel; cuBLAS's kernel is matched by its
# demangled name, so its configuration (block, registers, shared memory,
# cluster) is visible too.
#   tests/gpu/ncu_stalls.sh GEMM_BENCH OUTDIR TYPE SIZE KERNEL...
set -uo pipefail
GB=$1
OUT=$2
T=$3
N=$4
shift 4
mkdir -p "$OUT"
m='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
m=$m',smsp__issue_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg'
m=$m',launch__block_size,launch__grid_size,launch__registers_per_thread'
m=$m',launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static'
m=$m',launch__cluster_dim_x,launch__cluster_dim_y,gpu__time_duration.sum'
for k in "$@"; do
    pat=${PAT:-'regex:::(k1[0-9]|mbar_kernel|lean_kernel|warptile_kernel)<'}
    run=$k
    # gemm-bench runs cuBLAS as every kernel's reference (not as a kernel of
    # its own): CUBLAS_WITH names the kernel whose reference is profiled
    if [ "$k" = cublas ]; then
        pat='regex:gemm|xmma|cutlass|sm90|Kernel2'
        run=${CUBLAS_WITH:-13_dmma_sk}
    fi
    timeout 240 ncu --kernel-name-base demangled -k "$pat" --launch-skip 1 --launch-count 1 \
        --metrics "$m" --page raw \
        "$GB" --kernels "$run" --sizes "$N" --types "$T" --reps 2 --warmup 1 \
        >"$OUT/stalls-$T-$k-$N.txt" 2>&1 || echo "ncu $k: exit $?"
done
