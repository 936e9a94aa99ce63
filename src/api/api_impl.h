/* api_impl.h — the library's context, private to src/api (the public
 * header is include/dgemm_dist.h). */
#ifndef DD_API_IMPL_H
#define DD_API_IMPL_H

#include "api_redist.h"
#include "check.h"
#include "comm.h"
#include "dd.h"
#include "dgemm_dist.h"
#include "engine.h"
#include "grid.h"
#include "summa.h"

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

/* One operand of a call, as the caller holds it. */
typedef struct {
    const void *p;           /* the caller's local array (device memory for dd_gemm_device) */
    int64_t ld;              /* dd_gemm: its leading dimension */
    int64_t i, j;            /* dd_pgemm: the submatrix's 1-based offsets */
    const dd_matrix_desc *d; /* dd_pgemm: its descriptor */
    /* set by api_check_operands: */
    rd_layout lay; /* the caller's layout of the stored submatrix */
    int trans;     /* the stored matrix is the transpose of the operand */
    int direct;    /* the caller's layout is the work layout: one copy, pitch ld */
} api_operand;

/* One call's arguments and state (api_gemm.c). */
typedef struct {
    dd_context *ctx;
    dd_dtype t;
    char ta, tb;
    int64_t M, N, K;
    double alpha, beta;
    api_operand a, b, c;
    int desc;    /* 1: dd_pgemm (descriptors); 0: dd_gemm's 2-D block layout */
    int device;  /* dd_gemm_device: the arrays are in work (device) memory */
    int bad_arg; /* PBLAS's number of a bad argument (dgemm_dist.h), 0 if none */
    int check;
    dd_summa s;
    check_cterm cin;
    double sec, gemm; /* this rank's multiply phase and local multiplies */
    dd_check_result chk;
} gemm_call;

/* The operands' checks (local: the caller agrees) and layouts; sets
 * g->bad_arg with the message.  After same-argument agreement. */
int api_check_operands(gemm_call *g, dd_err *err);
/* The numbers every rank must pass alike (sizes, scalars, offsets,
 * descriptors' global fields) into v (at most API_GLOBALS); returns how many. */
enum { API_GLOBALS = 48 };
int api_globals(const gemm_call *g, double *v);
/* The work layout (2-D block, row-major, contiguous) of op(A) (0), op(B)
 * (1) or C (2) on the context's grid. */
void api_work_layout(const gemm_call *g, int which, rd_layout *l);

/* The call: checked, multiplied, reported into info (may be NULL). */
dd_status api_gemm(gemm_call *g, dd_gemm_info *info);

/* An internal code (DD_OK, DD_E*) as a public status. */
dd_status api_status(int rc);
/* Close, then open the engine for type t and the comm backend serving it
 * (collective, agreed). */
int api_open_backends(dd_context *ctx, dd_dtype t, dd_err *err);

#endif
