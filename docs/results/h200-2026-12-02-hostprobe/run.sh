#!/usr/bin/env bash
# One short GPU call (nvidia-h200): what moving pageable host arrays costs
# on this host (host-probe: threaded copies through pinned memory,
# cudaHostRegister, copy-engine rates) and cuBLASXt's best pinned tile
# (8192) and pageable figure for n = 16384 FP64, in the same call.
#   OUT=dir bash docs/results/h200-2026-12-02-hostprobe/run.sh
set -uo pipefail
export PATH=/usr/local/cuda/bin:$PATH
B=$PWD/.gpubuild/probe
nvidia-smi --query-gpu=name,driver_version,clocks.sm,power.draw,power.limit --format=csv,noheader >"$OUT/gpu.csv"
(lscpu; numactl -H 2>/dev/null; nvidia-smi topo -m) >"$OUT/host.txt" 2>&1
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$OUT/build.log" 2>&1 &&
    cmake --build "$B" -j 16 --target host-probe cublasxt-bench >>"$OUT/build.log" 2>&1
echo "build rc=$?"
"$B/bench/host-probe" --mib 2048 --threads 1,2,4,8,12,16 --reps 3 >"$OUT/host-probe.jsonl" 2>"$OUT/host-probe.txt"
echo "probe rc=$?"
for blk in 8192 4096; do
    timeout 60 "$B/bench/cublasxt-bench" --n 16384 --reps 3 --block $blk >>"$OUT/cublasxt.txt" 2>&1
done
timeout 60 "$B/bench/cublasxt-bench" --n 16384 --reps 3 --block 8192 --pageable >>"$OUT/cublasxt.txt" 2>&1
echo "cublasxt rc=$?"
cat "$OUT/host-probe.txt" "$OUT/cublasxt.txt"
