/* check.c — the scaled residual (check.h). */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "check.h"
#include "engine.h"
#include "rng.h"

/* One check: the inputs, my blocks' ranges and the work buffers. */
typedef struct {
    MPI_Comm world, row;
    const dd_grid *g;
    dd_engine *e; /* where A, B, C live: the scans and products run there */
    dd_dtype t;
    int nc; /* components of an element and of the vectors: 1 real, 2 complex */
    int64_t K;
    const void *A, *B, *C;  /* work memory */
    const check_cterm *cin; /* beta·C_in's part, or NULL (beta = 0) */
    uint64_t seed;
    dd_range rm, rn, rkq, rkp;
    /* vectors of nc components an entry (complex: (re, im) pairs) */
    double *x;  /* Nq: my slice of x */
    double *w;  /* K: B x, everywhere */
    double *kb; /* Kp: my rows of B x, then Kp real |B| row sums */
    double *mb; /* Mp each: my rows of C x, A (B x), |A| row sums (real), then cin's w and
                 * |C_in| sums (real) */
} chk;

/* The scaling exponents never leave this range, so 2^-ea, 2^-eb and each
 * half of 2^-(ea+eb) are normal doubles. */
#define CHK_EMAX 1000

/* The binary exponent e of mx (mx = f·2^e, f in [0.5, 1)), kept within
 * ±CHK_EMAX; 0 for mx = 0. */
static int scale_exp(double mx)
{
    int e = 0;
    if (mx > 0)
        frexp(mx, &e);
    return e < -CHK_EMAX ? -CHK_EMAX : e > CHK_EMAX ? CHK_EMAX : e;
}

/* 2^-e as two factors that scale the same way, each a normal double, for
 * |e| <= 2·CHK_EMAX: v·f[0]·f[1] is v·2^-e exactly (no spurious overflow;
 * only far-below-scale values can underflow). */
static void pow2_split(int e, double f[2])
{
    int h = e / 2;
    f[0] = ldexp(1.0, -h);
    f[1] = ldexp(1.0, -(e - h));
}

/* out[i] = Σ_j M'[i,j] v[j] and, if asked, absrow[i] = Σ_j |M'[i,j]|, with
 * M' = M·f[0]·f[1] (rows×cols, work memory), on the engine; *nonfinite = 1
 * when M holds NaN or Inf.  Local: the caller agrees. */
static int matvec(const chk *c, const void *M, int64_t rows, int64_t cols, const double f[2],
                  const double *v, double *out, double *absrow, int *nonfinite, dd_err *err)
{
    return c->e->ops->matvec(c->e, c->t, M, rows, cols, f, v, out, absrow, nonfinite, err);
}

int check_allreduce(const void *send, double *recv, int64_t n, MPI_Op op, MPI_Comm comm,
                    int64_t chunk, dd_err *err)
{
    if (chunk <= 0 || chunk > INT_MAX)
        chunk = INT_MAX;
    int rc = DD_OK;
    for (int64_t off = 0; off < n; off += chunk) {
        int len = (int)(n - off < chunk ? n - off : chunk);
        const void *s =
            send == MPI_IN_PLACE ? MPI_IN_PLACE : (const void *)((const double *)send + off);
        int r = dd_mpi_check(MPI_Allreduce(s, recv + off, len, MPI_DOUBLE, op, comm),
                             "MPI_Allreduce in the check", err);
        if (rc == DD_OK)
            rc = r;
    }
    return rc;
}

/* An in-place reduction over comm, its failure agreed over world. */
static int reduce(const chk *c, double *buf, int64_t n, MPI_Op op, MPI_Comm comm, dd_err *err)
{
    return dd_agree(c->world, check_allreduce(MPI_IN_PLACE, buf, n, op, comm, 0, err), err);
}

/* The global max|a|, max|b| (finite elements) and whether A, B hold NaN or
 * Inf: out[0..4). */
static int input_scan(const chk *c, double out[4], dd_err *err)
{
    int nfa = 0, nfb = 0;
    const dd_engine_ops *o = c->e->ops;
    out[0] = out[1] = 0;
    int rc = o->absmax(c->e, c->t, c->A, c->rm.len * c->rkq.len, &out[0], &nfa, err);
    if (!rc)
        rc = o->absmax(c->e, c->t, c->B, c->rkp.len * c->rn.len, &out[1], &nfb, err);
    if ((rc = dd_agree(c->world, rc, err)))
        return rc;
    out[2] = nfa;
    out[3] = nfb;
    return reduce(c, out, 4, MPI_MAX, c->world, err);
}

/* x: my slice (Nq) of the check's random vector; returns max |x_j|.
 * Complex (nc = 2): x_j = the generator's values 2j and 2j + 1. */
static double draw_x(uint64_t seed, dd_range rn, int nc, double *x)
{
    double xmax = 0;
    for (int64_t j = 0; j < rn.len; j++) {
        if (nc == 1) {
            x[j] = rng_value(seed, RNG_TAG_X, (uint64_t)(rn.start + j));
            xmax = fmax(xmax, fabs(x[j]));
            continue;
        }
        uint64_t c = 2 * (uint64_t)(rn.start + j);
        x[2 * j] = rng_value(seed, RNG_TAG_X, c);
        x[2 * j + 1] = rng_value(seed, RNG_TAG_X, c + 1);
        xmax = fmax(xmax, hypot(x[2 * j], x[2 * j + 1]));
    }
    return xmax;
}

/* w = B' x on every rank (length K) and ||B'||_oo: my rows of K, summed
 * along my grid row, then one copy of each grid row's slice spread to all. */
static int b_times_x(const chk *c, const double fb[2], double *bnorm, dd_err *err)
{
    int64_t Kp = c->rkp.len, nc = c->nc;
    int nfab = 0; /* A and B are finite here (input_scan): nfab is moot */
    int rc = matvec(c, c->B, Kp, c->rn.len, fb, c->x, c->kb, c->kb + nc * Kp, &nfab, err);
    if ((rc = dd_agree(c->world, rc, err)) ||
        (rc = reduce(c, c->kb, (nc + 1) * Kp, MPI_SUM, c->row, err)))
        return rc;
    *bnorm = 0;
    for (int64_t i = 0; i < Kp; i++)
        *bnorm = fmax(*bnorm, c->kb[nc * Kp + i]);
    if (c->g->q == 0)
        for (int64_t i = 0; i < nc * Kp; i++)
            c->w[nc * c->rkp.start + i] = c->kb[i];
    return reduce(c, c->w, nc * c->K, MPI_SUM, c->world, err);
}

/* The scaled products, C-type quantities in units of 2^e (A' B' in units
 * of 2^(ea+eb), so times sab = 2^(ea+eb-e) <= 1; beta·C_in in units of
 * 2^cin->e, times 2^(cin->e - e) <= 1).  glob[0..7): max|y'−z'| over
 * finite differences, ||A'||_oo, ||B'||_oo, ||x||_oo, C holds NaN or Inf,
 * some y'−z' not finite, ||(beta·C_in)'||_oo. */
static int products(const chk *c, int ea, int eb, int e, double glob[7], dd_err *err)
{
    int64_t Mp = c->rm.len, Nq = c->rn.len, nc = c->nc;
    double fa[2], fb[2], fc[2], bnorm = 0;
    pow2_split(ea, fa);
    pow2_split(eb, fb);
    pow2_split(e, fc);
    double xmax = draw_x(c->seed, c->rn, c->nc, c->x);
    int rc = b_times_x(c, fb, &bnorm, err);
    if (rc)
        return rc;
    /* y' = C' x, z' = A' (B' x), |A'| row sums: summed along my grid row */
    int nfc = 0, nfab = 0;
    /* mb: y' (nc·Mp), z' (nc·Mp), |A'| (Mp), cin's w (nc·Mp), |C_in'| (Mp) */
    double *y = c->mb, *z = y + nc * Mp, *as = z + nc * Mp, *cw = as + Mp, *cs = cw + nc * Mp;
    rc = matvec(c, c->C, Mp, Nq, fc, c->x, y, NULL, &nfc, err);
    if (!rc)
        rc = matvec(c, c->A, Mp, c->rkq.len, fa, c->w + nc * c->rkq.start, z, as, &nfab, err);
    for (int64_t i = 0; i < nc * Mp; i++)
        cw[i] = c->cin ? c->cin->w[i] : 0;
    for (int64_t i = 0; i < Mp; i++)
        cs[i] = c->cin ? c->cin->abs[i] : 0;
    if ((rc = dd_agree(c->world, rc, err)) ||
        (rc = reduce(c, c->mb, (3 * nc + 2) * Mp, MPI_SUM, c->row, err)))
        return rc;
    double sab = ldexp(1.0, ea + eb - e), sc = c->cin ? ldexp(1.0, c->cin->e - e) : 0;
    double diff = 0, anorm = 0, cnorm = 0, ovf = 0;
    for (int64_t i = 0; i < Mp; i++) {
        double d = fabs(y[nc * i] - (z[nc * i] * sab + cw[nc * i] * sc));
        if (nc == 2) /* the modulus of the complex difference */
            d = hypot(d, y[2 * i + 1] - (z[2 * i + 1] * sab + cw[2 * i + 1] * sc));
        if (isfinite(d))
            diff = fmax(diff, d);
        else
            ovf = 1;
        anorm = fmax(anorm, as[i]);
        cnorm = fmax(cnorm, cs[i] * sc);
    }
    double mine[7] = {diff, anorm, bnorm, xmax, nfc, ovf, cnorm};
    memcpy(glob, mine, sizeof mine);
    return reduce(c, glob, 7, MPI_MAX, c->world, err);
}

/* The verdict from products()' figures; sab = 2^(ea+eb-e) as there. */
static void verdict(const double glob[7], double sab, dd_dtype t, int64_t K, check_result *res)
{
    double eps = dd_dtype_real(t) == DD_F64 ? DBL_EPSILON / 2 : FLT_EPSILON / 2;
    double denom = eps * ((double)K * glob[1] * glob[2] * sab + glob[6]) * glob[3];
    res->why_not = NULL;
    if (glob[4] != 0) {
        res->why_not = "C holds NaN or Inf";
        res->residual = NAN;
    } else if (glob[5] != 0) {
        res->residual = INFINITY; /* |y - z| beyond the double range, even scaled */
    } else if (glob[0] == 0) {
        res->residual = 0;
    } else if (!isfinite(denom)) {
        res->why_not = "the norms overflow even scaled"; /* cannot happen: see check.h */
        res->residual = NAN;
    } else {
        res->residual = denom > 0 ? glob[0] / denom : INFINITY; /* A, B or x zero, C not */
    }
    res->passed = !res->why_not && isfinite(res->residual) && res->residual < DD_CHECK_THRESHOLD;
}

static int scaled_residual(const chk *c, check_result *res, dd_err *err)
{
    double in[4], glob[7];
    int rc = input_scan(c, in, err);
    if (rc)
        return rc;
    int cbad = c->cin && c->cin->nonfinite;
    if (in[2] != 0 || in[3] != 0 || cbad) { /* the same on every rank: in[] is global */
        res->why_not = in[2] != 0 && in[3] != 0 ? "A and B hold NaN or Inf"
                       : in[2] != 0             ? "A holds NaN or Inf"
                       : in[3] != 0             ? "B holds NaN or Inf"
                                                : "C's input holds NaN or Inf";
        res->residual = NAN;
        res->passed = 0;
        return DD_OK;
    }
    int ea = scale_exp(in[0]), eb = scale_exp(in[1]);
    int e = c->cin && c->cin->e > ea + eb ? c->cin->e : ea + eb;
    if ((rc = products(c, ea, eb, e, glob, err)))
        return rc;
    verdict(glob, ldexp(1.0, ea + eb - e), c->t, c->K, res);
    return DD_OK;
}

int check_product(MPI_Comm world, MPI_Comm row, const dd_grid *g, dd_engine *e, dd_dtype t,
                  int64_t M, int64_t N, int64_t K, const void *A, const void *B, const void *C,
                  const check_cterm *cin, uint64_t seed, check_result *res, dd_err *err)
{
    chk c = {.world = world,
             .row = row,
             .g = g,
             .e = e,
             .t = t,
             .nc = dd_dtype_complex(t) ? 2 : 1,
             .K = K,
             .A = A,
             .B = B,
             .C = C,
             .cin = cin,
             .seed = seed};
    c.rm = grid_block(M, g->P, g->p);
    c.rn = grid_block(N, g->Q, g->q);
    c.rkq = grid_block(K, g->Q, g->q);
    c.rkp = grid_block(K, g->P, g->p);
    int64_t Mp = c.rm.len, Nq = c.rn.len, Kp = c.rkp.len, nc = c.nc;
    c.x = malloc(sizeof(double) * (size_t)(nc * Nq + 1));
    c.w = calloc((size_t)(nc * K) + 1, sizeof(double));
    c.kb = malloc(sizeof(double) * (size_t)((nc + 1) * Kp + 1));
    c.mb = malloc(sizeof(double) * (size_t)((3 * nc + 2) * Mp + 1));
    int rc = DD_OK;
    if (!c.x || !c.w || !c.kb || !c.mb)
        rc = dd_fail(err, DD_ENOMEM, "out of host memory for the check (needs %.1f MiB)",
                     (double)(nc * K + (3 * nc + 2) * Mp + (nc + 1) * Kp + nc * Nq) * 8 /
                         (1 << 20));
    res->residual = NAN;
    res->passed = 0;
    res->why_not = NULL;
    if (!(rc = dd_agree(world, rc, err)))
        rc = scaled_residual(&c, res, err);
    if (rc)
        res->why_not = "the check did not complete";
    free(c.x);
    free(c.w);
    free(c.kb);
    free(c.mb);
    return rc;
}

void check_cterm_free(check_cterm *ct)
{
    free(ct->w);
    free(ct->abs);
    memset(ct, 0, sizeof *ct);
}

/* max |beta·C_in| and NaN/Inf over all ranks: the scale of w. */
static int cin_scale(MPI_Comm world, dd_engine *e, dd_dtype t, const void *C, int64_t n,
                     check_cterm *ct, dd_err *err)
{
    double mx[2] = {0, 0};
    int nf = 0;
    int rc = e->ops->absmax(e, t, C, n, &mx[0], &nf, err);
    mx[1] = nf;
    if ((rc = dd_agree(world, rc, err)) ||
        (rc = dd_agree(world, check_allreduce(MPI_IN_PLACE, mx, 2, MPI_MAX, world, 0, err), err)))
        return rc;
    ct->e = scale_exp(mx[0]);
    ct->nonfinite = mx[1] != 0;
    return DD_OK;
}

int check_c_input(MPI_Comm world, const dd_grid *g, dd_engine *e, dd_dtype t, int64_t M, int64_t N,
                  const void *C, uint64_t seed, check_cterm *ct, dd_err *err)
{
    dd_range rm = grid_block(M, g->P, g->p), rn = grid_block(N, g->Q, g->q);
    int nc = dd_dtype_complex(t) ? 2 : 1;
    memset(ct, 0, sizeof *ct);
    ct->rows = rm.len;
    ct->w = calloc((size_t)(nc * rm.len) + 1, sizeof(double));
    ct->abs = calloc((size_t)rm.len + 1, sizeof(double));
    double *x = malloc(sizeof(double) * (size_t)(nc * rn.len + 1));
    int rc =
        ct->w && ct->abs && x ? DD_OK : dd_fail(err, DD_ENOMEM, "out of host memory for the check");
    if (!(rc = dd_agree(world, rc, err)) &&
        !(rc = cin_scale(world, e, t, C, rm.len * rn.len, ct, err))) {
        double f[2];
        int nf = 0;
        pow2_split(ct->e, f);
        draw_x(seed, rn, nc, x);
        rc = dd_agree(world,
                      e->ops->matvec(e, t, C, rm.len, rn.len, f, x, ct->w, ct->abs, &nf, err), err);
    }
    free(x);
    if (rc)
        check_cterm_free(ct);
    return rc;
}

void check_line(const check_result *r, char *buf, size_t n)
{
    static const char head[] = "||C x - A(B x)||_oo / (eps * k * ||A||_oo * ||B||_oo * ||x||_oo) =";
    if (!buf || !n) /* nowhere to write */
        return;
    if (!r) /* no result: a line that cannot be read as PASSED */
        snprintf(buf, n, "%s not meaningful (no check result: NULL) ...... FAILED", head);
    else if (r->why_not)
        snprintf(buf, n, "%s not meaningful (%s) ...... FAILED", head, r->why_not);
    else
        snprintf(buf, n, "%s %.1e ...... %s", head, r->residual, r->passed ? "PASSED" : "FAILED");
}
