/* api_plan_stream.c — a plan's blocks between the caller's streams and
 * work memory (dd_plan_load, dd_plan_store in dgemm_dist_plan.h), and
 * sub-blocks between host memory and work memory (dd_plan_read,
 * dd_plan_write: element access, at the end).
 *
 * Where work memory is the host's (CPU), a block is filled and drained in
 * place.  On a GPU it goes in bands of rows through a ring of two pinned
 * host buffers: band i is filled into one while band i-1 is uploaded from
 * the other, and on the way out the download of band i+1 overlaps the
 * drain of band i.  The host holds two slots per rank (DD_RING_MIB each,
 * default 64), whatever the block's size: nothing is pinned that the plan
 * does not need, and pinning stays cheap.
 *
 * Every rank makes the same number of band calls (the most any rank needs;
 * some bands are empty), so a stream's I/O may be collective.
 *
 * A stream with trans holds the block's transpose: it is moved in bands of
 * its own rows, so a file sees the same pattern as an untransposed read,
 * and the engine turns each band on the way into the block's columns
 * (upload_t_async: on a GPU a contiguous copy and a transpose kernel, on
 * the CPU a cache-blocked transpose from one slot of scratch).  SUMMA and
 * the kernels only ever see op(A) and op(B) row-major. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "api_plan.h"
#include "dd_fault.h"

/* Blocks go through the ring on a GPU; on the CPU straight to and from
 * work memory, unless a test asks for the ring (DD_FAULT=stream-ring:*,
 * every rank: the GPU's band loop, run on host memory in CI). */
int plan_use_ring(const dd_plan *p)
{
    return !p->ctx->eng.ops->work_is_host || dd_fault("stream-ring");
}

int plan_ring_open(dd_plan *p, dd_err *err)
{
    dd_engine *e = &p->ctx->eng;
    int rc = DD_OK;
    p->ring_slot = api_ring_bytes();
    if (plan_use_ring(p))
        for (int i = 0; i < 2 && !rc; i++)
            rc = e->ops->host_alloc(e, p->ring_slot, &p->ring[i], err);
    if (!rc && !plan_use_ring(p) && p->transposed && !(p->tscratch = malloc(p->ring_slot)))
        rc = dd_fail(err, DD_ENOMEM, "out of host memory for a %.0f MiB transposition buffer",
                     (double)p->ring_slot / 1048576.0);
    return dd_agree(p->ctx->world, rc, err);
}

void plan_ring_close(dd_plan *p)
{
    dd_engine *e = &p->ctx->eng;
    for (int i = 0; i < 2; i++)
        if (p->ring[i])
            e->ops->host_free(e, p->ring[i]);
    p->ring[0] = p->ring[1] = NULL;
    free(p->tscratch);
    p->tscratch = NULL;
}

/* Band length (of n) and the band count every rank agrees to make; one band
 * moves at most a slot: `across` elements per unit of n. */
static int band_plan(dd_plan *p, int64_t n, int64_t across, int64_t *per, int64_t *count,
                     dd_err *err)
{
    size_t unit = (size_t)across * dd_elsize(p->t);
    if (!unit) /* nothing across: one band of nothing */
        *per = n > 0 ? n : 1;
    else
        *per = p->ring_slot / unit > 0 ? (int64_t)(p->ring_slot / unit) : 1;
    long long mine = n > 0 ? (n + *per - 1) / *per : 0, most = 0;
    int rc = dd_mpi_check(MPI_Allreduce(&mine, &most, 1, MPI_LONG_LONG, MPI_MAX, p->ctx->world),
                          "MPI_Allreduce of the band count", err);
    *count = most;
    if (!rc && unit > p->ring_slot)
        rc = dd_fail(err, DD_EUSAGE,
                     "one row of a block (%.1f MiB) is larger than a ring buffer (%.0f MiB): "
                     "raise DD_RING_MIB or use more ranks",
                     (double)unit / 1048576.0, (double)p->ring_slot / 1048576.0);
    return dd_agree(p->ctx->world, rc, err);
}

/* Band i: [r, r+h) of n, clipped. */
static void band(int64_t i, int64_t per, int64_t n, int64_t *r, int64_t *h)
{
    *r = i * per < n ? i * per : n;
    *h = n - *r < per ? n - *r : per;
}

/* One band call of the caller's stream: its status and message as ours. */
static int call(const dd_stream *s, void *band, int64_t r, int64_t h, int in, dd_err *err)
{
    char msg[DD_ERRLEN] = "";
    dd_status st =
        in ? s->fill(s, band, r, h, msg, sizeof msg) : s->drain(s, band, r, h, msg, sizeof msg);
    if (st == DD_SUCCESS)
        return DD_OK;
    return dd_fail(err, dd_code_of(st), "%s", *msg ? msg : dd_status_string(st));
}

static int stream_in(dd_plan *p, const dd_stream *src, int64_t rows, int64_t cols, void *work,
                     dd_err *err)
{
    dd_engine *e = &p->ctx->eng;
    int host = !plan_use_ring(p), tr = src->trans;
    if (host && !tr)
        return call(src, work, 0, rows, 1, err);
    size_t es = dd_elsize(p->t);
    int64_t n = tr ? cols : rows, per, count;
    int rc = band_plan(p, n, tr ? rows : cols, &per, &count, err);
    if (rc)
        return rc;
    /* every band call is made even after a failure: the reads may be collective */
    for (int64_t i = 0; i < count; i++) {
        int64_t r, h;
        band(i, per, n, &r, &h);
        void *slot = host ? p->tscratch : p->ring[i % 2];
        int rci = call(src, slot, r, h, 1, err);
        if (!rc)
            rc = rci;
        if (rc && !host) { /* nothing goes up any more: let what is in flight land */
            dd_err ignored = {{0}};
            e->ops->wait_copies(e, &ignored);
        }
        if (!rc && !host)
            rc = e->ops->wait_copies(e, err); /* band i-1 is up: its slot is free next */
        if (!rc)                              /* on the host: turned into the block's columns now */
            rc = api_band_up(e, work, rows, cols, tr, slot, r, h, es, err);
    }
    if (!rc && !host)
        rc = e->ops->wait_copies(e, err);
    return rc;
}

static int stream_out(dd_plan *p, const dd_stream *dst, int64_t rows, int64_t cols,
                      const void *work, dd_err *err)
{
    dd_engine *e = &p->ctx->eng;
    int host = !plan_use_ring(p), tr = dst->trans;
    if (host && !tr)
        return call(dst, (void *)work, 0, rows, 0, err);
    size_t es = dd_elsize(p->t);
    int64_t n = tr ? cols : rows, per, count, r, h;
    int rc = band_plan(p, n, tr ? rows : cols, &per, &count, err);
    if (rc)
        return rc;
    band(0, per, n, &r, &h);
    if (!host && count > 0)
        rc = api_band_down(e, p->ring[0], work, rows, cols, tr, r, h, es, err);
    for (int64_t i = 0; i < count; i++) {
        band(i, per, n, &r, &h);
        void *slot = host ? p->tscratch : p->ring[i % 2];
        if (host && !rc) /* turned out of the block's columns now */
            rc = api_band_down(e, slot, work, rows, cols, tr, r, h, es, err);
        if (!rc && !host)
            rc = e->ops->wait_copies(e, err); /* band i is down */
        else if (!host) { /* nothing more comes down: let what is in flight land */
            dd_err ignored = {{0}};
            e->ops->wait_copies(e, &ignored);
        }
        if (!rc && !host && i + 1 < count) {
            int64_t r1, h1;
            band(i + 1, per, n, &r1, &h1);
            rc = api_band_down(e, p->ring[(i + 1) % 2], work, rows, cols, tr, r1, h1, es, err);
        }
        int rci = call(dst, slot, r, h, 0, err);
        if (!rc)
            rc = rci;
    }
    return rc;
}

/* Arguments of a load or store, checked alike on every rank. */
static int stream_args(dd_plan *p, dd_operand which, const dd_stream *s, int in, dd_err *err)
{
    if (!p->allocated)
        return dd_fail(err, DD_EUSAGE, "the plan is not allocated (dd_plan_allocate)");
    if ((int)which < 0 || (int)which > 2)
        return dd_fail(err, DD_EUSAGE, "operand %d: must be DD_OPERAND_A, _B or _C", (int)which);
    if (!s || (in ? !s->fill : !s->drain))
        return dd_fail(err, DD_EUSAGE, "the stream has no %s function", in ? "fill" : "drain");
    if (s->trans && !p->transposed)
        return dd_fail(err, DD_EUSAGE,
                       "a transposed stream on a plan made without params.transposed");
    return DD_OK;
}

static dd_status move(dd_plan *p, dd_operand which, const dd_stream *s, int in)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err = plan_err(p);
    MPI_Comm w = p->ctx->world;
    int rc = stream_args(p, which, s, in, err);
    /* trans and the operand alike on every rank: the largest of each and of
     * its negation tell whether any two ranks differ */
    int tr = s && s->trans;
    int v[4] = {tr, !tr, (int)which, -(int)which}, most[4] = {0, 0, 0, 0};
    int rc2 = dd_mpi_check(MPI_Allreduce(v, most, 4, MPI_INT, MPI_MAX, w), "MPI_Allreduce", err);
    rc = rc ? rc : rc2;
    if (!rc && most[0] && most[1])
        rc = dd_fail(err, DD_EUSAGE, "the stream's trans differs between ranks: it must be alike");
    if (!rc && most[2] != -most[3])
        rc = dd_fail(err, DD_EUSAGE,
                     "the operand differs between ranks (%d here, from %d to %d): every rank "
                     "moves the same block",
                     (int)which, -most[3], most[2]);
    if ((rc = dd_agree(w, rc, err)))
        return api_status(rc);
    int64_t rows, cols;
    void *work = plan_block(p, which, &rows, &cols);
    if (in)
        rc = stream_in(p, s, rows, cols, work, err);
    else
        rc = stream_out(p, s, rows, cols, work, err);
    if (in) {
        p->prepared = 0; /* new data: alpha and beta are not applied to it yet */
        p->s.b_kept = 0;
    }
    return api_status(dd_agree(w, rc, err));
}

dd_status dd_plan_load(dd_plan *p, dd_operand which, const dd_stream *src)
{
    return move(p, which, src, 1);
}

dd_status dd_plan_store(dd_plan *p, dd_operand which, const dd_stream *dst)
{
    return move(p, which, dst, 0);
}

/* rows × cols at (i, j) of block `which`, checked against its shape. */
static int sub_block(dd_plan *p, dd_operand which, int64_t i, int64_t j, int64_t rows, int64_t cols,
                     int64_t ld, char **at, int64_t *pitch, dd_err *err)
{
    int64_t R, C;
    if ((int)which < 0 || (int)which > 2 || !p->allocated)
        return dd_fail(err, DD_EUSAGE, "no such block (operand %d, or the plan not allocated)",
                       (int)which);
    char *b = plan_block(p, which, &R, &C);
    if (i < 0 || j < 0 || rows < 0 || cols < 0 || i > R || j > C || rows > R - i || cols > C - j ||
        ld < cols)
        return dd_fail(err, DD_EUSAGE,
                       "%lldx%lld at (%lld, %lld) with ld %lld is not inside the %lldx%lld block",
                       (long long)rows, (long long)cols, (long long)i, (long long)j, (long long)ld,
                       (long long)R, (long long)C);
    size_t es = dd_elsize(p->t);
    *at = b + (size_t)(i * C + j) * es;
    *pitch = C;
    return DD_OK;
}

static dd_status move_sub(dd_plan *p, dd_operand which, int64_t i, int64_t j, int64_t rows,
                          int64_t cols, void *host, int64_t ld, int out)
{
    if (!p)
        return DD_ERROR_USAGE;
    dd_err *err = plan_err(p);
    dd_engine *e = &p->ctx->eng;
    char *at = NULL;
    int64_t pitch = 0;
    int rc = sub_block(p, which, i, j, rows, cols, ld, &at, &pitch, err);
    if (!rc && rows && cols && !host)
        rc = dd_fail(err, DD_EUSAGE, "host is NULL for a %lldx%lld sub-block", (long long)rows,
                     (long long)cols);
    if (!rc && !api_span_fits(rows, cols, ld, dd_elsize(p->t)))
        rc = dd_fail(err, DD_EUSAGE,
                     "ld %lld: %lld rows ld apart in host memory would span more than 2^63 bytes",
                     (long long)ld, (long long)rows);
    if (rc || !rows || !cols)
        return api_status(rc);
    size_t es = dd_elsize(p->t);
    size_t w = (size_t)cols * es, hp = (size_t)ld * es, wp = (size_t)pitch * es;
    if (out)
        rc = e->ops->download_async(e, host, hp, at, wp, w, rows, err);
    else
        rc = e->ops->upload_async(e, at, wp, host, hp, w, rows, err);
    if (!out && which == DD_OPERAND_B)
        p->s.b_kept = 0; /* B's kept slices (summa_rows_slices) are made again */
    if (!rc)
        rc = e->ops->wait_copies(e, err);
    return api_status(rc);
}

dd_status dd_plan_read(dd_plan *p, dd_operand which, int64_t i, int64_t j, int64_t rows,
                       int64_t cols, void *host, int64_t ld)
{
    return move_sub(p, which, i, j, rows, cols, host, ld, 1);
}

dd_status dd_plan_write(dd_plan *p, dd_operand which, int64_t i, int64_t j, int64_t rows,
                        int64_t cols, const void *host, int64_t ld)
{
    return move_sub(p, which, i, j, rows, cols, (void *)host, ld, 0);
}
