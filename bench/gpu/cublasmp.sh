#!/usr/bin/env bash
# cuBLASMp side by side (a benchmark, not a test): NVIDIA's distributed GEMM,
# cublasMpGemm, and dgemm-dist's dd_gemm_device on the same GPUs in one call,
# device data, FP64 and FP32 (cublasmp-bench, bench/cublasmp/cublasmp_bench.c).
#   bash bench/gpu/cublasmp.sh [BUILD_DIR]      (default build)
#   ONLY=build bash bench/gpu/cublasmp.sh ...    (stop after the build: on a
#   fresh host the kernels' build and the runs may not fit one call)
# Needs .gpu/cublasmp/cublasmp-0.7.tar.xz in the working tree: the wheels
# nvidia-cublasmp-cu13 0.7 and nvidia-nvshmem-cu13 3.3 (PyPI), libraries and
# headers repacked (a baseline, never a dependency; git-ignored, carried to
# the GPU host).  cuBLASMp 0.7 runs on NCCL 2.28 with CUBLASMP_DISABLE_NVSHMEM=1.
# Steps: unpack; configure BUILD_DIR with -DDD_CUBLASMP_DIR and build
# cublasmp-bench (and what it links); correctness first (small and odd
# shapes, one block per rank and 256x256 block-cyclic, both types; a wrong
# result stops the script); then on G = 1 .. $GPUS GPUs (default 1) the
# sizes $SIZES (default 16384,32768) for FP64 and FP32 with dgemm-dist's
# default kernels, and FP64 with ozaki2-14 ($OZAKI=0 skips it); $WEAK=1 adds
# weak scaling (sizes × G^(1/3)); $MPARGS is added to every timed run (e.g.
# "--mb 1024 --nb 1024": cuBLASMp's blocks; by default M/P, N/Q and
# K/lcm(P,Q), one per rank where P = Q).  Records: $OUT/cublasmp.jsonl (one per
# type, size and GPU count), $OUT/cublasmp.log, $OUT/cublasmp.md (the table
# with the ratios).
# shellcheck disable=SC2086  # $MPARGS: words, on purpose
set -uo pipefail
B=${1:-build}
OUT="${OUT:-$PWD/out}"
SIZES=${SIZES:-16384,32768}
GPUS=${GPUS:-1}
REPS=${REPS:-5}
OZAKI=${OZAKI:-1}
WEAK=${WEAK:-0}
MPARGS=${MPARGS:-}
TAR=.gpu/cublasmp/cublasmp-0.7.tar.xz
MPDIR=${DD_CUBLASMP_UNPACK:-/tmp/dd-cublasmp}
mkdir -p "$OUT"
export CUBLASMP_DISABLE_NVSHMEM=1 NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 \
    OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
log() { echo "== $(date +%T) $*" | tee -a "$OUT/cublasmp.log"; }
# run LIMIT command...: under a time limit, output to the terminal and the log
run() {
    local limit=$1
    shift
    log "$*"
    timeout "$limit" "$@" 2>&1 | tee -a "$OUT/cublasmp.log"
    local r=${PIPESTATUS[0]}
    [ "$r" = 0 ] || log "exit $r: $*"
    return "$r"
}

[ -f "$TAR" ] || { log "no $TAR in the working tree (carry .gpu/cublasmp)"; exit 2; }
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
[ "$ngpu" -ge 1 ] || { log "skipped: no GPU"; exit 77; }
[ "$GPUS" -le "$ngpu" ] || { log "GPUS=$GPUS but $ngpu GPU(s) here"; exit 2; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv |
    tee -a "$OUT/cublasmp.log"

log "unpack $TAR into $MPDIR"
rm -rf "$MPDIR" && mkdir -p "$MPDIR" || exit 1
# without xz(1), Python's tarfile (lzma) unpacks it
tar -C "$MPDIR" -xJf "$TAR" 2>/dev/null ||
    python3 -c 'import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])' "$TAR" "$MPDIR" ||
    { log "cannot unpack $TAR"; exit 1; }
tee -a "$OUT/cublasmp.log" <"$MPDIR/VERSIONS"
run 120 cmake -S . -B "$B" -DDD_CUBLASMP_DIR="$MPDIR/nvidia/cublasmp/cu13" >/dev/null ||
    { tail -30 "$OUT/cublasmp.log"; exit 1; }
run 540 cmake --build "$B" -j "$(nproc)" --target cublasmp-bench >/dev/null ||
    { tail -30 "$OUT/cublasmp.log"; exit 1; }
bench="$B/bench/cublasmp-bench"
ldd "$bench" | grep -E 'cublasmp|nvshmem|nccl|cublas' | tee -a "$OUT/cublasmp.log"
[ "${ONLY:-}" = build ] && { log "built $bench (ONLY=build)"; exit 0; }

rc=0
for g in $(seq 1 "$GPUS"); do
    dev=$(seq -s, 0 $((g - 1)))
    mpi=(mpirun -n "$g" --bind-to none -x CUBLASMP_DISABLE_NVSHMEM -x NCCL_NVLS_ENABLE)
    log "correctness on $g GPU(s)"
    CUDA_VISIBLE_DEVICES=$dev run 300 "${mpi[@]}" "$bench" --sizes 1024,1000x1200x900 \
        --types f64,f32 --reps 1 || { log "check FAILED: no measurement"; exit 1; }
    CUDA_VISIBLE_DEVICES=$dev run 300 "${mpi[@]}" "$bench" --sizes 2048,1500x1300x1100 \
        --types f64,f32 --reps 1 --mb 256 --nb 256 || { log "check FAILED: no measurement"; exit 1; }

    log "measurement on $g GPU(s): $SIZES, FP64 and FP32, default kernels"
    CUDA_VISIBLE_DEVICES=$dev run 590 "${mpi[@]}" "$bench" --sizes "$SIZES" --types f64,f32 \
        --reps "$REPS" --json "$OUT/cublasmp.jsonl" $MPARGS || rc=1
    if [ "$OZAKI" = 1 ]; then
        log "measurement on $g GPU(s): $SIZES, FP64, dgemm-dist with ozaki2-14"
        CUDA_VISIBLE_DEVICES=$dev run 590 "${mpi[@]}" "$bench" --sizes "$SIZES" --types f64 \
            --kernel-f64 ozaki2-14 --reps "$REPS" --json "$OUT/cublasmp.jsonl" $MPARGS || rc=1
    fi
    if [ "$WEAK" = 1 ] && [ "$g" -gt 1 ]; then
        log "weak scaling on $g GPU(s): $SIZES × $g^(1/3)"
        CUDA_VISIBLE_DEVICES=$dev run 590 "${mpi[@]}" "$bench" --sizes "$SIZES" --types f64,f32 \
            --weak --reps "$REPS" --json "$OUT/cublasmp.jsonl" $MPARGS || rc=1
    fi
done

python3 - "$OUT/cublasmp.jsonl" <<'EOF' | tee "$OUT/cublasmp.md"
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("| GPUs | grid | scaling | type | n | dgemm-dist kernel | dgemm-dist TFLOP/s | cuBLASMp TFLOP/s | ratio (target >= 1.05) |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for r in rows:
    print(f"| {r['gpus']} | {r['P']}x{r['Q']} | {r['scaling']} | {r['dtype']} | {r['n']} | "
          f"{r['dd_kernel']} | {r['dd_tflops']:.1f} | {r['mp_tflops']:.1f} | {r['ratio']:.3f} |")
if rows:
    print(f"\n{rows[0]['gpu']}; {rows[0]['versions']}; medians of {rows[0]['reps']}, "
          "device data, each side checked first")
EOF
exit $rc
