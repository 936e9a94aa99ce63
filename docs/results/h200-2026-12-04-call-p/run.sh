#!/usr/bin/env bash
# The GPU call of this folder (nvidia-h200, one H200), after the pipeline's
# bands became 64 MiB and at least 256 rows on one process row:
#   OUT=dir bash docs/results/h200-2026-12-04-call-p/run.sh   (from the tree's root)
# 1. build (all targets); 2. the pipeline's GPU tests; 3. file to file at
#    n = 32768 FP64 (bench/gpu/pipeline.sh, PIPE_RUNS=6, the defaults, each
#    run after a sync) beside the h5py + PyTorch script.
. bench/gpu/call.sh
build || exit 1
step "pipeline GPU tests"
(cd "$B" && timeout 100 ctest -R "pipeline" -L gpu -E gpu_2gpu -j 1 --timeout 60 --output-on-failure \
    >"$R/tests.log" 2>&1)
echo "tests rc=$?" | tee -a "$R/steps.txt"
grep -E "tests passed|Failed|\*\*\*" "$R/tests.log" >>"$R/steps.txt"
pack
step "file to file, n = 32768"
gpu
OUT=$R/pipeline PIPE_RUNS=6 timeout 300 bash bench/gpu/pipeline.sh "$B" 32768 >"$R/pipeline.log" 2>&1
echo "pipeline rc=$?" | tee -a "$R/steps.txt"
cat "$R/pipeline/pipeline.md" >>"$R/steps.txt" 2>/dev/null
gpu
step "done"
pack
