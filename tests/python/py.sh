#!/usr/bin/env bash
# tests/python/py.sh — the Python package as a user installs and runs it.
#   py.sh tree SRC BUILD WORK        pip install ./python against the build tree
#                                    (DGEMM_DIST_DIR=BUILD) into the venv WORK/venv
#   py.sh installed SRC BUILD WORK   cmake --install into WORK/prefix, then pip install
#                                    ./python found by pkg-config alone into WORK/venv;
#                                    the extension must load the prefix's library
#   py.sh built SRC WORK             pip install ./python in a checkout with no build and no
#                                    library named: pip builds the library into the package
#   py.sh pytest SRC WORK RANKS      tests/python's pytest suites under mpirun
#   py.sh gpu SRC WORK RANKS BUILD   the GPU tests (test_gpu_*), where the CUDA driver
#                                    sees a GPU (else exit 77); CuPy's where it is installed;
#                                    its own venv in WORK, against BUILD
# Every install ends as a user's would: dgemm-dist --version, the package's
# version, and small checked runs (python/examples/h5_gemm.py on a file
# dgemm-dist gen wrote, the library's check and NumPy's A @ B both PASSED;
# python -m dgemm_dist --version and --size 200).
# The venv uses the system's numpy, mpi4py and h5py (--system-site-packages;
# Debian's packages, tests/install-deps.sh) and pip needs no network
# (--no-build-isolation --no-index).  DD_PYTHON: the interpreter to use
# (default: the first of /usr/bin/python3 and python3 with those modules).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_MPIRUN DD_BIN
mode=${1:?usage: $0 tree|installed|pytest|gpu ...}
src=$(cd "${2:?SRC}" && pwd)
shift 2

# pick_python [MODULES]: the first interpreter with MODULES (default: all the
# tests use)
pick_python() {
    local c mods=${1:-numpy, mpi4py, h5py, pytest, venv}
    for c in ${DD_PYTHON:-} /usr/bin/python3 python3; do
        command -v "$c" >/dev/null 2>&1 || continue
        if "$c" -c "import $mods" 2>/dev/null; then
            echo "$c"
            return 0
        fi
    done
    echo "FAIL: no python3 with $mods (Debian: python3-numpy python3-mpi4py python3-h5py" \
        "python3-pytest python3-venv, as tests/install-deps.sh installs them)" >&2
    return 1
}

# make_venv WORK [MODULES]: WORK/venv over the system's site-packages
make_venv() {
    local py
    py=$(pick_python "${2:-}")
    rm -rf "$1/venv"
    "$py" -m venv --system-site-packages "$1/venv"
    echo "venv from $py ($("$py" --version 2>&1))"
}

# copy_python WORK: python/ into WORK/python, without what a build in it left
# (the README's pip install builds in python/, maybe at the same time)
copy_python() {
    tar -C "$src" --exclude=python/build --exclude='*.egg-info' --exclude=__pycache__ -cf - python |
        tar -C "$1" -xf -
}

# pip_install WORK [VAR=VALUE...]: a copy of python/ installed into the venv
# (a copy: pip builds in the folder it is given)
pip_install() {
    local work=$1
    shift
    rm -rf "$work/python"
    copy_python "$work"
    env "$@" "$work/venv/bin/pip" install --no-build-isolation --no-index "$work/python" >"$work/pip.log" 2>&1 ||
        { cat "$work/pip.log"; echo "FAIL: pip install ./python"; return 1; }
}

# user_checks WORK DGEMM_DIST: --version, the package's version, a checked run
user_checks() {
    local work=$1 bin=$2 py=$1/venv/bin/python v pv out
    v=$("$bin" --version | head -1)
    echo "$bin --version: $v"
    (cd "$work" && "$py" -c 'import dgemm_dist; print(dgemm_dist.version(), dgemm_dist.__version__)') >"$work/pyver"
    pv=$(cat "$work/pyver")
    echo "dgemm_dist.version(), __version__: $pv"
    read -r a b <<<"$pv"
    [[ $a == "$b" && $v == *"$a"* ]] || { echo "FAIL: versions differ: program '$v', library $a, package $b"; return 1; }
    rm -f "$work/mats.h5" "$work/c.h5"
    "$bin" gen --out "$work/mats.h5" -m 300 -n 200 -k 250 --seed 5 >/dev/null
    out=$(cd "$work" && $DD_MPIRUN -n 2 "$py" "$src/python/examples/h5_gemm.py" --in mats.h5 --out c.h5 --backend cpu --verify 2>&1) ||
        { echo "$out"; echo "FAIL: h5_gemm.py"; return 1; }
    echo "$out"
    if ! grep -q "check residual .* PASSED" <<<"$out" || ! grep -q "difference .* ok" <<<"$out"; then
        echo "FAIL: the checked run did not pass"
        return 1
    fi
    # the package's own check: python -m dgemm_dist --version, --size
    (cd "$work" && "$py" -m dgemm_dist --version) || { echo "FAIL: python -m dgemm_dist --version"; return 1; }
    out=$(cd "$work" && $DD_MPIRUN -n 2 "$py" -m dgemm_dist --size 200 --backend cpu 2>&1) ||
        { echo "$out"; echo "FAIL: python -m dgemm_dist --size 200"; return 1; }
    echo "$out"
    grep -q "PASSED" <<<"$out" || { echo "FAIL: python -m dgemm_dist --size 200 did not pass"; return 1; }
}

case $mode in
tree)
    build=$(cd "$1" && pwd) work=$2
    mkdir -p "$work"
    make_venv "$work"
    pip_install "$work" "DGEMM_DIST_DIR=$build"
    user_checks "$work" "$build/dgemm-dist"
    echo "PASS (python tree): pip install ./python against $build"
    ;;
installed)
    build=$(cd "$1" && pwd) work=$2
    rm -rf "$work"
    mkdir -p "$work"
    cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
    pc=$(dirname "$(ls "$work"/prefix/lib*/pkgconfig/dgemm-dist.pc)")
    make_venv "$work"
    # nothing points at the build tree: pkg-config alone finds the library
    pip_install "$work" -u DGEMM_DIST_DIR "PKG_CONFIG_PATH=$pc"
    core=$(ls "$work"/venv/lib/python3*/site-packages/dgemm_dist/_core*.so)
    lib=$(ldd "$core" | awk '/libdgemm-dist\.so/ {print $3}')
    echo "$core loads $lib"
    [[ $lib == "$work/prefix/"* ]] || { echo "FAIL: the extension loads '$lib', not the prefix's library"; exit 1; }
    user_checks "$work" "$work/prefix/bin/dgemm-dist"
    echo "PASS (python installed): pip install ./python against the prefix $work/prefix"
    ;;
built)
    work=$1
    rm -rf "$work"
    mkdir -p "$work/repo"
    # a checkout without a build: the files of the working tree that git holds
    git -C "$src" ls-files -co --exclude-standard | while IFS= read -r f; do
        [[ -f $src/$f ]] && printf '%s\n' "$f"
    done | tar -C "$src" -cf - -T - | tar -C "$work/repo" -xf -
    make_venv "$work"
    # nothing names a library: pip install builds it (CPU only here) into the package
    t0=$SECONDS
    env -u DGEMM_DIST_DIR -u PKG_CONFIG_PATH DGEMM_DIST_CMAKE_ARGS=-DDD_ENABLE_CUDA=OFF \
        "$work/venv/bin/pip" install --no-build-isolation --no-index "$work/repo/python" >"$work/pip.log" 2>&1 ||
        { tail -40 "$work/pip.log"; echo "FAIL: pip install ./python building the library"; exit 1; }
    echo "pip install built the library and the package in $((SECONDS - t0)) s"
    core=$(ls "$work"/venv/lib/python3*/site-packages/dgemm_dist/_core*.so)
    lib=$(ldd "$core" | awk '/libdgemm-dist\.so/ {print $3}')
    echo "$core loads $lib"
    [[ $lib == "$(dirname "$core")/"* ]] || { echo "FAIL: the extension loads '$lib', not the library in the package"; exit 1; }
    rm -rf "$work/repo"  # the package stands alone
    user_checks "$work" "$DD_BIN"
    echo "PASS (python built): pip install ./python built libdgemm-dist into the package"
    ;;
pytest | gpu)
    work=$1 n=$2
    py=$work/venv/bin/python
    if [[ $mode == gpu ]]; then
        # on its own (the GPU host may lack the CPU tests' Python packages:
        # then skipped, naming them): a venv against the build tree in WORK
        build=$3
        mods="numpy, mpi4py, pytest, venv, setuptools"
        sys_py=$(pick_python "$mods" 2>/dev/null) || { echo "skipped: $(pick_python "$mods" 2>&1)"; exit 77; }
        "$sys_py" -c 'import os, sysconfig; os.stat(os.path.join(sysconfig.get_paths()["include"], "Python.h"))' \
            2>/dev/null || { echo "skipped: $sys_py has no Python.h (python3-dev) to build the extension"; exit 77; }
        reason=$(cd "$src/tests/python" && PYTHONDONTWRITEBYTECODE=1 "$sys_py" -c \
            'import cuda_driver; print(cuda_driver.available() or "")' 2>&1) ||
            reason="the CUDA driver check failed: $(tail -1 <<<"$reason")"
        if [[ -n $reason ]]; then
            echo "skipped: $reason"
            exit 77
        fi
        mkdir -p "$work"
        make_venv "$work" "$mods"
        # the venv sees the system's packages as its own build will (the GPU
        # host's python3 found mpi4py where its venv did not)
        missing=$("$py" -c 'import numpy, mpi4py, setuptools' 2>&1 | tail -1) ||
            { echo "skipped: a venv of $sys_py cannot import the build's needs: $missing"; exit 77; }
        pip_install "$work" "DGEMM_DIST_DIR=$build"
    fi
    [[ -x $py ]] || { echo "FAIL: no $py (the python_pip_install_in_tree test makes it)"; exit 1; }
    args=(-q -p no:cacheprovider --color=no -rs "$src/tests/python")
    [[ $mode == pytest ]] || args+=(-k test_gpu_)
    # each rank in the work folder (the installed package, not the source, is
    # imported), writing no bytecode into the source tree
    cd "$work"
    export PYTHONDONTWRITEBYTECODE=1
    $DD_MPIRUN -n "$n" "$py" -m pytest "${args[@]}"
    ;;
*)
    echo "py.sh: unknown mode $mode" >&2
    exit 2
    ;;
esac
