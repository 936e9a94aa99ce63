/* run_stream.c — blocks between the files and work memory through a small
 * ring of pinned host buffers (run_ctx.h).
 *
 * On an engine whose work memory is the host's (CPU), blocks are read into
 * and written from work memory directly.  On a GPU a block goes in bands of
 * rows: band i is read into one ring slot while band i-1 is uploaded from
 * the other, and C comes back the same way, its download of band i+1
 * overlapping the write of band i.  The host holds two slots per rank
 * (DD_RING_MIB each, default 64), whatever the block's size: nothing is
 * pinned that the run does not need, and pinning stays cheap.
 *
 * Every rank makes the same number of band calls (the most any rank needs;
 * some bands are empty), so collective I/O stays collective. */
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "rng.h"
#include "run_ctx.h"

static size_t ring_slot_bytes(void)
{
    const char *v = getenv("DD_RING_MIB");
    long mib = v ? strtol(v, NULL, 10) : 64;
    if (mib < 1 || mib > 4096)
        mib = 64;
    return (size_t)mib << 20;
}

size_t run_ring_bytes(const run_ctx *c)
{
    return c->eng.ops->work_is_host ? 0 : 2 * ring_slot_bytes();
}

int run_ring_open(run_ctx *c, dd_err *err)
{
    int rc = DD_OK;
    if (!c->eng.ops->work_is_host) {
        c->ring_slot = ring_slot_bytes();
        for (int i = 0; i < 2 && !rc; i++)
            rc = c->eng.ops->host_alloc(&c->eng, c->ring_slot, &c->ring[i], err);
    }
    return dd_agree(c->world, rc, err);
}

void run_ring_close(run_ctx *c)
{
    for (int i = 0; i < 2; i++)
        if (c->ring[i])
            c->eng.ops->host_free(&c->eng, c->ring[i]);
    c->ring[0] = c->ring[1] = NULL;
}

/* Rows per band, and the band count every rank agrees to make. */
static int band_plan(run_ctx *c, int64_t rows, int64_t cols, int64_t *per, int64_t *count,
                     dd_err *err)
{
    size_t row_bytes = (size_t)cols * dd_elsize(c->type);
    *per = row_bytes && c->ring_slot / row_bytes > 0 ? (int64_t)(c->ring_slot / row_bytes) : 1;
    long long mine = rows > 0 ? (rows + *per - 1) / *per : 0, most = 0;
    int rc = dd_mpi_check(MPI_Allreduce(&mine, &most, 1, MPI_LONG_LONG, MPI_MAX, c->world),
                          "MPI_Allreduce of the band count", err);
    *count = most;
    if (!rc && row_bytes > c->ring_slot)
        rc = dd_fail(err, DD_EUSAGE,
                     "one row of a block (%.1f MiB) is larger than a ring buffer (%.0f MiB): "
                     "raise DD_RING_MIB or use more ranks",
                     (double)row_bytes / 1048576.0, (double)c->ring_slot / 1048576.0);
    return dd_agree(c->world, rc, err);
}

/* Rows [r, r+h) of band i, clipped to the block. */
static void band(int64_t i, int64_t per, int64_t rows, int64_t *r, int64_t *h)
{
    *r = i * per < rows ? i * per : rows;
    *h = rows - *r < per ? rows - *r : per;
}

int run_stream_in(run_ctx *c, const run_source *src, int64_t rows, int64_t cols, void *work,
                  dd_err *err)
{
    dd_engine *e = &c->eng;
    if (e->ops->work_is_host)
        return src->fill(src, work, 0, rows, err);
    size_t es = dd_elsize(c->type);
    int64_t per, count;
    int rc = band_plan(c, rows, cols, &per, &count, err);
    if (rc)
        return rc;
    /* every band call is made even after a failure: the reads may be collective */
    for (int64_t i = 0; i < count; i++) {
        int64_t r, h;
        band(i, per, rows, &r, &h);
        void *slot = c->ring[i % 2];
        int rci = src->fill(src, slot, r, h, err);
        if (!rc)
            rc = rci;
        if (!rc)
            rc = e->ops->wait_copies(e, err); /* band i-1 is up: its slot is free next */
        if (!rc)
            rc = e->ops->upload_async(e, (char *)work + (size_t)(r * cols) * es, (size_t)cols * es,
                                      slot, (size_t)cols * es, (size_t)cols * es, h, err);
    }
    if (!rc)
        rc = e->ops->wait_copies(e, err);
    return rc;
}

int run_stream_out(run_ctx *c, const run_sink *dst, int64_t rows, int64_t cols, const void *work,
                   dd_err *err)
{
    dd_engine *e = &c->eng;
    if (e->ops->work_is_host)
        return dst->drain(dst, work, 0, rows, err);
    size_t es = dd_elsize(c->type), pitch = (size_t)cols * es;
    int64_t per, count, r, h;
    int rc = band_plan(c, rows, cols, &per, &count, err);
    if (rc)
        return rc;
    band(0, per, rows, &r, &h);
    if (count > 0)
        rc = e->ops->download_async(e, c->ring[0], pitch, (const char *)work + (size_t)r * pitch,
                                    pitch, pitch, h, err);
    for (int64_t i = 0; i < count; i++) {
        if (!rc)
            rc = e->ops->wait_copies(e, err); /* band i is down */
        if (!rc && i + 1 < count) {
            int64_t r1, h1;
            band(i + 1, per, rows, &r1, &h1);
            rc = e->ops->download_async(e, c->ring[(i + 1) % 2], pitch,
                                        (const char *)work + (size_t)r1 * pitch, pitch, pitch, h1,
                                        err);
        }
        band(i, per, rows, &r, &h);
        int rci = dst->drain(dst, c->ring[i % 2], r, h, err);
        if (!rc)
            rc = rci;
    }
    return rc;
}
