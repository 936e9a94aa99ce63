/* summa_slices.c — SUMMA's sliced panels (summa.h), apart from the loop:
 * whether panels travel sliced, the sizes of the slots and of the export
 * buffers that hold this rank's blobs, the offsets and missed flags planned
 * after the panel list, and, after a sliced multiply, the redo in the
 * element type of the panels any rank left out (the one MPI call of
 * SUMMA's own).  The loop that makes, moves and multiplies the blobs is
 * summa.c's; what the two share is in summa_impl.h. */
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "summa_impl.h"

/* Widest panel: NB capped by K (panels never cross a block boundary, so
 * they are never wider than K). */
static int64_t max_width(const dd_summa *s)
{
    return s->nb < s->K ? s->nb : s->K;
}

/* A blob's bytes for a panel of width w, rounded up to 256 (blobs are
 * placed at 256-byte offsets, and 256 is a whole number of elements of
 * every type); 0 where the engine gives none. */
size_t summa_blob_bytes(const dd_summa *s, int side, int64_t w)
{
    size_t b = s->engine->ops->slices_bytes(s->engine, s->type, side ? s->Nq : s->Mp, w);
    return b && b <= SIZE_MAX - 255 ? (b + 255) / 256 * 256 : 0;
}

void summa_use_slices(dd_summa *s, MPI_Comm world, int allowed)
{
    const dd_engine_ops *o = s->engine->ops;
    s->world = world;
    s->slices = allowed && s->g.P * s->g.Q > 1 && s->K > 0 && o->slices_bytes &&
                o->slices_make && o->slices_gemm && o->slices_missed &&
                o->slices_bytes(s->engine, s->type, 1, max_width(s)) > 0;
}

size_t summa_slot_bytes(const dd_summa *s, int side, int *overflow)
{
    int64_t w = max_width(s);
    size_t fp = dd_mul3((uint64_t)(side ? s->Nq : s->Mp), (uint64_t)w, dd_elsize(s->type),
                        overflow);
    if (!s->slices)
        return fp;
    size_t b = summa_blob_bytes(s, side, w);
    if (!b)
        *overflow = 1;
    return b > fp ? b : fp;
}

/* The export buffer of one side over the panel list pl[0..n): where that
 * side's broadcast is active, every panel this rank owns at its own offset
 * (a receiver may still be copying one panel while the next is sliced);
 * where it is local (a group of one), one blob reused on the compute
 * stream.  Offsets into off[] (SIZE_MAX: another rank's) when not NULL. */
static size_t export_bytes(const dd_summa *s, int side, const dd_panel *pl, int64_t n,
                           size_t *off, int *overflow)
{
    int active = side ? s->g.P > 1 : s->g.Q > 1;
    size_t at = 0;
    if (!active && !(side && s->keep_b)) {
        for (int64_t t = 0; off && t < n; t++)
            off[t] = 0;
        size_t b = summa_blob_bytes(s, side, max_width(s));
        if (!b)
            *overflow = 1;
        return b;
    }
    for (int64_t t = 0; t < n; t++) { /* kept B (one rank): every panel is mine */
        int mine = side ? pl[t].pb == s->g.p : pl[t].qa == s->g.q;
        if (off)
            off[t] = mine ? at : SIZE_MAX;
        if (!mine)
            continue;
        size_t b = summa_blob_bytes(s, side, pl[t].w);
        if (!b)
            *overflow = 1;
        at = dd_add(at, b, overflow);
    }
    return at;
}

/* Both export buffers before the panel list exists (a list made here, or
 * the caller's); without memory for it, a bound: every panel at the widest. */
size_t summa_exports_before_list(const dd_summa *s, int *overflow)
{
    int64_t n = summa_panel_count(s);
    if (n <= 0)
        return 0;
    dd_panel *pl = s->fixed ? NULL : malloc((size_t)n * sizeof *pl);
    if (!s->fixed && pl)
        grid_panels(s->K, s->g.P, s->g.Q, s->nb, pl);
    const dd_panel *use = s->fixed ? s->fixed : pl;
    size_t sum;
    if (use)
        sum = dd_add(export_bytes(s, 0, use, n, NULL, overflow),
                     export_bytes(s, 1, use, n, NULL, overflow), overflow);
    else
        sum = dd_mul3((uint64_t)n, 2,
                      summa_slot_bytes(s, 0, overflow) > summa_slot_bytes(s, 1, overflow)
                          ? summa_slot_bytes(s, 0, overflow)
                          : summa_slot_bytes(s, 1, overflow),
                      overflow);
    free(pl);
    return sum;
}

int summa_plan_slices(dd_summa *s, dd_err *err)
{
    s->offA = s->offB = NULL;
    s->missed = NULL;
    s->expA_bytes = s->expB_bytes = 0;
    if (!s->slices)
        return DD_OK;
    size_t n = (size_t)(s->npanels ? s->npanels : 1);
    s->offA = malloc(n * sizeof *s->offA);
    s->offB = malloc(n * sizeof *s->offB);
    s->missed = calloc(2, n); /* this rank's, then every rank's */
    if (!s->offA || !s->offB || !s->missed)
        return dd_fail(err, DD_ENOMEM, "out of host memory for %lld sliced panels",
                       (long long)s->npanels);
    int overflow = 0;
    s->expA_bytes = export_bytes(s, 0, s->panels, s->npanels, s->offA, &overflow);
    s->expB_bytes = export_bytes(s, 1, s->panels, s->npanels, s->offB, &overflow);
    if (overflow)
        return dd_fail(err, DD_EUSAGE, "the sliced panels of rank %d would need more than 2^64 "
                                       "bytes", s->g.rank);
    return DD_OK;
}

/* summa_plan_slices' lists, freed. */
static void free_slice_lists(dd_summa *s)
{
    free(s->offA);
    free(s->offB);
    free(s->missed);
    s->offA = s->offB = NULL;
    s->missed = NULL;
}

int summa_rows_slices(dd_summa *s, int allowed)
{
    if (s->keep_b)
        return 1;
    const dd_engine_ops *o = s->engine->ops;
    if (!allowed || s->slices || s->g.P * s->g.Q != 1 || s->K <= 0 || s->Mp <= 0 ||
        s->Nq <= 0 || !s->panels || !o->slices_bytes || !o->slices_make || !o->slices_gemm ||
        !o->slices_missed || o->slices_bytes(s->engine, s->type, 1, max_width(s)) == 0)
        return 0;
    s->slices = s->keep_b = 1;
    s->b_kept = 0;
    dd_err scratch = {{0}}; /* a failure here only means: multiply as before */
    int rc = summa_plan_slices(s, &scratch);
    if (!rc)
        rc = s->engine->ops->alloc(s->engine, s->expA_bytes, &s->expA, &scratch);
    if (!rc)
        rc = s->engine->ops->alloc(s->engine, s->expB_bytes, &s->expB, &scratch);
    if (!rc)
        return 1;
    if (s->expA)
        s->engine->ops->free(s->engine, s->expA);
    if (s->expB)
        s->engine->ops->free(s->engine, s->expB);
    s->expA = s->expB = NULL;
    free_slice_lists(s);
    s->expA_bytes = s->expB_bytes = 0;
    s->slices = s->keep_b = 0;
    return 0;
}

void summa_free_lists(dd_summa *s)
{
    free(s->panels);
    s->panels = NULL;
    s->panel_sec = NULL;
    free_slice_lists(s);
}

/* After a sliced multiply: the panels any rank left out (their blobs said
 * they cannot be emulated), agreed over world, broadcast again in the
 * element type through slot 0 and multiplied by the ranks that left them
 * out.  Every rank reaches the same collectives whatever *local holds; a
 * rank that failed before contributes nothing and multiplies nothing. */
int summa_redo_missed(dd_summa *s, int *local, dd_err *err)
{
    dd_engine *e = s->engine;
    dd_comm *c = s->comm;
    int64_t n = s->npanels, count = 0;
    unsigned char *mine = s->missed, *any = s->missed + (n ? n : 1);
    memset(mine, 0, (size_t)n);
    if (*local == DD_OK)
        *local = e->ops->slices_missed(e, mine, n, &count, err);
    if (*local == DD_OK && count != n)
        *local = dd_fail(err, DD_EFAIL, "%lld sliced multiplies counted for %lld panels",
                         (long long)count, (long long)n);
    if (*local != DD_OK)
        memset(mine, 0, (size_t)n);
    int rc = dd_mpi_check(MPI_Allreduce(mine, any, (int)n, MPI_UNSIGNED_CHAR, MPI_MAX, s->world),
                          "MPI_Allreduce of the panels left out of the sliced products", err);
    if (rc)
        return DD_ECOMM;
    s->redone = 0;
    for (int64_t t = 0; t < n; t++) {
        if (!any[t])
            continue;
        s->redone++;
        dd_panel_xfer x = summa_panel_xfer_in(s, t, 0, 0);
        if ((rc = summa_comm_failed(c->ops->post(c, &x, err))) ||
            (rc = summa_comm_failed(c->ops->wait(c, 0, err))))
            return rc;
        if (*local == DD_OK && mine[t]) {
            const void *A = x.a.is_root ? x.a.src : x.a.dst;
            const void *B = x.b.is_root ? x.b.src : x.b.dst;
            *local = e->ops->gemm(e, s->type, s->Mp, s->Nq, s->panels[t].w, A,
                                  x.a.is_root ? s->Kq : x.a.width, B, s->Nq, 1, s->C, s->Nq, NULL,
                                  NULL, err);
        }
        if ((rc = summa_comm_failed(c->ops->release(c, 0, err))))
            return rc;
    }
    return DD_OK;
}
