/* ozaki2_ref.c — the Ozaki scheme II on the host (ozaki2.h, ozaki2_ref.h).
 * Straight loops, no blocking: a reference for the GPU kernel and for the
 * accuracy tests, not a fast path. */
#include "ozaki2_ref.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ozaki2.h"

void oz2_ref_native(int64_t m, int64_t n, int64_t k, const double *A, int64_t lda,
                    const double *B, int64_t ldb, int beta, double *C, int64_t ldc)
{
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double s = 0;
            for (int64_t l = 0; l < k; ++l)
                s += A[i * lda + l] * B[l * ldb + j];
            C[i * ldc + j] = beta ? C[i * ldc + j] + s : s;
        }
}

/* The scale of one row (stride 1) or column (stride ld) of length k, and
 * its range check: *bad 0 fine, 1 non-finite, 2 too many lossy elements;
 * *lossy and *nnz counted. */
static int scale_vector(const double *x, int64_t stride, int64_t k, int half_bits, int *bad,
                        int64_t *lossy, int64_t *nnz)
{
    double amax = 0;
    *bad = 0;
    for (int64_t l = 0; l < k; ++l) {
        double v = fabs(x[l * stride]);
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
        double v = ldexp(x[l * stride], -e);
        sumsq += v * v;
    }
    int s = oz2_shift(amax, sumsq, half_bits);
    *lossy = 0, *nnz = 0;
    for (int64_t l = 0; l < k; ++l) {
        int lo;
        (void)oz2_scaled(x[l * stride], s, &lo);
        *lossy += lo;
        *nnz += x[l * stride] != 0;
    }
    if (*lossy * OZ2_LOSSY_DEN > *nnz)
        *bad = 2;
    return s;
}

/* The guard's summary and histogram of one row (stride 1) or column
 * (stride ld) of length k; 1 when it holds a non-finite value. */
static int guard_vector(const double *x, int64_t stride, int64_t k, oz2_vsum *v, int *h)
{
    double amax = 0, sumsq = 0, n1 = 0;
    for (int64_t l = 0; l < k; ++l) {
        double a = fabs(x[l * stride]);
        if (!isfinite(a))
            return 1;
        amax = a > amax ? a : amax;
    }
    int e = 0;
    if (amax > 0)
        (void)frexp(amax, &e);
    memset(h, 0, sizeof(int) * OZ2_HIST_BINS);
    v->zeros = 0;
    for (int64_t l = 0; l < k; ++l) {
        double a = ldexp(fabs(x[l * stride]), -e);
        sumsq += a * a, n1 += a;
        int d = oz2_hist_bin(x[l * stride], e);
        if (d < 0)
            ++v->zeros;
        else
            ++h[d];
    }
    v->emax = e;
    v->enorm = oz2_shift_base(amax, sumsq);
    v->n1 = n1;
    v->last = oz2_hist_last(h);
    return 0;
}

/* The guard over one chunk: the maxima of r and q over every entry
 * (ozaki2.h).  0, 1 with the reason written when A or B holds a
 * non-finite value, -1 out of memory. */
static int guard_all(int64_t m, int64_t n, int64_t k, const double *A, int64_t lda,
                     const double *B, int64_t ldb, double *rmax, double *qmax, char *why,
                     size_t len)
{
    oz2_vsum *va = malloc(sizeof(oz2_vsum) * (size_t)m), *vb = malloc(sizeof(oz2_vsum) * (size_t)n);
    int *ha = malloc(sizeof(int) * OZ2_HIST_BINS * (size_t)m);
    int *hb = malloc(sizeof(int) * OZ2_HIST_BINS * (size_t)n);
    int rc = -1;
    if (!va || !vb || !ha || !hb)
        goto out;
    rc = 0;
    for (int64_t i = 0; i < m && !rc; ++i)
        if (guard_vector(A + i * lda, 1, k, &va[i], ha + i * OZ2_HIST_BINS)) {
            snprintf(why, len, "row %lld of A holds a non-finite value", (long long)i);
            rc = 1;
        }
    for (int64_t j = 0; j < n && !rc; ++j)
        if (guard_vector(B + j, ldb, k, &vb[j], hb + j * OZ2_HIST_BINS)) {
            snprintf(why, len, "column %lld of B holds a non-finite value", (long long)j);
            rc = 1;
        }
    *rmax = 0, *qmax = 0;
    for (int64_t i = 0; i < m && !rc; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double r, q;
            oz2_guard_entry(&va[i], ha + i * OZ2_HIST_BINS, &vb[j], hb + j * OZ2_HIST_BINS, k, &r,
                            &q);
            *rmax = r > *rmax ? r : *rmax, *qmax = q > *qmax ? q : *qmax;
        }
out:
    free(va), free(vb), free(ha), free(hb);
    return rc;
}

/* Why row idx of A (is_a) or column idx of B is out of range, into why
 * (when not NULL): bad 1 a non-finite value, 2 too many lossy elements
 * (lossy of its nnz nonzeros, at the given count of moduli). */
static void range_reason(char *why, size_t len, int is_a, int64_t idx, int bad, int64_t lossy,
                         int64_t nnz, int moduli)
{
    if (!why || !len)
        return;
    if (bad == 1)
        snprintf(why, len, "%s %lld of %s holds a non-finite value", is_a ? "row" : "column",
                 (long long)idx, is_a ? "A" : "B");
    else
        snprintf(why, len,
                 "%s %lld of %s: %lld of its %lld nonzeros keep < %d bits at %d moduli "
                 "(exponent range too wide)",
                 is_a ? "row" : "column", (long long)idx, is_a ? "A" : "B", (long long)lossy,
                 (long long)nnz, OZ2_KEEP_BITS, moduli);
}

/* Scales of every row of A (sa) and column of B (sb); 0, or 1 with the
 * reason written when some row or column is out of range (with range 0
 * only non-finite values count: the guard has bounded the error). */
static int scale_all(const oz2_params *p, int range, int64_t m, int64_t n, int64_t k,
                     const double *A, int64_t lda, const double *B, int64_t ldb, int *sa, int *sb,
                     char *why, size_t len)
{
    int out = 0;
    for (int64_t v = 0; v < m + n; ++v) {
        int bad;
        int64_t lossy = 0, nnz = 0;
        int is_a = v < m;
        int64_t idx = is_a ? v : v - m;
        int s = is_a ? scale_vector(A + idx * lda, 1, k, p->half_bits, &bad, &lossy, &nnz)
                     : scale_vector(B + idx, ldb, k, p->half_bits, &bad, &lossy, &nnz);
        (is_a ? sa : sb)[idx] = s;
        if (bad == 2 && !range)
            bad = 0;
        if (bad && !out) {
            out = 1;
            range_reason(why, len, is_a, idx, bad, lossy, nnz, p->n);
        }
    }
    return out;
}

/* The symmetric residue mod m_i of an integer-valued double, as INT8. */
static int8_t residue8(const oz2_params *p, int i, double x)
{
    return (int8_t)oz2_symmod(x, p->m[i], p->rinv[i]);
}

/* The INT8 product of modulus i in INT32 (exact: k ≤ OZ2_KCHUNK), reduced
 * to symmetric residues in res (m×n, tight).  a8: m×k, element l of row r
 * at a8[r·k + l]; b8: k×n, element l of column c at b8[l·n + c]. */
static void product_mod(const oz2_params *p, int i, int64_t m, int64_t n, int64_t k,
                        const int8_t *a8, const int8_t *b8, float *res)
{
    for (int64_t r = 0; r < m; ++r)
        for (int64_t c = 0; c < n; ++c) {
            int32_t acc = 0;
            for (int64_t l = 0; l < k; ++l)
                acc += (int32_t)a8[r * k + l] * (int32_t)b8[l * n + c];
            res[r * n + c] = (float)oz2_symmod((double)acc, p->m[i], p->rinv[i]);
        }
}

/* Garner on each of q entries: X[e] from the residues res[i·q + e] of the
 * p->n moduli. */
static void garner_all(const oz2_params *p, int64_t q, const float *res, double *X)
{
    float c[OZ2_MAX_MODULI];
    for (int64_t e = 0; e < q; ++e) {
        for (int i = 0; i < p->n; ++i)
            c[i] = res[(size_t)i * (size_t)q + (size_t)e];
        X[e] = oz2_garner(p, c);
    }
}

/* C(m×n, ldc) = X·2^-(sa_i + sb_j) + beta·C, X m×n tight: the integer
 * products scaled back. */
static void scale_back(int64_t m, int64_t n, const double *X, const int *sa, const int *sb,
                       int beta, double *C, int64_t ldc)
{
    for (int64_t i = 0; i < m; ++i)
        for (int64_t j = 0; j < n; ++j) {
            double v = ldexp(X[i * n + j], -(sa[i] + sb[j]));
            C[i * ldc + j] = beta ? C[i * ldc + j] + v : v;
        }
}

/* The exact integer products of As (m×k) and Bs (k×n), tight, into X
 * (m×n) as doubles: per modulus the residues and their INT8 product, then
 * Garner.  Returns 0, or -1 out of memory. */
static int crt_product(const oz2_params *p, int64_t m, int64_t n, int64_t k, const double *As,
                       const double *Bs, double *X)
{
    int8_t *a8 = malloc((size_t)(m * k) + 1), *b8 = malloc((size_t)(k * n) + 1);
    float *res = malloc(sizeof(float) * (size_t)p->n * (size_t)(m * n) + 1);
    int rc = -1;
    if (a8 && b8 && res) {
        for (int i = 0; i < p->n; ++i) {
            for (int64_t q = 0; q < m * k; ++q)
                a8[q] = residue8(p, i, As[q]);
            for (int64_t q = 0; q < k * n; ++q)
                b8[q] = residue8(p, i, Bs[q]);
            product_mod(p, i, m, n, k, a8, b8, res + (size_t)i * (size_t)(m * n));
        }
        garner_all(p, m * n, res, X);
        rc = 0;
    }
    free(a8), free(b8), free(res);
    return rc;
}

int oz2_ref_int_product(int moduli, int64_t m, int64_t n, int64_t k, const double *A,
                        const double *B, double *C)
{
    oz2_params p;
    oz2_params_init(&p, moduli);
    return crt_product(&p, m, n, k, A, B, C);
}

/* The guard's verdict on one chunk: the moduli to use (p set up), or 0
 * with the reason written: native.  -1 out of memory. */
static int guard_chunk(const oz2_ref_opts *o, int64_t m, int64_t n, int64_t k, const double *A,
                       int64_t lda, const double *B, int64_t ldb, oz2_params *p,
                       oz2_ref_result *res, char *why, size_t len)
{
    double rmax = 0, qmax = 0;
    why[0] = '\0';
    int g = guard_all(m, n, k, A, lda, B, ldb, &rmax, &qmax, why, len);
    if (g < 0)
        return -1;
    if (g > 0) { /* non-finite: native, whatever force says */
        res->need = 0;
        return 0;
    }
    int nm = oz2_guard_moduli(rmax, qmax);
    res->need = nm, res->rmax = rmax, res->qmax = qmax;
    if (!nm && isinf(rmax))
        snprintf(why, len, "guard: an entry has no lower bound of |A||B| (sparse rows meeting "
                           "sparse columns)");
    else if (!nm)
        snprintf(why, len, "guard: the error bound needs more than %d moduli (log2 max r = %.1f)",
                 OZ2_MAX_MODULI, log2(rmax));
    else if (o->speed && !oz2_emulation_pays(nm, k))
        snprintf(why, len, "guard: %d moduli at k = %lld would be slower than native", nm,
                 (long long)k);
    if (why[0] && !o->force)
        return 0;
    oz2_params_init(p, nm ? nm : OZ2_MAX_MODULI);
    return p->n;
}

/* One k chunk (k ≤ OZ2_KCHUNK).  Returns 0, -1 out of memory. */
static int chunk(const oz2_ref_opts *o, const oz2_params *p0, int64_t m, int64_t n, int64_t k,
                 const double *A, int64_t lda, const double *B, int64_t ldb, int beta, double *C,
                 int64_t ldc, oz2_ref_result *res)
{
    int *sa = malloc(sizeof(int) * (size_t)m), *sb = malloc(sizeof(int) * (size_t)n);
    double *As = malloc(sizeof(double) * (size_t)(m * k)), *Bs = NULL, *X = NULL;
    int rc = -1;
    oz2_params pg;
    const oz2_params *p = p0;
    if (!sa || !sb || !As)
        goto out;
    char why[sizeof res->reason];
    if (o->guard) {
        int nm = guard_chunk(o, m, n, k, A, lda, B, ldb, &pg, res, why, sizeof why);
        if (nm < 0)
            goto out;
        if (why[0])
            memcpy(res->reason, why, sizeof why);
        if (nm == 0) {
            res->fallback = 1;
            oz2_ref_native(m, n, k, A, lda, B, ldb, beta, C, ldc);
            rc = 0;
            goto out;
        }
        p = &pg;
        res->moduli = nm;
    }
    if (scale_all(p, !o->guard, m, n, k, A, lda, B, ldb, sa, sb, why, sizeof why)) {
        if (!res->reason[0])
            memcpy(res->reason, why, sizeof why);
        if (!o->force) {
            res->fallback = 1;
            oz2_ref_native(m, n, k, A, lda, B, ldb, beta, C, ldc);
            rc = 0;
            goto out;
        }
    }
    Bs = malloc(sizeof(double) * (size_t)(k * n));
    X = malloc(sizeof(double) * (size_t)(m * n));
    if (!Bs || !X)
        goto out;
    int lo;
    for (int64_t i = 0; i < m; ++i)
        for (int64_t l = 0; l < k; ++l)
            As[i * k + l] = oz2_scaled(A[i * lda + l], sa[i], &lo);
    for (int64_t l = 0; l < k; ++l)
        for (int64_t j = 0; j < n; ++j)
            Bs[l * n + j] = oz2_scaled(B[l * ldb + j], sb[j], &lo);
    if ((rc = crt_product(p, m, n, k, As, Bs, X)))
        goto out;
    scale_back(m, n, X, sa, sb, beta, C, ldc);
out:
    free(sa), free(sb), free(As), free(Bs), free(X);
    return rc;
}

int oz2_ref_dgemm(const oz2_ref_opts *o, int64_t m, int64_t n, int64_t k, const double *A,
                  int64_t lda, const double *B, int64_t ldb, int beta, double *C, int64_t ldc,
                  oz2_ref_result *res)
{
    if (m < 0 || n < 0 || k < 0 || (beta != 0 && beta != 1) || lda < k || ldb < n || ldc < n)
        return -1;
    int nm = o->moduli ? o->moduli : oz2_auto_moduli(k);
    if (nm < OZ2_MIN_MODULI || nm > OZ2_MAX_MODULI)
        return -1;
    oz2_params p;
    oz2_params_init(&p, nm);
    memset(res, 0, sizeof *res);
    res->moduli = o->guard ? 0 : nm;
    if (m == 0 || n == 0)
        return 0;
    if (k == 0) {
        for (int64_t i = 0; i < m && !beta; ++i)
            memset(C + i * ldc, 0, sizeof(double) * (size_t)n);
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

/* ---- Sliced operands (ozaki2_ref.h) ------------------------------------------------
 *
 * A blob: the header below, then the vectors' scales (int32_t each, from
 * scales_off, zero-padded to a multiple of 8 bytes), then the residues
 * (int8_t, from residues_off): one plane of vectors·k bytes per modulus,
 * modulus i's plane at residues_off + i·vectors·k.  In a plane of side 0
 * (rows of A) element l of row v is at v·k + l, in one of side 1 (columns
 * of B) element l of column v at l·vectors + v: the operands of
 * product_mod as they are.  Everything is found by offsets from the
 * blob's start and read by memcpy, so a blob copied to any address (any
 * alignment) stays valid.  Out of range, the scales and residues are all
 * zero; every byte of a blob is written, so equal inputs give equal
 * blobs. */
#define OZ2_SLICES_MAGIC 0x4c53324fu /* "O2SL" little-endian */

typedef struct {
    uint32_t magic;
    int32_t moduli, side;
    int32_t bad;                      /* 0 in range, 1 non-finite, 2 too many lossy elements */
    int64_t vectors, k;
    int64_t bad_index, lossy, nnz;    /* the first vector out of range (-1: none), its counts */
    int64_t scales_off, residues_off; /* bytes from the blob's start */
} slices_head;
_Static_assert(sizeof(slices_head) == 72, "slices_head has no padding");

/* The layout of a blob of vectors vectors of length k at the given count:
 * its size, and the offsets of the scales and the residues; 0 for bad
 * arguments or a size past SIZE_MAX (or INT64_MAX: the header's offsets). */
static size_t slices_layout(int moduli, int64_t vectors, int64_t k, uint64_t *scales_off,
                            uint64_t *residues_off)
{
    if (moduli < OZ2_MIN_MODULI || moduli > OZ2_MAX_MODULI || vectors < 0 || k < 1 ||
        k > OZ2_KCHUNK)
        return 0;
    const uint64_t lim = (uint64_t)SIZE_MAX < (uint64_t)INT64_MAX ? (uint64_t)SIZE_MAX
                                                                  : (uint64_t)INT64_MAX;
    const uint64_t v = (uint64_t)vectors, so = sizeof(slices_head);
    if (v > (lim - so - 8) / 4)
        return 0;
    const uint64_t ro = so + (4 * v + 7) / 8 * 8;
    /* moduli·v·k ≤ lim - ro */
    if (v > (lim - ro) / (uint64_t)k / (uint64_t)moduli)
        return 0;
    *scales_off = so, *residues_off = ro;
    return (size_t)(ro + (uint64_t)moduli * v * (uint64_t)k);
}

size_t oz2_ref_slices_bytes(int moduli, int64_t vectors, int64_t k)
{
    uint64_t so, ro;
    return slices_layout(moduli, vectors, k, &so, &ro);
}

int oz2_ref_slices_make(int moduli, int side, int64_t vectors, int64_t k, const double *X,
                        int64_t ld, void *blob)
{
    uint64_t so, ro;
    const size_t bytes = slices_layout(moduli, vectors, k, &so, &ro);
    if (!bytes || (side != 0 && side != 1) || !blob || (vectors > 0 && !X) ||
        ld < (side ? vectors : k))
        return -1;
    oz2_params p;
    oz2_params_init(&p, moduli);
    unsigned char *base = blob;
    slices_head h = {OZ2_SLICES_MAGIC, moduli, side, 0, vectors, k, -1, 0, 0, (int64_t)so,
                     (int64_t)ro};
    /* vector v starts at X + v·step, its element l is l·stride further */
    const int64_t step = side ? 1 : ld, stride = side ? ld : 1;
    /* the scales and the range check as scale_all does them (range on):
     * the first vector out of range is the one reported */
    for (int64_t v = 0; v < vectors; ++v) {
        int bad;
        int64_t lossy = 0, nnz = 0;
        int32_t s = scale_vector(X + v * step, stride, k, p.half_bits, &bad, &lossy, &nnz);
        if (bad) {
            h.bad = bad, h.bad_index = v, h.lossy = lossy, h.nnz = nnz;
            break;
        }
        memcpy(base + so + 4 * (uint64_t)v, &s, sizeof s);
    }
    if (h.bad) {
        memset(base + so, 0, bytes - so);
    } else {
        memset(base + so + 4 * (uint64_t)vectors, 0, ro - so - 4 * (uint64_t)vectors);
        int8_t *res = (int8_t *)(base + ro);
        const size_t plane = (size_t)vectors * (size_t)k;
        for (int64_t v = 0; v < vectors; ++v) {
            int32_t s;
            memcpy(&s, base + so + 4 * (uint64_t)v, sizeof s);
            for (int64_t l = 0; l < k; ++l) {
                int lo;
                const double y = oz2_scaled(X[v * step + l * stride], s, &lo);
                const size_t at = side ? (size_t)(l * vectors + v) : (size_t)(v * k + l);
                for (int i = 0; i < moduli; ++i)
                    res[(size_t)i * plane + at] = residue8(&p, i, y);
            }
        }
    }
    memcpy(base, &h, sizeof h);
    return 0;
}

/* A blob's header into h, checked against what the caller expects of it:
 * 0, or -1 when it is not a blob of this count, side, vectors and k (or
 * its header is inconsistent). */
static int slices_head_read(const void *blob, int moduli, int side, int64_t vectors, int64_t k,
                            slices_head *h)
{
    uint64_t so, ro;
    if (!blob || !slices_layout(moduli, vectors, k, &so, &ro))
        return -1;
    memcpy(h, blob, sizeof *h);
    if (h->magic != OZ2_SLICES_MAGIC || h->moduli != moduli || h->side != side ||
        h->vectors != vectors || h->k != k || h->scales_off != (int64_t)so ||
        h->residues_off != (int64_t)ro)
        return -1;
    if (h->bad < 0 || h->bad > 2 || (h->bad && (h->bad_index < 0 || h->bad_index >= vectors)))
        return -1;
    return 0;
}

/* The scales of a blob's vectors into s. */
static void slices_scales(const void *blob, const slices_head *h, int *s)
{
    const unsigned char *base = blob;
    for (int64_t v = 0; v < h->vectors; ++v) {
        int32_t x;
        memcpy(&x, base + h->scales_off + 4 * v, sizeof x);
        s[v] = x;
    }
}

int oz2_ref_slices_gemm(int moduli, int64_t m, int64_t n, int64_t k, const void *a, const void *b,
                        int beta, double *C, int64_t ldc, int *missed, char *why, size_t len)
{
    slices_head ha, hb;
    if (m < 0 || n < 0 || (beta != 0 && beta != 1) || ldc < n || !missed ||
        (m > 0 && n > 0 && !C) || slices_head_read(a, moduli, 0, m, k, &ha) ||
        slices_head_read(b, moduli, 1, n, k, &hb))
        return -1;
    *missed = 0;
    if (why && len)
        why[0] = '\0';
    if (m == 0 || n == 0)
        return 0;
    if (ha.bad || hb.bad) { /* oz2_ref_dgemm would fall back: A's reason first, as scale_all */
        const slices_head *h = ha.bad ? &ha : &hb;
        range_reason(why, len, h == &ha, h->bad_index, h->bad, h->lossy, h->nnz, moduli);
        *missed = 1;
        for (int64_t i = 0; i < m && !beta; ++i)
            memset(C + i * ldc, 0, sizeof(double) * (size_t)n);
        return 0;
    }
    /* m·n·moduli floats for the residues of the products */
    if ((uint64_t)m > (uint64_t)SIZE_MAX / sizeof(float) / OZ2_MAX_MODULI / (uint64_t)n)
        return -1;
    oz2_params p;
    oz2_params_init(&p, moduli);
    const size_t mn = (size_t)m * (size_t)n;
    int *sa = malloc(sizeof(int) * (size_t)m), *sb = malloc(sizeof(int) * (size_t)n);
    float *res = malloc(sizeof(float) * (size_t)moduli * mn);
    double *X = malloc(sizeof(double) * mn);
    int rc = -1;
    if (sa && sb && res && X) {
        slices_scales(a, &ha, sa);
        slices_scales(b, &hb, sb);
        const int8_t *ra = (const int8_t *)((const unsigned char *)a + ha.residues_off);
        const int8_t *rb = (const int8_t *)((const unsigned char *)b + hb.residues_off);
        for (int i = 0; i < moduli; ++i)
            product_mod(&p, i, m, n, k, ra + (size_t)i * (size_t)(m * k),
                        rb + (size_t)i * (size_t)(k * n), res + (size_t)i * mn);
        garner_all(&p, m * n, res, X);
        scale_back(m, n, X, sa, sb, beta, C, ldc);
        rc = 0;
    }
    free(sa), free(sb), free(res), free(X);
    return rc;
}
