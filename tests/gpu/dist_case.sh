#!/usr/bin/env bash
# dist_case.sh GPUS RANKS M N K DTYPE [dgemm-dist options...]
# dgemm-dist on the CUDA backend, checked against the serial product
# (dd-compare) and against the CPU backend's C on the same input.  Exits 77
# (ctest: skipped) where fewer than GPUS GPUs exist.  DD_EXPECT_LOG: a
# pattern the run's output (stdout and stderr) must hold.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_BIN DD_COMPARE DD_MPIRUN
gpus=$1 ranks=$2 m=$3 n=$4 k=$5 dtype=$6
shift 6
have=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
if [ "$have" -lt "$gpus" ]; then
    echo "skipped: needs $gpus GPU(s), found $have"
    exit 77
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
read -r -a mpirun <<<"$DD_MPIRUN"
export CUDA_VISIBLE_DEVICES
CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((gpus - 1)))
"${mpirun[@]}" -n 1 "$DD_BIN" gen --out "$work/in.h5" -m "$m" -n "$n" -k "$k" --dtype "$dtype" \
    --seed 5 --quiet
"${mpirun[@]}" -n "$ranks" "$DD_BIN" --in "$work/in.h5" --out "$work/gpu.h5" --backend cuda \
    --check --json "$work/r.jsonl" "$@" 2>&1 | tee "$work/log"
grep -q 'PASSED$' "$work/log"
grep -Eq '^backend +cuda' "$work/log"
if [ -n "${DD_EXPECT_LOG:-}" ] && ! grep -Eq "$DD_EXPECT_LOG" "$work/log"; then
    echo "dist_case.sh: the output does not hold /$DD_EXPECT_LOG/" >&2
    exit 1
fi
"$DD_COMPARE" product "$work/in.h5" "$work/gpu.h5"
"${mpirun[@]}" -n "$ranks" "$DD_BIN" --in "$work/in.h5" --out "$work/cpu.h5" --backend cpu --quiet
python3 - "$work/gpu.h5" "$work/cpu.h5" "$dtype" "$k" "$work/r.jsonl" "$ranks" <<'PY'
import json, sys
import h5py, numpy as np
g, c, dtype, k, rec, ranks = sys.argv[1:]
G = h5py.File(g, "r")["C"][...]; C = h5py.File(c, "r")["C"][...]
assert G.shape == C.shape and G.dtype == C.dtype
u = np.finfo(G.dtype).eps / 2
scale = np.abs(C).max() + 1e-300
err = np.abs(G.astype(np.float64) - C.astype(np.float64)).max()
assert err <= 4 * int(k) * u * max(scale, 1.0) * 2, (err, scale)
r = json.loads(open(rec).readline())
assert r["backend"] == "cuda" and r["gpus"] == int(ranks), r["backend"]
print(f"GPU C equals CPU C within {err:.3g} (scale {scale:.3g}); comm {r['comm']}: {r['comm_detail']}")
PY
