#!/bin/bash
# README.md is a first page: at most 250 lines, with a table of contents
# (a "## Contents" section linking every other "## " section), the two
# commands first, and the README checks' marks kept (the commands' marks are
# read by commands.sh).  What does not fit goes to docs/ and is linked.
#
#   tests/readme/length.sh README.md
set -euo pipefail
readme=${1:?usage: $0 README.md}
fails=0
n=$(wc -l <"$readme")
if ((n > 250)); then echo "FAIL: README.md has $n lines (at most 250)"; fails=$((fails + 1)); fi
python3 - "$readme" <<'PY' || fails=$((fails + 1))
import re, sys
text = open(sys.argv[1], encoding="utf-8").read()
heads = re.findall(r"^## (.+)$", text, re.M)
bad = []
if not heads or heads[0] != "Contents":
    bad.append("the first section is not '## Contents'")
elif len(heads) < 2 or heads[1] != "The two commands":
    bad.append("'## The two commands' does not follow the contents")
else:
    toc = text.split("## Contents", 1)[1].split("\n## ", 1)[0]
    def anchor(h):
        return re.sub(r"[^\w\- ]", "", h.lower()).replace(" ", "-")
    for h in heads[1:]:
        if f"(#{anchor(h)})" not in toc:
            bad.append(f"the contents do not link '## {h}' (#{anchor(h)})")
for b in bad:
    print("FAIL: README.md: " + b)
sys.exit(1 if bad else 0)
PY
((fails == 0)) || exit 1
echo "PASS (readme length): $n lines, contents link every section"
