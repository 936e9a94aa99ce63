/* model.h — a performance model of one SUMMA multiply (pure: no MPI calls,
 * no CUDA, no I/O; links only dd_base).
 *
 * Given the grid, the panel width, the lookahead, the shapes and the type,
 * a table of the local kernel's measured rate against its shape and the
 * links' latency and bandwidth, it predicts the multiply phase, the
 * communication that lookahead cannot hide, and the work memory of a rank.
 *
 * The pipeline is SUMMA's (src/core/summa.c): panels broadcast on one serial
 * communication stream, multiplies on one compute stream, L+1 slots.  With
 * c_t the broadcasts of panel t and g_t its multiply, on the slowest rank
 * (the largest blocks, grid_block's first):
 *
 *   comm   start_t = max(comm_end_{t-1}, gemm_end_{t-L-1})   (slot free)
 *   gemm   start_t = max(gemm_end_{t-1}, comm_end_t)
 *
 * The multiply phase is gemm_end of the last panel; exposed communication
 * is that minus the sum of g_t: per panel, what of its broadcast the
 * multiplies before it could not cover, the first panel's whole.
 *
 * Tables (the CSV files in src/model/tables, compiled in at build time) give the
 * kernel rates per device and kernel and the link figures; docs/design.md
 * ("Performance model") says where each figure comes from. */
#ifndef DD_MODEL_H
#define DD_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "dd.h"

/* ---- tables ------------------------------------------------------------ */

typedef struct {
    double m, n, k; /* the local GEMM's shape */
    double gflops;  /* measured rate at that shape */
} dd_rate_point;

typedef struct {
    const char *device;  /* matched as a substring of the engine's device name */
    const char *kernel;  /* the engine's kernel name ("dgemm_dmma", "openblas") */
    dd_dtype type;
    int threads;         /* CPU: BLAS threads per rank of the figures; GPU: 0 */
    const dd_rate_point *pt;
    int npt;
} dd_rate_table;

enum { DD_BCAST_RING = 0, DD_BCAST_TREE = 1 };

typedef struct {
    const char *name;
    double alpha; /* seconds per step (latency) */
    double beta;  /* bytes per second (bandwidth of one step) */
    int algo;     /* DD_BCAST_RING: pipelined, (p-1)·alpha + bytes/beta;
                     DD_BCAST_TREE: binomial, ceil(log2 p)·(alpha + bytes/beta) */
} dd_link;

/* The compiled-in tables (model_tables.c, generated from the CSV files). */
extern const dd_rate_table dd_model_rates[];
extern const int dd_model_nrates;
extern const dd_link dd_model_links[];
extern const int dd_model_nlinks;

/* Real flops of one element multiply-add: 2, or 8 for the complex types
 * (four real multiplies, four adds); bytes are dd_elsize's (complex: twice
 * the component's).  The rates (gflops) are always real flops. */
static inline double model_flops(dd_dtype t)
{
    return dd_dtype_complex(t) ? 8.0 : 2.0;
}

/* The table for a device, kernel and type; NULL when none matches.  With
 * several thread counts on the CPU, the one nearest `threads` below or at
 * it (else the smallest). */
const dd_rate_table *model_find_rate(const char *device, const char *kernel, dd_dtype t,
                                     int threads);
/* The table of type t exactly (model_find_rate: a complex type falls back
 * to its component type's table when it has none of its own). */
const dd_rate_table *model_find_rate_of(const char *device, const char *kernel, dd_dtype t,
                                        int threads);
const dd_link *model_find_link(const char *name);

/* ---- the CSV tables (model_csv.c: the one parser of their rows) ---------- */

/* A row of a rates CSV: device,kernel,dtype,threads,m,n,k,gflops[,source]. */
typedef struct {
    char device[64], kernel[64];
    dd_dtype type;
    int threads;
    dd_rate_point pt;
} dd_rate_row;
/* A row of links.csv: name,alpha_us,beta_gbs,ring|tree[,source]. */
typedef struct {
    char name[64];
    double alpha_us, beta_gbs;
    int algo;
} dd_link_row;
/* One line: 1 and *row filled for a row; 0 for a line that holds none
 * (blank, a '#' comment, the header); -1 for a malformed row, `why` saying
 * what is wrong. */
int model_parse_rate(const char *line, dd_rate_row *row, char *why, size_t len);
int model_parse_link(const char *line, dd_link_row *row, char *why, size_t len);

/* The link (a links.csv name) that broadcasts take inside a node through
 * the comm backend `backend` opens for GPU memory ("ce", "nccl" or "mpi",
 * comm_gpu_choice's answer), or on the host (host_memory); NCCL held to
 * sockets by NCCL_P2P_DISABLE=1 and NCCL_SHM_DISABLE=1 is nccl-socket.
 * model_inter_link: between nodes.  The one mapping from a backend to the
 * model's figures. */
const char *model_intra_link(const char *backend, int host_memory);
const char *model_inter_link(int host_memory);

/* ---- pieces -------------------------------------------------------------- */

/* flop/s of one m×n×k multiply: inverse-distance interpolation of log(rate)
 * in (log m, log n, log k) between the table's points (an exact point gives
 * its own rate); a shape beyond the largest measured extent in a dimension
 * is taken at that extent (the rate saturates); below the smallest measured
 * volume the rate falls as volume^s, s from the two smallest volumes. */
double model_rate(const dd_rate_table *t, double m, double n, double k);
/* Seconds to broadcast `bytes` to p ranks over link l (0 for p <= 1). */
double model_bcast(const dd_link *l, int p, double bytes);
/* Whether a broadcast group spans nodes, ranks placed rpn to a node in rank
 * order (rpn <= 0: one node): the row (ranks p·Q .. p·Q+Q-1) of the worst
 * grid row, the column (q, Q+q, ...) of the worst grid column. */
int model_row_spans(int P, int Q, int rpn);
int model_col_spans(int P, int Q, int rpn);

/* Work memory of rank (p,q): its blocks (A Mp×Kq, B Kp×Nq, C Mp×Nq) and
 * L+1 slots of each broadcast that has a group of more than one — what
 * summa_work_bytes computes (a test checks they agree).  *overflow set and
 * SIZE_MAX returned when it does not fit in size_t. */
size_t model_work_bytes(int P, int Q, int p, int q, int64_t M, int64_t N, int64_t K, int64_t nb,
                        int L, dd_dtype t, size_t *slot_bytes, int *overflow);

/* The work memory sliced panels add to model_work_bytes' on rank (p,q):
 * slots as large as a blob where it is larger than the panel, and the
 * export buffers (every own panel's blob where its broadcast has a group
 * of more than one, one blob where the side is local); 0 for moduli 0 or
 * one rank.  An estimate (no headers, no padding), within a few percent
 * of summa_work_bytes' for panels of 64 and more. */
size_t model_slice_bytes(int P, int Q, int p, int q, int64_t M, int64_t N, int64_t K, int64_t nb,
                         int L, dd_dtype t, int moduli, int *overflow);

/* ---- one prediction ------------------------------------------------------ */

typedef struct {
    int P, Q;
    int64_t M, N, K;
    int64_t nb; /* panel width (>= 1) */
    int L;      /* lookahead (>= 1) */
    dd_dtype type;
    const dd_rate_table *rate;
    double rate_scale;     /* multiplies the table's rate (CPU: threads and cores shared); 0 = 1 */
    const dd_link *intra;  /* broadcasts within a node */
    const dd_link *inter;  /* broadcasts whose group spans nodes (NULL: intra) */
    int ranks_per_node;    /* <= 0: every rank on one node */
    /* 1: the ranks oversubscribe their cores (CPU: ranks × threads > cores):
     * a broadcast advances only while its peers are scheduled, so nothing
     * hides it; every panel's broadcasts add to the multiply */
    int no_overlap;
    /* Sliced panels (summa.h; 0: panels travel in the type): a broadcast
     * panel of r×w elements travels as slice_moduli·r·w bytes (the blob,
     * less its small header and padding), and each rank keeps the blobs of
     * the panels it owns (model_slice_bytes). */
    int slice_moduli;
} dd_model_in;

typedef struct {
    double multiply;   /* predicted multiply phase, seconds */
    double compute;    /* sum of the local multiplies */
    double exposed;    /* multiply - compute */
    double first_comm; /* panel 0's broadcasts (never hidden) */
    double comm;       /* sum of every panel's broadcasts */
    double tflops;     /* 2MNK (complex: 8MNK) / multiply / 1e12 */
    int64_t npanels;
    size_t work_bytes; /* rank 0's blocks + slots (the largest rank) */
    size_t slot_bytes;
    int row_spans, col_spans;
} dd_model_out;

/* DD_OK, or DD_EUSAGE with a message (no table, bad sizes, overflow). */
int model_predict(const dd_model_in *in, dd_model_out *out, dd_err *err);

/* A 2.5-D variant (not in the program; for the projection): c layers, each
 * an in->P × in->Q grid running SUMMA over K/c, after A's and B's blocks
 * are broadcast to the c layers and before the c partial C blocks are
 * reduced (ring reduce-scatter + gather); layers outermost in rank order.
 * work_bytes: the blocks of the full K on every layer plus one C to reduce
 * into. */
int model_predict_25d(const dd_model_in *in, int c, dd_model_out *out, dd_err *err);

/* ---- auto-tuning ------------------------------------------------------------ */

typedef struct {
    int ranks;         /* P·Q of every candidate grid */
    int grid_auto, panel_auto, lookahead_auto;
    int P0, Q0;        /* today's defaults (or the given values when not auto) */
    int64_t nb0;
    int L0;
    size_t mem_limit;  /* bytes of work memory a rank may use (0: no limit) */
    size_t mem_extra;  /* bytes per rank beyond blocks and slots (scratch) */
    int extra_c;       /* further copies of rank 0's C block (the saved beta·C) */
} dd_tune_in;

typedef struct {
    int P, Q;
    int64_t nb;
    int L;
    dd_model_out pred;    /* the choice's prediction */
    dd_model_out pred0;   /* the defaults' prediction */
    int fits0;            /* the defaults fit in mem_limit */
    int candidates;       /* settings evaluated */
} dd_tune_out;

/* The predicted-fastest (P, Q, nb, L) among the candidates that fit
 * (grids: every factorisation of ranks; panels: 256 .. 8192; lookahead
 * 1 .. 4; only what is auto varies).  The defaults stay unless another
 * setting is predicted faster by at least 10% and 1 ms, or the defaults do
 * not fit: within the model's error, today's measured defaults stand. */
int model_tune(const dd_model_in *base, const dd_tune_in *t, dd_tune_out *out, dd_err *err);

/* One line, e.g. "model: multiply 89.6 ms (compute 89.3 ms, exposed comm
 * 0.3 ms = 0.3%), 98.2 TFLOP/s, 6.2 GiB per rank". */
void model_describe(const dd_model_out *o, char *buf, size_t len);
/* The record's "model" object (JSON text, no leading comma). */
void model_json(const dd_model_out *o, const char *rates, const char *intra, const char *inter,
                char *buf, size_t len);

#endif
