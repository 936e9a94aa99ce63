#!/usr/bin/env python3
"""C = A·B from an HDF5 file, with dgemm_dist on every rank's block.

    mpirun -np 4 python h5_gemm.py --in mats.h5 --out c.h5 [--backend cpu] [--verify]

The file holds 2-D datasets A (M×K) and B (K×N), row-major, as h5py and
`dgemm-dist gen` write them.  Each rank reads its own block of A and B
(h5py slices: only those bytes are read), the library multiplies them with
its check on, and the ranks write their blocks of C into the output file
one after another (serial h5py: no parallel HDF5 needed).  --verify reads
the whole file on rank 0 and compares C with NumPy's A @ B."""
import argparse
import sys

import h5py
import numpy as np
from mpi4py import MPI

import dgemm_dist


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--in", dest="inp", required=True, help="HDF5 file with datasets A and B")
    ap.add_argument("--out", required=True, help="HDF5 file to write C to (replaced)")
    ap.add_argument("--backend", default="auto", choices=["auto", "cpu", "cuda"])
    ap.add_argument("--verify", action="store_true", help="compare C with numpy's A @ B on rank 0")
    args = ap.parse_args()
    comm = MPI.COMM_WORLD

    with h5py.File(args.inp, "r") as f:
        (M, K), (K2, N) = f["A"].shape, f["B"].shape
        dtype = np.result_type(f["A"].dtype, f["B"].dtype)
    if K != K2:
        sys.exit(f"h5_gemm: A is {M}x{K} and B is {K2}x{N}: the inner sizes differ")

    with dgemm_dist.Context(comm, backend=args.backend) as ctx:
        with h5py.File(args.inp, "r") as f:
            a = f["A"][ctx.block(M, K)].astype(dtype, copy=False)
            b = f["B"][ctx.block(K, N)].astype(dtype, copy=False)
        try:
            c = ctx.gemm(a, b, check=True)
        except dgemm_dist.DgemmDistError as e:  # raised on every rank alike
            if comm.rank == 0:
                print(f"h5_gemm: {e}", file=sys.stderr)
            return 1
        info = ctx.last_info
        P, Q = ctx.grid
        # the blocks of C into the file, rank by rank
        for r in range(comm.size):
            if r == comm.rank:
                with h5py.File(args.out, "w" if r == 0 else "r+") as f:
                    d = f["C"] if r else f.create_dataset("C", (M, N), dtype=dtype)
                    d[ctx.block(M, N)] = c
            comm.Barrier()
        backend = ctx.backend
    ok = True
    if args.verify and comm.rank == 0:
        with h5py.File(args.inp, "r") as f, h5py.File(args.out, "r") as g:
            A, B, C = f["A"][...], f["B"][...], g["C"][...]
        ref = A.astype(np.float64) @ B.astype(np.float64)
        err = float(np.abs(C - ref).max()) / max(1.0, float(np.abs(ref).max()))
        ok = err < (1e-12 if dtype == np.float64 else 1e-5) * K
        print(f"h5_gemm: numpy's A @ B: max relative difference {err:.2e} {'ok' if ok else 'TOO LARGE'}")
    ok = comm.bcast(ok)
    if comm.rank == 0:
        verdict = "PASSED" if info.check_passed and ok else "FAILED"
        print(f"h5_gemm: C ({M}x{N}, {np.dtype(dtype).name}) = A·B on {P}x{Q} ranks ({backend}) "
              f"in {info.multiply_seconds:.4f} s, written to {args.out}; "
              f"check residual {info.check_residual:.3g} {verdict}")
    return 0 if info.check_passed and ok else 1


if __name__ == "__main__":
    sys.exit(main())
