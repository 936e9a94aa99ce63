#!/usr/bin/env bash
# One GPU call (nvidia-h200, one H200): build the tree, then the complex
# kernels against cuBLAS (their GPU test, then gemm-bench for c128 and c64),
# the drop-in on host data against cuBLASXt with the wider host-pipeline
# slots (bench/gpu/hostdata.sh, its test-pipe on CUDA first), file to file
# with the read-back's columns read without HDF5's sieve
# (bench/gpu/pipeline.sh), and ctest -L gpu with the time left.  Carried:
# .gpu/scalapack (Debian 12's libscalapack-openmpi).   OUT=dir bash run.sh
set -uo pipefail
R=$OUT/r
mkdir -p "$R"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=/usr/local/cuda/bin:$PATH
pack() { tar -czf "$OUT/results.tgz" -C "$R" . 2>/dev/null; }
step() { echo "== $(date +%T) +$SECONDS s: $*" | tee -a "$R/steps.txt"; }
gpu() { nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active --format=csv,noheader >>"$R/gpu.csv"; }
gpu
SL=$PWD/.gpu/scalapack
(cd "$SL" && xz -dkf libscalapack-openmpi.so.2.2.1.xz && ln -sf libscalapack-openmpi.so.2.2.1 libscalapack-openmpi.so.2.2 &&
    ln -sf libscalapack-openmpi.so.2.2 libscalapack-openmpi.so)
export DD_SCALAPACK_DIR=$SL LD_LIBRARY_PATH=$SL:${LD_LIBRARY_PATH:-}
B=$PWD/.gpubuild/b
step "configure and build (all targets)"
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_LIBRARY_PATH="$SL" >"$R/build.log" 2>&1 &&
    timeout 200 cmake --build "$B" -j 16 >>"$R/build.log" 2>&1
echo "build rc=$?" | tee -a "$R/steps.txt"
tail -3 "$R/build.log" >>"$R/steps.txt"
git log -1 --format='tree at %h %s' >>"$R/steps.txt" 2>/dev/null
pack
step "complex kernels: GPU tests"
(cd "$B" && timeout 120 ctest -R "gpu_kernels" -j 1 --timeout 100 --output-on-failure >"$R/kernels-tests.log" 2>&1)
echo "kernel tests rc=$?" | tee -a "$R/steps.txt"
grep -E "tests passed|Failed|Timeout" "$R/kernels-tests.log" >>"$R/steps.txt"
step "gemm-bench c128, c64 against cuBLAS"
timeout 150 "$B/bench/gemm-bench" --types c128,c64 --sizes 4096,8192,16384 --kernels zgemm_dmma,cgemm_dmma,cublas \
    --json "$R/complex.jsonl" >"$R/complex.txt" 2>&1
echo "gemm-bench rc=$?" | tee -a "$R/steps.txt"
gpu
timeout 90 "$B/bench/gemm-bench" --types c128 --sizes 16384 --kernels zgemm_dmma,cublas --sustain 10 \
    --json "$R/complex-sustain.jsonl" >"$R/complex-sustain.txt" 2>&1
echo "gemm-bench sustain rc=$?" | tee -a "$R/steps.txt"
gpu; pack
step "hostdata.sh (test-pipe cuda first)"
timeout 60 mpirun -n 1 --bind-to none "$B/tests/api/test-pipe" cuda >"$R/test-pipe.log" 2>&1
echo "test-pipe cuda rc=$?" | tee -a "$R/steps.txt"
OUT=$R/hostdata DD_HOSTDATA_TESTS=0 XT_BLOCKS=8192 timeout 120 bash bench/gpu/hostdata.sh "$B" >"$R/hostdata.out" 2>&1
echo "hostdata rc=$?" | tee -a "$R/steps.txt"
gpu; pack
step "pipeline.sh"
OUT=$R/pipeline DD_RING_MIB=256 timeout 150 bash bench/gpu/pipeline.sh "$B" 32768 >"$R/pipeline.out" 2>&1
echo "pipeline rc=$?" | tee -a "$R/steps.txt"
gpu; pack
left=$((570 - SECONDS))
step "ctest -L gpu, ${left} s left"
if [ "$left" -gt 30 ]; then
    (cd "$B" && timeout "$left" ctest -L gpu -E "gpu_kernels" -j 1 --timeout 120 --output-on-failure >"$R/gpu-tests.log" 2>&1)
    echo "ctest rc=$?" | tee -a "$R/steps.txt"
    grep -E "tests passed|Failed|Skipped|Timeout|Not Run" "$R/gpu-tests.log" | tail -40 >>"$R/steps.txt"
fi
step "done"
pack
