#!/usr/bin/env python3
"""tests/docs/layering.py [ROOT] — the #include graph by folder against the
layering that docs/design.md draws.

docs/design.md holds the rule as data, between the lines
"<!-- layering -->" and "<!-- /layering -->": one line per folder,
    folder: the folders its files may include headers from
(a folder may always include from itself), and optionally a line
    generated: header.h ...
naming headers made at build time.  Every C, CUDA and header file tracked
under a listed folder is read; each #include "x" is resolved to the one
folder that holds x (beside the file first, then by name anywhere in the
listed folders); an edge the rule does not allow, a header found in no
folder or in two, and a source folder the rule does not list fail the
test.  Files in folders the rule does not cover (tests/, bench/ ...) are
clients of everything and are not checked."""
import os
import re
import subprocess
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
os.chdir(root)
text = open(os.environ.get("DD_LAYERING_DOC", "docs/design.md"), encoding="utf-8").read()
m = re.search(r"<!-- layering -->(.*?)<!-- /layering -->", text, re.S)
if not m:
    print("layering: docs/design.md has no <!-- layering --> ... <!-- /layering --> block")
    sys.exit(1)
rule, generated = {}, set()
for line in m.group(1).split("\n"):
    line = line.strip().strip("`")
    if not line or line.startswith("```") or ":" not in line:
        continue
    k, v = line.split(":", 1)
    k = k.strip()
    if k == "generated":
        generated.update(v.split())
    else:
        rule[k] = set(v.split())
problems = []
for k, allowed in rule.items():
    if not os.path.isdir(k):
        problems.append(f"the rule lists {k}/, which does not exist")
    for a in allowed:
        if a not in rule:
            problems.append(f"the rule lets {k}/ include from {a}/, which it does not list")

files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], capture_output=True, text=True,
                       check=True).stdout.split()
src = [f for f in files if f.endswith((".c", ".h", ".cu", ".cuh")) and os.path.exists(f)]


def folder_of(path):
    """The longest listed folder holding path, or None."""
    best = None
    for k in rule:
        if path.startswith(k + "/") and (best is None or len(k) > len(best)):
            best = k
    return best


headers = {}
for f in src:
    if f.endswith((".h", ".cuh")) and folder_of(f):
        headers.setdefault(os.path.basename(f), set()).add(folder_of(f))
# a top-level source folder with code that the rule does not cover
for f in src:
    top = f.split("/")[0]
    if top in ("src", "comm", "io", "kernels", "include") and not folder_of(f):
        problems.append(f"{f}: its folder is not in the layering rule")
INC = re.compile(r'^\s*#\s*include\s+"([^"]+)"')
edges = 0
for f in src:
    me = folder_of(f)
    if not me:
        continue
    for n, line in enumerate(open(f, encoding="utf-8", errors="replace"), 1):
        mm = INC.match(line)
        if not mm:
            continue
        name = mm.group(1)
        beside = os.path.normpath(os.path.join(os.path.dirname(f), name))
        if os.path.exists(beside):
            there = {folder_of(beside)}
        else:
            there = set(headers.get(os.path.basename(name), set()))
        if not there:
            if os.path.basename(name) not in generated and not name.endswith(".def"):
                problems.append(f"{f}:{n}: includes {name}, found in no listed folder")
            continue
        if len(there) > 1:
            problems.append(f"{f}:{n}: includes {name}, which {sorted(there)} all hold")
            continue
        to = there.pop()
        edges += 1
        if to is not None and to != me and to not in rule[me]:
            problems.append(f"{f}:{n}: {me}/ includes {name} from {to}/, which the rule does not allow")
for p in problems:
    print(p)
print(f"layering: {edges} includes checked, {len(problems)} problem(s)")
sys.exit(1 if problems else 0)
