set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R/v $R/bal
cp COMMIT interleave-balanced.sh $R/bal/
BUILD=/tmp/rg OUT=$R/v timeout 200 bash kernels/run-gpu.sh --build-only > $R/v/build.log 2>&1; tail -1 $R/v/build.log
G=/tmp/rg
ls $G/gemm-bench >/dev/null || G=/tmp/rg/kernels
S=8192x8192x1024,16384x16384x1024,16384x16384x4096,32768x16384x4096,4096,8192,16384
timeout 300 $G/gemm-bench --types f64 --kernels 23_dmma_pipe,23o_dmma_pitch128 --interleave --reps 18 \
  --sizes $S --json $R/bal/bench.jsonl > $R/bal/bench.txt 2>&1
grep -v "^#" $R/bal/bench.txt | awk '{print $1,$3,$5,$6,$7,$8,$10,$11}'
cd $OUT && tar czf r.tgz r
