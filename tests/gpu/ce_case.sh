#!/usr/bin/env bash
# ce_case.sh RANKS M N K DTYPE [dgemm-dist options...]
# The copy-engine comm backend (--comm ce) on 2 GPUs of one host: the run
# PASSES, really used the copy engines (no fallback), C matches the serial
# product (dd-compare) and equals, bit for bit, the C of the same run with
# --comm nccl (the same panels reach the same kernel; --comm mpi where ranks
# share a GPU, which NCCL refuses).  Exits 77 (ctest:
# skipped) with fewer than 2 GPUs.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_BIN DD_COMPARE DD_MPIRUN
ranks=$1 m=$2 n=$3 k=$4 dtype=$5
shift 5
have=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "$have" -lt 2 ]; then
    echo "skipped: needs 2 GPUs, found $have"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
read -r -a mpirun <<<"$DD_MPIRUN"
export CUDA_VISIBLE_DEVICES=0,1
"${mpirun[@]}" -n 1 "$DD_BIN" gen --out "$work/in.h5" -m "$m" -n "$n" -k "$k" --dtype "$dtype" \
    --seed 7 --quiet
ref=nccl
[ "$ranks" -le 2 ] || ref=mpi
for comm in ce "$ref"; do
    "${mpirun[@]}" -n "$ranks" "$DD_BIN" --in "$work/in.h5" --out "$work/$comm.h5" --backend cuda \
        --comm "$comm" --check --repeat 2 --json "$work/$comm.jsonl" "$@" | tee "$work/$comm.log"
    grep -q 'PASSED$' "$work/$comm.log"
done
grep -Eq '^comm +ce: CUDA IPC' "$work/ce.log" || { echo "FAIL: --comm ce fell back or was not used"; exit 1; }
"$DD_COMPARE" product "$work/in.h5" "$work/ce.h5"
"$DD_COMPARE" equal "$work/ce.h5" "$work/$ref.h5" C
python3 - "$work/ce.jsonl" "$ranks" <<'PY'
import json, sys
r = json.loads(open(sys.argv[1]).readline())
assert r["comm"] == "ce" and r["gpus"] == int(sys.argv[2]), (r["comm"], r["gpus"])
t = r["telemetry"]
assert t is not None and len(t["ranks"]) == int(sys.argv[2]), t
print(f"ce: {r['comm_detail']}; C equals the reference backend's bit for bit; "
      f"telemetry rank 0: {t['ranks'][0]}")
PY
