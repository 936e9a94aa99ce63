#!/usr/bin/env bash
# The whole run, file to file, as a user waits for it (a benchmark, not a
# test): one input file of n×n f64 A and B, then
#   - dd of the same bytes on the same file system (read: page cache and
#     direct; write: to the page cache and with fdatasync), the yardstick of
#     the read and write phases;
#   - dgemm-dist --in --out with the check on 1 and 2 GPUs, under /usr/bin/time;
#   - the same job as a plain h5py + PyTorch script on 1 GPU;
#   - dgemm-dist --size 2n on 2 GPUs (generated inputs, no file);
# and prints the ratios.  Records: $OUT/wholerun.jsonl (dgemm-dist's own),
# $OUT/wholerun.log, $OUT/wholerun.md (the table).
#   bench/gpu/wholerun.sh BUILD_DIR [N]      (N default 32768)
set -uo pipefail
B=$1
N=${2:-32768}
OUT="${OUT:-$PWD/out}"
W="${DD_WHOLE_DIR:-/tmp/dd-whole}"
mkdir -p "$OUT" "$W"
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU' || true)
log() { echo "== $(date +%T) $*" | tee -a "$OUT/wholerun.log"; }
# wall SECONDS-VAR command...: runs it under /usr/bin/time, output to the log
wall() {
    local var=$1
    shift
    /usr/bin/time -f "%e" -o "$W/time" "$@" >>"$OUT/wholerun.log" 2>&1
    local rc=$?
    printf -v "$var" '%s' "$(tail -1 "$W/time")"
    [ "$rc" -eq 0 ] || log "FAILED (exit $rc): $*"
    return $rc
}
# rate BYTES SECONDS: GB/s
rate() { python3 -c "print(f'{$1 / $2 / 1e9:.2f}')"; }

in="$W/m.h5"
bytes=$((2 * N * N * 8))
log "input: gen n=$N ($((bytes >> 30)) GiB) into $in"
rm -f "$W"/*.h5
mpirun -n 8 --bind-to none "$B/dgemm-dist" gen --out "$in" -m "$N" -n "$N" -k "$N" --quiet --force ||
    { log "gen failed"; exit 1; }
sync

log "dd yardsticks"
dd if="$in" of=/dev/null bs=64M 2>/dev/null # warm the page cache as the runs find it
wall t_dd_read dd if="$in" of=/dev/null bs=64M
wall t_dd_read_direct dd if="$in" of=/dev/null bs=64M iflag=direct
cbytes=$((N * N * 8))
wall t_dd_write dd if=/dev/zero of="$W/dd.out" bs=64M count=$((cbytes >> 26))
rm -f "$W/dd.out"
wall t_dd_write_sync dd if=/dev/zero of="$W/dd.out" bs=64M count=$((cbytes >> 26)) conv=fdatasync
rm -f "$W/dd.out"

runs=()
for g in 1 2; do
    [ "$ngpu" -ge "$g" ] || { log "skip $g GPUs"; continue; }
    log "dgemm-dist file to file on $g GPU(s), check on"
    rm -f "$W/c$g.h5"
    CUDA_VISIBLE_DEVICES=$(seq -s, 0 $((g - 1))) \
        wall "t_dd$g" mpirun -n "$g" --bind-to none "$B/dgemm-dist" --in "$in" --out "$W/c$g.h5" \
        --check --force --json "$OUT/wholerun.jsonl"
    runs+=("$g")
    rm -f "$W/c$g.h5"
done

log "h5py + PyTorch on 1 GPU"
t_py=nan
if python3 -c "import h5py, torch" 2>/dev/null; then
    CUDA_VISIBLE_DEVICES=0 wall t_py python3 bench/gpu/baseline_h5py_torch.py "$in" "$W/cpy.h5"
    rm -f "$W/cpy.h5"
fi
rm -f "$in"

if [ "$ngpu" -ge 2 ]; then
    log "dgemm-dist --size $((2 * N)) on 2 GPUs (generated inputs)"
    CUDA_VISIBLE_DEVICES=0,1 wall t_size2 mpirun -n 2 --bind-to none "$B/dgemm-dist" \
        --size $((2 * N)) --check --json "$OUT/wholerun.jsonl"
fi

python3 - "$OUT/wholerun.jsonl" "$N" "$bytes" "$cbytes" "$t_dd_read" "$t_dd_read_direct" \
    "$t_dd_write" "$t_dd_write_sync" "${t_dd1:-nan}" "${t_dd2:-nan}" "$t_py" "${t_size2:-nan}" \
    <<'PY' | tee "$OUT/wholerun.md"
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
inb, cb = int(sys.argv[3]), int(sys.argv[4])
ddr, ddrd, ddw, ddws, w1, w2, wpy, ws2 = (float(x) for x in sys.argv[5:13])
recs = [json.loads(l) for l in open(path)] if path else []
def rec(ranks, m):
    for r in recs:
        if r["ranks"] == ranks and r["m"] == m:
            return r
def ph(r, k):
    return r["phases"].get(k, {}).get("max", float("nan")) if r else float("nan")
print(f"| whole run, n = {n} f64 | 1 GPU | 2 GPUs |")
print("| --- | --- | --- |")
r1, r2 = rec(1, n), rec(2, n)
rows = [("wall, /usr/bin/time around mpirun (s)", w1, w2)]
for k in ("setup", "read", "multiply", "check", "write", "teardown"):
    rows.append((f"{k} (s)", ph(r1, k), ph(r2, k)))
rows.append(("multiply, all repetitions (s)", r1 and r1["multiply_all_seconds"], r2 and r2["multiply_all_seconds"]))
rows.append(("wall the report saw (s)", r1 and r1["wall_seconds"], r2 and r2["wall_seconds"]))
rows.append(("unaccounted, of the /usr/bin/time wall (%)",
             r1 and 100 * (w1 - r1["wall_seconds"] + r1["unaccounted_seconds"]) / w1,
             r2 and 100 * (w2 - r2["wall_seconds"] + r2["unaccounted_seconds"]) / w2))
rows.append(("check / multiply (%)", r1 and 100 * ph(r1, "check") / ph(r1, "multiply"),
             r2 and 100 * ph(r2, "check") / ph(r2, "multiply")))
rows.append(("exposed comm, single cold run (%)", r1 and 100 * r1["exposed_comm_fraction"],
             r2 and 100 * r2["exposed_comm_fraction"]))
rows.append(("read rate (GB/s) / dd page cache / dd direct", inb / ph(r1, "read") / 1e9, inb / ph(r2, "read") / 1e9))
rows.append(("write rate (GB/s)", cb / ph(r1, "write") / 1e9, cb / ph(r2, "write") / 1e9))
rows.append(("h5py + PyTorch, 1 GPU, wall (s)", wpy, wpy))
rows.append(("speed-up over h5py + PyTorch (target 2x / 3x)", wpy / w1, wpy / w2))
for name, a, b in rows:
    f = lambda v: "n/a" if v is None or v != v else f"{v:.3g}"
    print(f"| {name} | {f(a)} | {f(b)} |")
print()
print(f"dd same file system: read {inb/ddr/1e9:.2f} GB/s (page cache), {inb/ddrd/1e9:.2f} GB/s (direct); "
      f"write {cb/ddw/1e9:.2f} GB/s (page cache), {cb/ddws/1e9:.2f} GB/s (fdatasync)")
r = rec(2, 2 * n)
if r:
    print(f"--size {2*n} on 2 GPUs: wall {ws2:.3g} s, multiply {ph(r,'multiply'):.3g} s, "
          f"wall / multiply = {ws2 / ph(r, 'multiply'):.2f} (target <= 1.5); setup {ph(r,'setup'):.3g} s, "
          f"generate {ph(r,'generate'):.3g} s, check {ph(r,'check'):.3g} s")
PY
