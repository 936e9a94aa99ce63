#!/usr/bin/env bash
# Install what is missing, build, and run the main job on a small generated
# problem: CUDA where every rank has a GPU, the CPU backend otherwise.
#   ./demo.sh [RANKS]        (default 4)
set -euo pipefail
cd "$(dirname "$0")"
bash tests/install-deps.sh
. tests/env.sh
ranks="${1:-4}"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >build.log 2>&1 || { cat build.log; exit 1; }
cmake --build build -j "$DD_JOBS" >>build.log 2>&1 || { tail -50 build.log; exit 1; }
mpirun -n "$ranks" --oversubscribe build/dgemm-dist gen --out build/demo-in.h5 \
    -m 3000 -n 2000 -k 1500 --seed 7 --force
mpirun -n "$ranks" --oversubscribe build/dgemm-dist --in build/demo-in.h5 --out build/demo-c.h5 \
    --force --check --repeat 3 --json build/demo.jsonl
