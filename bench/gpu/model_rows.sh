#!/usr/bin/env bash
# The model's rate rows of the production kernels, measured again: gemm-bench
# at the shapes src/model/tables/rates-h200.csv lists for each kernel, in two
# processes (the types in one order, then the other), and the rows to put in
# the table (the first process's burst medians; the second shows the spread).
#   bench/gpu/model_rows.sh BUILD OUTDIR SOURCE_TAG [KERNEL:TYPE...]
# default kernels: dgemm_dmma:f64 sgemm_dmma:f32.  Writes rows-a.*,
# rows-b.* (gemm-bench) and rows.csv (the table's rows, source SOURCE_TAG).
set -uo pipefail
B=$1
OUT=$2
SRC=$3
shift 3
[ $# -gt 0 ] && kts=("$@") || kts=(dgemm_dmma:f64 sgemm_dmma:f32)
mkdir -p "$OUT"
csv="$(dirname "$0")/../../src/model/tables/rates-h200.csv"
shapes() { # KERNEL TYPE: the table's shapes of that kernel, MxNxK, comma-separated
    awk -F, -v k="$1" -v t="$2" '$2 == k && $3 == t { printf "%s%sx%sx%s", s, $5, $6, $7; s = "," }' "$csv"
}
run() { # TAG KERNEL:TYPE...
    local tag=$1
    shift
    for kt in "$@"; do
        local k=${kt%%:*} t=${kt##*:}
        timeout 300 "$B/bench/gemm-bench" --types "$t" --kernels "$k" --beta auto \
            --sizes "$(shapes "$k" "$t")" --json "$OUT/rows-$tag.jsonl" >>"$OUT/rows-$tag.txt" 2>&1 ||
            echo "FAILED: gemm-bench $k $t ($tag)"
    done
}
run a "${kts[@]}"
rev=()
for ((i = ${#kts[@]} - 1; i >= 0; i--)); do rev+=("${kts[i]}"); done
run b "${rev[@]}"
python3 - "$OUT" "$SRC" "${kts[@]}" <<'PY'
import json, os, sys
out, src, kts = sys.argv[1], sys.argv[2], sys.argv[3:]
def rows(tag):
    r = {}
    for l in open(os.path.join(out, "rows-%s.jsonl" % tag)):
        x = json.loads(l)
        if x.get("mode", "burst") == "burst" and x.get("kernel") != "cublas":
            r[(x["kernel"], x["dtype"], x["m"], x["n"], x["k"])] = x
    return r
a, b = rows("a"), rows("b")
with open(os.path.join(out, "rows.csv"), "w") as f:
    for key in a:
        k, t, m, n, kk = key
        g = a[key]["tflops"] * 1000
        other = b[key]["tflops"] * 1000 if key in b else float("nan")
        f.write("H200,%s,%s,0,%d,%d,%d,%.0f,%s\n" % (k, t, m, n, kk, g, src))
        print("%-14s %s %6dx%6dx%6d  %8.0f GFLOP/s  (other order %8.0f, %+.1f%%)" % (k, t, m, n, kk, g, other,
              100 * (other / g - 1)))
PY
