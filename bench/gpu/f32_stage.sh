#!/usr/bin/env bash
# The kernels of one type on a GPU host, in one go, beside cuBLAS (no TF32,
# no emulation) in the same call:
#   [TYPE=f64] [KERNELS=a,b] bench/gpu/f32_stage.sh BUILD_DIR OUTDIR
# TYPE: f32 (default) or f64; KERNELS (or F32_KERNELS, the name it had when
# it ran FP32 only): default the type's production kernels (f32:
# sgemm_dmma,sgemm_simt; f64: dgemm_dmma); SUSTAIN: seconds each (8).
# BUILD_DIR: a build tree (kernel-test in tests/gpu/, gemm-bench in bench/).
# 1. kernel-test (every kernel against cuBLAS on edge shapes;
# with KT_PREFIX only those whose names start with it), 2. gemm-bench
# at the square sizes and SUMMA panel shapes, 3. again with the kernels in
# reverse order, 4. sustained at 8192 (SUSTAIN s a kernel).  Each step under a time limit.
set -uo pipefail
B=$1
OUT=$2
T=${TYPE:-f32}
if [ "$T" = f64 ]; then prod=dgemm_dmma; else prod=sgemm_dmma,sgemm_simt; fi
KS=${KERNELS:-${F32_KERNELS:-$prod}}
mkdir -p "$OUT"
. "$(dirname "$0")/step.sh"
rev=$(echo "$KS" | tr , '\n' | tac | paste -sd,)
step kernel-test.txt "$B/tests/gpu/kernel-test" ${KT_PREFIX:-}
step bench.txt "$B/bench/gemm-bench" --types "$T" --kernels "$KS" --reps 5 \
    --sizes 2048,4096,8192,16384,8192x8192x1024,16384x16384x1024,16384x16384x2048,16384x16384x4096 \
    --json "$OUT/bench.jsonl"
step bench-rev.txt "$B/bench/gemm-bench" --types "$T" --kernels "$rev" --reps 5 \
    --sizes 4096,8192,16384,8192x8192x1024,16384x16384x1024 --json "$OUT/bench-rev.jsonl"
step sustain.txt "$B/bench/gemm-bench" --types "$T" --kernels "$KS" --sizes 8192 --sustain "${SUSTAIN:-8}" \
    --json "$OUT/sustain.jsonl"
exit $rc
