set -u
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
R=$OUT/r; mkdir -p $R/v $R/pitch
cp COMMIT interleave-pitch.sh $R/pitch/
OUT=$R/v DD_BUILD=/tmp/bgpu timeout 200 bash tests/gpu/run.sh build > $R/v/run.log 2>&1
tail -1 $R/v/build.log
G=/tmp/bgpu/kernels
for p in 12 13 23; do timeout 100 $G/kernel-test $p > $R/pitch/kernel-test-$p.txt 2>&1; echo "kt $p: $(tail -1 $R/pitch/kernel-test-$p.txt)"; done
S=8192x8192x1024,16384x16384x1024,16384x16384x4096,32768x16384x4096
timeout 150 $G/gemm-bench --types f64 --kernels 23_dmma_pipe,23o_dmma_pitch128 --interleave --reps 15 \
  --sizes $S --json $R/pitch/bench.jsonl > $R/pitch/bench.txt 2>&1
grep -v "^#" $R/pitch/bench.txt | awk '{print $1,$3,$5,$6,$7,$8,$10,$11}'
timeout 150 $G/gemm-bench --types f64 --kernels 23o_dmma_pitch128,23_dmma_pipe --interleave --reps 15 \
  --sizes $S --json $R/pitch/bench-rev.jsonl > $R/pitch/bench-rev.txt 2>&1
grep -v "^#" $R/pitch/bench-rev.txt | awk '{print $1,$3,$5,$6,$7,$8,$10,$11}'
for kk in 23_dmma_pipe 23o_dmma_pitch128 23_dmma_pipe 23o_dmma_pitch128; do
  timeout 100 mpirun -n 1 --bind-to none /tmp/bgpu/dgemm-dist --size 32768 --kernel $kk \
    --repeat 4 --warmup 1 --check --json $R/pitch/dist.jsonl > $R/pitch/dist-$kk.txt 2>&1
  echo "$kk $(grep -E '^rate|^GPU|PASSED|FAILED' $R/pitch/dist-$kk.txt | tr -s ' ' | cut -c1-120 | paste -sd'|')"
done
cd $OUT && tar czf r.tgz r
