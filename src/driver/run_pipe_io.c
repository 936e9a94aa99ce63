/* run_pipe_io.c — the file-to-file pipeline's I/O threads (run_pipe.h):
 * the reader of op(A)'s bands, the writer of C's, and their hand-over with
 * the main thread (src/driver/run_pipe.c) under one lock.  They call the
 * direct I/O path's read_block and write_block only: no MPI, no HDF5
 * beyond the reader's fallback read. */
#include <stdlib.h>
#include <string.h>

#include "dd_fault.h"
#include "run_pipe.h"
#include "timer.h"

/* Where band i (rows from r0) of op(A) is read to, and of C written from. */
static void *a_slot(const pipe_t *p, int64_t i, int64_t r0)
{
    return p->hA ? p->hA + (size_t)(r0 * p->Kq) * p->es : p->abuf[i % p->na];
}

static void *c_slot(const pipe_t *p, int64_t i, int64_t r0)
{
    return p->hC ? p->hC + (size_t)(r0 * p->Nq) * p->es : p->cbuf[i % 2];
}

static void scale_band(void *buf, size_t n, dd_dtype t, double alpha)
{
    if (alpha == 1)
        return;
    if (t == DD_F64) {
        double *x = buf;
        for (size_t i = 0; i < n; i++)
            x[i] *= alpha;
    } else {
        float *x = buf, f = (float)alpha;
        for (size_t i = 0; i < n; i++)
            x[i] *= f;
    }
}

/* Rows of a band written in pieces of at most IO_PIECE_BYTES (io.h), so a
 * signal's handler runs between them, as io_write_pieces does; without its
 * agreed piece count, which needs MPI (the direct path's pwrite makes no
 * collective call). */
static int write_band(pipe_t *p, int64_t r0, int64_t h, const void *buf, dd_err *err)
{
    size_t row = (size_t)p->Nq * p->es;
    int64_t per = row && IO_PIECE_BYTES / row > 0 ? (int64_t)(IO_PIECE_BYTES / row) : 1;
    int rc = DD_OK;
    for (int64_t r = 0; r < h && !rc; r += per) {
        int64_t n = h - r < per ? h - r : per;
        rc = p->out->ops->write_block(p->out, p->cdset, p->c->type, p->crow0 + r0 + r, n,
                                      p->ccol0, p->Nq, (const char *)buf + (size_t)r * row, err);
    }
    return rc;
}

/* An I/O thread: the reader reads each band of op(A) once a slot is free
 * (p->na ahead of the main thread at most), the writer writes each band of C
 * once it is given; they run at once (a band's write and the next bands'
 * reads overlap).  Either ends at its last band, at stop, or once either
 * failed. */
static void io_loop(pipe_t *p, int reader)
{
    int64_t next_read = reader ? 0 : p->nb, next_write = reader ? p->nb : 0;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->stop && !p->io_rc && !(next_read < p->nb && next_read < p->a_used + p->na) &&
               !(next_write < p->nb && next_write < p->c_given))
            pthread_cond_wait(&p->cv, &p->mu);
        if (p->stop || p->io_rc || (next_read >= p->nb && next_write >= p->nb))
            break;
        int reading = reader;
        int64_t i = reading ? next_read : next_write, r0, h;
        pthread_mutex_unlock(&p->mu);
        band_rows(p, i, &r0, &h);
        dd_err e;
        dd_err_clear(&e);
        double t0 = dd_now();
        int rc;
        if (reading) {
            rc = p->in->ops->read_block(p->in, p->adset, p->c->type, p->arow0 + r0, h, p->acol0,
                                        p->Kq, a_slot(p, i, r0), &e);
            if (!rc && i == p->nb / 2 && dd_fault("pipe-read"))
                rc = dd_fail(&e, DD_EIO, "injected fault reading band %lld of A on rank %d",
                             (long long)i, p->c->rank);
            if (!rc)
                scale_band(a_slot(p, i, r0), (size_t)(h * p->Kq), p->c->type, p->alpha);
        } else {
            rc = write_band(p, r0, h, c_slot(p, i, r0), &e);
            if (!rc && i == p->nb / 2 && dd_fault("pipe-write"))
                rc = dd_fail(&e, DD_EIO, "injected fault writing band %lld of C on rank %d",
                             (long long)i, p->c->rank);
        }
        double t1 = dd_now();
        pthread_mutex_lock(&p->mu);
        *(reading ? &p->read_sec : &p->write_sec) += t1 - t0;
        if (p->nops < 2 * p->nb) {
            double *op = p->ops[p->nops++];
            op[0] = reading;
            op[1] = t0;
            op[2] = t1;
        }
        if (rc) {
            if (!p->io_rc) {
                p->io_rc = rc;
                p->io_err = e;
            }
            pthread_cond_broadcast(&p->cv);
            break;
        }
        if (reading)
            p->a_read = ++next_read;
        else
            p->c_written = ++next_write;
        pthread_cond_broadcast(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
}

void *pipe_reader(void *arg)
{
    io_loop(arg, 1);
    return NULL;
}

void *pipe_writer(void *arg)
{
    io_loop(arg, 0);
    return NULL;
}

/* The main thread waits until `*count` passes `need` or an I/O thread
 * failed; returns the seconds waited (exposed I/O), kept as an interval. */
double pipe_wait(pipe_t *p, const int64_t *count, int64_t need)
{
    double t0 = dd_now();
    pthread_mutex_lock(&p->mu);
    int waited = 0;
    while (*count < need && !p->io_rc) {
        pthread_cond_wait(&p->cv, &p->mu);
        waited = 1;
    }
    double t1 = dd_now();
    if (waited && p->nwaits < 2 * p->nb + 2) {
        p->waits[p->nwaits][0] = count == &p->a_read;
        p->waits[p->nwaits][1] = t0;
        p->waits[p->nwaits++][2] = t1;
    }
    pthread_mutex_unlock(&p->mu);
    return t1 - t0;
}

/* Seconds of the I/O threads' reads (reading 1) or writes (0) during which
 * the main thread was not waiting for a read (a write): hidden behind the
 * multiply, the band moves and the other I/O thread's work. */
double pipe_hidden(const pipe_t *p, int reading)
{
    double hidden = 0;
    for (int64_t i = 0; i < p->nops; i++) {
        const double *op = p->ops[i];
        if ((int)op[0] != reading)
            continue;
        double h = op[2] - op[1];
        for (int64_t j = 0; j < p->nwaits; j++) {
            if ((int)p->waits[j][0] != reading)
                continue;
            double a = op[1] > p->waits[j][1] ? op[1] : p->waits[j][1];
            double b = op[2] < p->waits[j][2] ? op[2] : p->waits[j][2];
            if (b > a)
                h -= b - a;
        }
        hidden += h > 0 ? h : 0;
    }
    return hidden;
}

void pipe_publish(pipe_t *p, int64_t *count, int64_t value)
{
    pthread_mutex_lock(&p->mu);
    *count = value;
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

int pipe_io_failed(pipe_t *p, dd_err *err)
{
    pthread_mutex_lock(&p->mu);
    int rc = p->io_rc;
    if (rc)
        *err = p->io_err;
    pthread_mutex_unlock(&p->mu);
    return rc;
}
