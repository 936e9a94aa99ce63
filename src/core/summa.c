/* summa.c — the SUMMA pipeline (summa.h, comm.h describes the protocol). */
#include <stdlib.h>
#include <string.h>

#include "dd_fault.h"
#include "summa.h"

void summa_init(dd_summa *s, dd_engine *e, dd_comm *c, dd_grid g, dd_dtype t, int64_t M, int64_t N,
                int64_t K, int64_t panel, int lookahead, int accumulate)
{
    memset(s, 0, sizeof *s);
    s->engine = e;
    s->comm = c;
    s->g = g;
    s->type = t;
    s->M = M;
    s->N = N;
    s->K = K;
    s->lookahead = lookahead;
    s->accumulate = accumulate;
    s->nb = panel ? panel : engine_panel(e);
    summa_shape(s);
    s->npanels = summa_panel_count(s);
}

void summa_shape(dd_summa *s)
{
    const dd_grid *g = &s->g;
    s->Mp = grid_block(s->M, g->P, g->p).len;
    s->Nq = grid_block(s->N, g->Q, g->q).len;
    s->Kq = grid_block(s->K, g->Q, g->q).len;
    s->Kp = grid_block(s->K, g->P, g->p).len;
}

/* Widest panel: NB capped by K (panels never cross a block boundary, so
 * they are never wider than K). */
static int64_t max_width(const dd_summa *s)
{
    return s->nb < s->K ? s->nb : s->K;
}

int64_t summa_panel_count(const dd_summa *s)
{
    if (s->fixed)
        return s->nfixed;
    return grid_panels(s->K, s->g.P, s->g.Q, s->nb, NULL);
}

size_t summa_work_bytes(const dd_summa *s, size_t *slot_bytes, int *overflow)
{
    size_t es = dd_elsize(s->type);
    int64_t w = max_width(s);
    size_t slots = 0, nslots = (size_t)s->lookahead + 1;
    if (s->g.Q > 1)
        slots = dd_mul3((uint64_t)s->Mp, (uint64_t)w, es * nslots, overflow);
    if (s->g.P > 1)
        slots =
            dd_add(slots, dd_mul3((uint64_t)w, (uint64_t)s->Nq, es * nslots, overflow), overflow);
    if (slot_bytes)
        *slot_bytes = slots;
    size_t blocks =
        dd_add(dd_mul3((uint64_t)s->Mp, (uint64_t)s->Kq, es, overflow),
               dd_add(dd_mul3((uint64_t)s->Kp, (uint64_t)s->Nq, es, overflow),
                      dd_mul3((uint64_t)s->Mp, (uint64_t)s->Nq, es, overflow), overflow),
               overflow);
    return dd_add(slots, blocks, overflow);
}

int summa_plan_panels(dd_summa *s, dd_err *err)
{
    memset(s->slotA, 0, sizeof s->slotA);
    memset(s->slotB, 0, sizeof s->slotB);
    s->npanels = summa_panel_count(s);
    if (s->npanels < 0)
        return dd_fail(err, DD_EUSAGE, "panel width %lld gives no panel list", (long long)s->nb);
    /* the panels, then their times (double-aligned), in one allocation */
    size_t n = (size_t)(s->npanels ? s->npanels : 1), at = n * sizeof *s->panels;
    at = (at + sizeof(double) - 1) / sizeof(double) * sizeof(double);
    s->panels = calloc(1, at + n * sizeof(double));
    if (!s->panels)
        return dd_fail(err, DD_ENOMEM, "out of host memory for %lld panels", (long long)s->npanels);
    s->panel_sec = (double *)(void *)((char *)s->panels + at);
    if (s->fixed)
        memcpy(s->panels, s->fixed, (size_t)s->npanels * sizeof *s->panels);
    else
        grid_panels(s->K, s->g.P, s->g.Q, s->nb, s->panels);
    return DD_OK;
}

int summa_setup(dd_summa *s, dd_err *err)
{
    size_t es = dd_elsize(s->type);
    int64_t w = max_width(s);
    int prc = summa_plan_panels(s, err);
    if (prc)
        return prc;
    for (int i = 0; i <= s->lookahead; i++) {
        int rc = DD_OK;
        if (s->g.Q > 1)
            rc = s->engine->ops->alloc(s->engine, (size_t)(s->Mp * w) * es, &s->slotA[i], err);
        if (!rc && s->g.P > 1)
            rc = s->engine->ops->alloc(s->engine, (size_t)(w * s->Nq) * es, &s->slotB[i], err);
        if (rc)
            return rc;
    }
    return DD_OK;
}

void summa_teardown(dd_summa *s)
{
    for (int i = 0; i <= s->lookahead && i <= DD_LOOKAHEAD_MAX; i++) {
        if (s->slotA[i])
            s->engine->ops->free(s->engine, s->slotA[i]);
        if (s->slotB[i])
            s->engine->ops->free(s->engine, s->slotB[i]);
        s->slotA[i] = s->slotB[i] = NULL;
    }
    free(s->panels);
    s->panels = NULL;
    s->panel_sec = NULL;
}

static dd_panel_xfer panel_xfer(const dd_summa *s, int64_t t)
{
    const dd_panel *pn = &s->panels[t];
    size_t es = dd_elsize(s->type);
    int slot = (int)(t % (s->lookahead + 1));
    dd_panel_xfer x;
    memset(&x, 0, sizeof x);
    x.slot = slot;
    x.type = s->type;
    x.a.active = s->g.Q > 1;
    x.a.root = pn->qa;
    x.a.is_root = s->g.q == pn->qa;
    x.a.src = x.a.is_root ? (const char *)s->A + (size_t)pn->a_off * es : NULL;
    x.a.src_ld = s->Kq;
    x.a.rows = s->Mp;
    x.a.width = pn->w;
    x.a.dst = s->slotA[slot];
    x.b.active = s->g.P > 1;
    x.b.root = pn->pb;
    x.b.is_root = s->g.p == pn->pb;
    x.b.src = x.b.is_root ? (const char *)s->B + (size_t)(pn->b_off * s->Nq) * es : NULL;
    x.b.src_ld = s->Nq;
    x.b.rows = pn->w;
    x.b.width = s->Nq;
    x.b.dst = s->slotB[slot];
    return x;
}

/* The owned slices panel t reads from this rank's blocks: A's columns in
 * my grid row's owner, B's rows in my grid column's owner.  Over all panels
 * every byte of both blocks goes up exactly once. */
static int upload_panel(dd_summa *s, const dd_panel_xfer *x, int64_t t, dd_err *err)
{
    dd_engine *e = s->engine;
    size_t es = dd_elsize(s->type);
    const dd_panel *pn = &s->panels[t];
    int rc = DD_OK;
    if (x->a.is_root)
        rc = e->ops->upload_async(e, (char *)s->A + (size_t)pn->a_off * es, (size_t)s->Kq * es,
                                  (const char *)s->hA + (size_t)pn->a_off * es, (size_t)s->Kq * es,
                                  (size_t)pn->w * es, s->Mp, err);
    if (!rc && x->b.is_root) {
        size_t off = (size_t)(pn->b_off * s->Nq) * es;
        rc = e->ops->upload_async(e, (char *)s->B + off, (size_t)s->Nq * es,
                                  (const char *)s->hB + off, (size_t)s->Nq * es, (size_t)s->Nq * es,
                                  pn->w, err);
    }
    return rc;
}

/* Start panel t: its streamed upload first, when asked, then the broadcasts.
 * A failed upload is this rank's own failure (into *local; none are tried
 * after one): the broadcasts are posted all the same, so that the peers
 * waiting in them finish, and the caller agrees. */
static int post_panel(dd_summa *s, int64_t t, int stream_upload, int *local, dd_err *err)
{
    dd_panel_xfer x = panel_xfer(s, t);
    if (stream_upload && *local == DD_OK)
        *local = upload_panel(s, &x, t, err);
    return s->comm->ops->post(s->comm, &x, err);
}

static int comm_progress(void *arg, dd_err *err)
{
    dd_comm *c = arg;
    return c->ops->progress(c, err);
}

/* A comm failure leaves peers inside a broadcast: no agreement is possible,
 * so it is marked DD_ECOMM for the caller to end every rank. */
static int comm_failed(int rc)
{
    return rc ? DD_ECOMM : DD_OK;
}

/* The local multiply of panel t, from the owned block (the root reads in
 * place; with a group of one every rank is the root) or the slot. */
static int multiply_panel(dd_summa *s, int64_t t, const dd_panel_xfer *x, dd_err *err)
{
    dd_engine *e = s->engine;
    const void *A = x->a.is_root ? x->a.src : x->a.dst;
    int64_t lda = x->a.is_root ? s->Kq : x->a.width;
    const void *B = x->b.is_root ? x->b.src : x->b.dst;
    if (t == s->npanels / 2 && dd_fault("multiply"))
        return dd_fail(err, DD_EFAIL, "injected fault in the multiply of panel %lld", (long long)t);
    return e->ops->gemm(e, s->type, s->Mp, s->Nq, s->panels[t].w, A, lda, B, s->Nq,
                        t > 0 || s->accumulate, s->C, s->Nq,
                        s->g.P * s->g.Q > 1 ? comm_progress : NULL, s->comm, err);
}

/* Each panel's local multiply time from the engine, which times one
 * multiply per panel where this rank's C block is not empty (else zeros). */
static int panel_times(dd_summa *s, dd_err *err)
{
    int64_t n = 0;
    int rc = s->engine->ops->gemm_times(s->engine, s->panel_sec, s->npanels, &n, err);
    if (!rc && n != s->npanels)
        memset(s->panel_sec, 0, (size_t)s->npanels * sizeof *s->panel_sec);
    return rc;
}

int summa_multiply(dd_summa *s, int stream_upload, double *seconds, double *gemm_seconds,
                   dd_err *err)
{
    dd_engine *e = s->engine;
    dd_comm *c = s->comm;
    int L = s->lookahead, rc;
    e->ops->reset_timers(e);
    /* After a local failure (the phase clock, an upload, a multiply) this
     * rank keeps moving panels to the end, so its peers finish their
     * broadcasts, and the caller agrees. */
    int local = dd_fault("phase") ? dd_fail(err, DD_EFAIL, "injected fault in the multiply's clock")
                                  : e->ops->phase_begin(e, err);
    for (int64_t t = 0; t < L && t < s->npanels; t++)
        if ((rc = comm_failed(post_panel(s, t, stream_upload, &local, err))))
            return rc;
    for (int64_t t = 0; t < s->npanels; t++) {
        if (t + L < s->npanels &&
            (rc = comm_failed(post_panel(s, t + L, stream_upload, &local, err))))
            return rc;
        dd_panel_xfer x = panel_xfer(s, t);
        if ((rc = comm_failed(c->ops->wait(c, x.slot, err))))
            return rc;
        if (local == DD_OK)
            local = multiply_panel(s, t, &x, err);
        if (s->on_panel)
            s->on_panel(s->on_panel_arg, t + 1, s->npanels);
        if ((rc = comm_failed(c->ops->release(c, x.slot, err))))
            return rc;
    }
    dd_err later = {{0}}; /* after a local failure, its message is the one kept */
    rc = e->ops->phase_end(e, seconds, gemm_seconds, local ? &later : err);
    if (!rc && !local)
        rc = panel_times(s, err);
    return local ? local : rc;
}

int summa_warm(dd_summa *s, dd_err *err)
{
    dd_comm *c = s->comm;
    int64_t n = s->npanels < 2 ? s->npanels : 2;
    int rc = DD_OK, none = DD_OK; /* no uploads here */
    for (int64_t t = 0; t < n && t < s->lookahead + 1 && !rc; t++)
        rc = post_panel(s, t, 0, &none, err);
    for (int64_t t = 0; t < n && t < s->lookahead + 1 && !rc; t++) {
        int slot = (int)(t % (s->lookahead + 1));
        rc = c->ops->wait(c, slot, err);
        if (!rc)
            rc = c->ops->release(c, slot, err);
    }
    if (!rc)
        rc = s->engine->ops->wait_copies(s->engine, err);
    return comm_failed(rc);
}
