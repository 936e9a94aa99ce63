#!/usr/bin/env bash
# The GPU call of this folder (nvidia-h200, one H200): the record's count of
# moduli for the ozaki2 kernels whose count is given (kernel_counts).
#   OUT=dir bash docs/results/h200-2026-12-04-call-r/run.sh   (from the tree's root)
# 1. build (all targets); 2. the GPU tests of ozaki2, the kernels and the
#    pipeline; 3. the records' kernel_note of dgemm-dist --kernel ozaki2 and
#    ozaki2-14 in memory (n = 4096) and file to file (n = 4096, the sliced
#    products of the pipeline's bands).
. bench/gpu/call.sh
if [ "${1:-}" = again ]; then
    R=$OUT/r2
    mkdir -p "$R"
    build || exit 1
    step "the three tests again"
    (cd "$B" && timeout 200 ctest -L gpu -R "gpu_ozaki2_dgemm_dist_4096|gpu_1gpu_ozaki2_sliced_panels" -j 1 \
        --timeout 150 --output-on-failure >"$R/tests.log" 2>&1)
    echo "tests rc=$?" | tee -a "$R/steps.txt"
    grep -E "tests passed|Failed|\*\*\*" "$R/tests.log" >>"$R/steps.txt"
    pack
    exit 0
fi
build || exit 1
step "GPU tests: ozaki2, kernels, pipeline"
(cd "$B" && timeout 300 ctest -L gpu -R "ozaki2|gpu_kernels_|i8gemm|accuracy|pipeline" -E "gpu_2gpu" -j 1 \
    --timeout 150 --output-on-failure >"$R/tests.log" 2>&1)
echo "tests rc=$?" | tee -a "$R/steps.txt"
grep -E "tests passed|Failed|\*\*\*" "$R/tests.log" >>"$R/steps.txt"
pack
step "kernel_note of the records"
W=/tmp/dd-notes
mkdir -p "$W"
mpirun -n 1 "$B/dgemm-dist" gen --out "$W/m.h5" -m 4096 -n 4096 -k 4096 --quiet --force
for k in ozaki2 ozaki2-14; do
    mpirun -n 1 "$B/dgemm-dist" --kernel "$k" --size 4096 --check --json "$R/notes.jsonl" --quiet \
        >>"$R/notes.log" 2>&1
    echo "$k in memory rc=$?" | tee -a "$R/steps.txt"
    mpirun -n 1 "$B/dgemm-dist" --kernel "$k" --in "$W/m.h5" --out "$W/c.h5" --force --check \
        --json "$R/notes.jsonl" --quiet >>"$R/notes.log" 2>&1
    echo "$k file to file rc=$?" | tee -a "$R/steps.txt"
done
python3 -c 'import json,sys
for l in open(sys.argv[1]):
    r=json.loads(l); print(r["kernel"], "pipelined" if r["pipeline"] else "phased", r["check"]["passed"], "|", r["kernel_note"])' \
    "$R/notes.jsonl" | tee -a "$R/steps.txt"
rm -rf "$W"
gpu
step "done"
pack
# second call, after the two tests' expectations took the report's counts:
#   OUT=dir bash docs/results/h200-2026-12-04-call-r/run.sh again
