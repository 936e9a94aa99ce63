# call.sh — sourced by a GPU call's script (docs/results/*/run*.sh):
#   OUT=dir; . bench/gpu/call.sh
# Sets R=$OUT/r (the records; packed into $OUT/results.tgz by `pack`, so a
# call cut short still brings back what it wrote), the environment every
# run needs (NCCL_NVLS_ENABLE=0, mpirun as root, CUDA on PATH), B (the build
# directory, .gpubuild/b) and:
#   step TEXT      a line in $R/steps.txt, with the clock and seconds since start
#   gpu            one line of clocks, power and throttle reasons in $R/gpu.csv
#   build [TARGETS]  configure (Ninja, sm_90, Release) and build under 240 s
#   pack           the records so far into $OUT/results.tgz
set -uo pipefail
: "${OUT:?set OUT to the output folder of the call}"
R=$OUT/r
mkdir -p "$R"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=/usr/local/cuda/bin:$PATH OPENBLAS_NUM_THREADS=4
B=$PWD/.gpubuild/b
pack() { tar -czf "$OUT/results.tgz" -C "$R" . 2>/dev/null; }
step() { echo "== $(date +%T) +$SECONDS s: $*" | tee -a "$R/steps.txt"; }
gpu() {
    nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active \
        --format=csv,noheader >>"$R/gpu.csv"
}
build() {
    step "configure and build ${*:-all}"
    cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$R/build.log" 2>&1 &&
        timeout 240 cmake --build "$B" -j 16 ${1:+--target "$@"} >>"$R/build.log" 2>&1
    local r=$?
    echo "build rc=$r" | tee -a "$R/steps.txt"
    tail -3 "$R/build.log" >>"$R/steps.txt"
    pack
    return $r
}
gpu
