#!/usr/bin/env bash
# The first GPU call of this folder (nvidia-h200, one H200):
#   OUT=dir bash docs/results/h200-2026-12-03-call-m/run.sh   (from the tree's root)
# 1. build; 2. cuBLASMp side by side (bench/gpu/cublasmp.sh), n = 16384 with
#    21 alternated repetitions and 32768 with 5, FP64 and FP32, default
#    kernels; 3. file to file at n = 32768 (bench/gpu/pipeline.sh,
#    READ_SWEEP="8 16", PIPE_RUNS=3, each run after a sync) beside the
#    h5py + PyTorch script; 4. the INT8 ceiling under the 700 W cap: the own
#    INT8 GEMM and cuBLAS INT8 at ozaki2-14's product shape (14 products of
#    16384^3), burst and sustained 10 s, beside ozaki2-14 / -15 / -16
#    sustained; 5. accuracy at k = 16384 (ozaki-bench, uniform and phi0.5,
#    exact reference on sampled entries) for ozaki2-14, -15, -16,
#    ozaki2-auto and native; 6. the model's ozaki2 rate rows (gemm-bench
#    --reps 5 --warmup 1 at the table's shapes, f64 ozaki2-14 / ozaki2-16,
#    f32 ozaki2); 7. with the time left, the kernels' and ozaki2's GPU
#    tests.  Each step under a time limit.
. bench/gpu/call.sh
build dgemm-dist gemm-bench ozaki-bench || exit 1
step "cuBLASMp, 16384 x 21 and 32768 x 5"
OUT=$R/cublasmp SIZES=16384 REPS=21 OZAKI=0 timeout 200 bash bench/gpu/cublasmp.sh "$B" >"$R/cublasmp-16384.log" 2>&1
echo "rc=$?" | tee -a "$R/steps.txt"
OUT=$R/cublasmp SIZES=32768 REPS=5 OZAKI=0 timeout 200 bash bench/gpu/cublasmp.sh "$B" >"$R/cublasmp-32768.log" 2>&1
echo "rc=$?" | tee -a "$R/steps.txt"
cat "$R"/cublasmp/cublasmp.md >>"$R/steps.txt" 2>/dev/null
gpu; pack
step "file to file, n = 32768"
OUT=$R/pipeline READ_SWEEP="8 16" PIPE_RUNS=3 DD_RING_MIB=256 timeout 330 bash bench/gpu/pipeline.sh "$B" 32768 \
    >"$R/pipeline.log" 2>&1
echo "pipeline rc=$?" | tee -a "$R/steps.txt"
cat "$R/pipeline/read-sweep.txt" "$R/pipeline/pipeline.md" >>"$R/steps.txt" 2>/dev/null
gpu; pack
step "INT8 ceiling and ozaki2 sustained at 16384"
G=$B/bench/gemm-bench
timeout 120 "$G" --types i8 --i8-batch 14 --sizes 16384 --reps 5 --warmup 1 --sustain 10 \
    --json "$R/i8.jsonl" >"$R/i8.txt" 2>&1
echo "i8 rc=$?" | tee -a "$R/steps.txt"
timeout 200 "$G" --types f64 --kernels ozaki2-14,ozaki2-15,ozaki2-16 --sizes 16384 --reps 5 --warmup 1 \
    --sustain 10 --json "$R/oz-sustain.jsonl" >"$R/oz-sustain.txt" 2>&1
echo "ozaki2 sustain rc=$?" | tee -a "$R/steps.txt"
gpu; pack
step "accuracy at k = 16384"
timeout 150 "$B/bench/ozaki-bench" --sizes 16384 --kernels ozaki2-14,ozaki2-15,ozaki2-16,ozaki2-auto,dgemm_dmma \
    --classes uniform,phi0.5 --reps 3 --json "$R/acc.jsonl" >"$R/acc.txt" 2>&1
echo "acc rc=$?" | tee -a "$R/steps.txt"
gpu; pack
step "model rows"
G=$B/bench/gemm-bench
S=$(awk -F, '$2 == "ozaki2-14" && $3 == "f64" { printf "%s%sx%sx%s", s, $5, $6, $7; s = "," }' src/model/tables/rates-h200.csv)
mkdir -p "$R/rows"
timeout 100 "$G" --types f64 --kernels ozaki2-14,ozaki2-16 --beta auto --reps 5 --warmup 1 --sizes "$S" \
    --json "$R/rows/rows-f64.jsonl" >"$R/rows/rows-f64.txt" 2>&1
echo "rows f64 rc=$?" | tee -a "$R/steps.txt"
timeout 60 "$G" --types f32 --kernels ozaki2 --beta auto --reps 5 --warmup 1 --sizes "$S" \
    --json "$R/rows/rows-f32.jsonl" >"$R/rows/rows-f32.txt" 2>&1
echo "rows f32 rc=$?" | tee -a "$R/steps.txt"
gpu; pack
left=$((570 - SECONDS))
if [ "$left" -gt 60 ]; then
    step "GPU tests: kernels and ozaki2 ($left s)"
    timeout "$left" bash -c "cmake --build '$B' -j 16 >>'$R/build.log' 2>&1 && cd '$B' &&
        ctest -R 'ozaki2|gpu_kernels_match|i8gemm' -L gpu -E gpu_2gpu -j 1 --timeout 120 --output-on-failure" \
        >"$R/tests.log" 2>&1
    echo "tests rc=$?" | tee -a "$R/steps.txt"
    grep -E "tests passed|Failed|\*\*\*" "$R/tests.log" >>"$R/steps.txt"
fi
step "done"
pack
