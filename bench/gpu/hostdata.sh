#!/usr/bin/env bash
# Host data at cuBLASXt's speed (issue 32, item 3; issue 35 for the complex
# types): the pdgemm_ drop-in (psgemm_, pzgemm_, pcgemm_ by dtype) on one
# GPU with the caller's pageable arrays, through the host pipeline
# (src/api/api_pipe.c, where it takes the call) and the path before it
# (DD_FAULT=no-host-pipe), against cuBLASXt's GEMM of the same dtype with
# pinned and with pageable data.  Correctness first.
#
#   OUT=/some/dir bash bench/gpu/hostdata.sh BUILD_DIR
#
# BUILD_DIR: a CUDA build of this tree (cmake -S . -B BUILD_DIR, CUDA on,
# ScaLAPACK found so that pdgemm-bench exists); the targets this needs are
# built there first when missing.  DD_SCALAPACK_DIR, where ScaLAPACK is not
# installed on the GPU host: a directory holding libscalapack-openmpi.so*
# (put on LD_LIBRARY_PATH).  DD_HOSTDATA_N (default 16384).  GPUS=2: the
# drop-in on 2 ranks and cuBLASXt on 2 GPUs (GPUs 0..GPUS-1; default 1; the
# tests stay on one rank).  DD_HOSTDATA_DTYPES: the dtypes of steps 2 and 3
# (default "f64 f32"; any of f64 f32 c128 c64).  XT_BLOCKS: cuBLASXt's tiles
# for f64 (default "2048 4096 8192"; the other dtypes: 8192).  About 3
# minutes on one H200 with the default dtypes; the complex ones do 4 times
# the flops on twice the bytes.  TFLOP/s counts 2·n³ flops for f64 and f32
# and 8·n³ for c128 and c64 (8 real flops per complex multiply-add).
# DD_HOSTDATA_TAGS: the drop-in's paths timed (default "pipeline before";
# nosplit: the pipeline's band schedule without its split first part).
# Writes to $OUT (default ./out):
#   hostdata-tests.log  the api and scalapack tests on the GPU, and
#                       test-pipe on the CUDA backend
#   hostdata.txt        every bench line, with the drop-in's DD_API_TIMING
#                       lines (each call's steps on rank 0)
#   hostdata.jsonl      one record per measurement: pdgemm-bench (tag
#                       pipeline, nosplit or before, dtype) and cublasxt-bench
#                       (host_memory pinned or pageable, block)
#   hostdata.md         the table of medians
set -uo pipefail
B="$(realpath -m "${1:?usage: OUT=dir bash bench/gpu/hostdata.sh BUILD_DIR}")"
OUT="$(realpath -m "${OUT:-$PWD/out}")"
cd "$(dirname "$0")/../.." || exit 1
N="${DD_HOSTDATA_N:-16384}"
DTYPES="${DD_HOSTDATA_DTYPES:-f64 f32}"
for dt in $DTYPES; do
    case "$dt" in f64 | f32 | c128 | c64) ;; *)
        echo "hostdata.sh: DD_HOSTDATA_DTYPES: '$dt' is none of f64 f32 c128 c64" >&2
        exit 2 ;;
    esac
done
mkdir -p "$OUT"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
[ -d /usr/local/cuda/bin ] && export PATH="/usr/local/cuda/bin:$PATH"
SL="${DD_SCALAPACK_DIR:-}"
export LD_LIBRARY_PATH="${SL:+$SL:}${LD_LIBRARY_PATH:-}"
GPUS="${GPUS:-1}"
export CUDA_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-$(seq -s, 0 $((GPUS - 1)))}"
log() { echo "== $(date +%T) $*" | tee -a "$OUT/hostdata.txt"; }
fails=0

log "host $(hostname): $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"
targets=(test-pipe test-api test-plan test-ops-sweep test-beta0 test-api-device test-pdgemm pdgemm-bench
    cublasxt-bench)
if [ ! -x "$B/bench/pdgemm-bench" ] || [ ! -x "$B/tests/api/test-pipe" ] ||
    [ ! -x "$B/bench/cublasxt-bench" ]; then
    log "building ${targets[*]} in $B"
    { [ -f "$B/CMakeCache.txt" ] || cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release \
        -DCMAKE_CUDA_ARCHITECTURES=90 ${SL:+-DCMAKE_LIBRARY_PATH=$SL}; } >"$OUT/hostdata-build.log" 2>&1
    cmake --build "$B" -j "$(nproc)" --target "${targets[@]}" >>"$OUT/hostdata-build.log" 2>&1 ||
        { tail -20 "$OUT/hostdata-build.log"; log "FAILED: build"; exit 1; }
fi

# 1. correctness on the GPU: the pipeline's own test on the CUDA backend
# (every case through the pipeline there), then the library's tests whose
# one-rank calls take it on a GPU (gpu_api_*, the sweep of every entry,
# beta = 0 on PROT_NONE pages) and the ScaLAPACK oracle; the GPU sweep of
# every entry (100 s) is left to ctest -L gpu
log "test-pipe cuda (1 rank), then the api and scalapack tests on the GPU"
[ "${DD_HOSTDATA_TESTS:-1}" = 0 ] || {
    timeout 120 mpirun -n 1 --bind-to none "$B/tests/api/test-pipe" cuda
    echo "test-pipe cuda: exit $?"
    (cd "$B" && timeout 150 ctest --output-on-failure -j 1 --timeout 60 \
        -R "gpu_api_plan|gpu_api_device|api_host_pipeline_1|api_ops_sweep_every_entry_1|api_beta0_never_reads_c_1|scalapack_oracle_1")
    echo "ctest: exit $?"
} >"$OUT/hostdata-tests.log" 2>&1
grep -E "test_pipe:|tests passed|tests failed|\*\*\*Failed|Timeout|Not Run|exit [0-9]" \
    "$OUT/hostdata-tests.log" | tee -a "$OUT/hostdata.txt"
[ "${DD_HOSTDATA_TESTS:-1}" = 0 ] || grep -q "test_pipe: 0 failed assertions" "$OUT/hostdata-tests.log" ||
    fails=1

# 2. the drop-in, GPUS ranks, host pageable data (pdgemm-bench's malloc'd local
# arrays), NB 1024: the pipeline and the path before it, each dtype; first,
# for each dtype, the drop-in on the CUDA backend against ScaLAPACK's own
# routine at n = 1024 (pdgemm-bench --which both: its C within the bench's
# bound of ScaLAPACK's, and the drop-in serving the call, not handing it on)
for dt in $DTYPES; do
    log "pdgemm_ drop-in, $dt, n = 1024, NB 256, $GPUS GPU(s), against ScaLAPACK's (check)"
    out=$(timeout 60 mpirun -n "$GPUS" --bind-to none -x DD_SCALAPACK_BACKEND=cuda \
        -x DD_SCALAPACK_VERBOSE=1 "$B/bench/pdgemm-bench" --n 1024 --nb 256 --which both --reps 1 \
        --dtype "$dt" 2>&1)
    rc=$?
    printf '%s\n' "$out" | tee -a "$OUT/hostdata.txt"
    if [ "$rc" -ne 0 ] || ! grep -q "served by dgemm-dist (backend cuda" <<<"$out" ||
        ! grep -q "dgemm-dist / ScaLAPACK: " <<<"$out"; then
        log "FAILED: the $dt drop-in on the GPU (exit $rc; served and agreeing with ScaLAPACK?)"
        fails=1
    fi
    for tag in ${DD_HOSTDATA_TAGS:-pipeline before}; do
        log "pdgemm_ drop-in, $dt, n = $N, NB 1024, $GPUS GPU(s), host pageable data, $tag"
        fault=() # before: every call on api_gemm.c's path (the pipeline's test hook)
        [ "$tag" = before ] && fault=(-x 'DD_FAULT=no-host-pipe:*')
        [ "$tag" = nosplit ] && fault=(-x 'DD_FAULT=no-pipe-split:*') # the band schedule alone
        timeout 90 mpirun -n "$GPUS" --bind-to none -x DD_SCALAPACK_BACKEND=cuda -x DD_API_TIMING=1 \
            "${fault[@]}" "$B/bench/pdgemm-bench" --n "$N" --nb 1024 --which dd --reps 3 \
            --dtype "$dt" --tag "$tag" --json "$OUT/hostdata.jsonl" 2>&1 |
            tee -a "$OUT/hostdata.txt" || fails=1
    done
done

# 3. cuBLASXt, GPUS GPUs, pinned and pageable host data, each dtype: f64 at
# the tiles XT_BLOCKS, the others at 8192
for mem in pinned pageable; do
    kind=()
    [ "$mem" = pageable ] && kind=(--pageable)
    for dt in $DTYPES; do
        blocks=8192
        [ "$dt" = f64 ] && blocks="${XT_BLOCKS:-2048 4096 8192}"
        for blk in $blocks; do
            log "cuBLASXt $dt, n = $N, $GPUS GPU(s), $mem, block $blk"
            timeout 60 "$B/bench/cublasxt-bench" --n "$N" --gpus "$GPUS" --reps 3 --block "$blk" \
                --dtype "$dt" "${kind[@]}" --json "$OUT/hostdata.jsonl" 2>&1 |
                tee -a "$OUT/hostdata.txt" || fails=1
        done
    done
done

# 4. the table: TFLOP/s at 2 flops per multiply-add for f64, f32 and 8 for
# c128, c64 (the records' flops_per_multiply_add; cublasxt-bench's tflops
# counts the same)
python3 - "$OUT/hostdata.jsonl" >"$OUT/hostdata.md" <<'EOF' || true
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
print("| what | dtype | host data | median s | TFLOP/s |")
print("| --- | --- | --- | --- | --- |")
for r in rows:
    if r.get("bench") == "pdgemm":
        s = r["seconds"]
        fma = r.get("flops_per_multiply_add", 8 if r["dtype"] in ("c128", "c64") else 2)
        print(f"| pdgemm_ drop-in, NB {r['nb']}, {r.get('tag')} | {r['dtype']} | pageable "
              f"| {s:.4f} | {fma * r['n'] ** 3 / s / 1e12:.1f} |")
    elif r.get("tool") == "cublasxt-bench":
        print(f"| cuBLASXt, block {r['block']} | {r['dtype']} | {r['host_memory']} "
              f"| {r['time_median']:.4f} | {r['tflops']:.1f} |")
EOF
tee -a "$OUT/hostdata.txt" <"$OUT/hostdata.md"
log "done (failures: $fails)"
exit "$fails"
