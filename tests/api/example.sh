#!/usr/bin/env bash
# tests/api/example.sh — the installed library as a client sees it.
#   example.sh install BUILD_DIR SOURCE_DIR WORK   install into WORK/prefix,
#                                                  build examples/ there with find_package
#   example.sh run WORK RANKS [shared|static|plan] run block_gemm (or plan_stream) under mpirun
#   example.sh pkgconfig SOURCE_DIR WORK           compile with pkg-config alone, run at 2 ranks
#   example.sh relink WORK RANKS                   the plain ScaLAPACK program, linked against
#                                                  ScaLAPACK, then relinked with the drop-in first:
#                                                  both PASSED, only the second served by dgemm-dist
# DD_MPIRUN: the launcher prefix (mpirun with --oversubscribe ...).
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
mode=${1:?usage: $0 install|run|pkgconfig|relink ...}
shift
[ "$mode" = install ] || dd_need DD_MPIRUN
case $mode in
install)
    build=$1 src=$2 work=$3
    rm -rf "$work"
    mkdir -p "$work"
    # a sanitized build (DD_SANITIZE) installs instrumented libraries: its
    # clients link the sanitizer runtime too
    san=$(sed -n 's/^DD_SANITIZE:[A-Z]*=//p' "$build/CMakeCache.txt")
    echo "${san:+-fsanitize=$san}" >"$work/sanitize-flags"
    cmake --install "$build" --prefix "$work/prefix" >"$work/install.log"
    for h in dgemm_dist.h dgemm_dist_plan.h dgemm_dist_scalapack.h dgemm_dist_tool.h \
        dgemm_dist_version.h dgemm_dist_telemetry.h; do
        test -f "$work/prefix/include/$h" || { echo "not installed: the header $h" >&2; exit 1; }
    done
    test -f "$work/prefix/bin/dgemm-dist" || { echo "not installed: dgemm-dist" >&2; exit 1; }
    ls "$work"/prefix/lib*/libdgemm-dist.so "$work"/prefix/lib*/libdgemm-dist.a \
        "$work"/prefix/lib*/libdgemm-dist-scalapack.so "$work"/prefix/lib*/libdgemm-dist-scalapack.a \
        "$work"/prefix/lib*/pkgconfig/dgemm-dist.pc "$work"/prefix/lib*/pkgconfig/dgemm-dist-scalapack.pc \
        "$work"/prefix/lib*/cmake/dgemm-dist/dgemm-distConfig.cmake
    cmake -S "$src/examples" -B "$work/ex" -DCMAKE_PREFIX_PATH="$work/prefix" \
        -DCMAKE_BUILD_TYPE=Release -DCMAKE_C_FLAGS="$(cat "$work/sanitize-flags")" \
        -DCMAKE_EXE_LINKER_FLAGS="$(cat "$work/sanitize-flags")" \
        >"$work/ex-configure.log" || { cat "$work/ex-configure.log"; exit 1; }
    cmake --build "$work/ex" -j2
    ;;
run)
    work=$1 n=$2 kind=${3:-shared}
    exe=$work/ex/block_gemm
    [ "$kind" = static ] && exe=$work/ex/block_gemm_static
    [ "$kind" = plan ] && exe=$work/ex/plan_stream
    out=$($DD_MPIRUN -n "$n" "$exe" 2>&1) || { echo "$out"; exit 1; }
    echo "$out"
    grep -qx PASSED <<<"$out"
    ;;
pkgconfig)
    src=$1 work=$2
    pc=$(dirname "$(ls "$work"/prefix/lib*/pkgconfig/dgemm-dist.pc)")
    flags=$(PKG_CONFIG_PATH=$pc pkg-config --cflags --libs dgemm-dist)
    libdir=$(PKG_CONFIG_PATH=$pc pkg-config --variable=libdir dgemm-dist)
    echo "cc block_gemm.c $flags"
    # shellcheck disable=SC2086
    cc -std=c11 -Wall -Wextra -Werror $(cat "$work/sanitize-flags") -o "$work/block_gemm_pc" \
        "$src/examples/block_gemm.c" $flags \
        -lm -Wl,-rpath,"$libdir"
    out=$($DD_MPIRUN -n 2 "$work/block_gemm_pc" 2>&1) || { echo "$out"; exit 1; }
    echo "$out"
    grep -qx PASSED <<<"$out"
    ;;
relink)
    work=$1 n=$2
    for exe in scalapack_pdgemm scalapack_pdgemm_dd; do
        test -x "$work/ex/$exe" || { echo "not built: $exe (ScaLAPACK not found by examples/?)" >&2; exit 1; }
    done
    plain=$(DD_SCALAPACK_VERBOSE=1 $DD_MPIRUN -n "$n" "$work/ex/scalapack_pdgemm" 2>&1) || { echo "$plain"; exit 1; }
    dd=$(DD_SCALAPACK_VERBOSE=1 $DD_MPIRUN -n "$n" "$work/ex/scalapack_pdgemm_dd" 2>&1) || { echo "$dd"; exit 1; }
    printf 'linked against ScaLAPACK:\n%s\nrelinked, drop-in first:\n%s\n' "$plain" "$dd"
    grep -qx PASSED <<<"$plain" && grep -qx PASSED <<<"$dd"
    if grep -q "served by dgemm-dist" <<<"$plain"; then echo "the plain program reached dgemm-dist" >&2; exit 1; fi
    grep -q "PDGEMM: served by dgemm-dist" <<<"$dd" || { echo "the relinked program did not reach dgemm-dist" >&2; exit 1; }
    ;;
*)
    echo "example.sh: unknown mode $mode" >&2
    exit 2
    ;;
esac
