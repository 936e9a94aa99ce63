#!/usr/bin/env bash
# tests/python/easybuild.sh SRC WORK VERSION — dgemm-dist installed the way
# sites install it: EasyBuild (from PyPI, into a venv) builds
# easybuild/dgemm-dist-VERSION.eb from a tarball of the repository (its
# working tree's files that git holds) with the system toolchain,
# CPU only, into WORK, and writes an Lmod module (Lmod from Debian); the
# module is then loaded as a user would and used: dgemm-dist --version,
# dgemm-dist --size 500 (its check PASSED), examples/block_gemm.c compiled
# with the module's pkg-config and run at 2 ranks on the module's library,
# and the Python package (python/) pip-installed against the module, its
# h5_gemm.py example checked.
# Exit 77 (skipped) when PyPI cannot be reached: never a pass without eb.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_MPIRUN
src=$(cd "${1:?usage: $0 SRC WORK VERSION}" && pwd)
work=${2:?usage: $0 SRC WORK VERSION}
ver=${3:?usage: $0 SRC WORK VERSION}
ec=$src/easybuild/dgemm-dist-$ver.eb
[[ -f $ec ]] || { echo "FAIL: no easybuild/dgemm-dist-$ver.eb for project(VERSION) $ver (copy the last one, set its version)"; exit 1; }
grep -q "^version = '$ver'$" "$ec" || { echo "FAIL: $ec does not say version = '$ver'"; exit 1; }

lmod_init=${LMOD_PKG:-/usr/share/lmod/lmod}/init/bash
[[ -f $lmod_init ]] || { echo "FAIL: no Lmod ($lmod_init): apt-get install lmod (tests/install-deps.sh)"; exit 1; }
py=""
for c in /usr/bin/python3 python3; do
    if command -v "$c" >/dev/null 2>&1 && "$c" -c 'import venv, ensurepip, numpy, mpi4py, h5py' 2>/dev/null; then
        py=$c
        break
    fi
done
[[ -n $py ]] || { echo "FAIL: no python3 with venv, numpy, mpi4py and h5py (tests/install-deps.sh)"; exit 1; }

rm -rf "$work"
mkdir -p "$work/sources" "$work/tmp"
# EasyBuild from PyPI: its framework and easyblocks (not the 10,000 easyconfigs)
"$py" -m venv "$work/eb-venv"
if ! timeout 240 "$work/eb-venv/bin/pip" install --disable-pip-version-check -q \
    easybuild-framework easybuild-easyblocks >"$work/pip.log" 2>&1; then
    cat "$work/pip.log"
    if grep -qiE "connection|resolution|unreachable|timed out|No matching distribution|Could not find a version" "$work/pip.log"; then
        echo "skipped: EasyBuild cannot be installed from PyPI here"
        exit 77
    fi
    echo "FAIL: pip install easybuild-framework easybuild-easyblocks"
    exit 1
fi
export PATH=$work/eb-venv/bin:$PATH EB_PYTHON=$work/eb-venv/bin/python
eb --version

# the source tarball: the files of the working tree that git would hold
# (tracked and not ignored, as the build under test sees them; in a clean
# checkout that is git archive HEAD), under dgemm-dist-VERSION/
git -C "$src" ls-files -co --exclude-standard | while IFS= read -r f; do
    [[ -f $src/$f ]] && printf '%s\n' "$f"
done >"$work/sources/files"
tar -C "$src" -czf "$work/sources/dgemm-dist-$ver.tar.gz" --transform "s,^,dgemm-dist-$ver/," \
    -T "$work/sources/files"

# shellcheck disable=SC1090
. "$lmod_init"
root=()
[[ $(id -u) -ne 0 ]] || root=(--allow-use-as-root-and-accept-consequences)
t0=$SECONDS
if ! eb "$ec" --sourcepath="$work/sources" --installpath="$work/install" --buildpath="$work/build" \
    --prefix="$work/eb" --tmpdir="$work/tmp" --modules-tool=Lmod --module-syntax=Lua \
    --parallel="${DD_JOBS:-2}" --try-amend=configopts="-DBUILD_TESTING=OFF -DDD_ENABLE_CUDA=OFF" \
    "${root[@]}" >"$work/eb.log" 2>&1; then
    tail -40 "$work/eb.log"
    find "$work" -name 'easybuild-dgemm-dist-*.log' -exec tail -60 {} \; 2>/dev/null | head -80
    echo "FAIL: eb $ec"
    exit 1
fi
grep -E "^== (COMPLETED|Build succeeded)|running command|result for command" "$work/eb.log"
echo "eb built and installed it in $((SECONDS - t0)) s"

# as a user: load the module, then use what it gives
module use "$work/install/modules/all"
module load "dgemm-dist/$ver"
module list 2>&1
bin=$(command -v dgemm-dist)
[[ $bin == "$work/install/"* ]] || { echo "FAIL: dgemm-dist is $bin, not the module's"; exit 1; }
dgemm-dist --version
dgemm-dist --version | grep -q "dgemm-dist $ver" || { echo "FAIL: --version is not $ver"; exit 1; }
out=$($DD_MPIRUN -n 2 dgemm-dist --size 500 --backend cpu 2>&1) || { echo "$out"; echo "FAIL: dgemm-dist --size 500"; exit 1; }
echo "$out" | tail -3
grep -q "PASSED" <<<"$out" || { echo "FAIL: dgemm-dist --size 500 did not pass its check"; exit 1; }
# a program built against the module's library: pkg-config alone, no rpath
# (the module's LD_LIBRARY_PATH finds the library)
# shellcheck disable=SC2046
mpicc -std=c11 -O2 -o "$work/block_gemm" "$src/examples/block_gemm.c" $(pkg-config --cflags --libs dgemm-dist) -lm
lib=$(ldd "$work/block_gemm" | awk '/libdgemm-dist\.so/ {print $3}')
echo "block_gemm loads $lib"
[[ $lib == "$work/install/"* ]] || { echo "FAIL: block_gemm loads '$lib', not the module's library"; exit 1; }
out=$($DD_MPIRUN -n 2 "$work/block_gemm" 2>&1) || { echo "$out"; echo "FAIL: block_gemm"; exit 1; }
echo "$out"
grep -qx PASSED <<<"$out" || { echo "FAIL: block_gemm did not print PASSED"; exit 1; }
# the Python package against the module (its PKG_CONFIG_PATH), h5_gemm.py checked
"$py" -m venv --system-site-packages "$work/py-venv"
# python/ without what a build in it left (the README's pip install builds there)
tar -C "$src" --exclude=python/build --exclude='*.egg-info' --exclude=__pycache__ -cf - python | tar -C "$work" -xf -
env -u DGEMM_DIST_DIR "$work/py-venv/bin/pip" install --no-build-isolation --no-index "$work/python" \
    >"$work/pip-python.log" 2>&1 || { cat "$work/pip-python.log"; echo "FAIL: pip install ./python against the module"; exit 1; }
core=$(ls "$work"/py-venv/lib/python3*/site-packages/dgemm_dist/_core*.so)
lib=$(ldd "$core" | awk '/libdgemm-dist\.so/ {print $3}')
echo "dgemm_dist._core loads $lib"
[[ $lib == "$work/install/"* ]] || { echo "FAIL: the Python package loads '$lib', not the module's library"; exit 1; }
dgemm-dist gen --out "$work/mats.h5" -m 200 -n 150 -k 100 >/dev/null
out=$(cd "$work" && PYTHONDONTWRITEBYTECODE=1 $DD_MPIRUN -n 2 "$work/py-venv/bin/python" \
    "$src/python/examples/h5_gemm.py" --in mats.h5 --out c.h5 --backend cpu --verify 2>&1) ||
    { echo "$out"; echo "FAIL: h5_gemm.py against the module"; exit 1; }
echo "$out"
grep -q "check residual .* PASSED" <<<"$out" || { echo "FAIL: h5_gemm.py did not pass"; exit 1; }
echo "PASS (easybuild): eb installed dgemm-dist/$ver with an Lmod module; --version, --size 500, block_gemm and the Python package on the module PASSED"
