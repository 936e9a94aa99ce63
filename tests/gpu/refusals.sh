#!/usr/bin/env bash
# On a GPU host: what must be refused with a clear message, before anything
# hangs — two ranks on one GPU with NCCL, too little GPU memory, an unknown
# kernel.  Exits 77 (skipped) without a GPU.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_BIN DD_MPIRUN
nvidia-smi -L >/dev/null 2>&1 || { echo "skipped: no GPU"; exit 77; }
read -r -a mpirun <<<"$DD_MPIRUN"
fails=0
refuse() {
    local name=$1 pattern=$2
    shift 2
    set +e
    timeout 120 "$@" >/tmp/refuse.out 2>/tmp/refuse.err
    local rc=$?
    set -e
    if [ "$rc" -eq 0 ] || [ "$rc" -eq 124 ] || ! grep -Eq -- "$pattern" /tmp/refuse.err ||
        [ "$(grep -c '^dgemm-dist: error:' /tmp/refuse.err)" -ne 1 ]; then
        echo "FAIL $name (rc $rc)"; cat /tmp/refuse.err; fails=$((fails + 1))
    else
        echo "ok   $name: $(grep '^dgemm-dist: error:' /tmp/refuse.err)"
    fi
}
refuse two_ranks_one_gpu_nccl "one GPU|share" \
    env CUDA_VISIBLE_DEVICES=0 "${mpirun[@]}" -n 2 "$DD_BIN" --size 64 --backend cuda --comm nccl
refuse too_little_gpu_memory "GiB of GPU memory.*more ranks" \
    env CUDA_VISIBLE_DEVICES=0 "${mpirun[@]}" -n 1 "$DD_BIN" --size 300000 --backend cuda --dry-run
refuse unknown_kernel "unknown kernel" \
    env CUDA_VISIBLE_DEVICES=0 "${mpirun[@]}" -n 1 "$DD_BIN" --size 64 --backend cuda --kernel nope
[ "$fails" -eq 0 ]
