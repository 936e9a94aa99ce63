#!/usr/bin/env bash
# run-gpu.sh — build the kernels, gemm-bench and kernel-test with nvcc alone
# (no MPI, HDF5 or CMake needed), then check and time them.
#
#   kernels/run-gpu.sh [--build-only] [--no-test] [--no-bench] [-- gemm-bench options]
#
# BUILD (default /tmp/dd-kernels) receives the objects and programs;
# OUT (default $BUILD/out) the logs: resources.txt (registers, shared memory,
# spills), kernel-test.txt, bench.txt, bench.jsonl, and sass-summary.txt
# (instruction counts of the production kernels) where cuobjdump exists.
# ARCH (default 90) is the SM target.  The kernels compiled are those of
# kernels/kernels.def (the file named by each DD_KERNEL line).
set -euo pipefail
export NCCL_NVLS_ENABLE=0

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
BUILD=${BUILD:-/tmp/dd-kernels}
OUT=${OUT:-$BUILD/out}
ARCH=${ARCH:-90}
NVCC=${NVCC:-nvcc}
build_only=0 test=1 bench=1
while [ $# -gt 0 ]; do
  case "$1" in
    --build-only) build_only=1 ;;
    --no-test) test=0 ;;
    --no-bench) bench=0 ;;
    --) shift; break ;;
    *) echo "run-gpu.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$BUILD" "$OUT"

flags=(-O3 -std=c++17 -lineinfo "-gencode=arch=compute_$ARCH,code=[compute_$ARCH,sm_$ARCH]"
       -Xcompiler=-Wall,-Wextra -Xptxas=-v -I"$here" -I"$root/src/base" -I"$root/include")

# The kernel list: the first field of each DD_KERNEL(...) line of kernels.def.
mapfile -t kernels < <(sed -n 's/^DD_KERNEL(\([A-Za-z0-9_]*\),.*/\1/p' "$here/kernels.def" | awk '!seen[$0]++')
if [ ${#kernels[@]} = 0 ]; then
  echo "run-gpu.sh: $here/kernels.def lists no kernel" >&2
  exit 1
fi
srcs=("${kernels[@]}" registry)
t0=$(date +%s)
pids=()
for s in "${srcs[@]}"; do
  "$NVCC" "${flags[@]}" -c "$here/$s.cu" -o "$BUILD/$s.o" >"$BUILD/$s.log" 2>&1 & pids+=($!)
done
# dd_json_str (src/base/json.c), for gemm-bench's JSON Lines
"$NVCC" -O3 -Xcompiler=-Wall,-Wextra -I"$root/src/base" -I"$root/include" -c "$root/src/base/json.c" -o "$BUILD/json.o" >"$BUILD/json.log" 2>&1 & pids+=($!)
# NVML telemetry opened at run time (src/base/telemetry.c), for gemm-bench's rows
"$NVCC" -O3 -Xcompiler=-Wall,-Wextra -I"$root/src/base" -I"$root/include" -c "$root/src/base/telemetry.c" -o "$BUILD/telemetry.o" >"$BUILD/telemetry.log" 2>&1 & pids+=($!)
# ozaki2's own INT8 GEMM: wgmma exists only in sm_90a (kernels/CMakeLists.txt)
i8flags=("${flags[@]}")
if [ "$ARCH" = 90 ]; then
  i8flags=("${flags[@]/compute_$ARCH,code=\[compute_$ARCH,sm_$ARCH\]/compute_90a,code=sm_90a}" -DDD_I8_SM90A=1)
fi
"$NVCC" "${i8flags[@]}" -c "$here/i8gemm.cu" -o "$BUILD/i8gemm.o" >"$BUILD/i8gemm.log" 2>&1 & pids+=($!)
"$NVCC" "${flags[@]}" -c "$here/gemm_bench.cu" -o "$BUILD/gemm_bench.o" >"$BUILD/gemm_bench.log" 2>&1 & pids+=($!)
"$NVCC" "${flags[@]}" -c "$root/tests/gpu/test_kernels.cu" -o "$BUILD/test_kernels.o" >"$BUILD/test_kernels.log" 2>&1 & pids+=($!)
fail=0
for p in "${pids[@]}"; do wait "$p" || fail=1; done
cat "$BUILD"/*.log >"$BUILD/ptxas.txt"
if [ $fail = 1 ]; then
  grep -B2 -A5 -i "error" "$BUILD/ptxas.txt" >&2 || cat "$BUILD/ptxas.txt" >&2
  echo "run-gpu.sh: compilation failed" >&2
  exit 1
fi
objs=()
for s in "${srcs[@]}" i8gemm; do objs+=("$BUILD/$s.o"); done
ar rcs "$BUILD/libdd_kernels.a" "${objs[@]}"
"$NVCC" -arch=sm_$ARCH "$BUILD/gemm_bench.o" "$BUILD/json.o" "$BUILD/telemetry.o" "$BUILD/libdd_kernels.a" -lcublas -ldl -lpthread -o "$BUILD/gemm-bench"
"$NVCC" -arch=sm_$ARCH "$BUILD/test_kernels.o" "$BUILD/libdd_kernels.a" -lcublas -o "$BUILD/kernel-test"
echo "run-gpu.sh: built in $(( $(date +%s) - t0 )) s into $BUILD"

# Resource use of every kernel, one line each: name, registers, smem, spills.
awk '/Compiling entry function/ { match($0, /'"'"'[^'"'"']*'"'"'/); name = substr($0, RSTART+1, RLENGTH-2) }
     /spill stores/ { spill = $0; sub(/^[ \t]+/, "", spill) }
     /Used [0-9]+ registers/ { use = $0; sub(/^.*Used/, "Used", use); print name ": " use "; " spill }' \
  "$BUILD/ptxas.txt" | sed 's/_ZN[0-9]*_GLOBAL__N__[0-9a-f_]*_//' >"$OUT/resources.txt"

if command -v cuobjdump >/dev/null 2>&1; then
  for s in 07_warptile 08_dmma 10_dmma_tma; do
    echo "== $s"
    cuobjdump -sass "$BUILD/$s.o" | grep -oE '\b(DMMA[.0-9x]*|FFMA|DFMA|LDS(\.[0-9]+)?|LDGSTS[.A-Z0-9]*|STG[.A-Z0-9]*|LDL|STL|BAR[.A-Z]*)\b' | sort | uniq -c
  done >"$OUT/sass-summary.txt" 2>&1 || true
fi
[ $build_only = 1 ] && exit 0

command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,power.draw,temperature.gpu --format=csv | tee "$OUT/nvidia-smi.txt" || true

rc=0
if [ $test = 1 ]; then
  set +e
  "$BUILD/kernel-test" 2>&1 | tee "$OUT/kernel-test.txt"
  trc=${PIPESTATUS[0]}
  set -e
  echo "run-gpu.sh: kernel-test exit $trc"
  [ $trc != 0 ] && rc=$trc
fi
if [ $bench = 1 ]; then
  set +e
  "$BUILD/gemm-bench" --json "$OUT/bench.jsonl" "$@" 2>&1 | tee "$OUT/bench.txt"
  brc=${PIPESTATUS[0]}
  set -e
  echo "run-gpu.sh: gemm-bench exit $brc"
  [ $brc != 0 ] && rc=$brc
fi
exit $rc
