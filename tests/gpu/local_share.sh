#!/usr/bin/env bash
# Is the 2-GPU run's per-GPU loss already in one rank's share of the work?
# On a 1x2 grid each rank multiplies M x N/2 x K in panels of M x N/2 x NB,
# half the length of the 1-GPU run's.  This runs those shares on ONE GPU,
# alternating with the whole problem, so a per-flop loss of the shorter,
# narrower multiplies shows without a second GPU.  One call:
#   tests/gpu/local_share.sh BUILD OUTDIR
# 1. dgemm-dist on 1 GPU: n = 16384 and 32768 whole, and the 1x2 grid's
#    share (N halved), panel 4096 and 8192, twice in alternation, check on;
# 2. gemm-bench interleaved (one clock for all) on the panel shapes of both
#    runs, the production kernel beside cuBLAS.
set -uo pipefail
B=$1
OUT=$2
mkdir -p "$OUT"
DIST_JSON=share.jsonl
. "$(dirname "$0")/dist_run.sh"
run() { # GPUS TAG args...
    local tag=$2
    dist_run "$@" &&
        echo "$tag: $(grep -E '^rate|^GPU|PASSED|FAILED|wall' "$OUT/$tag.txt" | tr -s ' ' | paste -sd'|')"
}
for r in a b; do
    run 1 "whole_16384_$r" --size 16384 --repeat 5 --warmup 1
    run 1 "share_16384_$r" --size 16384,8192,16384 --repeat 5 --warmup 1
    run 1 "share_16384_p8192_$r" --size 16384,8192,16384 --panel 8192 --repeat 5 --warmup 1
    run 1 "whole_32768_$r" --size 32768 --repeat 3 --warmup 1
    run 1 "share_32768_$r" --size 32768,16384,32768 --repeat 3 --warmup 1
done
timeout 400 "$B/kernels/gemm-bench" --types f64 --kernels 23_dmma_pipe --interleave --beta 1 \
    --sizes 16384x16384x4096,16384x8192x4096,16384x8192x8192,32768x16384x4096 \
    --json "$OUT/kbench.jsonl" >"$OUT/kbench.txt" 2>&1 || echo "FAILED: kbench"
cat "$OUT/kbench.txt"
python3 - "$OUT/share.jsonl" <<'PY'
import json, sys
print("%6s %6s %6s %6s %8s %8s %8s %8s %6s  %s" % ("m", "n", "k", "panel", "time s", "TF/GPU", "J/TF", "MHz", "wall", "check"))
for l in open(sys.argv[1]):
    r = json.loads(l)
    t = ((r.get("telemetry") or {}).get("over_ranks") or {})
    print("%6d %6d %6d %6d %8.4f %8.2f %8.2f %8.0f %6.2f  %s" % (r["m"], r["n"], r["k"], r["panel"], r["time_median"],
          r["tflops"] / r["ranks"], t.get("j_per_tflop") or 0, t.get("sm_mhz_mean_min") or 0, r["wall_seconds"],
          "PASSED" if (r.get("check") or {}).get("passed") else "FAILED or unchecked"))
PY
