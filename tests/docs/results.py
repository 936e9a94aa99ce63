#!/usr/bin/env python3
"""tests/docs/results.py [ROOT] — docs/results is navigable.

  - every entry (a folder directly under docs/results) has a README.md and
    is listed in docs/results/README.md (a link "](entry/)");
  - every link of that index resolves, and an entry marked "superseded by
    NAME" names an entry that exists;
  - nothing lies loose beside the entries (only README.md and figures.py);
  - no script is named go.sh, go4.sh ...: a script is named by what it does.
The current-figures tables (README.md, docs/results/README.md) are checked
against the records by docs/results/figures.py --check, a test of its own.
Prints each problem; exits 1 when there is one."""
import os
import re
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
res = os.path.join(root, "docs/results")
index = open(os.path.join(res, "README.md"), encoding="utf-8").read()
LOOSE_OK = {"README.md", "figures.py"}
problems = []
entries = sorted(e for e in os.listdir(res) if os.path.isdir(os.path.join(res, e)) and e != "__pycache__")
for e in entries:
    if not os.path.isfile(os.path.join(res, e, "README.md")):
        problems.append(f"docs/results/{e}/ has no README.md")
    if f"]({e}/)" not in index:
        problems.append(f"docs/results/{e}/ is not listed in docs/results/README.md")
for f in sorted(os.listdir(res)):
    if not os.path.isdir(os.path.join(res, f)) and f not in LOOSE_OK:
        problems.append(f"docs/results/{f} lies loose: put it in an entry (a folder with a README)")
for m in re.finditer(r"\]\(([^)#\s]+)\)", index):
    t = m.group(1)
    if not re.match(r"^[a-z]+:", t) and not os.path.exists(os.path.normpath(os.path.join(res, t))):
        problems.append(f"docs/results/README.md links {t}, which does not exist")
for m in re.finditer(r"superseded by ([\w.-]+)", index):
    if m.group(1) not in entries:
        problems.append(f"docs/results/README.md: superseded by {m.group(1)}, which is no entry")
for d, _, files in os.walk(res):
    for f in files:
        if re.fullmatch(r"go\d*\.sh", f):
            problems.append(f"{os.path.relpath(os.path.join(d, f), root)}: name the script by what it does")
for p in problems:
    print(p)
print(f"results: {len(entries)} entries, {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
