#!/usr/bin/env python3
"""tests/docs/backends.py [ROOT] — below the library's composition root,
only a backend's own files and its *_select name it (docs/design.md,
section 3, "Layering").

Reads the C, CUDA and header files (comments removed) of the layers that
must not know which backend they run on: src/core, src/model, src/base,
src/engine, comm and io.  A string literal that is a backend's name —
an engine ("cpu", "cuda"), a comm backend ("mpi-host", "nccl", "mpi",
"ce", "cuda-ipc") or an I/O path ("direct", "collective", "independent")
— fails the test unless it is in that backend's own files (the name is
in the file's name: comm_nccl.c, engine_cuda_aux.c, io_direct.c), in a
*_select.c, or in the model's one map from a comm backend to its link
(src/model/model_csv.c).  src/api (the composition root), the program
(src/driver, src/cli) and the tests name backends freely.  Prints each
naming with where it is; exits 1 when there is one."""
import os
import re
import subprocess
import sys

root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "../.."))
os.chdir(root)
LAYERS = ("src/core/", "src/model/", "src/base/", "src/engine/", "comm/", "io/")
NAMES = {"cpu": "engine", "cuda": "engine", "mpi-host": "comm", "nccl": "comm", "mpi": "comm",
         "ce": "comm", "cuda-ipc": "comm", "direct": "io", "collective": "io",
         "independent": "io"}
MAP = {"src/model/model_csv.c"}
COMMENT = re.compile(r"/\*.*?\*/|//[^\n]*", re.S)
STRING = re.compile(r'"((?:[^"\\\n]|\\.)*)"')

files = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], capture_output=True, text=True,
                       check=True).stdout.split()
problems, looked = [], 0
for f in files:
    if not f.startswith(LAYERS) or not f.endswith((".c", ".h", ".cu", ".cuh")) or not os.path.exists(f):
        continue
    looked += 1
    base = os.path.basename(f)
    if base.endswith("_select.c") or f in MAP:
        continue
    own = set(re.split(r"[_.]", base))
    text = open(f, encoding="utf-8", errors="replace").read()
    # comments out, newlines kept, so line numbers stay
    code = COMMENT.sub(lambda m: "\n" * m.group(0).count("\n"), text)
    for n, line in enumerate(code.split("\n"), 1):
        for m in STRING.finditer(line):
            s = m.group(1)
            if s in NAMES and s.replace("-", "_").split("_")[0] not in own and s not in own:
                problems.append(f"{f}:{n}: names the {NAMES[s]} backend \"{s}\" (only its own "
                                f"files, its *_select.c or the model's link map may)")
for p in problems:
    print(p)
print(f"backends: {looked} files of the layers read, {len(problems)} naming(s) of a backend")
sys.exit(1 if problems else 0)
