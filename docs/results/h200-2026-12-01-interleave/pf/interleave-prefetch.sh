set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R/v $R/pf
cp COMMIT $R/
OUT=$R/v DD_BUILD=/tmp/bgpu timeout 200 bash tests/gpu/run.sh build > $R/v/run.log 2>&1
tail -2 $R/v/build.log
G=/tmp/bgpu/kernels
timeout 120 $G/kernel-test 25 > $R/pf/kernel-test.txt 2>&1; tail -3 $R/pf/kernel-test.txt
S=8192x8192x1024,16384x16384x1024,16384x16384x4096,32768x16384x4096
timeout 200 $G/gemm-bench --types f64 --kernels 23_dmma_pipe,25_dmma_pf --interleave --reps 12 \
  --sizes $S,8192,16384 --json $R/pf/bench.jsonl > $R/pf/bench.txt 2>&1
grep -v "^#" $R/pf/bench.txt | awk '{print $1,$3,$4,$5,$6,$7,$8,$10,$11}'
timeout 120 $G/gemm-bench --types f64 --kernels 25_dmma_pf,23_dmma_pipe --interleave --reps 12 \
  --sizes $S --json $R/pf/bench-rev.jsonl > $R/pf/bench-rev.txt 2>&1
grep -v "^#" $R/pf/bench-rev.txt | grep interleaved | awk '{print $1,$3,$4,$5,$6,$7,$8,$10,$11}'
for kk in 23_dmma_pipe 25_dmma_pf 23_dmma_pipe 25_dmma_pf; do
  /usr/bin/time -f "wall %e s" timeout 100 mpirun -n 1 --bind-to none /tmp/bgpu/dgemm-dist --size 32768 --kernel $kk \
    --repeat 4 --warmup 1 --check --json $R/pf/dist.jsonl > $R/pf/dist-$kk.txt 2>&1
  echo "$kk $(grep -E '^rate|^GPU|PASSED|FAILED' $R/pf/dist-$kk.txt | tr -s ' ' | paste -sd'|')"
done
cd $OUT && tar czf r.tgz r
