/* grid.h — distribution arithmetic: pure functions, no MPI, unit-tested.
 *
 * Process grid P×Q, rank r = p·Q + q.  A length n is cut into `parts`
 * contiguous blocks differing by at most one (the first n % parts blocks get
 * one more).  Rank (p,q) owns:
 *   C(p,q): rows  block(M,P,p) × cols block(N,Q,q)
 *   A(p,q): rows  block(M,P,p) × cols block(K,Q,q)
 *   B(p,q): rows  block(K,P,p) × cols block(N,Q,q)
 * SUMMA walks K in panels no wider than NB and cut at every block boundary
 * of both K partitions, so each panel lies inside one A column block and one
 * B row block. */
#ifndef DD_GRID_H
#define DD_GRID_H

#include <stdint.h>

typedef struct {
    int64_t start, len;
} dd_range;

typedef struct {
    int P, Q; /* grid shape */
    int p, q; /* my coordinates */
    int rank; /* p*Q + q */
} dd_grid;

/* block i of n cut into parts; len may be 0 when parts > n. */
dd_range grid_block(int64_t n, int parts, int i);
/* which block of n cut into parts holds index k (0 <= k < n) */
int grid_owner(int64_t n, int parts, int64_t k);
/* coordinates of rank in a P×Q grid */
dd_grid grid_make(int P, int Q, int rank);
/* most nearly square factorisation of nranks with P <= Q */
void grid_default(int nranks, int *P, int *Q);

typedef struct {
    int64_t k0, w; /* global K offset and width */
    int qa;        /* grid column owning A's columns [k0,k0+w) */
    int pb;        /* grid row owning B's rows [k0,k0+w) */
    int64_t a_off; /* k0 - start of A's column block qa */
    int64_t b_off; /* k0 - start of B's row block pb */
} dd_panel;

/* The width cap of panel 0.  With more than one rank the first broadcast
 * has nothing to hide behind, so panel 0 is narrow (NB/8, at least 128,
 * for NB >= 256): the pipeline fills sooner at the cost of one small
 * multiply.  One rank: NB. */
int64_t grid_first_width(int P, int Q, int64_t nb);
/* Panel starting at k0 (0 <= k0 < K), at most nb wide, ending at the first
 * block boundary of either K partition. */
dd_panel grid_panel_at(int64_t K, int P, int Q, int64_t nb, int64_t k0);
/* The panel list of one multiply, the one SUMMA uses (summa_setup): panel 0 capped at
 * grid_first_width(), the others at nb.  Writes out[0..n) when out is not
 * NULL and returns n (0 when K is 0); -1 for nb < 1 or a panel that would
 * not advance, so no caller can loop forever. */
int64_t grid_panels(int64_t K, int P, int Q, int64_t nb, dd_panel *out);

#endif
