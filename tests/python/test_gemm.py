"""Context.gemm on the 2-D block layout against NumPy's @ (tests/python)."""
import numpy as np
import pytest
from conftest import everywhere, operands, same_everywhere, tolerance

import dgemm_dist

SHAPES = [(7, 5, 6), (13, 9, 11), (1, 1, 1), (3, 2, 1), (2, 7, 3)]


def stored(name, rows, cols, trans):
    """The stored shape of an operand op(X) of rows×cols."""
    return (cols, rows) if trans == "T" else (rows, cols)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("transa,transb", [("N", "N"), ("N", "T"), ("T", "N"), ("T", "T")])
@pytest.mark.parametrize("M,N,K", SHAPES)
def test_gemm_matches_numpy(ctx, dtype, transa, transb, M, N, K):
    A = operands(1, stored("A", M, K, transa), dtype)
    B = operands(2, stored("B", K, N, transb), dtype)
    opA = A.T if transa == "T" else A
    opB = B.T if transb == "T" else B
    C = ctx.gemm(A[ctx.block(*A.shape)], B[ctx.block(*B.shape)], transa=transa, transb=transb)
    ref = (opA.astype(np.float64) @ opB.astype(np.float64))[ctx.block(M, N)]
    assert everywhere(C.dtype == dtype and C.shape == ref.shape
                      and np.allclose(C, ref, rtol=0, atol=tolerance(dtype, K)))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_alpha_beta_and_c_in_place(ctx, dtype):
    M, N, K = 9, 8, 7
    A, B, C0 = operands(3, (M, K), dtype), operands(4, (K, N), dtype), operands(5, (M, N), dtype)
    C = np.array(C0[ctx.block(M, N)])
    out = ctx.gemm(A[ctx.block(M, K)], B[ctx.block(K, N)], C, alpha=-0.5, beta=2.0)
    ref = (-0.5 * (A @ B) + 2.0 * C0)[ctx.block(M, N)]
    assert everywhere(out is C and np.allclose(C, ref, rtol=0, atol=tolerance(dtype, K)))


def test_alpha_zero_scales_c_only(ctx):
    M, N, K = 6, 5, 4
    C0 = operands(6, (M, N), np.float64)
    C = np.array(C0[ctx.block(M, N)])
    A = np.full((M, K), np.nan)  # not read when alpha = 0
    ctx.gemm(A[ctx.block(M, K)], np.full((K, N), np.nan)[ctx.block(K, N)], C, alpha=0.0, beta=3.0)
    assert everywhere(np.array_equal(C, 3.0 * C0[ctx.block(M, N)]))


def test_beta_zero_never_reads_c(ctx):
    M, N, K = 5, 6, 3
    A, B = operands(7, (M, K), np.float64), operands(8, (K, N), np.float64)
    C = np.full(ctx.block_shape(M, N), np.nan)
    ctx.gemm(A[ctx.block(M, K)], B[ctx.block(K, N)], C)
    assert everywhere(np.allclose(C, (A @ B)[ctx.block(M, N)], rtol=0, atol=1e-12))


def test_leading_dimension_of_a_slice(ctx):
    """A block that is a slice of a wider array: its rows lie further apart
    than its width, and are read in place with that leading dimension."""
    M, N, K = 8, 6, 10
    A, B = operands(9, (M, K), np.float64), operands(10, (K, N), np.float64)
    Apad = np.zeros((M, K + 7))
    Apad[:, 3:3 + K] = A
    rows, cols = ctx.block(M, K)
    blockA = Apad[rows, slice(3 + cols.start, 3 + cols.stop)]
    Cpad = np.zeros((ctx.block_shape(M, N)[0], ctx.block_shape(M, N)[1] + 5))
    C = Cpad[:, 2:2 + ctx.block_shape(M, N)[1]]
    ctx.gemm(blockA, B[ctx.block(K, N)], C)
    assert everywhere(np.allclose(C, (A @ B)[ctx.block(M, N)], rtol=0, atol=1e-12)
                      and not Cpad[:, :2].any() and not Cpad[:, 2 + C.shape[1]:].any())


def test_check_reports_a_passed_residual(ctx):
    M, N, K = 30, 20, 25
    A, B = operands(11, (M, K), np.float64), operands(12, (K, N), np.float64)
    ctx.gemm(A[ctx.block(M, K)], B[ctx.block(K, N)], check=True)
    info = ctx.last_info
    assert everywhere(info.check_passed == 1 and np.isfinite(info.check_residual))
    assert same_everywhere(info.multiply_seconds)


def test_module_gemm_on_the_default_context(comm):
    M, N, K = 6, 7, 8
    A, B = operands(13, (M, K), np.float64), operands(14, (K, N), np.float64)
    ctx = dgemm_dist.Context(comm, backend="cpu")
    try:
        rA, rB = A[ctx.block(M, K)], B[ctx.block(K, N)]
        want = (A @ B)[ctx.block(M, N)]
    finally:
        ctx.close()
    C = dgemm_dist.gemm(rA, rB)  # the default context: same grid as ctx
    assert everywhere(np.allclose(C, want, rtol=0, atol=1e-12))


def test_grid_and_block_helpers(ctx, comm):
    P, Q = ctx.grid
    p, q = ctx.coords
    assert everywhere(P * Q == comm.size and p * Q + q == comm.rank)
    # the blocks tile the matrix, in the library's own arithmetic
    starts = [dgemm_dist.block_range(10, 3, i) for i in range(3)]
    assert starts == [(0, 4), (4, 3), (7, 3)]
    assert dgemm_dist.block_range(2, 3, 2) == (2, 0)
    assert dgemm_dist.block_slice(10, 3, 1) == slice(4, 7)
    with pytest.raises(dgemm_dist.UsageError):
        dgemm_dist.block_range(5, 0, 0)
    with pytest.raises(dgemm_dist.UsageError):
        dgemm_dist.block_range(5, 2, 2)
    assert dgemm_dist.numroc(10, 3, 1, 0, 2) == 4  # blocks 1 and 3: 3 + 1


def test_versions(ctx):
    assert dgemm_dist.version() == dgemm_dist.__version__
    assert "OpenBLAS" in dgemm_dist.blas_version() or dgemm_dist.blas_version()
    assert ctx.backend == "cpu"
