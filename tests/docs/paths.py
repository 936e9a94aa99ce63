#!/usr/bin/env python3
"""tests/docs/paths.py [ROOT] — every repository path a sentence names exists.

Looks at README.md, docs/*.md (not the dated entries under docs/results/),
kernels/README.md, every CMake file and every source comment (C, CUDA,
shell, Python files tracked by git) for two kinds of names:
  - a path from the repository root (src/..., kernels/..., tests/..., ...):
    the file or folder must exist;
  - a relative Markdown link [text](target): the target, resolved from the
    page's folder, must exist, and a #anchor in it (or alone: this page)
    must be one of the target page's headings as GitHub makes them
    (lower case, punctuation but - and _ dropped, spaces as -, a repeated
    heading's anchor numbered -1, -2, ...); web links are not checked.
In CMake files, ${PROJECT_SOURCE_DIR}/... and ${CMAKE_SOURCE_DIR}/... are
root paths too.  A name with a wildcard or a placeholder (*, NN_, XXX, <...>, $...) is a
pattern, not a path, and is skipped; a name without its extension (a
tool, a page) stands for the file that has one.  Paths under the build
tree are not the repository's: "build/..." is not a root path here, nor is
a path through a build/ folder (python/build, pip's).  Prints each stale name with where it
is, and exits 1 when there is one."""
import os
import re
import subprocess
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
os.chdir(root)
TOPS = "src|kernels|comm|io|tests|jobs|docs|include|examples|cmake|bench|tools|python|packaging"
# a root path: not preceded by a path character (so ../x and a/b/x are not taken for x)
ROOTPATH = re.compile(r"(?<![\w./$}{~-])((?:%s)/[\w./+-]*[\w/])(?![\w*{<\\-])" % TOPS)
MDLINK = re.compile(r"\]\(([^)\s]+)\)")
# in CMake, a path from the source tree's root spelled with its variable
CMAKEROOT = re.compile(r"\$\{(?:PROJECT_SOURCE_DIR|CMAKE_SOURCE_DIR)\}/([\w./+-]*[\w/])(?![\w*{<\\$-])")
SKIP = re.compile(r"[*<>$]|NN_|XXX|\.\.\.")


def tracked():
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], capture_output=True,
                         text=True, check=True).stdout.split("\n")
    return [f for f in out if f and os.path.exists(f)]


def wanted(f):
    if f.startswith("docs/results/"):
        return False
    if f.endswith(".md"):
        return f == "README.md" or f.startswith("docs/") or f == "kernels/README.md" or f.count("/") <= 2
    base = os.path.basename(f)
    return base == "CMakeLists.txt" or f.endswith((".cmake", ".c", ".h", ".cu", ".cuh", ".sh", ".py",
                                                   ".def", ".in"))


def exists(p):
    """The path, or a file it names without its extension (a tool, a page)."""
    p = p.rstrip(".,;:/")
    if os.path.exists(p):
        return True
    d, b = os.path.split(p)
    return os.path.isdir(d or ".") and any(x.startswith(b + ".") for x in os.listdir(d or "."))


def slug(heading):
    t = re.sub(r"[`*]|<[^>]*>", "", heading).strip().lower()
    t = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", t)  # a link in a heading: its text
    return re.sub(r"[^\w\- ]", "", t).replace(" ", "-")


anchor_cache = {}


def anchors(md):
    """The #anchors of a Markdown page's headings (not those in code blocks)."""
    if md not in anchor_cache:
        seen, out, fence = {}, set(), False
        for line in open(md, encoding="utf-8", errors="replace"):
            if line.lstrip().startswith("```"):
                fence = not fence
            m = None if fence else re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m:
                a = slug(m.group(1))
                k = seen.get(a, 0)
                seen[a] = k + 1
                out.add(a if k == 0 else f"{a}-{k}")
        anchor_cache[md] = out
    return anchor_cache[md]


stale = []
for f in tracked():
    if not wanted(f):
        continue
    try:
        lines = open(f, encoding="utf-8", errors="replace").read().split("\n")
    except OSError:
        continue
    for n, line in enumerate(lines, 1):
        for m in ROOTPATH.finditer(line):
            p = m.group(1).rstrip(".,;:)")
            if SKIP.search(p) or p.endswith("/") and p.count("/") == 1 or "build" in p.split("/"):
                continue
            if not exists(p):
                stale.append(f"{f}:{n}: names {p}, which does not exist")
        if f.endswith(".cmake") or os.path.basename(f) == "CMakeLists.txt":
            for m in CMAKEROOT.finditer(line):
                p = m.group(1)
                if not SKIP.search(p) and not exists(p):
                    stale.append(f"{f}:{n}: names ${{PROJECT_SOURCE_DIR}}/{p}, which does not exist")
        if f.endswith(".md"):
            for m in MDLINK.finditer(line):
                t, _, frag = m.group(1).partition("#")
                if re.match(r"^[a-z]+:", t) or SKIP.search(t):
                    continue
                target = os.path.normpath(os.path.join(os.path.dirname(f), t)) if t else f
                if not os.path.exists(target):
                    stale.append(f"{f}:{n}: links {m.group(1)}, which does not exist")
                elif frag and target.endswith(".md") and frag not in anchors(target):
                    stale.append(f"{f}:{n}: links {m.group(1)}, and {target} has no heading #{frag}")
for s in stale:
    print(s)
print(f"paths: {len(stale)} stale name(s)")
sys.exit(1 if stale else 0)
