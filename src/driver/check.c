/* check.c — the scaled residual (check.h). */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "agree.h"
#include "check.h"
#include "rng.h"

static double elem(const void *p, dd_dtype t, int64_t i)
{
    return t == DD_F64 ? ((const double *)p)[i] : (double)((const float *)p)[i];
}

/* out[i] = Σ_j M[i,j] v[j] (rows×cols), and absrow[i] = Σ_j |M[i,j]| if asked. */
static void matvec(const void *M, dd_dtype t, int64_t rows, int64_t cols, const double *v,
                   double *out, double *absrow)
{
    for (int64_t i = 0; i < rows; i++) {
        double s = 0, a = 0;
        for (int64_t j = 0; j < cols; j++) {
            double m = elem(M, t, i * cols + j);
            s += m * v[j];
            a += fabs(m);
        }
        out[i] = s;
        if (absrow)
            absrow[i] = a;
    }
}

int check_product(MPI_Comm world, MPI_Comm row, const dd_grid *g, dd_dtype t, int64_t M, int64_t N,
                  int64_t K, const void *A, const void *B, const void *C, uint64_t seed,
                  dd_check_result *res, dd_err *err)
{
    dd_range rm = grid_block(M, g->P, g->p), rn = grid_block(N, g->Q, g->q);
    dd_range rkq = grid_block(K, g->Q, g->q), rkp = grid_block(K, g->P, g->p);
    int64_t Mp = rm.len, Nq = rn.len;
    double *x = malloc(sizeof(double) * (size_t)(Nq + 1));
    double *w = calloc((size_t)K, sizeof(double));
    double *bx = malloc(sizeof(double) * (size_t)(rkp.len + 1));
    double *babs = malloc(sizeof(double) * (size_t)(rkp.len + 1));
    double *y = malloc(sizeof(double) * (size_t)(Mp + 1));
    double *z = malloc(sizeof(double) * (size_t)(Mp + 1));
    double *aabs = malloc(sizeof(double) * (size_t)(Mp + 1));
    double *tmp = malloc(sizeof(double) * (size_t)(Mp + rkp.len + 1));
    int rc = DD_OK;
    if (!x || !w || !bx || !babs || !y || !z || !aabs || !tmp) {
        rc = dd_fail(err, DD_ENOMEM, "out of host memory for the check (needs %.1f MiB)",
                     (double)(K + 4 * Mp + 2 * rkp.len + Nq) * 8 / (1 << 20));
    }
    if ((rc = dd_agree(world, rc, err)))
        goto out;
    double xmax = 0;
    for (int64_t j = 0; j < Nq; j++) {
        x[j] = rng_value(seed, RNG_TAG_X, (uint64_t)(rn.start + j));
        xmax = fmax(xmax, fabs(x[j]));
    }
    /* y = C x, summed along my grid row */
    matvec(C, t, Mp, Nq, x, tmp, NULL);
    MPI_Allreduce(tmp, y, (int)Mp, MPI_DOUBLE, MPI_SUM, row);
    /* B x: my rows of K, summed along the row, then spread to everyone */
    matvec(B, t, rkp.len, Nq, x, tmp, babs);
    MPI_Allreduce(tmp, bx, (int)rkp.len, MPI_DOUBLE, MPI_SUM, row);
    double *babs_row = tmp + Mp; /* reuse: |B| row sums along the grid row */
    MPI_Allreduce(babs, babs_row, (int)rkp.len, MPI_DOUBLE, MPI_SUM, row);
    double bnorm = 0;
    for (int64_t i = 0; i < rkp.len; i++)
        bnorm = fmax(bnorm, babs_row[i]);
    if (g->q == 0)
        for (int64_t i = 0; i < rkp.len; i++)
            w[rkp.start + i] = bx[i];
    MPI_Allreduce(MPI_IN_PLACE, w, (int)K, MPI_DOUBLE, MPI_SUM, world);
    /* z = A (B x) */
    matvec(A, t, Mp, rkq.len, w + rkq.start, tmp, aabs);
    MPI_Allreduce(tmp, z, (int)Mp, MPI_DOUBLE, MPI_SUM, row);
    MPI_Allreduce(aabs, tmp, (int)Mp, MPI_DOUBLE, MPI_SUM, row);
    double anorm = 0, diff = 0;
    int bad = 0;
    for (int64_t i = 0; i < Mp; i++) {
        anorm = fmax(anorm, tmp[i]);
        double d = fabs(y[i] - z[i]);
        if (!isfinite(d) || !isfinite(tmp[i]))
            bad = 1;
        diff = fmax(diff, d);
    }
    for (int64_t i = 0; i < rkp.len; i++)
        if (!isfinite(babs_row[i]))
            bad = 1;
    double loc[4] = {diff, anorm, bnorm, xmax}, glob[4];
    MPI_Allreduce(loc, glob, 4, MPI_DOUBLE, MPI_MAX, world);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_LOR, world);
    double eps = t == DD_F64 ? DBL_EPSILON / 2 : FLT_EPSILON / 2;
    double denom = eps * (double)K * glob[1] * glob[2] * glob[3];
    if (bad)
        res->residual = NAN;
    else if (glob[0] == 0)
        res->residual = 0;
    else
        res->residual = denom > 0 ? glob[0] / denom : INFINITY;
    res->passed = isfinite(res->residual) && res->residual < DD_CHECK_THRESHOLD;
out:
    free(x);
    free(w);
    free(bx);
    free(babs);
    free(y);
    free(z);
    free(aabs);
    free(tmp);
    return rc;
}

void check_line(const dd_check_result *r, char *buf, size_t n)
{
    snprintf(buf, n,
             "||C x - A(B x)||_oo / (eps * k * ||A||_oo * ||B||_oo * ||x||_oo) = %.1e ...... %s",
             r->residual, r->passed ? "PASSED" : "FAILED");
}
