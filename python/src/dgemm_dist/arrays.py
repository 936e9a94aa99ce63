"""What an operand is: NumPy arrays on the host, __cuda_array_interface__
(CuPy, Numba, PyTorch) and DLPack arrays on the GPU, all read in place.

describe() returns an Operand or raises LocalError, whose message names
the operand and what to change; the caller agrees on it across ranks before
anything collective happens."""
import ctypes

import numpy as np

# DLPack's device types (dlpack.h DLDeviceType) read here
DL_CPU, DL_CUDA, DL_CUDA_HOST, DL_CUDA_MANAGED = 1, 2, 3, 13
DL_FLOAT = 2
_DL_CODES = {0: "int", 1: "uint", 2: "float", 3: "opaque", 4: "bfloat", 5: "complex", 6: "bool"}

DTYPES = (np.dtype(np.float64), np.dtype(np.float32))


class LocalError(Exception):
    """An operand this rank cannot pass (wrong dtype, layout, ...)."""


class Operand:
    """One rank's array: its address, shape, strides in bytes, dtype, and
    whether it lives on the GPU.  keep holds what must stay alive while the
    library reads it (a DLPack capsule)."""

    __slots__ = ("name", "ptr", "shape", "strides", "dtype", "device", "readonly", "keep", "array")

    def __init__(self, name, ptr, shape, strides, dtype, device, readonly, keep=None, array=None):
        self.name, self.ptr, self.shape, self.strides = name, ptr, tuple(shape), strides
        self.dtype, self.device, self.readonly, self.keep, self.array = dtype, device, readonly, keep, array

    def ld(self, order):
        """The leading dimension in elements of a 2-D operand stored
        row-major (order 'C': elements between rows) or column-major ('F');
        LocalError when its elements are not laid out that way."""
        if len(self.shape) != 2:
            raise LocalError(f"{self.name} has {len(self.shape)} dimensions; dgemm_dist takes 2-D arrays")
        rows, cols = self.shape
        item = self.dtype.itemsize
        inner, outer = (1, 0) if order == "C" else (0, 1)
        n_in, n_out = self.shape[inner], self.shape[outer]
        if rows == 0 or cols == 0:  # nothing is read or written: any strides
            return max(1, n_in)
        if self.strides is None:  # C-contiguous, as the array interfaces say
            st = (cols * item, item)
        else:
            st = tuple(self.strides)
        if n_in > 1 and st[inner] != item:
            kind = "row-major (C order)" if order == "C" else "column-major (Fortran order)"
            raise LocalError(
                f"{self.name} ({rows}x{cols}, strides {st}) is not {kind} with contiguous "
                f"{'rows' if order == 'C' else 'columns'}: pass "
                f"{'numpy.ascontiguousarray' if order == 'C' else 'numpy.asfortranarray'}({self.name}) "
                "(dgemm_dist reads arrays in place and makes no copies)")
        if n_out <= 1:
            return max(1, n_in)
        if st[outer] <= 0 or st[outer] % item or st[outer] // item < max(1, n_in):
            raise LocalError(f"{self.name} ({rows}x{cols}) has strides {st}: its "
                             f"{'rows' if order == 'C' else 'columns'} must lie at a positive, "
                             f"whole number of elements apart, at least {max(1, n_in)}")
        return st[outer] // item


def _dtype_name_dl(code, bits, lanes):
    name = f"{_DL_CODES.get(code, f'code {code} ')}{bits}"
    return name if lanes == 1 else f"{name}x{lanes}"


def _check_dtype(name, dt):
    if dt not in DTYPES:
        raise LocalError(f"{name} has dtype {dt}; dgemm_dist multiplies float64 or float32 arrays "
                         f"(convert with {name}.astype(numpy.float64))")


def _host(name, a):
    if not isinstance(a, np.ndarray):
        raise LocalError(f"{name} is a {type(a).__name__}, not an array")
    dt = a.dtype
    if dt.kind == "f" and not dt.isnative:
        raise LocalError(f"{name} has dtype {dt.str} (not the machine's byte order); "
                         f"convert with {name}.astype(numpy.float{dt.itemsize * 8})")
    _check_dtype(name, np.dtype(dt.name) if dt.kind == "f" else dt)
    return Operand(name, a.__array_interface__["data"][0], a.shape, a.strides, np.dtype(dt.name),
                   False, not a.flags.writeable, array=a)


def _cai(name, x):
    cai = x.__cuda_array_interface__
    if cai.get("mask") is not None:
        raise LocalError(f"{name} is a masked array (__cuda_array_interface__ mask): not supported")
    dt = np.dtype(cai["typestr"])
    _check_dtype(name, dt)
    ptr, readonly = cai["data"]
    stream = cai.get("stream")
    if stream is not None:
        cuda_stream_synchronize(stream)
    return Operand(name, ptr or 0, cai["shape"], cai.get("strides"), dt, True, bool(readonly), array=x)


def _dlpack(name, x, dev_type):
    # DLPack's stream argument: the producer orders its work before the
    # legacy default stream, which is then synchronized from the host (the
    # library computes on streams of its own).
    try:
        cap = x.__dlpack__(stream=1) if dev_type != DL_CPU else x.__dlpack__()
    except TypeError:
        cap = x.__dlpack__()
    from . import _core
    ptr, _dev, _id, code, bits, lanes, shape, strides = _core.dlpack_tensor(cap)
    if code != DL_FLOAT or lanes != 1 or bits not in (32, 64):
        raise LocalError(f"{name} has dtype {_dtype_name_dl(code, bits, lanes)}; dgemm_dist multiplies "
                         "float64 or float32 arrays")
    dt = np.dtype(np.float64 if bits == 64 else np.float32)
    if strides is not None:
        strides = tuple(s * dt.itemsize for s in strides)  # DLPack counts elements
    if dev_type != DL_CPU:
        cuda_stream_synchronize(1)
    return Operand(name, ptr, shape, strides, dt, dev_type != DL_CPU, False, keep=cap, array=x)


def describe(name, x):
    """The Operand of an array, or LocalError naming what to change (also
    for an array interface that fails: its error becomes the message, so
    that it is agreed like any other)."""
    try:
        return _describe(name, x)
    except LocalError:
        raise
    except Exception as e:
        raise LocalError(f"{name} could not be read as an array ({type(e).__name__}: {e})") from e


def _describe(name, x):
    if isinstance(x, np.ndarray):
        return _host(name, x)
    if hasattr(x, "__cuda_array_interface__"):
        return _cai(name, x)
    if hasattr(x, "__dlpack__") and hasattr(x, "__dlpack_device__"):
        dev_type = int(x.__dlpack_device__()[0])
        if dev_type in (DL_CUDA, DL_CUDA_MANAGED, DL_CPU, DL_CUDA_HOST):
            return _dlpack(name, x, dev_type if dev_type != DL_CUDA_HOST else DL_CPU)
        raise LocalError(f"{name} lives on DLPack device type {dev_type}: dgemm_dist takes host or CUDA memory")
    if hasattr(x, "__array_interface__"):
        return _host(name, np.asarray(x))
    raise LocalError(f"{name} is a {type(x).__name__}: pass a numpy.ndarray, or a GPU array with "
                     "__cuda_array_interface__ or DLPack (CuPy, PyTorch, ...)")


_libcuda = None


def cuda_stream_synchronize(stream):
    """Wait for the work queued on a CUDA stream (a handle as the array
    interfaces give it: 1 the legacy default stream, 2 the per-thread one),
    through the driver library: the extension links no CUDA."""
    global _libcuda
    if _libcuda is None:
        try:
            _libcuda = ctypes.CDLL("libcuda.so.1")
        except OSError as e:
            raise LocalError(f"a GPU array's stream cannot be synchronized: libcuda.so.1: {e}")
        _libcuda.cuStreamSynchronize.argtypes = [ctypes.c_void_p]
        _libcuda.cuStreamSynchronize.restype = ctypes.c_int
    rc = _libcuda.cuStreamSynchronize(ctypes.c_void_p(int(stream)))
    if rc != 0:
        raise LocalError(f"cuStreamSynchronize on the array's stream {stream} failed (CUresult {rc})")
