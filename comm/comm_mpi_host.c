/* comm_mpi_host.c — panel broadcasts with non-blocking MPI on host memory
 * (the CPU backend).
 *
 * post() packs A's strided slice on the root and starts MPI_Ibcast on the
 * row and column communicators; progress() is MPI_Testall on everything in
 * flight, called by the CPU engine between row chunks of the multiply, which
 * is what lets Open MPI move the data while OpenBLAS computes.  Messages
 * larger than 1 GiB go in pieces, as MPI counts are ints (comm_ibcast). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "comm.h"
#include "comm_mpi_util.h"

typedef struct {
    MPI_Comm row, col;
    int nslots;
    comm_reqs *slots; /* requests in flight per slot */
} host_state;

static int host_open(dd_comm *c, const dd_comm_cfg *cfg, dd_err *err)
{
    if (!cfg->work_is_host)
        return dd_fail(err, DD_EUNSUP, "the mpi-host comm backend serves the CPU backend only");
    host_state *s = calloc(1, sizeof *s);
    if (!s || !(s->slots = calloc((size_t)cfg->nslots, sizeof *s->slots))) {
        free(s);
        return dd_fail(err, DD_ENOMEM, "out of host memory opening the MPI comm backend");
    }
    s->row = cfg->row;
    s->col = cfg->col;
    s->nslots = cfg->nslots;
    c->impl = s;
    int major, minor;
    MPI_Get_version(&major, &minor);
    snprintf(c->detail, sizeof c->detail, "MPI %d.%d non-blocking broadcasts on host memory", major,
             minor);
    return DD_OK;
}

static void host_close(dd_comm *c)
{
    host_state *s = c->impl;
    if (!s)
        return;
    for (int i = 0; i < s->nslots; i++)
        comm_reqs_free(&s->slots[i]);
    free(s->slots);
    free(s);
    c->impl = NULL;
}

static int host_post(dd_comm *c, const dd_panel_xfer *x, dd_err *err)
{
    host_state *s = c->impl;
    comm_reqs *r = &s->slots[x->slot];
    size_t es = dd_elsize(x->type);
    int rc = DD_OK;
    if (x->a.active) {
        const dd_xfer *a = &x->a;
        size_t row_bytes = (size_t)a->width * es;
        if (a->is_root)
            for (int64_t i = 0; i < a->rows; i++)
                memcpy((char *)a->dst + (size_t)i * row_bytes,
                       (const char *)a->src + (size_t)(i * a->src_ld) * es, row_bytes);
        rc = comm_ibcast(r, a->dst, (size_t)(a->rows * a->width) * es, a->root, s->row, err);
    }
    if (!rc && x->b.active) {
        const dd_xfer *b = &x->b;
        void *buf = b->is_root ? (void *)b->src : b->dst;
        rc = comm_ibcast(r, buf, (size_t)(b->rows * b->width) * es, b->root, s->col, err);
    }
    return rc;
}

static int host_wait(dd_comm *c, int slot, dd_err *err)
{
    host_state *s = c->impl;
    comm_reqs *r = &s->slots[slot];
    int rc = DD_OK;
    if (r->n)
        rc = dd_mpi_check(MPI_Waitall(r->n, r->req, MPI_STATUSES_IGNORE), "MPI_Waitall on a panel",
                          err);
    r->n = 0;
    return rc;
}

static int host_release(dd_comm *c, int slot, dd_err *err)
{
    (void)c;
    (void)slot;
    (void)err;
    return DD_OK;
}

static int host_progress(dd_comm *c, dd_err *err)
{
    host_state *s = c->impl;
    for (int i = 0; i < s->nslots; i++) {
        comm_reqs *r = &s->slots[i];
        int done = 0;
        if (r->n) {
            int rc = dd_mpi_check(MPI_Testall(r->n, r->req, &done, MPI_STATUSES_IGNORE),
                                  "MPI_Testall on a panel", err);
            if (rc)
                return rc;
        }
    }
    return DD_OK;
}

const dd_comm_ops dd_comm_mpi_host = {
    .name = "mpi-host",
    .work_is_host = 1,
    .open = host_open,
    .close = host_close,
    .post = host_post,
    .wait = host_wait,
    .release = host_release,
    .progress = host_progress,
};
