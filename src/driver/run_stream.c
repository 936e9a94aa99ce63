/* run_stream.c — the file side of the library's streams (run_ctx.h): the
 * library asks for bands of rows of a stored sub-block and moves them
 * between its ring of pinned buffers and work memory (dd_plan_load,
 * dd_plan_store); here each band is read from or written to the dataset.
 * Every rank gets the same number of band calls, so collective I/O stays
 * collective; a band is written in pieces of at most IO_PIECE_BYTES (io.h),
 * again the same number on every rank. */
#include <stdio.h>
#include <string.h>

#include "run_ctx.h"

run_file run_file_at(run_ctx *c, dd_io *io, const char *dset, dd_range r, dd_range k, int trans)
{
    run_file f = {c, io, dset, r.start, k.start, k.len, 0};
    if (trans) { /* the dataset holds rows k, columns r */
        f.row0 = k.start;
        f.col0 = r.start;
        f.cols = r.len;
        f.trans = 1;
    }
    return f;
}

/* An I/O layer's failure as the stream's status and message. */
static dd_status band_status(int rc, const dd_err *e, char *msg, size_t len)
{
    if (rc != DD_OK)
        snprintf(msg, len, "%s", e->msg);
    return (dd_status)dd_status_of(rc);
}

static dd_status fill(const dd_stream *s, void *band, int64_t r, int64_t h, char *msg, size_t len)
{
    const run_file *f = s->arg;
    dd_err e = {{0}};
    int rc = f->io->ops->read_block(f->io, f->dset, f->c->type, f->row0 + r, h, f->col0, f->cols,
                                    band, &e);
    return band_status(rc, &e, msg, len);
}

static dd_status drain(const dd_stream *s, const void *band, int64_t r, int64_t h, char *msg,
                       size_t len)
{
    const run_file *f = s->arg;
    dd_err e = {{0}};
    int rc = io_write_pieces(f->io, f->dset, f->c->type, f->row0 + r, h, f->col0, f->cols, band,
                             &e); /* a signal's handler runs between pieces */
    return band_status(rc, &e, msg, len);
}

dd_stream run_file_stream(run_file *f)
{
    dd_stream s = {fill, drain, f, f->trans};
    return s;
}
