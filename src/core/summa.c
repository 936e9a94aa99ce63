/* summa.c — the SUMMA loop (summa.h, comm.h describes the protocol): the
 * panel list, the slots, each panel's transfers, upload, broadcast and
 * local multiply, lookahead deep, and the warm-up move.  The sliced
 * panels' sizes, plan and redo are summa_slices.c's (summa_impl.h). */
#include <stdlib.h>
#include <string.h>

#include "dd_fault.h"
#include "summa_impl.h"

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

int64_t summa_panel_count(const dd_summa *s)
{
    if (s->fixed)
        return s->nfixed;
    return grid_panels(s->K, s->g.P, s->g.Q, s->nb, NULL);
}

size_t summa_work_bytes(const dd_summa *s, size_t *slot_bytes, int *overflow)
{
    size_t es = dd_elsize(s->type);
    size_t slots = 0, nslots = (size_t)s->lookahead + 1;
    if (s->g.Q > 1)
        slots = dd_mul3(summa_slot_bytes(s, 0, overflow), nslots, 1, overflow);
    if (s->g.P > 1)
        slots = dd_add(slots, dd_mul3(summa_slot_bytes(s, 1, overflow), nslots, 1, overflow),
                       overflow);
    if (s->slices)
        slots = dd_add(slots, summa_exports_before_list(s, overflow), overflow);
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
    int overflow = 0;
    size_t sa = summa_slot_bytes(s, 0, &overflow), sb = summa_slot_bytes(s, 1, &overflow);
    int prc = summa_plan_panels(s, err);
    if (!prc)
        prc = summa_plan_slices(s, err);
    if (prc)
        return prc;
    dd_engine *e = s->engine;
    int rc = DD_OK;
    for (int i = 0; i <= s->lookahead && !rc; i++) {
        if (s->g.Q > 1)
            rc = e->ops->alloc(e, sa, &s->slotA[i], err);
        if (!rc && s->g.P > 1)
            rc = e->ops->alloc(e, sb, &s->slotB[i], err);
    }
    if (!rc && s->expA_bytes)
        rc = e->ops->alloc(e, s->expA_bytes, &s->expA, err);
    if (!rc && s->expB_bytes)
        rc = e->ops->alloc(e, s->expB_bytes, &s->expB, err);
    return rc;
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
    if (s->expA)
        s->engine->ops->free(s->engine, s->expA);
    if (s->expB)
        s->engine->ops->free(s->engine, s->expB);
    s->expA = s->expB = NULL;
    summa_free_lists(s);
}

/* Panel t's transfers into `slot`: in the element type, or (sliced) each
 * side's blob as a contiguous run of elements from its export buffer. */
dd_panel_xfer summa_panel_xfer_in(const dd_summa *s, int64_t t, int slot, int sliced)
{
    const dd_panel *pn = &s->panels[t];
    size_t es = dd_elsize(s->type);
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
    if (sliced) {
        x.a.rows = x.b.rows = 1;
        x.a.width = x.a.src_ld = (int64_t)(summa_blob_bytes(s, 0, pn->w) / es);
        x.b.width = x.b.src_ld = (int64_t)(summa_blob_bytes(s, 1, pn->w) / es);
        x.a.src = x.a.is_root ? (const char *)s->expA + s->offA[t] : NULL;
        x.b.src = x.b.is_root ? (const char *)s->expB + s->offB[t] : NULL;
    }
    return x;
}

static dd_panel_xfer panel_xfer(const dd_summa *s, int64_t t)
{
    return summa_panel_xfer_in(s, t, (int)(t % (s->lookahead + 1)), s->slices);
}

/* Where panel t's A lies in the owned block (its root's view) and its B. */
static const void *owned_a(const dd_summa *s, int64_t t)
{
    return (const char *)s->A + (size_t)s->panels[t].a_off * dd_elsize(s->type);
}

static const void *owned_b(const dd_summa *s, int64_t t)
{
    return (const char *)s->B + (size_t)(s->panels[t].b_off * s->Nq) * dd_elsize(s->type);
}

/* The blob of each side this rank roots in a broadcast, made on the
 * communication stream, so that post() sends it once made. */
static int slice_roots(dd_summa *s, const dd_panel_xfer *x, int64_t t, dd_err *err)
{
    dd_engine *e = s->engine;
    int64_t w = s->panels[t].w;
    int rc = DD_OK;
    if (x->a.active && x->a.is_root && s->Mp > 0)
        rc = e->ops->slices_make(e, DD_Q_UP, 0, s->Mp, w, owned_a(s, t), s->Kq, (void *)x->a.src,
                                 err);
    if (!rc && x->b.active && x->b.is_root && s->Nq > 0)
        rc = e->ops->slices_make(e, DD_Q_UP, 1, s->Nq, w, owned_b(s, t), s->Nq, (void *)x->b.src,
                                 err);
    return rc;
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
    if (s->slices && *local == DD_OK)
        *local = slice_roots(s, &x, t, err);
    return s->comm->ops->post(s->comm, &x, err);
}

static int comm_progress(void *arg, dd_err *err)
{
    dd_comm *c = arg;
    return c->ops->progress(c, err);
}

/* Panel t from blobs: a side broadcast from the root's export buffer or
 * the slot; a local side (a group of one) sliced now, on the compute
 * stream, into its one reused blob, or B's kept blob of this panel
 * (keep_b: sliced by the first band, then reused while b_kept). */
static int multiply_sliced(dd_summa *s, int64_t t, const dd_panel_xfer *x, dd_err *err)
{
    dd_engine *e = s->engine;
    int64_t w = s->panels[t].w;
    void *local_b = s->keep_b ? (char *)s->expB + s->offB[t] : s->expB;
    const void *a = x->a.active ? (x->a.is_root ? x->a.src : x->a.dst) : s->expA;
    const void *b = x->b.active ? (x->b.is_root ? x->b.src : x->b.dst) : local_b;
    int rc = DD_OK;
    if (!x->a.active && s->Mp > 0 && s->Nq > 0)
        rc = e->ops->slices_make(e, DD_Q_COMPUTE, 0, s->Mp, w, owned_a(s, t), s->Kq, s->expA,
                                 err);
    if (!rc && !x->b.active && s->Mp > 0 && s->Nq > 0 && !s->b_kept)
        rc = e->ops->slices_make(e, DD_Q_COMPUTE, 1, s->Nq, w, owned_b(s, t), s->Nq, local_b,
                                 err);
    if (rc)
        return rc;
    return e->ops->slices_gemm(e, s->Mp, s->Nq, w, a, b, t > 0 || s->accumulate, s->C, s->Nq,
                               s->g.P * s->g.Q > 1 ? comm_progress : NULL, s->comm, err);
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
    if (s->slices)
        return multiply_sliced(s, t, x, err);
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
    s->redone = 0;
    /* After a local failure (the phase clock, an upload, a multiply) this
     * rank keeps moving panels to the end, so its peers finish their
     * broadcasts, and the caller agrees. */
    int local = dd_fault("phase") ? dd_fail(err, DD_EFAIL, "injected fault in the multiply's clock")
                                  : e->ops->phase_begin(e, err);
    for (int64_t t = 0; t < L && t < s->npanels; t++)
        if ((rc = summa_comm_failed(post_panel(s, t, stream_upload, &local, err))))
            return rc;
    for (int64_t t = 0; t < s->npanels; t++) {
        if (t + L < s->npanels &&
            (rc = summa_comm_failed(post_panel(s, t + L, stream_upload, &local, err))))
            return rc;
        dd_panel_xfer x = panel_xfer(s, t);
        if ((rc = summa_comm_failed(c->ops->wait(c, x.slot, err))))
            return rc;
        if (local == DD_OK)
            local = multiply_panel(s, t, &x, err);
        if (s->on_panel)
            s->on_panel(s->on_panel_arg, t + 1, s->npanels);
        if ((rc = summa_comm_failed(c->ops->release(c, x.slot, err))))
            return rc;
    }
    if (s->slices && (rc = summa_redo_missed(s, &local, err)))
        return rc;
    dd_err later = {{0}}; /* after a local failure, its message is the one kept */
    rc = e->ops->phase_end(e, seconds, gemm_seconds, local ? &later : err);
    if (!rc && !local)
        rc = panel_times(s, err);
    /* kept B: every panel's blob made (or already there) exactly when the
     * multiply went through with a block of C to make */
    s->b_kept = s->keep_b && (s->b_kept || (!rc && !local && s->Mp > 0 && s->Nq > 0));
    return local ? local : rc;
}

int summa_warm(dd_summa *s, dd_err *err)
{
    dd_comm *c = s->comm;
    int64_t n = s->npanels < 2 ? s->npanels : 2;
    int rc = DD_OK;
    for (int64_t t = 0; t < n && t < s->lookahead + 1 && !rc; t++) {
        dd_panel_xfer x = panel_xfer(s, t); /* moved as it will be, nothing sliced yet */
        rc = s->comm->ops->post(s->comm, &x, err);
    }
    for (int64_t t = 0; t < n && t < s->lookahead + 1 && !rc; t++) {
        int slot = (int)(t % (s->lookahead + 1));
        rc = c->ops->wait(c, slot, err);
        if (!rc)
            rc = c->ops->release(c, slot, err);
    }
    if (!rc)
        rc = s->engine->ops->wait_copies(s->engine, err);
    return summa_comm_failed(rc);
}
