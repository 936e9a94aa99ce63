"""Context: dgemm-dist on an mpi4py communicator, and its multiplies.

Every check here is agreed before the library is called: each rank
describes its operands, one allgather brings every rank's description to
every rank, and every rank then finds the same first problem (the lowest
rank's) and raises the same exception, or calls the library.  A rank's
wrong dtype, non-contiguous array or block that does not fit the layout
therefore never leaves the others waiting in a collective."""
import atexit
import operator
import warnings
import weakref
from collections import namedtuple

import numpy as np
from mpi4py import MPI

from . import _core
from .arrays import LocalError, describe
from .errors import ERROR_USAGE, UsageError, raise_status
from .layout import Descriptor, block_range

GemmInfo = namedtuple("GemmInfo", "multiply_seconds exposed_comm_seconds tflops check_residual "
                      "check_passed bad_argument")
GemmInfo.__doc__ = "What one multiply did (dd_gemm_info): times of the slowest rank, the check's residual."

_TRANS = {"N": "N", "n": "N", "T": "T", "t": "T", "C": "T", "c": "T"}
_open = weakref.WeakValueDictionary()  # id -> Context, closed at exit in creation order
_serial = [0]


class Context:
    """dgemm-dist's context on an mpi4py communicator (collective).

    Context(comm=MPI.COMM_WORLD, backend='auto'|'cpu'|'cuda',
            comm_backend='auto'|'nccl'|'ce'|'mpi', kernel=None, panel=0,
            lookahead=0, grid=None or (P, Q), threads=0, dtype=numpy.float64,
            tune=False)

    The options are dd_context_options' (include/dgemm_dist.h): the same on
    every rank.  Use it in a with statement, or call close() on every rank;
    contexts still open at exit are closed then, in the order made."""

    def __init__(self, comm=None, *, backend="auto", comm_backend="auto", kernel=None, panel=0,
                 lookahead=0, grid=None, threads=0, dtype=np.float64, tune=False):
        comm = MPI.COMM_WORLD if comm is None else comm
        if not isinstance(comm, MPI.Comm):
            raise TypeError(f"comm must be an mpi4py communicator, not {type(comm).__name__}")
        self._cap = None
        P, Q = (0, 0) if grid is None else grid
        # another dtype goes to the library as a type it refuses, on every
        # rank alike, naming the option
        dt = np.dtype(dtype)
        dtype_code = {np.dtype(np.float64): 0, np.dtype(np.float32): 1}.get(dt, -1)
        st, msg, cap = _core.context_create(comm, str(backend), str(comm_backend),
                                            None if kernel is None else str(kernel), int(panel),
                                            int(lookahead), int(P), int(Q), int(threads),
                                            dtype_code, int(bool(tune)))
        if st:
            raise_status(st, msg)
        self._cap = cap
        # the Python side's own agreement traffic on a communicator of its own
        self._comm = comm.Dup()
        self.comm = comm
        self.grid = _core.context_grid(cap)[:2]
        self.coords = _core.context_grid(cap)[2:]
        self.backend = _core.context_backend(cap)
        self.rank, self.size = self._comm.Get_rank(), self._comm.Get_size()
        self.last_info = None
        _serial[0] += 1
        self._serial = _serial[0]
        _open[self._serial] = self

    # ---- lifetime -------------------------------------------------------------------
    def close(self):
        """Destroy the context (collective, before MPI is finalized)."""
        if self._cap is not None:
            cap, self._cap = self._cap, None
            _open.pop(self._serial, None)
            _core.context_destroy(cap)
            if not MPI.Is_finalized():
                self._comm.Free()

    @property
    def closed(self):
        return self._cap is None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        if getattr(self, "_cap", None) is None:
            return
        if MPI.Is_finalized():
            # local after MPI_Finalize: frees what needs no MPI
            _core.context_destroy(self._cap)
            self._cap = None
        else:
            # destroying is collective; a collection on some ranks only
            # would leave the others waiting: leave it to close() or exit
            warnings.warn("dgemm_dist.Context collected while open: call close() on every rank",
                          ResourceWarning, stacklevel=2)

    def __repr__(self):
        state = "closed" if self.closed else f"backend {self.backend}, grid {self.grid[0]}x{self.grid[1]}"
        return f"<dgemm_dist.Context {state}, rank {self.rank} of {self.size}>"

    # ---- the 2-D block layout -------------------------------------------------------
    def block(self, rows, cols):
        """(row slice, column slice) of this rank's block of a rows×cols
        matrix in the 2-D block layout: X[ctx.block(*X.shape)]."""
        (P, Q), (p, q) = self.grid, self.coords
        r0, nr = block_range(rows, P, p)
        c0, nc = block_range(cols, Q, q)
        return slice(r0, r0 + nr), slice(c0, c0 + nc)

    def block_shape(self, rows, cols):
        """This rank's block's shape of a rows×cols matrix."""
        r, c = self.block(rows, cols)
        return r.stop - r.start, c.stop - c.start

    # ---- descriptors ----------------------------------------------------------------
    def desc_block_cyclic(self, m, n, mb, nb, grid=None, rsrc=0, csrc=0, order="R", lld=None):
        """A block-cyclic Descriptor on this context's ranks (grid (nprow,
        npcol): the context's by default), lld this rank's local rows when
        not given."""
        nprow, npcol = self.grid if grid is None else grid
        if lld is None:
            probe = Descriptor.block_cyclic(m, n, mb, nb, nprow, npcol, 1, rsrc, csrc, order)
            lld = max(1, probe.local_shape(self.rank)[0])
        return Descriptor.block_cyclic(m, n, mb, nb, nprow, npcol, lld, rsrc, csrc, order)

    def desc_block(self, m, n, ld=None):
        """A 2-D block Descriptor on the context's grid, ld this rank's block width when not given."""
        if ld is None:
            ld = max(1, self.block_shape(m, n)[1])
        return Descriptor.block(m, n, ld)

    def local_shape(self, desc):
        return desc.local_shape(self.rank, self.grid)

    def local_indices(self, desc):
        return desc.local_indices(self.rank, self.grid)

    def local_array(self, desc, dtype=np.float64):
        """A zeroed local array for desc on this rank, laid out as the
        library reads it (column-major, leading dimension desc.lld, for
        block-cyclic; row-major for block)."""
        rows, cols = self.local_shape(desc)
        if desc.is_block_cyclic:
            return np.zeros((desc.lld, cols), dtype=dtype, order="F")[:rows]
        return np.zeros((rows, desc.lld), dtype=dtype)[:, :cols]

    # ---- agreement ------------------------------------------------------------------
    def _gather(self, mine):
        """Every rank's `mine` on every rank (collective)."""
        return self._comm.allgather(mine)

    @staticmethod
    def _first_error(gathered):
        for r, g in enumerate(gathered):
            if g.get("error"):
                return f"rank {r}: {g['error']}"
        return None

    def _require_open(self):
        if self._cap is None:
            raise ValueError("dgemm_dist: the context is closed")

    # ---- the multiplies -------------------------------------------------------------
    def gemm(self, A, B, C=None, alpha=1.0, beta=0.0, transa="N", transb="N", check=False):
        """C ← alpha·op(A)·op(B) + beta·C on this rank's blocks of the 2-D
        block layout (include/dgemm_dist.h): rank (p, q) of the P×Q grid holds
        rows block_range(R, P, p) × columns block_range(S, Q, q) of each
        stored R×S matrix (A: M×K, or K×M with transa 'T'; B: K×N or N×K;
        C: M×N), row-major.  The global sizes follow from the blocks.
        NumPy arrays run dd_gemm; GPU arrays (__cuda_array_interface__,
        DLPack) dd_gemm_device, in place.  C None: allocated (beta must be
        0; NumPy or CuPy as A).  Returns C; self.last_info says what the
        multiply did.  Collective; errors raised on every rank alike."""
        self._require_open()
        mine = {"error": None}
        ops = {}
        try:
            ta = _TRANS.get(transa) if isinstance(transa, str) else None
            tb = _TRANS.get(transb) if isinstance(transb, str) else None
            if ta is None or tb is None:
                raise LocalError(f"transa and transb are 'N', 'T' or 'C' (got {transa!r}, {transb!r})")
            mine["trans"] = ta + tb
            alpha, beta = _real("alpha", alpha), _real("beta", beta)
            for name, x in (("A", A), ("B", B), ("C", C)):
                if x is None:
                    if name != "C":
                        raise LocalError(f"{name} is None: pass an array (an empty block is a 0-row "
                                         "or 0-column array)")
                    if beta != 0:
                        raise LocalError(f"C is None with beta = {beta}: beta != 0 reads C; pass C")
                    continue
                op = describe(name, x)
                op.ld("C")  # its layout, checked here, used below
                ops[name] = op
            if "C" in ops and ops["C"].readonly:
                raise LocalError("C is read-only")
            kinds = {(o.dtype.name, o.device) for o in ops.values()}
            if len(kinds) > 1:
                raise LocalError("A, B and C differ: " + ", ".join(
                    f"{n} {o.dtype.name} on the {'GPU' if o.device else 'host'}" for n, o in ops.items())
                    + "; all three must have one dtype and live on one side")
            dev = ops["A"].device
            if dev and self.backend != "cuda":
                raise LocalError(f"GPU arrays on a context whose backend is {self.backend}: make the "
                                 "context with backend='cuda', or pass NumPy arrays")
            if "C" in ops and not dev:
                for n in ("A", "B"):
                    if np.may_share_memory(ops["C"].array, ops[n].array):
                        raise LocalError(f"C shares memory with {n}: C must be an array of its own")
            if C is None and dev and type(A).__module__.split(".")[0] not in ("cupy", "torch"):
                raise LocalError("C is None and A is a GPU array neither CuPy's nor PyTorch's: pass C")
            mine.update(dtype=ops["A"].dtype.name, device=dev,
                        shapes={n: o.shape for n, o in ops.items()})
        except Exception as e:  # agreed below like any refusal, so that no rank is left waiting
            mine = {"error": _message(e)}
        gathered = self._gather(mine)
        err = self._first_error(gathered)
        if not err:
            err, sizes = self._layout(gathered)
        if err:
            raise UsageError(err, ERROR_USAGE)
        M, N, K = sizes
        a, b = ops["A"], ops["B"]
        if C is None:
            C = _allocate_like(A, self.block_shape(M, N), a.dtype, a.device)
            ops["C"] = describe("C", C)
        c = ops["C"]
        st, msg, info = _core.gemm(self._cap, a.dtype == np.float32, a.device, ta, tb, M, N, K,
                                   alpha, a.ptr, a.ld("C"), b.ptr, b.ld("C"), beta,
                                   c.ptr, c.ld("C"), bool(check))
        self.last_info = GemmInfo(*info)
        if st:
            raise_status(st, msg, info[5])
        return C

    def _layout(self, gathered):
        """(None, (M, N, K)) when the gathered blocks form the 2-D block
        layout of one multiply, else (the first way they do not, None)."""
        P, Q = self.grid
        g0 = gathered[0]
        for r, g in enumerate(gathered):
            for key, what in (("trans", "transa, transb"), ("dtype", "the dtype"), ("device", "the memory")):
                if g[key] != g0[key]:
                    show = {"trans": lambda v: f"{v[0]}, {v[1]}", "dtype": str,
                            "device": lambda v: "GPU" if v else "host"}[key]
                    return (f"rank {r}: {what} differs between ranks: {show(g[key])} here, "
                            f"{show(g0[key])} on rank 0 (every rank passes the same)"), None
            if ("C" in g["shapes"]) != ("C" in g0["shapes"]):
                return f"rank {r}: C is {'given' if 'C' in g['shapes'] else 'None'} here, not on rank 0", None
        sizes = {}
        for name in ("A", "B", "C"):
            if name not in g0["shapes"]:
                continue
            shapes = [g["shapes"][name] for g in gathered]
            R = sum(shapes[p * Q][0] for p in range(P))
            S = sum(shapes[q][1] for q in range(Q))
            for r, sh in enumerate(shapes):
                p, q = divmod(r, Q)
                want = (block_range(R, P, p)[1], block_range(S, Q, q)[1])
                if tuple(sh) != want:
                    return (f"rank {r}: {name}'s block is {sh[0]}x{sh[1]}, but the 2-D block layout of "
                            f"the {R}x{S} {name} these blocks add up to gives rank {r} (grid row {p}, "
                            f"column {q} of {P}x{Q}) {want[0]}x{want[1]}: rows block_range({R}, {P}, {p}), "
                            f"columns block_range({S}, {Q}, {q})"), None
            sizes[name] = (R, S)
        ta, tb = g0["trans"]
        M, K = sizes["A"] if ta == "N" else sizes["A"][::-1]
        K2, N = sizes["B"] if tb == "N" else sizes["B"][::-1]
        if K != K2:
            return (f"op(A) is {M}x{K} and op(B) is {K2}x{N}: the inner sizes differ "
                    f"(A {sizes['A'][0]}x{sizes['A'][1]} transa {ta}, B {sizes['B'][0]}x{sizes['B'][1]} "
                    f"transb {tb})"), None
        if "C" in sizes and sizes["C"] != (M, N):
            return f"C is {sizes['C'][0]}x{sizes['C'][1]}, op(A)·op(B) is {M}x{N}", None
        return None, (M, N, K)

    def pgemm(self, A, descA, B, descB, C, descC, alpha=1.0, beta=0.0, transa="N", transb="N",
              M=None, N=None, K=None, ia=1, ja=1, ib=1, jb=1, ic=1, jc=1, check=False):
        """sub(C) ← alpha·op(sub(A))·op(sub(B)) + beta·sub(C) on local arrays
        that Descriptors describe (dd_pgemm: PBLAS's pdgemm, offsets 1-based).
        Block-cyclic local arrays are column-major (ctx.local_array makes
        them), block ones row-major.  M, N, K default to the whole of C and
        op(A).  NumPy arrays run dd_pgemm, GPU arrays dd_pgemm_device.
        Returns C.  Collective; errors raised on every rank alike."""
        self._require_open()
        ta = _TRANS.get(transa) if isinstance(transa, str) else None
        tb = _TRANS.get(transb) if isinstance(transb, str) else None
        mine = {"error": None}
        ops = {}
        try:
            if ta is None or tb is None:
                raise LocalError(f"transa and transb are 'N', 'T' or 'C' (got {transa!r}, {transb!r})")
            alpha, beta = _real("alpha", alpha), _real("beta", beta)
            ia, ja, ib, jb, ic, jc = (_int(n, v) for n, v in (("ia", ia), ("ja", ja), ("ib", ib),
                                                              ("jb", jb), ("ic", ic), ("jc", jc)))
            M, N, K = (None if v is None else _int(n, v) for n, v in (("M", M), ("N", N), ("K", K)))
            for name, x, d in (("A", A, descA), ("B", B, descB), ("C", C, descC)):
                if not isinstance(d, Descriptor):
                    raise LocalError(f"desc{name} is a {type(d).__name__}, not a dgemm_dist.Descriptor")
                op = describe(name, x)
                want = self.local_shape(d)
                if op.shape != tuple(want):
                    raise LocalError(f"{name}'s local array is {'x'.join(map(str, op.shape))}, desc{name} "
                                     f"gives this rank {want[0]}x{want[1]} (ctx.local_array(desc{name}) "
                                     "makes one)")
                ld = op.ld("F" if d.is_block_cyclic else "C")
                if min(op.shape) > 0 and op.shape[1 if d.is_block_cyclic else 0] > 1 and ld != d.lld:
                    raise LocalError(f"{name}'s local array has leading dimension {ld}, desc{name}'s lld "
                                     f"is {d.lld}")
                ops[name] = op
            if ops["C"].readonly:
                raise LocalError("C is read-only")
            kinds = {(o.dtype.name, o.device) for o in ops.values()}
            if len(kinds) > 1:
                raise LocalError("A, B and C differ: " + ", ".join(
                    f"{n} {o.dtype.name} on the {'GPU' if o.device else 'host'}" for n, o in ops.items())
                    + "; all three must have one dtype and live on one side")
            if ops["A"].device and self.backend != "cuda":
                raise LocalError(f"GPU arrays on a context whose backend is {self.backend}: make the "
                                 "context with backend='cuda', or pass NumPy arrays")
        except Exception as e:
            mine["error"] = _message(e)
        err = self._first_error(self._gather(mine))
        if err:
            raise UsageError(err, ERROR_USAGE)
        a, b, c = ops["A"], ops["B"], ops["C"]
        M = descC.m - ic + 1 if M is None else M
        N = descC.n - jc + 1 if N is None else N
        if K is None:
            K = (descA.n - ja + 1) if ta == "N" else (descA.m - ia + 1)
        st, msg, info = _core.pgemm(self._cap, a.dtype == np.float32, a.device, ta, tb, M, N, K, alpha,
                                    a.ptr, ia, ja, descA.as_tuple(), b.ptr, ib, jb, descB.as_tuple(),
                                    beta, c.ptr, ic, jc, descC.as_tuple(), bool(check))
        self.last_info = GemmInfo(*info)
        if st:
            raise_status(st, msg, info[5])
        return C


def _message(e):
    """A local refusal's message; an unexpected exception named by its type."""
    return str(e) if isinstance(e, LocalError) else f"{type(e).__name__}: {e}"


def _real(name, v):
    try:
        return float(v)
    except (TypeError, ValueError):
        raise LocalError(f"{name} is {v!r}: a real number") from None


def _int(name, v):
    try:
        return operator.index(v)  # int, numpy integers; not 1.0
    except TypeError:
        raise LocalError(f"{name} is {v!r}: an integer") from None


def _allocate_like(A, shape, dtype, device):
    if not device:
        return np.empty(shape, dtype=dtype)
    mod = type(A).__module__.split(".")[0]
    if mod == "cupy":
        import cupy
        return cupy.empty(shape, dtype=dtype)
    if mod == "torch":
        import torch
        return torch.empty(shape, dtype=getattr(torch, dtype.name), device=A.device)
    raise UsageError("C is None and A is a GPU array neither CuPy's nor PyTorch's: pass C", ERROR_USAGE)


@atexit.register
def _close_open_contexts():
    # before mpi4py finalizes MPI (its hook runs after Python's atexit
    # handlers); every rank closes its open contexts in the order made
    for key in sorted(list(_open.keys())):
        ctx = _open.get(key)
        if ctx is not None:
            ctx.close()
