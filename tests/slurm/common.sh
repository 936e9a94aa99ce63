# shellcheck shell=bash
# Shared by the Slurm tests: arguments, a private Slurm with cleanup on any
# exit, and small assertions.  Usage in a test:
#
#   source "$(dirname "$0")/common.sh"
#   slurm_test_init "$@"        # DGEMM_DIST REPO_ROOT [WORK_DIR]
#   ... sbatch / jobs/... ...
#   pass "what was shown"
#
# The test's files stay in $WORK after a failure (logs, study directories,
# the daemons' logs) and are removed after a pass unless DD_KEEP=1.

# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "${BASH_SOURCE[0]}")/../need.sh"

# shellcheck source-path=SCRIPTDIR
# shellcheck source=private-slurm.sh
source "$(dirname "${BASH_SOURCE[0]}")/private-slurm.sh"

TEST_NAME=$(basename "$0" .sh)

fail() {
  echo "FAIL ($TEST_NAME): $*" >&2
  exit 1
}

pass() {
  echo "PASS ($TEST_NAME): $*"
  SLURM_TEST_PASSED=1
}

slurm_test_cleanup() {
  local rc=$?
  dd_slurm_down
  if ((rc != 0)) || [[ -z ${SLURM_TEST_PASSED:-} ]]; then
    echo "$TEST_NAME: files kept in $WORK" >&2
    if [[ -n ${DD_SLURM_DIR:-} && -d $DD_SLURM_DIR/log ]]; then
      echo "--- last lines of the daemons' logs" >&2
      tail -n 15 "$DD_SLURM_DIR"/log/*.log >&2 || true
    fi
  elif [[ -z ${DD_KEEP:-} ]]; then
    rm -rf "$WORK"
  fi
  return "$rc"
}

slurm_test_init() {
  DGEMM_DIST=${1:?usage: $0 DGEMM_DIST REPO_ROOT [WORK_DIR]}
  REPO=${2:?usage: $0 DGEMM_DIST REPO_ROOT [WORK_DIR]}
  [[ -x $DGEMM_DIST ]] || fail "dgemm-dist '$DGEMM_DIST' is not executable (build it first)"
  [[ -x $REPO/jobs/dgemm.sbatch ]] || fail "no jobs/dgemm.sbatch under '$REPO'"
  local base=${3:-${TMPDIR:-/tmp}}
  mkdir -p "$base"
  WORK=$(mktemp -d "$base/$TEST_NAME.XXXXXX")
  export DGEMM_DIST REPO WORK
  trap slurm_test_cleanup EXIT

  # The jobs see a user's environment, not the one ctest gives every test
  # (jobs/dgemm.sbatch would take its DD_MPIRUN for the launcher, and its
  # defaults are what is under test).
  dd_user_env
  # mpirun inside the jobs runs as root in CI, on 2 cores for up to 4 ranks.
  export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
  export OMP_NUM_THREADS=1
  # Daemons' files live in a short path: munge's socket path has a length limit.
  mkdir -p "$WORK/slurm"
  dd_slurm_up "$WORK/slurm" || fail "could not start a private Slurm (slurmctld, slurmd, munged);" \
    "CI must install Debian's slurm-wlm and munge"
}

# The job's state as Slurm reports it, e.g. COMPLETED.
assert_state() { # jobid expected what
  local state
  state=$(dd_slurm_state "$1")
  [[ $state == "$2" ]] || fail "$3: job $1 is ${state:-unknown}, expected $2"
}

# A valid, nonempty PNG: the 8-byte signature, and `file` agrees where present.
assert_png() {
  local f=$1 magic
  [[ -s $f ]] || fail "$f: missing or empty"
  magic=$(head -c 8 "$f" | od -An -tx1 | tr -d ' \n')
  [[ $magic == 89504e470d0a1a0a ]] || fail "$f: not a PNG (starts with $magic)"
  (($(stat -c %s "$f") > 2000)) || fail "$f: only $(stat -c %s "$f") bytes"
  if command -v file >/dev/null 2>&1; then
    file -b "$f" | grep -q '^PNG image data' || fail "$f: file(1) says '$(file -b "$f")'"
  fi
}
