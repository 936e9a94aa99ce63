"""tests/io/h5py_complex.py — complex matrices on h5py's side of the file.

    h5py_complex.py write DIR   h5py writes DIR/h5py.h5 (what test-io h5py-read
                                reads) and the bad inputs DIR/bad-*.h5
    h5py_complex.py check DIR   h5py reads the files test-io h5py-write wrote
                                (DIR/<path>-c128.h5, DIR/<path>-c64.h5): complex
                                dtypes, members r and i, every value
    h5py_complex.py product IN OUT   OUT's C is IN's A @ B, complex128, to
                                rounding

Values are tests/io/test_io.c's value_part: element (i, j) of matrix
`which` is v + (-(v + 1))j with v = 1024 i + j + 0.5 + 0.25 which, exact in
complex64 for these shapes.  Exit 0 when every check passed.
"""
import glob
import os
import sys

import h5py
import numpy as np


def values(rows, cols, which, dtype):
    i = np.arange(rows, dtype=np.float64)[:, None]
    j = np.arange(cols, dtype=np.float64)[None, :]
    v = 1024 * i + j + 0.5 + 0.25 * which
    return (v - 1j * (v + 1)).astype(dtype)


def parts(rows, cols, which, names, part_dtype):
    """The same values as a structured array of members `names`."""
    z = values(rows, cols, which, np.complex128)
    a = np.zeros((rows, cols), dtype=[(names[0], part_dtype), (names[1], part_dtype)])
    a[names[0]] = z.real
    a[names[1]] = z.imag
    return a


def write(d):
    with h5py.File(os.path.join(d, "h5py.h5"), "w") as f:
        # name, shape and which as test_io.c's from_h5py[] expects them
        f["c128"] = values(7, 5, 0, np.complex128)
        f["c64"] = values(13, 3, 1, np.complex64)
        f["c128_realimag"] = parts(2, 9, 2, ("real", "imag"), "<f8")
        f["c64_realimag"] = parts(1, 1, 3, ("real", "imag"), "<f4")
        f["c128_bigendian"] = values(5, 4, 0, ">c16")
        f.create_dataset("c64_chunked_gzip", data=values(11, 6, 1, np.complex64), chunks=(4, 3),
                         compression="gzip")
        # for the probe: A 3x4 and B 4x2; a column-major writer's A (3x4) and B (4x2)
        f["A"] = values(3, 4, 0, np.complex128)
        f["B"] = values(4, 2, 1, np.complex128)
        f["colA"] = values(3, 4, 0, np.complex64).T
        f["colB"] = values(4, 2, 1, np.complex64).T
    good_b = values(4, 2, 1, np.complex128)
    bad = {
        "mixed": np.zeros((3, 4), dtype=[("r", "<f8"), ("i", "<i8")]),
        "sizes": np.zeros((3, 4), dtype=[("r", "<f8"), ("i", "<f4")]),
        "three": np.zeros((3, 4), dtype=[("r", "<f8"), ("i", "<f8"), ("w", "<f8")]),
        "names": np.zeros((3, 4), dtype=[("re", "<f8"), ("im", "<f8")]),
        "c256": np.zeros((3, 4), dtype=np.clongdouble),
    }
    for name, a in bad.items():
        with h5py.File(os.path.join(d, "bad-%s.h5" % name), "w") as f:
            f["A"] = a
            f["B"] = good_b
    with h5py.File(os.path.join(d, "bad-realb.h5"), "w") as f:
        f["A"] = values(3, 4, 0, np.complex128)
        f["B"] = values(4, 2, 1, np.complex128).real
    print("wrote %s/h5py.h5 and %d bad inputs" % (d, len(bad) + 1))
    return 0


def check(d):
    fails = 0
    files = sorted(glob.glob(os.path.join(d, "*-c128.h5")) + glob.glob(os.path.join(d, "*-c64.h5")))
    paths = {os.path.basename(p).rsplit("-", 1)[0] for p in files}
    if not {"independent", "direct"} <= paths:
        print("FAIL: test-io h5py-write left %s in %s" % (sorted(paths) or "nothing", d))
        return 1
    for p in files:
        c128 = p.endswith("-c128.h5")
        dtype = np.complex128 if c128 else np.complex64
        m, n = (7, 5) if c128 else (13, 3)
        with h5py.File(p, "r") as f:
            for name, shape, which in (("C", (m, n), 0), ("grp/D", (n, m), 1)):
                ds = f[name]
                t = ds.id.get_type()
                members = [t.get_member_name(k) for k in range(t.get_nmembers())]
                a = ds[()]
                want = values(shape[0], shape[1], which, dtype)
                why = []
                if ds.dtype != dtype:
                    why.append("dtype %s, not %s" % (ds.dtype, np.dtype(dtype)))
                if members != [b"r", b"i"]:
                    why.append("members %s, not r and i" % members)
                if a.shape != shape:
                    why.append("shape %s, not %s" % (a.shape, shape))
                elif not np.array_equal(a, want):
                    why.append("%d of %d values wrong" % (np.count_nonzero(a != want), a.size))
                if why:
                    fails += 1
                    print("FAIL %s %s: %s" % (os.path.basename(p), name, "; ".join(why)))
                else:
                    print("ok   %s %s: %s %s, as written" % (os.path.basename(p), name, ds.dtype,
                                                          shape))
    return 1 if fails else 0


def product(inp, out):
    with h5py.File(inp, "r") as f:
        want = f["A"][()] @ f["B"][()]
    with h5py.File(out, "r") as f:
        got = f["C"][()]
    if got.dtype != want.dtype or got.shape != want.shape:
        print("FAIL product: C is %s %s, A @ B is %s %s" % (got.dtype, got.shape, want.dtype,
                                                         want.shape))
        return 1
    err = np.max(np.abs(got - want)) / np.max(np.abs(want))
    if not err <= 1e-12:
        print("FAIL product: C differs from A @ B by %.3g (relative)" % err)
        return 1
    print("ok   product: C is A @ B, %s %s (relative difference %.3g)" % (got.dtype, got.shape,
                                                                          err))
    return 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "product":
        sys.exit(product(sys.argv[2], sys.argv[3]))
    if len(sys.argv) != 3 or sys.argv[1] not in ("write", "check"):
        sys.exit("usage: h5py_complex.py write|check DIR | product IN OUT")
    sys.exit(write(sys.argv[2]) if sys.argv[1] == "write" else check(sys.argv[2]))
