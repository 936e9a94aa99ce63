#!/bin/bash
# Every command the README shows runs as written.  README.md marks each
# shell block (a fence tagged sh, bash or shell) with an HTML comment on the
# nearest non-blank line above it:
#
#   <!-- test: run -->            run each command here (label cli)
#   <!-- test: slurm -->          submit each command to a private Slurm
#                                 (tests/slurm/private-slurm.sh); every job
#                                 it submits must end COMPLETED (label slurm)
#   <!-- test: gpu -->            run each command where a GPU exists, else
#                                 skipped with that reason
#   <!-- test: skip: REASON -->   not run; REASON is printed
#
# A shell block without a mark fails the test: nothing the README shows is
# left out silently.  Commands run one by one in a temporary directory that
# stands for the repository root: its entries are links to the repository's
# (build/ to the build under test), so `build/dgemm-dist`, `jobs/...` and
# the files a command writes (mats.h5, c.h5, job logs) resolve there.
# Nothing in a command is rewritten.  A command is its lines joined at a
# trailing backslash; comments and blank lines are not commands.
#
#   tests/readme/commands.sh run|slurm|list DGEMM_DIST REPO_ROOT
set -euo pipefail
mode=${1:?usage: $0 run|slurm|list DGEMM_DIST REPO_ROOT}
bin=${2:?usage: $0 run|slurm|list DGEMM_DIST REPO_ROOT}
repo=$(cd "${3:?usage: $0 run|slurm|list DGEMM_DIST REPO_ROOT}" && pwd)
[[ $mode == run || $mode == slurm || $mode == list ]] || { echo "mode must be run, slurm or list" >&2; exit 2; }
[[ -x $bin ]] || { echo "FAIL: dgemm-dist '$bin' is not executable (build it first)"; exit 1; }
build=$(cd "$(dirname "$bin")" && pwd)
# The commands run in a user's environment: none of the settings ctest gives
# every test (tests/CMakeLists.txt's DD_TEST_ENV), so a command that needs
# --oversubscribe must carry it.
# shellcheck source-path=SCRIPTDIR source=../need.sh
. "$(dirname "$0")/../need.sh"
dd_user_env

# The blocks, as records "KIND<TAB>LINE<TAB>COMMAND" (KIND run, slurm, gpu,
# skip:REASON, or unmarked).
blocks=$(python3 - "$repo/README.md" <<'PY'
import re, sys
lines = open(sys.argv[1], encoding="utf-8").read().split("\n")
i, mark = 0, None
while i < len(lines):
    line = lines[i]
    m = re.match(r"^<!--\s*test:\s*(.*?)\s*-->\s*$", line)
    if m:
        mark = m.group(1)
    fence = re.match(r"^(```+|~~~+)\s*(\S*)", line)
    if fence:
        close, lang, start = fence.group(1), fence.group(2), i + 1
        body = []
        i += 1
        while i < len(lines) and not lines[i].startswith(close):
            body.append(lines[i])
            i += 1
        if lang in ("sh", "bash", "shell"):
            kind = mark or "unmarked"
            cmd, at = "", start
            for n, b in enumerate(body):
                if not cmd:
                    at = start + n + 1
                    if not b.strip() or b.lstrip().startswith("#"):
                        continue
                part = b.strip() if cmd else b.rstrip()
                if part.endswith("\\"):
                    cmd += part[:-1].rstrip() + " "
                    continue
                cmd += part
                print(f"{kind}\t{at}\t{cmd.strip()}")
                cmd = ""
            if cmd:
                print(f"{kind}\t{at}\t{cmd.strip()}")
        mark = None
    elif line.strip() and not m:
        mark = None
    i += 1
PY
)
[[ -n $blocks ]] || { echo "FAIL: no shell blocks found in README.md"; exit 1; }

if [[ $mode == list ]]; then
  printf '%s\n' "$blocks"
  exit 0
fi

unmarked=$(awk -F'\t' '$1 == "unmarked"' <<<"$blocks")
if [[ -n $unmarked ]]; then
  echo "FAIL: README.md shell blocks without a '<!-- test: ... -->' mark above them:"
  awk -F'\t' '{print "  README.md:" $2 ": " $3}' <<<"$unmarked"
  exit 1
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/readme-$mode.XXXXXX")
passed=""
cleanup() {
  local rc=$?
  if [[ $mode == slurm ]]; then dd_slurm_down; fi
  if ((rc == 0)) && [[ -n $passed && -z ${DD_KEEP:-} ]]; then
    rm -rf "$work"
  else
    echo "files kept in $work" >&2
  fi
  return "$rc"
}
trap cleanup EXIT
root=$work/root
mkdir -p "$root"
for entry in "$repo"/* "$repo"/.[!.]*; do
  [[ -e $entry ]] || continue
  name=$(basename "$entry")
  [[ $name == build || $name == .git ]] && continue
  ln -s "$entry" "$root/$name"
done
ln -s "$build" "$root/build"

if [[ $mode == slurm ]]; then
  # shellcheck source-path=SCRIPTDIR source=../slurm/private-slurm.sh
  source "$repo/tests/slurm/private-slurm.sh"
  mkdir -p "$work/slurm"
  dd_slurm_up "$work/slurm" || { echo "FAIL: could not start a private Slurm (apt-get install slurm-wlm munge)"; exit 1; }
fi

have_gpu() { command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU '; }

ran=0 skipped=0 failed=0 jobs=()
while IFS=$'\t' read -r kind at cmd; do
  where="README.md:$at"
  case $kind in
    run) [[ $mode == run ]] || continue ;;
    slurm) [[ $mode == slurm ]] || { echo "-- $where: in the Slurm test: $cmd"; continue; } ;;
    gpu)
      [[ $mode == run ]] || continue
      if ! have_gpu; then
        echo "-- $where: skipped (GPU command, no GPU here): $cmd"
        skipped=$((skipped + 1))
        continue
      fi
      ;;
    skip:*)
      [[ $mode == run ]] || continue
      reason=${kind#skip:}
      reason=${reason# }
      [[ -n $reason ]] || { echo "FAIL: $where: '<!-- test: skip: -->' without a reason"; exit 1; }
      echo "-- $where: skipped ($reason): $cmd"
      skipped=$((skipped + 1))
      continue
      ;;
    *) echo "FAIL: $where: unknown mark '$kind' (run, slurm, gpu or skip: REASON)"; exit 1 ;;
  esac
  echo "\$ $cmd      # $where"
  t0=$SECONDS
  rc=0
  (cd "$root" && timeout "${DD_README_TIMEOUT:-120}" bash -o pipefail -c "$cmd") </dev/null >"$work/out" 2>&1 || rc=$?
  sed 's/^/    /' "$work/out"
  if ((rc != 0)); then
    echo "FAIL: $where exited $rc after $((SECONDS - t0)) s: $cmd"
    failed=$((failed + 1))
    continue
  fi
  ran=$((ran + 1))
  if [[ $mode == slurm ]]; then
    id=$(sed -n 's/^Submitted batch job \([0-9][0-9]*\).*/\1/p' "$work/out" | tail -1)
    [[ -n $id ]] || { echo "FAIL: $where: no 'Submitted batch job N' from: $cmd"; failed=$((failed + 1)); continue; }
    jobs+=("$id:$at")
  fi
done <<<"$blocks"

if [[ $mode == slurm ]]; then
  ((${#jobs[@]})) || { echo "FAIL: README.md has no '<!-- test: slurm -->' block"; exit 1; }
  ids=()
  for j in "${jobs[@]}"; do ids+=("${j%%:*}"); done
  # A job the cluster cannot place pends forever: give up after a while.
  DD_SLURM_WAIT=${DD_README_SLURM_WAIT:-60} dd_slurm_wait "${ids[@]}" || true
  for j in "${jobs[@]}"; do
    id=${j%%:*} at=${j#*:}
    state=$(dd_slurm_state "$id")
    log=$(scontrol show job "$id" 2>/dev/null | sed -n 's/.*StdOut=\(.*\)/\1/p' | head -1)
    echo "job $id (README.md:$at): ${state:-unknown}"
    if [[ -n $log && -f $log ]]; then sed 's/^/    /' "$log"; fi
    if [[ $state != COMPLETED ]]; then
      reason=$(scontrol show job "$id" 2>/dev/null | sed -n 's/.*Reason=\([^ ]*\).*/\1/p' | head -1)
      echo "FAIL: README.md:$at: job $id is ${state:-unknown} (reason ${reason:-none}), not COMPLETED"
      failed=$((failed + 1))
    fi
  done
fi

if ((failed)); then
  echo "FAIL (readme $mode): $failed of the README's commands failed"
  exit 1
fi
passed=1
echo "PASS (readme $mode): $ran command(s) ran as written${jobs:+, ${#jobs[@]} job(s) COMPLETED}, $skipped skipped"
