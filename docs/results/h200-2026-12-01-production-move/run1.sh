#!/bin/bash
# GPU call 1: the production kernels before (2a17873) and after the move
# (c326bbf) in one call, burst and sustained; the ladder table's run; the
# new tree built for the GPU tests (call 2).
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
G=$PWD/.gpu
date -u +%FT%TZ > $OUT/start.txt
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu --format=csv > $OUT/gpu.csv
mkdir -p .gpubuild/src && tar -xzf $G/new.tgz -C .gpubuild/src
( cd .gpubuild/src && cmake -S . -B ../build -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 > $OUT/build.log 2>&1 \
  && nice -n 10 cmake --build ../build -j 12 >> $OUT/build.log 2>&1; echo "build rc=$?" >> $OUT/build.log ) &
gunzip -c $G/gb-old.gz > /tmp/gb-old; gunzip -c $G/gb-new.gz > /tmp/gb-new; chmod +x /tmp/gb-old /tmp/gb-new
B="--sizes 4096,8192,16384 --types f64,f32 --reps 10 --warmup 2"
for r in 1 2; do
  /tmp/gb-old $B --kernels 23_dmma_pipe,24_sgemm_dmma --json $OUT/burst-old.jsonl > $OUT/burst-old-$r.txt 2>&1
  /tmp/gb-new $B --kernels dgemm_dmma,sgemm_dmma --json $OUT/burst-new.jsonl > $OUT/burst-new-$r.txt 2>&1
done
S="--sizes 16384 --types f64,f32 --reps 3 --warmup 1 --sustain 8"
/tmp/gb-new $S --kernels dgemm_dmma,sgemm_dmma --json $OUT/sustain-new.jsonl > $OUT/sustain-new.txt 2>&1
/tmp/gb-old $S --kernels 23_dmma_pipe,24_sgemm_dmma --json $OUT/sustain-old.jsonl > $OUT/sustain-old.txt 2>&1
# the ladder table: every kernel of the new tree at 4096 in one run
/tmp/gb-new --sizes 4096 --types f64,f32 --reps 5 --warmup 1 --json $OUT/ladder.jsonl > $OUT/ladder.txt 2>&1
wait
tail -3 $OUT/build.log
nvidia-smi --query-gpu=clocks.sm,power.draw,temperature.gpu --format=csv >> $OUT/gpu.csv
for f in $OUT/burst-old-1.txt $OUT/burst-new-1.txt $OUT/burst-old-2.txt $OUT/burst-new-2.txt $OUT/sustain-old.txt $OUT/sustain-new.txt; do echo "== $f"; grep -E "dmma|cublas|pipe" $f | head -14; done
echo "== ladder"; tail -30 $OUT/ladder.txt
date -u +%FT%TZ >> $OUT/start.txt
