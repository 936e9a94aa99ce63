#!/usr/bin/env bash
# The GPU calls of this folder (nvidia-h200, one H200): how pinned memory is
# best had, then the pipeline with the engine's new pinned memory.
#   first call, from the tree's root (pin320.txt, pin640.txt):
#     cd $OUT && nvcc -O2 -o pin_probe $TREE/bench/gpu/pin_probe.cu &&
#       ./pin_probe 320 >pin320.txt; ./pin_probe 640 >pin640.txt
#   second call: OUT=dir bash docs/results/h200-2026-12-04-call-q/run.sh
# 1. build (all targets); 2. the pipeline's GPU tests; 3. file to file at
#    n = 32768 FP64 (bench/gpu/pipeline.sh: the default bands 4 times, then
#    DD_PIPE_BAND_MIB=128 twice, slots pinned first once) beside the
#    h5py + PyTorch script; 4. every 1-GPU test of the suite.
. bench/gpu/call.sh
if [ "${1:-}" = rest ]; then
    R=$OUT/r3
    mkdir -p "$R"
    build || exit 1
    step "the 1-GPU tests after gpu_api_ops_sweep_every_entry_1rank"
    (cd "$B" && timeout 450 ctest -L gpu -R "gpu_api_ops_sweep_every_entry_2rank|gpu_kernels_|gpu_i8gemm|ozaki2|gpu_dgemm_dist_accuracy|python_gpu" \
        -E "gpu_2gpu" -j 1 --timeout 150 --output-on-failure >"$R/gpu-tests.log" 2>&1)
    echo "gpu tests rc=$?" | tee -a "$R/steps.txt"
    grep -E "tests passed|Failed|\*\*\*|Not Run" "$R/gpu-tests.log" >>"$R/steps.txt"
    step "done"
    pack
    exit 0
fi
build || exit 1
step "pipeline GPU tests"
(cd "$B" && timeout 100 ctest -R "pipeline" -L gpu -E gpu_2gpu -j 1 --timeout 60 --output-on-failure \
    >"$R/tests.log" 2>&1)
echo "tests rc=$?" | tee -a "$R/steps.txt"
grep -E "tests passed|Failed|\*\*\*" "$R/tests.log" >>"$R/steps.txt"
pack
step "file to file, n = 32768"
gpu
OUT=$R/pipeline PIPE_RUNS=4 BAND_SWEEP="128" SLOTS_FIRST=1 timeout 240 \
    bash bench/gpu/pipeline.sh "$B" 32768 >"$R/pipeline.log" 2>&1
echo "pipeline rc=$?" | tee -a "$R/steps.txt"
cat "$R/pipeline/pipeline.md" >>"$R/steps.txt" 2>/dev/null
gpu
pack
step "every 1-GPU test"
(cd "$B" && timeout 200 ctest -L gpu -E "gpu_2gpu|pipeline" -j 1 --timeout 100 --output-on-failure \
    >"$R/gpu-tests.log" 2>&1)
echo "gpu tests rc=$?" | tee -a "$R/steps.txt"
grep -E "tests passed|Failed|\*\*\*|Not Run" "$R/gpu-tests.log" >>"$R/steps.txt"
step "done"
pack
# third call: the 1-GPU tests the second call's 200 s did not reach
#   OUT=dir bash docs/results/h200-2026-12-04-call-q/run.sh rest
