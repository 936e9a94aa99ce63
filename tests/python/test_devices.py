"""GPU arrays: __cuda_array_interface__ and DLPack operands, read in place
(tests/python).

On a GPU (every rank sees one) the real thing against NumPy's @: GPU
memory through the CUDA driver (cuda_driver.py beside this file), and CuPy
arrays and DLPack where CuPy is installed; without a GPU those tests are
skipped.  The plumbing itself (the
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
# Where every rank sees a GPU: GPU memory through the CUDA driver (no CuPy
# needed) and, where CuPy is installed, CuPy arrays and DLPack.
def _gpu_reason():
    import cuda_driver
    return cuda_driver.available()


def _cupy_reason():
    try:
        import cupy
        return None if cupy.cuda.runtime.getDeviceCount() > 0 else "no GPU for CuPy"
    except Exception as e:  # no CuPy, no driver, no device
        return f"no CuPy here ({type(e).__name__}: {e})"


def _local_rank(comm):
    from mpi4py import MPI
    local = comm.Split_type(MPI.COMM_TYPE_SHARED)
    r = local.rank
    local.Free()
    return r


@pytest.fixture(scope="module")
def gpu_ctx(comm):
    reason = comm.allgather(_gpu_reason())
    if any(reason):
        pytest.skip(next(r for r in reason if r))
    import cuda_driver
    cuda_driver.use_device(_local_rank(comm))
    c = dgemm_dist.Context(comm, backend="cuda")
    yield c
    c.close()


@pytest.fixture(scope="module")
def cupy_ctx(gpu_ctx, comm):
    reason = comm.allgather(_cupy_reason())
    if any(reason):
        pytest.skip(next(r for r in reason if r))
    import cupy
    cupy.cuda.Device(_local_rank(comm) % cupy.cuda.runtime.getDeviceCount()).use()
    return gpu_ctx


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("transa,transb", [("N", "N"), ("T", "N"), ("N", "T")])
def test_gpu_driver_memory_gemm_matches_numpy(gpu_ctx, dtype, transa, transb):
    from cuda_driver import DriverArray
    M, N, K = 300, 200, 250
    A = operands(81, (K, M) if transa == "T" else (M, K), dtype)
    B = operands(82, (N, K) if transb == "T" else (K, N), dtype)
    C0 = operands(83, (M, N), dtype)
    a, b = DriverArray.put(A[gpu_ctx.block(*A.shape)]), DriverArray.put(B[gpu_ctx.block(*B.shape)])
    c = DriverArray.put(C0[gpu_ctx.block(M, N)])
    out = gpu_ctx.gemm(a, b, c, alpha=2.0, beta=-1.0, transa=transa, transb=transb, check=True)
    opA = A.T if transa == "T" else A
    opB = B.T if transb == "T" else B
    ref = (2.0 * (opA.astype(np.float64) @ opB.astype(np.float64)) - C0)[gpu_ctx.block(M, N)]
    assert everywhere(out is c and gpu_ctx.last_info.check_passed == 1
                      and np.allclose(c.get(), ref, rtol=0, atol=tolerance(dtype, K) * 10))


def test_gpu_driver_memory_pgemm(gpu_ctx):
    from cuda_driver import DriverArray
    M, N, K = 64, 48, 40
    A, B = operands(84, (M, K), np.float64), operands(85, (K, N), np.float64)
    # the 2-D block descriptors (row-major local blocks, as DriverArray holds them)
    dA, dB, dC = gpu_ctx.desc_block(M, K), gpu_ctx.desc_block(K, N), gpu_ctx.desc_block(M, N)
    a, b = DriverArray.put(A[gpu_ctx.block(M, K)]), DriverArray.put(B[gpu_ctx.block(K, N)])
    c = DriverArray(gpu_ctx.block_shape(M, N), np.float64)
    gpu_ctx.pgemm(a, dA, b, dB, c, dC)
    assert everywhere(np.allclose(c.get(), (A @ B)[gpu_ctx.block(M, N)], rtol=0, atol=1e-11))


def test_gpu_numpy_arrays_on_a_cuda_context(gpu_ctx):
    """Host arrays on the CUDA backend: dd_gemm, host in, host out."""
    M, N, K = 100, 80, 60
    A, B = operands(86, (M, K), np.float64), operands(87, (K, N), np.float64)
    C = gpu_ctx.gemm(A[gpu_ctx.block(M, K)], B[gpu_ctx.block(K, N)])
    assert everywhere(isinstance(C, np.ndarray)
                      and np.allclose(C, (A @ B)[gpu_ctx.block(M, N)], rtol=0, atol=1e-11))


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_gpu_cupy_gemm_matches_numpy(cupy_ctx, dtype):
    import cupy
    M, N, K = 300, 200, 250
    A, B = operands(88, (M, K), dtype), operands(89, (K, N), dtype)
    C = cupy_ctx.gemm(cupy.asarray(A[cupy_ctx.block(M, K)]), cupy.asarray(B[cupy_ctx.block(K, N)]))
    ref = (A.astype(np.float64) @ B.astype(np.float64))[cupy_ctx.block(M, N)]
    assert everywhere(isinstance(C, cupy.ndarray) and np.allclose(cupy.asnumpy(C), ref, rtol=0,
                                                                  atol=tolerance(dtype, K) * 10))


def test_gpu_cupy_dlpack_and_pgemm(cupy_ctx):
    import cupy
    M, N, K = 64, 48, 40
    A, B = operands(90, (M, K), np.float64), operands(91, (K, N), np.float64)
    dA, dB, dC = (cupy_ctx.desc_block_cyclic(M, K, 8, 8), cupy_ctx.desc_block_cyclic(K, N, 8, 8),
                  cupy_ctx.desc_block_cyclic(M, N, 8, 8))

    def local(d, X):
        out = cupy_ctx.local_array(d)
        r, c = cupy_ctx.local_indices(d)
        out[...] = X[np.ix_(r, c)]
        return out
    a = cupy.asfortranarray(cupy.asarray(local(dA, A)))
    b = cupy.asfortranarray(cupy.asarray(local(dB, B)))
    c = cupy.asfortranarray(cupy.zeros(cupy_ctx.local_shape(dC)))
    cupy_ctx.pgemm(DlpackOf(a), dA, b, dB, c, dC)
    assert everywhere(np.allclose(cupy.asnumpy(c), local(dC, A @ B), rtol=0, atol=1e-11))


class DlpackOf:
    """A CuPy array seen through DLPack alone."""

    def __init__(self, x):
        self.x = x

    def __dlpack_device__(self):
        return self.x.__dlpack_device__()

    def __dlpack__(self, stream=None):
        return self.x.__dlpack__(stream=stream)
