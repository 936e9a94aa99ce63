#!/bin/bash
# The README's option reference is complete and current: every option that
# `dgemm-dist --help` and `dgemm-dist gen --help` print appears in README.md
# (in backticks), the README line that documents it names every range
# (a..b) and every choice (x | y | z) that --help gives for it, the README's
# option tables name no option that --help does not know, and the syntax
# rules (--opt=value, `--`, no abbreviations, a value option once) are
# stated.  A new or renamed option, a changed bound or a new --io mode
# fails here until the README says so.
#
#   tests/readme/options.sh DGEMM_DIST REPO_ROOT
set -euo pipefail
bin=${1:?usage: $0 DGEMM_DIST REPO_ROOT}
repo=${2:?usage: $0 DGEMM_DIST REPO_ROOT}
work=$(mktemp -d "${TMPDIR:-/tmp}/readme-options.XXXXXX")
trap 'rm -rf "$work"' EXIT

# --help needs no ranks; a singleton MPI start is enough.
"$bin" --help >"$work/run.txt" || { echo "FAIL: $bin --help exited $?"; exit 1; }
"$bin" gen --help >"$work/gen.txt" || { echo "FAIL: $bin gen --help exited $?"; exit 1; }

python3 - "$work/run.txt" "$work/gen.txt" "$repo/README.md" <<'PY'
import re, sys

run_help, gen_help, readme_path = sys.argv[1:]
readme = open(readme_path, encoding="utf-8").read()
lines = readme.split("\n")
OPT = re.compile(r"(?<![\w`-])(--?[A-Za-z][\w-]*)")
failures = []


def entries(path):
    """The option entries of a --help text: an indented line starting with
    '-' and the deeper-indented lines that continue it."""
    out, cur = [], None
    for line in open(path, encoding="utf-8"):
        line = line.rstrip("\n")
        if re.match(r"^  -", line):
            cur = [line.strip()]
            out.append(cur)
        elif cur is not None and re.match(r"^ {4,}\S", line) and not line.strip().startswith("["):
            cur.append(line.strip())
        else:
            cur = None
    return [" ".join(e) for e in out]


def documented(opt):
    """README lines that name `opt` in backticks (`-m`, `--io MODE`, ...)."""
    pat = re.compile(r"`[^`]*(?<![\w-])" + re.escape(opt) + r"(?![\w-])[^`]*`")
    return [l for l in lines if pat.search(l)]


known = set()
for which, path in (("dgemm-dist --help", run_help), ("dgemm-dist gen --help", gen_help)):
    for entry in entries(path):
        opts = [o for o in OPT.findall(entry)]
        known.update(opts)
        first = opts[0]
        for o in opts:
            if not documented(o):
                failures.append(f"{which}: {o} is not in README.md (as `{o}` in backticks)")
        rows = documented(first)
        if not rows:
            continue
        for rng in re.findall(r"\b\d+\.\.[\w^+-]*\w", entry):
            if not any(rng in r for r in rows):
                failures.append(f"{which}: the range {rng} of {first} is not on README's line for it")
        bare = re.sub(r"\([^)]*\)", "", entry)
        for m in re.finditer(r"\b[\w.-]+(?:\s*\|\s*[\w.-]+)+", bare):
            for choice in re.split(r"\s*\|\s*", m.group(0)):
                if not any(re.search(r"(?<![\w-])" + re.escape(choice) + r"(?![\w-])", r) for r in rows):
                    failures.append(f"{which}: {first}'s choice '{choice}' is not on README's line for it")

# Every option named in the README's option tables exists.
for l in lines:
    if l.startswith("| `-"):
        cell = l.split("|")[1]
        for o in OPT.findall(cell.replace("`", " ")):
            if o not in known:
                failures.append(f"README.md option table names {o}, which --help does not know: {l.strip()}")

# The syntax rules, and the first things a user needs.
for what, pat in (("--opt=value", r"--opt=value"),
                  ("`--` ends the options", r"`--`[^.\n]*end"),
                  ("abbreviations refused", r"abbreviat"),
                  ("a value option once", r"value[^.\n]*once"),
                  ("the binary's place", r"`build/dgemm-dist`"),
                  ("mpirun --oversubscribe for more ranks than cores", r"--oversubscribe"),
                  ("the record's page", r"docs/json-record\.md")):
    if not re.search(pat, readme):
        failures.append(f"README.md does not state {what} (/{pat}/)")

for f in failures:
    print("FAIL: " + f)
if failures:
    sys.exit(1)
print(f"PASS (readme options): {len(known)} options of --help and gen --help documented with "
      "their ranges and choices; tables name no unknown option; syntax stated")
PY
