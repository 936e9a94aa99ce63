#!/bin/bash
# Every DD_ environment variable of the program and its libraries goes
# through the knobs' registry (src/base/dd_knobs.h): in the C, CUDA and
# header files of src/, comm/, io/ and kernels/ (comments taken out), no
# file but src/base/knobs.c reads the environment with getenv("DD_...")
# or any other spelling (secure_getenv, environ); every other getenv there
# names, as a literal, a variable of docs/environment.md's table of those
# read but not dgemm-dist's (OPENBLAS_NUM_THREADS, SLURM_JOB_ID, ...), or
# is io/io_h5_files.c's one getenv(env), whose callers pass such names; and each
# name of that table is read somewhere.  Tests and benches (tests/, bench/)
# are not looked at: they may read their own variables (DD_TEST_*, ...),
# which set up a test and are no knobs.
#
#   tests/cli/knobs_only.sh REPO_ROOT
set -euo pipefail
repo=${1:?usage: $0 REPO_ROOT}

python3 - "$repo" <<'PY'
import os, re, sys

repo = sys.argv[1]
REGISTRY = "src/base/knobs.c"
INDIRECT = {("io/io_h5_files.c", "env")}  # getenv(<expression>) allowed: (file, expression)
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
CALL = re.compile(r"\b(secure_getenv|getenv)\s*\(\s*([^()]*?)\s*\)")
failures, calls = [], 0

page = open(os.path.join(repo, "docs/environment.md"), encoding="utf-8").read()
m = re.search(r"\n## Read, but not dgemm-dist's\n(.*?)(?=\n## |\Z)", page, re.S)
foreign = set()
if m:
    for line in m.group(1).split("\n"):
        if line.startswith("| `"):
            foreign.update(re.findall(r"`([A-Z][A-Z0-9_]*)`", line.split("|")[1]))
if not foreign:
    failures.append("docs/environment.md has no table under '## Read, but not dgemm-dist's'")
literals = set()

for top in ("src", "comm", "io", "kernels"):
    for d, _, files in os.walk(os.path.join(repo, top)):
        for f in sorted(files):
            if not f.endswith((".c", ".h", ".cu", ".cuh", ".cpp")):
                continue
            path = os.path.join(d, f)
            rel = os.path.relpath(path, repo)
            text = open(path, encoding="utf-8", errors="replace").read()
            code = COMMENT.sub(lambda x: "\n" * x.group(0).count("\n"), text)
            literals.update(re.findall(r'"([A-Z][A-Z0-9_]+)"', code))
            if rel == REGISTRY:
                continue
            for n, line in enumerate(code.split("\n"), 1):
                if re.search(r"\benviron\b|\b__environ\b", line):
                    failures.append(f"{rel}:{n}: reads environ: {line.strip()}")
            for c in CALL.finditer(code):
                calls += 1
                n = code.count("\n", 0, c.start()) + 1
                fn, arg = c.group(1), c.group(2)
                lit = re.fullmatch(r'"([^"]*)"', arg)
                if fn != "getenv":
                    failures.append(f"{rel}:{n}: {fn}({arg}): read the environment with getenv "
                                    "or, for a DD_ knob, through src/base/dd_knobs.h")
                elif lit and lit.group(1).startswith("DD_"):
                    failures.append(f"{rel}:{n}: getenv({arg}) outside the registry: read it with "
                                    "dd_knob_int/dd_knob_str (src/base/dd_knobs.h), its entry in "
                                    "src/base/knobs.c")
                elif lit and lit.group(1) not in foreign:
                    failures.append(f"{rel}:{n}: getenv({arg}): {lit.group(1)} is neither a knob "
                                    "nor in docs/environment.md's table of variables read but not "
                                    "dgemm-dist's")
                elif not lit and (rel, arg) not in INDIRECT:
                    failures.append(f"{rel}:{n}: getenv({arg}): a name that is not a literal")
for name in sorted(foreign - literals):
    failures.append(f"docs/environment.md lists {name} as read, but no source names it")

for f in failures:
    print("FAIL: " + f)
if failures:
    sys.exit(1)
print(f"PASS (knobs only): {calls} getenv calls outside {REGISTRY}, none of a DD_ variable; "
      f"{len(foreign)} foreign variables, each read and listed")
PY
