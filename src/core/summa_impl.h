/* summa_impl.h — what SUMMA's two files share, private to src/core:
 * summa.c (the loop) and summa_slices.c (the sliced panels' sizes, their
 * plan and the redo of the panels left out).  summa.h is the interface. */
#ifndef DD_SUMMA_IMPL_H
#define DD_SUMMA_IMPL_H

#include "summa.h"

/* A comm failure leaves peers inside a broadcast: no agreement is possible,
 * so it is marked DD_ECOMM for the caller to end every rank. */
static inline int summa_comm_failed(int rc)
{
    return rc ? DD_ECOMM : DD_OK;
}

/* summa.c: panel t's transfers into `slot`, in the element type or (sliced)
 * as blobs from the export buffers. */
dd_panel_xfer summa_panel_xfer_in(const dd_summa *s, int64_t t, int slot, int sliced);

/* summa_slices.c */
/* A blob's bytes for a panel of width w (side 0: A, 1: B), a multiple of
 * 256; 0 where the engine gives none. */
size_t summa_blob_bytes(const dd_summa *s, int side, int64_t w);
/* Both export buffers' bytes before the panel list exists (summa_work_bytes). */
size_t summa_exports_before_list(const dd_summa *s, int *overflow);
/* After a sliced multiply: the panels any rank left out, agreed over world
 * and redone in the element type (collective whatever *local holds). */
int summa_redo_missed(dd_summa *s, int *local, dd_err *err);

#endif
