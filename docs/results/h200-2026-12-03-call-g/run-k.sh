#!/usr/bin/env bash
# The fifth GPU call of this folder (nvidia-h200, one H200): file to file
# with the emulated kernels after the bands kept B's slices
# (summa_rows_slices).
#   OUT=dir bash run-k.sh
# 1. build; 2. the sliced-panel GPU tests (tests/cli/ozaki2_slices.sh on
#    the GPU: ranks sharing it, and its one-rank section: the bands from
#    kept slices bit for bit the FP64 panels'); 3. file to file at n =
#    32768 (16 GiB of input from `dgemm-dist gen`, page-cached), each under
#    /usr/bin/time: ozaki2-14 with the kept slices (auto), ozaki2-14 with
#    DD_OZAKI2_PANELS=fp64 (the bands as before), ozaki2, and the native
#    default; then ozaki2-14 and the default once more.
set -uo pipefail
R=$OUT/r
mkdir -p "$R"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=/usr/local/cuda/bin:$PATH OPENBLAS_NUM_THREADS=4
pack() { tar -czf "$OUT/results.tgz" -C "$R" . 2>/dev/null; }
step() { echo "== $(date +%T) +$SECONDS s: $*" | tee -a "$R/steps.txt"; }
gpu() { nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,power.draw,power.limit,temperature.gpu,clocks_event_reasons.active --format=csv,noheader >>"$R/gpu.csv"; }
gpu
B=$PWD/.gpubuild/b
step "configure and build"
cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 >"$R/build.log" 2>&1 &&
    timeout 240 cmake --build "$B" -j 16 >>"$R/build.log" 2>&1
echo "build rc=$?" | tee -a "$R/steps.txt"
tail -3 "$R/build.log" >>"$R/steps.txt"
pack
step "sliced-panel GPU tests"
(cd "$B" && timeout 200 ctest -R "gpu_1gpu_ozaki2_sliced|gpu_1gpu_ozaki2_f64" -j 1 --timeout 150 \
    --output-on-failure >"$R/tests.log" 2>&1)
echo "tests rc=$?" | tee -a "$R/steps.txt"
grep -E "^ok|FAIL|Test +#|tests passed" "$R/tests.log" >>"$R/steps.txt"
gpu; pack
step "file to file, n = 32768"
F=$R/file; mkdir -p "$F"; W=/tmp/dd-k; mkdir -p "$W"
timeout 120 mpirun -n 8 --oversubscribe --bind-to none "$B/dgemm-dist" gen --out "$W/m.h5" -m 32768 -n 32768 -k 32768 --quiet --force
echo "gen rc=$?" | tee -a "$R/steps.txt"
cat "$W/m.h5" >/dev/null
i=0
for spec in "ozaki2-14 auto" "ozaki2-14 fp64" "ozaki2 auto" "default auto" "ozaki2-14 auto" "default auto"; do
    set -- $spec
    i=$((i + 1))
    kern=$([ "$1" = default ] && echo "" || echo "--kernel $1")
    DD_OZAKI2_PANELS=$2 /usr/bin/time -f "%e" -o "$F/wall-$i" timeout 100 mpirun -n 1 --bind-to none -x DD_OZAKI2_PANELS \
        "$B/dgemm-dist" --in "$W/m.h5" --out "$W/c.h5" --force $kern --json "$F/run.jsonl" >"$F/$i-$1-$2.out" 2>&1
    echo "file $1 $2 rc=$? wall $(cat "$F/wall-$i") $(grep -E '^rate|PASSED|FAILED|^(setup|read|multiply|write) |note' "$F/$i-$1-$2.out" | tr -s ' ' | tr '\n' ' ')" | tee -a "$R/steps.txt"
done
rm -f "$W/m.h5" "$W/c.h5"
gpu; pack
