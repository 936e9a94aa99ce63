"""GPU arrays: __cuda_array_interface__ and DLPack operands, read in place
(tests/python).

On a GPU (CuPy installed, every rank sees a GPU) the real thing against
NumPy's @; without one those tests are skipped.  The plumbing itself (the
array interfaces read, the device entries called with their pointers and
leading dimensions) is tested everywhere on the CPU backend, whose device
entries take host memory: arrays that present host memory through the GPU
interfaces stand in for GPU arrays there."""
import numpy as np
import pytest
from conftest import everywhere, operands, tolerance

import dgemm_dist
from dgemm_dist import arrays


class Cai:
    """Host memory presented as __cuda_array_interface__ (version 3)."""

    def __init__(self, x, stream=None):
        self.x = x
        self.__cuda_array_interface__ = {
            "shape": x.shape, "typestr": x.dtype.str, "data": (x.ctypes.data, not x.flags.writeable),
            "version": 3, "strides": None if x.flags.c_contiguous else x.strides, "stream": stream}


class DlpackOnDevice:
    """Host memory presented through DLPack as CUDA device 0."""

    def __init__(self, x):
        self.x = x

    def __dlpack_device__(self):
        return (arrays.DL_CUDA, 0)

    def __dlpack__(self, stream=None):
        return self.x.__dlpack__()


@pytest.fixture
def as_device(ctx, monkeypatch):
    """The CPU context taken for a CUDA one by the Python side (its device
    entries then get host pointers, which the CPU backend reads), stream
    synchronizations recorded instead of made."""
    synced = []
    monkeypatch.setattr(ctx, "backend", "cuda")
    monkeypatch.setattr(arrays, "cuda_stream_synchronize", synced.append)
    return synced


@pytest.mark.parametrize("wrap", [Cai, DlpackOnDevice])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_device_entries_read_the_interfaces(ctx, as_device, wrap, dtype):
    M, N, K = 9, 7, 8
    A, B = operands(71, (M, K), dtype), operands(72, (K, N), dtype)
    C = np.zeros(ctx.block_shape(M, N), dtype=dtype)
    # A a slice of a wider array (its leading dimension K + 4)
    wide = np.zeros((M, K + 4), dtype=dtype)
    wide[:, :K] = A
    a = wide[ctx.block(M, K)[0], ctx.block(M, K)[1]] if wrap is Cai else np.array(A[ctx.block(M, K)])
    out = ctx.gemm(wrap(a), wrap(np.array(B[ctx.block(K, N)])), wrap(C), beta=0.0)
    assert everywhere(isinstance(out, wrap) and np.allclose(C, (A @ B)[ctx.block(M, N)], rtol=0,
                                                            atol=tolerance(dtype, K)))
    # DLPack: the legacy default stream synchronized once per operand
    assert everywhere(as_device == ([1, 1, 1] if wrap is DlpackOnDevice else []))


def test_cuda_array_interface_stream_is_synchronized(ctx, as_device):
    a = np.zeros(ctx.block_shape(3, 3))
    ctx.gemm(Cai(a, stream=12345), Cai(a.copy(), stream=12345), Cai(a.copy()))
    assert everywhere(as_device == [12345, 12345])


def test_device_pgemm_reads_the_interfaces(ctx, as_device):
    M, N, K = 8, 6, 5
    A, B = operands(73, (M, K), np.float64), operands(74, (K, N), np.float64)
    dA, dB, dC = (ctx.desc_block_cyclic(M, K, 2, 2), ctx.desc_block_cyclic(K, N, 2, 2),
                  ctx.desc_block_cyclic(M, N, 2, 2))

    def local(d, X):
        out = ctx.local_array(d)
        r, c = ctx.local_indices(d)
        out[...] = X[np.ix_(r, c)]
        return out
    c = ctx.local_array(dC)
    ctx.pgemm(DlpackOnDevice(local(dA, A)), dA, DlpackOnDevice(local(dB, B)), dB, Cai(c), dC)
    assert everywhere(np.allclose(c, local(dC, A @ B), rtol=0, atol=1e-12))


def test_device_and_host_operands_not_mixed(ctx, as_device):
    a = np.zeros(ctx.block_shape(3, 3))
    with pytest.raises(dgemm_dist.UsageError, match="on the GPU, B float64 on the host"):
        ctx.gemm(Cai(a), a.copy())


def test_dlpack_dtype_refused(ctx, as_device):
    a = np.zeros(ctx.block_shape(3, 3), dtype=np.int32)
    with pytest.raises(dgemm_dist.UsageError, match="A has dtype int32"):
        ctx.gemm(DlpackOnDevice(a), DlpackOnDevice(a.copy()))


def test_c_none_for_an_unknown_gpu_array_type(ctx, as_device):
    a = np.zeros(ctx.block_shape(3, 3))
    with pytest.raises(dgemm_dist.UsageError, match="pass C"):
        ctx.gemm(Cai(a), Cai(a.copy()))


# ---- on a GPU --------------------------------------------------------------------------
def _gpu_reason():
    try:
        import cupy
        n = cupy.cuda.runtime.getDeviceCount()
    except Exception as e:  # no CuPy, no driver, no device
        return f"no GPU for CuPy here ({type(e).__name__}: {e})"
    return None if n > 0 else "no GPU"


@pytest.fixture(scope="module")
def gpu_ctx(comm):
    reason = comm.allgather(_gpu_reason())
    if any(reason):
        pytest.skip(next(r for r in reason if r))
    import cupy
    from mpi4py import MPI
    local = comm.Split_type(MPI.COMM_TYPE_SHARED)
    cupy.cuda.Device(local.rank % cupy.cuda.runtime.getDeviceCount()).use()
    local.Free()
    c = dgemm_dist.Context(comm, backend="cuda")
    yield c
    c.close()


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("transa", ["N", "T"])
def test_cupy_gemm_matches_numpy(gpu_ctx, dtype, transa):
    import cupy
    M, N, K = 300, 200, 250
    A = operands(81, (K, M) if transa == "T" else (M, K), dtype)
    B = operands(82, (K, N), dtype)
    a = cupy.asarray(A[gpu_ctx.block(*A.shape)])
    b = cupy.asarray(B[gpu_ctx.block(K, N)])
    C = gpu_ctx.gemm(a, b, transa=transa)
    opA = A.T if transa == "T" else A
    ref = (opA.astype(np.float64) @ B.astype(np.float64))[gpu_ctx.block(M, N)]
    assert everywhere(isinstance(C, cupy.ndarray) and np.allclose(cupy.asnumpy(C), ref, rtol=0,
                                                                  atol=tolerance(dtype, K) * 10))


def test_cupy_dlpack_and_pgemm(gpu_ctx):
    import cupy
    M, N, K = 64, 48, 40
    A, B = operands(83, (M, K), np.float64), operands(84, (K, N), np.float64)
    dA, dB, dC = (gpu_ctx.desc_block_cyclic(M, K, 8, 8), gpu_ctx.desc_block_cyclic(K, N, 8, 8),
                  gpu_ctx.desc_block_cyclic(M, N, 8, 8))

    def local(d, X):
        out = gpu_ctx.local_array(d)
        r, c = gpu_ctx.local_indices(d)
        out[...] = X[np.ix_(r, c)]
        return out
    a = cupy.asfortranarray(cupy.asarray(local(dA, A)))
    b = cupy.asfortranarray(cupy.asarray(local(dB, B)))
    c = cupy.asfortranarray(cupy.zeros(gpu_ctx.local_shape(dC)))
    gpu_ctx.pgemm(DlpackOf(a), dA, b, dB, c, dC)
    assert everywhere(np.allclose(cupy.asnumpy(c), local(dC, A @ B), rtol=0, atol=1e-11))


class DlpackOf:
    """A CuPy array seen through DLPack alone."""

    def __init__(self, x):
        self.x = x

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()

    def __dlpack__(self, stream=None):
        return self.x.__dlpack__(stream=stream)
