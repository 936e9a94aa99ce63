#!/usr/bin/env bash
# FP64 rungs 12 (bulk-add epilogue) and 13 (stream-K last wave) on a GPU
# host, in one go, beside 11 and cuBLAS in the same call:
#   tests/gpu/sk_stage.sh BUILD_DIR OUTDIR [DGEMM_DIST]
# BUILD_DIR holds kernels/run-gpu.sh --build-only's kernel-test and
# gemm-bench.  1. kernel-test (every kernel, or with KT_PREFIX those whose
# names start with it, against cuBLAS on edge shapes, stream-K's among
# them), 2. gemm-bench at the square sizes, the model
# table's panel shapes and the local blocks of a 1x2 grid at n = 16384 and
# 32768 with 4096-wide panels, 3. some again, the kernels in reverse order
# (the GPU's thermal state is part of each figure), 4. sustained at 8192,
# 5. with DGEMM_DIST: dgemm-dist on this GPU at n = 16384 and 32768 with 13
# and with 11, the check on, under /usr/bin/time.
# Each step under a time limit: a hang is a failure, not a lost call.
set -uo pipefail
B=$1
OUT=$2
mkdir -p "$OUT"
. "$(dirname "$0")/step.sh"
SIZES=1024,2048,4096,8192,16384,8192x8192x1024,16384x16384x1024,16384x16384x2048,16384x16384x4096
SIZES=$SIZES,16384x8192x4096,32768x16384x4096
step kernel-test.txt "$B/kernel-test" ${KT_PREFIX:-}
step bench.txt "$B/gemm-bench" --types f64 --kernels 11_dmma_k16,12_dmma_epi,13_dmma_sk \
    --reps 5 --sizes "$SIZES" --json "$OUT/bench.jsonl"
step bench-rev.txt "$B/gemm-bench" --types f64 --kernels 13_dmma_sk,12_dmma_epi,11_dmma_k16 \
    --reps 5 --sizes 4096,8192,8192x8192x1024 --json "$OUT/bench-rev.jsonl"
step sustain.txt "$B/gemm-bench" --types f64 --kernels 11_dmma_k16,13_dmma_sk --sizes 8192 \
    --sustain 8 --json "$OUT/sustain.jsonl"
if [ -n "${3:-}" ]; then
    export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
    for n in 16384 32768; do
        for k in ${DIST_KERNELS:-13_dmma_sk 11_dmma_k16}; do
            step "dist-$k-$n.txt" /usr/bin/time -f "wall %e s" mpirun -n 1 --bind-to none "$3" \
                --size "$n" --kernel "$k" --repeat 3 --warmup 1 --check --json "$OUT/dist.jsonl"
        done
    done
fi
exit $rc
