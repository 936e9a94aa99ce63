/* api_impl.h — the library's context, private to src/api (the public
 * header is include/dgemm_dist.h). */
#ifndef DD_API_IMPL_H
#define DD_API_IMPL_H

#include "comm.h"
#include "dd.h"
#include "dgemm_dist.h"
#include "engine.h"
#include "grid.h"

struct dd_context {
    MPI_Comm world, node, row, col; /* world: the caller's communicator, duplicated */
    int rank, size;
    dd_grid g;
    char backend[16], comm_name[16], kernel[64];
    int have_kernel;
    int64_t panel;
    int lookahead, threads;
    dd_engine eng;
    int eng_open;
    dd_comm comm;
    int comm_open;
    dd_dtype type; /* the element type the engine was opened for */
    int warmed;    /* the comm backend's connections are made (summa_warm) */
    char why[192]; /* engine_select's account of the backend chosen */
    dd_err err;    /* the last call's message */
};

/* An internal code (DD_OK, DD_E*) as a public status. */
dd_status api_status(int rc);
/* Close, then open the engine for type t and the comm backend serving it
 * (collective, agreed). */
int api_open_backends(dd_context *ctx, dd_dtype t, dd_err *err);

#endif
