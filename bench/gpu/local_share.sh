#!/usr/bin/env bash
# Is the 2-GPU run's per-GPU loss already in one rank's share of the work?
# On a 1x2 grid each rank multiplies M x N/2 x K in panels of M x N/2 x NB,
# half the length of the 1-GPU run's.  This runs those shares on ONE GPU,
# alternating with the whole problem, so a per-flop loss of the shorter,
# narrower multiplies shows without a second GPU.  One call:
#   bench/gpu/local_share.sh BUILD OUTDIR
# 1. dgemm-dist on 1 GPU: n = 16384 and 32768 whole, and the 1x2 grid's
#    share (N halved), panel 4096 and 8192, twice in alternation, check on;
# 2. gemm-bench interleaved (one clock for all) on the panel shapes of both
#    runs, the production kernel beside cuBLAS.
set -uo pipefail
B=$1
OUT=$2
mkdir -p "$OUT"
DIST_JSON=share.jsonl
. "$(dirname "$0")/dist_run.sh"
for r in a b; do
    dist_brief 1 "whole_16384_$r" --size 16384 --repeat 5 --warmup 1
    dist_brief 1 "share_16384_$r" --size 16384,8192,16384 --repeat 5 --warmup 1
    dist_brief 1 "share_16384_p8192_$r" --size 16384,8192,16384 --panel 8192 --repeat 5 --warmup 1
    dist_brief 1 "whole_32768_$r" --size 32768 --repeat 3 --warmup 1
    dist_brief 1 "share_32768_$r" --size 32768,16384,32768 --repeat 3 --warmup 1
done
timeout 400 "$B/bench/gemm-bench" --types f64 --kernels dgemm_dmma --interleave --beta 1 \
    --sizes 16384x16384x4096,16384x8192x4096,16384x8192x8192,32768x16384x4096 \
    --json "$OUT/kbench.jsonl" >"$OUT/kbench.txt" 2>&1 || echo "FAILED: kbench"
cat "$OUT/kbench.txt"
python3 "$(dirname "$0")/dist_table.py" "$OUT/share.jsonl"
