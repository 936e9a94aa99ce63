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
 * some bands are empty), so collective I/O stays collective.
 *
 * A dataset stored transposed (--transa/--transb T, --order col) is moved
 * in bands of its own rows, so the file sees the same pattern as an
 * untransposed read (each band row a contiguous run of the block's width),
 * and the engine turns each band on the way into the work block's columns
 * (upload_t_async: on a GPU a contiguous copy and a transpose kernel, on the
 * CPU a cache-blocked transpose from one slot of scratch); C goes out the
 * same way.  SUMMA and the kernels only ever see
 * op(A) and op(B) row-major: no transposed multiply exists. */
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "dd_fault.h"
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

/* Blocks go through the ring on a GPU; on the CPU straight to and from
 * work memory, unless a test asks for the ring (DD_FAULT=stream-ring:*,
 * every rank: the GPU's band loop, run on host memory in CI). */
static int use_ring(const run_ctx *c)
{
    return !c->eng.ops->work_is_host || dd_fault("stream-ring");
}

size_t run_ring_bytes(const run_ctx *c)
{
    if (use_ring(c))
        return 2 * ring_slot_bytes();
    return c->tA || c->tB || c->tC ? ring_slot_bytes() : 0; /* the turning scratch */
}

size_t run_device_scratch_bytes(const run_ctx *c)
{
    return !c->eng.ops->work_is_host && (c->tA || c->tB || c->tC) ? ring_slot_bytes() : 0;
}

/* The ring (GPU engines), or on the CPU a scratch to turn transposed
 * datasets through; ring_slot bounds every band. */
int run_ring_open(run_ctx *c, dd_err *err)
{
    int rc = DD_OK;
    c->ring_slot = ring_slot_bytes();
    if (use_ring(c))
        for (int i = 0; i < 2 && !rc; i++)
            rc = c->eng.ops->host_alloc(&c->eng, c->ring_slot, &c->ring[i], err);
    if (!rc && !use_ring(c) && (c->tA || c->tB || c->tC) && !(c->tscratch = malloc(c->ring_slot)))
        rc = dd_fail(err, DD_ENOMEM, "out of host memory for a %.0f MiB transposition buffer",
                     (double)c->ring_slot / 1048576.0);
    return dd_agree(c->world, rc, err);
}

void run_ring_close(run_ctx *c)
{
    for (int i = 0; i < 2; i++)
        if (c->ring[i])
            c->eng.ops->host_free(&c->eng, c->ring[i]);
    c->ring[0] = c->ring[1] = NULL;
    free(c->tscratch);
    c->tscratch = NULL;
}

/* Band length (of n) and the band count every rank agrees to make; one band
 * moves at most a slot: `across` elements per unit of n. */
static int band_plan(run_ctx *c, int64_t n, int64_t across, int64_t *per, int64_t *count,
                     dd_err *err)
{
    size_t unit = (size_t)across * dd_elsize(c->type);
    if (!unit) /* nothing across: one band of nothing */
        *per = n > 0 ? n : 1;
    else
        *per = c->ring_slot / unit > 0 ? (int64_t)(c->ring_slot / unit) : 1;
    long long mine = n > 0 ? (n + *per - 1) / *per : 0, most = 0;
    int rc = dd_mpi_check(MPI_Allreduce(&mine, &most, 1, MPI_LONG_LONG, MPI_MAX, c->world),
                          "MPI_Allreduce of the band count", err);
    *count = most;
    if (!rc && unit > c->ring_slot)
        rc = dd_fail(err, DD_EUSAGE,
                     "one row of a block (%.1f MiB) is larger than a ring buffer (%.0f MiB): "
                     "raise DD_RING_MIB or use more ranks",
                     (double)unit / 1048576.0, (double)c->ring_slot / 1048576.0);
    return dd_agree(c->world, rc, err);
}

/* Band i: [r, r+h) of n, clipped. */
static void band(int64_t i, int64_t per, int64_t n, int64_t *r, int64_t *h)
{
    *r = i * per < n ? i * per : n;
    *h = n - *r < per ? n - *r : per;
}

static int fill_from_file(const run_source *s, void *buf, int64_t r, int64_t h, dd_err *err)
{
    dd_io *io = s->io;
    return io->ops->read_block(io, s->dset, s->c->type, s->row0 + r, h, s->col0, s->cols, buf, err);
}

static int drain_to_file(const run_sink *s, const void *buf, int64_t r, int64_t h, dd_err *err)
{
    dd_io *io = s->io;
    return io->ops->write_block(io, s->dset, s->c->type, s->row0 + r, h, s->col0, s->cols, buf,
                                err);
}

run_source run_file_source(run_ctx *c, dd_io *io, const char *dset, dd_range r, dd_range k,
                           int trans)
{
    run_source s = {fill_from_file, c, io, dset, r.start, k.start, k.len, 0};
    if (trans) { /* the dataset holds rows k, columns r */
        s.row0 = k.start;
        s.col0 = r.start;
        s.cols = r.len;
        s.trans = 1;
    }
    return s;
}

run_sink run_file_sink(run_ctx *c, dd_io *io, const char *dset, dd_range r, dd_range k, int trans)
{
    run_sink s = {drain_to_file, c, io, dset, r.start, k.start, k.len, 0};
    if (trans) {
        s.row0 = k.start;
        s.col0 = r.start;
        s.cols = r.len;
        s.trans = 1;
    }
    return s;
}

/* Band [r, r+h) of n from a host buffer (a slot) into the work block
 * (rows×cols): its rows, or with trans its columns, the band holding the
 * stored h×rows and the engine turning it on the way. */
static int band_up(dd_engine *e, void *work, const void *band, int64_t rows, int64_t cols,
                   int trans, int64_t r, int64_t h, size_t es, dd_err *err)
{
    size_t pitch = (size_t)cols * es;
    if (trans)
        return e->ops->upload_t_async(e, (char *)work + (size_t)r * es, cols, band, h, rows, es,
                                      err);
    return e->ops->upload_async(e, (char *)work + (size_t)r * pitch, pitch, band, pitch, pitch, h,
                                err);
}

static int band_down(dd_engine *e, void *band, const void *work, int64_t rows, int64_t cols,
                     int trans, int64_t r, int64_t h, size_t es, dd_err *err)
{
    size_t pitch = (size_t)cols * es;
    if (trans)
        return e->ops->download_t_async(e, band, (const char *)work + (size_t)r * es, cols, h, rows,
                                        es, err);
    return e->ops->download_async(e, band, pitch, (const char *)work + (size_t)r * pitch, pitch,
                                  pitch, h, err);
}

int run_stream_in(run_ctx *c, const run_source *src, int64_t rows, int64_t cols, void *work,
                  dd_err *err)
{
    dd_engine *e = &c->eng;
    int host = !use_ring(c), tr = src->trans;
    if (host && !tr)
        return src->fill(src, work, 0, rows, err);
    size_t es = dd_elsize(c->type);
    int64_t n = tr ? cols : rows, per, count;
    int rc = band_plan(c, n, tr ? rows : cols, &per, &count, err);
    if (rc)
        return rc;
    /* every band call is made even after a failure: the reads may be collective */
    for (int64_t i = 0; i < count; i++) {
        int64_t r, h;
        band(i, per, n, &r, &h);
        void *slot = host ? c->tscratch : c->ring[i % 2];
        int rci = src->fill(src, slot, r, h, err);
        if (!rc)
            rc = rci;
        if (!rc && !host)
            rc = e->ops->wait_copies(e, err); /* band i-1 is up: its slot is free next */
        if (!rc)                              /* on the host: turned into the block's columns now */
            rc = band_up(e, work, slot, rows, cols, tr, r, h, es, err);
    }
    if (!rc && !host)
        rc = e->ops->wait_copies(e, err);
    return rc;
}

int run_stream_out(run_ctx *c, const run_sink *dst, int64_t rows, int64_t cols, const void *work,
                   dd_err *err)
{
    dd_engine *e = &c->eng;
    int host = !use_ring(c), tr = dst->trans;
    if (host && !tr)
        return dst->drain(dst, work, 0, rows, err);
    size_t es = dd_elsize(c->type);
    int64_t n = tr ? cols : rows, per, count, r, h;
    int rc = band_plan(c, n, tr ? rows : cols, &per, &count, err);
    if (rc)
        return rc;
    band(0, per, n, &r, &h);
    if (!host && count > 0)
        rc = band_down(e, c->ring[0], work, rows, cols, tr, r, h, es, err);
    for (int64_t i = 0; i < count; i++) {
        band(i, per, n, &r, &h);
        void *slot = host ? c->tscratch : c->ring[i % 2];
        if (host && !rc) /* turned out of the block's columns now */
            rc = band_down(e, slot, work, rows, cols, tr, r, h, es, err);
        if (!rc && !host)
            rc = e->ops->wait_copies(e, err); /* band i is down */
        if (!rc && !host && i + 1 < count) {
            int64_t r1, h1;
            band(i + 1, per, n, &r1, &h1);
            rc = band_down(e, c->ring[(i + 1) % 2], work, rows, cols, tr, r1, h1, es, err);
        }
        int rci = dst->drain(dst, slot, r, h, err);
        if (!rc)
            rc = rci;
    }
    return rc;
}
