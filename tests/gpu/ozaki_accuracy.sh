#!/usr/bin/env bash
# ozaki_accuracy.sh: on 1 GPU, --kernel ozaki2-auto at --size 8192 must
# emulate every multiply (uniform data: the guard of kernels/ozaki2.h asks
# for 16-17 moduli, which beat native once the guard has run), record the
# moduli in kernel_note, and PASS the check; --accuracy fp64 must keep the
# default kernel (src/driver/run.c's fp64_choice) and say why.  Exits 77
# (ctest: skipped) without a GPU.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_BIN DD_MPIRUN
have=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "$have" -lt 1 ]; then
    echo "skipped: no GPU"
    exit 77
fi
read -r -a mpirun <<<"$DD_MPIRUN"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
CUDA_VISIBLE_DEVICES=0 "${mpirun[@]}" -n 1 "$DD_BIN" --backend cuda --kernel ozaki2-auto --size 8192 \
    --repeat 2 --json "$work/big.json" --check 2>&1 | tee "$work/big.log"
grep -q 'PASSED$' "$work/big.log"
grep -q '"kernel":"ozaki2-auto"' "$work/big.json"
grep -Eq '"kernel_note":"ozaki2-auto \(GPU 0\): ([0-9]+) of \1 multiplies emulated, moduli min 1[0-9] max [12][0-9] last [12][0-9]' \
    "$work/big.json"
CUDA_VISIBLE_DEVICES=0 "${mpirun[@]}" -n 1 "$DD_BIN" --backend cuda --accuracy fp64 --size 4096 \
    --json "$work/small.json" --check 2>&1 | tee "$work/small.log"
grep -q 'PASSED$' "$work/small.log"
grep -q '"kernel":"dgemm_dmma"' "$work/small.json"
grep -q '"accuracy_choice":"the default kernel (native FP64: ozaki2-auto' "$work/small.json"
echo "ozaki_accuracy.sh: all passed"
