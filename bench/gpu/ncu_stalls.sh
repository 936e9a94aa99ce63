#!/usr/bin/env bash
# Why warps wait: ncu_kernel.sh with WHAT=stalls (stall reasons and launch
# configuration, cuBLAS's kernel included).
#   bench/gpu/ncu_stalls.sh GEMM_BENCH OUTDIR TYPE SIZE KERNEL...
WHAT=stalls exec bash "$(dirname "$0")/ncu_kernel.sh" "$@"
