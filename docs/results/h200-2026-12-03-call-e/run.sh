#!/usr/bin/env bash
# One GPU call (nvidia-h200, one H200): file to file with the band slots in
# pinned memory.  Carried: .gpu/scalapack (Debian 12's libscalapack-openmpi)
# and .gpu/cublasmp (the cuBLASMp 0.7 wheels' libraries, bench/gpu/cublasmp.sh).
#   OUT=dir bash run.sh   build; the pipeline's GPU tests and test-pipe;
#       bench/gpu/pipeline.sh at n = 32768 (pinned, twice; plain slots;
#       phased; the h5py + PyTorch script); bench/gpu/cublasmp.sh (FP64 and
#       FP32, 16384 and 32768, no ozaki2); ctest -L gpu with the time left
#   OUT=dir STAGE=2 bash run.sh   the same without cublasmp.sh and with
#       ctest -L gpu limited to 200 s (the second call's tree: smaller
#       pinned slots, allocated during op(B)'s read)
#   OUT=dir STAGE=3 bash run.sh   build; the pipeline tests; pipeline.sh with PIPE_RUNS=4 (the
#       hidden reads counted against the main thread's waits for reads only)
#   OUT=dir STAGE=4 bash run.sh   build; pipeline.sh (PIPE_RUNS=3) with the
#       stream ring at its default (DD_RING_MIB unset: 64) and at 256, as the
#       other stages ran it (op(B)'s read and the ring's pinning in setup)
STAGE=${STAGE:-1}
if [ "$STAGE" = 4 ]; then
    R=$OUT/r; mkdir -p "$R"
    export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 PATH=/usr/local/cuda/bin:$PATH
    B=$PWD/.gpubuild/b
    nvidia-smi --query-gpu=name,clocks.sm,power.draw,power.limit --format=csv,noheader >>"$R/gpu.csv"
    cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$R/build.log" 2>&1 &&
        timeout 240 cmake --build "$B" -j 16 --target dgemm-dist >>"$R/build.log" 2>&1
    echo "build rc=$?" | tee -a "$R/steps.txt"
    for ring in 64 256; do
        echo "== $(date +%T) pipeline.sh DD_RING_MIB=$ring" | tee -a "$R/steps.txt"
        OUT=$R/ring$ring DD_RING_MIB=$ring PIPE_RUNS=3 timeout 200 bash bench/gpu/pipeline.sh "$B" 32768 >"$R/ring$ring.out" 2>&1
        echo "pipeline rc=$?" | tee -a "$R/steps.txt"
    done
    nvidia-smi --query-gpu=name,clocks.sm,power.draw,power.limit --format=csv,noheader >>"$R/gpu.csv"
    tar -czf "$OUT/results.tgz" -C "$R" .
    exit 0
fi
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
    timeout 240 cmake --build "$B" -j 16 >>"$R/build.log" 2>&1
echo "build rc=$?" | tee -a "$R/steps.txt"
tail -3 "$R/build.log" >>"$R/steps.txt"
pack
step "the pipeline's GPU tests, test-pipe cuda"
(cd "$B" && timeout 150 ctest -R "gpu_1gpu_pipeline|gpu_1gpu_2ranks_pipeline|gpu_1gpu_1x1" \
    -j 1 --timeout 100 --output-on-failure >"$R/pipe-tests.log" 2>&1)
echo "pipeline tests rc=$?" | tee -a "$R/steps.txt"
grep -E "tests passed|Failed|Timeout|Skipped" "$R/pipe-tests.log" >>"$R/steps.txt"
timeout 60 mpirun -n 1 --bind-to none "$B/tests/api/test-pipe" cuda >"$R/test-pipe.log" 2>&1
echo "test-pipe cuda rc=$?" | tee -a "$R/steps.txt"
gpu; pack
step "pipeline.sh n=32768"
[ "$STAGE" = 3 ] && export PIPE_RUNS=4
OUT=$R/pipeline DD_RING_MIB=256 timeout 260 bash bench/gpu/pipeline.sh "$B" 32768 >"$R/pipeline.out" 2>&1
echo "pipeline rc=$?" | tee -a "$R/steps.txt"
gpu; pack
[ "$STAGE" = 3 ] && { pack; exit 0; }
[ "$STAGE" = 1 ] && step "cublasmp.sh FP64 FP32 16384 32768" && OUT=$R/cublasmp SIZES=16384,32768 REPS=3 OZAKI=0 timeout 170 bash bench/gpu/cublasmp.sh "$B" >"$R/cublasmp.out" 2>&1
echo "cublasmp rc=$?" | tee -a "$R/steps.txt"
gpu; pack
left=$((570 - SECONDS))
[ "$STAGE" = 2 ] && left=$((left < 200 ? left : 200))
step "ctest -L gpu, ${left} s left"
[ "$left" -gt 30 ] && (cd "$B" && timeout "$left" ctest -L gpu -E "gpu_2gpu|gpu_1gpu_pipeline|gpu_1gpu_2ranks_pipeline|gpu_1gpu_1x1" -j 1 --timeout 150 --output-on-failure >"$R/gpu-tests.log" 2>&1)
echo "ctest rc=$?" | tee -a "$R/steps.txt"
grep -E "tests passed|Failed|Skipped|Timeout|Not Run" "$R/gpu-tests.log" | tail -40 >>"$R/steps.txt"
gpu; pack
