#!/usr/bin/env bash
# Per-GPU rate on 1 and 2 GPUs of one host, in one call: the FP64
# production kernel at n = 16384 (strong scaling) and 32768, the FP32 one
# at 16384, and ozaki2-14 at 32768; copy-engine broadcasts, the check on,
# the process wall time.  The 1-GPU baselines run on GPU 1 as well (GPUs
# of one model differ by a few percent), and one rank's share of the work
# runs alone and on both GPUs at once without communication, so a per-GPU
# loss can be told apart: the GPU, running two at once, or the exchange.
#   bench/gpu/pergpu.sh BUILD OUTDIR
set -uo pipefail
B=$1
OUT=$2
mkdir -p "$OUT"
DIST_JSON=pergpu.jsonl
. "$(dirname "$0")/dist_run.sh"
run() { # GPUS TAG args...
    local tag=$2
    echo "== $tag"
    dist_run "$@" --repeat 3 --warmup 1 && grep -E "wall .* s$" "$OUT/$tag.txt"
}
run 1 native_1gpu_16384 --size 16384
DIST_DEVICES=1 run 1 native_gpu1_16384 --size 16384
run 2 native_2gpu_16384 --size 16384 --grid 1x2 --comm ce
run 1 native_1gpu_32768 --size 32768
DIST_DEVICES=1 run 1 native_gpu1_32768 --size 32768
run 2 native_2gpu_32768 --size 32768 --grid 1x2 --comm ce
run 1 f32_1gpu_16384 --size 16384 --dtype f32
run 2 f32_2gpu_16384 --size 16384 --dtype f32 --grid 1x2 --comm ce
run 1 ozaki_1gpu_32768 --size 32768 --kernel ozaki2-14
run 2 ozaki_2gpu_32768 --size 32768 --grid 1x2 --comm ce --kernel ozaki2-14
# Where a loss comes from: one rank's share of the 1x2 grid (N halved) on
# GPU 0 alone, on GPU 1 alone, and on both at once as two independent
# 1-GPU runs (no communication).  Long enough (20 and 8 timed multiplies)
# for the two concurrent runs' multiplies to overlap despite their setups.
share() { # TAG N REPEAT
    local tag=$1 n=$2 rep=$3 h=$(($2 / 2))
    for d in 0 1; do
        DIST_DEVICES=$d DIST_JSON=share.jsonl dist_run 1 "${tag}_alone$d" --size "$n,$h,$n" \
            --repeat "$rep" --warmup 2
    done
    DIST_DEVICES=0 DIST_JSON=pair0.jsonl dist_run 1 "${tag}_both0" --size "$n,$h,$n" --repeat "$rep" \
        --warmup 2 &
    DIST_DEVICES=1 DIST_JSON=pair1.jsonl dist_run 1 "${tag}_both1" --size "$n,$h,$n" --repeat "$rep" \
        --warmup 2
    wait
}
if [ "$ngpu" -ge 2 ]; then
    share share_16384 16384 20
    share share_32768 32768 8
    python3 - "$OUT" <<'PY'
import glob, json, os, sys
print("%-20s %8s %8s %7s" % ("one rank's share", "TF/GPU", "MHz", "J/TF"))
for j in ("share", "pair0", "pair1"):
    jf = os.path.join(sys.argv[1], j + ".jsonl")
    if not os.path.exists(jf):
        continue
    for tag, l in zip(open(jf[:-6] + ".tags").read().split(), open(jf)):
        r = json.loads(l)
        t = (r.get("telemetry") or {}).get("over_ranks") or {}
        print("%-20s %8.2f %8.0f %7.2f" % (tag, r["tflops"], t.get("sm_mhz_mean_min") or 0,
              t.get("j_per_tflop") or 0))
PY
fi
# per GPU / 1 GPU: against GPU 0 alone and against the slower of GPU 0 and
# GPU 1 alone (the 2-GPU time is the slower rank's); spread: the ranks'
# multiply times, max/min - 1
python3 - "$OUT/pergpu.jsonl" "$OUT/pergpu.tags" <<'PY'
import json, sys
recs = dict(zip(open(sys.argv[2]).read().split(), map(json.loads, open(sys.argv[1]))))
def rate(t):
    return recs[t]["tflops"] / recs[t]["ranks"] if t in recs else None
print("%-22s %-12s %4s %6s %9s %8s %7s %7s %7s %7s  %s" % ("run", "kernel", "GPUs", "n", "time s", "TF/GPU",
      "J/TF", "spread", "/GPU0", "/slower", "check"))
for tag, r in recs.items():
    t = (r.get("telemetry") or {}).get("over_ranks") or {}
    mul = r["phases"]["multiply"]
    row = "%-22s %-12s %4d %6d %9.4f %8.2f %7.2f %6.2f%%" % (tag, r["kernel"], r["ranks"], r["m"],
          r["time_median"], rate(tag), t.get("j_per_tflop") or 0, 100 * (mul["max"] / mul["min"] - 1))
    one = [rate(tag.replace("_2gpu_", x)) for x in ("_1gpu_", "_gpu1_")]
    if r["ranks"] == 2 and one[0]:
        row += " %6.1f%%" % (100 * rate(tag) / one[0])
        row += " %6.1f%%" % (100 * rate(tag) / min(one)) if one[1] else "       -"
    else:
        row += "       -       -"
    print(row, " PASSED" if (r.get("check") or {}).get("passed") else " FAILED or unchecked")
PY
