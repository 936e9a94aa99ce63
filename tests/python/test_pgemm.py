"""Context.pgemm on ScaLAPACK-style descriptors against NumPy's @ (tests/python)."""
import numpy as np
import pytest
from conftest import everywhere, operands, tolerance

import dgemm_dist


def grids(size):
    out = {(size, 1), (1, size)}
    for p in range(1, size + 1):
        if size % p == 0:
            out.add((p, size // p))
    return sorted(out)


def local_of(ctx, desc, X):
    """This rank's local array of the global X, laid out as desc says."""
    out = ctx.local_array(desc, X.dtype)
    rows, cols = ctx.local_indices(desc)
    out[...] = X[np.ix_(rows, cols)]
    return out


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("mb,nb", [(1, 1), (2, 3), (4, 2), (64, 64)])
@pytest.mark.parametrize("order", ["R", "C"])
@pytest.mark.parametrize("transa,transb", [("N", "N"), ("T", "N"), ("N", "T")])
def test_block_cyclic_matches_numpy(ctx, comm, dtype, mb, nb, order, transa, transb):
    M, N, K = 11, 9, 7
    for grid in grids(comm.size):
        sa = (K, M) if transa == "T" else (M, K)
        sb = (N, K) if transb == "T" else (K, N)
        A, B, C0 = operands(21, sa, dtype), operands(22, sb, dtype), operands(23, (M, N), dtype)
        dA = ctx.desc_block_cyclic(*sa, mb, nb, grid=grid, order=order)
        dB = ctx.desc_block_cyclic(*sb, nb, mb, grid=grid, order=order, rsrc=grid[0] - 1)
        dC = ctx.desc_block_cyclic(M, N, mb, mb, grid=grid, order=order, csrc=grid[1] - 1)
        a, b, c = local_of(ctx, dA, A), local_of(ctx, dB, B), local_of(ctx, dC, C0)
        out = ctx.pgemm(a, dA, b, dB, c, dC, alpha=1.5, beta=-1.0, transa=transa, transb=transb)
        opA = A.T if transa == "T" else A
        opB = B.T if transb == "T" else B
        ref = 1.5 * (opA.astype(np.float64) @ opB.astype(np.float64)) - C0
        assert everywhere(out is c and np.allclose(c, local_of(ctx, dC, ref.astype(dtype)), rtol=0,
                                                   atol=tolerance(dtype, K)))


def test_submatrices_at_offsets(ctx):
    """sub(C)(2:6, 3:7) = sub(A)(2:6, 1:3) · sub(B)(4:6, 3:7), 1-based as PBLAS
    counts; the rest of C untouched."""
    Ag, Bg, Cg = operands(31, (8, 5), np.float64), operands(32, (7, 9), np.float64), operands(33, (8, 9), np.float64)
    dA, dB, dC = (ctx.desc_block_cyclic(8, 5, 2, 2), ctx.desc_block_cyclic(7, 9, 3, 2),
                  ctx.desc_block_cyclic(8, 9, 2, 3))
    a, b, c = local_of(ctx, dA, Ag), local_of(ctx, dB, Bg), local_of(ctx, dC, Cg)
    ctx.pgemm(a, dA, b, dB, c, dC, M=5, N=5, K=3, ia=2, ja=1, ib=4, jb=3, ic=2, jc=3)
    ref = Cg.copy()
    ref[1:6, 2:7] = Ag[1:6, 0:3] @ Bg[3:6, 2:7]
    assert everywhere(np.allclose(c, local_of(ctx, dC, ref), rtol=0, atol=1e-12))


def test_block_descriptors_and_mixed_layouts(ctx):
    """A in the 2-D block layout (row-major local blocks), B and C block-cyclic."""
    M, N, K = 10, 6, 8
    A, B = operands(41, (M, K), np.float64), operands(42, (K, N), np.float64)
    dA = ctx.desc_block(M, K)
    dB, dC = ctx.desc_block_cyclic(K, N, 3, 2), ctx.desc_block_cyclic(M, N, 2, 2)
    a = np.ascontiguousarray(A[ctx.block(M, K)])
    assert everywhere(ctx.local_shape(dA) == a.shape)
    b, c = local_of(ctx, dB, B), ctx.local_array(dC)
    ctx.pgemm(a, dA, b, dB, c, dC, check=True)
    assert everywhere(np.allclose(c, local_of(ctx, dC, A @ B), rtol=0, atol=1e-12)
                      and ctx.last_info.check_passed == 1)


def test_local_arrays_with_a_larger_lld(ctx):
    M, N, K = 9, 7, 5
    A, B = operands(51, (M, K), np.float64), operands(52, (K, N), np.float64)
    dA = ctx.desc_block_cyclic(M, K, 2, 2)
    dA = ctx.desc_block_cyclic(M, K, 2, 2, lld=dA.lld + 3)
    dB, dC = ctx.desc_block_cyclic(K, N, 2, 2), ctx.desc_block_cyclic(M, N, 2, 2)
    a = local_of(ctx, dA, A)
    assert everywhere(a.strides[1] == dA.lld * 8)
    c = ctx.local_array(dC)
    ctx.pgemm(a, dA, local_of(ctx, dB, B), dB, c, dC)
    assert everywhere(np.allclose(c, local_of(ctx, dC, A @ B), rtol=0, atol=1e-12))


def test_descriptor_fields_and_refusals():
    d = dgemm_dist.Descriptor.block_cyclic(100, 50, 8, 4, 2, 3, lld=56, rsrc=1, order="C")
    assert (d.m, d.n, d.mb, d.nb, d.nprow, d.npcol, d.lld, d.rsrc, d.csrc, d.order) == \
        (100, 50, 8, 4, 2, 3, 56, 1, 0, "C")
    # rank 3 of a column-major 2x3 grid is grid row 1, column 1
    assert d.coords(3) == (1, 1)
    assert d.local_shape(3) == (dgemm_dist.numroc(100, 8, 1, 1, 2), dgemm_dist.numroc(50, 4, 1, 0, 3))
    for bad in (dict(mb=0), dict(rsrc=2), dict(order="X"), dict(lld=0)):
        kw = dict(m=10, n=10, mb=2, nb=2, nprow=2, npcol=1, lld=10)
        kw.update(bad)
        with pytest.raises(dgemm_dist.UsageError):
            dgemm_dist.Descriptor.block_cyclic(**kw)
