#!/usr/bin/env bash
# Two GPUs of one host in one call (issue 37, items 1-5; the nvidia-h200-x2
# kind), a benchmark, not a test.  Builds the tree once, then runs, each part
# under its own time limit and in this order:
#   native    the native kernels on 1 and 2 GPUs, FP64 and FP32: n = 16384
#             and 32768 strong, 16384x32768x16384 weak (the 1x2 grid, each
#             rank 16384^3), comm ce and nccl; the 1-GPU runs on GPU 0 and
#             on GPU 1 (dist_run.sh: one checked run each)
#   ozaki     ozaki2-14 at n = 32768 on GPU 0, GPU 1 and both (slices
#             broadcast over ce)
#   cublasmp  cuBLASMp side by side on 1 and 2 GPUs, strong and weak
#             (cublasmp.sh, GPUS=2 WEAK=1)
#   whole     file to file, n = 32768, on 2 GPUs (pipeline.sh, RANKS=2)
#             against the h5py + PyTorch script on GPU 0
#             (baseline_h5py_torch.py, as wholerun.sh runs it)
#   hostdata  the pdgemm_ drop-in on pageable host data on 2 ranks against
#             cuBLASXt pinned and pageable on 2 GPUs (hostdata.sh, GPUS=2)
# Each part's limit is cut to what is left of $DEADLINE seconds (default
# 580: the call's 600 s less the summary); a part with under 30 s left is
# not run and the summary says so.  A part runs in a session of its own,
# and whatever of it outlives its limit is killed (pkill -s) before the
# next part starts.  After each part the records so far go into
# $OUT/twogpu.tgz; at the end $OUT/twogpu.md is the table of every figure
# against the issue's targets, met or not.
#   OUT=dir bash bench/gpu/twogpu.sh
#   PARTS="whole hostdata" OUT=dir bash bench/gpu/twogpu.sh   (a subset)
#   DRY=1 bash bench/gpu/twogpu.sh      (prints every command with its limit,
#                                        in order; runs nothing, exits 0)
# Needs in the working tree (carried): .gpu/cublasmp/cublasmp-0.7.tar.xz
# and .gpu/scalapack/libscalapack-openmpi.so.2.2.1.xz (see
# docs/results/h200-2026-12-02-session/run.sh, the same set-up on 1 GPU).
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 1
OUT="$(realpath -m "${OUT:-$PWD/out}")"
export OUT
export DRY=${DRY:-0}
PARTS=${PARTS:-native ozaki cublasmp whole hostdata}
DEADLINE=${DEADLINE:-580}
export B=$PWD/.gpubuild/twogpu R=$OUT/r SL=$PWD/.gpu/scalapack MP=/tmp/dd-cublasmp
export NCCL_NVLS_ENABLE=0 OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export PATH=/usr/local/cuda/bin:$PATH DD_SCALAPACK_DIR=$SL
N=32768

# x LIMIT LOG command...: the command under `timeout LIMIT`, its output
# appended to LOG, a line and its exit in $R/steps.txt; DRY=1: printed only
x() {
    local lim=$1 log=$2
    shift 2
    if [ "$DRY" = 1 ]; then
        echo "timeout $lim $*  >>${log#"$R"/}"
        return 0
    fi
    echo "== $(date +%T) +$SECONDS s: timeout $lim $*" >>"$R/steps.txt"
    timeout "$lim" "$@" >>"$log" 2>&1
    local rc=$?
    echo "   exit $rc" >>"$R/steps.txt"
    return $rc
}

md() { [ "$DRY" = 1 ] || mkdir -p "$@"; }
# where the host has no xz(1): Python's lzma and tarfile (as cublasmp.sh)
PY_UNXZ='import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))'
PY_UNTAR='import sys, tarfile; tarfile.open(sys.argv[1]).extractall(sys.argv[2])'

# the parts: each is run as `bash twogpu.sh --part NAME`
part_native() {
    md "$R/native" && OUT=$R/native && DIST_JSON=native.jsonl
    local dt n comm
    for dt in f64 f32; do
        for n in 16384 32768; do
            DIST_DEVICES=0 dist_run 1 "${dt}_1gpu0_$n" --size "$n" --dtype "$dt" --repeat 3 --warmup 1
            DIST_DEVICES=1 dist_run 1 "${dt}_1gpu1_$n" --size "$n" --dtype "$dt" --repeat 3 --warmup 1
            for comm in ce nccl; do
                dist_run 2 "${dt}_2gpu_${comm}_$n" --size "$n" --dtype "$dt" --grid 1x2 --comm "$comm" \
                    --repeat 3 --warmup 1
            done
        done
        for comm in ce nccl; do
            dist_run 2 "${dt}_2gpu_${comm}_weak" --size 16384,32768,16384 --dtype "$dt" --grid 1x2 \
                --comm "$comm" --repeat 3 --warmup 1
        done
    done
}
part_ozaki() {
    md "$R/ozaki" && OUT=$R/ozaki && DIST_JSON=ozaki.jsonl
    local a=(--size "$N" --kernel ozaki2-14 --repeat 3 --warmup 1)
    DIST_DEVICES=0 dist_run 1 ozaki_1gpu0 "${a[@]}"
    DIST_DEVICES=1 dist_run 1 ozaki_1gpu1 "${a[@]}"
    dist_run 2 ozaki_2gpu_ce "${a[@]}" --grid 1x2 --comm ce
}
part_cublasmp() {
    x 215 "$R/cublasmp.out" env OUT="$R/cublasmp" GPUS=2 WEAK=1 SIZES=16384,32768 REPS=3 \
        DD_CUBLASMP_UNPACK="$MP" bash bench/gpu/cublasmp.sh "$B"
}
part_whole() {
    local w=/tmp/dd-twogpu rc=0
    md "$R/whole"
    if [ "$DRY" = 1 ] || python3 -c "import h5py, torch" 2>/dev/null; then
        x 5 "$R/whole/baseline.log" mkdir -p "$w"
        x 60 "$R/whole/baseline.log" mpirun -n 8 --oversubscribe --bind-to none "$B/dgemm-dist" gen \
            --out "$w/m.h5" -m "$N" -n "$N" -k "$N" --quiet --force
        x 30 /dev/null cat "$w/m.h5" # the page cache warm, as pipeline.sh leaves it
        x 90 "$R/whole/baseline.out" env CUDA_VISIBLE_DEVICES=0 /usr/bin/time -f "%e" \
            -o "$R/whole/baseline.wall" python3 bench/gpu/baseline_h5py_torch.py "$w/m.h5" "$w/c.h5" || rc=1
        x 10 "$R/whole/baseline.log" rm -rf "$w"
    else
        echo "no h5py or torch on this host: the baseline not run" | tee "$R/whole/baseline.log"
        rc=1
    fi
    x 150 "$R/pipeline.out" env OUT="$R/pipeline" RANKS=2 DD_RING_MIB=256 bash bench/gpu/pipeline.sh \
        "$B" "$N" || rc=1
    return $rc
}
part_hostdata() {
    x 245 "$R/hostdata.out" env OUT="$R/hostdata" GPUS=2 DD_HOSTDATA_TESTS=0 bash bench/gpu/hostdata.sh "$B"
}

if [ "${1:-}" = --part ]; then
    [ "$DRY" = 1 ] || echo $$ >"$R/$2.sid"
    # shellcheck source=/dev/null  # dist_run.sh, checked on its own
    . bench/gpu/dist_run.sh
    if [ "$DRY" = 1 ]; then # dist_run's command, printed (dist_run.sh: 300 s limit)
        # shellcheck disable=SC2317  # called by the parts
        dist_run() {
            local g=$1 tag=$2
            shift 2
            echo "timeout 300 env CUDA_VISIBLE_DEVICES=${DIST_DEVICES:-$(seq -s, 0 $((g - 1)))}" \
                "mpirun -n $g --bind-to none $B/dgemm-dist $* --check --json" \
                "$OUT/$DIST_JSON  >>${OUT#"$R"/}/$tag.txt"
        }
    fi
    "part_$2"
    exit $?
fi

pack() { [ "$DRY" = 1 ] || tar -czf "$OUT/twogpu.tgz" -C "$R" . 2>/dev/null; }
# part NAME LIMIT: the part under its limit (cut to what is left), in a
# session of its own, whatever of it is left afterwards killed
part() {
    local name=$1 lim=$2 left=$((DEADLINE - SECONDS)) rc
    [ "$lim" -le "$left" ] || lim=$left
    if [ "$lim" -lt 30 ]; then
        echo "not run: $left s left of $DEADLINE" | tee "$R/$name.rc"
        return
    fi
    if [ "$DRY" = 1 ]; then
        echo "== part $name: timeout $lim setsid --wait bash $0 --part $name, which runs:"
        bash "$0" --part "$name" | sed 's/^/    /'
        return
    fi
    echo "== $(date +%T) +$SECONDS s: part $name, limit $lim s" | tee -a "$R/steps.txt"
    timeout "$lim" setsid --wait bash "$0" --part "$name" >"$R/$name.out" 2>&1
    rc=$?
    [ -s "$R/$name.sid" ] && pkill -KILL -s "$(cat "$R/$name.sid")" 2>/dev/null
    echo "exit $rc$([ "$rc" = 124 ] && echo ' (time limit)')" | tee "$R/$name.rc"
    nvidia-smi --query-gpu=index,clocks.sm,power.draw,temperature.gpu --format=csv,noheader >>"$R/gpu.csv"
    pack
}

[ "$DRY" = 1 ] || mkdir -p "$R" || exit 1
if [ "$DRY" != 1 ]; then
    ngpu=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
    [ "$ngpu" -ge 2 ] || { echo "twogpu.sh: needs 2 GPUs, this host has ${ngpu:-0}" | tee "$R/steps.txt"; exit 2; }
    nvidia-smi --query-gpu=index,name,driver_version,clocks.max.sm,power.limit --format=csv >"$R/gpu.csv"
    nvidia-smi topo -m >"$R/topo.txt" 2>&1
    git log -1 --format='tree at %h %s' >"$R/steps.txt" 2>/dev/null
fi
echo "== set-up and build"
SO=$SL/libscalapack-openmpi.so.2.2.1
x 30 "$R/build.log" xz -dkf "$SO.xz" || x 30 "$R/build.log" python3 -c "$PY_UNXZ" "$SO.xz" "$SO"
x 5 "$R/build.log" ln -sf libscalapack-openmpi.so.2.2.1 "$SL/libscalapack-openmpi.so.2.2"
x 5 "$R/build.log" ln -sf libscalapack-openmpi.so.2.2 "$SL/libscalapack-openmpi.so"
x 5 "$R/build.log" rm -rf "$MP"
x 5 "$R/build.log" mkdir -p "$MP"
TAR=.gpu/cublasmp/cublasmp-0.7.tar.xz
x 60 "$R/build.log" tar -C "$MP" -xJf "$TAR" || x 90 "$R/build.log" python3 -c "$PY_UNTAR" "$TAR" "$MP"
if ! x 60 "$R/build.log" cmake -S . -B "$B" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DCMAKE_LIBRARY_PATH="$SL" -DDD_CUBLASMP_DIR="$MP/nvidia/cublasmp/cu13" ||
    ! x 240 "$R/build.log" cmake --build "$B" -j "$(nproc)"; then
    echo "build failed: $R/build.log" | tee -a "$R/steps.txt"
    tail -20 "$R/build.log"
    pack
    exit 1
fi
pack
for p in $PARTS; do
    case $p in
    native) part native 150 ;;
    ozaki) part ozaki 60 ;;
    cublasmp) part cublasmp 220 ;;
    whole) part whole 220 ;;
    hostdata) part hostdata 250 ;;
    *) echo "unknown part $p (native ozaki cublasmp whole hostdata)"; exit 2 ;;
    esac
done

echo "== summary"
if [ "$DRY" = 1 ]; then
    echo "python3 - $R >$OUT/twogpu.md  (the table; then tar -czf $OUT/twogpu.tgz -C $R .)"
    exit 0
fi
python3 - "$R" <<'PY' | tee "$OUT/twogpu.md" "$R/twogpu.md"
import json, os, sys
R = sys.argv[1]
def load(path):
    try:
        return [json.loads(l) for l in open(os.path.join(R, path)) if l.strip()]
    except (OSError, ValueError):
        return []
def tagged(d, name):  # dist_run's records by tag
    try:
        tags = open(os.path.join(R, d, name + ".tags")).read().split()
    except OSError:
        return {}
    return dict(zip(tags, load(os.path.join(d, name + ".jsonl"))))
def status(name):
    try:
        return open(os.path.join(R, name + ".rc")).read().strip()
    except OSError:
        return "not run"
def ok(r):
    return bool((r.get("check") or {}).get("passed"))
def met(v):
    return "**met**" if v else "not met"
rows = []  # item, figure, target, met
print("# Two GPUs, one call (bench/gpu/twogpu.sh, issue 37 items 1-5)\n")
print("Parts: " + ", ".join(f"{p} {status(p)}" for p in ("native", "ozaki", "cublasmp", "whole", "hostdata")) + "\n")

# 1. native scaling: every 2-GPU run against the slower of GPU 0 and GPU 1 alone
nat = tagged("native", "native")
print("## 1. Native kernels, 1 vs 2 GPUs (per GPU against the slower GPU alone)\n")
print("| type | shape | comm | TF/GPU, 2 GPUs | TF, GPU 0 / GPU 1 alone | slower | per GPU / slower | speed-up over slower | check |")
print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |")
for tag, r in nat.items():
    if r["ranks"] != 2:
        continue
    dt, _, comm, shape = tag.split("_")
    base = "16384" if shape == "weak" else shape
    one = [nat.get(f"{dt}_1gpu{d}_{base}") for d in (0, 1)]
    per = r["tflops"] / 2
    if all(one):
        slow = min((0, 1), key=lambda d: one[d]["tflops"])
        eff = per / one[slow]["tflops"]
        # strong: the same job's time on the slower GPU over its time on 2; weak: 2 x the per-GPU ratio
        sp = 2 * eff
        cell = (f"{one[0]['tflops']:.2f} / {one[1]['tflops']:.2f} | GPU {slow} | {100 * eff:.1f}% | "
                f"{sp:.2f}x")
    else:
        eff, cell = None, "n/a | n/a | n/a | n/a"
    shp = "16384x32768x16384 weak" if shape == "weak" else f"{shape} strong"
    chk = "PASSED" if ok(r) and all(o and ok(o) for o in one) else "FAILED or unchecked"
    print(f"| {dt} | {shp} | {comm} | {per:.2f} | {cell} | {chk} |")
    if dt == "f64" and comm == "ce" and shape == "16384" and eff is not None:
        rows.append(("1", "FP64 n = 16384 ce, per GPU / slower GPU alone", f"{100 * eff:.1f}%", ">= 98.4% (README, 12-01)", eff >= 0.984))
        rows.append(("1", "FP64 n = 16384 ce, strong scaling over the slower GPU", f"{2 * eff:.2f}x", ">= 1.96x (README, 12-01)", 2 * eff >= 1.96))
    if dt == "f64" and comm == "ce" and shape == "32768":
        rows.append(("1", "FP64 n = 32768 ce, TFLOP/s per GPU", f"{per:.2f}", ">= 55.2 (README, 12-01)", per >= 55.2))
if not nat:
    rows.append(("1", "native scaling", "not run", "", False))
print()

# 4. ozaki2-14 distributed
oz = tagged("ozaki", "ozaki")
if "ozaki_2gpu_ce" in oz and "ozaki_1gpu0" in oz and "ozaki_1gpu1" in oz:
    one = [oz["ozaki_1gpu0"]["tflops"], oz["ozaki_1gpu1"]["tflops"]]
    slow = one.index(min(one))
    eff = oz["ozaki_2gpu_ce"]["tflops"] / 2 / one[slow]
    print(f"## 4. ozaki2-14, n = 32768\n\n2 GPUs {oz['ozaki_2gpu_ce']['tflops'] / 2:.2f} TF/GPU; "
          f"alone GPU 0 {one[0]:.2f}, GPU 1 {one[1]:.2f} (slower: GPU {slow}); checks "
          f"{'PASSED' if all(ok(r) for r in oz.values()) else 'FAILED or unchecked'}\n")
    rows.append(("4", "ozaki2-14 n = 32768, per GPU on 2 / slower GPU alone", f"{100 * eff:.1f}%", ">= 97%", eff >= 0.97))
else:
    rows.append(("4", "ozaki2-14 distributed", "not run", ">= 97%", False))

# 2. cuBLASMp
mp = load("cublasmp/cublasmp.jsonl")
if mp:
    print("## 2. cuBLASMp on the same GPUs (cublasmp/cublasmp.md)\n")
    print("| GPUs | scaling | type | n | dgemm-dist kernel | dgemm-dist TF | cuBLASMp TF | ratio |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in mp:
        print(f"| {r['gpus']} | {r['scaling']} | {r['dtype']} | {r['n']} | {r['dd_kernel']} | "
              f"{r['dd_tflops']:.1f} | {r['mp_tflops']:.1f} | {r['ratio']:.3f} |")
        if r["gpus"] == 2:
            rows.append(("2", f"2 GPUs {r['scaling']} {r['dtype']} n = {r['n']} {r['dd_kernel']}: dgemm-dist / cuBLASMp",
                         f"{r['ratio']:.3f}", ">= 1.05", r["ratio"] >= 1.05))
    print()
if not any(r["gpus"] == 2 for r in mp):
    rows.append(("2", "cuBLASMp side by side on 2 GPUs", "not run", ">= 1.05", False))

# 3. whole run: pipeline.sh's runs on 2 GPUs against the h5py + PyTorch wall
pl = load("pipeline/pipeline.jsonl")
try:
    walls = [l.split() for l in open(os.path.join(R, "pipeline/walls.txt")) if l.strip()]
except OSError:
    walls = []
try:
    wpy = float(open(os.path.join(R, "whole/baseline.wall")).read().split()[-1])
except (OSError, ValueError, IndexError):
    wpy = None
pl = pl[-len(walls):] if walls else []
for (name, t), r in zip(walls, pl):
    if name == "phased":  # the reference (pipeline/pipeline.md), not the target's run
        continue
    ph = {k: v["max"] for k, v in r["phases"].items()}
    g = lambda k: ph.get(k, 0.0)
    target = 1.25 * (g("setup") + max(g("read"), g("multiply"), g("write")) + g("teardown"))
    t = float(t)
    rows.append(("3", f"file to file n = 32768, 2 GPUs, {name}: wall (s)", f"{t:.2f}", f"<= {target:.2f}", t <= target))
    if wpy:
        rows.append(("3", f"{name}: h5py + PyTorch 1 GPU ({wpy:.2f} s) / wall", f"{wpy / t:.2f}x", ">= 6x", wpy / t >= 6))
if not walls:
    rows.append(("3", "whole run on 2 GPUs", "not run", "", False))
if wpy is None:
    rows.append(("3", "h5py + PyTorch baseline", "not run", "", False))

# 5. drop-in on host data against cuBLASXt pinned
hd = load("hostdata/hostdata.jsonl")
dd = [r for r in hd if r.get("bench") == "pdgemm"]
xt = [r for r in hd if r.get("tool") == "cublasxt-bench"]
for dt in ("f64", "f32"):
    mine = [r["seconds"] for r in dd if r["dtype"] == dt]
    pin = [r["time_median"] for r in xt if r["dtype"] == dt and r["host_memory"] == "pinned"]
    pag = [r["time_median"] for r in xt if r["dtype"] == dt and r["host_memory"] == "pageable"]
    if mine and pin:
        rows.append(("5", f"drop-in {dt}, pageable, 2 ranks (s; cuBLASXt pageable best "
                     f"{min(pag) if pag else float('nan'):.3f})", f"{min(mine):.3f}",
                     f"<= {min(pin):.3f} (cuBLASXt pinned best)", min(mine) <= min(pin)))
if not dd:
    rows.append(("5", "drop-in on host data", "not run", "", False))

print("## Targets\n")
print("| item | figure | measured | target | |")
print("| --- | --- | --- | --- | --- |")
for item, what, v, tgt, m in rows:
    print(f"| {item} | {what} | {v} | {tgt} | {met(m) if v != 'not run' else 'not run'} |")
PY
pack
