/* engine_select.c — the one place that picks an engine by name (engine.h). */
#include <mpi.h>
#include <pthread.h>
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

/* engine_prestart's thread and the GPU it guessed (-1: none). */
static pthread_t prestart_thread;
static int prestart_running, prestart_device = -1;

#ifdef DD_HAVE_CUDA
static int prestart_lrank;

static void *prestart_main(void *arg)
{
    (void)arg;
    engine_cuda_prestart(prestart_lrank, &prestart_device);
    return NULL;
}
#endif

void engine_prestart(int local_rank)
{
#ifdef DD_HAVE_CUDA
    if (local_rank < 0 || prestart_running)
        return;
    prestart_lrank = local_rank;
    prestart_running = pthread_create(&prestart_thread, NULL, prestart_main, NULL) == 0;
#else
    (void)local_rank;
#endif
}

/* The thread joined; the guessed context destroyed unless `keep` is that GPU. */
static void prestart_settle(int keep)
{
    if (!prestart_running)
        return;
    pthread_join(prestart_thread, NULL);
    prestart_running = 0;
#ifdef DD_HAVE_CUDA
    if (prestart_device >= 0 && prestart_device != keep)
        engine_cuda_forget(prestart_device);
#endif
    (void)keep;
    prestart_device = -1;
}

void engine_release_devices(void)
{
    prestart_settle(-1);
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
        prestart_settle(-1);
        snprintf(why, len, "--backend cpu");
        return open_everywhere(&dd_engine_cpu, cfg, e, err);
    }
#ifdef DD_HAVE_CUDA
    int fallback = 0;
    if (prestart_running) /* the guessed context, made current on this thread too */
        pthread_join(prestart_thread, NULL), prestart_running = 0;
    int rc = try_cuda(cfg, e, &fallback, err);
    if (prestart_device >= 0 && (rc || e->info.device_index != prestart_device))
        engine_cuda_forget(prestart_device);
    prestart_device = -1;
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
