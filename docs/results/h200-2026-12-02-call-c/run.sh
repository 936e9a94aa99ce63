#!/usr/bin/env bash
# One GPU call (nvidia-h200, one H200): build the tree, then file to file
# with the host copies beside each band's multiply (bench/gpu/pipeline.sh),
# complex runs of dgemm-dist on the GPU (c128 and c64, n = 8192 and 16384,
# checked, against the real FP64 run of the same call), and ctest -L gpu
# with the time left.  Carried: .gpu/scalapack.   OUT=dir bash run.sh
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
pack
step "pipeline.sh"
OUT=$R/pipeline DD_RING_MIB=256 timeout 150 bash bench/gpu/pipeline.sh "$B" 32768 >"$R/pipeline.out" 2>&1
echo "pipeline rc=$?" | tee -a "$R/steps.txt"
gpu; pack
step "dgemm-dist complex and real on the GPU"
for n in 8192 16384; do
    for t in f64 c128 c64; do
        timeout 60 mpirun -n 1 --bind-to none "$B/dgemm-dist" --size $n,$n,$n --dtype $t --repeat 3 --warmup 1 \
            --json "$R/complex-runs.jsonl" >>"$R/complex-runs.txt" 2>&1
        echo "dgemm-dist $t $n rc=$?" | tee -a "$R/steps.txt"
    done
done
grep -E "rate|PASSED|FAILED|kernel " "$R/complex-runs.txt" >>"$R/steps.txt"
gpu; pack
left=$((420 - SECONDS))
step "ctest -L gpu, ${left} s left"
if [ "$left" -gt 30 ]; then
    (cd "$B" && timeout "$left" ctest -L gpu -j 1 --timeout 120 --output-on-failure >"$R/gpu-tests.log" 2>&1)
    echo "ctest rc=$?" | tee -a "$R/steps.txt"
    grep -E "tests passed|Failed|Timeout|Not Run" "$R/gpu-tests.log" | tail -30 >>"$R/steps.txt"
fi
step "done"
pack
