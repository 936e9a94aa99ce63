"""Bad input: a clear exception, the same on every rank, and no hang; after
each refusal the ranks are still in step (tests/python)."""
import numpy as np
import pytest
from conftest import everywhere, operands, raises_everywhere, still_in_step

import dgemm_dist
from dgemm_dist import UsageError

M, N, K = 7, 6, 5


def blocks(ctx, dtype=np.float64):
    A, B = operands(61, (M, K), dtype), operands(62, (K, N), dtype)
    return np.array(A[ctx.block(M, K)]), np.array(B[ctx.block(K, N)])


def last(comm):
    return comm.rank == comm.size - 1


@pytest.mark.parametrize("dtype", [np.int64, np.float16, np.complex128, np.int32])
def test_wrong_dtype_everywhere(ctx, dtype):
    a, b = blocks(ctx)
    msg = raises_everywhere(UsageError, ctx.gemm, a.astype(dtype), b)
    assert msg.startswith("rank 0: A has dtype ") and "float64 or float32" in msg
    assert still_in_step(ctx)


def test_wrong_dtype_on_one_rank_only(ctx, comm):
    a, b = blocks(ctx)
    if last(comm):
        b = b.astype(np.int32)
    msg = raises_everywhere(UsageError, ctx.gemm, a, b)
    assert msg.startswith(f"rank {comm.size - 1}: B has dtype int32")
    assert still_in_step(ctx)


def test_mixed_float_types_refused(ctx):
    a, b = blocks(ctx)
    msg = raises_everywhere(UsageError, ctx.gemm, a, b.astype(np.float32))
    assert "A float64 on the host, B float32 on the host" in msg


def test_dtype_differs_between_ranks(ctx, comm):
    if comm.size == 1:
        pytest.skip("one rank")
    a, b = blocks(ctx, np.float32 if last(comm) else np.float64)
    msg = raises_everywhere(UsageError, ctx.gemm, a, b)
    assert "the dtype differs between ranks: float32 here, float64 on rank 0" in msg
    assert still_in_step(ctx)


def test_non_contiguous_on_one_rank(ctx, comm):
    a, b = blocks(ctx)
    if last(comm):
        wide = np.zeros((a.shape[0], 2 * a.shape[1]))
        wide[:, ::2] = a
        a = wide[:, ::2]  # every other column: not contiguous
    if a.shape[1] <= 1:
        pytest.skip("a block of one column is contiguous")
    msg = raises_everywhere(UsageError, ctx.gemm, a, b)
    assert f"rank {comm.size - 1}: A " in msg and "numpy.ascontiguousarray(A)" in msg
    assert still_in_step(ctx)


def test_fortran_order_refused(ctx):
    a, b = blocks(ctx)
    bf = np.asfortranarray(b)
    if b.shape[0] > 1 and b.shape[1] > 1:
        msg = raises_everywhere(UsageError, ctx.gemm, a, bf)
        assert "B (" in msg and "not row-major" in msg


def test_block_shapes_disagree_across_ranks(ctx, comm):
    if comm.size == 1:
        pytest.skip("one rank: any block is a whole matrix")
    a, b = blocks(ctx)
    if last(comm):
        a = np.array(a[:-1])  # one row short
    msg = raises_everywhere(UsageError, ctx.gemm, a, b)
    assert "A's block is" in msg and "block_range" in msg
    assert still_in_step(ctx)


def test_inner_sizes_differ(ctx):
    A, B = operands(1, (M, K), np.float64), operands(2, (K + 2, N), np.float64)
    msg = raises_everywhere(UsageError, ctx.gemm, A[ctx.block(M, K)], B[ctx.block(K + 2, N)])
    assert "inner sizes differ" in msg


def test_c_of_the_wrong_shape(ctx):
    a, b = blocks(ctx)
    C = np.zeros(ctx.block_shape(M + 1, N))
    msg = raises_everywhere(UsageError, ctx.gemm, a, b, C)
    assert "C is" in msg and f"op(A)·op(B) is {M}x{N}" in msg


def test_transposes_differ_between_ranks(ctx, comm):
    if comm.size == 1:
        pytest.skip("one rank")
    A, B = operands(1, (M, M), np.float64), operands(2, (M, M), np.float64)
    msg = raises_everywhere(UsageError, ctx.gemm, A[ctx.block(M, M)], B[ctx.block(M, M)],
                            transa="T" if last(comm) else "N")
    assert "transa, transb differs between ranks: T, N here, N, N on rank 0" in msg
    assert still_in_step(ctx)


def test_scalars_differ_between_ranks_the_library_says(ctx, comm):
    if comm.size == 1:
        pytest.skip("one rank")
    a, b = blocks(ctx)
    msg = raises_everywhere(UsageError, ctx.gemm, a, b, alpha=2.0 if last(comm) else 1.0)
    assert f"rank {comm.size - 1}: alpha differs between ranks: 2 here, 1 on rank 0" in msg
    assert still_in_step(ctx)


def test_scalars_that_are_not_numbers(ctx, comm):
    a, b = blocks(ctx)
    bad = "two" if last(comm) else 1.0
    msg = raises_everywhere(UsageError, ctx.gemm, a, b, alpha=bad)
    assert msg == f"rank {comm.size - 1}: alpha is 'two': a real number"
    d = ctx.desc_block_cyclic(4, 4, 2, 2)
    x = ctx.local_array(d)
    msg = raises_everywhere(UsageError, ctx.pgemm, x, d, ctx.local_array(d), d, ctx.local_array(d), d,
                            ia=1.0 if last(comm) else 1)
    assert msg == f"rank {comm.size - 1}: ia is 1.0: an integer"
    assert still_in_step(ctx)


@pytest.mark.parametrize("bad", ["X", 5, ""])
def test_bad_transpose(ctx, bad):
    a, b = blocks(ctx)
    msg = raises_everywhere(UsageError, ctx.gemm, a, b, transa=bad)
    assert "transa and transb are 'N', 'T' or 'C'" in msg


def test_read_only_c_and_c_none_with_beta(ctx):
    a, b = blocks(ctx)
    C = np.zeros(ctx.block_shape(M, N))
    C.flags.writeable = False
    assert "C is read-only" in raises_everywhere(UsageError, ctx.gemm, a, b, C)
    assert "beta != 0 reads C" in raises_everywhere(UsageError, ctx.gemm, a, b, None, beta=1.0)


def test_c_overlapping_a_refused(ctx):
    A = operands(1, (M, M), np.float64)
    blk = np.array(A[ctx.block(M, M)])
    assert "C shares memory with A" in raises_everywhere(UsageError, ctx.gemm, blk, blk.copy(), blk)


@pytest.mark.parametrize("bad", [[[1.0, 2.0]], "A", np.zeros((2, 2, 2)), None])
def test_not_a_matrix(ctx, bad):
    a, b = blocks(ctx)
    msg = raises_everywhere(UsageError, ctx.gemm, bad, b)
    assert msg.startswith("rank 0: A ")


def test_gpu_array_on_a_cpu_context(ctx):
    a, b = blocks(ctx)

    class FakeGpu:
        def __init__(self, x):
            self.x = x
            self.__cuda_array_interface__ = {"shape": x.shape, "typestr": x.dtype.str,
                                             "data": (x.ctypes.data, False), "version": 3,
                                             "strides": None, "stream": None}
    msg = raises_everywhere(UsageError, ctx.gemm, FakeGpu(a), FakeGpu(b))
    assert "GPU arrays on a context whose backend is cpu" in msg


def test_a_broken_array_interface_on_one_rank(ctx, comm):
    a, b = blocks(ctx)

    class Broken:
        __cuda_array_interface__ = {"shape": a.shape, "version": 3}  # no typestr, no data
    msg = raises_everywhere(UsageError, ctx.gemm, Broken() if last(comm) else a, b)
    assert msg == f"rank {comm.size - 1}: A could not be read as an array (KeyError: 'typestr')"
    assert still_in_step(ctx)


def test_context_options_refused_by_the_library(comm):
    msg = raises_everywhere(UsageError, dgemm_dist.Context, comm, backend="cpu",
                            lookahead=99 if comm.rank == comm.size - 1 else 0)
    assert "lookahead" in msg
    msg = raises_everywhere(UsageError, dgemm_dist.Context, comm, backend="cpu", lookahead=99)
    assert "lookahead" in msg
    msg = raises_everywhere(UsageError, dgemm_dist.Context, comm, backend="no-such")
    assert "no-such" in msg


def test_pgemm_refusals(ctx, comm):
    dA, dB, dC = (ctx.desc_block_cyclic(M, K, 2, 2), ctx.desc_block_cyclic(K, N, 2, 2),
                  ctx.desc_block_cyclic(M, N, 2, 2))
    a, b, c = ctx.local_array(dA), ctx.local_array(dB), ctx.local_array(dC)
    # the library's own: a submatrix outside A, PBLAS's argument number
    try:
        ctx.pgemm(a, dA, b, dB, c, dC, ia=3)
        got = None
    except UsageError as e:
        got = (str(e), e.bad_argument)
    gathered = comm.allgather(got)
    assert all(g == gathered[0] for g in gathered) and gathered[0][1] == 8 and "ia = 3" in gathered[0][0]
    # a local array that is not what the descriptor says, on one rank
    bad = np.zeros((a.shape[0] + 1, a.shape[1]), order="F") if last(comm) else a
    msg = raises_everywhere(UsageError, ctx.pgemm, bad, dA, b, dB, c, dC)
    assert f"rank {comm.size - 1}: A's local array is" in msg
    # row-major where column-major is read
    if a.shape[0] > 1 and a.shape[1] > 1:
        msg = raises_everywhere(UsageError, ctx.pgemm, np.ascontiguousarray(a), dA, b, dB, c, dC)
        assert "not column-major" in msg
    msg = raises_everywhere(UsageError, ctx.pgemm, a, "descA", b, dB, c, dC)
    assert "descA is a str" in msg
    assert still_in_step(ctx)


def test_closed_context_refused(comm):
    c = dgemm_dist.Context(comm, backend="cpu")
    c.close()
    c.close()  # a second close does nothing
    with pytest.raises(ValueError, match="closed"):
        c.gemm(np.zeros((1, 1)), np.zeros((1, 1)))
