# dist_run.sh — sourced by pergpu.sh and panel_energy.sh, which set B (the
# build directory) and OUT:
#   dist_run GPUS TAG args...
# one dgemm-dist run on the first GPUS GPUs (skipped, with a line, where the
# host has fewer), the check on, under a 300 s limit and /usr/bin/time;
# its report to $OUT/TAG.txt, its record appended to $OUT/$DIST_JSON
# (default dist.jsonl); a failure prints "FAILED: TAG".
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
dist_run() {
    local g=$1 tag=$2
    shift 2
    [ "$ngpu" -ge "$g" ] || { echo "skip $tag: needs $g GPUs"; return 1; }
    CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((g - 1))) /usr/bin/time -f "$tag wall %e s" \
        timeout 300 mpirun -n "$g" --bind-to none "$B/dgemm-dist" "$@" --check \
        --json "$OUT/${DIST_JSON:-dist.jsonl}" >"$OUT/$tag.txt" 2>&1 || echo "FAILED: $tag"
}
