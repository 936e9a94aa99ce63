#!/usr/bin/env bash
# tests/api/layering.sh SOURCE_DIR BUILD_DIR VERSION BASE_INCLUDES CORE_INCLUDES
# — the layering rule where the build alone would not show it, and one
# version number.
#
#   BASE_INCLUDES, CORE_INCLUDES: the include directories that dd_base and
#   dd_mult (core) pass on to whoever links them (';'-separated, from
#   CMake's INTERFACE_INCLUDE_DIRECTORIES)
#
# Layering: src/abi's headers include nothing; every quoted include of
# src/base is found in src/base or src/abi; none of src/core's names a
# public header (dgemm_dist*.h), and each is found in core or the layers
# below it; neither dd_base nor core passes on include/ (or the build's
# generated include/).
# One version: VERSION (project(VERSION)) is written nowhere in the C
# sources as a literal, no header defines DGEMM_DIST_VERSION_* but the
# generated one, which says VERSION; `dgemm-dist --version`, the JSON
# record's "version", the output's "tool" attribute and gen's "generator"
# attribute all say VERSION.  DD_BIN: the program; DD_COMPARE: dd-compare
# (tests/tools/dd_compare.c), which reads the attributes.  Exit 1 on any
# breach.
set -euo pipefail
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_need DD_BIN DD_COMPARE
src=$1 build=$2 version=$3 base_inc=$4 core_inc=$5
bad=0
problem() {
    echo "FAIL: $*" >&2
    bad=1
}
# quoted includes of the files in $1, as "file:name" lines
includes() {
    grep -HoE '^[[:space:]]*#[[:space:]]*include[[:space:]]*"[^"]+"' "$1"/*.[ch] 2>/dev/null |
        sed -E 's/^([^:]*):.*"([^"]+)"$/\1:\2/'
}
# resolves FILE:NAME against the directories after it (the file's own first)
resolves() {
    local f=${1%%:*} n=${1#*:}
    shift
    [ -f "$(dirname "$f")/$n" ] && return 0
    for d in "$@"; do
        [ -f "$src/$d/$n" ] && return 0
    done
    return 1
}

# ---- layering ----------------------------------------------------------------
for h in "$src"/src/abi/*.h; do
    [ -f "$h" ] || continue
    if grep -qE '^[[:space:]]*#[[:space:]]*include' "$h"; then
        problem "${h#$src/} is a leaf shared with the public headers: it must include nothing"
    fi
done
while IFS= read -r inc; do
    [ -n "$inc" ] || continue
    resolves "$inc" src/base src/abi ||
        problem "${inc%%:*} (base) includes \"${inc#*:}\", which is not in src/base or src/abi"
done < <(includes "$src/src/base")
while IFS= read -r inc; do
    [ -n "$inc" ] || continue
    case ${inc#*:} in
    dgemm_dist*.h) problem "${inc%%:*} (core) includes the public header \"${inc#*:}\"" ;;
    *) resolves "$inc" src/core src/engine comm src/model src/base src/abi ||
        problem "${inc%%:*} (core) includes \"${inc#*:}\", found in no layer below it" ;;
    esac
done < <(includes "$src/src/core")
for pair in "dd_base:$base_inc" "core (dd_mult):$core_inc"; do
    who=${pair%%:*} dirs=${pair#*:}
    [ -n "$dirs" ] || problem "no include directories given for $who"
    IFS=';' read -r -a list <<<"$dirs"
    for d in "${list[@]}"; do
        d=${d%/}
        if [ "$d" = "$src/include" ] || [ "$d" = "$build/include" ]; then
            problem "$who passes on $d: the public headers must not reach it"
        fi
    done
done
[ "$bad" = 0 ] && echo "layering: base and core see none of the public headers"

# ---- one version ----------------------------------------------------------------
lit=$(grep -rnwF "$version" --include='*.c' --include='*.h' --include='*.cu' --include='*.cuh' \
    "$src/src" "$src/include" "$src/io" "$src/comm" "$src/kernels" 2>/dev/null || true)
[ -z "$lit" ] || problem "the version \"$version\" written as a literal (project(VERSION) is the one):
$lit"
defs=$(grep -rlE '^[[:space:]]*#[[:space:]]*define[[:space:]]+DGEMM_DIST_VERSION_' \
    --include='*.h' "$src/src" "$src/include" 2>/dev/null || true)
[ -z "$defs" ] || problem "DGEMM_DIST_VERSION_* defined by hand in: $defs"
gen=$build/include/dgemm_dist_version.h
grep -qx "#define DGEMM_DIST_VERSION_STRING \"$version\"" "$gen" 2>/dev/null ||
    problem "$gen does not say $version"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
out=$("$DD_BIN" --version)
[ "$out" = "dgemm-dist $version" ] || problem "--version says '$out', not 'dgemm-dist $version'"
"$DD_BIN" --size 8,6,4 --out "$work/c.h5" --json "$work/r.jsonl" --quiet >/dev/null
grep -q "\"version\":\"$version\"" "$work/r.jsonl" || problem "the JSON record's version is not $version:
$(grep -o '"version":"[^"]*"' "$work/r.jsonl" || cat "$work/r.jsonl")"
tool=$("$DD_COMPARE" attr "$work/c.h5" C tool || true)
[ "$tool" = "dgemm-dist $version" ] || problem "the output's tool attribute is '$tool'"
"$DD_BIN" gen --out "$work/g.h5" -m 3 -n 2 -k 2 --quiet
genattr=$("$DD_COMPARE" attr "$work/g.h5" A generator || true)
[ "${genattr%% gen:*}" = "dgemm-dist $version" ] || problem "gen's generator attribute is '$genattr'"
[ "$bad" = 0 ] && echo "version: $version everywhere"
exit "$bad"
