set -u
R=$OUT/r; mkdir -p $R/v $R/aa
cp COMMIT interleave-aa.sh $R/aa/
BUILD=/tmp/rg OUT=$R/v timeout 200 bash kernels/run-gpu.sh --build-only > $R/v/build.log 2>&1; tail -1 $R/v/build.log
G=/tmp/rg; ls $G/gemm-bench >/dev/null 2>&1 || G=/tmp/rg/kernels
S=16384x16384x4096,32768x16384x4096,16384x16384x1024,8192x8192x1024,8192,16384
timeout 300 $G/gemm-bench --types f64 --kernels 23_dmma_pipe,23t_dmma_tmapf --interleave --reps 18 \
  --sizes $S --json $R/aa/bench.jsonl > $R/aa/bench.txt 2>&1
grep -v "^#" $R/aa/bench.txt | awk '{print $1,$3,$5,$6,$7,$8,$10,$11}'
cd $OUT && tar czf r.tgz r
