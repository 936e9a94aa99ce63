/* engine_cpu_aux.c — the CPU engine's ops besides memory and the multiply
 * (engine.h, engine_cpu_impl.h), as engine_cuda_aux.c is the CUDA engine's:
 * the check's absmax and matrix-vector products (real and complex), the
 * generator of --size inputs (rng.h) and GEMM's alpha and beta (scale,
 * cscale), all on host memory, synchronous. */
#include <math.h>
#include <string.h>

#include "engine_cpu_impl.h"
#include "rng.h"

static double cpu_elem(const void *p, dd_dtype t, int64_t i)
{
    return t == DD_F64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

/* Component i of complex data (t a complex type), as a double. */
static double cpu_part(const void *p, dd_dtype t, int64_t i)
{
    return t == DD_C128 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

/* The complex types' absmax: the largest modulus of a finite element. */
static void cpu_absmax_c(dd_dtype t, const void *M, int64_t n, double *max, int *nonfinite)
{
    double mx = 0, probe = 0;
    for (int64_t i = 0; i < n; i++) {
        double re = cpu_part(M, t, 2 * i), im = cpu_part(M, t, 2 * i + 1);
        probe += (re - re) + (im - im);
        if (isfinite(re) && isfinite(im)) {
            double m = hypot(re, im);
            mx = m > mx ? m : mx;
        }
    }
    *max = mx;
    *nonfinite = isnan(probe);
}

/* The complex types' matvec: complex v and out, absrow the rows' sums of
 * moduli (the scaled values are bounded: no overflow in re² + im²). */
static void cpu_matvec_c(dd_dtype t, const void *M, int64_t rows, int64_t cols, const double f[2],
                         const double *v, double *out, double *absrow, int *nonfinite)
{
    double probe = 0;
    for (int64_t i = 0; i < rows; i++) {
        double sr = 0, si = 0, a = 0;
        for (int64_t j = 0; j < cols; j++) {
            double re = cpu_part(M, t, 2 * (i * cols + j)), im = cpu_part(M, t, 2 * (i * cols + j) + 1);
            probe += (re - re) + (im - im);
            re = re * f[0] * f[1];
            im = im * f[0] * f[1];
            sr += re * v[2 * j] - im * v[2 * j + 1];
            si += re * v[2 * j + 1] + im * v[2 * j];
            a += sqrt(re * re + im * im);
        }
        out[2 * i] = sr;
        out[2 * i + 1] = si;
        if (absrow)
            absrow[i] = a;
    }
    *nonfinite = isnan(probe);
}

/* max |m| over the finite elements; the probe sums m − m: 0, or NaN as soon
 * as one element is NaN or ±Inf. */
int cpu_absmax(dd_engine *e, dd_dtype t, const void *M, int64_t n, double *max, int *nonfinite,
               dd_err *err)
{
    (void)e;
    (void)err;
    if (dd_dtype_complex(t)) {
        cpu_absmax_c(t, M, n, max, nonfinite);
        return DD_OK;
    }
    double mx = 0, probe = 0;
    for (int64_t i = 0; i < n; i++) {
        double m = cpu_elem(M, t, i);
        probe += m - m;
        if (fabs(m) > mx && isfinite(m))
            mx = fabs(m);
    }
    *max = mx;
    *nonfinite = isnan(probe);
    return DD_OK;
}

int cpu_matvec(dd_engine *e, dd_dtype t, const void *M, int64_t rows, int64_t cols,
               const double f[2], const double *v, double *out, double *absrow, int *nonfinite,
               dd_err *err)
{
    (void)e;
    (void)err;
    if (dd_dtype_complex(t)) {
        cpu_matvec_c(t, M, rows, cols, f, v, out, absrow, nonfinite);
        return DD_OK;
    }
    double probe = 0;
    for (int64_t i = 0; i < rows; i++) {
        double s = 0, a = 0;
        for (int64_t j = 0; j < cols; j++) {
            double m = cpu_elem(M, t, i * cols + j);
            probe += m - m;
            m = m * f[0] * f[1];
            s += m * v[j];
            a += fabs(m);
        }
        out[i] = s;
        if (absrow)
            absrow[i] = a;
    }
    *nonfinite = isnan(probe);
    return DD_OK;
}

int cpu_fill_random(dd_engine *e, dd_dtype t, void *work, uint64_t seed, uint64_t tag, int64_t row0,
                    int64_t rows, int64_t col0, int64_t cols, int64_t gcols, int trans, dd_err *err)
{
    (void)e;
    (void)err;
    if (trans)
        rng_fill_block_t(work, t, seed, tag, row0, rows, col0, cols, gcols);
    else
        rng_fill_block(work, t, seed, tag, row0, rows, col0, cols, gcols);
    return DD_OK;
}

int cpu_scale(dd_engine *e, dd_dtype t, void *work, int64_t n, double s, dd_err *err)
{
    (void)e;
    (void)err;
    if (s == 1 || n <= 0)
        return DD_OK;
    if (dd_dtype_complex(t)) /* a real factor: each part scaled alike */
        return cpu_scale(e, dd_dtype_real(t), work, 2 * n, s, err);
    if (s == 0) {
        memset(work, 0, (size_t)n * dd_elsize(t));
    } else if (t == DD_F64) {
        double *x = work;
        for (int64_t i = 0; i < n; i++)
            x[i] *= s;
    } else {
        float *x = work, f = (float)s;
        for (int64_t i = 0; i < n; i++)
            x[i] *= f;
    }
    return DD_OK;
}

int cpu_cscale(dd_engine *e, dd_dtype t, void *work, int64_t n, const double s[2], int conj,
               dd_err *err)
{
    if (!dd_dtype_complex(t))
        return dd_fail(err, DD_EFAIL, "a complex scale of %s data", dd_dtype_name(t));
    if (s[1] == 0 && !conj)
        return cpu_scale(e, t, work, n, s[0], err);
    if (n <= 0)
        return DD_OK;
    if (s[0] == 0 && s[1] == 0) {
        memset(work, 0, (size_t)n * dd_elsize(t));
    } else if (s[1] == 0) { /* conj with a real factor: each part scaled, as scale does */
        int rc = cpu_scale(e, t, work, n, s[0], err);
        if (t == DD_C128)
            for (int64_t i = 0; i < n; i++)
                ((double *)work)[2 * i + 1] = -((double *)work)[2 * i + 1];
        else
            for (int64_t i = 0; i < n; i++)
                ((float *)work)[2 * i + 1] = -((float *)work)[2 * i + 1];
        return rc;
    } else if (t == DD_C128) {
        double *x = work, sr = s[0], si = s[1], g = conj ? -1 : 1;
        for (int64_t i = 0; i < n; i++) {
            double re = x[2 * i], im = g * x[2 * i + 1];
            x[2 * i] = re * sr - im * si;
            x[2 * i + 1] = re * si + im * sr;
        }
    } else {
        float *x = work, sr = (float)s[0], si = (float)s[1], g = conj ? -1.0f : 1.0f;
        for (int64_t i = 0; i < n; i++) {
            float re = x[2 * i], im = g * x[2 * i + 1];
            x[2 * i] = re * sr - im * si;
            x[2 * i + 1] = re * si + im * sr;
        }
    }
    return DD_OK;
}
