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
# One test more than cores at once: the suite waits on MPI start-ups, timers
# and its sanitized tree's own ctest more than it computes (at one per core
# it kept 2 cores 56% busy).  DD_TEST_JOBS overrides.
ctest --output-on-failure -j "${DD_TEST_JOBS:-$((DD_JOBS + 1))}" "$@"
