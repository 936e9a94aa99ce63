/* run_telemetry.c — the GPUs' clock, power and energy over the timed
 * multiplies (run_ctx.h): the engine's telemetry ops, gathered to rank 0
 * for the report and the record.  Engines without them (CPU) leave the
 * record's telemetry NULL. */
#include <stdlib.h>
#include <string.h>

#include "agree.h"
#include "run_ctx.h"

void run_telemetry_start(run_ctx *c)
{
    if (c->eng.ops->telemetry_start)
        c->eng.ops->telemetry_start(&c->eng);
}

int run_telemetry_stop(run_ctx *c, int rc, dd_err *err)
{
    if (!c->eng.ops->telemetry_stop)
        return rc;
    dd_telemetry mine;
    c->eng.ops->telemetry_stop(&c->eng, &mine);
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
