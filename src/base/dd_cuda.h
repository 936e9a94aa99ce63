/* dd_cuda.h — CUDA runtime errors as dd_err values, shared by the CUDA
 * engine and the GPU comm backends (host C11, built only with DD_HAVE_CUDA).
 *
 *     if ((rc = dd_cuda_check(cudaStreamSynchronize(s), "cudaStreamSynchronize", err)))
 *         return rc;
 *
 * sets "cudaStreamSynchronize failed: <cudaGetErrorString>" and returns
 * DD_EFAIL. */
#ifndef DD_CUDA_H
#define DD_CUDA_H

#include <cuda_runtime.h>

#include "dd.h"

static inline int dd_cuda_check(cudaError_t rc, const char *what, dd_err *err)
{
    if (rc == cudaSuccess)
        return DD_OK;
    return dd_fail(err, DD_EFAIL, "%s failed: %s", what, cudaGetErrorString(rc));
}

#endif
