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

/* This rank's place in d's grid (the context's for a block layout with
 * nprow = npcol = 0). */
static void coords(const gemm_call *g, const dd_matrix_desc *d, int *np, int *nq, int *pr, int *pc)
{
    const dd_context *ctx = g->ctx;
    *np = d->nprow ? d->nprow : ctx->g.P;
    *nq = d->npcol ? d->npcol : ctx->g.Q;
    if (d->order == 'C') {
        *pr = ctx->rank % *np;
        *pc = ctx->rank / *np;
    } else {
        *pr = ctx->rank / *nq;
        *pc = ctx->rank % *nq;
    }
}

/* Elements of this rank's local array of d, from its first to its last
 * (the descriptor was checked: api_check_operands). */
static int64_t extent(const gemm_call *g, const dd_matrix_desc *d)
{
    int np, nq, pr, pc;
    coords(g, d, &np, &nq, &pr, &pc);
    if (d->layout == DD_LAYOUT_BLOCK) { /* row-major, ld = lld */
        int64_t r = grid_block(d->m, np, pr).len, c = grid_block(d->n, nq, pc).len;
        return r && c ? (r - 1) * d->lld + c : 0;
    }
    int64_t r = dd_numroc(d->m, d->mb, pr, d->rsrc, np),
            c = dd_numroc(d->n, d->nb, pc, d->csrc, nq);
    return r && c ? (c - 1) * d->lld + r : 0; /* column-major */
}

int api_device_stage(gemm_call *g, api_dstage *st, dd_err *err)
{
    dd_engine *e = &g->ctx->eng;
    api_operand *ops[3] = {&g->a, &g->b, &g->c};
    int want[3] = {g->alpha != 0, g->alpha != 0, 1}, rc = DD_OK;
    size_t es = dd_elsize(g->t);
    memset(st, 0, sizeof *st);
    for (int k = 0; k < 3 && !rc; k++) {
        st->n[k] = want[k] ? extent(g, ops[k]->d) : 0;
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
