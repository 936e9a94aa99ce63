#!/usr/bin/env bash
# ozaki_dist.sh N: dgemm-dist --kernel ozaki2 --size N --check on 1 GPU
# (and on 2, grid 1x2, where two exist); each must print PASSED.  Exits 77
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
trap 'rm -f "$log"' EXIT
CUDA_VISIBLE_DEVICES=0 "${mpirun[@]}" -n 1 "$DD_BIN" --backend cuda --kernel ozaki2 --size "$n" \
    --check 2>&1 | tee "$log"
grep -q 'PASSED$' "$log"
if [ "$have" -ge 2 ]; then
    CUDA_VISIBLE_DEVICES=0,1 "${mpirun[@]}" -n 2 "$DD_BIN" --backend cuda --kernel ozaki2 \
        --size "$n" --grid 1x2 --check 2>&1 | tee "$log"
    grep -q 'PASSED$' "$log"
fi
