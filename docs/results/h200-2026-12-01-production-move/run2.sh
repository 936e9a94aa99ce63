#!/bin/bash
# GPU call 2: the new tree's GPU tests; the ladder run and the sustained rows again (their records).
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu; R=/tmp/r2; mkdir -p $R
date -u +%FT%TZ > $R/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $R/gpu.csv
mkdir -p .gpubuild/src && tar -xzf $G/new.tgz -C .gpubuild/src
gunzip -c $G/gb-new.gz > /tmp/gb-new; gunzip -c $G/gb-old.gz > /tmp/gb-old; chmod +x /tmp/gb-new /tmp/gb-old
( cd .gpubuild/src && cmake -S . -B ../build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > $R/build.log 2>&1 \
  && cmake --build ../build -j 16 >> $R/build.log 2>&1; echo "build rc=$?" >> $R/build.log )
tail -1 $R/build.log
/tmp/gb-new --sizes 4096 --types f64,f32 --reps 5 --warmup 1 --json $R/ladder.jsonl > $R/ladder.txt 2>&1
(cd .gpubuild/build && timeout 330 ctest -L gpu -j1 --timeout 200 --output-on-failure > $R/gpu-tests.log 2>&1; echo "ctest rc=$?" >> $R/gpu-tests.log)
S="--sizes 16384 --types f64,f32 --reps 3 --warmup 1 --sustain 8"
/tmp/gb-new $S --kernels dgemm_dmma,sgemm_dmma --json $R/sustain-new.jsonl > $R/sustain-new.txt 2>&1
/tmp/gb-old $S --kernels 23_dmma_pipe,24_sgemm_dmma --json $R/sustain-old.jsonl > $R/sustain-old.txt 2>&1
date -u +%FT%TZ >> $R/start.txt
tar -czf $OUT/r2.tgz -C $R .
grep -E "tests passed|\(Failed|Timeout|ctest rc" $R/gpu-tests.log | head -30
grep -E "sustained" $R/sustain-*.txt
