/* agree.c — agreeing on failure across ranks (agree.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "agree.h"

int dd_agree(MPI_Comm comm, int rc, dd_err *err)
{
    int rank, size;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    int mine = rc != DD_OK ? rank : size, first;
    if (MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm) != MPI_SUCCESS)
        return dd_fail(err, DD_EFAIL, "MPI_Allreduce failed while agreeing on an error");
    if (first == size)
        return DD_OK;
    struct {
        int rc;
        char msg[DD_ERRLEN];
    } buf;
    buf.rc = rc;
    memcpy(buf.msg, err->msg, DD_ERRLEN);
    if (rc != DD_OK && buf.msg[0] == '\0')
        snprintf(buf.msg, sizeof buf.msg, "rank %d failed (no message)", rank);
    MPI_Bcast(&buf, (int)sizeof buf, MPI_BYTE, first, comm);
    memcpy(err->msg, buf.msg, DD_ERRLEN);
    return buf.rc;
}

void dd_report_error(MPI_Comm comm, const dd_err *err)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        fprintf(stderr, "dgemm-dist: error: %s\n", err->msg[0] ? err->msg : "unknown failure");
        fflush(stderr);
    }
}

int dd_mpi_check(int mpirc, const char *what, dd_err *err)
{
    if (mpirc == MPI_SUCCESS)
        return DD_OK;
    char s[MPI_MAX_ERROR_STRING];
    int len = 0;
    MPI_Error_string(mpirc, s, &len);
    return dd_fail(err, DD_EFAIL, "%s failed: %s", what, s);
}

void dd_abort_all(MPI_Comm comm, const dd_err *err)
{
    int rank = 0;
    MPI_Comm_rank(comm, &rank);
    fprintf(stderr, "dgemm-dist: error: %s (on rank %d; ending every rank)\n",
            err && err->msg[0] ? err->msg : "a failure that the ranks cannot agree on", rank);
    fflush(stderr);
    MPI_Abort(comm, 1);
    abort(); /* MPI_Abort does not return; this satisfies noreturn */
}
