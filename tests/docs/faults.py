#!/usr/bin/env python3
"""tests/docs/faults.py [ROOT] — every fault point the code asks for is named
in docs/design.md's paragraph on fault hooks.

The points are the string literals of dd_fault("...") calls in the
project's C sources (src/, io/, comm/; dd_fault.h's own example "point"
aside); the paragraph is the one that opens with **Fault hooks.**.  A point
the paragraph does not name in backticks is printed; exit 1 if there is one."""
import os
import re
import subprocess
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
os.chdir(root)
files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard", "src", "io", "comm"],
                       capture_output=True, text=True, check=True).stdout.split()
points = {}
for f in files:
    if not f.endswith((".c", ".h", ".cu", ".cuh")) or not os.path.exists(f):
        continue
    for n, line in enumerate(open(f, encoding="utf-8", errors="replace"), 1):
        for m in re.finditer(r'\bdd_fault\("([a-z0-9-]+)"\)', line):
            if f != "src/base/dd_fault.h":
                points.setdefault(m.group(1), f"{f}:{n}")
design = open("docs/design.md", encoding="utf-8").read()
start = design.find("**Fault hooks.**")
para = design[start:design.find("\n\n", start)] if start >= 0 else ""
named = set(re.findall(r"`([a-z0-9-]+)`", para))
missing = sorted(p for p in points if p not in named)
for p in missing:
    print(f"{points[p]}: dd_fault(\"{p}\") is not named in docs/design.md's Fault hooks paragraph")
print(f"faults: {len(points)} point(s) in the code, {len(missing)} not documented")
sys.exit(1 if missing or not para else 0)
