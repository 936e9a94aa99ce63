/* engine_cuda_impl.h — the CUDA engine's private state, shared by its
 * files: engine_cuda.c (devices, the multiply, the clock, the ops table),
 * engine_cuda_mem.c (memory, copies, the pipeline's marks),
 * engine_cuda_aux.c (the check, the generator, alpha/beta and the saved C:
 * engine_cuda_kernels.h's kernels), engine_cuda_slices.c (sliced panels)
 * and engine_cuda_telemetry.c.  Nothing outside src/engine includes it. */
#ifndef DD_ENGINE_CUDA_IMPL_H
#define DD_ENGINE_CUDA_IMPL_H

#include <cuda_runtime.h>

#include "engine.h"
#include "kernel.h"

typedef struct {
    int device;
    cudaStream_t compute, comm;
    cudaStream_t down;              /* download_side_async's (DD_Q_DOWN) */
    cudaEvent_t mk[DD_ENGINE_MARKS]; /* the pipeline's marks (no timing) */
    const kernel_desc *kd; /* the run's kernel, chosen at open for its type */
    cudaEvent_t phase0, phase1;
    cudaEvent_t *ev; /* gemm timing pairs: ev[2i] start, ev[2i+1] stop */
    int nev, cap;    /* in use since reset_timers, created */
    void *aux;       /* device scratch of absmax/matvec (aux_scratch), NULL until used */
    size_t aux_cap;  /* its bytes */
    void *tbuf;      /* device scratch of the turned copies (upload_t/download_t_async) */
    size_t tbuf_cap; /* its bytes */
    dd_tele_sampler *tele; /* NVML on this GPU (engine_cuda_telemetry.c), NULL before open */
    char note[1024];       /* the kernel's note as last read by the note op ("" none) */
    char counts[512];      /* the kernels' counts (kernel_counts) as last read by it */
    char record[1600];     /* what the note op returns: counts, then the note */
    unsigned int *missed;  /* device words, one per slices_gemm since reset_timers */
    int64_t nmissed, mcap; /* in use, allocated */
} cuda_state;

/* This host's name, for messages. */
const char *cuda_host_name(void);
/* A copy on the compute stream, waited for; `what` names it in a failure. */
int cuda_copy_sync(cuda_state *s, void *dst, const void *src, size_t bytes,
                   enum cudaMemcpyKind kind, const char *what, dd_err *err);

/* engine_cuda_mem.c: engine.h's memory, copy and mark ops. */
int cuda_alloc(dd_engine *e, size_t bytes, void **p, dd_err *err);
void cuda_free(dd_engine *e, void *p);
int cuda_host_alloc(dd_engine *e, size_t bytes, void **p, dd_err *err);
void cuda_host_free(dd_engine *e, void *p);
int cuda_upload(dd_engine *e, void *dst, const void *src, size_t bytes, dd_err *err);
int cuda_download(dd_engine *e, void *dst, const void *src, size_t bytes, dd_err *err);
int cuda_zero(dd_engine *e, void *p, size_t bytes, dd_err *err);
int cuda_upload_async(dd_engine *e, void *dst, size_t dpitch, const void *src, size_t spitch,
                      size_t width, int64_t rows, dd_err *err);
int cuda_download_async(dd_engine *e, void *dst, size_t dpitch, const void *src, size_t spitch,
                        size_t width, int64_t rows, dd_err *err);
int cuda_wait_copies(dd_engine *e, dd_err *err);
int cuda_mark(dd_engine *e, int q, int i, dd_err *err);
int cuda_after(dd_engine *e, int q, int i, dd_err *err);
int cuda_reached(dd_engine *e, int i, dd_err *err);
int cuda_download_side(dd_engine *e, void *dst, size_t dpitch, const void *src, size_t spitch,
                       size_t width, int64_t rows, dd_err *err);

/* Two more timing events for a multiply, created on first use and reused
 * afterwards (nev counts them since reset_timers). */
int cuda_event_pair(cuda_state *s, cudaEvent_t **pair, dd_err *err);

/* engine_cuda_slices.c: engine.h's slices ops (kernel.h's sliced operands). */
size_t cuda_slices_bytes(dd_engine *e, dd_dtype t, int64_t vectors, int64_t k);
int cuda_slices_make(dd_engine *e, int q, int side, int64_t vectors, int64_t k, const void *X,
                     int64_t ld, void *blob, dd_err *err);
int cuda_slices_gemm(dd_engine *e, int64_t m, int64_t n, int64_t k, const void *a, const void *b,
                     int beta, void *C, int64_t ldc, dd_progress_fn progress, void *parg,
                     dd_err *err);
int cuda_slices_missed(dd_engine *e, unsigned char *missed, int64_t max, int64_t *count,
                       dd_err *err);

/* Seconds from event a to event b (both complete). */
int cuda_elapsed(cudaEvent_t a, cudaEvent_t b, double *seconds, dd_err *err);

/* The kernel for type t (forced by name, or t's default) into s->kd. */
int cuda_pick_kernel(cuda_state *s, const char *forced, dd_dtype t, dd_err *err);

/* engine_cuda_aux.c: the ops of engine.h's second half. */
int cuda_retype(dd_engine *e, dd_dtype t, const char *kernel, dd_err *err);
int cuda_absmax(dd_engine *e, dd_dtype t, const void *M, int64_t n, double *max, int *nonfinite,
                dd_err *err);
int cuda_matvec(dd_engine *e, dd_dtype t, const void *M, int64_t rows, int64_t cols,
                const double f[2], const double *v, double *out, double *absrow, int *nonfinite,
                dd_err *err);
int cuda_fill_random(dd_engine *e, dd_dtype t, void *work, uint64_t seed, uint64_t tag,
                     int64_t row0, int64_t rows, int64_t col0, int64_t cols, int64_t gcols,
                     int trans, dd_err *err);
int cuda_upload_t(dd_engine *e, void *dst, int64_t ldd, const void *src, int64_t h, int64_t w,
                  size_t es, dd_err *err);
int cuda_download_t(dd_engine *e, void *dst, const void *src, int64_t lds, int64_t h, int64_t w,
                    size_t es, dd_err *err);
int cuda_scale(dd_engine *e, dd_dtype t, void *work, int64_t n, double s, dd_err *err);
int cuda_cscale(dd_engine *e, dd_dtype t, void *work, int64_t n, const double s[2], int conj,
                dd_err *err);
int cuda_copy(dd_engine *e, void *dst, const void *src, size_t bytes, dd_err *err);
int cuda_gemm_times(dd_engine *e, double *seconds, int64_t max, int64_t *count, dd_err *err);

/* engine_cuda_telemetry.c: the sampler of this GPU (never NULL), and the
 * telemetry ops. */
dd_tele_sampler *cuda_telemetry_open(int device);
void cuda_telemetry_start(dd_engine *e);
void cuda_telemetry_stop(dd_engine *e, dd_telemetry *t);

#endif
