/* api_operands.c — the operands of dd_gemm, dd_gemm_device and dd_pgemm
 * (dgemm_dist.h): descriptors checked as PBLAS checks them, each operand's
 * layout as a redistribution sees it (api_redist.h), and whether it can go
 * to work memory with one copy. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "api_impl.h"

int64_t dd_numroc(int64_t n, int64_t nb, int iproc, int isrc, int nprocs)
{
    if (n < 0 || nb < 1 || nprocs < 1 || iproc < 0 || iproc >= nprocs || isrc < 0 || isrc >= nprocs)
        return 0;
    int64_t dist = (iproc - isrc + nprocs) % nprocs, blocks = n / nb;
    int64_t num = blocks / nprocs * nb, extra = blocks % nprocs;
    if (dist < extra)
        num += nb;
    else if (dist == extra)
        num += n % nb;
    return num;
}

dd_status dd_desc_block_cyclic(dd_matrix_desc *d, int64_t m, int64_t n, int64_t mb, int64_t nb,
                               int rsrc, int csrc, int nprow, int npcol, char order, int64_t lld)
{
    if (!d)
        return DD_ERROR_USAGE;
    *d = (dd_matrix_desc){
        DD_LAYOUT_BLOCK_CYCLIC, m, n, mb, nb, rsrc, csrc, lld, nprow, npcol, order};
    int ok = m >= 0 && n >= 0 && mb >= 1 && nb >= 1 && nprow >= 1 && npcol >= 1 && rsrc >= 0 &&
             rsrc < nprow && csrc >= 0 && csrc < npcol && (order == 'R' || order == 'C') &&
             lld >= 1;
    return ok ? DD_SUCCESS : DD_ERROR_USAGE;
}

dd_status dd_desc_block(dd_matrix_desc *d, int64_t m, int64_t n, int nprow, int npcol, int64_t ld)
{
    if (!d)
        return DD_ERROR_USAGE;
    *d = (dd_matrix_desc){DD_LAYOUT_BLOCK, m, n, 1, 1, 0, 0, ld, nprow, npcol, 'R'};
    int ok =
        m >= 0 && n >= 0 && ld >= 1 && ((nprow == 0 && npcol == 0) || (nprow >= 1 && npcol >= 1));
    return ok ? DD_SUCCESS : DD_ERROR_USAGE;
}

void api_work_layout(const gemm_call *g, int which, rd_layout *l)
{
    const dd_grid *gr = &g->ctx->g;
    int64_t R = which == 1 ? g->K : g->M, S = which == 0 ? g->K : g->N;
    memset(l, 0, sizeof *l);
    l->row = (rd_dist){.kind = RD_BLOCK, .np = gr->P, .n = R, .glen = R};
    l->col = (rd_dist){.kind = RD_BLOCK, .np = gr->Q, .n = S, .glen = S};
    l->rs = grid_block(S, gr->Q, gr->q).len;
    l->cs = 1;
    l->order = 'R';
}

/* Stored rows and columns of operand `which` (A 0, B 1, C 2). */
static void stored_dims(const gemm_call *g, int which, int64_t *R, int64_t *S)
{
    int64_t r = which == 1 ? g->K : g->M, s = which == 0 ? g->K : g->N;
    int trans = which == 0 ? g->a.trans : which == 1 ? g->b.trans : 0;
    *R = trans ? s : r;
    *S = trans ? r : s;
}

static int is_trans(char t)
{
    return t == 'T' || t == 't' || t == 'C' || t == 'c';
}

/* 10 numbers of the call, then 3 for each operand and 10 for its descriptor */
_Static_assert(10 + 3 * (3 + 10) <= API_GLOBALS, "api_globals' numbers must fit API_GLOBALS");

int api_globals(const gemm_call *g, double *v)
{
    int n = 0;
    double head[] = {(double)g->M,      (double)g->N,    (double)g->K,  g->alpha,
                     g->beta,           (double)g->ta,   (double)g->tb, (double)g->desc,
                     (double)g->device, (double)g->check};
    for (size_t i = 0; i < sizeof head / sizeof head[0]; i++)
        v[n++] = head[i];
    const api_operand *ops[3] = {&g->a, &g->b, &g->c};
    for (int k = 0; k < 3 && g->desc; k++) {
        const dd_matrix_desc *d = ops[k]->d;
        v[n++] = (double)ops[k]->i;
        v[n++] = (double)ops[k]->j;
        v[n++] = d != NULL;
        if (!d)
            continue;
        double f[] = {d->layout, (double)d->m, (double)d->n, (double)d->mb, (double)d->nb,
                      d->rsrc,   d->csrc,      d->nprow,     d->npcol,      d->order};
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
            v[n++] = f[i];
    }
    return n;
}

/* A bad argument: its PBLAS number and the message. */
__attribute__((format(printf, 4, 5))) static int bad(gemm_call *g, int number, dd_err *err,
                                                     const char *fmt, ...)
{
    g->bad_arg = number;
    char what[DD_ERRLEN - 16];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return dd_fail(err, DD_EUSAGE, "rank %d: %s", g->ctx->rank, what);
}

/* How many of the submatrix's indices along d process `me` holds. */
static int64_t sub_len(const rd_dist *d, int me)
{
    if (me < 0 || d->n == 0)
        return 0;
    if (d->kind == RD_CYCLIC)
        return dd_numroc(d->off + d->n, d->nb, me, d->src, d->np) -
               dd_numroc(d->off, d->nb, me, d->src, d->np);
    dd_range r = grid_block(d->glen, d->np, me);
    int64_t lo = r.start > d->off ? r.start : d->off;
    int64_t hi = r.start + r.len < d->off + d->n ? r.start + r.len : d->off + d->n;
    return hi > lo ? hi - lo : 0;
}

/* The descriptor's fields and its grid against the context.  A field's
 * number is PBLAS's: 100 * pos + its entry in PBLAS's 11-entry internal
 * descriptor (DTYPE_ 1, CTXT_ 2, M_ 3, N_ 4, IMB_ 5, INB_ 6, MB_ 7, NB_ 8,
 * RSRC_ 9, CSRC_ 10, LLD_ 11); the grid stands for CTXT_, and mb, nb are
 * checked first as IMB_, INB_, as PBLAS does. */
static int check_fields(gemm_call *g, const dd_matrix_desc *d, const char *X, int pos, int *P,
                        int *Q, dd_err *err)
{
    if (!d)
        return bad(g, pos, err, "desc%s is NULL", X);
    int cyc = d->layout == DD_LAYOUT_BLOCK_CYCLIC;
    if (!cyc && d->layout != DD_LAYOUT_BLOCK)
        return bad(
            g, pos * 100 + 1, err,
            "desc%s: layout %d is neither DD_LAYOUT_BLOCK (1) nor DD_LAYOUT_BLOCK_CYCLIC (2)", X,
            d->layout);
    *P = d->nprow, *Q = d->npcol;
    if (!cyc && !*P && !*Q)
        *P = g->ctx->g.P, *Q = g->ctx->g.Q;
    if (*P < 1 || *Q < 1 || (int64_t)*P * *Q != g->ctx->size ||
        (d->order != 'R' && d->order != 'C'))
        return bad(g, pos * 100 + 2, err,
                   "desc%s: grid %dx%d, order '%c': the grid must hold the context's %d ranks "
                   "exactly and the order be 'R' or 'C'",
                   X, d->nprow, d->npcol, d->order >= 32 && d->order < 127 ? d->order : '?',
                   g->ctx->size);
    /* PBLAS: m and n at least 1 when sub(X) is not empty (the offsets'
     * bounds are then not checked), at least 0 when it is */
    int empty = X[0] == 'A' ? !g->M || !g->K : X[0] == 'B' ? !g->K || !g->N : !g->M || !g->N;
    int64_t least = empty ? 0 : 1;
    if (d->m < least || d->n < least)
        return bad(g, pos * 100 + (d->m < least ? 3 : 4), err,
                   "desc%s: m = %lld, n = %lld: must be >= %lld%s%s%s", X, (long long)d->m,
                   (long long)d->n, (long long)least, empty ? "" : " (sub(", empty ? "" : X,
                   empty ? "" : ") is not empty)");
    if (cyc && (d->mb < 1 || d->nb < 1))
        return bad(g, pos * 100 + (d->mb < 1 ? 5 : 6), err,
                   "desc%s: block sizes mb = %lld, nb = %lld: must be >= 1", X, (long long)d->mb,
                   (long long)d->nb);
    if (cyc && (d->rsrc < 0 || d->rsrc >= *P))
        return bad(g, pos * 100 + 9, err, "desc%s: rsrc = %d: must be a grid row, 0..%d", X,
                   d->rsrc, *P - 1);
    if (cyc && (d->csrc < 0 || d->csrc >= *Q))
        return bad(g, pos * 100 + 10, err, "desc%s: csrc = %d: must be a grid column, 0..%d", X,
                   d->csrc, *Q - 1);
    return DD_OK;
}

/* A descriptor's operand: fields, LLD_ on this rank, the submatrix inside
 * the matrix, the layout; R×S the stored submatrix. */
static int desc_operand(gemm_call *g, api_operand *o, const char *X, int pos, int64_t R, int64_t S,
                        dd_err *err)
{
    const dd_matrix_desc *d = o->d;
    int P = 0, Q = 0, rc = check_fields(g, d, X, pos, &P, &Q, err);
    if (rc)
        return rc;
    int cyc = d->layout == DD_LAYOUT_BLOCK_CYCLIC;
    rd_layout *l = &o->lay;
    memset(l, 0, sizeof *l);
    l->order = d->order;
    l->row = (rd_dist){cyc ? RD_CYCLIC : RD_BLOCK, P, R, o->i - 1, d->m, d->mb, cyc ? d->rsrc : 0};
    l->col = (rd_dist){cyc ? RD_CYCLIC : RD_BLOCK, Q, S, o->j - 1, d->n, d->nb, cyc ? d->csrc : 0};
    int pr, pc;
    rd_coords(l, g->ctx->rank, &pr, &pc);
    int64_t need = cyc ? dd_numroc(d->m, d->mb, pr, d->rsrc, P) : grid_block(d->n, Q, pc).len;
    need = need > 1 ? need : 1;
    if (d->lld < need)
        return bad(
            g, pos * 100 + 11, err,
            "desc%s: lld = %lld is less than max(1, %lld), the %s here: make it at least %lld", X,
            (long long)d->lld, (long long)need, cyc ? "local array's rows" : "local block's width",
            (long long)need);
    l->rs = cyc ? 1 : d->lld;
    l->cs = cyc ? d->lld : 1;
    if (o->i < 1 || (R > 0 && S > 0 && o->i - 1 + R > d->m))
        return bad(
            g, pos - 2, err,
            "i%c = %lld: the submatrix's %lld rows from there must lie in the %lld rows of %s",
            X[0] + 'a' - 'A', (long long)o->i, (long long)R, (long long)d->m, X);
    if (o->j < 1 || (R > 0 && S > 0 && o->j - 1 + S > d->n))
        return bad(g, pos - 1, err,
                   "j%c = %lld: the submatrix's %lld columns from there must lie in the %lld "
                   "columns of %s",
                   X[0] + 'a' - 'A', (long long)o->j, (long long)S, (long long)d->n, X);
    const dd_grid *gr = &g->ctx->g;
    o->direct = !o->trans && !cyc && P == gr->P && Q == gr->Q && d->order == 'R' && o->i == 1 &&
                o->j == 1 && d->m == R && d->n == S;
    o->ld = d->lld;
    return DD_OK;
}

/* dd_gemm's operand: the stored R×S matrix in the 2-D block layout, pitch ld. */
static int block_operand(gemm_call *g, api_operand *o, const char *X, int pos, int64_t R, int64_t S,
                         dd_err *err)
{
    const dd_grid *gr = &g->ctx->g;
    int64_t w = grid_block(S, gr->Q, gr->q).len;
    if (o->ld < 1 || o->ld < w)
        return bad(g, pos * 100 + 9, err,
                   "ld%c = %lld is less than max(1, %lld), the width of its block of %s (%lld x "
                   "%lld, row-major)",
                   X[0] + 'a' - 'A', (long long)o->ld, (long long)w, X,
                   (long long)grid_block(R, gr->P, gr->p).len, (long long)w);
    memset(&o->lay, 0, sizeof o->lay);
    o->lay.row = (rd_dist){.kind = RD_BLOCK, .np = gr->P, .n = R, .glen = R};
    o->lay.col = (rd_dist){.kind = RD_BLOCK, .np = gr->Q, .n = S, .glen = S};
    o->lay.rs = o->ld;
    o->lay.cs = 1;
    o->lay.order = 'R';
    o->direct = !o->trans;
    return DD_OK;
}

int api_check_operands(gemm_call *g, dd_err *err)
{
    g->a.trans = is_trans(g->ta);
    g->b.trans = is_trans(g->tb);
    api_operand *ops[3] = {&g->a, &g->b, &g->c};
    static const char *names[3] = {"A", "B", "C"};
    static const int pos[3] = {10, 14, 19}; /* DESCA, DESCB, DESCC in pdgemm's list */
    for (int k = 0; k < 3; k++) {
        int64_t R, S;
        stored_dims(g, k, &R, &S);
        api_operand *o = ops[k];
        int rc = g->desc ? desc_operand(g, o, names[k], pos[k], R, S, err)
                         : block_operand(g, o, names[k], pos[k], R, S, err);
        if (rc)
            return rc;
        int pr, pc;
        rd_coords(&o->lay, g->ctx->rank, &pr, &pc);
        int read = k < 2 ? g->alpha != 0 : 1; /* C is written whatever beta is */
        if (!o->p && read && sub_len(&o->lay.row, pr) > 0 && sub_len(&o->lay.col, pc) > 0)
            return bad(g, pos[k] - 3, err, "%s is NULL but this rank holds %lld x %lld of it",
                       names[k], (long long)sub_len(&o->lay.row, pr),
                       (long long)sub_len(&o->lay.col, pc));
    }
    return DD_OK;
}
