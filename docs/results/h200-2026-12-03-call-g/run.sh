#!/usr/bin/env bash
# One GPU call (nvidia-h200, one H200):
#   OUT=dir bash run.sh
# 1. build (Ninja, sm_90); 2. the sliced panels end to end
#    (gpu_1gpu_ozaki2_sliced_panels_{mpi,ce}), then dgemm-dist --kernel
#    ozaki2-14 at n = 16384 on 2 (1x2) and 4 (2x2) ranks sharing the GPU
#    with --comm ce: sliced, FP64 and auto panels, native beside them
#    (what call-f's STAGE=2 was to run); 3. where the emulated kernels'
#    time goes: ncu, one metric (gpu__time_duration.sum, clocks not
#    locked), over one checked multiply of gemm-bench at n = 16384 for
#    ozaki2 f32 (8 moduli) and ozaki2-14 f64; 4. gemm-bench's rates of the
#    same kernels beside cuBLAS, not under ncu.
set -uo pipefail
R=$OUT/r
mkdir -p "$R"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=/usr/local/cuda/bin:$PATH OPENBLAS_NUM_THREADS=4
pack() { tar -czf "$OUT/results.tgz" -C "$R" . 2>/dev/null; }
step() { echo "== $(date +%T) +$SECONDS s: $*" | tee -a "$R/steps.txt"; }
gpu() { nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active --format=csv,noheader >>"$R/gpu.csv"; }
gpu
git log -1 --format=%H >"$R/COMMIT" 2>/dev/null
B=$PWD/.gpubuild/b
step "configure and build"
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$R/build.log" 2>&1 &&
    timeout 240 cmake --build "$B" -j 16 >>"$R/build.log" 2>&1
echo "build rc=$?" | tee -a "$R/steps.txt"
tail -3 "$R/build.log" >>"$R/steps.txt"
pack
if [ "${SKIP_DIST:-0}" != 1 ]; then
    step "sliced panels end to end"
    (cd "$B" && timeout 200 ctest -R "gpu_1gpu_ozaki2_sliced" -j 1 --timeout 150 --output-on-failure \
        >"$R/sliced-tests.log" 2>&1)
    echo "sliced tests rc=$?" | tee -a "$R/steps.txt"
    grep -E "^ok|FAIL|Test +#|tests passed" "$R/sliced-tests.log" >>"$R/steps.txt"
    step "dgemm-dist ozaki2-14 n=16384, ranks sharing the GPU, --comm ce"
    D=$R/dist-ce; mkdir -p "$D"
    i=0
    for np in 2 4; do
        grid=$([ $np = 2 ] && echo 1x2 || echo 2x2)
        for mode in slices fp64 auto slices fp64; do
            i=$((i + 1))
            DD_OZAKI2_PANELS=$mode timeout 90 mpirun -n $np --bind-to none -x DD_OZAKI2_PANELS \
                "$B/dgemm-dist" --size 16384 --kernel ozaki2-14 --comm ce --grid $grid --repeat 3 \
                --json "$D/np$np-$mode.jsonl" >"$D/np$np-$mode-$i.out" 2>&1
            echo "np $np $mode rc=$? $(grep -E '^rate|PASSED|note|^  exposed' "$D/np$np-$mode-$i.out" | tr '\n' ' ')" | tee -a "$R/steps.txt"
        done
        timeout 90 mpirun -n $np --bind-to none "$B/dgemm-dist" --size 16384 --comm ce --grid $grid \
            --repeat 3 --json "$D/np$np-native.jsonl" >"$D/np$np-native.out" 2>&1
        echo "np $np native rc=$? $(grep -E '^rate|PASSED' "$D/np$np-native.out" | tr '\n' ' ')" | tee -a "$R/steps.txt"
    done
    gpu; pack
fi
step "ncu: the emulated kernels' parts at n = 16384"
P=$R/prof; mkdir -p "$P"
for tk in "f32 ozaki2" "f64 ozaki2-14"; do
    set -- $tk
    timeout 150 ncu --clock-control none --metrics gpu__time_duration.sum --csv \
        "$B/bench/gemm-bench" --types $1 --kernels $2 --sizes 16384 --reps 1 --warmup 0 \
        >"$P/$1-$2.csv" 2>"$P/$1-$2.err"
    echo "ncu $1 $2 rc=$?" | tee -a "$R/steps.txt"
done
gpu; pack
step "gemm-bench rates at 16384"
timeout 150 "$B/bench/gemm-bench" --types f32 --kernels ozaki2,ozaki2-s9 --sizes 16384 --reps 5 --warmup 1 \
    --json "$R/rates-f32.jsonl" >"$R/rates-f32.log" 2>&1
echo "gemm-bench f32 rc=$?" | tee -a "$R/steps.txt"
timeout 150 "$B/bench/gemm-bench" --types f64 --kernels ozaki2-14,ozaki2 --sizes 16384 --reps 5 --warmup 1 \
    --json "$R/rates-f64.jsonl" >"$R/rates-f64.log" 2>&1
echo "gemm-bench f64 rc=$?" | tee -a "$R/steps.txt"
gpu; pack
