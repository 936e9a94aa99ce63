"""GPU memory for the tests without CuPy: the CUDA driver API through
ctypes (libcuda.so.1), and an array that presents it through
__cuda_array_interface__.  DriverArray.put copies a NumPy array up, get
copies it back; the memory is the primary context's of the rank's device,
the one the library's CUDA backend uses."""
import ctypes

import numpy as np

_cu = None


def _check(rc, what):
    if rc != 0:
        raise RuntimeError(f"{what} failed (CUresult {rc})")


def available():
    """None when a GPU can be used this way, else why not."""
    global _cu
    try:
        cu = ctypes.CDLL("libcuda.so.1")
    except OSError as e:
        return f"no CUDA driver ({e})"
    if cu.cuInit(0) != 0:
        return "cuInit failed: no usable GPU"
    n = ctypes.c_int(0)
    if cu.cuDeviceGetCount(ctypes.byref(n)) != 0 or n.value == 0:
        return "no GPU"
    _cu = cu
    cu.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
    cu.cuMemFree_v2.argtypes = [ctypes.c_uint64]
    cu.cuMemcpyHtoD_v2.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t]
    cu.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t]
    return None


def use_device(index):
    """Make device `index`'s primary context current (as the runtime does)."""
    n = ctypes.c_int(0)
    _check(_cu.cuDeviceGetCount(ctypes.byref(n)), "cuDeviceGetCount")
    dev = ctypes.c_int(0)
    _check(_cu.cuDeviceGet(ctypes.byref(dev), index % n.value), "cuDeviceGet")
    ctx = ctypes.c_void_p()
    _check(_cu.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev), "cuDevicePrimaryCtxRetain")
    _check(_cu.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")


class DriverArray:
    """A C-contiguous 2-D array in GPU memory."""

    def __init__(self, shape, dtype):
        self.shape, self.dtype = tuple(shape), np.dtype(dtype)
        self.nbytes = max(1, int(np.prod(self.shape)) * self.dtype.itemsize)
        ptr = ctypes.c_uint64(0)
        _check(_cu.cuMemAlloc_v2(ctypes.byref(ptr), self.nbytes), "cuMemAlloc")
        self.ptr = ptr.value

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr, False),
                "version": 3, "strides": None, "stream": None}

    @classmethod
    def put(cls, x):
        x = np.ascontiguousarray(x)
        d = cls(x.shape, x.dtype)
        if x.size:
            _check(_cu.cuMemcpyHtoD_v2(d.ptr, x.ctypes.data, x.nbytes), "cuMemcpyHtoD")
        return d

    def get(self):
        out = np.empty(self.shape, self.dtype)
        if out.size:
            _check(_cu.cuMemcpyDtoH_v2(out.ctypes.data, self.ptr, out.nbytes), "cuMemcpyDtoH")
        return out

    def __del__(self):
        if getattr(self, "ptr", 0) and _cu is not None:
            _cu.cuMemFree_v2(self.ptr)
            self.ptr = 0
