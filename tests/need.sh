# shellcheck shell=bash
# need.sh — sourced by the shell tests: dd_need VAR... ends the script with
# one line naming every VAR that is not set, and exit 2.  ctest sets them
# (tests/CMakeLists.txt's DD_TEST_ENV); by hand, source the build's copy of
# that environment first:
#   . build/tests/env.sh && bash tests/faults/disk.sh
# dd_user_env clears what DD_TEST_ENV sets (its DD_TEST_ENV_VARS; Open MPI's
# root pair stays), for a test whose subject is what a user's environment
# gives a job or a command.
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

dd_user_env() {
    local v
    # shellcheck disable=SC2086  # a list of names
    for v in ${DD_TEST_ENV_VARS:-}; do
        unset "$v"
    done
}
