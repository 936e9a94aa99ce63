set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R/v $R/ab
cp COMMIT interleave-epilogues.sh $R/ab/
OUT=$R/v DD_BUILD=/tmp/bgpu timeout 200 bash tests/gpu/run.sh build > $R/v/run.log 2>&1
tail -1 $R/v/build.log
G=/tmp/bgpu/kernels
timeout 150 $G/kernel-test 23 > $R/ab/kernel-test-23.txt 2>&1; echo "kt 23: $(tail -1 $R/ab/kernel-test-23.txt)"
S=8192x8192x1024,16384x16384x1024,16384x16384x4096,32768x16384x4096,8192
timeout 240 $G/gemm-bench --types f64 --kernels 23_dmma_pipe,23t_dmma_tmapf,23r_dmma_red --interleave --reps 16 \
  --sizes $S --json $R/ab/bench.jsonl > $R/ab/bench.txt 2>&1
grep -v "^#" $R/ab/bench.txt | awk '{print $1,$3,$5,$6,$7,$8,$10,$11}'
for kk in 23_dmma_pipe 23r_dmma_red 23r_dmma_red 23_dmma_pipe; do
  timeout 100 mpirun -n 1 --bind-to none /tmp/bgpu/dgemm-dist --size 32768 --kernel $kk \
    --repeat 4 --warmup 1 --check --json $R/ab/dist.jsonl > $R/ab/dist-$kk.txt 2>&1
  echo "$kk $(grep -E '^rate|^GPU|PASSED|FAILED' $R/ab/dist-$kk.txt | tr -s ' ' | cut -c1-120 | paste -sd'|')"
done
cd $OUT && tar czf r.tgz r
