#!/usr/bin/env python3
"""sass_compare.py — the device code of two builds compared kernel by kernel.

    sass_compare.py MAP BEFORE.a[,...] AFTER.a[,...]
    sass_compare.py --list LIB.a[,...]      (the kernels, as MAP names them)

BEFORE and AFTER: comma lists of static libraries (or objects) of the two
builds.  MAP: lines "old-member old-kernel = new-member new-kernel" (a
member is the object's file name without .cu.o, a kernel its demangled name
without the anonymous namespace and the parameter list; '#' starts a
comment); "old-member old-kernel = -" is a kernel the change removes on
purpose, "- = new-member new-kernel" one it adds.  For each pair it compares what cuobjdump reports: the resource
usage (registers, stack, shared, local and constant memory) and the SASS,
instruction by instruction with each instruction's encoding (so the
scheduling control bits too), the addresses at the start of a line left
out.  Symbol names are the only thing allowed to differ.  Prints one line
per pair and a verdict; exit 0 when every pair is identical and every
kernel of either build is in the map, 1 otherwise.
"""
import re
import subprocess
import sys


def demangle(names):
    out = subprocess.run(["c++filt"], input="\n".join(names), capture_output=True, text=True,
                         check=True).stdout.split("\n")
    return dict(zip(names, out))


def key(dem):
    d = dem.replace("(anonymous namespace)::", "")
    # drop the parameter list: the last top-level "(...)"
    depth = 0
    for i, c in enumerate(d):
        if c == "<":
            depth += 1
        elif c == ">":
            depth -= 1
        elif c == "(" and depth == 0:
            return d[:i]
    return d


def member_name(line):
    m = re.search(r":([^:/]+?)\.(?:cu\.)?o:\s*$", line)
    return m.group(1) if m else "?"


def dump(paths):
    """{(member, kernel): {"res": str, "sass": [str]}}"""
    funcs = {}
    mangled = {}
    for path in paths.split(","):
        sass = subprocess.run(["cuobjdump", "-sass", path], capture_output=True, text=True,
                              check=True).stdout
        res = subprocess.run(["cuobjdump", "-res-usage", path], capture_output=True, text=True,
                             check=True).stdout
        member, cur = path.rsplit("/", 1)[-1].split(".")[0], None  # an object: its name
        for line in sass.split("\n"):
            if line.startswith("member "):
                member = member_name(line)
            m = re.match(r"\s+Function : (\S+)", line)
            if m:
                cur = (member, m.group(1))
                funcs[cur] = {"res": "", "sass": []}
                mangled[m.group(1)] = None
                continue
            t = line.strip()
            if cur is None:
                continue
            # an instruction ("/*0040*/ OP ... ; /* 0x... */") or the second
            # half of its encoding ("/* 0x... */"); anything else is not code
            if re.match(r"^/\*[0-9a-f]{4,}\*/", t):
                t = re.sub(r"^/\*[0-9a-f]{4,}\*/", "", t)
            elif not re.match(r"^/\* 0x[0-9a-f]+ \*/$", t):
                continue
            funcs[cur]["sass"].append(" ".join(t.split()))
        member = path.rsplit("/", 1)[-1].split(".")[0]
        name = None
        for line in res.split("\n"):
            if line.startswith("member "):
                member = member_name(line)
            m = re.match(r"\s*Function (\S+):", line)
            if m:
                name = m.group(1)
                continue
            if name and "REG:" in line:
                if (member, name) in funcs:
                    funcs[(member, name)]["res"] = " ".join(line.split())
                name = None
    dem = demangle(list(mangled))
    return {(mb, key(dem[n])): v for (mb, n), v in funcs.items()}


def main():
    if len(sys.argv) == 3 and sys.argv[1] == "--list":
        for k, v in sorted(dump(sys.argv[2]).items()):
            print(f"{k[0]} {k[1]}    # {v['res']}")
        return 0
    if len(sys.argv) != 4:
        sys.stderr.write(__doc__)
        return 2
    pairs = []
    for line in open(sys.argv[1]):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        old, new = (None if s.strip() == "-" else tuple(x.strip() for x in s.split(None, 1))
                    for s in line.split(" = "))
        pairs.append((old, new))
    before, after = dump(sys.argv[2]), dump(sys.argv[3])
    bad = same = gone = 0
    for old, new in pairs:
        if old is None or new is None:
            side, k, funcs = ("removed", old, before) if new is None else ("added", new, after)
            if k not in funcs:
                print(f"MISSING  {side} {k[0]} {k[1]}")
                bad += 1
            else:
                print(f"{side.upper():9} {k[0]} {k[1]}")
                gone += 1
            continue
        a, b = before.get(old), after.get(new)
        if a is None or b is None:
            print(f"MISSING  {old[0]} {old[1]} -> {new[0]} {new[1]}"
                  f" ({'before' if a is None else 'after'})")
            bad += 1
            continue
        same_res = a["res"] == b["res"]
        same_sass = a["sass"] == b["sass"]
        n = sum(1 for s in a["sass"] if not s.startswith("/* 0x"))
        verdict = "IDENTICAL" if same_res and same_sass else "DIFFERENT"
        print(f"{verdict:9} {old[0]} {old[1]} -> {new[0]} {new[1]}: {n} instructions, "
              f"{a['res'] if same_res else a['res'] + ' / ' + b['res']}")
        if same_res and same_sass:
            same += 1
        else:
            bad += 1
    for side, funcs, idx in (("before", before, 0), ("after", after, 1)):
        mapped = {p[idx] for p in pairs}
        for k in sorted(set(funcs) - mapped):
            print(f"UNMAPPED {side}: {k[0]} {k[1]}")
            bad += 1
    print(f"verdict: {same} of {len(pairs) - gone} pairs identical, {gone} removed or added "
          f"as listed, {'no other difference' if not bad else str(bad) + ' problem(s) above'}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
