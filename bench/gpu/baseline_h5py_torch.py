#!/usr/bin/env python3
"""The job a user would otherwise write: h5py reads A and B, PyTorch
multiplies them on one GPU, h5py writes C.  A baseline for the whole-run
benchmark (bench/gpu/wholerun.sh) on a GPU host that has h5py and PyTorch;
never a dependency of dgemm-dist.
    baseline_h5py_torch.py IN.h5 OUT.h5   (datasets A, B in; C out)
Prints one JSON line with the phase times."""
import json
import sys
import time

import h5py
import torch

t0 = time.perf_counter()
with h5py.File(sys.argv[1], "r") as f:
    a = f["A"][...]
    b = f["B"][...]
t1 = time.perf_counter()
ta = torch.from_numpy(a).cuda()
tb = torch.from_numpy(b).cuda()
torch.cuda.synchronize()
t2 = time.perf_counter()
tc = ta @ tb
torch.cuda.synchronize()
t3 = time.perf_counter()
c = tc.cpu().numpy()
t4 = time.perf_counter()
with h5py.File(sys.argv[2], "w") as f:
    f.create_dataset("C", data=c)
t5 = time.perf_counter()
print(json.dumps({"read": t1 - t0, "upload": t2 - t1, "multiply": t3 - t2,
                  "download": t4 - t3, "write": t5 - t4, "total": t5 - t0}))
