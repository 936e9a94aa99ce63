#!/usr/bin/env bash
# Everything a GPU host runs in one go: build, GPU tests, kernel bench,
# dgemm-dist benchmarks (1 and 2 GPUs), cuBLASXt, and a summary table.
#   bench/gpu/run.sh [stages...]    stages: build test kbench dbench whole ops scale model
#                                   sustain ce ozaki i8 api panels ncu
#                                   (default: build test kbench dbench; scale
#                                   is for machines of 4 or 8 GPUs)
# Writes to $OUT (default ./out): build.log tests.log gemm-bench.{txt,jsonl}
# runs.jsonl bench.log cublasxt.jsonl summary.md; sustain: sustain.{txt,jsonl};
# ce: ce.{txt,jsonl}; ozaki: ozaki.{txt,jsonl}, ozaki-tests.log; i8: i8/
# Environment: DD_N (benchmark size, default 16384), DD_REPEAT (default 5),
# DD_KBENCH_ARGS (extra gemm-bench arguments).
set -uo pipefail
cd "$(dirname "$0")/../.."
OUT="${OUT:-$PWD/out}"
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
B="${DD_BUILD:-/tmp/dd-build}"
stages="${*:-build test kbench dbench}"
N="${DD_N:-16384}"
REP="${DD_REPEAT:-5}"
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
has() { [[ " $stages " == *" $1 "* ]]; }
log() { echo "== $(date +%T) $*" | tee -a "$OUT/bench.log"; }
# dd TAG GPUS RANKS args...: one dgemm-dist run on the first GPUS GPUs, its record
# appended to runs.jsonl (or $DD_JSON) and its report to bench.log; skipped with
# fewer GPUs.
dd() {
    local tag=$1 g=$2 r=$3
    shift 3
    [ "$ngpu" -ge "$g" ] || { log "skip $tag: needs $g GPUs"; return; }
    log "$tag: mpirun -n $r dgemm-dist $*"
    CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((g - 1))) \
        mpirun -n "$r" --bind-to none "$B/dgemm-dist" "$@" --json "${DD_JSON:-$OUT/runs.jsonl}" \
        >>"$OUT/bench.log" 2>&1 || log "FAILED: $tag"
}

log "host $(hostname), $ngpu GPU(s): $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | head -1)"
if has build; then
    log "build"
    { cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 &&
      cmake --build "$B" -j "$(nproc)"; } >"$OUT/build.log" 2>&1 || { tail -40 "$OUT/build.log"; exit 1; }
    grep -E "DD_|dgemm-dist:|HDF5:" "$OUT/build.log" | head -5
fi
if has test; then
    log "GPU tests"
    (cd "$B" && ctest -L gpu --output-on-failure -j 1) >"$OUT/tests.log" 2>&1
    # the staged MPI path in several pieces per panel (test panels are small
    # enough to go in one piece by default)
    (cd "$B" && DD_MPI_STAGE_PIECES=3 ctest -L gpu -R _mpi_ --output-on-failure -j 1) >>"$OUT/tests.log" 2>&1
    grep -E "tests passed|tests failed|\*\*\*Failed" "$OUT/tests.log"
fi
if has kbench; then
    log "gemm-bench"
    # production kernels and the ladder's tensor-core and warp-tiled rungs
    # at the sizes of the design target (docs/design.md: n = 4096, 8192,
    # 16384) and at the SUMMA panel shapes (the whole ladder:
    # kernels/README.md; its table: kernels/ladder_table.py on these records)
    "$B/bench/gemm-bench" --kernels dgemm_dmma,08_dmma,sgemm_dmma,sgemm_simt,07_warptile \
        --sizes 4096,8192,16384,8192x8192x1024,16384x16384x1024,16384x16384x2048,16384x16384x4096 \
        --json "$OUT/gemm-bench.jsonl" ${DD_KBENCH_ARGS:-} 2>&1 | tee "$OUT/gemm-bench.txt"
fi
if has dbench; then
    common=(--repeat "$REP" --warmup 1 --check)
    if [ -n "${DD_PANEL_SWEEP:-}" ]; then
        for nb in $DD_PANEL_SWEEP; do
            dd "panel_$nb" 1 1 --size "$N" --panel "$nb" "${common[@]}"
            dd "panel_${nb}_2gpu" 2 2 --size "$N" --grid 1x2 --panel "$nb" "${common[@]}"
        done
    fi
    dd one_gpu_own        1 1 --size "$N" "${common[@]}"
    dd one_gpu_cublas     1 1 --size "$N" --kernel cublas "${common[@]}"
    dd strong_2gpu_nccl   2 2 --size "$N" --grid 1x2 --comm nccl --host-to-host "${common[@]}"
    dd weak_2gpu_nccl     2 2 --size "$N,$((2 * N)),$N" --grid 1x2 --comm nccl "${common[@]}"
    dd strong_2gpu_mpi    2 2 --size "$N" --grid 1x2 --comm mpi "${common[@]}"
    DD_MPI_STAGE_PIECES=1 \
    dd strong_2gpu_mpi_1piece 2 2 --size "$N" --grid 1x2 --comm mpi "${common[@]}"
    dd one_gpu_own_f32    1 1 --size "$N" --dtype f32 "${common[@]}"
    dd strong_2gpu_f32    2 2 --size "$N" --dtype f32 --grid 1x2 "${common[@]}"
    if [ -x "$B/bench/cublasxt-bench" ] && [ "$ngpu" -ge 2 ]; then
        # the baseline gets its best block size, not just its default
        for blk in 2048 4096 8192; do
            log "cublasxt-bench n=$N on 2 GPUs, block $blk"
            CUDA_VISIBLE_DEVICES=0,1 "$B/bench/cublasxt-bench" --n "$N" --gpus 2 --reps 3 --block "$blk" \
                --json "$OUT/cublasxt.jsonl" 2>&1 | tee -a "$OUT/bench.log"
        done
    fi
    if [ -x "$B/bench/gemm-bench" ] && ! grep -q '"cublas"' "$OUT/gemm-bench.jsonl" 2>/dev/null; then
        log "bare cuBLAS at n=$N for the 1-GPU ratio"
        "$B/bench/gemm-bench" --kernels cublas --sizes "$N" --types f64,f32 \
            --json "$OUT/gemm-bench.jsonl" 2>&1 | tee -a "$OUT/gemm-bench.txt"
    fi
    python3 bench/gpu/summarize.py "$OUT" | tee "$OUT/summary.md"
fi
if has panels; then
    # panel width per comm backend, checked at full size: FP64 --size n, 1 GPU,
    # 2 GPUs on the copy engines and on NCCL (records to panels.jsonl)
    for n in ${DD_PANELS_N:-16384 32768}; do
        for nb in 2048 4096 8192; do
            DD_JSON="$OUT/panels.jsonl" dd "p${nb}_n${n}_1gpu" 1 1 --size "$n" --panel "$nb" \
                --repeat 3 --warmup 1 --check
            DD_JSON="$OUT/panels.jsonl" dd "p${nb}_n${n}_ce" 2 2 --size "$n" --panel "$nb" \
                --comm ce --repeat 3 --warmup 1 --check
            DD_JSON="$OUT/panels.jsonl" dd "p${nb}_n${n}_nccl" 2 2 --size "$n" --panel "$nb" \
                --comm nccl --repeat 3 --warmup 1 --check
        done
    done
    python3 bench/gpu/panels.py "$OUT/panels.jsonl" | tee "$OUT/panels.md"
fi
if has ncu; then
    # what limits the FP64 kernel: Nsight Compute on dgemm_dmma and cuBLAS
    # DGEMM, whole square and a SUMMA panel shape (beta 1), one launch each
    for shape in 16384 16384x8192x4096; do
        log "ncu $shape"
        bash bench/gpu/ncu_kernel.sh "$B/bench/gemm-bench" "$OUT" f64 "$shape" \
            dgemm_dmma cublas 2>&1 | tee -a "$OUT/bench.log"
    done
fi
if has whole; then
    # the whole run file to file against dd and an h5py + PyTorch script
    bash bench/gpu/wholerun.sh "$B" "${DD_WHOLE_N:-32768}"
fi
if has ops; then
    # the four op(A)·op(B) combinations from files, 1 and 2 GPUs
    bash bench/gpu/gemm_ops_bench.sh "$B" "${DD_OPS_N:-16384}"
fi
if has api; then
    # Issue 15: the library's device entries on GPU memory, the drop-in's
    # oracle tests on the CUDA backend, and pdgemm_ with host data (the
    # drop-in) against cuBLASXt with host data.  ScaLAPACK may be absent
    # on a GPU host: DD_SCALAPACK_DIR names a directory holding
    # libscalapack-openmpi.so (the oracle and the bench need its BLACS);
    # built apart so that a missing one costs only this stage.  ~2 min.
    BA="$B-api"
    SL="${DD_SCALAPACK_DIR:-}"
    log "api: build with ScaLAPACK from ${SL:-the system}"
    { cmake -S . -B "$BA" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
        ${SL:+-DCMAKE_LIBRARY_PATH=$SL} &&
      cmake --build "$BA" -j "$(nproc)" --target test-api test-plan test-api-device test-pdgemm \
        pdgemm-bench cublasxt-bench; } >"$OUT/api-build.log" 2>&1 || tail -20 "$OUT/api-build.log"
    export LD_LIBRARY_PATH="${SL:+$SL:}${LD_LIBRARY_PATH:-}"
    (cd "$BA" && ctest -L "api|scalapack" -E "install|relink|example" --output-on-failure -j 1) >"$OUT/api-tests.log" 2>&1
    grep -E "tests passed|tests failed|\*\*\*Failed|Not Run" "$OUT/api-tests.log"
    n="${DD_API_N:-16384}"
    for g in 1 2; do
        [ "$ngpu" -ge "$g" ] || continue
        log "pdgemm_ drop-in, host data, $g GPU(s), n = $n"
        CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((g - 1))) DD_SCALAPACK_BACKEND=cuda DD_API_TIMING=1 \
            mpirun -n "$g" --bind-to none "$BA/bench/pdgemm-bench" --n "$n" --nb 1024 --which dd --reps 3 \
            --json "$OUT/api-bench.jsonl" 2>&1 | tee -a "$OUT/api-bench.txt"
        log "cuBLASXt, host data, $g GPU(s), n = $n"
        for blk in "" 8192; do # its default tile, and its best measured here
            CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((g - 1))) "$BA/bench/cublasxt-bench" --n "$n" --gpus "$g" \
                --reps 3 ${blk:+--block $blk} --json "$OUT/api-bench.jsonl" 2>&1 | tee -a "$OUT/api-bench.txt"
        done
    done
fi
if has model; then
    # the performance model against runs on 1 and 2 GPUs (NVLink, NCCL on
    # sockets, staged MPI) after its calibration bench: model-check-gpu.md
    bash bench/gpu/model_check.sh gpu "$B"
fi
if has scale; then
    # Issue 7's runs, on machines of 4 or 8 GPUs (each skipped where fewer
    # GPUs exist): the n=32768 headline, strong scaling at 32768 on 1-8 GPUs,
    # weak scaling at 16384^2 per GPU on grids 1x1, 1x2, 2x2, 2x4, and the 2x2
    # grid with both comm backends.  Records in runs.jsonl; feed them to
    # jobs/aggregate for the CSV and plots.
    S=32768
    common=(--repeat "$REP" --warmup 1)
    dd headline_8gpu      8 8 --size "$S" --grid 2x4 --check "${common[@]}"
    for g in 1 2 4 8; do
        case $g in 1) grid=1x1 ;; 2) grid=1x2 ;; 4) grid=2x2 ;; 8) grid=2x4 ;; esac
        P=${grid%x*} Q=${grid#*x}
        dd "strong_${g}gpu"  "$g" "$g" --size "$S" --grid "$grid" "${common[@]}"
        dd "weak_${g}gpu"    "$g" "$g" --size "$((16384 * P)),$((16384 * Q)),16384" --grid "$grid" "${common[@]}"
    done
    dd grid2x2_nccl       4 4 --size "$S" --grid 2x2 --comm nccl --check "${common[@]}"
    dd grid2x2_mpi        4 4 --size "$S" --grid 2x2 --comm mpi --check "${common[@]}"
fi
if has sustain; then
    # Power is the wall: own kernels against cuBLAS burst (L2 flushed, a cool
    # GPU) and sustained (12 s back to back each, the last half's median,
    # SM clock and power), FP64 at 4096 and 16384, FP32 at 8192 (~80 s)
    log "gemm-bench sustained"
    "$B/bench/gemm-bench" --kernels dgemm_dmma,08_dmma --types f64 --sizes 4096,16384 --sustain 12 \
        --json "$OUT/sustain.jsonl" 2>&1 | tee "$OUT/sustain.txt"
    "$B/bench/gemm-bench" --kernels sgemm_dmma,sgemm_simt,07_warptile --types f32 --sizes 8192 --sustain 12 \
        --json "$OUT/sustain.jsonl" 2>&1 | tee -a "$OUT/sustain.txt"
fi
if has ce; then
    # Copy engines against NCCL on 2 GPUs (1x2 grid), with the 1-GPU rate of
    # the same call: what the NCCL broadcast kernels take from the multiply
    # (~70 s of device time on 2 H200s)
    for n in 16384 32768; do
        rep=5
        [ "$n" -gt 16384 ] && rep=3
        common=(--size "$n" --repeat "$rep" --warmup 1 --check)
        DD_JSON="$OUT/ce.jsonl" dd "ce_1gpu_$n"    1 1 "${common[@]}"
        DD_JSON="$OUT/ce.jsonl" dd "ce_nccl_$n"    2 2 --grid 1x2 --comm nccl "${common[@]}"
        DD_JSON="$OUT/ce.jsonl" dd "ce_ce_$n"      2 2 --grid 1x2 --comm ce "${common[@]}"
    done
    python3 bench/gpu/ce_table.py "$OUT/ce.jsonl" | tee "$OUT/ce.txt"
fi
if has i8; then
    # Issue 18: the own INT8 GEMM against cuBLAS INT8 (exact check, then
    # rows), ozaki2 on it and on cuBLAS's INT8 beside native DGEMM.
    log "i8 (own INT8 GEMM)"
    bash bench/gpu/i8_stage.sh "$B/bench/gemm-bench" "$OUT/i8" >/dev/null 2>&1 || log "FAILED: i8"
    grep -vE "^#|^kernel " "$OUT/i8/i8.txt" | cut -c1-140
fi
if has ozaki; then
    # Issue 18: ozaki2 (Ozaki scheme II, FP64 on INT8 tensor cores) against
    # native cuBLAS DGEMM and cuBLAS's own emulation (EAGER), accuracy vs a
    # double-double reference on sampled entries, four input classes; its
    # GPU tests; gemm-bench rows (check vs cuBLAS, telemetry).  ~2-3 min.
    log "ozaki GPU tests"
    (cd "$B" && ctest -L gpu -R ozaki --output-on-failure -j 1) >"$OUT/ozaki-tests.log" 2>&1
    grep -E "tests passed|tests failed|\*\*\*Failed" "$OUT/ozaki-tests.log"
    log "ozaki-bench"
    "$B/bench/ozaki-bench" --kernels ozaki2,ozaki2-14,ozaki2-16,emu_cublas --sizes 4096,8192 --reps 3 \
        --classes uniform,rowcol30,elem30,blocks --json "$OUT/ozaki.jsonl" 2>&1 | tee "$OUT/ozaki.txt"
    "$B/bench/ozaki-bench" --kernels ozaki2,ozaki2-14,ozaki2-16,emu_cublas --sizes 16384,8192x8192x2048 \
        --reps 3 --classes uniform,rowcol30 --json "$OUT/ozaki.jsonl" 2>&1 | tail -n +3 | tee -a "$OUT/ozaki.txt"
    "$B/bench/gemm-bench" --kernels ozaki2,emu_cublas --types f64 --reps 3 \
        --sizes 4096,8192,16384,8192x8192x2048 --json "$OUT/ozaki.jsonl" 2>&1 | tee -a "$OUT/ozaki.txt"
    # the distributed multiply on 1 and 2 GPUs, native against ozaki2 (wide
    # panels: each panel's INT8 products are GEMMs of depth --panel)
    for g in 1 2; do
        DD_JSON="$OUT/ozaki-dist.jsonl" dd "native_${g}gpu_32768" "$g" "$g" --size 32768 --repeat 3 --warmup 1
        for nb in 2048 8192; do
            DD_JSON="$OUT/ozaki-dist.jsonl" dd "ozaki2_${g}gpu_32768_p$nb" "$g" "$g" --size 32768 \
                --kernel ozaki2 --panel "$nb" --repeat 3 --warmup 1
        done
    done
    python3 - "$OUT/ozaki-dist.jsonl" <<'PY' | tee -a "$OUT/ozaki.txt"
import json, sys
print("%-8s %5s %6s %9s %10s %8s  %s" % ("kernel", "GPUs", "panel", "time s", "TF/GPU", "exposed", "check"))
for l in open(sys.argv[1]):
    r = json.loads(l)
    print("%-8s %5d %6d %9.4f %10.2f %7.1f%%  %s" % (r["kernel"], r["ranks"], r["panel"], r["time_median"],
          r["tflops"] / r["ranks"], 100 * r["exposed_comm_fraction"], "PASSED" if (r.get("check") or {}).get("passed") else "FAILED or unchecked"))
PY
fi
