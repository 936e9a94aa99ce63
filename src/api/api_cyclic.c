/* api_cyclic.c — dd_pgemm on ScaLAPACK's layout as it is: no
 * redistribution when the operands already sit the way SUMMA needs them.
 *
 * SUMMA does not care which global rows and columns a rank's blocks hold,
 * only that its rows of A are its rows of C, its columns of B its columns
 * of C, and that every K panel is one piece of one grid column's A and one
 * grid row's B.  2-D block-cyclic operands on the context's own grid
 * (order 'R', the same P×Q) satisfy that when A's rows are dealt as C's
 * (MB and RSRC alike) and B's columns as C's (NB and CSRC alike), the
 * submatrices start at (1, 1) and neither operand is transposed: each
 * rank's local arrays are then its SUMMA blocks.  A's K (its columns, NB_A
 * over the grid columns from CSRC_A) and B's K (its rows, MB_B over the
 * grid rows from RSRC_B) may be cut differently: a panel ends where either
 * block ends, and its owners and local offsets come from the two
 * distributions.  The local arrays are column-major: their columns go up
 * turned into the row-major work blocks (api_stage.c's lines, bycol), and
 * C's come back the same way, only sub(C)'s rows of each written.
 *
 * Everything else (transposes, offsets, other grids or block sizes, the
 * check, which reads the 2-D block layout) takes the redistribution. */
#include <stdlib.h>

#include "api_impl.h"

int api_cyclic_fits(const gemm_call *g)
{
    const dd_context *ctx = g->ctx;
    if (!g->desc || g->check || ctx->size < 2 || g->a.trans || g->b.trans)
        return 0;
    const api_operand *ops[3] = {&g->a, &g->b, &g->c};
    for (int k = 0; k < 3; k++) {
        const rd_layout *l = &ops[k]->lay;
        if (l->row.kind != RD_CYCLIC || l->col.kind != RD_CYCLIC || l->order != 'R' ||
            l->row.np != ctx->g.P || l->col.np != ctx->g.Q || l->row.off || l->col.off)
            return 0;
    }
    const rd_layout *A = &g->a.lay, *B = &g->b.lay, *C = &g->c.lay;
    return A->row.nb == C->row.nb && A->row.src == C->row.src && B->col.nb == C->col.nb &&
           B->col.src == C->col.src;
}

int api_cyclic_shape(gemm_call *g, dd_err *err)
{
    dd_summa *s = &g->s;
    const dd_grid *gr = &g->ctx->g;
    const rd_dist *am = &g->a.lay.row, *ak = &g->a.lay.col, *bk = &g->b.lay.row,
                  *bn = &g->b.lay.col;
    s->Mp = dd_numroc(g->M, am->nb, gr->p, am->src, gr->P);
    s->Kq = dd_numroc(g->K, ak->nb, gr->q, ak->src, gr->Q);
    s->Kp = dd_numroc(g->K, bk->nb, gr->p, bk->src, gr->P);
    s->Nq = dd_numroc(g->N, bn->nb, gr->q, bn->src, gr->Q);
    int64_t n = 0, widest = 1;
    for (int pass = 0; pass < 2; pass++) { /* count, then fill */
        n = 0;
        for (int64_t k0 = 0; k0 < g->K; n++) {
            /* to the end of A's column block or B's row block, whichever is first */
            int64_t ra = rd_run(ak, k0), rb = rd_run(bk, k0), w = ra < rb ? ra : rb;
            widest = w > widest ? w : widest;
            if (pass == 1)
                g->cyc_panels[n] = (dd_panel){
                    k0, w, rd_owner(ak, k0), rd_owner(bk, k0), rd_local(ak, k0), rd_local(bk, k0)};
            k0 += w;
        }
        if (pass == 0 && !(g->cyc_panels = malloc((size_t)(n ? n : 1) * sizeof(dd_panel))))
            return dd_fail(err, DD_ENOMEM, "out of host memory for %lld panels", (long long)n);
    }
    s->fixed = g->cyc_panels;
    s->nfixed = s->npanels = n;
    s->nb = widest;
    return DD_OK;
}
