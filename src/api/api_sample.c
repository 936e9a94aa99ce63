/* api_sample.c — the check's look at the caller's operands.
 *
 * The residual check (check.c) verifies C against the blocks in work
 * memory, so a fault in how an operand got there — a transpose skipped or
 * applied twice, a redistribution that put an element in the wrong place,
 * a wrong offset or block size — passes it.  So, with info->check, every
 * rank takes samples of the operands as the caller holds them (the corners
 * and centre of its part of each stored submatrix, and seeded random
 * elements), works out from the layouts' definitions (dgemm_dist.h: the
 * 2-D block layout, ScaLAPACK's block-cyclic one, 1-based offsets, the
 * transpose) where each lands in the 2-D block work layout — arithmetic of
 * its own, not the redistribution's (api_redist.c) — and sends it to the
 * rank whose work block holds it, which compares it bit for bit before
 * alpha and beta are applied.  Cost: a few dozen elements per rank and
 * operand, one all-to-all. */
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "api_impl.h"
#include "dd_splitmix.h"

enum { SAMPLE_RANDOM = 9, SAMPLE_MAX = 9 + SAMPLE_RANDOM, SAMPLE_FIELDS = 6 };

/* How one rank holds its local array of a stored matrix. */
typedef struct {
    const char *p;          /* the local array */
    int cyc, colmajor;      /* block-cyclic (local array column-major); else 2-D block, row-major */
    int64_t lr, lc, ld;     /* local rows, columns; elements between lines */
    int64_t i0, j0, R, S;   /* the stored submatrix: rows [i0, i0 + R), columns [j0, j0 + S) */
    int64_t mb, nb;         /* block-cyclic: block sizes, */
    int pr, pc, P, Q, rs, cs; /* this rank's grid place, the grid, the first blocks' places */
    int64_t r0, c0;         /* 2-D block: the first whole-matrix row and column held here */
} view;

/* Whole-matrix index of local index l along rows (row = 1) or columns. */
static int64_t whole(const view *v, int row, int64_t l)
{
    if (!v->cyc)
        return (row ? v->r0 : v->c0) + l;
    int64_t b = row ? v->mb : v->nb;
    int me = row ? v->pr : v->pc, src = row ? v->rs : v->cs, np = row ? v->P : v->Q;
    return (l / b * np + (me - src + np) % np) * b + l % b;
}

/* The first local index whose whole index is >= g (local indices map to
 * increasing whole indices); n when none. */
static int64_t first_at(const view *v, int row, int64_t n, int64_t g)
{
    int64_t lo = 0, hi = n;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;
        if (whole(v, row, mid) < g)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* Whether operand `which` is stored transposed, from the call's own
 * transa and transb (validate() made them 'N', 'T' or 'C'), not from the
 * operand checks' reading of them. */
static int stored_trans(const gemm_call *g, int which)
{
    return which == 0 ? g->ta != 'N' : which == 1 ? g->tb != 'N' : 0;
}

/* Operand `which` (A 0, B 1, C 2) as this rank holds it. */
static view view_of(const gemm_call *g, int which)
{
    const api_operand *o = which == 0 ? &g->a : which == 1 ? &g->b : &g->c;
    const dd_context *ctx = g->ctx;
    int64_t r = which == 1 ? g->K : g->M, s = which == 0 ? g->K : g->N;
    int trans = stored_trans(g, which);
    view v;
    memset(&v, 0, sizeof v);
    v.p = o->p;
    v.R = trans ? s : r;
    v.S = trans ? r : s;
    if (!g->desc) { /* dd_gemm: the stored matrix in the 2-D block layout, pitch ld */
        dd_range rr = grid_block(v.R, ctx->g.P, ctx->g.p), cr = grid_block(v.S, ctx->g.Q, ctx->g.q);
        v.r0 = rr.start, v.lr = rr.len, v.c0 = cr.start, v.lc = cr.len, v.ld = o->ld;
        return v;
    }
    const dd_matrix_desc *d = o->d;
    v.P = d->nprow, v.Q = d->npcol;
    if (d->layout == DD_LAYOUT_BLOCK && !v.P && !v.Q)
        v.P = ctx->g.P, v.Q = ctx->g.Q;
    v.pr = d->order == 'R' ? ctx->rank / v.Q : ctx->rank % v.P;
    v.pc = d->order == 'R' ? ctx->rank % v.Q : ctx->rank / v.P;
    v.i0 = o->i - 1, v.j0 = o->j - 1, v.ld = d->lld;
    if (d->layout == DD_LAYOUT_BLOCK_CYCLIC) {
        v.cyc = v.colmajor = 1;
        v.mb = d->mb, v.nb = d->nb, v.rs = d->rsrc, v.cs = d->csrc;
        v.lr = dd_numroc(d->m, d->mb, v.pr, d->rsrc, v.P);
        v.lc = dd_numroc(d->n, d->nb, v.pc, d->csrc, v.Q);
    } else {
        dd_range rr = grid_block(d->m, v.P, v.pr), cr = grid_block(d->n, v.Q, v.pc);
        v.r0 = rr.start, v.lr = rr.len, v.c0 = cr.start, v.lc = cr.len;
    }
    return v;
}

/* One sample: the work block's owner and offset of local element (li, lj). */
static int to_work(const gemm_call *g, int which, const view *v, int64_t li, int64_t lj,
                   int64_t *rec)
{
    const dd_grid *gr = &g->ctx->g;
    int trans = stored_trans(g, which);
    int64_t si = whole(v, 1, li) - v->i0, sj = whole(v, 0, lj) - v->j0;
    int64_t oi = trans ? sj : si, oj = trans ? si : sj; /* the element of op(X) */
    int64_t R = which == 1 ? g->K : g->M, S = which == 0 ? g->K : g->N;
    int pr = grid_owner(R, gr->P, oi), pc = grid_owner(S, gr->Q, oj);
    dd_range rb = grid_block(R, gr->P, pr), cb = grid_block(S, gr->Q, pc);
    rec[0] = which;
    rec[1] = (oi - rb.start) * cb.len + (oj - cb.start);
    rec[3] = oi, rec[4] = oj;
    return pr * gr->Q + pc;
}

/* Local element (li, lj)'s bits (es bytes, the rest zero) into rec[2]
 * and, for a 16-byte element, its second half into rec[5]. */
static int caller_bits(const gemm_call *g, const view *v, int64_t li, int64_t lj, int64_t *rec,
                       dd_err *err)
{
    size_t es = dd_elsize(g->t);
    int64_t at = v->colmajor ? lj * v->ld + li : li * v->ld + lj;
    const char *src = v->p + (size_t)at * es;
    int64_t bits[2] = {0, 0};
    int rc = DD_OK;
    if (g->device) {
        dd_engine *e = &g->ctx->eng;
        rc = e->ops->download(e, bits, src, es, err);
    } else {
        memcpy(bits, src, es);
    }
    rec[2] = bits[0];
    rec[5] = bits[1];
    return rc;
}

/* One element's value as text: "0.5", or "(0.5, -1)" for a complex one. */
static void show_elem(dd_dtype t, const int64_t bits[2], char *buf, size_t len)
{
    double v[2] = {0, 0};
    if (dd_dtype_real(t) == DD_F32) {
        float f[2];
        memcpy(f, bits, sizeof f);
        v[0] = f[0], v[1] = f[1];
    } else {
        memcpy(v, bits, sizeof v);
    }
    if (dd_dtype_complex(t))
        snprintf(buf, len, "(%.17g, %.17g)", v[0], v[1]);
    else
        snprintf(buf, len, "%.17g", v[0]);
}

/* This rank's samples of operand `which` appended to rec (SAMPLE_FIELDS
 * each) with their destination ranks; returns how many. */
static int take(const gemm_call *g, int which, int64_t *rec, int *dest, int *rc, dd_err *err)
{
    view v = view_of(g, which);
    if (v.R == 0 || v.S == 0 || !v.p)
        return 0;
    /* local rows and columns inside the submatrix: a contiguous run of each */
    int64_t r0 = first_at(&v, 1, v.lr, v.i0), r1 = first_at(&v, 1, v.lr, v.i0 + v.R);
    int64_t c0 = first_at(&v, 0, v.lc, v.j0), c1 = first_at(&v, 0, v.lc, v.j0 + v.S);
    if (r0 >= r1 || c0 >= c1)
        return 0;
    int64_t rows[SAMPLE_MAX], cols[SAMPLE_MAX];
    int n = 0;
    int64_t rr[3] = {r0, r0 + (r1 - r0) / 2, r1 - 1}, cc[3] = {c0, c0 + (c1 - c0) / 2, c1 - 1};
    for (int a = 0; a < 3; a++)
        for (int b = 0; b < 3; b++)
            rows[n] = rr[a], cols[n++] = cc[b];
    uint64_t key = 0x5a3d1e00ULL + (uint64_t)g->ctx->rank * 3 + (uint64_t)which;
    for (int s = 0; s < SAMPLE_RANDOM; s++) {
        uint64_t x = dd_splitmix64(key * 64 + (uint64_t)s);
        rows[n] = r0 + (int64_t)(x % (uint64_t)(r1 - r0));
        cols[n++] = c0 + (int64_t)((x >> 32) % (uint64_t)(c1 - c0));
    }
    for (int s = 0; s < n && !*rc; s++) {
        dest[s] = to_work(g, which, &v, rows[s], cols[s], rec + s * SAMPLE_FIELDS);
        *rc = caller_bits(g, &v, rows[s], cols[s], rec + s * SAMPLE_FIELDS, err);
    }
    return n;
}

/* The samples this rank received against its work blocks; the first that
 * differs into err (DD_ECHECK). */
static int compare(const gemm_call *g, const int64_t *rec, int n, dd_err *err)
{
    dd_engine *e = &g->ctx->eng;
    const dd_summa *s = &g->s;
    const void *work[3] = {s->A, s->B, s->C};
    static const char *name[3] = {"op(A)", "op(B)", "C's input"};
    size_t es = dd_elsize(g->t);
    for (int i = 0; i < n; i++) {
        const int64_t *x = rec + i * SAMPLE_FIELDS;
        int64_t have[2] = {0, 0}, want[2] = {x[2], x[5]};
        const char *at = (const char *)work[x[0]] + (size_t)x[1] * es;
        int rc = e->ops->work_is_host ? (memcpy(have, at, es), DD_OK)
                                      : e->ops->download(e, have, at, es, err);
        if (rc)
            return rc;
        if (have[0] == want[0] && have[1] == want[1])
            continue;
        char got_s[96], want_s[96];
        show_elem(g->t, have, got_s, sizeof got_s);
        show_elem(g->t, want, want_s, sizeof want_s);
        return dd_fail(err, DD_ECHECK,
                       "%s(%lld, %lld) in work memory is %s, the caller's array holds %s "
                       "there: the operand did not arrive as the arguments describe it",
                       name[x[0]], (long long)x[3], (long long)x[4], got_s, want_s);
    }
    return DD_OK;
}

int api_sample_operands(gemm_call *g, dd_err *err)
{
    dd_context *ctx = g->ctx;
    int np = ctx->size, rc = DD_OK, n = 0, total = 0;
    int64_t rec[3 * SAMPLE_MAX * SAMPLE_FIELDS];
    int dest[3 * SAMPLE_MAX];
    for (int k = 0; k < 3; k++)
        if (k < 2 ? !api_alpha0(g) : !api_beta0(g))
            n += take(g, k, rec + n * SAMPLE_FIELDS, dest + n, &rc, err);
    /* counts and displacements sent and received, and where each goes */
    int *cnt = calloc((size_t)np * 5, sizeof(int));
    int64_t *sorted = malloc(sizeof rec), *got = NULL;
    if (!rc && (!cnt || !sorted))
        rc = dd_fail(err, DD_ENOMEM, "out of host memory for the operands' samples");
    if (!rc) {
        int *sc = cnt, *sd = cnt + 2 * np, *fill = cnt + 4 * np;
        for (int s = 0; s < n; s++)
            sc[dest[s]] += SAMPLE_FIELDS;
        for (int r = 1; r < np; r++)
            sd[r] = sd[r - 1] + sc[r - 1];
        memcpy(fill, sd, sizeof(int) * (size_t)np);
        for (int s = 0; s < n; s++) {
            memcpy(sorted + fill[dest[s]], rec + s * SAMPLE_FIELDS, sizeof(int64_t) * SAMPLE_FIELDS);
            fill[dest[s]] += SAMPLE_FIELDS;
        }
    }
    /* agreed before each collective, so every rank reaches the same ones */
    if (!(rc = dd_agree(ctx->world, rc, err)))
        rc = dd_agree(ctx->world,
                      dd_mpi_check(MPI_Alltoall(cnt, 1, MPI_INT, cnt + np, 1, MPI_INT, ctx->world),
                                   "MPI_Alltoall", err),
                      err);
    if (!rc) {
        for (int r = 0; r < np; r++)
            cnt[3 * np + r] = total, total += cnt[np + r];
        if (!(got = malloc(sizeof(int64_t) * (size_t)(total ? total : 1))))
            rc = dd_fail(err, DD_ENOMEM, "out of host memory for the operands' samples");
        rc = dd_agree(ctx->world, rc, err);
    }
    if (!rc)
        rc = dd_agree(ctx->world,
                      dd_mpi_check(MPI_Alltoallv(sorted, cnt, cnt + 2 * np, MPI_INT64_T, got,
                                                 cnt + np, cnt + 3 * np, MPI_INT64_T, ctx->world),
                                   "MPI_Alltoallv", err),
                      err);
    if (!rc)
        rc = dd_agree(ctx->world, compare(g, got, total / SAMPLE_FIELDS, err), err);
    free(got);
    free(sorted);
    free(cnt);
    return rc;
}
