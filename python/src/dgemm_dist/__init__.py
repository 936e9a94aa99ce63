"""dgemm_dist — distributed GEMM (SUMMA) over MPI on CPUs and GPUs.

    from mpi4py import MPI
    import dgemm_dist
    with dgemm_dist.Context(MPI.COMM_WORLD, backend="cpu") as ctx:
        rows, cols = ctx.block(M, K)          # this rank's block of an M×K A
        C = ctx.gemm(A_block, B_block)        # this rank's block of C = A·B

The Python interface to libdgemm-dist's public C API (include/dgemm_dist.h);
docs/python.md describes it."""
from . import _core
from .context import Context, GemmInfo
from .errors import (CheckFailed, CommError, DgemmDistError, OutOfMemory, Unsupported,
                     UsageError)
from .layout import Descriptor, block_range, block_slice, numroc

__version__ = _core.HEADER_VERSION
__all__ = ["Context", "GemmInfo", "Descriptor", "block_range", "block_slice", "numroc", "gemm",
           "version", "blas_version", "DgemmDistError", "UsageError", "OutOfMemory", "CheckFailed",
           "Unsupported", "CommError"]

_default = []


def version():
    """The version of libdgemm-dist linked at run time, as "major.minor.patch"."""
    return "%d.%d.%d" % _core.version()


def blas_version():
    """The CPU BLAS the library was linked with."""
    return _core.blas_version()


def gemm(A, B, C=None, alpha=1.0, beta=0.0, transa="N", transb="N", ctx=None, check=False):
    """Context.gemm on ctx, or on a default context over MPI.COMM_WORLD
    (backend auto) made at the first call (collective) and closed at exit."""
    if ctx is None:
        if not _default or _default[0].closed:
            _default[:] = [Context()]
        ctx = _default[0]
    return ctx.gemm(A, B, C, alpha=alpha, beta=beta, transa=transa, transb=transb, check=check)
