#!/usr/bin/env bash
# tests/mutation/run.sh [NAME...] — plants each bug of mutants.txt (or the
# ones named) in a copy of the source tree, rebuilds it (CPU backend), runs
# the tests the mutant names, and prints KILLED (some test failed),
# SURVIVED (every test passed: a gap in the tests) or STALE (its text is
# gone from the file).  The copy and its build live under
# ${DD_MUTATION_DIR:-/tmp/dd-mutation}; the working tree is never touched.
# On demand, not in CI: each mutant is a rebuild and a test run.
# Exit status: 0 when every mutant was killed, 1 otherwise.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
work=${DD_MUTATION_DIR:-/tmp/dd-mutation}
jobs=${DD_JOBS:-$(nproc)}
. "$src/tests/env.sh"
mkdir -p "$work"
rm -rf "$work/src"
# the working tree's files, tracked or not (ignored ones left out), as they are now
(cd "$src" && git ls-files -z -co --exclude-standard | tar --null -T - -cf -) | (mkdir -p "$work/src" && tar -C "$work/src" -xf -)
cmake -S "$work/src" -B "$work/build" -DDD_ENABLE_CUDA=OFF -DCMAKE_BUILD_TYPE=Release \
    >"$work/configure.log" 2>&1 || { cat "$work/configure.log"; exit 1; }
cmake --build "$work/build" -j "$jobs" >"$work/build.log" 2>&1 || { tail -30 "$work/build.log"; exit 1; }
python3 - "$here/mutants.txt" "$work" "$jobs" "$@" <<'PY'
import os, subprocess, sys
spec, work, jobs, only = sys.argv[1], sys.argv[2], sys.argv[3], set(sys.argv[4:])
mutants, cur, part = [], None, None
for line in open(spec):
    s = line.rstrip("\n")
    if s.startswith("@ "):
        name, path, tests = [x.strip() for x in s[2:].split(" | ", 2)]
        cur = {"name": name, "file": path, "tests": tests, "old": [], "new": []}
        mutants.append(cur)
    elif s == "<<<":
        part = "old"
    elif s == "===":
        part = "new"
    elif s == ">>>":
        part = None
    elif part and cur:
        cur[part].append(s)
bad = 0
for m in mutants:
    if only and m["name"] not in only:
        continue
    path = os.path.join(work, "src", m["file"])
    text = open(path).read()
    old, new = "\n".join(m["old"]) + "\n", "\n".join(m["new"]) + "\n"
    if text.count(old) != 1:
        print(f"STALE    {m['name']}: its text occurs {text.count(old)} times in {m['file']}", flush=True)
        bad += 1
        continue
    open(path, "w").write(text.replace(old, new))
    try:
        b = subprocess.run(["cmake", "--build", os.path.join(work, "build"), "-j", jobs],
                           capture_output=True, text=True)
        if b.returncode != 0:
            print(f"KILLED   {m['name']}: it does not build", flush=True)
            continue
        t = subprocess.run(["ctest", "-R", m["tests"], "-j", jobs, "--timeout", "120"],
                           cwd=os.path.join(work, "build"), capture_output=True, text=True)
        failed = [l.split(" - ")[1].split(" (")[0] for l in t.stdout.splitlines() if " - " in l and ("(Failed" in l or "(Timeout" in l)]
        ran = [l for l in t.stdout.splitlines() if "tests passed" in l]
        if t.returncode != 0:
            print(f"KILLED   {m['name']}: {len(failed)} failed, e.g. {', '.join(failed[:3])}", flush=True)
        else:
            print(f"SURVIVED {m['name']}: {ran[0] if ran else 'no test ran'} (-R '{m['tests']}')", flush=True)
            bad += 1
    finally:
        open(path, "w").write(text)
subprocess.run(["cmake", "--build", os.path.join(work, "build"), "-j", jobs], capture_output=True)
sys.exit(1 if bad else 0)
PY
