"""python -m dgemm_dist --version | [--size N] [--backend B] [--dtype f64|f32]

--version: the package's version, the library's linked at run time and its
BLAS.  Otherwise a small checked multiply on every rank (under mpirun, or
one process): random A and B the same on every rank, each rank's blocks
multiplied with the library's check on, C compared with NumPy's A @ B;
prints PASSED or FAILED (exit 1).  What to run after an install."""
import argparse
import sys

import numpy as np
from mpi4py import MPI

import dgemm_dist


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m dgemm_dist", description=__doc__.split("\n")[0])
    ap.add_argument("--version", action="store_true", help="print the versions and exit")
    ap.add_argument("--size", type=int, default=500, help="M = N = K (default 500)")
    ap.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--dtype", default="f64", choices=["f64", "f32"])
    args = ap.parse_args(argv)
    comm = MPI.COMM_WORLD
    if args.version:
        if comm.rank == 0:
            print(f"dgemm_dist {dgemm_dist.__version__} (libdgemm-dist {dgemm_dist.version()}, "
                  f"{dgemm_dist.blas_version()})")
        return 0
    n = args.size
    dtype = np.float64 if args.dtype == "f64" else np.float32
    rng = np.random.default_rng(1)
    A = rng.standard_normal((n, n)).astype(dtype)
    B = rng.standard_normal((n, n)).astype(dtype)
    with dgemm_dist.Context(comm, backend=args.backend) as ctx:
        C = ctx.gemm(A[ctx.block(n, n)], B[ctx.block(n, n)], check=True)
        info = ctx.last_info
        ref = (A.astype(np.float64) @ B.astype(np.float64))[ctx.block(n, n)]
        err = float(np.abs(C - ref).max()) if C.size else 0.0
        err = comm.allreduce(err, op=MPI.MAX)
        tol = (1e-12 if dtype == np.float64 else 1e-4) * n
        ok = bool(info.check_passed) and err <= tol
        if comm.rank == 0:
            P, Q = ctx.grid
            print(f"dgemm_dist {dgemm_dist.__version__}: {n}x{n}x{n} {np.dtype(dtype).name} on {P}x{Q} ranks "
                  f"({ctx.backend}) in {info.multiply_seconds:.4f} s; check residual "
                  f"{info.check_residual:.3g}, max |C - numpy| {err:.2e} {'PASSED' if ok else 'FAILED'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
