# shellcheck shell=bash
# need.sh — sourced by the shell tests: dd_need VAR... ends the script with
# one line naming every VAR that is not set, and exit 2.  ctest sets them
# (tests/CMakeLists.txt's DD_TEST_ENV); by hand, source the build's copy of
# that environment first:
#   . build/tests/env.sh && bash tests/faults/disk.sh
dd_need() {
    local v missing=()
    for v in "$@"; do
        [ -n "${!v:-}" ] || missing+=("$v")
    done
    if [ "${#missing[@]}" -gt 0 ]; then
        echo "$(basename "$0"): ${missing[*]} not set: run it through ctest, or first '. BUILD/tests/env.sh'" >&2
        exit 2
    fi
}
