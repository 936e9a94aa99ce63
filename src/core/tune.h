/* tune.h — the run's settings from the performance model (src/model):
 * --grid auto, --panel auto, --lookahead auto (the defaults) choose the
 * predicted-fastest settings that fit in memory; every run carries the
 * model's prediction for its settings into the dry run, the report and
 * the record. */
#ifndef DD_TUNE_H
#define DD_TUNE_H

#include <mpi.h>

#include "engine.h"
#include "model.h"

typedef struct {
    int P, Q;   /* the grid to use */
    int64_t nb; /* panel width */
    int L;      /* lookahead */
    int have;   /* a prediction exists (a rate table matched) */
    dd_model_in in;
    dd_tune_out res;
    char rates[160], intra[32], inter[32];
    dd_rate_table file_rates; /* DD_MODEL_RATES: a rate table read at run time */
    dd_rate_point file_pts[64];
    char line[320];  /* "auto: ..." what was chosen, or why no model */
    char model[256]; /* model_describe of the settings used */
    char json[768];  /* the record's "model" object */
} dd_tune;

/* What the run needs to decide: its sizes, the options (0 = auto), the
 * open engine, the communicators (world, node).  Collective: rank 0's
 * choice is broadcast, so every rank uses the same settings. */
typedef struct {
    MPI_Comm world, node;
    int size;
    int64_t M, N, K;
    dd_dtype type;
    int P, Q;        /* --grid, 0: auto */
    int64_t panel;   /* --panel, 0: auto */
    int lookahead;   /* --lookahead, 0: auto */
    const char *comm; /* --comm */
    size_t extra_bytes; /* work memory per rank beyond blocks and slots */
    int extra_c;        /* saved copies of C's block per rank */
    int slices;         /* the agreed DD_OZAKI2_PANELS is slices (the context's) */
} dd_tune_req;

int tune_settings(const dd_tune_req *r, const dd_engine *e, dd_tune *t, dd_err *err);

#endif
