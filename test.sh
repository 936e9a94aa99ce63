#!/usr/bin/env bash
# Install what is missing, build, and run the whole test suite with ctest.
# GPU tests report "skipped" where no GPU exists.
#   ./test.sh [ctest options]      e.g. ./test.sh -L mpi
set -euo pipefail
cd "$(dirname "$0")"
bash tests/install-deps.sh
. tests/env.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >build.log 2>&1 || { cat build.log; exit 1; }
cmake --build build -j "$DD_JOBS" >>build.log 2>&1 || { tail -50 build.log; exit 1; }
cd build
ctest --output-on-failure -j "$DD_JOBS" "$@"
