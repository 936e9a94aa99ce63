/* comm_mpi_util.h — MPI pieces shared by the MPI comm backends
 * (comm_mpi_host.c, comm_mpi_gpu.c, comm_mpi_staged.c). */
#ifndef DD_COMM_MPI_UTIL_H
#define DD_COMM_MPI_UTIL_H

#include <mpi.h>
#include <stddef.h>

#include "dd.h"

/* A growable list of MPI requests. */
typedef struct {
    MPI_Request *req;
    int n, cap;
} comm_reqs;

int comm_reqs_push(comm_reqs *r, MPI_Request q, dd_err *err);
void comm_reqs_free(comm_reqs *r);

/* Start broadcasting `bytes` at buf from root over comm, appending one
 * request per message to r.  MPI counts are ints, so a message carries at
 * most 1 GiB (DD_MPI_CHUNK_BYTES when comm_mpi_util.c is built with it, as
 * tests do to exercise the cut) and larger buffers go as several MPI_Ibcast
 * in order.  bytes == 0 starts nothing: every member of comm passes the same
 * count, so all of them skip alike. */
int comm_ibcast(comm_reqs *r, void *buf, size_t bytes, int root, MPI_Comm comm, dd_err *err);

#endif
