/* engine_cuda_aux.c — the CUDA engine's ops besides memory and the
 * multiply (engine.h, engine_cuda_impl.h): the check's absmax and
 * matrix-vector products, the generator of --size inputs, GEMM's alpha and
 * beta (scale) and the saved beta·C (copy), all on the compute stream, so
 * ordered after the multiplies, each synchronised before it returns.  The
 * kernels are engine_cuda_kernels.cu's.  Also the multiplies' event timings
 * one by one (gemm_times). */
#include <stdio.h>
#include <string.h>

#include "dd_cuda.h"
#include "engine_cuda_kernels.h"
#include "engine_cuda_impl.h"

/* A device scratch *buf of *cap bytes made to hold `bytes`: freed and
 * allocated afresh (never shrunk) after both streams are idle, so nothing in
 * flight still uses the old one.  `what` names it in messages. */
static int scratch_reserve(cuda_state *s, void **buf, size_t *cap, size_t bytes, const char *what,
                           dd_err *err)
{
    if (bytes <= *cap)
        return DD_OK;
    int rc = dd_cuda_check(cudaStreamSynchronize(s->comm), "cudaStreamSynchronize", err);
    if (!rc)
        rc = dd_cuda_check(cudaStreamSynchronize(s->compute), "cudaStreamSynchronize", err);
    if (!rc && *buf)
        rc = dd_cuda_check(cudaFree(*buf), "cudaFree of a scratch buffer", err);
    *buf = NULL;
    *cap = 0;
    if (rc)
        return rc;
    cudaError_t cr = cudaMalloc(buf, bytes);
    if (cr != cudaSuccess) {
        *buf = NULL;
        cudaGetLastError(); /* clear the recorded allocation error */
        return dd_fail(err, cr == cudaErrorMemoryAllocation ? DD_ENOMEM : DD_EFAIL,
                       "cudaMalloc of %zu bytes of %s on GPU %d of host %s failed: %s", bytes, what,
                       s->device, cuda_host_name(), cudaGetErrorString(cr));
    }
    *cap = bytes;
    return DD_OK;
}

/* The check's scratch: at least 64 KiB. */
static int aux_scratch(cuda_state *s, size_t bytes, dd_err *err)
{
    size_t want = bytes < ((size_t)1 << 16) ? (size_t)1 << 16 : bytes;
    if (bytes <= s->aux_cap)
        return DD_OK;
    return scratch_reserve(s, &s->aux, &s->aux_cap, want, "scratch for the check", err);
}

static int aux_launched(int kr, const char *what, int64_t rows, int64_t cols, dd_err *err)
{
    if (kr == cudaSuccess)
        return DD_OK;
    return dd_fail(err, DD_EFAIL, "the %s kernel (%lld×%lld) failed to launch: %s", what,
                   (long long)rows, (long long)cols, cudaGetErrorString((cudaError_t)kr));
}

int cuda_absmax(dd_engine *e, dd_dtype t, const void *M, int64_t n, double *max, int *nonfinite,
                dd_err *err)
{
    cuda_state *s = e->impl;
    dd_aux_flags f = {0, 0, 0};
    *max = 0;
    *nonfinite = 0;
    if (n <= 0)
        return DD_OK;
    int rc = aux_scratch(s, sizeof f, err);
    if (rc ||
        /* complex: over the parts (the largest part, within sqrt 2 of the
         * largest modulus: the check's power-of-two scale holds) */
        (rc = aux_launched(dd_aux_absmax(dd_dtype_real(t) == DD_F64, M,
                                         dd_dtype_complex(t) ? 2 * n : n, s->aux,
                                         (void *)s->compute),
                           "check's absmax", n, 1, err)) ||
        (rc = cuda_copy_sync(s, &f, s->aux, sizeof f, cudaMemcpyDeviceToHost,
                             "cudaMemcpyAsync of the check's maximum to the host", err)))
        return rc;
    memcpy(max, &f.max_bits, sizeof *max);
    *nonfinite = f.nonfinite != 0;
    return DD_OK;
}

/* Scratch layout of matvec: the flags, v (cols), out (rows), absrow (rows),
 * each at a multiple of 256 bytes. */
static size_t aux_round(size_t bytes)
{
    return (bytes + 255) / 256 * 256;
}

int cuda_matvec(dd_engine *e, dd_dtype t, const void *M, int64_t rows, int64_t cols,
                const double f[2], const double *v, double *out, double *absrow, int *nonfinite,
                dd_err *err)
{
    cuda_state *s = e->impl;
    dd_aux_flags fl = {0, 0, 0};
    *nonfinite = 0;
    if (rows <= 0)
        return DD_OK;
    size_t nc = dd_dtype_complex(t) ? 2 : 1; /* v and out complex: pairs */
    size_t vb = (size_t)(cols > 0 ? cols : 0) * sizeof(double) * nc,
           ob = (size_t)rows * sizeof(double) * nc, rb = (size_t)rows * sizeof(double);
    size_t ov = aux_round(sizeof fl), oo = ov + aux_round(vb), oa = oo + aux_round(ob);
    int rc = aux_scratch(s, oa + (absrow ? rb : 0), err);
    if (rc)
        return rc;
    char *d = s->aux;
    double *dabs = absrow ? (double *)(d + oa) : NULL;
    const char *up = "cudaMemcpyAsync of the check's vector to the GPU";
    const char *down = "cudaMemcpyAsync of the check's products to the host";
    if ((vb &&
         (rc = dd_cuda_check(cudaMemcpyAsync(d + ov, v, vb, cudaMemcpyHostToDevice, s->compute), up,
                             err))) ||
        (rc = aux_launched((nc == 2 ? dd_aux_matvec_c : dd_aux_matvec)(
                               dd_dtype_real(t) == DD_F64, M, rows, cols, f[0], f[1],
                               (const double *)(d + ov), (double *)(d + oo), dabs,
                               (dd_aux_flags *)d, (void *)s->compute),
                           "check's matrix-vector", rows, cols, err)) ||
        (rc = dd_cuda_check(cudaMemcpyAsync(out, d + oo, ob, cudaMemcpyDeviceToHost, s->compute),
                            down, err)) ||
        (absrow &&
         (rc = dd_cuda_check(cudaMemcpyAsync(absrow, dabs, rb, cudaMemcpyDeviceToHost, s->compute),
                             down, err))) ||
        (rc = cuda_copy_sync(s, &fl, d, sizeof fl, cudaMemcpyDeviceToHost, down, err)))
        return rc;
    *nonfinite = fl.nonfinite != 0;
    return DD_OK;
}

int cuda_fill_random(dd_engine *e, dd_dtype t, void *work, uint64_t seed, uint64_t tag,
                     int64_t row0, int64_t rows, int64_t col0, int64_t cols, int64_t gcols,
                     int trans, dd_err *err)
{
    cuda_state *s = e->impl;
    if (rows <= 0 || cols <= 0)
        return DD_OK;
    int f64 = dd_dtype_real(t) == DD_F64, rc;
    if (dd_dtype_complex(t) && trans)
        rc = aux_launched(dd_aux_fill_random_c_t(f64, work, seed, tag, row0, rows, col0, cols,
                                                 gcols, (void *)s->compute),
                          "generator's", rows, cols, err);
    else if (dd_dtype_complex(t)) /* pairs: the real matrix of 2·gcols columns (rng.h) */
        rc = aux_launched(dd_aux_fill_random(f64, work, seed, tag, row0, rows, 2 * col0, 2 * cols,
                                             2 * gcols, 0, (void *)s->compute),
                          "generator's", rows, cols, err);
    else
        rc = aux_launched(dd_aux_fill_random(f64, work, seed, tag, row0, rows, col0, cols, gcols,
                                             trans, (void *)s->compute),
                          "generator's", rows, cols, err);
    return rc ? rc
              : dd_cuda_check(cudaStreamSynchronize(s->compute),
                              "cudaStreamSynchronize after generating inputs on the GPU", err);
}

int cuda_scale(dd_engine *e, dd_dtype t, void *work, int64_t n, double s, dd_err *err)
{
    cuda_state *st = e->impl;
    if (s == 1 || n <= 0)
        return DD_OK;
    int rc;
    if (s == 0) /* zeros, never reading the old contents (NaN there does not survive) */
        rc = dd_cuda_check(cudaMemsetAsync(work, 0, (size_t)n * dd_elsize(t), st->compute),
                           "cudaMemsetAsync (scaling by 0)", err);
    else
        rc = aux_launched(dd_aux_scale(dd_dtype_real(t) == DD_F64, work,
                                       dd_dtype_complex(t) ? 2 * n : n, s, (void *)st->compute),
                          "scaling", n, 1, err);
    return rc ? rc
              : dd_cuda_check(cudaStreamSynchronize(st->compute),
                              "cudaStreamSynchronize after scaling a block by alpha or beta", err);
}

int cuda_copy(dd_engine *e, void *dst, const void *src, size_t bytes, dd_err *err)
{
    if (dst == src)
        return DD_OK;
    return cuda_copy_sync(e->impl, dst, src, bytes, cudaMemcpyDeviceToDevice,
                          "cudaMemcpyAsync GPU to GPU (the saved beta·C)", err);
}

/* The turned copies' scratch holds `bytes`. */
static int tbuf_reserve(cuda_state *s, size_t bytes, dd_err *err)
{
    return scratch_reserve(s, &s->tbuf, &s->tbuf_cap, bytes, "transposition scratch", err);
}

/* On the communication stream, like upload_async: the band up whole, then
 * turned into place; the next band's copy into the scratch is ordered
 * after this band's kernel by the stream. */
int cuda_upload_t(dd_engine *e, void *dst, int64_t ldd, const void *src, int64_t h, int64_t w,
                  size_t es, dd_err *err)
{
    cuda_state *s = e->impl;
    size_t bytes = (size_t)(h * w) * es;
    if (h <= 0 || w <= 0)
        return DD_OK;
    int rc = tbuf_reserve(s, bytes, err);
    if (!rc)
        rc = dd_cuda_check(cudaMemcpyAsync(s->tbuf, src, bytes, cudaMemcpyHostToDevice, s->comm),
                           "cudaMemcpyAsync host to GPU (a transposed band)", err);
    if (!rc)
        rc = aux_launched(dd_aux_transpose(es, s->tbuf, w, dst, ldd, h, w, (void *)s->comm),
                          "transpose", h, w, err);
    return rc;
}

/* On the compute stream, like download_async: turned into the scratch
 * after the multiplies, then down whole. */
int cuda_download_t(dd_engine *e, void *dst, const void *src, int64_t lds, int64_t h, int64_t w,
                    size_t es, dd_err *err)
{
    cuda_state *s = e->impl;
    size_t bytes = (size_t)(h * w) * es;
    if (h <= 0 || w <= 0)
        return DD_OK;
    int rc = tbuf_reserve(s, bytes, err);
    if (!rc)
        rc = aux_launched(dd_aux_transpose(es, src, lds, s->tbuf, w, w, h, (void *)s->compute),
                          "transpose", w, h, err);
    if (!rc)
        rc = dd_cuda_check(cudaMemcpyAsync(dst, s->tbuf, bytes, cudaMemcpyDeviceToHost, s->compute),
                           "cudaMemcpyAsync GPU to host (a transposed band)", err);
    return rc;
}

/* Another element type from now on: its kernel (the old one kept when
 * refused).  The launch reads s->kd on the host, so no wait is needed. */
int cuda_retype(dd_engine *e, dd_dtype t, const char *kernel, dd_err *err)
{
    cuda_state *s = e->impl;
    const kernel_desc *old = s->kd;
    int rc = cuda_pick_kernel(s, kernel, t, err);
    if (rc)
        s->kd = old;
    else {
        snprintf(e->info.kernel, sizeof e->info.kernel, "%s", s->kd->name);
        e->info.panel = kernel_panel(s->kd);
    }
    return rc;
}

int cuda_elapsed(cudaEvent_t a, cudaEvent_t b, double *seconds, dd_err *err)
{
    float ms = 0;
    int rc = dd_cuda_check(cudaEventElapsedTime(&ms, a, b), "cudaEventElapsedTime", err);
    *seconds = rc ? 0 : ms * 1e-3;
    return rc;
}

/* The event pairs of the multiplies since reset_timers (phase_end waited
 * for the last). */
int cuda_gemm_times(dd_engine *e, double *seconds, int64_t max, int64_t *count, dd_err *err)
{
    const cuda_state *s = e->impl;
    *count = s->nev / 2;
    for (int64_t i = 0; i < max && i < *count; i++) {
        int rc = cuda_elapsed(s->ev[2 * i], s->ev[2 * i + 1], &seconds[i], err);
        if (rc)
            return rc;
    }
    return DD_OK;
}

int cuda_cscale(dd_engine *e, dd_dtype t, void *work, int64_t n, const double s[2], int conj,
                dd_err *err)
{
    cuda_state *st = e->impl;
    if (!dd_dtype_complex(t))
        return dd_fail(err, DD_EFAIL, "a complex scale of %s data", dd_dtype_name(t));
    if (s[1] == 0 && !conj)
        return cuda_scale(e, t, work, n, s[0], err);
    if (n <= 0)
        return DD_OK;
    int rc;
    if (s[0] == 0 && s[1] == 0)
        rc = dd_cuda_check(cudaMemsetAsync(work, 0, (size_t)n * dd_elsize(t), st->compute),
                           "cudaMemsetAsync (scaling by 0)", err);
    else
        rc = aux_launched(dd_aux_cscale(t == DD_C128, work, n, s[0], s[1], conj,
                                        (void *)st->compute),
                          "complex scaling", n, 1, err);
    return rc ? rc
              : dd_cuda_check(cudaStreamSynchronize(st->compute),
                              "cudaStreamSynchronize after scaling a block by alpha or beta", err);
}
