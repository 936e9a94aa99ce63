#!/usr/bin/env bash
# Three GPU calls (nvidia-h200, one H200) on the tree with the FP32 ozaki2,
# the accuracy guard (ozaki2-auto, --accuracy) and the complex CLI scalars
# merged.  Carried: .gpu/scalapack (Debian 12's libscalapack-openmpi).
#   OUT=dir STAGE=1 bash run.sh   build; the new GPU tests (FP32 ozaki2,
#       --accuracy fp64, ozaki2-auto, complex scalars); test-pipe on CUDA;
#       the drop-in on host data against cuBLASXt for f64 f32 c128 c64
#       (bench/gpu/hostdata.sh, paths pipeline, nosplit, before);
#       bench/gpu/ozaki_f32.sh
#   OUT=dir STAGE=2 bash run.sh   build; test-pipe on CUDA and host data for
#       f64 f32 again (the split schedule three bands deep); the complex
#       scalars' GPU test; bench/gpu/acc_stage.sh; ctest -L gpu
#   OUT=dir STAGE=3 bash run.sh   build; host data for c128 c64 (three bands
#       deep); zgemm_dmma sustained at 8192; ctest -L gpu on the final tree
set -uo pipefail
R=$OUT/r
mkdir -p "$R"
STAGE=${STAGE:-1}
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=/usr/local/cuda/bin:$PATH
pack() { tar -czf "$OUT/results.tgz" -C "$R" . 2>/dev/null; }
step() { echo "== $(date +%T) +$SECONDS s: $*" | tee -a "$R/steps.txt"; }
gpu() { nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active --format=csv,noheader >>"$R/gpu.csv"; }
gpu
SL=$PWD/.gpu/scalapack
(cd "$SL" && xz -dkf libscalapack-openmpi.so.2.2.1.xz && ln -sf libscalapack-openmpi.so.2.2.1 libscalapack-openmpi.so.2.2 &&
    ln -sf libscalapack-openmpi.so.2.2 libscalapack-openmpi.so)
export DD_SCALAPACK_DIR=$SL LD_LIBRARY_PATH=$SL:${LD_LIBRARY_PATH:-}
B=$PWD/.gpubuild/b
step "stage $STAGE: configure and build (all targets)"
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_LIBRARY_PATH="$SL" >"$R/build.log" 2>&1 &&
    timeout 240 cmake --build "$B" -j 16 >>"$R/build.log" 2>&1
echo "build rc=$?" | tee -a "$R/steps.txt"
tail -3 "$R/build.log" >>"$R/steps.txt"
git log -1 --format='tree at %h %s' >>"$R/steps.txt" 2>/dev/null
pack
if [ "$STAGE" = 1 ]; then
    step "new GPU tests"
    (cd "$B" && timeout 200 ctest -R "gpu_ozaki2_f32|gpu_1gpu_ozaki2_f32|gpu_dgemm_dist_accuracy_fp64|gpu_ozaki2_vs_cublas|gpu_complex_scalars" \
        -j 1 --timeout 150 --output-on-failure >"$R/new-tests.log" 2>&1)
    echo "new tests rc=$?" | tee -a "$R/steps.txt"
    grep -E "tests passed|Failed|Timeout|Skipped" "$R/new-tests.log" >>"$R/steps.txt"
    gpu; pack
    step "test-pipe cuda"
    timeout 60 mpirun -n 1 --bind-to none "$B/tests/api/test-pipe" cuda >"$R/test-pipe.log" 2>&1
    echo "test-pipe cuda rc=$?" | tee -a "$R/steps.txt"
    step "hostdata.sh f64 f32 c128 c64, pipeline nosplit before"
    OUT=$R/hostdata DD_HOSTDATA_TESTS=0 XT_BLOCKS=8192 DD_HOSTDATA_DTYPES="f64 f32 c128 c64" \
        DD_HOSTDATA_TAGS="pipeline nosplit before" timeout 230 bash bench/gpu/hostdata.sh "$B" >"$R/hostdata.out" 2>&1
    echo "hostdata rc=$?" | tee -a "$R/steps.txt"
    gpu; pack
    left=$((575 - SECONDS))
    step "ozaki_f32.sh, ${left} s left"
    [ "$left" -gt 30 ] && timeout "$left" bash bench/gpu/ozaki_f32.sh "$B" "$R/ozaki_f32" >"$R/ozaki_f32.out" 2>&1
    echo "ozaki_f32 rc=$?" | tee -a "$R/steps.txt"
    gpu
elif [ "$STAGE" = 3 ]; then
    step "hostdata.sh c128 c64, pipeline (three bands deep)"
    OUT=$R/hostdata DD_HOSTDATA_TESTS=0 XT_BLOCKS=8192 DD_HOSTDATA_DTYPES="c128 c64" \
        DD_HOSTDATA_TAGS="pipeline" timeout 120 bash bench/gpu/hostdata.sh "$B" >"$R/hostdata.out" 2>&1
    echo "hostdata rc=$?" | tee -a "$R/steps.txt"
    gpu; pack
    step "zgemm_dmma against cuBLAS ZGEMM sustained at 8192 (10 s each)"
    timeout 60 "$B/bench/gemm-bench" --types c128 --sizes 8192 --kernels zgemm_dmma,cublas --sustain 10 \
        --json "$R/complex-sustain.jsonl" >"$R/complex-sustain.txt" 2>&1
    echo "gemm-bench sustain rc=$?" | tee -a "$R/steps.txt"
    gpu; pack
    left=$((540 - SECONDS))
    step "ctest -L gpu, ${left} s left"
    (cd "$B" && timeout "$left" ctest -L gpu -E "gpu_2gpu" -j 1 --timeout 150 --output-on-failure >"$R/gpu-tests.log" 2>&1)
    echo "ctest rc=$?" | tee -a "$R/steps.txt"
    grep -E "tests passed|Failed|Skipped|Timeout|Not Run" "$R/gpu-tests.log" | tail -40 >>"$R/steps.txt"
else
    step "test-pipe cuda; hostdata.sh f64 f32 (the split schedule three bands deep), pipeline nosplit"
    timeout 60 mpirun -n 1 --bind-to none "$B/tests/api/test-pipe" cuda >"$R/test-pipe.log" 2>&1
    echo "test-pipe cuda rc=$?" | tee -a "$R/steps.txt"
    OUT=$R/hostdata DD_HOSTDATA_TESTS=0 XT_BLOCKS=8192 DD_HOSTDATA_DTYPES="f64 f32" \
        DD_HOSTDATA_TAGS="pipeline nosplit" timeout 120 bash bench/gpu/hostdata.sh "$B" >"$R/hostdata.out" 2>&1
    echo "hostdata rc=$?" | tee -a "$R/steps.txt"
    gpu; pack
    step "gpu_complex_scalars_files_numpy (gen's c128 read-back fixed)"
    (cd "$B" && timeout 150 ctest -R "gpu_complex_scalars|io_gen_every" --output-on-failure >"$R/complex-tests.log" 2>&1)
    echo "complex tests rc=$?" | tee -a "$R/steps.txt"
    step "acc_stage.sh"
    timeout 200 bash bench/gpu/acc_stage.sh "$B" "$R/acc" >"$R/acc.out" 2>&1
    echo "acc_stage rc=$?" | tee -a "$R/steps.txt"
    gpu; pack
    left=$((570 - SECONDS))
    step "ctest -L gpu, ${left} s left"
    if [ "$left" -gt 30 ]; then
        (cd "$B" && timeout "$left" ctest -L gpu -E "gpu_2gpu" -j 1 --timeout 150 --output-on-failure >"$R/gpu-tests.log" 2>&1)
        echo "ctest rc=$?" | tee -a "$R/steps.txt"
        grep -E "tests passed|Failed|Skipped|Timeout|Not Run" "$R/gpu-tests.log" | tail -40 >>"$R/steps.txt"
    fi
fi
step "done"
pack
