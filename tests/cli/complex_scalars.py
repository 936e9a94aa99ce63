"""tests/cli/complex_scalars.py — numpy's side of complex_scalars.sh.

    complex_scalars.py gemm IN OUT TRANSA TRANSB ALPHA BETA
        OUT's C is ALPHA·op(A)·op(B) + BETA·C_in from IN's A, B (and C when
        BETA is not 0), op N, T or C (the conjugate transpose) as
        dgemm-dist's --transa/--transb read IN (T and C: the dataset holds
        the transpose); ALPHA, BETA as dgemm-dist takes them (i or j).
        For a run from --size, IN is what gen wrote with the same flags
        and seed (the same values).  The relative difference must be
        within rounding of the type (1e-12 for complex128, 1e-5 for
        complex64), C of IN's type and shape; the output's attributes
        alpha, alpha_im, beta, beta_im must be ALPHA's and BETA's parts.
    complex_scalars.py record FILE ALPHA BETA PIPELINED
        the last JSON record of FILE has alpha, alpha_im, beta, beta_im of
        ALPHA and BETA, a passed check, and a pipeline object (PIPELINED 1)
        or null (0).
Exit 0 when every check passed.
"""
import json
import sys

import h5py
import numpy as np


def scalar(s):
    """dgemm-dist's spelling (2-0.5i, i, (1+2j)) as Python's complex."""
    return complex(s.replace("i", "j"))


def op(x, t):
    """op(X) from the dataset as a run with --trans t reads it."""
    if t == "N":
        return x
    if t == "T":
        return x.T
    return x.conj().T


def gemm(inp, out, ta, tb, alpha, beta):
    alpha, beta = scalar(alpha), scalar(beta)
    with h5py.File(inp, "r") as f:
        a, b = f["A"][()], f["B"][()]
        c_in = f["C"][()] if beta != 0 else None
    want_type = a.dtype
    a128, b128 = a.astype(np.complex128), b.astype(np.complex128)
    want = alpha * (op(a128, ta) @ op(b128, tb)) if alpha != 0 else 0
    if c_in is not None:
        want = want + beta * c_in.astype(np.complex128)
    with h5py.File(out, "r") as f:
        ds = f["C"]
        got = ds[()]
        attrs = {k: float(ds.attrs[k]) for k in ("alpha", "alpha_im", "beta", "beta_im")}
    if got.dtype != want_type:
        print("FAIL gemm: C is %s, the inputs %s" % (got.dtype, want_type))
        return 1
    want = np.broadcast_to(np.asarray(want, dtype=np.complex128), got.shape)
    scale = np.max(np.abs(want)) or 1.0
    err = np.max(np.abs(got.astype(np.complex128) - want)) / scale
    bound = 1e-12 if want_type == np.complex128 else 1e-5
    if not err <= bound:
        print("FAIL gemm: C differs from %s·op(A)·op(B) + %s·C by %.3g (relative), bound %g" %
              (alpha, beta, err, bound))
        return 1
    parts = {"alpha": alpha.real, "alpha_im": alpha.imag, "beta": beta.real, "beta_im": beta.imag}
    if attrs != parts:
        print("FAIL gemm: the output's attributes %s, want %s" % (attrs, parts))
        return 1
    print("ok   C = %s·op%s(A)·op%s(B) + %s·C, %s %s (relative difference %.3g), attributes %s" %
          (alpha, ta, tb, beta, got.dtype, got.shape, err, attrs))
    return 0


def record(path, alpha, beta, pipelined):
    alpha, beta = scalar(alpha), scalar(beta)
    r = json.loads(open(path).read().splitlines()[-1])
    got = tuple(r[k] for k in ("alpha", "alpha_im", "beta", "beta_im"))
    want = (alpha.real, alpha.imag, beta.real, beta.imag)
    why = []
    if got != want:
        why.append("alpha, alpha_im, beta, beta_im %s, want %s" % (got, want))
    if not (r["check"] and r["check"]["passed"]):
        why.append("check %s" % r["check"])
    if (r["pipeline"] is not None) != (pipelined == "1"):
        why.append("pipeline %s, want %s" % (r["pipeline"], "an object" if pipelined == "1" else
                                               "null"))
    if why:
        print("FAIL record: " + "; ".join(why))
        return 1
    return 0


if __name__ == "__main__":
    a = sys.argv[1:]
    if len(a) == 7 and a[0] == "gemm":
        sys.exit(gemm(*a[1:]))
    if len(a) == 5 and a[0] == "record":
        sys.exit(record(*a[1:]))
    sys.exit("usage: complex_scalars.py gemm IN OUT TRANSA TRANSB ALPHA BETA | "
             "record FILE ALPHA BETA PIPELINED")
