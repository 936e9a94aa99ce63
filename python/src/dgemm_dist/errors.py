"""The library's statuses (dd_status in include/dgemm_dist.h) as exceptions.

Every exception that gemm() and pgemm() raise for an argument or a failure
is raised on every rank with the same message (the lowest failing rank's),
but CommError: a broadcast broke mid-multiply, ranks may be left in a
collective, and the program should call MPI.COMM_WORLD.Abort()."""

SUCCESS = 0
ERROR_USAGE = 1
ERROR_MEMORY = 2
ERROR_IO = 3
ERROR_COMM = 4
ERROR_CHECK_FAILED = 5
ERROR_UNSUPPORTED = 6
ERROR_INTERNAL = 7
ERROR_MPI = 8


class DgemmDistError(RuntimeError):
    """A call refused or failed.  .status is the library's code (dd_status),
    .bad_argument the PBLAS number of a bad argument (0 if none)."""

    def __init__(self, message, status, bad_argument=0):
        super().__init__(message)
        self.status = status
        self.bad_argument = bad_argument


class UsageError(DgemmDistError, ValueError):
    """A bad argument: sizes, dtypes, layouts, options (DD_ERROR_USAGE)."""


class OutOfMemory(DgemmDistError, MemoryError):
    """Host or device memory ran out (DD_ERROR_MEMORY)."""


class CheckFailed(DgemmDistError):
    """check=True and C's check FAILED (DD_ERROR_CHECK_FAILED); C holds the result."""


class Unsupported(DgemmDistError):
    """Not available here: a backend, a device entry (DD_ERROR_UNSUPPORTED)."""


class CommError(DgemmDistError):
    """Communication broke mid-multiply (DD_ERROR_COMM): not agreed across
    ranks; abort the job."""


_BY_STATUS = {ERROR_USAGE: UsageError, ERROR_MEMORY: OutOfMemory, ERROR_COMM: CommError,
              ERROR_CHECK_FAILED: CheckFailed, ERROR_UNSUPPORTED: Unsupported}


def raise_status(status, message, bad_argument=0):
    """Raise the exception of a non-zero status with the library's message."""
    from . import _core
    if not message:
        message = _core.status_string(status)
    raise _BY_STATUS.get(status, DgemmDistError)(message, status, bad_argument)
