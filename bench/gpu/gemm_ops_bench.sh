#!/usr/bin/env bash
# All four op combinations, file to multiply, on 1 and 2 GPUs (a benchmark,
# not a test): for each of NN, NT, TN, TT, gen writes A and B stored as that
# combination asks (op(A) = Aᵀ: A stored K×M), then dgemm-dist reads them
# with --transa/--transb and multiplies, check on.  Prints read and multiply
# per run and the multiply's ratio to NN on the same GPU count.
#   bench/gpu/gemm_ops_bench.sh BUILD [N]        (N default 16384)
# Records: $OUT/gemm-ops.jsonl; table: $OUT/gemm-ops.md
set -uo pipefail
B=$1
N=${2:-16384}
OUT="${OUT:-$PWD/out}"
W="${DD_WHOLE_DIR:-/tmp/dd-ops}"
mkdir -p "$OUT" "$W"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
for ab in NN NT TN TT; do
    ta=${ab:0:1} tb=${ab:1:1}
    mpirun -n 16 --oversubscribe --bind-to none "$B/dgemm-dist" gen --out "$W/$ab.h5" -m "$N" -n "$N" \
        -k "$N" --transa "$ta" --transb "$tb" --quiet --force || { echo "gen $ab failed"; exit 1; }
    for g in 1 2; do
        [ "$ngpu" -ge "$g" ] || continue
        CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((g - 1))) mpirun -n "$g" --bind-to none "$B/dgemm-dist" \
            --in "$W/$ab.h5" --transa "$ta" --transb "$tb" --quiet --json "$OUT/gemm-ops.jsonl" \
            >>"$OUT/gemm-ops.log" 2>&1 || echo "FAILED: $ab on $g GPU(s)"
    done
    rm -f "$W/$ab.h5"
done
python3 - "$OUT/gemm-ops.jsonl" <<'PY' | tee "$OUT/gemm-ops.md"
import json, sys
recs = [json.loads(l) for l in open(sys.argv[1])]
base = {}
print("| op(A) op(B) | GPUs | read s | multiply s | TFLOP/s | multiply vs NN | check |")
print("| --- | --- | --- | --- | --- | --- | --- |")
for r in recs:
    key = r.get("transa", "N") + r.get("transb", "N")
    g = r["ranks"]
    t = r["phases"]["multiply"]["max"]
    base.setdefault(g, t if key == "NN" else None)
    ratio = f"{base[g] / t:.3f}" if base.get(g) else "n/a"
    print(f"| {key} | {g} | {r['phases']['read']['max']:.3f} | {t:.3f} | {r['tflops']:.1f} | {ratio} | "
          f"{r['check']['residual']:.2g} {'PASSED' if r['check']['passed'] else 'FAILED'} |")
PY
