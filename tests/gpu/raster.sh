#!/usr/bin/env bash
# Tile rasterisation for L2 reuse: the FP64 production kernel with groups
# of 1, 4, 8 (production), 16 and 32 tile rows, on the panel shapes of a
# large run.  One call:
#   tests/gpu/raster.sh BUILD OUTDIR
# 1. gemm-bench burst and interleaved (one clock for all), beta 1;
# 2. gemm-bench sustained 6 s each at 32768^2 x 4096 (energy per run);
# 3. Nsight Compute: DRAM and L2 bytes of one launch of each at 32768^2 x 4096;
# 4. dgemm-dist on 1 GPU at n = 32768 with each, the check on.
set -uo pipefail
B=$1
OUT=$2
mkdir -p "$OUT"
K=23_dmma_pipe,23g1_raster,23g4_raster,23g16_raster,23g32_raster
GB=$B/kernels/gemm-bench
timeout 300 "$GB" --types f64 --kernels $K --interleave --beta 1 \
    --sizes 32768x32768x4096,16384x16384x4096 --json "$OUT/bench.jsonl" >"$OUT/bench.txt" 2>&1 ||
    echo "FAILED: bench"
cat "$OUT/bench.txt"
timeout 300 "$GB" --types f64 --kernels $K --beta 1 --sizes 32768x32768x4096 --sustain 6 \
    --json "$OUT/sustain.jsonl" >"$OUT/sustain.txt" 2>&1 || echo "FAILED: sustain"
grep -E "sustained|kernel " "$OUT/sustain.txt"
PAT='regex:::k12<' WHAT=traffic bash "$(dirname "$0")/ncu_kernel.sh" "$GB" "$OUT/ncu" f64 32768x32768x4096 \
    ${K//,/ }
grep -E "(dram__bytes|lts__t_bytes|lts__t_sector_hit|gpu__time)" "$OUT"/ncu/*.txt | head -40
DIST_JSON=dist.jsonl
. "$(dirname "$0")/dist_run.sh"
for k in ${K//,/ }; do
    dist_run 1 "dist_$k" --size 32768 --kernel "$k" --repeat 3 --warmup 1 &&
        echo "$k: $(grep -E '^rate|^GPU' "$OUT/dist_$k.txt" | tr -s ' ' | paste -sd'|')"
done
