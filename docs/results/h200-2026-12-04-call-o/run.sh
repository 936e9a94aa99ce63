#!/usr/bin/env bash
# The GPU call of this folder (nvidia-h200, one H200): what op(B)'s exposed
# read in the pipeline is made of, and the band size.
#   OUT=dir bash docs/results/h200-2026-12-04-call-o/run.sh   (from the tree's root)
# 1. build (all targets: the tests need dd-compare); 2. the pipeline's GPU
#    tests; 3. file to file at n = 32768 (bench/gpu/pipeline.sh): the
#    default twice, then DD_PIPE_BAND_MIB 128, 64, 32, 16 in that order
#    twice, the pinned slots allocated before op(B)'s read once
#    (SLOTS_FIRST), plain slots and the phased run, each after a sync, beside
#    the h5py + PyTorch script.
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
OUT=$R/pipeline PIPE_RUNS=2 BAND_SWEEP="128 64 32 16" SLOTS_FIRST=1 timeout 330 \
    bash bench/gpu/pipeline.sh "$B" 32768 >"$R/pipeline.log" 2>&1
echo "pipeline rc=$?" | tee -a "$R/steps.txt"
cat "$R/pipeline/pipeline.md" >>"$R/steps.txt" 2>/dev/null
gpu
step "done"
pack
