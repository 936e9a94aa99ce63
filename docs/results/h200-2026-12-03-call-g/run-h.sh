#!/usr/bin/env bash
# The second GPU call of this folder (nvidia-h200, one H200), after the
# slicing and CRT kernels were reworked (ozaki2_mod.cuh):
#   OUT=dir bash run-h.sh
# 1. build (Ninja, sm_90); 2. every ozaki2 GPU test (FP64, FP32, the
#    sliced operands, the guard, dgemm-dist with ozaki2) and the kernels'
#    and i8gemm's checks; 3. ncu, one metric (gpu__time_duration.sum, clocks
#    not locked), over one checked multiply at n = 16384 of ozaki2 f32 and
#    ozaki2-14 f64, as run.sh's step 3 before the change; 4. gemm-bench's
#    rates (each kernel checked against cuBLAS first) at 4096, 8192, 16384
#    for f32 ozaki2 and f64 ozaki2-14 / ozaki2, then sustained 10 s at
#    16384; 5. accuracy on the input classes (ozaki-bench, f64 and f32).
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
(cd "$B" && timeout 260 ctest -R "ozaki2|gpu_kernels_match|gpu_i8gemm" -L gpu -E "gpu_2gpu" -j 1 --timeout 150 \
    --output-on-failure >"$R/tests.log" 2>&1)
echo "tests rc=$?" | tee -a "$R/steps.txt"
grep -E "Test +#|tests passed|Failed|Timeout" "$R/tests.log" >>"$R/steps.txt"
gpu; pack
step "ncu: the emulated kernels' parts at n = 16384"
P=$R/prof; mkdir -p "$P"
for tk in "f32 ozaki2-s8" "f64 ozaki2-14"; do
    set -- $tk
    timeout 100 ncu --clock-control none --metrics gpu__time_duration.sum --csv \
        "$B/bench/gemm-bench" --types $1 --kernels $2 --sizes 16384 --reps 1 --warmup 0 \
        >"$P/$1-$2.csv" 2>"$P/$1-$2.err"
    echo "ncu $1 $2 rc=$?" | tee -a "$R/steps.txt"
done
gpu; pack
step "gemm-bench rates"
timeout 120 "$B/bench/gemm-bench" --types f32 --kernels ozaki2,sgemm_dmma --sizes 4096,8192,16384 --reps 5 --warmup 1 \
    --json "$R/rates-f32.jsonl" >"$R/rates-f32.log" 2>&1
echo "gemm-bench f32 rc=$?" | tee -a "$R/steps.txt"
timeout 150 "$B/bench/gemm-bench" --types f64 --kernels ozaki2 --sizes 4096,8192,16384 --reps 5 --warmup 1 \
    --json "$R/rates-f64.jsonl" >"$R/rates-f64.log" 2>&1
echo "gemm-bench f64 rc=$?" | tee -a "$R/steps.txt"
gpu; pack
step "sustained 10 s at 16384"
timeout 80 "$B/bench/gemm-bench" --types f32 --kernels ozaki2-s8 --sizes 16384 --reps 3 --sustain 10 \
    --json "$R/sustain-f32.jsonl" >"$R/sustain-f32.log" 2>&1
echo "sustain f32 rc=$?" | tee -a "$R/steps.txt"
timeout 80 "$B/bench/gemm-bench" --types f64 --kernels ozaki2-14 --sizes 16384 --reps 3 --sustain 10 \
    --json "$R/sustain-f64.jsonl" >"$R/sustain-f64.log" 2>&1
echo "sustain f64 rc=$?" | tee -a "$R/steps.txt"
gpu; pack
step "accuracy on the input classes"
timeout 100 "$B/bench/ozaki-bench" --types f32 --sizes 4096,8192 --json "$R/acc-f32.jsonl" >"$R/acc-f32.log" 2>&1
echo "accuracy f32 rc=$?" | tee -a "$R/steps.txt"
timeout 100 "$B/bench/ozaki-bench" --types f64 --sizes 4096 --json "$R/acc-f64.jsonl" >"$R/acc-f64.log" 2>&1
echo "accuracy f64 rc=$?" | tee -a "$R/steps.txt"
gpu; pack
