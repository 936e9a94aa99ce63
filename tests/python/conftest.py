"""pytest under mpirun: every rank runs every test in the same order.

A test asserts with everywhere(): the condition of every rank, combined,
so that all ranks pass or fail a test together and none is left in a
collective of the next one.  Fixtures: comm (MPI.COMM_WORLD), ctx (one CPU
context for the whole session)."""
import numpy as np
import pytest
from mpi4py import MPI

import dgemm_dist


@pytest.fixture(scope="session")
def comm():
    return MPI.COMM_WORLD


@pytest.fixture(scope="session")
def ctx():
    c = dgemm_dist.Context(MPI.COMM_WORLD, backend="cpu")
    yield c
    c.close()


def everywhere(ok):
    """True when ok is true on every rank (collective)."""
    return MPI.COMM_WORLD.allreduce(bool(ok), op=MPI.LAND)


def same_everywhere(value):
    """True when value is equal on every rank (collective)."""
    vals = MPI.COMM_WORLD.allgather(value)
    return all(v == vals[0] for v in vals)


def raises_everywhere(exc_type, fn, *args, **kwargs):
    """The message of exc_type raised by fn on every rank, the same message
    everywhere; fails (on every rank) otherwise."""
    try:
        fn(*args, **kwargs)
        got = None
    except exc_type as e:
        got = str(e)
    msgs = MPI.COMM_WORLD.allgather(got)
    assert all(m is not None for m in msgs), f"not raised on every rank: {msgs}"
    assert all(m == msgs[0] for m in msgs), f"the messages differ between ranks: {msgs}"
    return msgs[0]


def operands(seed, shape, dtype):
    """The same random matrix on every rank (a seeded generator)."""
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def tolerance(dtype, k):
    return (1e-12 if np.dtype(dtype) == np.float64 else 2e-5) * max(1, k) * 10


def still_in_step(ctx):
    """A small multiply that every rank must complete: after a refusal, the
    ranks are still together."""
    A = operands(99, (5, 4), np.float64)
    B = operands(98, (4, 3), np.float64)
    C = ctx.gemm(A[ctx.block(5, 4)], B[ctx.block(4, 3)])
    return everywhere(np.allclose(C, (A @ B)[ctx.block(5, 3)], rtol=0, atol=1e-12))
