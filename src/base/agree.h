/* agree.h — failures agreed across ranks, so no rank is left waiting.
 *
 * dd_agree(): every rank passes its local rc and error.  If any rank failed,
 * every rank returns the lowest failing rank's rc and message (so the one
 * message printed by rank 0 is the real cause, wherever it happened). */
#ifndef DD_AGREE_H
#define DD_AGREE_H

#include <mpi.h>

#include "dd.h"

int dd_agree(MPI_Comm comm, int rc, dd_err *err);
/* Rank 0 prints "dgemm-dist: error: <msg>" to stderr. */
void dd_report_error(MPI_Comm comm, const dd_err *err);
/* For a failure that leaves peers inside a collective, where agreeing is
 * impossible (a broadcast failed mid-pipeline): this rank prints the one
 * message and MPI_Abort ends every rank.  Does not return. */
void dd_abort_all(MPI_Comm comm, const dd_err *err) __attribute__((noreturn));
/* Check an MPI return code; on failure write the MPI error string. */
int dd_mpi_check(int mpirc, const char *what, dd_err *err);

#endif
