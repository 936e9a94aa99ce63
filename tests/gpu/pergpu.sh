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
run 2 native_2gpu_16384 --size 16384 --grid 1x2 --comm ce
run 1 native_1gpu_32768 --size 32768
run 2 native_2gpu_32768 --size 32768 --grid 1x2 --comm ce
run 1 f32_1gpu_16384 --size 16384 --dtype f32
run 2 f32_2gpu_16384 --size 16384 --dtype f32 --grid 1x2 --comm ce
run 1 ozaki_1gpu_32768 --size 32768 --kernel ozaki2-14
run 2 ozaki_2gpu_32768 --size 32768 --grid 1x2 --comm ce --kernel ozaki2-14
python3 - "$OUT/pergpu.jsonl" <<'PY'
import json, sys
print("%-12s %4s %6s %6s %9s %9s %8s  %s" % ("kernel", "GPUs", "n", "panel", "time s", "TF/GPU", "exposed", "check"))
for l in open(sys.argv[1]):
    r = json.loads(l)
    print("%-12s %4d %6d %6d %9.4f %9.2f %7.1f%%  %s" % (r["kernel"], r["ranks"], r["m"], r["panel"],
          r["time_median"], r["tflops"] / r["ranks"], 100 * r["exposed_comm_fraction"],
          "PASSED" if (r.get("check") or {}).get("passed") else "FAILED or unchecked"))
PY
