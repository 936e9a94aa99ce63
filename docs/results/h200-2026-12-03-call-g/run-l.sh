#!/usr/bin/env bash
# The sixth GPU call of this folder (nvidia-h200, one H200): whole
# multiplies on one rank from slices too (plan_rows_slices in dd_plan_multiply).
#   OUT=dir bash run-l.sh
# 1. build; 2. every ozaki2 GPU test (with ozaki2_slices.sh's one-rank
#    section: bands and a whole multiply from slices, bit for bit); 3.
#    dgemm-dist --size N --repeat 3 (device-generated operands, checked):
#    ozaki2-14 and ozaki2 at 16384 and 32768, each also with
#    DD_OZAKI2_PANELS=fp64 (the launcher per panel, as before).
set -uo pipefail
R=$OUT/r
mkdir -p "$R"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=/usr/local/cuda/bin:$PATH OPENBLAS_NUM_THREADS=4
pack() { tar -czf "$OUT/results.tgz" -C "$R" . 2>/dev/null; }
step() { echo "== $(date +%T) +$SECONDS s: $*" | tee -a "$R/steps.txt"; }
gpu() { nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active --format=csv,noheader >>"$R/gpu.csv"; }
gpu
B=$PWD/.gpubuild/b
step "configure and build"
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$R/build.log" 2>&1 &&
    timeout 240 cmake --build "$B" -j 16 >>"$R/build.log" 2>&1
echo "build rc=$?" | tee -a "$R/steps.txt"
tail -3 "$R/build.log" >>"$R/steps.txt"
pack
step "ozaki2 GPU tests"
(cd "$B" && timeout 220 ctest -R "ozaki2" -L gpu -E "gpu_2gpu" -j 1 --timeout 150 \
    --output-on-failure >"$R/tests.log" 2>&1)
echo "tests rc=$?" | tee -a "$R/steps.txt"
grep -E "^ok|FAIL|Test +#|tests passed|Failed" "$R/tests.log" >>"$R/steps.txt"
gpu; pack
step "dgemm-dist --size, from slices and as before"
D=$R/dist; mkdir -p "$D"
for n in 16384 32768; do
    for k in ozaki2-14 ozaki2; do
        for mode in auto fp64; do
            DD_OZAKI2_PANELS=$mode timeout 100 mpirun -n 1 --bind-to none -x DD_OZAKI2_PANELS "$B/dgemm-dist" \
                --size $n --kernel $k --repeat 3 --json "$D/$k-$n-$mode.jsonl" >"$D/$k-$n-$mode.out" 2>&1
            echo "$k n=$n $mode rc=$? $(grep -E '^rate|PASSED|FAILED|note' "$D/$k-$n-$mode.out" | tr -s ' ' | tr '\n' ' ')" | tee -a "$R/steps.txt"
        done
    done
done
gpu; pack
