#!/usr/bin/env bash
# call-o's second call (nvidia-h200): the band size for the emulated kernel
# (--kernel ozaki2) and FP32 in the file-to-file pipeline, n = 32768: DD_PIPE_BAND_MIB
# 32, 64, 128, in that order twice, each after a sync, no script.
#   OUT=dir bash docs/results/h200-2026-12-04-call-o/run2.sh   (from the tree's root)
. bench/gpu/call.sh
R=$OUT/r2
mkdir -p "$R"
build dgemm-dist || exit 1
for what in ozaki2 f32; do
    step "file to file, n = 32768, $what"
    gpu
    args="--kernel ozaki2" gen=""
    [ "$what" = f32 ] && args="" gen="--dtype f32"
    OUT=$R/$what PIPE_RUNS=0 BAND_SWEEP="32 64 128" NO_SCRIPT=1 PIPE_ARGS="$args" GEN_ARGS="$gen" timeout 200 \
        bash bench/gpu/pipeline.sh "$B" 32768 >"$R/$what.log" 2>&1
    echo "pipeline $what rc=$?" | tee -a "$R/steps.txt"
    cat "$R/$what/pipeline.md" >>"$R/steps.txt" 2>/dev/null
    pack
done
gpu
step "done"
pack
