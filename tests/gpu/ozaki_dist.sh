#!/usr/bin/env bash
# ozaki_dist.sh N: dgemm-dist --kernel ozaki2 --size N --check on 1 GPU
# (and on 2, grid 1x2, where two exist); each must print PASSED, and the
# 1-GPU run's record say how many moduli its multiplies used.  Exits 77
# (ctest: skipped) without a GPU.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_BIN DD_MPIRUN
n=${1:-4096}
have=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "$have" -lt 1 ]; then
    echo "skipped: no GPU"
    exit 77
fi
read -r -a mpirun <<<"$DD_MPIRUN"
log=$(mktemp)

rec=$(mktemp)
trap 'rm -f "$log" "$rec"' EXIT
CUDA_VISIBLE_DEVICES=0 "${mpirun[@]}" -n 1 "$DD_BIN" --backend cuda --kernel ozaki2 --size "$n" \
    --check --json "$rec" 2>&1 | tee "$log"
grep -q 'PASSED$' "$log"
# the record and the report say how many moduli the multiplies used
# (kernel_counts); the warning at the engine's close does not repeat it
python3 -c 'import json,re,sys
r=json.loads(open(sys.argv[1]).read().splitlines()[-1])
assert re.search(r"ozaki2 \(GPU 0\): [1-9][0-9]* multiplies at [0-9]+ moduli", r["kernel_note"] or ""), r["kernel_note"]' "$rec"
grep -Eq '^kernel +note: ozaki2 \(GPU 0\): [1-9][0-9]* multiplies at [0-9]+ moduli' "$log" ||
    { echo "FAIL: the report does not say how many moduli"; exit 1; }
if grep -q '^dgemm-dist: kernel .*multiplies at [0-9]* moduli' "$log"; then
    echo "FAIL: the engine's close printed the moduli counts (they are for the record and report)"
    exit 1
fi
if [ "$have" -ge 2 ]; then
    CUDA_VISIBLE_DEVICES=0,1 "${mpirun[@]}" -n 2 "$DD_BIN" --backend cuda --kernel ozaki2 \
        --size "$n" --grid 1x2 --check 2>&1 | tee "$log"
    grep -q 'PASSED$' "$log"
fi
