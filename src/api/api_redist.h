/* api_redist.h — moving a distributed (sub)matrix from one layout to
 * another among the ranks of a communicator: pack, one all-to-all
 * exchange, unpack.  Private to src/api.
 *
 * A layout says, for each element (i, j) of an R×S matrix, which rank
 * holds it and where in that rank's local array: each dimension is
 * distributed on its own (rd_dist: the project's contiguous blocks, or
 * ScaLAPACK's cyclic blocks) over one axis of a process grid, the grid's
 * ranks are numbered row- or column-major, and the local array is strided
 * (rs, cs: element (lr, lc) at lr·rs + lc·cs).  The matrix may be a
 * submatrix of a larger one (off: where it starts in the whole).
 *
 * The exchange: every rank cuts each dimension of what it holds into
 * segments that are contiguous in both layouts and owned by one process
 * of each; both sides enumerate a pair's elements in the same order (tile
 * by tile, columns of the source matrix outer, rows inner), so no index
 * travels with the data. */
#ifndef DD_API_REDIST_H
#define DD_API_REDIST_H

#include <mpi.h>
#include <stdint.h>

#include "dd.h"

/* RD_CYCLIC_FIRST is ScaLAPACK's block-cyclic distribution whose first
 * block has a size of its own (PBLAS's IMB_/INB_, DTYPE_ 2): imb indices
 * on src, then blocks of nb dealt cyclically from the next process on.
 * A kind of its own, so that whatever handles RD_CYCLIC by its rule
 * (dd_numroc, api_cyclic.c's no-redistribution path) never takes it. */
enum { RD_BLOCK = 0, RD_CYCLIC = 1, RD_CYCLIC_FIRST = 2 };

/* One dimension's distribution over np processes. */
typedef struct {
    int kind;     /* RD_BLOCK, RD_CYCLIC or RD_CYCLIC_FIRST */
    int np;       /* processes along this dimension */
    int64_t n;    /* length of the (sub)matrix along it */
    int64_t off;  /* index in the whole of the (sub)matrix's first element (0-based) */
    int64_t glen; /* RD_BLOCK: length of the whole, cut into np blocks (grid_block) */
    int64_t nb;   /* RD_CYCLIC, RD_CYCLIC_FIRST: block size */
    int src;      /* RD_CYCLIC, RD_CYCLIC_FIRST: process holding the whole's first block */
    int64_t imb;  /* RD_CYCLIC_FIRST: the first block's size (>= 1) */
} rd_dist;

typedef struct {
    rd_dist row, col;
    int64_t rs, cs; /* local element (lr, lc) at lr·rs + lc·cs (this rank's array) */
    char order;     /* 'R': rank = pr·col.np + pc; 'C': rank = pc·row.np + pr */
} rd_layout;

/* Owner (process coordinate) and local index of index g (0 <= g < n) of
 * a dimension, and how many indices from g on stay with that owner at
 * consecutive local indices (>= 1). */
int rd_owner(const rd_dist *d, int64_t g);
int64_t rd_local(const rd_dist *d, int64_t g);
int64_t rd_run(const rd_dist *d, int64_t g);
/* A cyclic kind's count: how many of the whole's indices [0, x) process
 * me holds (ScaLAPACK's NUMROC, with the first block's size). */
int64_t rd_held(const rd_dist *d, int me, int64_t x);
/* A grid's rank from coordinates, and back (-1, -1 when rank is outside). */
int rd_rank(const rd_layout *l, int pr, int pc);
void rd_coords(const rd_layout *l, int rank, int *pr, int *pc);

/* The most elements one exchange moves per pair of ranks in one round:
 * INT_MAX (MPI's count type), or DD_REDIST_LIMIT from the environment when
 * set to a smaller positive number (a test hook: several rounds on small
 * matrices). */
int64_t rd_count_limit(void);

/* dst ← src: the matrix `from` lays out at src (this rank's local array)
 * to the layout `to` at dst; trans: `to` lays out the transpose (an
 * S×R matrix).  Only the (sub)matrix's elements are read or written.
 * threads: host threads for the copies; keep: buffers kept between moves
 * (NULL: malloc'd and freed here).
 * Collective over comm (whose size both grids must equal); t the element
 * type.  Agreed. */
typedef struct {
    void *p[2]; /* the send and receive buffers, malloc'd, grown as needed */
    size_t cap[2];
} rd_keep;
int rd_move(MPI_Comm comm, dd_dtype t, const rd_layout *from, const void *src, const rd_layout *to,
            void *dst, int trans, int threads, rd_keep *keep, dd_err *err);
/* fn(arg, lo, hi) over [0, n), cut among up to `threads` threads (the
 * caller's among them); a thread that cannot start leaves its part to the
 * caller (api_work.c). */
void rd_parallel(int threads, int64_t n, void (*fn)(void *arg, int64_t lo, int64_t hi), void *arg);

/* The MPI datatype of one element of type t. */
MPI_Datatype rd_mpi_type(dd_dtype t);

/* The exchange itself: sbuf holds scount[r] elements for rank r at
 * sdisp[r], rbuf receives rcount[r] from rank r at rdisp[r] (64-bit
 * counts and displacements, in elements of type dt of es bytes).  One
 * MPI_Alltoallv when every count and displacement fits in an int (and
 * under rd_count_limit()), else rounds of MPI_Alltoallw moving at most
 * rd_count_limit() elements per pair each, every rank taking the same
 * road.  Collective: the sizes' reduction, the buffers and each round
 * are agreed before the next collective (a rank never leaves alone); the
 * single MPI_Alltoallv's own failure is local (the caller agrees). */
int rd_exchange(MPI_Comm comm, MPI_Datatype dt, size_t es, const void *sbuf, const int64_t *scount,
                const int64_t *sdisp, void *rbuf, const int64_t *rcount, const int64_t *rdisp,
                dd_err *err);

#endif
