#!/usr/bin/env bash
# Per-GPU rate on 1 and 2 GPUs of one host, in one call: the FP64
# production kernel at n = 16384 (strong scaling) and 32768, the FP32 one
# at 16384, and ozaki2-14 at 32768; copy-engine broadcasts, the check on,
# the process wall time.
#   tests/gpu/pergpu.sh BUILD OUTDIR
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
