#!/usr/bin/env bash
# One GPU call (nvidia-h200, one H200) after the copy workers (16 threads,
# kept between calls) and dd_gemm_device's in-place blocks: build the tree,
# then the drop-in on host data against cuBLASXt (bench/gpu/hostdata.sh,
# its GPU tests first), cuBLASMp side by side (bench/gpu/cublasmp.sh), file
# to file as one pipeline (bench/gpu/pipeline.sh), the write against its
# yardsticks (bench/io/write_bench.sh), each under its own limit.
# Carried: .gpu/cublasmp (cuBLASMp 0.7's libraries), .gpu/scalapack
# (Debian 12's libscalapack-openmpi).   OUT=dir bash run.sh
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
export DD_SCALAPACK_DIR=$SL
MP=/tmp/dd-cublasmp
rm -rf "$MP" && mkdir -p "$MP" && tar -C "$MP" -xJf .gpu/cublasmp/cublasmp-0.7.tar.xz
B=$PWD/.gpubuild/b
step "configure and build (all targets)"
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_LIBRARY_PATH="$SL" -DDD_CUBLASMP_DIR="$MP/nvidia/cublasmp/cu13" >"$R/build.log" 2>&1 &&
    timeout 200 cmake --build "$B" -j 16 >>"$R/build.log" 2>&1
echo "build rc=$?" | tee -a "$R/steps.txt"
tail -3 "$R/build.log" >>"$R/steps.txt"
pack
step "hostdata.sh"
OUT=$R/hostdata XT_BLOCKS="4096 8192" timeout 200 bash bench/gpu/hostdata.sh "$B" >"$R/hostdata.out" 2>&1
echo "hostdata rc=$?" | tee -a "$R/steps.txt"
gpu; pack
step "cublasmp.sh"
OUT=$R/cublasmp SIZES=16384,32768 REPS=5 DD_CUBLASMP_UNPACK=$MP timeout 120 bash bench/gpu/cublasmp.sh "$B" >"$R/cublasmp.out" 2>&1
echo "cublasmp rc=$?" | tee -a "$R/steps.txt"
gpu; pack
step "pipeline.sh"
OUT=$R/pipeline DD_RING_MIB=256 timeout 150 bash bench/gpu/pipeline.sh "$B" 32768 >"$R/pipeline.out" 2>&1
echo "pipeline rc=$?" | tee -a "$R/steps.txt"
gpu; pack
left=$((570 - SECONDS))
step "write_bench.sh 4 GiB, ${left} s left"
[ "$left" -gt 30 ] && OUT=$R/write timeout "$left" bash bench/io/write_bench.sh "$B" 4 /tmp 1 3 >"$R/write.out" 2>&1
echo "write rc=$?" | tee -a "$R/steps.txt"
step "done"
pack
