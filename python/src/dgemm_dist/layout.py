"""Distribution arithmetic: the 2-D block layout (block_range) and
ScaLAPACK's block-cyclic one (numroc, Descriptor), from the library's own
functions, so Python and C never disagree on who holds what."""
from dataclasses import dataclass

import numpy as np

from . import _core
from .errors import ERROR_USAGE, UsageError


def block_range(n, parts, index):
    """(start, length) of block `index` when a length n is cut into `parts`
    contiguous blocks differing by at most one (the first n % parts get one
    more): dd_block_range.  Local."""
    st, start, length = _core.block_range(int(n), int(parts), int(index))
    if st:
        raise UsageError(f"block_range({n}, {parts}, {index}): needs n >= 0, parts >= 1 and "
                         f"0 <= index < parts", st)
    return start, length


def block_slice(n, parts, index):
    """block_range as a slice: X[block_slice(M, P, p), block_slice(N, Q, q)]
    is rank (p, q)'s block of a global X."""
    start, length = block_range(n, parts, index)
    return slice(start, start + length)


def numroc(n, nb, iproc, isrc, nprocs):
    """ScaLAPACK's NUMROC (dd_numroc): how many of n elements, in blocks of
    nb dealt cyclically over nprocs from isrc, process iproc holds."""
    return _core.numroc(int(n), int(nb), int(iproc), int(isrc), int(nprocs))


@dataclass(frozen=True)
class Descriptor:
    """A dd_matrix_desc: how an m×n matrix is spread over an nprow×npcol
    grid.  Make one with Descriptor.block_cyclic or Descriptor.block (or a
    Context's desc_* methods, which fill in this rank's lld)."""

    layout: int
    m: int
    n: int
    mb: int
    nb: int
    rsrc: int
    csrc: int
    lld: int
    nprow: int
    npcol: int
    order: str

    @classmethod
    def block_cyclic(cls, m, n, mb, nb, nprow, npcol, lld, rsrc=0, csrc=0, order="R"):
        """ScaLAPACK's 2-D block-cyclic layout (DESC's M_, N_, MB_, NB_,
        RSRC_, CSRC_, LLD_); grid ranks row-major (order 'R') or
        column-major ('C'); local arrays column-major."""
        st, t = _core.desc_block_cyclic(int(m), int(n), int(mb), int(nb), int(rsrc), int(csrc),
                                        int(nprow), int(npcol), str(order), int(lld))
        if st:
            raise UsageError(
                f"Descriptor.block_cyclic(m={m}, n={n}, mb={mb}, nb={nb}, nprow={nprow}, npcol={npcol}, "
                f"lld={lld}, rsrc={rsrc}, csrc={csrc}, order={order!r}): needs m, n >= 0, mb, nb >= 1, "
                "0 <= rsrc < nprow, 0 <= csrc < npcol, order 'R' or 'C', lld >= 1", ERROR_USAGE)
        return cls(*t[:10], chr(t[10]) if isinstance(t[10], int) else t[10])

    @classmethod
    def block(cls, m, n, ld, nprow=0, npcol=0):
        """The 2-D block layout (row-major local blocks, leading dimension
        ld); nprow = npcol = 0: the context's grid."""
        st, t = _core.desc_block(int(m), int(n), int(nprow), int(npcol), int(ld))
        if st:
            raise UsageError(f"Descriptor.block(m={m}, n={n}, ld={ld}, nprow={nprow}, npcol={npcol}): "
                             "needs m, n >= 0, ld >= 1 and a grid of nprow, npcol >= 1 (or both 0)",
                             ERROR_USAGE)
        return cls(*t[:10], chr(t[10]) if isinstance(t[10], int) else t[10])

    @property
    def is_block_cyclic(self):
        return self.layout == _core.LAYOUT_BLOCK_CYCLIC

    def as_tuple(self):
        return (self.layout, self.m, self.n, self.mb, self.nb, self.rsrc, self.csrc, self.lld,
                self.nprow, self.npcol, self.order)

    def coords(self, rank, grid=None):
        """This rank's grid row and column in the descriptor's grid (grid:
        the context's (P, Q), for a block descriptor with nprow = npcol = 0)."""
        nprow, npcol = (self.nprow, self.npcol) if self.nprow else grid
        if self.order == "C":
            return rank % nprow, rank // nprow
        return rank // npcol, rank % npcol

    def local_shape(self, rank, grid=None):
        """(rows, columns) of the local array of `rank`."""
        pr, pc = self.coords(rank, grid)
        if self.is_block_cyclic:
            return (numroc(self.m, self.mb, pr, self.rsrc, self.nprow),
                    numroc(self.n, self.nb, pc, self.csrc, self.npcol))
        nprow, npcol = (self.nprow, self.npcol) if self.nprow else grid
        return block_range(self.m, nprow, pr)[1], block_range(self.n, npcol, pc)[1]

    def local_indices(self, rank, grid=None):
        """The global row and column indices (0-based numpy arrays) of
        `rank`'s local array, in local order: X[numpy.ix_(rows, cols)] is its
        local array of a global X."""
        pr, pc = self.coords(rank, grid)
        if not self.is_block_cyclic:
            nprow, npcol = (self.nprow, self.npcol) if self.nprow else grid
            r0, nr = block_range(self.m, nprow, pr)
            c0, nc = block_range(self.n, npcol, pc)
            return np.arange(r0, r0 + nr), np.arange(c0, c0 + nc)

        def cyclic(n, nb, p, src, nprocs):
            i = np.arange(n)
            return i[((i // nb) + src) % nprocs == p]  # block b on process (src + b) mod nprocs
        return (cyclic(self.m, self.mb, pr, self.rsrc, self.nprow),
                cyclic(self.n, self.nb, pc, self.csrc, self.npcol))
