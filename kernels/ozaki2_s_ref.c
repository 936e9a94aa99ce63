/* ozaki2_s_ref.c — the FP32 Ozaki scheme II on the host (ozaki2_s.h,
 * ozaki2_s_ref.h).  The operands are widened to FP64 (exact), scaled per
 * row of A and column of B as ozaki2_ref.c does (with the FP32 range
 * check), multiplied as integers by oz2_ref_int_product (residues, INT8
 * products, Garner, Horner in FP64), unscaled and rounded to FP32 once.
 * Straight loops: a reference for the GPU kernel and the accuracy tests. */
#include "ozaki2_s_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ozaki2_s.h"

void oz2s_ref_native_wide(int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                          const float *B, int64_t ldb, int beta, float *C, int64_t ldc)
{
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double s = beta ? (double)C[i * ldc + j] : 0.0;
            double p = 0;
            for (int64_t l = 0; l < k; ++l)
                p += (double)A[i * lda + l] * (double)B[l * ldb + j];
            C[i * ldc + j] = (float)(s + p);
        }
}

void oz2s_ref_native_f32(int64_t m, int64_t n, int64_t k, const float *A, int64_t lda,
                         const float *B, int64_t ldb, int beta, float *C, int64_t ldc)
{
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            float s = 0;
            for (int64_t l = 0; l < k; ++l)
                s = fmaf(A[i * lda + l], B[l * ldb + j], s);
            C[i * ldc + j] = beta ? C[i * ldc + j] + s : s;
        }
}

/* The scale of one row (stride 1) or column (stride ld) of length k and
 * its range check (ozaki2_ref.c's with OZ2S_KEEP_BITS, oz2s_out_of_range): *bad 0 fine, 1
 * non-finite, 2 too many lossy elements. */
static int scale_vector(const float *x, int64_t stride, int64_t k, int half_bits, int *bad,
                        int64_t *lossy, int64_t *nnz)
{
    double amax = 0;
    *bad = 0;
    for (int64_t l = 0; l < k; ++l) {
        double v = fabs((double)x[l * stride]);
        if (!isfinite(v))
            *bad = 1;
        amax = v > amax ? v : amax;
    }
    if (*bad)
        return 0;
    int e = 0;
    if (amax > 0)
        (void)frexp(amax, &e);
    double sumsq = 0;
    for (int64_t l = 0; l < k; ++l) {
        double v = ldexp((double)x[l * stride], -e);
        sumsq += v * v;
    }
    int s = oz2_shift(amax, sumsq, half_bits);
    *lossy = 0, *nnz = 0;
    for (int64_t l = 0; l < k; ++l) {
        int lo;
        (void)oz2s_scaled((double)x[l * stride], s, &lo);
        *lossy += lo;
        *nnz += x[l * stride] != 0;
    }
    if (oz2s_out_of_range(*lossy, *nnz))
        *bad = 2;
    return s;
}

/* One k chunk.  Returns 0, -1 out of memory. */
static int chunk(const oz2_ref_opts *o, const oz2_params *p, int64_t m, int64_t n, int64_t k,
                 const float *A, int64_t lda, const float *B, int64_t ldb, int beta, float *C,
                 int64_t ldc, oz2_ref_result *res)
{
    int *sa = malloc(sizeof(int) * (size_t)m), *sb = malloc(sizeof(int) * (size_t)n);
    double *As = malloc(sizeof(double) * (size_t)(m * k) + 1);
    double *Bs = malloc(sizeof(double) * (size_t)(k * n) + 1);
    double *X = malloc(sizeof(double) * (size_t)(m * n) + 1);
    int rc = -1, out = 0;
    if (!sa || !sb || !As || !Bs || !X)
        goto done;
    for (int64_t v = 0; v < m + n; ++v) {
        int bad, is_a = v < m;
        int64_t lossy = 0, nnz = 0, idx = is_a ? v : v - m;
        int s = is_a ? scale_vector(A + idx * lda, 1, k, p->half_bits, &bad, &lossy, &nnz)
                     : scale_vector(B + idx, ldb, k, p->half_bits, &bad, &lossy, &nnz);
        (is_a ? sa : sb)[idx] = s;
        if (bad && !out) {
            out = 1;
            if (res->reason[0])
                continue;
            if (bad == 1)
                snprintf(res->reason, sizeof res->reason, "%s %lld of %s holds a non-finite value",
                         is_a ? "row" : "column", (long long)idx, is_a ? "A" : "B");
            else
                snprintf(res->reason, sizeof res->reason,
                         "%s %lld of %s: %lld of its %lld nonzeros keep < %d bits at %d moduli "
                         "(exponent range too wide)",
                         is_a ? "row" : "column", (long long)idx, is_a ? "A" : "B",
                         (long long)lossy, (long long)nnz, OZ2S_KEEP_BITS, p->n);
        }
    }
    if (out && !o->force) {
        res->fallback = 1;
        oz2s_ref_native_wide(m, n, k, A, lda, B, ldb, beta, C, ldc);
        rc = 0;
        goto done;
    }
    int lo;
    for (int64_t i = 0; i < m; ++i)
        for (int64_t l = 0; l < k; ++l)
            As[i * k + l] = oz2s_scaled((double)A[i * lda + l], sa[i], &lo);
    for (int64_t l = 0; l < k; ++l)
        for (int64_t j = 0; j < n; ++j)
            Bs[l * n + j] = oz2s_scaled((double)B[l * ldb + j], sb[j], &lo);
    if ((rc = oz2_ref_int_product(p->n, m, n, k, As, Bs, X)))
        goto done;
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double v = ldexp(X[i * n + j], -(sa[i] + sb[j]));
            C[i * ldc + j] = (float)(beta ? (double)C[i * ldc + j] + v : v);
        }
done:
    free(sa), free(sb), free(As), free(Bs), free(X);
    return rc;
}

int oz2s_ref_sgemm(const oz2_ref_opts *o, int64_t m, int64_t n, int64_t k, const float *A,
                   int64_t lda, const float *B, int64_t ldb, int beta, float *C, int64_t ldc,
                   oz2_ref_result *res)
{
    if (m < 0 || n < 0 || k < 0 || (beta != 0 && beta != 1) || lda < k || ldb < n || ldc < n)
        return -1;
    int nm = o->moduli ? o->moduli : oz2s_auto_moduli(k);
    if (nm < OZ2S_MIN_MODULI || nm > OZ2S_MAX_MODULI)
        return -1;
    oz2_params p;
    oz2_params_init(&p, nm);
    memset(res, 0, sizeof *res);
    res->moduli = nm;
    if (m == 0 || n == 0)
        return 0;
    if (k == 0) {
        for (int64_t i = 0; i < m && !beta; ++i)
            memset(C + i * ldc, 0, sizeof(float) * (size_t)n);
        return 0;
    }
    int64_t kc = o->kchunk > 0 && o->kchunk < OZ2_KCHUNK ? o->kchunk : OZ2_KCHUNK;
    for (int64_t l0 = 0; l0 < k; l0 += kc) {
        int64_t kk = k - l0 < kc ? k - l0 : kc;
        if (chunk(o, &p, m, n, kk, A + l0, lda, B + l0 * ldb, ldb, l0 ? 1 : beta, C, ldc, res))
            return -1;
    }
    return 0;
}
