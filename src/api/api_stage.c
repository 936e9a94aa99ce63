/* api_stage.c — host operands between the caller's arrays and the work
 * blocks (row-major), with the context's kept memory (api_work.c).
 *
 * The operand's rows or columns ("lines") that are contiguous in the
 * caller's array are what the host copies move; the turn from columns to
 * the work block's rows is made on the way in by the engine
 * (upload_t_async: on a GPU a transpose kernel at device speed, on the CPU
 * a cache-blocked transpose), and on the way out by download_t_async.  So
 * the host only ever copies contiguous runs (memcpy, over threads).
 *
 * Local moves (one rank, or the 2-D block layout as it is: `direct`): the
 * lines go through a ring of two pinned slots (DD_RING_MIB each, default
 * 64): band i is copied into one slot while band i-1 is uploaded from the
 * other, and C comes back the same way, each download overlapping the
 * previous band's copy out.  Host bytes: each element once read and once
 * written; PCIe: each element once.
 *
 * Moves among ranks (block-cyclic and other layouts): the redistribution
 * (api_redist.c) packs and exchanges contiguous runs into a staging block
 * in the lines' orientation (pinned on a GPU, kept), which goes up in
 * bands with no further host copy; C the reverse. */
#include <string.h>

#include "agree.h"
#include "api_impl.h"

/* One operand's lines: the work block W (rows × cols, row-major) and the
 * caller's line i at user + i·ustride elements. */
typedef struct {
    dd_context *ctx;
    size_t es;
    char *W;
    int64_t rows, cols;
    int bycol;          /* 1: the lines are columns, turned on the way; 0: rows */
    int64_t lines, len; /* how many, and elements each */
    char *user;
    int64_t ustride;
} lines_t;

static lines_t lines_of(gemm_call *g, void *W, int64_t rows, int64_t cols, int bycol, const void *u,
                        int64_t ustride)
{
    lines_t L = {
        g->ctx,    dd_elsize(g->t), W, rows, cols, bycol, bycol ? cols : rows, bycol ? rows : cols,
        (char *)u, ustride};
    return L;
}

int api_band_up(dd_engine *e, void *W, int64_t rows, int64_t cols, int turn, const void *band,
                int64_t l0, int64_t h, size_t es, dd_err *err)
{
    size_t w = (size_t)cols * es;
    if (turn)
        return e->ops->upload_t_async(e, (char *)W + (size_t)l0 * es, cols, band, h, rows, es, err);
    return e->ops->upload_async(e, (char *)W + (size_t)l0 * w, w, band, w, w, h, err);
}

int api_band_down(dd_engine *e, void *band, const void *W, int64_t rows, int64_t cols, int turn,
                  int64_t l0, int64_t h, size_t es, dd_err *err)
{
    size_t w = (size_t)cols * es;
    if (turn)
        return e->ops->download_t_async(e, band, (const char *)W + (size_t)l0 * es, cols, h, rows,
                                        es, err);
    return e->ops->download_async(e, band, w, (const char *)W + (size_t)l0 * w, w, w, h, err);
}

/* Lines l0..l0+h-1 from host memory at src (contiguous) up into W. */
static int put(const lines_t *L, const void *src, int64_t l0, int64_t h, dd_err *err)
{
    return api_band_up(&L->ctx->eng, L->W, L->rows, L->cols, L->bycol, src, l0, h, L->es, err);
}

/* Lines l0..l0+h-1 of W down into host memory at dst (contiguous). */
static int get(const lines_t *L, void *dst, int64_t l0, int64_t h, dd_err *err)
{
    return api_band_down(&L->ctx->eng, dst, L->W, L->rows, L->cols, L->bycol, l0, h, L->es, err);
}

/* Lines per band: a ring slot's worth (at least one). */
static int64_t band_lines(const lines_t *L)
{
    size_t lb = (size_t)L->len * L->es, slot = api_ring_bytes();
    int64_t per = lb ? (int64_t)(slot / lb) : L->lines;
    per = per < 1 ? 1 : per;
    return per < L->lines ? per : L->lines;
}

static int ring(dd_context *ctx, const lines_t *L, int64_t per, void *slot[2], dd_err *err)
{
    size_t bytes = (size_t)(per * L->len) * L->es;
    int rc = api_host_get(ctx, API_HOST_RING, bytes, &slot[0], err);
    return rc ? rc : api_host_get(ctx, API_HOST_RING + 1, bytes, &slot[1], err);
}

/* The caller's lines up: packed into one slot while the other uploads. */
static int ring_up(const lines_t *L, dd_err *err)
{
    dd_context *ctx = L->ctx;
    dd_engine *e = &ctx->eng;
    size_t es = L->es, lb = (size_t)L->len * es, us = (size_t)L->ustride * es;
    if (L->lines == 0 || L->len == 0)
        return DD_OK;
    if (e->ops->work_is_host && !L->bycol) { /* rows straight into the block */
        api_copy_runs(L->W, (size_t)L->cols * es, L->user, us, lb, L->rows, ctx->copy_threads);
        return DD_OK;
    }
    if (e->ops->work_is_host && L->ustride == L->len) /* one turn from the caller's array */
        return put(L, L->user, 0, L->lines, err);
    int64_t per = band_lines(L);
    void *slot[2];
    int rc = ring(ctx, L, per, slot, err);
    for (int64_t b = 0, l0 = 0; !rc && l0 < L->lines; b++, l0 += per) {
        int64_t h = L->lines - l0 < per ? L->lines - l0 : per;
        api_copy_runs(slot[b % 2], lb, L->user + (size_t)l0 * us, us, lb, h, ctx->copy_threads);
        if (b > 0) /* band b-1 is up: its slot is free for band b+1 */
            rc = e->ops->wait_copies(e, err);
        if (!rc)
            rc = put(L, slot[b % 2], l0, h, err);
    }
    int rc2 = e->ops->wait_copies(e, err);
    return rc ? rc : rc2;
}

/* W's lines down to the caller's: each band's copy out overlaps the next
 * band's download. */
static int ring_down(const lines_t *L, dd_err *err)
{
    dd_context *ctx = L->ctx;
    dd_engine *e = &ctx->eng;
    size_t es = L->es, lb = (size_t)L->len * es, us = (size_t)L->ustride * es;
    if (L->lines == 0 || L->len == 0)
        return DD_OK;
    if (e->ops->work_is_host && !L->bycol) {
        api_copy_runs(L->user, us, L->W, (size_t)L->cols * es, lb, L->rows, ctx->copy_threads);
        return DD_OK;
    }
    if (e->ops->work_is_host && L->ustride == L->len)
        return get(L, L->user, 0, L->lines, err);
    int64_t per = band_lines(L);
    void *slot[2];
    int rc = ring(ctx, L, per, slot, err);
    if (!rc)
        rc = get(L, slot[0], 0, per, err);
    if (!rc)
        rc = e->ops->wait_copies(e, err);
    for (int64_t b = 0, l0 = 0; !rc && l0 < L->lines; b++, l0 += per) {
        int64_t h = L->lines - l0 < per ? L->lines - l0 : per, n0 = l0 + per;
        if (n0 < L->lines) /* band b+1 down into the other slot */
            rc = get(L, slot[(b + 1) % 2], n0, L->lines - n0 < per ? L->lines - n0 : per, err);
        if (!rc)
            api_copy_runs(L->user + (size_t)l0 * us, us, slot[b % 2], lb, lb, h, ctx->copy_threads);
        if (!rc)
            rc = e->ops->wait_copies(e, err);
    }
    return rc;
}

/* Between W and a staging block of the lines (contiguous, host): in
 * bands of a slot's worth when turned (the engine's turning scratch). */
static int stage_move(const lines_t *L, char *stage, int up, dd_err *err)
{
    dd_engine *e = &L->ctx->eng;
    int64_t per = L->bycol ? band_lines(L) : L->lines;
    size_t lb = (size_t)L->len * L->es;
    int rc = DD_OK;
    for (int64_t l0 = 0; !rc && l0 < L->lines && L->len > 0; l0 += per) {
        int64_t h = L->lines - l0 < per ? L->lines - l0 : per;
        rc = up ? put(L, stage + (size_t)l0 * lb, l0, h, err)
                : get(L, stage + (size_t)l0 * lb, l0, h, err);
    }
    int rc2 = e->ops->wait_copies(e, err);
    return rc ? rc : rc2;
}

/* The operand's stored elements on this rank as op(X)'s strides, when
 * nothing moves between ranks (one rank): element (r, c) of op(X) at
 * *base + (r·rs + c·cs) elements.  1 when rows or columns are contiguous. */
int api_local_view(const gemm_call *g, const api_operand *o, const char **base, int64_t *rs,
                   int64_t *cs)
{
    const rd_layout *l = &o->lay;
    if (g->ctx->size != 1 || !o->p)
        return 0;
    *base =
        (const char *)o->p + (size_t)(l->row.off * l->rs + l->col.off * l->cs) * dd_elsize(g->t);
    *rs = o->trans ? l->cs : l->rs;
    *cs = o->trans ? l->rs : l->cs;
    return *rs == 1 || *cs == 1;
}

/* The staging's orientation, the same on every rank: columns where the
 * caller's columns are contiguous in op(X) (block-cyclic, untransposed;
 * the 2-D block layout transposed). */
static int stage_bycol(const api_operand *o)
{
    return o->trans ? o->lay.row.kind == RD_BLOCK : o->lay.row.kind == RD_CYCLIC;
}

int api_load_host(gemm_call *g, int k, void *W, int64_t rows, int64_t cols, dd_err *err)
{
    dd_context *ctx = g->ctx;
    const api_operand *o = k == 0 ? &g->a : k == 1 ? &g->b : &g->c;
    const char *base;
    int64_t rs, cs;
    if (o->direct || g->cyclic) { /* rows of the block, or columns of the local array */
        lines_t L = g->cyclic ? lines_of(g, W, rows, cols, 1, o->p, o->lay.cs)
                              : lines_of(g, W, rows, cols, 0, o->p, o->ld);
        return dd_agree(ctx->world, ring_up(&L, err), err);
    }
    if (api_local_view(g, o, &base, &rs, &cs)) {
        int bycol = cs != 1;
        lines_t L = lines_of(g, W, rows, cols, bycol, base, bycol ? cs : rs);
        return dd_agree(ctx->world, ring_up(&L, err), err);
    }
    int bycol = stage_bycol(o);
    lines_t L = lines_of(g, W, rows, cols, bycol, NULL, 0);
    rd_layout wl;
    api_work_layout(g, k, &wl);
    if (bycol)
        wl.rs = 1, wl.cs = rows;
    void *dst = W;
    int rc = DD_OK;
    if (bycol || !ctx->eng.ops->work_is_host)
        rc = api_host_get(ctx, API_HOST_STAGE, (size_t)(rows * cols) * L.es, &dst, err);
    if (!(rc = dd_agree(ctx->world, rc, err)))
        rc = rd_move(ctx->world, g->t, &o->lay, o->p, &wl, dst, o->trans,
                     api_move_threads(ctx, rows, cols), &ctx->keep, err);
    if (!rc && dst != W)
        rc = dd_agree(ctx->world, stage_move(&L, dst, 1, err), err);
    return rc;
}

int api_store_host(gemm_call *g, dd_err *err)
{
    dd_context *ctx = g->ctx;
    dd_summa *s = &g->s;
    const api_operand *o = &g->c;
    const char *base;
    int64_t rs, cs;
    if (g->cyclic) { /* sub(C)'s rows of each local column */
        lines_t L = lines_of(g, s->C, s->Mp, s->Nq, 1, o->p, o->lay.cs);
        return dd_agree(ctx->world, ring_down(&L, err), err);
    }
    if (o->direct || api_local_view(g, o, &base, &rs, &cs)) {
        int bycol = !o->direct && cs != 1;
        lines_t L = o->direct ? lines_of(g, s->C, s->Mp, s->Nq, 0, o->p, o->ld)
                              : lines_of(g, s->C, s->Mp, s->Nq, bycol, base, bycol ? cs : rs);
        return dd_agree(ctx->world, ring_down(&L, err), err);
    }
    int bycol = stage_bycol(o);
    lines_t L = lines_of(g, s->C, s->Mp, s->Nq, bycol, NULL, 0);
    rd_layout wl;
    api_work_layout(g, 2, &wl);
    if (bycol)
        wl.rs = 1, wl.cs = s->Mp;
    void *src = s->C;
    int rc = DD_OK;
    if (bycol || !ctx->eng.ops->work_is_host) {
        rc = api_host_get(ctx, API_HOST_STAGE, (size_t)(s->Mp * s->Nq) * L.es, &src, err);
        if (!rc)
            rc = stage_move(&L, src, 0, err);
    }
    if (!(rc = dd_agree(ctx->world, rc, err)))
        rc = rd_move(ctx->world, g->t, &wl, src, &o->lay, (void *)o->p, 0,
                     api_move_threads(ctx, s->Mp, s->Nq), &ctx->keep, err);
    return rc;
}
