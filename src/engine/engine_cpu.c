/* engine_cpu.c — the CPU engine: host memory and OpenBLAS (engine.h); the
 * check's, the generator's and alpha/beta's ops are engine_cpu_aux.c's.
 *
 * The multiply is cut into row chunks so that the comm backend's progress
 * hook runs between them: Open MPI progresses non-blocking collectives only
 * inside MPI calls, so without these calls a broadcast posted before the
 * multiply would sit idle until the next wait and nothing would overlap.
 * A chunk of >= 64 rows keeps OpenBLAS near its full rate. */
#include <cblas.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "engine_cpu_impl.h"
#include "timer.h"


const char *engine_cpu_blas_version(void)
{
    static char v[96];
    if (!v[0]) {
        const char *cfg = openblas_get_config();
        snprintf(v, sizeof v, "%s", cfg ? cfg : "OpenBLAS");
        char *nl = strchr(v, '\n');
        if (nl)
            *nl = '\0';
    }
    return v;
}

static int cpu_open(dd_engine *e, const dd_engine_cfg *cfg, dd_err *err)
{
    cpu_state *s = calloc(1, sizeof *s);
    if (!s)
        return dd_fail(err, DD_ENOMEM, "out of host memory opening the CPU engine");
    int rc = cpu_oz_open(&s->oz, cfg->kernel, cfg->type, err);
    if (rc) {
        free(s);
        return rc;
    }
    /* Threads: --threads, else the environment's (OPENBLAS_NUM_THREADS or
     * OMP_NUM_THREADS, as a batch script sets), else this host's cores
     * shared among the ranks on it, so that ranks do not oversubscribe. */
    int threads = cfg->threads;
    if (threads <= 0 && !getenv("OPENBLAS_NUM_THREADS") && !getenv("OMP_NUM_THREADS")) {
        int local = 1;
        if (cfg->node != MPI_COMM_NULL)
            MPI_Comm_size(cfg->node, &local);
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        threads = cores > local ? (int)(cores / local) : 1;
    }
    if (threads > 0)
        openblas_set_num_threads(threads);
    e->impl = s;
    memset(&e->info, 0, sizeof e->info);
    char host[64] = "";
    gethostname(host, sizeof host - 1);
    int nt = openblas_get_num_threads();
    snprintf(e->info.device, sizeof e->info.device, "CPU %s (%d BLAS thread%s)", host, nt,
             nt == 1 ? "" : "s");
    snprintf(e->info.kernel, sizeof e->info.kernel, "%s", s->oz.on ? cfg->kernel : "openblas");
    snprintf(e->info.versions, sizeof e->info.versions, "%s", engine_cpu_blas_version());
    e->info.device_index = -1;
    e->info.ranks_per_device = 1;
    e->info.threads = nt;
    return DD_OK;
}

static void cpu_close(dd_engine *e)
{
    cpu_state *s = e->impl;
    if (s) {
        free(s->times);
        free(s->oz.missed);
    }
    free(s);
    e->impl = NULL;
}

static int cpu_alloc(dd_engine *e, size_t bytes, void **p, dd_err *err)
{
    (void)e;
    size_t n = (bytes + 63) / 64 * 64;
    *p = aligned_alloc(64, n ? n : 64);
    if (!*p)
        return dd_fail(err, DD_ENOMEM, "cannot allocate %.2f GiB of host memory",
                       (double)bytes / (1 << 30));
    return DD_OK;
}

static void cpu_free(dd_engine *e, void *p)
{
    (void)e;
    free(p);
}

static int cpu_copy(dd_engine *e, void *dst, const void *src, size_t bytes, dd_err *err)
{
    (void)e;
    (void)err;
    if (bytes && dst != src)
        memcpy(dst, src, bytes);
    return DD_OK;
}

static int cpu_zero(dd_engine *e, void *p, size_t bytes, dd_err *err)
{
    (void)e;
    (void)err;
    memset(p, 0, bytes);
    return DD_OK;
}

static int cpu_copy2d(dd_engine *e, void *dst, size_t dpitch, const void *src, size_t spitch,
                      size_t width, int64_t rows, dd_err *err)
{
    (void)e;
    (void)err;
    for (int64_t i = 0; i < rows; i++)
        memcpy((char *)dst + (size_t)i * dpitch, (const char *)src + (size_t)i * spitch, width);
    return DD_OK;
}

/* dst[j·ldd + i] = src[i·lds + j] for i < rows, j < cols, in tiles that
 * stay in L1 (32×32 doubles: 8 KiB each side). */
static void transpose(void *dst, int64_t ldd, const void *src, int64_t lds, int64_t rows,
                      int64_t cols, size_t es)
{
    enum { T = 32 };
    for (int64_t i0 = 0; i0 < rows; i0 += T)
        for (int64_t j0 = 0; j0 < cols; j0 += T) {
            int64_t i1 = i0 + T < rows ? i0 + T : rows, j1 = j0 + T < cols ? j0 + T : cols;
            if (es == 16) { /* complex double: pairs moved whole */
                const double *s = src;
                double *d = dst;
                for (int64_t i = i0; i < i1; i++)
                    for (int64_t j = j0; j < j1; j++) {
                        d[2 * (j * ldd + i)] = s[2 * (i * lds + j)];
                        d[2 * (j * ldd + i) + 1] = s[2 * (i * lds + j) + 1];
                    }
            } else if (es == 8) {
                const double *s = src;
                double *d = dst;
                for (int64_t i = i0; i < i1; i++)
                    for (int64_t j = j0; j < j1; j++)
                        d[j * ldd + i] = s[i * lds + j];
            } else {
                const float *s = src;
                float *d = dst;
                for (int64_t i = i0; i < i1; i++)
                    for (int64_t j = j0; j < j1; j++)
                        d[j * ldd + i] = s[i * lds + j];
            }
        }
}

static int cpu_upload_t(dd_engine *e, void *dst, int64_t ldd, const void *src, int64_t h, int64_t w,
                        size_t es, dd_err *err)
{
    (void)e;
    (void)err;
    transpose(dst, ldd, src, w, h, w, es);
    return DD_OK;
}

static int cpu_download_t(dd_engine *e, void *dst, const void *src, int64_t lds, int64_t h,
                          int64_t w, size_t es, dd_err *err)
{
    (void)e;
    (void)err;
    transpose(dst, w, src, lds, w, h, es);
    return DD_OK;
}

static int cpu_wait(dd_engine *e, dd_err *err)
{
    (void)e;
    (void)err;
    return DD_OK;
}

static int cpu_mark(dd_engine *e, int q, int i, dd_err *err)
{
    (void)e;
    (void)q;
    (void)i;
    (void)err;
    return DD_OK;
}

static int cpu_reached(dd_engine *e, int i, dd_err *err)
{
    (void)e;
    (void)i;
    (void)err;
    return DD_OK;
}

static void zero_rows(dd_dtype t, int64_t m, int64_t n, void *C, int64_t ldc)
{
    size_t es = dd_elsize(t);
    for (int64_t i = 0; i < m; i++)
        memset((char *)C + (size_t)(i * ldc) * es, 0, (size_t)n * es);
}

static int cpu_gemm(dd_engine *e, dd_dtype t, int64_t m, int64_t n, int64_t k, const void *A,
                    int64_t lda, const void *B, int64_t ldb, int beta, void *C, int64_t ldc,
                    dd_progress_fn progress, void *parg, dd_err *err)
{
    cpu_state *s = e->impl;
    /* CBLAS takes int: rows are cut in chunks below INT_MAX; the other
     * dimensions and strides must fit as they are */
    if (n > INT_MAX || k > INT_MAX || lda > INT_MAX || ldb > INT_MAX || ldc > INT_MAX)
        return dd_fail(err, DD_EUSAGE,
                       "a local multiply of %lld×%lld by %lld×%lld exceeds what 32-bit BLAS "
                       "takes (2^31 - 1 per dimension): use more ranks",
                       (long long)m, (long long)k, (long long)k, (long long)n);
    int64_t chunk = m > INT_MAX ? INT_MAX : m;
    if (progress && m >= 128)
        chunk = m / 8 > 64 ? (m + 7) / 8 : 64;
    if (chunk > INT_MAX)
        chunk = INT_MAX;
    size_t es = dd_elsize(t);
    int rc = m > 0 && n > 0 ? cpu_time_room(s, err) : DD_OK;
    if (rc)
        return rc;
    const double acc0 = s->gemm_acc;
    for (int64_t r = 0; r < m || (r == 0 && m == 0); r += chunk) {
        int64_t rows = m - r < chunk ? m - r : chunk;
        double t0 = dd_now();
        if (rows > 0 && n > 0) {
            const char *a = (const char *)A + (size_t)(r * lda) * es;
            char *c = (char *)C + (size_t)(r * ldc) * es;
            if (k == 0) {
                if (!beta)
                    zero_rows(t, rows, n, c, ldc);
            } else if (t == DD_F64 && s->oz.on) {
                rc = cpu_oz_gemm(&s->oz, rows, n, k, (const double *)a, lda, B, ldb, beta,
                                 (double *)c, ldc, err);
                if (rc)
                    return rc;
            } else if (t == DD_F64) {
                cblas_dgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)n, (int)k,
                            1.0, (const double *)a, (int)lda, B, (int)ldb, beta ? 1.0 : 0.0,
                            (double *)c, (int)ldc);
            } else if (t == DD_F32) {
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)n, (int)k,
                            1.0f, (const float *)a, (int)lda, B, (int)ldb, beta ? 1.0f : 0.0f,
                            (float *)c, (int)ldc);
            } else if (t == DD_C128) {
                const double one[2] = {1, 0}, b[2] = {beta ? 1 : 0, 0};
                cblas_zgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)n, (int)k,
                            one, a, (int)lda, B, (int)ldb, b, c, (int)ldc);
            } else {
                const float one[2] = {1, 0}, b[2] = {beta ? 1.0f : 0.0f, 0};
                cblas_cgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)n, (int)k,
                            one, a, (int)lda, B, (int)ldb, b, c, (int)ldc);
            }
        }
        s->gemm_acc += dd_now() - t0;
        if (progress && (rc = progress(parg, err)))
            return rc;
        if (m == 0)
            break;
    }
    if (m > 0 && n > 0)
        s->times[s->ntimes++] = s->gemm_acc - acc0;
    return DD_OK;
}

int cpu_time_room(cpu_state *s, dd_err *err)
{
    if (s->ntimes < s->cap)
        return DD_OK;
    int64_t cap = s->cap ? 2 * s->cap : 64;
    double *nt = realloc(s->times, (size_t)cap * sizeof *nt);
    if (!nt)
        return dd_fail(err, DD_ENOMEM, "out of host memory for the multiplies' timings");
    s->times = nt;
    s->cap = cap;
    return DD_OK;
}

static void cpu_reset(dd_engine *e)
{
    cpu_state *s = e->impl;
    s->gemm_acc = 0;
    s->ntimes = 0;
    s->oz.n = 0;
}

/* Another element type from now on: an ozaki2 kernel multiplies FP64 only. */
static int cpu_retype(dd_engine *e, dd_dtype t, const char *kernel, dd_err *err)
{
    (void)kernel;
    return cpu_oz_type(&((cpu_state *)e->impl)->oz, t, err);
}

static int cpu_begin(dd_engine *e, dd_err *err)
{
    (void)err;
    ((cpu_state *)e->impl)->t0 = dd_now();
    return DD_OK;
}

static int cpu_end(dd_engine *e, double *seconds, double *gemm_seconds, dd_err *err)
{
    (void)err;
    cpu_state *s = e->impl;
    *seconds = dd_now() - s->t0;
    *gemm_seconds = s->gemm_acc;
    return DD_OK;
}

static int cpu_gemm_times(dd_engine *e, double *seconds, int64_t max, int64_t *count, dd_err *err)
{
    (void)err;
    const cpu_state *s = e->impl;
    for (int64_t i = 0; i < max && i < s->ntimes; i++)
        seconds[i] = s->times[i];
    *count = s->ntimes;
    return DD_OK;
}

static void *cpu_no_stream(dd_engine *e)
{
    (void)e;
    return NULL;
}

const dd_engine_ops dd_engine_cpu = {
    .name = "cpu",
    .work_is_host = 1,
    /* OpenBLAS reaches its rate at rank-512 updates */
    .default_panel = 512,
    .open = cpu_open,
    .close = cpu_close,
    .alloc = cpu_alloc,
    .free = cpu_free,
    .host_alloc = cpu_alloc,
    .host_free = cpu_free,
    .upload = cpu_copy,
    .download = cpu_copy,
    .upload_async = cpu_copy2d,
    .download_async = cpu_copy2d,
    .upload_t_async = cpu_upload_t,
    .download_t_async = cpu_download_t,
    .wait_copies = cpu_wait,
    .mark = cpu_mark,
    .after = cpu_mark,
    .reached = cpu_reached,
    .download_side_async = cpu_copy2d,
    .zero = cpu_zero,
    .gemm = cpu_gemm,
    .reset_timers = cpu_reset,
    .gemm_times = cpu_gemm_times,
    .phase_begin = cpu_begin,
    .phase_end = cpu_end,
    .comm_stream = cpu_no_stream,
    .compute_stream = cpu_no_stream,
    .absmax = cpu_absmax,
    .matvec = cpu_matvec,
    .fill_random = cpu_fill_random,
    .scale = cpu_scale,
    .cscale = cpu_cscale,
    .copy = cpu_copy,
    .retype = cpu_retype,
    .slices_bytes = cpu_slices_bytes,
    .slices_make = cpu_slices_make,
    .slices_gemm = cpu_slices_gemm,
    .slices_missed = cpu_slices_missed,
};
