/* api_work.c — what a context keeps between calls (api_impl.h): work
 * memory for the blocks and SUMMA's slots, the pinned host ring and the
 * exchange's staging, each grown when a call needs more and freed at
 * dd_context_destroy (or before its engine closes); the host copies'
 * thread count (their workers: api_parallel.c); DD_API_TIMING's per-step
 * clock. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api_impl.h"
#include "dd_knobs.h"

/* Sizes are rounded up to 64 KiB, so that calls of nearby sizes reuse. */
static size_t round_up(size_t bytes)
{
    size_t q = (size_t)1 << 16;
    return bytes ? (bytes + q - 1) / q * q : q;
}

static int buf_get(dd_context *ctx, api_buf *b, int host, size_t bytes, void **p, dd_err *err)
{
    dd_engine *e = &ctx->eng;
    if (b->p && bytes <= b->cap) {
        *p = b->p;
        return DD_OK;
    }
    if (b->p) /* CUDA: cudaFree and cudaFreeHost wait for the device */
        host ? e->ops->host_free(e, b->p) : e->ops->free(e, b->p);
    b->p = NULL;
    b->cap = 0;
    size_t want = round_up(bytes);
    int rc = host ? e->ops->host_alloc(e, want, &b->p, err) : e->ops->alloc(e, want, &b->p, err);
    if (rc) {
        b->p = NULL;
        return rc;
    }
    b->cap = want;
    *p = b->p;
    return DD_OK;
}

int api_dev_get(dd_context *ctx, int which, size_t bytes, void **p, dd_err *err)
{
    return buf_get(ctx, &ctx->dev[which], 0, bytes, p, err);
}

int api_host_get(dd_context *ctx, int which, size_t bytes, void **p, dd_err *err)
{
    return buf_get(ctx, &ctx->host[which], 1, bytes, p, err);
}

void api_work_free(dd_context *ctx)
{
    dd_engine *e = &ctx->eng;
    for (int i = 0; i < API_NDEV && ctx->eng_open; i++) /* made only while it is open */
        if (ctx->dev[i].p)
            e->ops->free(e, ctx->dev[i].p);
    for (int i = 0; i < API_NHOST && ctx->eng_open; i++)
        if (ctx->host[i].p)
            e->ops->host_free(e, ctx->host[i].p);
    memset(ctx->dev, 0, sizeof ctx->dev);
    memset(ctx->host, 0, sizeof ctx->host);
    for (int i = 0; i < 2; i++)
        free(ctx->keep.p[i]);
    memset(&ctx->keep, 0, sizeof ctx->keep);
}

int api_move_threads(const dd_context *ctx, int64_t rows, int64_t cols)
{
    return rows * cols >= ((int64_t)1 << 20) ? ctx->copy_threads : 1;
}

/* DD_RING_MIB (dd_knobs.h: 1..4096, default 64) */
size_t api_ring_bytes(void)
{
    return (size_t)dd_knob_int(DDK_RING_MIB) << 20;
}

/* DD_API_THREADS (1..64), else the node's cores over its ranks, 1 to 16
 * (host-probe on the H200 host: pageable to pinned copies reach 9 GB/s on
 * one thread, 30 on 8, 41 on 16: docs/results/h200-2026-12-02-hostprobe). */
int api_copy_threads(MPI_Comm node)
{
    long long t = dd_knob_int(DDK_API_THREADS);
    if (t >= 1)
        return (int)t;
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    int local = 1;
    if (node != MPI_COMM_NULL)
        MPI_Comm_size(node, &local);
    t = cores > 0 ? cores / (local > 0 ? local : 1) : 1;
    return t < 1 ? 1 : t > 16 ? 16 : (int)t;
}

typedef struct {
    char *dst;
    const char *src;
    size_t dstride, sstride, bytes;
} runs_job;

/* Runs [lo, hi) of j (rd_parallel's piece). */
static void copy_runs(void *arg, int64_t lo, int64_t hi)
{
    const runs_job *j = arg;
    for (int64_t i = lo; i < hi; i++)
        memcpy(j->dst + (size_t)i * j->dstride, j->src + (size_t)i * j->sstride, j->bytes);
}

/* Runs split among threads (rd_parallel); when the runs are one contiguous
 * range it is cut in 1 MiB runs and its tail copied after them. */
void api_copy_runs(void *dst, size_t dstride, const void *src, size_t sstride, size_t bytes,
                   int64_t n, int threads)
{
    runs_job one = {dst, src, dstride, sstride, bytes};
    size_t total = n > 0 ? (size_t)n * bytes : 0;
    if (threads <= 1 || total < ((size_t)4 << 20)) {
        copy_runs(&one, 0, n);
        return;
    }
    if (dstride != bytes || sstride != bytes) {
        rd_parallel(threads, n, copy_runs, &one);
        return;
    }
    runs_job mib = {dst, src, 1 << 20, 1 << 20, 1 << 20};
    int64_t runs = (int64_t)(total >> 20);
    rd_parallel(threads, runs, copy_runs, &mib);
    size_t done = (size_t)runs << 20;
    if (done < total)
        memcpy((char *)dst + done, (const char *)src + done, total - done);
}

/* DD_API_TIMING=1: each step's seconds on rank 0, one line per call. */
static const char *step_names[API_NSTEPS] = {"args",   "alloc", "load A",   "load B",
                                             "load C", "scale", "multiply", "store C"};

void api_tick(gemm_call *g, int step)
{
    double now = MPI_Wtime();
    if (step >= 0 && step < API_NSTEPS)
        g->tm[step] += now - g->tlast;
    g->tlast = now;
}

void api_timing_print(const gemm_call *g)
{
    if (!dd_knob_int(DDK_API_TIMING) || g->ctx->rank != 0)
        return;
    char line[512];
    int n = snprintf(line, sizeof line, "dgemm-dist api timing (rank 0, %s %lldx%lldx%lld%s):",
                     dd_dtype_name(g->t), (long long)g->M, (long long)g->N,
                     (long long)g->K,
                     g->piped    ? ", host pipeline: load = host packing, multiply = waits"
                     : g->cyclic ? ", local arrays as blocks"
                                 : "");
    double sum = 0;
    for (int i = 0; i < API_NSTEPS && n > 0 && (size_t)n < sizeof line; i++) {
        n += snprintf(line + n, sizeof line - (size_t)n, " %s %.4f", step_names[i], g->tm[i]);
        sum += g->tm[i];
    }
    fprintf(stderr, "%s total %.4f s\n", line, sum);
}
