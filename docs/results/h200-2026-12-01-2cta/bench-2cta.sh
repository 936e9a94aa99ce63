export NCCL_NVLS_ENABLE=0
BUILD=/tmp/rg OUT=$OUT/x bash kernels/run-gpu.sh --build-only > $OUT/build.txt 2>&1; tail -1 $OUT/build.txt; grep -h "Used" /tmp/rg/20_dmma_2cta.log | sort | uniq -c
. tests/gpu/step.sh
O=$OUT/c; mkdir -p $O; OUT=$O
step kernel-test.txt /tmp/rg/kernel-test 20
K=13_dmma_sk,20_dmma_2cta,20b_dmma_2cta3
step bench.txt /tmp/rg/gemm-bench --types f64 --kernels $K --reps 5 --sizes 4096,8192,16384,8192x8192x1024,16384x16384x1024,16384x16384x4096,32768x32768x4096 --json $O/bench.jsonl
step bench-rev.txt /tmp/rg/gemm-bench --types f64 --kernels 20b_dmma_2cta3,20_dmma_2cta,13_dmma_sk --reps 5 --sizes 4096,8192,16384,8192x8192x1024 --json $O/bench-rev.jsonl
step sustain.txt /tmp/rg/gemm-bench --types f64 --kernels 13_dmma_sk,20_dmma_2cta --sizes 8192,16384 --sustain 6 --json $O/sustain.jsonl
bash tests/gpu/ncu_stalls.sh /tmp/rg/gemm-bench $O/st f64 8192 20_dmma_2cta
