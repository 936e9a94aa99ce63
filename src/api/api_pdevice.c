/* api_pdevice.c — dd_pgemm_device and dd_psgemm_device (dgemm_dist.h):
 * descriptors over local arrays in GPU memory.  Each local array that the
 * call reads (A and B unless alpha = 0, always C: only sub(C) is written
 * and the rest must come back as it was) is copied whole into pinned host
 * memory, the host path (redistribution, multiply, result back into the
 * host copy of C) runs on it, and C's copy goes back up.  On the CPU
 * backend "device" memory is host memory and nothing is staged. */
#include <string.h>

#include "agree.h"
#include "api_impl.h"

/* Elements of this rank's local array of operand o, from its first to its
 * last (its layout as api_check_operands made it from the descriptor). */
static int64_t extent(const gemm_call *g, const api_operand *o)
{
    const rd_layout *l = &o->lay;
    int pr, pc;
    rd_coords(l, g->ctx->rank, &pr, &pc);
    if (l->row.kind == RD_BLOCK) { /* row-major, ld = lld */
        int64_t r = grid_block(l->row.glen, l->row.np, pr).len,
                c = grid_block(l->col.glen, l->col.np, pc).len;
        return r && c ? (r - 1) * o->d->lld + c : 0;
    }
    int64_t r = dd_numroc(l->row.glen, l->row.nb, pr, l->row.src, l->row.np),
            c = dd_numroc(l->col.glen, l->col.nb, pc, l->col.src, l->col.np);
    return r && c ? (c - 1) * o->d->lld + r : 0; /* column-major */
}

int api_device_stage(gemm_call *g, api_dstage *st, dd_err *err)
{
    dd_engine *e = &g->ctx->eng;
    api_operand *ops[3] = {&g->a, &g->b, &g->c};
    int want[3] = {!api_alpha0(g), !api_alpha0(g), 1}, rc = DD_OK;
    size_t es = dd_elsize(g->t);
    memset(st, 0, sizeof *st);
    for (int k = 0; k < 3 && !rc; k++) {
        st->n[k] = want[k] ? extent(g, ops[k]) : 0;
        st->dev[k] = ops[k]->p;
        rc = e->ops->host_alloc(e, st->n[k] ? (size_t)st->n[k] * es : es, &st->host[k], err);
        if (!rc && st->n[k])
            rc = e->ops->download(e, st->host[k], ops[k]->p, (size_t)st->n[k] * es, err);
        if (!rc)
            ops[k]->p = st->host[k];
    }
    g->device = 0; /* from here the host path */
    return dd_agree(g->ctx->world, rc, err);
}

int api_device_unstage(gemm_call *g, api_dstage *st, int rc, dd_err *err)
{
    dd_engine *e = &g->ctx->eng;
    size_t es = dd_elsize(g->t);
    int up = DD_OK;
    if ((rc == DD_OK || rc == DD_ECHECK) && st->n[2] && st->host[2])
        up = e->ops->upload(e, (void *)st->dev[2], st->host[2], (size_t)st->n[2] * es, err);
    for (int k = 0; k < 3; k++)
        if (st->host[k])
            e->ops->host_free(e, st->host[k]);
    g->device = 1;
    if (rc == DD_OK || rc == DD_ECHECK) {
        up = dd_agree(g->ctx->world, up, err);
        return up ? up : rc;
    }
    return rc;
}
