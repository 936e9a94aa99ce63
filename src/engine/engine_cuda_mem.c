/* engine_cuda_mem.c — the CUDA engine's memory and copies (engine.h,
 * engine_cuda_impl.h): device and pinned host memory, the synchronous and
 * streamed uploads and downloads on the engine's three streams, and the
 * pipeline's marks that order one queue after another.  Apart from
 * engine_cuda.c (devices, the multiply, the clock) so that each stays short;
 * the ops table there names these. */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dd_cuda.h"
#include "engine_cuda_impl.h"

static double gib(size_t bytes)
{
    return (double)bytes / (double)(1u << 30);
}

int cuda_alloc(dd_engine *e, size_t bytes, void **p, dd_err *err)
{
    cuda_state *s = e->impl;
    *p = NULL;
    if (bytes == 0)
        return DD_OK;
    cudaError_t cr = cudaMalloc(p, bytes);
    if (cr == cudaSuccess)
        return DD_OK;
    *p = NULL;
    size_t freeb = 0, total = 0;
    cudaGetLastError(); /* clear the recorded allocation error before asking */
    cudaMemGetInfo(&freeb, &total);
    return dd_fail(err, cr == cudaErrorMemoryAllocation ? DD_ENOMEM : DD_EFAIL,
                   "cudaMalloc of %zu bytes (%.2f GiB) on GPU %d of host %s failed: %s; "
                   "%.2f GiB of %.2f GiB free",
                   bytes, gib(bytes), s->device, cuda_host_name(), cudaGetErrorString(cr),
                   gib(freeb), gib(total));
}

void cuda_free(dd_engine *e, void *p)
{
    (void)e;
    if (p)
        cudaFree(p);
}

/* Pinned host memory is the process's own pages, faulted in by up to
 * TOUCH_THREADS threads at once and then registered with the driver
 * (cudaHostRegister).  cudaHostAlloc faults and zeroes the pages inside the
 * driver, one thread, and every stream's copies wait for it meanwhile; a
 * registration of pages already there is a shorter wait
 * (bench/gpu/pin_probe.cu times both, alone and beside copies). */
enum { TOUCH_THREADS = 8 };
#define TOUCH_SHARE ((size_t)32 << 20) /* a thread per this much, at least */
#define PIN_ALIGN ((size_t)2 << 20)    /* whole huge pages where the kernel gives them */
#define PIN_PAGE ((size_t)4096)

typedef struct {
    char *p;
    size_t n;
} touch_job;

static void *touch_run(void *arg)
{
    touch_job *j = arg;
    memset(j->p, 0, j->n);
    return NULL;
}

/* Every page of [p, p + n) faulted in (zeroed), on threads where n is
 * large; a share whose thread cannot start is done here. */
static void touch_pages(char *p, size_t n)
{
    size_t t = n / TOUCH_SHARE;
    t = t < 1 ? 1 : t > TOUCH_THREADS ? TOUCH_THREADS : t;
    pthread_t th[TOUCH_THREADS];
    touch_job job[TOUCH_THREADS];
    int started[TOUCH_THREADS] = {0};
    for (size_t k = 0; k < t; k++) {
        job[k] = (touch_job){p + n * k / t, n * (k + 1) / t - n * k / t};
        started[k] = k > 0 && pthread_create(&th[k], NULL, touch_run, &job[k]) == 0;
    }
    for (size_t k = 0; k < t; k++)
        if (!started[k])
            touch_run(&job[k]);
    for (size_t k = 0; k < t; k++)
        if (started[k])
            pthread_join(th[k], NULL);
}

/* Callable from any thread: the engine's device is made the calling
 * thread's first, so another thread's allocation makes no context on the
 * runtime's default device. */
int cuda_host_alloc(dd_engine *e, size_t bytes, void **p, dd_err *err)
{
    cuda_state *s = e->impl;
    *p = NULL;
    if (bytes == 0)
        return DD_OK;
    cudaError_t cr = s ? cudaSetDevice(s->device) : cudaSuccess;
    if (cr != cudaSuccess)
        return dd_fail(err, DD_EFAIL, "cudaSetDevice(%d) for pinned memory on host %s failed: %s",
                       s->device, cuda_host_name(), cudaGetErrorString(cr));
    /* whole pages: no other allocation shares a page that is registered */
    void *m = NULL;
    size_t whole = (bytes + PIN_PAGE - 1) / PIN_PAGE * PIN_PAGE;
    if (bytes > SIZE_MAX - PIN_ALIGN || posix_memalign(&m, PIN_ALIGN, whole) != 0)
        return dd_fail(err, DD_ENOMEM,
                       "out of host memory for %zu bytes (%.2f GiB) of pinned memory on host %s",
                       bytes, gib(bytes), cuda_host_name());
    touch_pages(m, whole);
    cr = cudaHostRegister(m, whole, cudaHostRegisterDefault);
    if (cr == cudaSuccess) {
        *p = m;
        return DD_OK;
    }
    free(m);
    cudaGetLastError(); /* the failed registration is not a later call's error */
    return dd_fail(err, cr == cudaErrorMemoryAllocation ? DD_ENOMEM : DD_EFAIL,
                   "cudaHostRegister of %zu bytes (%.2f GiB) of host memory as pinned memory on "
                   "host %s failed: %s",
                   bytes, gib(bytes), cuda_host_name(), cudaGetErrorString(cr));
}

/* The device finishes first: a copy still in flight may read or write p
 * (cudaFreeHost waited likewise). */
void cuda_host_free(dd_engine *e, void *p)
{
    cuda_state *s = e->impl;
    if (!p)
        return;
    if (!s || cudaSetDevice(s->device) == cudaSuccess)
        cudaDeviceSynchronize();
    cudaHostUnregister(p);
    free(p);
}

int cuda_copy_sync(cuda_state *s, void *dst, const void *src, size_t bytes,
                   enum cudaMemcpyKind kind, const char *what, dd_err *err)
{
    if (bytes == 0)
        return DD_OK;
    int rc = dd_cuda_check(cudaMemcpyAsync(dst, src, bytes, kind, s->compute), what, err);
    if (!rc)
        rc = dd_cuda_check(cudaStreamSynchronize(s->compute), what, err);
    return rc;
}

int cuda_upload(dd_engine *e, void *dst, const void *src, size_t bytes, dd_err *err)
{
    return cuda_copy_sync(e->impl, dst, src, bytes, cudaMemcpyHostToDevice,
                          "cudaMemcpyAsync host to GPU (upload)", err);
}

int cuda_download(dd_engine *e, void *dst, const void *src, size_t bytes, dd_err *err)
{
    return cuda_copy_sync(e->impl, dst, src, bytes, cudaMemcpyDeviceToHost,
                          "cudaMemcpyAsync GPU to host (download)", err);
}

int cuda_zero(dd_engine *e, void *p, size_t bytes, dd_err *err)
{
    cuda_state *s = e->impl;
    int rc = dd_cuda_check(cudaMemsetAsync(p, 0, bytes, s->compute), "cudaMemsetAsync", err);
    return rc ? rc : dd_cuda_check(cudaStreamSynchronize(s->compute), "cudaMemsetAsync", err);
}

int cuda_upload_async(dd_engine *e, void *dst, size_t dpitch, const void *src, size_t spitch,
                      size_t width, int64_t rows, dd_err *err)
{
    cuda_state *s = e->impl;
    if (rows <= 0 || width == 0)
        return DD_OK;
    return dd_cuda_check(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, (size_t)rows,
                                           cudaMemcpyHostToDevice, s->comm),
                         "cudaMemcpy2DAsync host to GPU (streamed upload)", err);
}

/* On the compute stream: ordered after the multiplies that wrote C. */
int cuda_download_async(dd_engine *e, void *dst, size_t dpitch, const void *src, size_t spitch,
                        size_t width, int64_t rows, dd_err *err)
{
    cuda_state *s = e->impl;
    if (rows <= 0 || width == 0)
        return DD_OK;
    return dd_cuda_check(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, (size_t)rows,
                                           cudaMemcpyDeviceToHost, s->compute),
                         "cudaMemcpy2DAsync GPU to host (streamed download)", err);
}

int cuda_wait_copies(dd_engine *e, dd_err *err)
{
    cuda_state *s = e->impl;
    int rc = dd_cuda_check(cudaStreamSynchronize(s->comm),
                           "cudaStreamSynchronize (communication stream)", err);
    if (!rc)
        rc = dd_cuda_check(cudaStreamSynchronize(s->compute),
                           "cudaStreamSynchronize (compute stream)", err);
    if (!rc)
        rc = dd_cuda_check(cudaStreamSynchronize(s->down),
                           "cudaStreamSynchronize (download stream)", err);
    return rc;
}

static cudaStream_t queue_stream(cuda_state *s, int q)
{
    return q == DD_Q_UP ? s->comm : q == DD_Q_DOWN ? s->down : s->compute;
}

static int mark_index(int i, dd_err *err)
{
    return i >= 0 && i < DD_ENGINE_MARKS
               ? DD_OK
               : dd_fail(err, DD_EFAIL, "pipeline mark %d outside 0..%d", i, DD_ENGINE_MARKS - 1);
}

int cuda_mark(dd_engine *e, int q, int i, dd_err *err)
{
    cuda_state *s = e->impl;
    int rc = mark_index(i, err);
    return rc ? rc
              : dd_cuda_check(cudaEventRecord(s->mk[i], queue_stream(s, q)),
                              "cudaEventRecord (a pipeline mark)", err);
}

int cuda_after(dd_engine *e, int q, int i, dd_err *err)
{
    cuda_state *s = e->impl;
    int rc = mark_index(i, err);
    return rc ? rc
              : dd_cuda_check(cudaStreamWaitEvent(queue_stream(s, q), s->mk[i], 0),
                              "cudaStreamWaitEvent (a pipeline mark)", err);
}

int cuda_reached(dd_engine *e, int i, dd_err *err)
{
    cuda_state *s = e->impl;
    int rc = mark_index(i, err);
    return rc ? rc
              : dd_cuda_check(cudaEventSynchronize(s->mk[i]),
                              "cudaEventSynchronize (a pipeline mark)", err);
}

int cuda_download_side(dd_engine *e, void *dst, size_t dpitch, const void *src, size_t spitch,
                       size_t width, int64_t rows, dd_err *err)
{
    cuda_state *s = e->impl;
    if (rows <= 0 || width == 0)
        return DD_OK;
    return dd_cuda_check(cudaMemcpy2DAsync(dst, dpitch, src, spitch, width, (size_t)rows,
                                           cudaMemcpyDeviceToHost, s->down),
                         "cudaMemcpy2DAsync GPU to host (pipelined download)", err);
}
