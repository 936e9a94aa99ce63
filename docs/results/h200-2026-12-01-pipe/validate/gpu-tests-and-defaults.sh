#!/bin/bash
# call 6: the GPU test suite with 23_dmma_pipe as the FP64 default, and dgemm-dist with the defaults on this GPU
set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/p6; mkdir -p $R
OUT=$R/v DD_BUILD=/tmp/bgpu bash tests/gpu/run.sh build test 2>&1 | tail -5
for n in 32768 16384 32768; do
    echo "== default f64 $n" >> $R/dist.txt
    timeout 120 /usr/bin/time -f "wall %e s" mpirun -n 1 --bind-to none /tmp/bgpu/dgemm-dist --size $n --repeat 3 --warmup 1 --check --json $R/dist.jsonl >> $R/dist.txt 2>&1
done
echo "== default f32 16384" >> $R/dist.txt
timeout 120 /usr/bin/time -f "wall %e s" mpirun -n 1 --bind-to none /tmp/bgpu/dgemm-dist --size 16384 --dtype f32 --repeat 3 --warmup 1 --check --json $R/dist.jsonl >> $R/dist.txt 2>&1
grep -E "^== |^kernel|^rate|^GPU|FAILED|PASSED|^wall [0-9]" $R/dist.txt
cd $R && tar czf $OUT/p6.tgz . && cd / && rm -rf $R
