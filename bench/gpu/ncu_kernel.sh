#!/usr/bin/env bash
# Nsight Compute on one launch (after one warm-up) of each named kernel:
#   bench/gpu/ncu_kernel.sh GEMM_BENCH OUTDIR TYPE SIZE KERNEL...
# e.g. ... f64 8192 dgemm_dmma cublas.  WHAT=sections (the default,
# ncu-*.txt): throughput, issue, warp stalls, occupancy, memory, launch;
# WHAT=stalls (stalls-*.txt, what bench/gpu/ncu_stalls.sh runs): the stall
# reasons in cycles per issued instruction and the launch configuration;
# WHAT=traffic (traffic-*.txt): DRAM and L2 bytes, the L2 hit rate, time.
# Kernels are matched by their demangled names (PAT: the filter for ours;
# default the production kernels' and the ladder's tensor-core and
# warp-tiled ones: dmma_gemm_kernel, dmma_cpasync_kernel, lean_kernel,
# barrier_kernel, mbar_kernel, dmma_kernel, warptile_kernel).  gemm-bench
# runs cuBLAS as every kernel's reference, not as a kernel of its own: for
# "cublas", the reference of CUBLAS_WITH (default dgemm_dmma) is profiled.
# ncu fixes the clocks at base (its default), so the runs compare at one
# clock.
set -uo pipefail
GB=$1
OUT=$2
T=$3
N=$4
shift 4
mkdir -p "$OUT"
case ${WHAT:-sections} in
sections)
    tag=ncu
    what=(--section SpeedOfLight --section ComputeWorkloadAnalysis --section InstructionStats
          --section WarpStateStats --section SchedulerStats --section Occupancy
          --section MemoryWorkloadAnalysis --section LaunchStats) ;;
stalls)
    tag=stalls
    m='regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio'
    m=$m',smsp__issue_active.avg.pct_of_peak_sustained_active,sm__cycles_elapsed.avg'
    m=$m',launch__block_size,launch__grid_size,launch__registers_per_thread'
    m=$m',launch__shared_mem_per_block_dynamic,launch__shared_mem_per_block_static'
    m=$m',launch__cluster_dim_x,launch__cluster_dim_y,gpu__time_duration.sum'
    what=(--metrics "$m" --page raw) ;;
traffic)
    tag=traffic
    m='dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,lts__t_sector_hit_rate.pct'
    m=$m',gpu__time_duration.sum,sm__cycles_elapsed.avg'
    what=(--metrics "$m" --page raw) ;;
*)
    echo "ncu_kernel.sh: WHAT is sections, stalls or traffic" >&2
    exit 2 ;;
esac
for k in "$@"; do
    pat=${PAT:-'regex:::(dmma_gemm_kernel<|dmma_cpasync_kernel<|lean_kernel\(|barrier_kernel<|mbar_kernel<|dmma_kernel<|warptile_kernel<)'}
    run=$k
    if [ "$k" = cublas ]; then
        pat='regex:gemm|xmma|cutlass|sm90|Kernel2'
        run=${CUBLAS_WITH:-dgemm_dmma}
    fi
    timeout 240 ncu --kernel-name-base demangled -k "$pat" --launch-skip 1 --launch-count 1 \
        "${what[@]}" "$GB" --kernels "$run" --sizes "$N" --types "$T" --reps 2 --warmup 1 \
        >"$OUT/$tag-$T-$k-$N.txt" 2>&1 || echo "ncu $k: exit $?"
done
