#!/usr/bin/env bash
# tests/sanitize/run.sh SOURCE_DIR TREE [LABELS] — the library and the CLI
# built with AddressSanitizer and UndefinedBehaviorSanitizer (host code,
# CPU backend) in TREE, and the labels (default api|faults|unit|memsafe)
# run there.
# Every sanitizer report goes to a file under TREE/reports as well as to
# the test's own output, so a report fails this test even inside a case
# that expected the program to fail (and whose status it would mask).
set -uo pipefail
src=$1 tree=$2 labels=${3:-api|faults|unit|memsafe}
jobs=${DD_JOBS:-$(nproc)}
mkdir -p "$tree"
if ! cmake -S "$src" -B "$tree" -DDD_SANITIZE=address,undefined -DCMAKE_BUILD_TYPE=Debug \
    -DCMAKE_C_FLAGS=-O1 >"$tree/configure.log" 2>&1; then
    cat "$tree/configure.log"
    exit 1
fi
if ! cmake --build "$tree" -j "$jobs" >"$tree/build.log" 2>&1; then
    tail -40 "$tree/build.log"
    exit 1
fi
reports=$tree/reports
rm -rf "$reports"
mkdir -p "$reports"
# Leak checking is off: Open MPI and HDF5 keep allocations to exit, and
# their reports would drown the library's.  exitcode 86 makes a report
# distinguishable from the program's own statuses (1, 2, 3).
export ASAN_OPTIONS="detect_leaks=0:halt_on_error=1:exitcode=86:log_path=$reports/asan"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:exitcode=86:log_path=$reports/ubsan"
cd "$tree" || exit 1
# The ops sweep's 4-rank run repeats the 1- and 2-rank runs' layouts on more
# ranks at a third of this test's time under the sanitizers; it runs in the
# plain tree.  The Python tests (label python) load the library into an
# uninstrumented interpreter, which ASan's runtime refuses: plain tree only.
ctest -L "$labels" -LE python -E '^api_ops_sweep_every_entry_4rank$' -j "$jobs" --output-on-failure --timeout 300
rc=$?
found=$(find "$reports" -type f | head -20)
if [ -n "$found" ]; then
    echo "sanitizer reports:"
    for f in $found; do
        echo "== $f"
        head -40 "$f"
    done
    exit 1
fi
if [ "$rc" -ne 0 ]; then
    echo "sanitize: ctest -L '$labels' failed in the sanitized tree"
    exit 1
fi
echo "sanitize: ctest -L '$labels' passed with no sanitizer report"
