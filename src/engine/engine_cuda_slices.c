/* engine_cuda_slices.c — the CUDA engine's sliced panels (engine.h's
 * slices ops) on kernel.h's kernel_slices_*: the blob is made on the queue
 * the caller names, the multiply from blobs is timed like gemm, and each
 * multiply's missed word stays on the device until slices_missed reads
 * them all at once (one synchronisation per SUMMA multiply). */
#include <stdlib.h>

#include "dd_cuda.h"
#include "engine_cuda_impl.h"

static int moduli_at(const cuda_state *s, dd_dtype t, int64_t k)
{
    return t == DD_F64 && s->kd ? kernel_slices_moduli(s->kd, k) : 0;
}

size_t cuda_slices_bytes(dd_engine *e, dd_dtype t, int64_t vectors, int64_t k)
{
    int nm = moduli_at(e->impl, t, k);
    return nm ? kernel_slices_bytes(nm, vectors, k) : 0;
}

int cuda_slices_make(dd_engine *e, int q, int side, int64_t vectors, int64_t k, const void *X,
                     int64_t ld, void *blob, dd_err *err)
{
    cuda_state *s = e->impl;
    int nm = moduli_at(s, DD_F64, k);
    if (!nm)
        return dd_fail(err, DD_EFAIL, "kernel '%s' slices no panel of k = %lld", s->kd->name,
                       (long long)k);
    cudaStream_t st = q == DD_Q_UP ? s->comm : s->compute;
    int kr = kernel_slices_make(nm, side, vectors, k, X, ld, blob, (void *)st);
    if (kr != cudaSuccess)
        return dd_fail(err, DD_EFAIL, "slicing %lld %s of length %lld (kernel '%s') failed: %s",
                       (long long)vectors, side ? "columns of B" : "rows of A", (long long)k,
                       s->kd->name, cudaGetErrorString((cudaError_t)kr));
    return DD_OK;
}

/* Room for one more missed word: the array grows on the compute stream
 * (the words already written are copied there, in order). */
static int missed_room(cuda_state *s, dd_err *err)
{
    if (s->nmissed < s->mcap)
        return DD_OK;
    int64_t cap = s->mcap ? 2 * s->mcap : 1024;
    unsigned int *nw = NULL;
    int rc = dd_cuda_check(cudaMalloc((void **)&nw, (size_t)cap * sizeof *nw),
                           "cudaMalloc (the sliced multiplies' missed words)", err);
    if (!rc && s->nmissed)
        rc = dd_cuda_check(cudaMemcpyAsync(nw, s->missed, (size_t)s->nmissed * sizeof *nw,
                                           cudaMemcpyDeviceToDevice, s->compute),
                           "cudaMemcpyAsync (the missed words)", err);
    if (rc) {
        cudaFree(nw);
        return rc;
    }
    cudaFree(s->missed); /* synchronises: the copy above is done */
    s->missed = nw;
    s->mcap = cap;
    return DD_OK;
}

int cuda_slices_gemm(dd_engine *e, int64_t m, int64_t n, int64_t k, const void *a, const void *b,
                     int beta, void *C, int64_t ldc, dd_progress_fn progress, void *parg,
                     dd_err *err)
{
    cuda_state *s = e->impl;
    int nm = moduli_at(s, DD_F64, k), rc;
    if (!nm)
        return dd_fail(err, DD_EFAIL, "kernel '%s' multiplies no sliced panel of k = %lld",
                       s->kd->name, (long long)k);
    if ((rc = missed_room(s, err)))
        return rc;
    unsigned int *word = s->missed + s->nmissed++;
    if (m > 0 && n > 0) {
        cudaEvent_t *ev = NULL;
        if ((rc = cuda_event_pair(s, &ev, err)) ||
            (rc = dd_cuda_check(cudaEventRecord(ev[0], s->compute), "cudaEventRecord", err)))
            return rc;
        int kr = kernel_slices_gemm(nm, m, n, k, a, b, beta, C, ldc, word, (void *)s->compute);
        if (kr != cudaSuccess)
            return dd_fail(err, DD_EFAIL,
                           "kernel '%s' multiply from slices (m=%lld n=%lld k=%lld) failed: %s",
                           s->kd->name, (long long)m, (long long)n, (long long)k,
                           cudaGetErrorString((cudaError_t)kr));
        if ((rc = dd_cuda_check(cudaEventRecord(ev[1], s->compute), "cudaEventRecord", err)))
            return rc;
    } else if ((rc = dd_cuda_check(cudaMemsetAsync(word, 0, sizeof *word, s->compute),
                                   "cudaMemsetAsync (a missed word)", err))) {
        return rc;
    }
    return progress ? progress(parg, err) : DD_OK;
}

int cuda_slices_missed(dd_engine *e, unsigned char *missed, int64_t max, int64_t *count,
                       dd_err *err)
{
    cuda_state *s = e->impl;
    *count = s->nmissed;
    int64_t n = max < s->nmissed ? max : s->nmissed;
    if (n <= 0)
        return DD_OK;
    unsigned int *h = malloc((size_t)n * sizeof *h);
    if (!h)
        return dd_fail(err, DD_ENOMEM, "out of host memory for the missed words");
    int rc = cuda_copy_sync(s, h, s->missed, (size_t)n * sizeof *h, cudaMemcpyDeviceToHost,
                            "the sliced multiplies' missed words", err);
    for (int64_t i = 0; i < n && !rc; i++)
        missed[i] = h[i] != 0;
    free(h);
    return rc;
}
