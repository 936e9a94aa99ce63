#!/bin/bash
# The environment knobs' two tables are one: `dgemm-dist --help-env` lists
# every knob of the registry (the names in src/base/knobs.c's table, each
# read somewhere in src/, comm/, io/ or kernels/ through its DDK_ id), and
# docs/environment.md has, section by section and in the same order, the
# same rows: name, type, default, range, what it does (the last compared
# with its whitespace folded, Markdown's \| and backticks taken out).
# `dgemm-dist --help` names --help-env.  A knob added, renamed or changed
# in the table fails here until the page says so.
#
#   tests/cli/help_env.sh DGEMM_DIST REPO_ROOT
set -euo pipefail
bin=${1:?usage: $0 DGEMM_DIST REPO_ROOT}
repo=${2:?usage: $0 DGEMM_DIST REPO_ROOT}
work=$(mktemp -d "${TMPDIR:-/tmp}/help-env.XXXXXX")
trap 'rm -rf "$work"' EXIT

timeout 30 "$bin" --help-env >"$work/env.txt" 2>"$work/err.txt" ||
    { echo "FAIL: $bin --help-env exited $?: $(cat "$work/err.txt")"; exit 1; }
timeout 30 "$bin" --help >"$work/help.txt" 2>&1 || { echo "FAIL: $bin --help exited $?"; exit 1; }

python3 - "$work/env.txt" "$work/help.txt" "$repo" <<'PY'
import os, re, sys

env_path, help_path, repo = sys.argv[1:]
failures = []
fold = lambda s: " ".join(s.split())


def help_env(path):
    """--help-env's sections: [(title, [(name, type, default, range, what)])]."""
    secs, row = [], None
    for line in open(path, encoding="utf-8").read().split("\n"):
        if line and not line.startswith(" ") and line.endswith(":"):
            secs.append((line[:-1], []))
            row = None
        elif secs and line.startswith("  DD_"):
            f = re.split(r"\s{2,}", line.strip())
            if len(f) != 4:
                failures.append(f"--help-env: a row without four columns: {line!r}")
                f = (f + ["", "", "", ""])[:4]
            row = f + [""]
            secs[-1][1].append(row)
        elif row is not None and line.startswith("      "):
            row[4] = fold(row[4] + " " + line)
        elif line.strip() and secs and not line.startswith("  NAME"):
            failures.append(f"--help-env: a line that is no row: {line!r}")
    return [(t, [tuple(r) for r in rows]) for t, rows in secs]


def page(path):
    """docs/environment.md's knob sections (those whose table starts | Name | Type |)."""
    secs, title = [], None
    for line in open(path, encoding="utf-8").read().split("\n"):
        if line.startswith("## "):
            title = line[3:].strip()
        elif line.startswith("| Name | Type | Default | Range | What it does |"):
            secs.append((title, []))
        elif secs and line.startswith("| `DD_"):
            cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip())[1:-1]]
            clean = lambda c: fold(c.replace("\\|", "|").replace("`", ""))
            if len(cells) != 5:
                failures.append(f"docs/environment.md: a row without five cells: {line}")
                continue
            secs[-1][1].append(tuple(clean(c) for c in cells))
    return secs


got, doc = help_env(env_path), page(os.path.join(repo, "docs/environment.md"))
if not got:
    failures.append("--help-env printed no section")
titles_got, titles_doc = [t for t, _ in got], [t for t, _ in doc]
if titles_got != titles_doc:
    failures.append(f"sections differ: --help-env {titles_got}, docs/environment.md {titles_doc}")
for (t, rows), (_, drows) in zip(got, doc):
    names, dnames = [r[0] for r in rows], [r[0] for r in drows]
    if names != dnames:
        failures.append(f"section '{t}': --help-env lists {names}, docs/environment.md {dnames}")
    for r in rows:
        d = next((x for x in drows if x[0] == r[0]), None)
        if d is None:
            continue
        for col, a, b in zip(("type", "default", "range", "what it does"), r[1:], d[1:]):
            if a != b:
                failures.append(f"{r[0]}: its {col} is '{a}' in --help-env, '{b}' in docs/environment.md")

# the registry's names, and each knob read somewhere through its id
src = open(os.path.join(repo, "src/base/knobs.c"), encoding="utf-8").read()
table = re.findall(r'\[(DDK_\w+)\]\s*=\s*\{\s*\.name\s*=\s*"(DD_\w+)"', src)
listed = [r[0] for _, rows in got for r in rows]
if not table:
    failures.append("src/base/knobs.c: no entry [DDK_...] = {.name = \"DD_...\", ...} found")
for ident, name in table:
    if ident != "DDK_" + name[3:]:
        failures.append(f"src/base/knobs.c: {name}'s id is {ident}, not DDK_{name[3:]}")
    if listed.count(name) != 1:
        failures.append(f"--help-env lists {name} {listed.count(name)} times, not once")
if sorted(listed) != sorted(n for _, n in table):
    failures.append(f"--help-env lists {sorted(set(listed) - set(n for _, n in table))} beyond the "
                    f"registry, lacks {sorted(set(n for _, n in table) - set(listed))}")
used = set()
for top in ("src", "comm", "io", "kernels"):
    for d, _, files in os.walk(os.path.join(repo, top)):
        for f in files:
            p = os.path.join(d, f)
            if f.endswith((".c", ".h", ".cu", ".cuh")) and not p.endswith(("src/base/knobs.c",
                                                                         "src/base/dd_knobs.h")):
                used.update(re.findall(r"\bDDK_[A-Z0-9_]+\b", open(p, encoding="utf-8",
                                                                     errors="replace").read()))
for ident, name in table:
    if ident not in used:
        failures.append(f"{name} is in the registry but nothing reads it ({ident} is used nowhere)")

if "--help-env" not in open(help_path, encoding="utf-8").read():
    failures.append("dgemm-dist --help does not name --help-env")

for f in failures:
    print("FAIL: " + f)
if failures:
    sys.exit(1)
print(f"PASS (help-env): {len(listed)} knobs in {len(got)} sections, --help-env and "
      "docs/environment.md alike, every knob of the registry listed and read")
PY
