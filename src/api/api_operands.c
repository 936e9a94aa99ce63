/* api_operands.c — the operands of dd_gemm, dd_gemm_device and dd_pgemm
 * (dgemm_dist.h): descriptors checked as PBLAS checks them, each operand's
 * layout as a redistribution sees it (api_redist.h), and whether it can go
 * to work memory with one copy. */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api_impl.h"

int api_span_fits(int64_t lines, int64_t len, int64_t ld, size_t es)
{
    int64_t n;
    if (lines <= 0 || len <= 0)
        return 1;
    if (__builtin_mul_overflow(lines - 1, ld, &n) || __builtin_add_overflow(n, len, &n) ||
        __builtin_mul_overflow(n, (int64_t)es, &n))
        return 0;
    return (uint64_t)n <= (uint64_t)PTRDIFF_MAX;
}

int64_t dd_numroc(int64_t n, int64_t nb, int iproc, int isrc, int nprocs)
{
    if (n < 0 || nb < 1 || nprocs < 1 || iproc < 0 || iproc >= nprocs || isrc < 0 || isrc >= nprocs)
        return 0;
    /* in 64 bits: iproc - isrc + nprocs exceeds an int for grids past 2^30 */
    int64_t dist = ((int64_t)iproc - isrc + nprocs) % nprocs, blocks = n / nb;
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
    /* the largest local array (the first process's, rsrc and csrc): its
     * columns lld apart must be addressable at all (one byte each at least) */
    ok = ok && api_span_fits(dd_numroc(n, nb, csrc, csrc, npcol),
                             dd_numroc(m, mb, rsrc, rsrc, nprow), lld, 1);
    return ok ? DD_SUCCESS : DD_ERROR_USAGE;
}

dd_status dd_desc_block(dd_matrix_desc *d, int64_t m, int64_t n, int nprow, int npcol, int64_t ld)
{
    if (!d)
        return DD_ERROR_USAGE;
    *d = (dd_matrix_desc){DD_LAYOUT_BLOCK, m, n, 1, 1, 0, 0, ld, nprow, npcol, 'R'};
    int ok =
        m >= 0 && n >= 0 && ld >= 1 && ((nprow == 0 && npcol == 0) || (nprow >= 1 && npcol >= 1));
    /* the largest block (the first's) addressable; on the context's grid
     * (0 x 0) the call checks it, knowing the grid */
    ok = ok && (nprow == 0 ||
                api_span_fits(grid_block(m, nprow, 0).len, grid_block(n, npcol, 0).len, ld, 1));
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

/* The entry, then 7 numbers of the call, then 3 for each operand and 10
 * for its descriptor */
_Static_assert(10 + 3 * (3 + 10) <= API_GLOBALS, "api_globals' numbers must fit API_GLOBALS");

/* A scalar as its bits, with every NaN one NaN and -0 as +0: values that
 * act alike compare alike. */
static int64_t real_bits(double x)
{
    double c = isnan(x) ? NAN : x == 0 ? 0.0 : x;
    int64_t v;
    memcpy(&v, &c, sizeof v);
    return v;
}

int api_globals(const gemm_call *g, api_global *v)
{
    static const char *offs[3][2] = {{"ia", "ja"}, {"ib", "jb"}, {"ic", "jc"}};
    static const char *given[3] = {"descA (NULL or not)", "descB (NULL or not)",
                                   "descC (NULL or not)"};
    static const char *fields[3][10] = {
        {"descA->layout", "descA->m", "descA->n", "descA->mb", "descA->nb", "descA->rsrc",
         "descA->csrc", "descA->nprow", "descA->npcol", "descA->order"},
        {"descB->layout", "descB->m", "descB->n", "descB->mb", "descB->nb", "descB->rsrc",
         "descB->csrc", "descB->nprow", "descB->npcol", "descB->order"},
        {"descC->layout", "descC->m", "descC->n", "descC->mb", "descC->nb", "descC->rsrc",
         "descC->csrc", "descC->nprow", "descC->npcol", "descC->order"}};
    int n = 0;
    memset(v, 0, sizeof *v * API_GLOBALS);
    /* first the entry (type, device pointers, descriptors): the rest means
     * something else in another one */
    v[n++] = (api_global){(int64_t)g->t + 4 * g->device + 8 * g->desc, "the entry", API_G_ENTRY};
    v[n++] = (api_global){g->M, "M", API_G_INT};
    v[n++] = (api_global){g->N, "N", API_G_INT};
    v[n++] = (api_global){g->K, "K", API_G_INT};
    v[n++] = (api_global){real_bits(g->alpha), "alpha", API_G_REAL};
    v[n++] = (api_global){real_bits(g->beta), "beta", API_G_REAL};
    if (dd_dtype_complex(g->t)) {
        v[n++] = (api_global){real_bits(g->alpha_im), "alpha's imaginary part", API_G_REAL};
        v[n++] = (api_global){real_bits(g->beta_im), "beta's imaginary part", API_G_REAL};
    }
    v[n++] = (api_global){(unsigned char)g->ta + 256 * (unsigned char)g->tb, "transa, transb",
                          API_G_TRANS};
    v[n++] = (api_global){g->check != 0, "info->check", API_G_INT};
    const api_operand *ops[3] = {&g->a, &g->b, &g->c};
    for (int k = 0; k < 3 && g->desc; k++) {
        const dd_matrix_desc *d = ops[k]->d;
        v[n++] = (api_global){ops[k]->i, offs[k][0], API_G_INT};
        v[n++] = (api_global){ops[k]->j, offs[k][1], API_G_INT};
        v[n++] = (api_global){d != NULL, given[k], API_G_INT};
        if (!d)
            continue;
        int64_t f[] = {d->layout, d->m,    d->n,     d->mb,    d->nb,
                       d->rsrc,   d->csrc, d->nprow, d->npcol, (unsigned char)d->order};
        for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
            v[n++] = (api_global){f[i], fields[k][i], i == 9 ? API_G_CHAR : API_G_INT};
    }
    return n;
}

void api_global_show(const api_global *x, int64_t v, char *buf, size_t len)
{
    static const char *entries[16] = {
        "dd_gemm",         "dd_sgemm",         "dd_zgemm",         "dd_cgemm",
        "dd_gemm_device",  "dd_sgemm_device",  "dd_zgemm_device",  "dd_cgemm_device",
        "dd_pgemm",        "dd_psgemm",        "dd_pzgemm",        "dd_pcgemm",
        "dd_pgemm_device", "dd_psgemm_device", "dd_pzgemm_device", "dd_pcgemm_device"};
    double r;
    switch (x->kind) {
    case API_G_ENTRY:
        snprintf(buf, len, "%s", v >= 0 && v < 16 ? entries[v] : "?");
        break;
    case API_G_REAL:
        memcpy(&r, &v, sizeof r);
        snprintf(buf, len, "%.17g", r);
        break;
    case API_G_TRANS:
    case API_G_CHAR: {
        int n = 0;
        for (int i = 0; i < (x->kind == API_G_TRANS ? 2 : 1) && (size_t)n < len; i++) {
            int c = (int)((v >> (8 * i)) & 0xff);
            n += snprintf(buf + n, len - (size_t)n, c >= 32 && c < 127 ? "%s'%c'" : "%s0x%02x",
                          i ? ", " : "", c);
        }
        break;
    }
    default:
        snprintf(buf, len, "%lld", (long long)v);
    }
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
    if (d->kind != RD_BLOCK)
        return rd_held(d, me, d->off + d->n) - rd_held(d, me, d->off);
    dd_range r = grid_block(d->glen, d->np, me);
    int64_t lo = r.start > d->off ? r.start : d->off;
    int64_t hi = r.start + r.len < d->off + d->n ? r.start + r.len : d->off + d->n;
    return hi > lo ? hi - lo : 0;
}

/* dd_internal_first_blocks' sizes (dgemm_dist_tool.h), for this thread's calls. */
static _Thread_local struct {
    const dd_matrix_desc *desc[3];
    int64_t first[3][2];
} first_blocks;

void dd_internal_first_blocks(const dd_matrix_desc *const desc[3], const int64_t first[3][2])
{
    memset(&first_blocks, 0, sizeof first_blocks);
    for (int k = 0; desc && k < 3; k++) {
        first_blocks.desc[k] = desc[k];
        first_blocks.first[k][0] = first[k][0];
        first_blocks.first[k][1] = first[k][1];
    }
}

/* The first block's rows (dim 0) or columns (1) of a block-cyclic d: its
 * mb or nb unless dd_internal_first_blocks named d. */
static int64_t first_block(const dd_matrix_desc *d, int dim)
{
    for (int k = 0; k < 3; k++)
        if (first_blocks.desc[k] == d)
            return first_blocks.first[k][dim];
    return dim ? d->nb : d->mb;
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
    if (cyc && (first_block(d, 0) < 1 || first_block(d, 1) < 1))
        return bad(g, pos * 100 + (first_block(d, 0) < 1 ? 5 : 6), err,
                   "desc%s: first block %lld x %lld: must be at least 1 x 1", X,
                   (long long)first_block(d, 0), (long long)first_block(d, 1));
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
    /* the offsets (off) are set once they are known to be in range, below */
    l->row = (rd_dist){cyc ? RD_CYCLIC : RD_BLOCK, P, R, 0, d->m, d->mb, cyc ? d->rsrc : 0, 0};
    l->col = (rd_dist){cyc ? RD_CYCLIC : RD_BLOCK, Q, S, 0, d->n, d->nb, cyc ? d->csrc : 0, 0};
    if (cyc && first_block(d, 0) != d->mb)
        l->row.kind = RD_CYCLIC_FIRST, l->row.imb = first_block(d, 0);
    if (cyc && first_block(d, 1) != d->nb)
        l->col.kind = RD_CYCLIC_FIRST, l->col.imb = first_block(d, 1);
    int pr, pc;
    rd_coords(l, g->ctx->rank, &pr, &pc);
    int64_t need = cyc ? rd_held(&l->row, pr, d->m) : grid_block(d->n, Q, pc).len;
    need = need > 1 ? need : 1;
    if (d->lld < need)
        return bad(
            g, pos * 100 + 11, err,
            "desc%s: lld = %lld is less than max(1, %lld), the %s here: make it at least %lld", X,
            (long long)d->lld, (long long)need, cyc ? "local array's rows" : "local block's width",
            (long long)need);
    /* this rank's local array, lines lld apart (columns block-cyclic, rows
     * in the 2-D block layout): every address in it must be representable */
    int64_t lr = cyc ? rd_held(&l->row, pr, d->m) : grid_block(d->m, P, pr).len;
    int64_t lc = cyc ? rd_held(&l->col, pc, d->n) : grid_block(d->n, Q, pc).len;
    if (!api_span_fits(cyc ? lc : lr, cyc ? lr : lc, d->lld, dd_elsize(g->t)))
        return bad(g, pos * 100 + 11, err, /* LLD_, as the check above */
                   "desc%s: lld = %lld: this rank's %lld x %lld local array would span more than "
                   "2^63 bytes",
                   X, (long long)d->lld, (long long)lr, (long long)lc);
    l->rs = cyc ? 1 : d->lld;
    l->cs = cyc ? d->lld : 1;
    /* the submatrix inside the matrix, compared without forming i - 1 + R
     * (which overflows for offsets near 2^63): 0 <= R <= m holds here */
    if (o->i < 1 || (R > 0 && S > 0 && o->i - 1 > d->m - R))
        return bad(
            g, pos - 2, err,
            "i%c = %lld: the submatrix's %lld rows from there must lie in the %lld rows of %s",
            X[0] + 'a' - 'A', (long long)o->i, (long long)R, (long long)d->m, X);
    if (o->j < 1 || (R > 0 && S > 0 && o->j - 1 > d->n - S))
        return bad(g, pos - 1, err,
                   "j%c = %lld: the submatrix's %lld columns from there must lie in the %lld "
                   "columns of %s",
                   X[0] + 'a' - 'A', (long long)o->j, (long long)S, (long long)d->n, X);
    /* an empty submatrix addresses nothing, wherever it starts (PBLAS does
     * not bound its offsets): it is left at the matrix's start, so no index
     * arithmetic on it meets the unbounded offset */
    if (R > 0 && S > 0) {
        l->row.off = o->i - 1;
        l->col.off = o->j - 1;
    }
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
        return bad(g, pos * 100 + 11, err,
                   "ld%c = %lld is less than max(1, %lld), the width of its block of %s (%lld x "
                   "%lld, row-major)",
                   X[0] + 'a' - 'A', (long long)o->ld, (long long)w, X,
                   (long long)grid_block(R, gr->P, gr->p).len, (long long)w);
    int64_t h = grid_block(R, gr->P, gr->p).len;
    if (!api_span_fits(h, w, o->ld, dd_elsize(g->t)))
        return bad(
            g, pos * 100 + 11, err, /* the ld's number, as the check above */
            "ld%c = %lld: its %lld x %lld block of %s, rows ld%c apart, would span more than "
            "2^63 bytes",
            X[0] + 'a' - 'A', (long long)o->ld, (long long)h, (long long)w, X, X[0] + 'a' - 'A');
    memset(&o->lay, 0, sizeof o->lay);
    o->lay.row = (rd_dist){.kind = RD_BLOCK, .np = gr->P, .n = R, .glen = R};
    o->lay.col = (rd_dist){.kind = RD_BLOCK, .np = gr->Q, .n = S, .glen = S};
    o->lay.rs = o->ld;
    o->lay.cs = 1;
    o->lay.order = 'R';
    o->direct = !o->trans;
    return DD_OK;
}

int api_check_given(gemm_call *g, dd_err *err)
{
    static const char *names[3] = {"A", "B", "C"};
    static const int pos[3] = {10, 14, 19}; /* DESCA, DESCB, DESCC in pdgemm's list */
    const api_operand *ops[3] = {&g->a, &g->b, &g->c};
    for (int k = 0; k < 3 && g->desc; k++)
        if (!ops[k]->d)
            return bad(g, pos[k], err, "desc%s is NULL", names[k]);
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
        int read = k < 2 ? !api_alpha0(g) : 1; /* C is written whatever beta is */
        if (!o->p && read && sub_len(&o->lay.row, pr) > 0 && sub_len(&o->lay.col, pc) > 0)
            return bad(g, pos[k] - 3, err, "%s is NULL but this rank holds %lld x %lld of it",
                       names[k], (long long)sub_len(&o->lay.row, pr),
                       (long long)sub_len(&o->lay.col, pc));
    }
    return DD_OK;
}
