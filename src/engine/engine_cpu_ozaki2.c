/* engine_cpu_ozaki2.c — the CPU backend's ozaki2 kernels and sliced panels
 * (engine_cpu_impl.h), on the host reference kernels/ozaki2_ref.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine_cpu_impl.h"
#include "ozaki2.h"
#include "timer.h"

static const char *const oz_names = "openblas, ozaki2, ozaki2-auto, ozaki2-14, ozaki2-15, "
                                    "ozaki2-16 and ozaki2-18";

int cpu_oz_open(cpu_oz *z, const char *kernel, dd_dtype t, dd_err *err)
{
    memset(z, 0, sizeof *z);
    if (!kernel || !strcmp(kernel, "openblas"))
        return DD_OK;
    static const struct {
        const char *name;
        int fixed;
    } known[] = {{"ozaki2", 0},     {"ozaki2-auto", -1}, {"ozaki2-14", 14},
                 {"ozaki2-15", 15}, {"ozaki2-16", 16},   {"ozaki2-18", 18}};
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
        if (!strcmp(kernel, known[i].name)) {
            z->on = 1;
            z->fixed = known[i].fixed;
            z->o.moduli = z->fixed > 0 ? z->fixed : 0;
            z->o.guard = z->fixed < 0;
            return cpu_oz_type(z, t, err);
        }
    return dd_fail(err, DD_EUSAGE, "kernel '%s' does not exist on the CPU backend: it has %s",
                   kernel, oz_names);
}

int cpu_oz_type(const cpu_oz *z, dd_dtype t, dd_err *err)
{
    if (!z->on || t == DD_F64)
        return DD_OK;
    return dd_fail(err, DD_EUSAGE,
                   "the CPU backend's ozaki2 kernels multiply FP64 only, not %s: use "
                   "--kernel openblas there",
                   dd_dtype_name(t));
}

int cpu_oz_gemm(const cpu_oz *z, int64_t m, int64_t n, int64_t k, const double *A, int64_t lda,
                const double *B, int64_t ldb, int beta, double *C, int64_t ldc, dd_err *err)
{
    oz2_ref_result res;
    if (oz2_ref_dgemm(&z->o, m, n, k, A, lda, B, ldb, beta, C, ldc, &res))
        return dd_fail(err, DD_ENOMEM,
                       "the host ozaki2 multiply of %lld×%lld by %lld×%lld found no memory",
                       (long long)m, (long long)k, (long long)k, (long long)n);
    return DD_OK;
}

/* The moduli a blob of inner dimension k is sliced with: 0 where slicing
 * is not offered (OpenBLAS, the guard's count, k outside one chunk). */
static int slice_moduli(const cpu_oz *z, dd_dtype t, int64_t k)
{
    if (!z->on || t != DD_F64 || z->fixed < 0 || k < 1 || k > OZ2_KCHUNK)
        return 0;
    return z->fixed ? z->fixed : oz2_auto_moduli(k);
}

size_t cpu_slices_bytes(dd_engine *e, dd_dtype t, int64_t vectors, int64_t k)
{
    int nm = slice_moduli(&((cpu_state *)e->impl)->oz, t, k);
    return nm ? oz2_ref_slices_bytes(nm, vectors, k) : 0;
}

int cpu_slices_make(dd_engine *e, int q, int side, int64_t vectors, int64_t k, const void *X,
                    int64_t ld, void *blob, dd_err *err)
{
    (void)q; /* synchronous */
    int nm = slice_moduli(&((cpu_state *)e->impl)->oz, DD_F64, k);
    if (!nm || oz2_ref_slices_make(nm, side, vectors, k, X, ld, blob))
        return dd_fail(err, DD_EFAIL, "slicing %lld %s of length %lld failed (kernel %s)",
                       (long long)vectors, side ? "columns of B" : "rows of A", (long long)k,
                       e->info.kernel);
    return DD_OK;
}

int cpu_slices_gemm(dd_engine *e, int64_t m, int64_t n, int64_t k, const void *a, const void *b,
                    int beta, void *C, int64_t ldc, dd_progress_fn progress, void *parg,
                    dd_err *err)
{
    cpu_state *s = e->impl;
    cpu_oz *z = &s->oz;
    int nm = slice_moduli(z, DD_F64, k), rc = DD_OK;
    if (z->n == z->cap) {
        int64_t cap = z->cap ? 2 * z->cap : 64;
        unsigned char *nmiss = realloc(z->missed, (size_t)cap);
        if (!nmiss)
            return dd_fail(err, DD_ENOMEM, "out of host memory for the sliced multiplies");
        z->missed = nmiss;
        z->cap = cap;
    }
    if (m > 0 && n > 0 && (rc = cpu_time_room(s, err)))
        return rc;
    int missed = 0;
    double t0 = dd_now();
    if (!nm || oz2_ref_slices_gemm(nm, m, n, k, a, b, beta, C, ldc, &missed, NULL, 0))
        return dd_fail(err, DD_EFAIL,
                       "the sliced multiply of %lld×%lld by %lld×%lld was given blobs of "
                       "another shape (kernel %s)",
                       (long long)m, (long long)k, (long long)k, (long long)n, e->info.kernel);
    double dt = dd_now() - t0;
    s->gemm_acc += dt;
    if (m > 0 && n > 0)
        s->times[s->ntimes++] = dt;
    z->missed[z->n++] = (unsigned char)(missed != 0);
    return progress ? progress(parg, err) : DD_OK;
}

int cpu_slices_missed(dd_engine *e, unsigned char *missed, int64_t max, int64_t *count,
                      dd_err *err)
{
    (void)err;
    const cpu_oz *z = &((cpu_state *)e->impl)->oz;
    for (int64_t i = 0; i < max && i < z->n; i++)
        missed[i] = z->missed[i];
    *count = z->n;
    return DD_OK;
}
