/* run_pipe.h — the file-to-file pipeline's state, shared by its three files
 * (private to src/driver): run_pipe.c sets the pipeline up and takes its
 * figures, run_pipe_loop.c runs the bands on the main thread, run_pipe_io.c
 * holds the I/O threads and the hand-over between them. */
#ifndef DD_RUN_PIPE_H
#define DD_RUN_PIPE_H

#include <pthread.h>

#include "run_ctx.h"

typedef struct {
    run_ctx *c;
    dd_io *in, *out;
    const char *adset, *cdset;
    int64_t nb;              /* bands, the same on every rank */
    int64_t Mp, Kq, Nq;      /* this rank's block shapes */
    int64_t arow0, acol0;    /* op(A)'s block in its dataset */
    int64_t crow0, ccol0;    /* C's block in its dataset */
    size_t es;
    double alpha;
    void *abuf[3], *cbuf[2]; /* host slots: band i of op(A) in abuf[i % na], of C in cbuf[i % 2] */
    int na;                  /* slots of op(A): 3 where pinned, else 2 */
    int pinned;              /* the slots are the plan's pinned memory (dd_plan_host_alloc):
                              * moved by the copy engines, no host copy */
    char *hA, *hC; /* the plan's blocks where they are host memory (the CPU
                    * backend): bands read and written in place, no slots */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    /* under mu */
    int64_t a_read, a_used, c_given, c_written;
    int64_t stop; /* the main thread leaves: the I/O threads end */
    int io_rc;    /* the I/O threads' first failure */
    dd_err io_err;
    double read_sec, write_sec; /* the I/O threads' busy time */
    double slots_sec;           /* the slots' allocation */
    /* for what was hidden: the I/O threads' operations (reading or not,
     * start, end), 2·nb at most, and the main thread's waits for them (for
     * a read or not, start, end) */
    double (*ops)[3], (*waits)[3];
    int64_t nops, nwaits;
} pipe_t;

/* Band i's rows of this rank's block: [*r0, *r0 + *h). */
static inline void band_rows(const pipe_t *p, int64_t i, int64_t *r0, int64_t *h)
{
    *r0 = p->Mp * i / p->nb;
    *h = p->Mp * (i + 1) / p->nb - *r0;
}

/* run_pipe_loop.c.  The band loop on the main thread over started I/O
 * threads, adding up the multiply's times (mult, gemm, slowest), the waits
 * for the I/O threads and the moves (moves[0] op(A)'s, moves[1] C's):
 * through the plan's moves and the slots (staged: the GPU backend, or
 * DD_FAULT=pipe-slots), or in place in the plan's host blocks (band: p->hA
 * set).  Every rank makes the same calls; agreed. */
int pipe_staged_loop(pipe_t *p, double *mult, double *gemm, double *slowest, double *waits,
                     double *moves, dd_err *err);
int pipe_band_loop(pipe_t *p, double *mult, double *gemm, double *slowest, double *waits,
                   double *moves, dd_err *err);

/* run_pipe_io.c.  The I/O threads' bodies (pthread_create's): the reader
 * reads each band of op(A) once a slot is free (p->na ahead of the main
 * thread at most), the writer writes each band of C once it is given. */
void *pipe_reader(void *p);
void *pipe_writer(void *p);
/* The main thread waits until *count reaches need or an I/O thread
 * failed; returns the seconds waited.  count is &p->a_read (a wait for a
 * read) or &p->c_written (for a write). */
double pipe_wait(pipe_t *p, const int64_t *count, int64_t need);
/* *count = value, under the lock, the I/O threads woken. */
void pipe_publish(pipe_t *p, int64_t *count, int64_t value);
/* The I/O threads' first failure (its message into *err), or 0. */
int pipe_io_failed(pipe_t *p, dd_err *err);
/* Seconds of the reads (reading 1) or writes (0) hidden: during which the
 * main thread was not waiting for one. */
double pipe_hidden(const pipe_t *p, int reading);

#endif
