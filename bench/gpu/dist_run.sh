# dist_run.sh — sourced by pergpu.sh, panel_energy.sh and local_share.sh,
# which set B (the build directory) and OUT:
#   dist_run GPUS TAG args...
# one dgemm-dist run on the first GPUS GPUs (DIST_DEVICES, a comma list,
# picks others; skipped, with a line, where the host has fewer), the check
# on, under a 300 s limit and /usr/bin/time; its report to $OUT/TAG.txt,
# its record appended to $OUT/$DIST_JSON (default dist.jsonl) and its tag,
# when it wrote one record, to the same name with .tags in place of .jsonl
# (line i names record i); a failure prints "FAILED: TAG".
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
dist_run() {
    local g=$1 tag=$2 json="$OUT/${DIST_JSON:-dist.jsonl}" before after
    shift 2
    local devs=${DIST_DEVICES:-$(seq -s, 0 $((g - 1)))}
    [ "$ngpu" -ge "$g" ] && [ "$ngpu" -gt "$(tr , '\n' <<<"$devs" | sort -n | tail -1)" ] ||
        { echo "skip $tag: needs GPUs $devs"; return 1; }
    before=$(cat "$json" 2>/dev/null | wc -l)
    CUDA_VISIBLE_DEVICES=$devs /usr/bin/time -f "$tag wall %e s" \
        timeout 300 mpirun -n "$g" --bind-to none "$B/dgemm-dist" "$@" --check \
        --json "$json" >"$OUT/$tag.txt" 2>&1 || echo "FAILED: $tag"
    after=$(cat "$json" 2>/dev/null | wc -l)
    [ "$after" -eq $((before + 1)) ] && echo "$tag" >>"${json%.jsonl}.tags"
    grep -q PASSED "$OUT/$tag.txt"
}
# dist_brief GPUS TAG args...: dist_run, then one line of its report (rate,
# clock and energy, check, wall)
dist_brief() {
    local tag=$2
    dist_run "$@" &&
        echo "$tag: $(grep -E '^rate|^GPU|PASSED|FAILED|wall' "$OUT/$tag.txt" | tr -s ' ' | paste -sd'|')"
}
