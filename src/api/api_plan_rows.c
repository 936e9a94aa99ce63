/* api_plan_rows.c — the plan's bands of rows (dgemm_dist_tool.h): one
 * band of C multiplied over the whole K (dd_plan_multiply_rows), and the
 * band pipeline's moves of op(A)'s and C's rows between host memory and
 * work memory, through the context's pinned staging slots or straight from
 * and into dd_plan_host_alloc's memory. */
#include <pthread.h>
#include <string.h>

#include "agree.h"
#include "api_plan.h"
#include "dd_fault.h"
#include "dd_knobs.h"

/* The engine's marks of the staged moves (dd_plan_put_rows, below): the two
 * upload slots', the two latest puts', the two download slots', the
 * multiply's. */
enum { RW_UP = 0, RW_BAND = 2, RW_DOWN = 4, RW_COMP = 6 };
static int rows_drain(dd_plan *p, int rc, dd_err *err);

void plan_rows_slices(dd_plan *p)
{
    if (p->rows_slices_tried)
        return;
    dd_context *ctx = p->ctx;
    long long v = dd_knob_int(DDK_OZAKI2_PANELS); /* 0 auto, 1 slices, 2 fp64 */
    p->rows_slices_tried = 1;
    (void)summa_rows_slices(&p->s, ctx->size == 1 && !p->host_pass &&
                                       (v == 1 || (v == 0 && !ctx->eng.ops->work_is_host)));
}

/* A band of C's rows: SUMMA over the whole K on a copy of the plan's
 * SUMMA state whose blocks of op(A) and C start at row r0 and are `rows`
 * high (their row pitches, the panel list and the slots stay: a band's
 * panels are the whole multiply's, narrower in M).  The A broadcast of a
 * band moves only its rows; B's panels go again for every band. */
dd_status dd_plan_multiply_rows(dd_plan *p, int64_t r0, int64_t rows, dd_plan_times *times)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err;
    int rc = plan_enter(p, &err);
    dd_context *ctx = p->ctx;
    if (!rc && !p->prepared)
        rc = dd_fail(err, DD_EUSAGE, "the plan is not prepared (dd_plan_prepare)");
    if (!rc && (plan_alpha0(p) || p->passes != 1))
        rc = dd_fail(err, DD_EUSAGE,
                     "dd_plan_multiply_rows needs alpha not 0 and a plan made with passes = 1 "
                     "(alpha %g, passes %d): use dd_plan_multiply",
                     p->alpha, p->passes);
    if (!rc && (r0 < 0 || rows < 0 || r0 > p->s.Mp || rows > p->s.Mp - r0))
        rc = dd_fail(err, DD_EUSAGE,
                     "rank %d: rows [%lld, %lld) are not inside its %lld rows of C", ctx->rank,
                     (long long)r0, (long long)(r0 + rows), (long long)p->s.Mp);
    if ((rc = dd_agree(ctx->world, rc, err)))
        return api_status(rc);
    if (p->t != ctx->type && (rc = api_retype(ctx, p->t, err)))
        return api_status(dd_agree(ctx->world, rc, err));
    plan_rows_slices(p);
    size_t es = dd_elsize(p->t);
    dd_summa band = p->s;
    band.Mp = rows;
    band.A = (char *)p->s.A + (size_t)(r0 * p->s.Kq) * es;
    band.C = (char *)p->s.C + (size_t)(r0 * p->s.Nq) * es;
    double sec = 0, gemm = 0, slowest = 0;
    if (p->rows_put > p->rows_used) { /* the band's put (dd_plan_put_rows) is up first */
        dd_engine *e = &ctx->eng;
        rc = e->ops->after(e, DD_Q_COMPUTE, RW_BAND + (int)(p->rows_used++ % 2), err);
    }
    if (!rc)
        rc = summa_multiply(&band, 0, &sec, &gemm, err);
    p->s.redone += band.redone; /* the band's sliced panels redone, for the kernel note */
    p->s.b_kept = band.b_kept;
    if (rc) /* nothing staged lands later */
        rc = rows_drain(p, rc, err);
    if (rc == DD_ECOMM)
        return api_status(rc);
    p->npass = 1;
    rc = dd_agree(ctx->world, rc, err);
    if (!rc)
        rc = dd_agree(
            ctx->world,
            dd_mpi_check(MPI_Allreduce(&sec, &slowest, 1, MPI_DOUBLE, MPI_MAX, ctx->world),
                         "MPI_Allreduce of the multiply time", err),
            err);
    if (times)
        *times = (dd_plan_times){sec, gemm, slowest};
    return api_status(rc);
}

void *dd_plan_host_block(const dd_plan *p, dd_operand which)
{
    if (!p || !p->allocated || !p->ctx->eng.ops->work_is_host || (int)which < 0 || (int)which > 2)
        return NULL;
    int64_t rows, cols;
    return plan_block(p, (int)which, &rows, &cols);
}

/* The band pipeline's staged moves (dgemm_dist_tool.h), ordered by the
 * marks RW_* (engine.h: mark, after, reached).  Queues: DD_Q_UP for the
 * uploads, DD_Q_DOWN for the downloads; on the CPU engine every copy is
 * synchronous and the marks do nothing.  DD_FAULT=pipe-narrow makes pieces
 * of 3 rows (many pieces and slot turns in a small test); DD_FAULT=pipe-stage
 * fails the second put after its first piece is queued. */

/* The slots and the rows of a `cols`-wide block per piece. */
static int rows_slots(dd_plan *p, int64_t cols, void *up[2], void *down[2], int64_t *per,
                      dd_err *err)
{
    dd_context *ctx = p->ctx;
    size_t slot = api_ring_bytes(), row = (size_t)cols * dd_elsize(p->t);
    if (row > slot)
        return dd_fail(err, DD_EUSAGE,
                       "one row of a block (%.1f MiB) is larger than a staging slot (%.0f MiB): "
                       "raise DD_RING_MIB or use more ranks",
                       (double)row / 1048576.0, (double)slot / 1048576.0);
    *per = row ? (int64_t)(slot / row) : 1;
    if (dd_fault("pipe-narrow") && *per > 3)
        *per = 3;
    int rc = DD_OK;
    for (int i = 0; i < 2 && !rc; i++) {
        rc = api_host_get(ctx, API_HOST_RING + i, slot, &up[i], err);
        if (!rc)
            rc = api_host_get(ctx, API_HOST_DOWN + i, slot, &down[i], err);
    }
    return rc;
}

/* Every staged copy in flight waited for and forgotten; rc kept when set
 * (the wait's own failure then goes to a scratch message). */
static int rows_drain(dd_plan *p, int rc, dd_err *err)
{
    dd_engine *e = &p->ctx->eng;
    dd_err later = {{0}};
    int rc2 = e->ops->wait_copies(e, rc ? &later : err);
    p->rows_used = p->rows_put;
    p->take_on = 0;
    p->take_host = NULL;
    return rc ? rc : rc2;
}

/* Rows [r0, r0 + rows) inside block `which`: its address and columns. */
static int rows_at(dd_plan *p, int which, int64_t r0, int64_t rows, char **at, int64_t *cols,
                   dd_err *err)
{
    int64_t R;
    char *b = plan_block(p, which, &R, cols);
    if (r0 < 0 || rows < 0 || r0 > R || rows > R - r0)
        return dd_fail(err, DD_EUSAGE, "rank %d: rows [%lld, %lld) are not inside its %lld rows",
                       p->ctx->rank, (long long)r0, (long long)(r0 + rows), (long long)R);
    *at = b + (size_t)(r0 * *cols) * dd_elsize(p->t);
    return DD_OK;
}

/* Bytes that `rows` rows of `cols` elements at pitch ld span. */
static size_t rows_extent(int64_t rows, int64_t cols, int64_t ld, size_t es)
{
    return rows > 0 && cols > 0 ? ((size_t)(rows - 1) * (size_t)ld + (size_t)cols) * es : 0;
}

/* Whether [host, host + bytes) (bytes > 0) lies in one of the plan's
 * dd_plan_host_alloc buffers. */
static int in_host_buf(const dd_plan *p, const void *host, size_t bytes)
{
    const char *h = host;
    int in = 0;
    pthread_mutex_lock((pthread_mutex_t *)&p->hmu);
    for (int i = 0; i < DD_PLAN_HOST_BUFS && bytes && !in; i++) {
        const char *b = p->hbuf[i].p;
        in = b && p->hbuf[i].bytes && h >= b && (size_t)(h - b) <= p->hbuf[i].bytes &&
             bytes <= p->hbuf[i].bytes - (size_t)(h - b);
    }
    pthread_mutex_unlock((pthread_mutex_t *)&p->hmu);
    return in;
}

/* Touches only the buffer table (under hmu) and the engine's host_alloc,
 * which any thread may call: the caller may allocate on a thread of its
 * own while the plan's other calls run (the pipeline does, during op(B)'s
 * read).  Its message goes to the plan's context only from the thread
 * that made the plan's other calls, so it stays local here. */
dd_status dd_plan_host_alloc(dd_plan *p, size_t bytes, void **host)
{
    if (!p || !host)
        return DD_ERROR_USAGE;
    *host = NULL;
    if (!p->allocated || bytes == 0)
        return DD_ERROR_USAGE;
    pthread_mutex_lock(&p->hmu);
    int i = 0;
    while (i < DD_PLAN_HOST_BUFS && p->hbuf[i].p)
        i++;
    if (i < DD_PLAN_HOST_BUFS)
        p->hbuf[i].p = (char *)1; /* taken while the allocation runs unlocked */
    pthread_mutex_unlock(&p->hmu);
    if (i == DD_PLAN_HOST_BUFS)
        return DD_ERROR_USAGE;
    dd_err local = {{0}};
    void *m = NULL;
    int rc = p->ctx->eng.ops->host_alloc(&p->ctx->eng, bytes, &m, &local);
    pthread_mutex_lock(&p->hmu);
    p->hbuf[i].p = rc ? NULL : m;
    p->hbuf[i].bytes = rc ? 0 : bytes;
    pthread_mutex_unlock(&p->hmu);
    if (rc)
        return api_status(rc);
    *host = m;
    return DD_SUCCESS;
}

void dd_plan_host_release(dd_plan *p, void *host)
{
    if (!p || !host)
        return;
    for (int i = 0; i < DD_PLAN_HOST_BUFS; i++)
        if (p->hbuf[i].p == host && p->hbuf[i].bytes) {
            dd_engine *e = &p->ctx->eng;
            dd_err ignored = {{0}}; /* no copy in flight lands in freed memory */
            e->ops->wait_copies(e, &ignored);
            p->take_host = NULL;
            p->take_on = 0;
            e->ops->host_free(e, host);
            p->hbuf[i].p = NULL;
            p->hbuf[i].bytes = 0;
        }
}

/* dd_plan_put_rows straight from dd_plan_host_alloc's memory: one upload
 * of the rows on DD_Q_UP and the band's mark, no slot and no host copy. */
static int put_direct(dd_plan *p, char *at, int64_t rows, int64_t cols, const void *host,
                      int64_t ld, dd_err *err)
{
    dd_engine *e = &p->ctx->eng;
    size_t es = dd_elsize(p->t), row = (size_t)cols * es;
    int rc = rows && cols ? e->ops->upload_async(e, at, row, host, (size_t)ld * es, row, rows, err)
                          : DD_OK;
    if (!rc && p->rows_put == 1 && dd_fault("pipe-stage"))
        rc = dd_fail(err, DD_EFAIL, "injected fault staging the second band of A on rank %d",
                     p->ctx->rank);
    if (!rc)
        rc = e->ops->mark(e, DD_Q_UP, RW_BAND + (int)(p->rows_put % 2), err);
    if (!rc)
        p->rows_put++;
    return rc ? rows_drain(p, rc, err) : rc;
}

dd_status dd_plan_put_rows(dd_plan *p, int64_t r0, int64_t rows, const void *host, int64_t ld)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err;
    int rc = plan_enter(p, &err);
    dd_engine *e = &p->ctx->eng;
    char *at = NULL;
    int64_t cols = 0, per = 1;
    void *up[2], *down[2];
    if (!rc)
        rc = rows_at(p, DD_OPERAND_A, r0, rows, &at, &cols, err);
    if (!rc && (ld < cols || (rows && cols && !host)))
        rc = dd_fail(err, DD_EUSAGE, "dd_plan_put_rows: host is NULL or ld %lld < %lld columns",
                     (long long)ld, (long long)cols);
    if (!rc && p->rows_put - p->rows_used >= 2)
        rc = dd_fail(err, DD_EUSAGE,
                     "dd_plan_put_rows: two puts already wait for their multiplies");
    if (!rc && in_host_buf(p, host, rows_extent(rows, cols, ld, dd_elsize(p->t))))
        return api_status(put_direct(p, at, rows, cols, host, ld, err));
    if (!rc)
        rc = rows_slots(p, cols, up, down, &per, err);
    if (rc)
        return api_status(rc);
    size_t es = dd_elsize(p->t), row = (size_t)cols * es;
    for (int64_t k = 0; k < rows && cols && !rc; k += per) {
        int64_t n = rows - k < per ? rows - k : per;
        int s = (int)(p->rows_piece++ % 2);
        rc = e->ops->reached(e, RW_UP + s, err); /* the slot's last upload is done */
        if (rc)
            break;
        api_copy_runs(up[s], row, (const char *)host + (size_t)(k * ld) * es, (size_t)ld * es,
                      row, n, api_move_threads(p->ctx, n, cols));
        rc = e->ops->upload_async(e, at + (size_t)(k * cols) * es, row, up[s], row, row, n, err);
        if (!rc)
            rc = e->ops->mark(e, DD_Q_UP, RW_UP + s, err);
        if (!rc && p->rows_put == 1 && dd_fault("pipe-stage"))
            rc = dd_fail(err, DD_EFAIL, "injected fault staging the second band of A on rank %d",
                         p->ctx->rank);
    }
    if (!rc)
        rc = e->ops->mark(e, DD_Q_UP, RW_BAND + (int)(p->rows_put % 2), err);
    if (!rc)
        p->rows_put++;
    else
        rc = rows_drain(p, rc, err);
    return api_status(rc);
}

/* Piece k of the take under way down into download slot k % 2. */
static int take_piece(dd_plan *p, void *down[2], dd_err *err)
{
    dd_engine *e = &p->ctx->eng;
    char *at = NULL;
    int64_t cols = 0, k = p->take_queued, r = k * p->take_per;
    int64_t n = p->take_rows - r < p->take_per ? p->take_rows - r : p->take_per;
    int s = (int)(k % 2);
    int rc = rows_at(p, DD_OPERAND_C, p->take_r0 + r, n, &at, &cols, err);
    size_t row = (size_t)cols * dd_elsize(p->t);
    if (!rc)
        rc = e->ops->reached(e, RW_DOWN + s, err);
    if (!rc)
        rc = e->ops->download_side_async(e, down[s], row, at, row, row, n, err);
    if (!rc)
        rc = e->ops->mark(e, DD_Q_DOWN, RW_DOWN + s, err);
    p->take_queued++;
    return rc;
}

static int64_t take_pieces(const dd_plan *p)
{
    return (p->take_rows + p->take_per - 1) / p->take_per;
}

dd_status dd_plan_take_rows(dd_plan *p, int64_t r0, int64_t rows)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err;
    int rc = plan_enter(p, &err);
    dd_engine *e = &p->ctx->eng;
    char *at = NULL;
    int64_t cols = 0, per = 1;
    void *up[2], *down[2];
    if (!rc)
        rc = rows_at(p, DD_OPERAND_C, r0, rows, &at, &cols, err);
    if (!rc && p->take_on)
        rc = dd_fail(err, DD_EUSAGE, "dd_plan_take_rows: the last take is not ended");
    if (!rc)
        rc = rows_slots(p, cols, up, down, &per, err);
    if (rc)
        return api_status(rc);
    p->take_r0 = r0;
    p->take_rows = cols ? rows : 0;
    p->take_per = per;
    p->take_queued = 0;
    p->take_on = 1;
    /* behind the multiplies queued so far */
    rc = e->ops->mark(e, DD_Q_COMPUTE, RW_COMP, err);
    if (!rc)
        rc = e->ops->after(e, DD_Q_DOWN, RW_COMP, err);
    while (!rc && p->take_queued < 2 && p->take_queued < take_pieces(p))
        rc = take_piece(p, down, err);
    if (rc)
        rc = rows_drain(p, rc, err);
    return api_status(rc);
}

dd_status dd_plan_take_rows_to(dd_plan *p, int64_t r0, int64_t rows, void *host, int64_t ld)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err;
    int rc = plan_enter(p, &err);
    dd_engine *e = &p->ctx->eng;
    char *at = NULL;
    int64_t cols = 0;
    if (!rc)
        rc = rows_at(p, DD_OPERAND_C, r0, rows, &at, &cols, err);
    size_t es = dd_elsize(p->t), row = (size_t)cols * es, ext = rows_extent(rows, cols, ld, es);
    if (!rc && p->take_on)
        rc = dd_fail(err, DD_EUSAGE, "dd_plan_take_rows_to: the last take is not ended");
    if (!rc && (ld < cols || (ext && !in_host_buf(p, host, ext))))
        rc = dd_fail(err, DD_EUSAGE,
                     "dd_plan_take_rows_to: ld %lld < %lld columns, or the rows do not lie in "
                     "memory of dd_plan_host_alloc",
                     (long long)ld, (long long)cols);
    if (rc)
        return api_status(rc);
    p->take_r0 = r0;
    p->take_rows = ext ? rows : 0;
    p->take_on = 1;
    p->take_host = host;
    p->take_ld = ld;
    /* behind the multiplies queued so far, on DD_Q_DOWN */
    rc = e->ops->mark(e, DD_Q_COMPUTE, RW_COMP, err);
    if (!rc)
        rc = e->ops->after(e, DD_Q_DOWN, RW_COMP, err);
    if (!rc && ext)
        rc = e->ops->download_side_async(e, host, (size_t)ld * es, at, row, row, rows, err);
    if (!rc)
        rc = e->ops->mark(e, DD_Q_DOWN, RW_DOWN, err);
    if (rc)
        rc = rows_drain(p, rc, err);
    return api_status(rc);
}

/* dd_plan_take_rows_end of a dd_plan_take_rows_to: its download waited for. */
static int take_end_direct(dd_plan *p, void *host, int64_t ld, dd_err *err)
{
    int rc = host != p->take_host || ld != p->take_ld
                 ? dd_fail(err, DD_EUSAGE,
                           "dd_plan_take_rows_end: host and ld are not dd_plan_take_rows_to's")
                 : p->ctx->eng.ops->reached(&p->ctx->eng, RW_DOWN, err);
    if (rc)
        return rows_drain(p, rc, err);
    p->take_on = 0;
    p->take_host = NULL;
    return DD_OK;
}

dd_status dd_plan_take_rows_end(dd_plan *p, void *host, int64_t ld)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err;
    int rc = plan_enter(p, &err);
    dd_engine *e = &p->ctx->eng;
    int64_t R, cols = 0, per = 1;
    void *up[2], *down[2];
    plan_block(p, DD_OPERAND_C, &R, &cols);
    if (!rc && !p->take_on)
        rc = dd_fail(err, DD_EUSAGE, "dd_plan_take_rows_end: no take under way");
    if (!rc && p->take_host)
        return api_status(take_end_direct(p, host, ld, err));
    if (!rc && (ld < cols || (p->take_rows && !host)))
        rc = dd_fail(err, DD_EUSAGE,
                     "dd_plan_take_rows_end: host is NULL or ld %lld < %lld columns",
                     (long long)ld, (long long)cols);
    if (!rc)
        rc = rows_slots(p, cols, up, down, &per, err);
    if (rc)
        return api_status(p->take_on ? rows_drain(p, rc, err) : rc);
    size_t es = dd_elsize(p->t), row = (size_t)cols * es;
    for (int64_t k = 0; k < take_pieces(p) && !rc; k++) {
        int64_t r = k * p->take_per;
        int64_t n = p->take_rows - r < p->take_per ? p->take_rows - r : p->take_per;
        int s = (int)(k % 2);
        rc = e->ops->reached(e, RW_DOWN + s, err);
        if (rc)
            break;
        api_copy_runs((char *)host + (size_t)(r * ld) * es, (size_t)ld * es, down[s], row, row, n,
                      api_move_threads(p->ctx, n, cols));
        if (k + 2 < take_pieces(p)) /* the slot is free again: the piece after next */
            rc = take_piece(p, down, err);
    }
    if (rc)
        rc = rows_drain(p, rc, err);
    p->take_on = 0;
    return api_status(rc);
}

dd_status dd_plan_rows_drain(dd_plan *p)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err;
    int rc = plan_enter(p, &err);
    if (!p->ctx->eng_open)
        return api_status(rc);
    return api_status(rows_drain(p, rc, err));
}
