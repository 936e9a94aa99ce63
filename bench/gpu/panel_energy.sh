#!/usr/bin/env bash
# Does the panel depth change the per-GPU rate under the 700 W cap?  Each
# beta-1 panel reads and writes C once more (at n = 32768 and panel 4096:
# 8 read-modify-writes of 8 GiB), energy the multiply then lacks.  One call:
#   bench/gpu/panel_energy.sh BUILD OUTDIR
# 1. dgemm-dist on 1 GPU, n = 32768, panels 4096..32768 (32768: one
#    multiply over all of k), in one order and then the reverse, the check on;
# 2. the same on 2 GPUs (1x2 grid, copy engines) where there are two;
# 3. gemm-bench sustained (6 s each) on the kernel shapes these make:
#    32768^2 x 4096 beta 1 against 32768^3 beta 0, the production kernel
#    beside cuBLAS, with the NVML energy of each.
set -uo pipefail
B=$1
OUT=$2
mkdir -p "$OUT"
DIST_JSON=panel.jsonl
. "$(dirname "$0")/dist_run.sh"
for p in 4096 8192 16384 32768; do dist_brief 1 "g1_n32768_p$p" --size 32768 --panel $p --repeat 4 --warmup 1; done
for p in 32768 16384 8192 4096; do dist_brief 1 "g1_n32768_p${p}_rev" --size 32768 --panel $p --repeat 4 --warmup 1; done
for p in 4096 8192 16384; do dist_brief 2 "g2_n32768_p$p" --size 32768 --grid 1x2 --comm ce --panel $p --repeat 4 --warmup 1; done
for p in 2048 4096 8192; do dist_brief 2 "g2_n16384_p$p" --size 16384 --grid 1x2 --comm ce --panel $p --repeat 4 --warmup 1; done
timeout 200 "$B/bench/gemm-bench" --types f64 --kernels dgemm_dmma --sizes 32768x32768x4096,32768 \
    --sustain 6 --json "$OUT/sustain.jsonl" >"$OUT/sustain.txt" 2>&1 || echo "FAILED: sustain"
cat "$OUT/sustain.txt"
python3 "$(dirname "$0")/dist_table.py" "$OUT/panel.jsonl"
