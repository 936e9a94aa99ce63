/* run_telemetry.c — the GPUs' clock, power and energy over the timed
 * multiplies (run_ctx.h): the plan's telemetry, gathered to rank 0 for the
 * report and the record.  The CPU backend leaves the record's telemetry
 * NULL. */
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "run_ctx.h"

void run_telemetry_start(run_ctx *c)
{
    if (c->gpu)
        dd_plan_telemetry_start(c->plan);
}

int run_telemetry_stop(run_ctx *c, int rc, dd_err *err)
{
    if (!c->gpu)
        return rc;
    dd_telemetry mine;
    dd_plan_telemetry_stop(c->plan, DGEMM_DIST_TOOL_VERSION, &mine);
    if (rc) /* a failure was agreed: no collective after it */
        return rc;
    dd_telemetry *all = NULL;
    if (c->rank == 0 && !(all = calloc((size_t)c->size, sizeof *all)))
        rc = dd_fail(err, DD_ENOMEM, "out of host memory for the telemetry of %d ranks", c->size);
    /* every rank runs the same binary: the struct's bytes are the same layout */
    int rc2 = dd_mpi_check(
        MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, all, (int)sizeof mine, MPI_BYTE, 0, c->world),
        "MPI_Gather of the GPU telemetry", err);
    if ((rc = dd_agree(c->world, rc ? rc : rc2, err))) {
        free(all);
        return rc;
    }
    free(c->rec.tele);
    c->rec.tele = all;
    return DD_OK;
}
