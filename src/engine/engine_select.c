/* engine_select.c — the one place that picks an engine by name (engine.h). */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "agree.h"
#include "engine.h"

/* Open `ops` on every rank; agreed.  On failure nothing stays open. */
static int open_everywhere(const dd_engine_ops *ops, const dd_engine_cfg *cfg, dd_engine *e,
                           dd_err *err)
{
    e->ops = ops;
    int rc = ops->open(e, cfg, err);
    int arc = dd_agree(cfg->world, rc, err);
    if (arc && rc == DD_OK)
        ops->close(e);
    return arc;
}

#ifdef DD_HAVE_CUDA
/* CUDA where every rank has a GPU.  *fallback: every failing rank failed
 * for want of a GPU (DD_EUNSUP), so `auto` may take the CPU instead. */
static int try_cuda(const dd_engine_cfg *cfg, dd_engine *e, int *fallback, dd_err *err)
{
    dd_err local = {{0}};
    e->ops = &dd_engine_cuda;
    int rc = e->ops->open(e, cfg, &local);
    int unsup_only = rc == DD_OK || rc == DD_EUNSUP, all_unsup = 0;
    int arc = dd_agree(cfg->world, rc, &local);
    if (!arc)
        return DD_OK;
    if (rc == DD_OK)
        e->ops->close(e);
    if (dd_mpi_check(MPI_Allreduce(&unsup_only, &all_unsup, 1, MPI_INT, MPI_LAND, cfg->world),
                     "MPI_Allreduce", err))
        all_unsup = 0;
    *fallback = all_unsup;
    *err = local;
    return arc;
}
#endif

/* The ops of the last engine a device was opened for (engine_release_devices). */
static const dd_engine_ops *device_ops;

void engine_release_devices(void)
{
    if (!device_ops || !device_ops->release_device)
        return;
    dd_engine none;
    memset(&none, 0, sizeof none);
    none.ops = device_ops;
    device_ops->release_device(&none);
}

int engine_select(const char *name, const dd_engine_cfg *cfg, dd_engine *e, char *why, size_t len,
                  dd_err *err)
{
    memset(e, 0, sizeof *e);
    if (!strcmp(name, "cpu")) {
        snprintf(why, len, "--backend cpu");
        return open_everywhere(&dd_engine_cpu, cfg, e, err);
    }
#ifdef DD_HAVE_CUDA
    int fallback = 0;
    int rc = try_cuda(cfg, e, &fallback, err);
    if (!rc) {
        device_ops = e->ops;
        snprintf(why, len, "%s",
                 !strcmp(name, "auto") ? "auto: every rank has a GPU" : "--backend cuda");
        return DD_OK;
    }
    if (!strcmp(name, "cuda") || !fallback)
        return rc;
    snprintf(why, len, "auto: not every rank has a GPU: %.150s", err->msg);
    dd_err_clear(err);
#else
    if (!strcmp(name, "cuda"))
        return dd_fail(err, DD_EUSAGE,
                       "--backend cuda: this dgemm-dist was built without CUDA (no nvcc at "
                       "build time); rebuild with the CUDA toolkit or use --backend cpu");
    snprintf(why, len, "auto: built without CUDA");
#endif
    return open_everywhere(&dd_engine_cpu, cfg, e, err);
}
