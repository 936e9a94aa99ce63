#!/usr/bin/env bash
# One GPU call (nvidia-h200, one H200): SUMMA's sliced panels (issue 34
# item 4) and the GPU's head start (issue 33 item 3).
#   OUT=dir bash run.sh
# 1. build (Ninja, sm_90); 2. the sliced operands' GPU tests
#    (gpu_ozaki2_slices_bitwise{,_cublas_int8}: ozaki-bench --slices-test) and
#    the end-to-end ones (gpu_1gpu_ozaki2_sliced_panels_{mpi,ce}: ranks
#    sharing the GPU, sliced and FP64 panels bit for bit), with the ozaki2
#    and kernel tests that cover chunk()'s refactor; ozaki-bench
#    --slices-test's timing line; 3. dgemm-dist --kernel ozaki2-14 at n =
#    16384 on 2 (1x2) and 4 (2x2) ranks sharing the GPU, --comm mpi, sliced
#    against FP64 panels, and dgemm_dmma beside them; 4. the head start:
#    one rank, --size 8192, three runs with it and three without
#    (DD_FAULT=no-prestart:*), the record's setup parts and /usr/bin/time;
#    5. gemm-bench rows of ozaki2-14 and ozaki2-16 at the model's shapes
#    (src/model/tables/rates-h200.csv); 6. ctest -L gpu with the time left.
#   OUT=dir STAGE=2 bash run.sh   build; gpu_1gpu_ozaki2_sliced_panels_{mpi,ce}
#       again (the redo's pattern mended, auto's check); the dgemm-dist
#       runs of step 3 with --comm ce (copy engines: the ranks' panels
#       pulled by the GPU's copy engines, no host staging) and auto beside
STAGE=${STAGE:-1}
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
if [ "$STAGE" = 2 ]; then
    step "sliced panels end to end"
    (cd "$B" && timeout 200 ctest -R "gpu_1gpu_ozaki2_sliced" -j 1 --timeout 150 --output-on-failure \
        >"$R/sliced-tests.log" 2>&1)
    echo "sliced tests rc=$?" | tee -a "$R/steps.txt"
    grep -E "^ok|FAIL|Test +#|tests passed" "$R/sliced-tests.log" >>"$R/steps.txt"
    step "dgemm-dist ozaki2-14 n=16384, ranks sharing the GPU, --comm ce"
    D=$R/dist-ce; mkdir -p "$D"
    for np in 2 4; do
        grid=$([ $np = 2 ] && echo 1x2 || echo 2x2)
        for mode in slices fp64 auto slices fp64; do
            i=$((${i:-0} + 1))
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
    exit 0
fi
step "sliced operands and ozaki2 GPU tests"
(cd "$B" && timeout 240 ctest -R "gpu_ozaki2_slices|gpu_1gpu_ozaki2|gpu_ozaki2_vs|gpu_kernels_match" \
    -j 1 --timeout 200 --output-on-failure >"$R/slices-tests.log" 2>&1)
echo "slices tests rc=$?" | tee -a "$R/steps.txt"
grep -E "Test +#|tests passed|Failed|Timeout|Skipped" "$R/slices-tests.log" >>"$R/steps.txt"
timeout 120 "$B/bench/ozaki-bench" --slices-test --json "$R/slices-test.jsonl" >"$R/slices-test.log" 2>&1
echo "ozaki-bench --slices-test rc=$?" | tee -a "$R/steps.txt"
grep -i -E "time|ms|all passed" "$R/slices-test.log" | tail -8 >>"$R/steps.txt"
gpu; pack
step "dgemm-dist ozaki2-14 n=16384, ranks sharing the GPU, sliced vs FP64 panels"
D=$R/dist; mkdir -p "$D"
for np in 2 4; do
    grid=$([ $np = 2 ] && echo 1x2 || echo 2x2)
    for mode in slices fp64 slices fp64; do
        i=$((${i:-0} + 1))
        DD_OZAKI2_PANELS=$mode timeout 90 mpirun -n $np --bind-to none -x DD_OZAKI2_PANELS \
            "$B/dgemm-dist" --size 16384 --kernel ozaki2-14 --comm mpi --grid $grid --repeat 3 \
            --json "$D/np$np-$mode.jsonl" >"$D/np$np-$mode-$i.out" 2>&1
        echo "np $np $mode rc=$? $(grep -E '^rate|PASSED|note' "$D/np$np-$mode-$i.out" | tr '\n' ' ')" | tee -a "$R/steps.txt"
    done
    timeout 90 mpirun -n $np --bind-to none "$B/dgemm-dist" --size 16384 --comm mpi --grid $grid \
        --repeat 3 --json "$D/np$np-native.jsonl" >"$D/np$np-native.out" 2>&1
    echo "np $np native rc=$? $(grep -E '^rate|PASSED' "$D/np$np-native.out" | tr '\n' ' ')" | tee -a "$R/steps.txt"
done
gpu; pack
step "head start: one rank, --size 8192, with and without"
H=$R/head; mkdir -p "$H"
for i in 1 2 3; do
    for f in "" "no-prestart:*"; do
        tag=$([ -z "$f" ] && echo on || echo off)
        DD_FAULT=$f /usr/bin/time -f "%e" -o "$H/wall-$tag-$i" timeout 60 mpirun -n 1 --bind-to none -x DD_FAULT \
            "$B/dgemm-dist" --size 8192 --json "$H/$tag.jsonl" >"$H/$tag-$i.out" 2>&1
        echo "head $tag $i rc=$? wall $(cat "$H/wall-$tag-$i") $(grep -E '^setup|setup in' "$H/$tag-$i.out" | tr '\n' ' ')" | tee -a "$R/steps.txt"
    done
done
gpu; pack
step "gemm-bench ozaki2-14, ozaki2-16 at the model's shapes"
timeout 200 "$B/bench/gemm-bench" --kernels ozaki2-14,ozaki2-16 --types f64 --reps 5 --warmup 1 \
    --sizes 4096,8192,16384,8192x8192x1024,16384x16384x1024,16384x16384x2048,16384x16384x4096,16384x16384x8192 \
    --json "$R/rates.jsonl" >"$R/rates.log" 2>&1
echo "gemm-bench rc=$?" | tee -a "$R/steps.txt"
gpu; pack
left=$((575 - SECONDS))
step "ctest -L gpu, ${left} s left"
[ "$left" -gt 30 ] && (cd "$B" && timeout "$left" ctest -L gpu -E "gpu_2gpu|gpu_ozaki2_slices|gpu_1gpu_ozaki2|gpu_ozaki2_vs|gpu_kernels_match" -j 1 --timeout 150 --output-on-failure >"$R/gpu-tests.log" 2>&1)
echo "ctest rc=$?" | tee -a "$R/steps.txt"
grep -E "tests passed|Failed|Skipped|Timeout|Not Run" "$R/gpu-tests.log" | tail -40 >>"$R/steps.txt"
gpu; pack
