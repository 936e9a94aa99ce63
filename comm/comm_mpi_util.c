/* comm_mpi_util.c — MPI pieces shared by the MPI comm backends
 * (comm_mpi_util.h). */
#include <stdlib.h>

#include "agree.h"
#include "comm_mpi_util.h"

/* Tests set a small value to exercise the cut. */
#ifndef DD_MPI_CHUNK_BYTES
#define DD_MPI_CHUNK_BYTES ((size_t)1 << 30)
#endif
#define CHUNK_BYTES ((size_t)DD_MPI_CHUNK_BYTES)

int comm_reqs_push(comm_reqs *r, MPI_Request q, dd_err *err)
{
    if (r->n == r->cap) {
        int cap = r->cap ? 2 * r->cap : 8;
        MPI_Request *p = realloc(r->req, (size_t)cap * sizeof *p);
        if (!p)
            return dd_fail(err, DD_ENOMEM, "out of host memory for MPI requests");
        r->req = p;
        r->cap = cap;
    }
    r->req[r->n++] = q;
    return DD_OK;
}

void comm_reqs_free(comm_reqs *r)
{
    free(r->req);
    r->req = NULL;
    r->n = r->cap = 0;
}

int comm_ibcast(comm_reqs *r, void *buf, size_t bytes, int root, MPI_Comm comm, dd_err *err)
{
    for (size_t off = 0; off < bytes; off += CHUNK_BYTES) {
        size_t len = bytes - off < CHUNK_BYTES ? bytes - off : CHUNK_BYTES;
        MPI_Request q;
        int rc = dd_mpi_check(MPI_Ibcast((char *)buf + off, (int)len, MPI_BYTE, root, comm, &q),
                              "MPI_Ibcast of a panel", err);
        if (rc || (rc = comm_reqs_push(r, q, err)))
            return rc;
    }
    return DD_OK;
}
