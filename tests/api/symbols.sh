#!/usr/bin/env bash
# tests/api/symbols.sh PREFIX SOURCE_DIR — the installed libraries export
# their public list and nothing else, and the installed headers declare it.
#
# For libdgemm-dist (cmake/dgemm-dist.syms) and libdgemm-dist-scalapack
# (cmake/dgemm-dist-scalapack.syms), in PREFIX (an install tree):
#   - every defined global symbol of the static archive (nm -g: weak ones
#     too) and of the shared library's dynamic table is in the list, and
#     every name of the list is defined in both;
#   - each name is declared in the headers of its library and in no other:
#     libdgemm-dist's in dgemm_dist.h, dgemm_dist_plan.h or
#     dgemm_dist_tool.h, the drop-in's in dgemm_dist_scalapack.h;
#   - the static archive's object holds no section group: a COMDAT group
#     whose symbol was made local would be dropped for a program's own copy
#     of the group (libstdc++.a's DW.ref.__gxx_personality_v0 beside the
#     CUDA objects) while the archive's references still need it;
#   - every installed header compiles on its own (mpicc -fsyntax-only).
# Prints each offending name; exit 1 on any.
set -euo pipefail
prefix=$1 src=$2
bad=0
problem() {
    echo "FAIL: $*" >&2
    bad=1
}
names() { # the list's names, one a line, sorted
    sed -e 's/#.*//' -e 's/[[:space:]]//g' "$1" | grep -v '^$' | sort -u
}
inc=$prefix/include
libdir=$(dirname "$(ls "$prefix"/lib*/libdgemm-dist.so)")
declared_in() { # declared_in NAME HEADER...: NAME( appears in one of them
    local n=$1
    shift
    grep -Eq "(^|[^A-Za-z0-9_])$n\(" "$@"
}
for lib in dgemm-dist dgemm-dist-scalapack; do
    list=$src/cmake/$lib.syms
    [ -f "$list" ] || { problem "no list $list"; continue; }
    want=$(names "$list")
    [ -n "$want" ] || problem "$list names nothing"
    for f in "$libdir/lib$lib.a" "$libdir/lib$lib.so"; do
        [ -f "$f" ] || { problem "not installed: $f"; continue; }
        case $f in
        *.a) got=$(nm -g --defined-only --format=posix "$f" | awk 'NF >= 2 && $1 !~ /:$/ {print $1}' | sort -u) ;;
        *) got=$(nm -D --defined-only --format=posix "$f" | awk '{print $1}' | sed 's/@.*//' | sort -u) ;;
        esac
        extra=$(comm -23 <(echo "$got") <(echo "$want"))
        missing=$(comm -13 <(echo "$got") <(echo "$want"))
        n_extra=$(grep -c . <<<"$extra" || true)
        if [ "$n_extra" -gt 0 ]; then
            problem "$(basename "$f") defines $n_extra global symbols outside cmake/$lib.syms:"
            sed 's/^/    /' <<<"$extra" >&2
        fi
        if [ -n "$missing" ]; then
            problem "$(basename "$f") lacks names of cmake/$lib.syms:"
            sed 's/^/    /' <<<"$missing" >&2
        fi
        echo "$(basename "$f"): $(grep -c . <<<"$got" || true) global symbols defined, list of $(grep -c . <<<"$want")"
    done
    if [ "$lib" = dgemm-dist ]; then
        own=("$inc/dgemm_dist.h" "$inc/dgemm_dist_plan.h" "$inc/dgemm_dist_tool.h")
        other=("$inc/dgemm_dist_scalapack.h")
    else
        own=("$inc/dgemm_dist_scalapack.h")
        other=("$inc/dgemm_dist.h" "$inc/dgemm_dist_plan.h" "$inc/dgemm_dist_tool.h")
    fi
    for h in "${own[@]}" "${other[@]}"; do
        [ -f "$h" ] || problem "not installed: $h"
    done
    for n in $want; do
        declared_in "$n" "${own[@]}" 2>/dev/null || problem "$n ($lib) is declared in none of ${own[*]##*/}"
        if declared_in "$n" "${other[@]}" 2>/dev/null; then
            problem "$n ($lib) is declared in another library's header (${other[*]##*/})"
        fi
    done
done
# no section groups in the static archives' members
for a in "$libdir"/libdgemm-dist.a "$libdir"/libdgemm-dist-scalapack.a; do
    x=$(mktemp -d)
    (cd "$x" && ar x "$a")
    for o in "$x"/*; do
        if ! readelf -g -W "$o" | grep -q "There are no section groups"; then
            problem "$(basename "$a")($(basename "$o")) holds section groups: $(readelf -g -W "$o" | grep -c 'COMDAT group')"
        fi
    done
    rm -rf "$x"
done
# each installed header on its own, as a client includes it
for h in "$inc"/dgemm_dist*.h; do
    echo "#include <$(basename "$h")>" | mpicc -std=c11 -Wall -Wextra -Werror -fsyntax-only \
        -I"$inc" -x c - || problem "$(basename "$h") does not compile on its own"
done
[ "$bad" = 0 ] && echo "symbols and headers: as listed"
exit "$bad"
