/* tune.c — the model's inputs from the run, the auto settings (tune.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "agree.h"
#include "dd_knobs.h"
#include "dd_sysmem.h"
#include "grid.h"
#include "comm.h"
#include "tune.h"

/* Links: the model's link for the comm backend the run will open
 * (comm_gpu_choice, comm_select's rule; model_intra_link maps it);
 * DD_MODEL_LINK and DD_MODEL_INTER_LINK name others. */
static void pick_links(const dd_tune_req *r, const dd_engine *e, int shared, dd_tune *t)
{
    int host = e->ops->work_is_host != 0;
    const char *b = host ? NULL : comm_gpu_choice(r->comm, shared > 1 ? shared : 1, 1);
    const char *intra = model_intra_link(b, host), *inter = model_inter_link(host);
    const char *ei = dd_knob_str(DDK_MODEL_LINK), *ex = dd_knob_str(DDK_MODEL_INTER_LINK);
    int rank = -1;
    MPI_Comm_rank(r->world, &rank);
    if (ei && !model_find_link(ei))
        dd_knob_reject(DDK_MODEL_LINK, rank, "is not a link of src/model/tables/links.csv", intra);
    if (ex && !model_find_link(ex))
        dd_knob_reject(DDK_MODEL_INTER_LINK, rank, "is not a link of src/model/tables/links.csv",
                       inter);
    snprintf(t->intra, sizeof t->intra, "%s", ei && model_find_link(ei) ? ei : intra);
    snprintf(t->inter, sizeof t->inter, "%s", ex && model_find_link(ex) ? ex : inter);
    t->in.intra = model_find_link(t->intra);
    t->in.inter = model_find_link(t->inter);
}

/* DD_MODEL_RATES=FILE: rows of the tables' CSV format (a calibration of
 * this machine, e.g. from model-calib), read by the model's parser, replace
 * the compiled-in table: the rows of the engine's kernel and type whose
 * thread count is the one found (or the engine's).  Kept when at least one
 * row matches; lines that are no valid row are passed over. */
static void file_rates(const dd_tune_req *r, const dd_engine *e, dd_dtype type, int threads,
                       dd_tune *t)
{
    const char *path = dd_knob_str(DDK_MODEL_RATES);
    FILE *f = path ? fopen(path, "r") : NULL;
    int rank = -1;
    MPI_Comm_rank(r->world, &rank);
    if (path && !f) {
        char why[96];
        snprintf(why, sizeof why, "cannot be opened (%s)", strerror(errno));
        dd_knob_reject(DDK_MODEL_RATES, rank, why, "the compiled-in rates");
    }
    if (!f)
        return;
    char line[512], why[160];
    int n = 0, want = t->in.rate ? t->in.rate->threads : threads;
    dd_rate_row row;
    while (fgets(line, sizeof line, f) && n < 64) {
        if (model_parse_rate(line, &row, why, sizeof why) != 1 ||
            !strstr(e->info.device, row.device) || strcmp(row.kernel, e->info.kernel) ||
            row.type != type || row.threads != want)
            continue;
        t->file_pts[n++] = row.pt;
    }
    fclose(f);
    if (!n) {
        char why[200];
        snprintf(why, sizeof why, "has no row for %.60s, kernel %.40s, %s, %d threads",
                 e->info.device, e->info.kernel, dd_dtype_name(type), want);
        dd_knob_reject(DDK_MODEL_RATES, rank, why, "the compiled-in rates");
        return;
    }
    t->file_rates = (dd_rate_table){"file", e->info.kernel, type, want, t->file_pts, n};
    t->in.rate = &t->file_rates;
    snprintf(t->rates, sizeof t->rates, "%.100s (DD_MODEL_RATES, %d rows)", path, n);
}

/* The moduli of sliced panels where the engine's kernel slices panels of
 * width nb (engine.h's slices_bytes: a blob of 1024 vectors is N bytes a
 * vector element and a header of some KiB, so the quotient is N), else 0. */
static int slice_moduli(const dd_tune_req *r, const dd_engine *e, int64_t nb)
{
    int64_t w = nb < r->K ? nb : r->K;
    if (!r->slices || w < 1 || !e->ops->slices_bytes)
        return 0;
    size_t b = e->ops->slices_bytes((dd_engine *)e, r->type, 1024, w);
    return b ? (int)(b / (1024 * (size_t)((w + 31) / 32 * 32))) : 0;
}

/* The model's inputs that depend on where the ranks are: nodes, ranks per
 * node, the rate table and its scale (CPU: threads and shared cores; GPU:
 * ranks sharing a device), the memory limit.  Collective. */
static void machine(const dd_tune_req *r, const dd_engine *e, dd_tune *t, dd_tune_in *ti)
{
    int nrank = 0, nsize = 1, leaders = 0, rpn = 1, shared = e->info.ranks_per_device;
    MPI_Comm_rank(r->node, &nrank);
    MPI_Comm_size(r->node, &nsize);
    int lead = nrank == 0;
    MPI_Allreduce(&lead, &leaders, 1, MPI_INT, MPI_SUM, r->world);
    MPI_Allreduce(&nsize, &rpn, 1, MPI_INT, MPI_MAX, r->world);
    MPI_Allreduce(MPI_IN_PLACE, &shared, 1, MPI_INT, MPI_MAX, r->world);
    unsigned long long fr = e->info.mem_free ? e->info.mem_free : ~0ull;
    MPI_Allreduce(MPI_IN_PLACE, &fr, 1, MPI_UNSIGNED_LONG_LONG, MPI_MIN, r->world);
    t->in.ranks_per_node = leaders > 1 ? rpn : 0;
    pick_links(r, e, shared, t);
    int threads = e->info.threads > 0 ? e->info.threads : 0;
    t->in.rate = model_find_rate(e->info.device, e->info.kernel, r->type, threads);
    if (t->in.rate)
        snprintf(t->rates, sizeof t->rates, "%s %s %s%s", t->in.rate->device, t->in.rate->kernel,
                 dd_dtype_name(r->type), e->ops->work_is_host ? " per BLAS thread set" : "");
    file_rates(r, e, r->type, threads, t);
    t->in.rate_scale = shared > 1 ? 1.0 / shared : 1;
    if (e->ops->work_is_host && t->in.rate) {
        long cores = sysconf(_SC_NPROCESSORS_ONLN);
        double T = threads > 0 ? threads : 1, want = (double)rpn * T;
        double share = cores > 0 && want > (double)cores ? (double)cores / want : 1;
        t->in.rate_scale = T / (t->in.rate->threads > 0 ? t->in.rate->threads : 1) * share;
        t->in.no_overlap = share < 1;
        ti->mem_limit = (size_t)(0.9 * (double)dd_host_memory_bytes() / rpn);
    } else if (fr != ~0ull) {
        size_t margin = (size_t)512 << 20;
        ti->mem_limit = fr > margin ? (size_t)(0.95 * (double)(fr - margin)) : 1;
    }
}

static void describe_choice(const dd_tune_req *r, dd_tune *t, const dd_tune_in *ti)
{
    const dd_tune_out *o = &t->res;
    char what[64] = "";
    snprintf(what, sizeof what, "%s%s%s", ti->grid_auto ? " grid" : "",
             ti->panel_auto ? " panel" : "", ti->lookahead_auto ? " lookahead" : "");
    int same = o->P == ti->P0 && o->Q == ti->Q0 && o->nb == ti->nb0 && o->L == ti->L0;
    double ms = o->pred.multiply * 1e3, ms0 = o->pred0.multiply * 1e3;
    if (!*what)
        snprintf(t->line, sizeof t->line, "settings given (no auto): predicted multiply %.4g ms",
                 ms);
    else if (same)
        snprintf(t->line, sizeof t->line,
                 "auto (%s): grid %dx%d, panel %lld, lookahead %d, today's defaults: nothing "
                 "predicted 10%% faster among %d settings; predicted multiply %.4g ms",
                 what + 1, o->P, o->Q, (long long)o->nb, o->L, o->candidates, ms);
    else
        snprintf(t->line, sizeof t->line,
                 "auto (%s): grid %dx%d, panel %lld, lookahead %d, predicted multiply %.4g ms "
                 "against %.4g ms with grid %dx%d, panel %lld, lookahead %d%s",
                 what + 1, o->P, o->Q, (long long)o->nb, o->L, ms, ms0, ti->P0, ti->Q0,
                 (long long)ti->nb0, ti->L0, o->fits0 ? "" : " (which does not fit in memory)");
    (void)r;
}

/* Rank 0's decision, from the model. */
static int decide(const dd_tune_req *r, const dd_engine *e, dd_tune *t, dd_tune_in *ti,
                  dd_err *err)
{
    if (!t->in.rate) {
        snprintf(t->line, sizeof t->line,
                 "no model: no kernel-rate table for %s, kernel %s, %s "
                 "(src/model/tables); grid %dx%d, panel %lld, lookahead %d",
                 e->info.device, e->info.kernel, dd_dtype_name(r->type), t->P, t->Q,
                 (long long)t->nb, t->L);
        return DD_OK;
    }
    int rc = model_tune(&t->in, ti, &t->res, err);
    if (rc)
        return rc;
    t->P = t->res.P;
    t->Q = t->res.Q;
    t->nb = t->res.nb;
    t->L = t->res.L;
    t->have = 1;
    describe_choice(r, t, ti);
    model_describe(&t->res.pred, t->model, sizeof t->model);
    char js[600];
    model_json(&t->res.pred, t->rates, t->intra,
               t->in.ranks_per_node > 0 ? t->inter : NULL, js, sizeof js);
    js[strlen(js) - 1] = '\0'; /* the object stays open for the tuning keys */
    snprintf(t->json, sizeof t->json,
             "%s,\"auto\":{\"grid\":%s,\"panel\":%s,\"lookahead\":%s},"
             "\"defaults_multiply_seconds\":%.6g,\"candidates\":%d}",
             js, ti->grid_auto ? "true" : "false", ti->panel_auto ? "true" : "false",
             ti->lookahead_auto ? "true" : "false", t->res.pred0.multiply, t->res.candidates);
    return DD_OK;
}

int tune_settings(const dd_tune_req *r, const dd_engine *e, dd_tune *t, dd_err *err)
{
    memset(t, 0, sizeof *t);
    dd_tune_in ti = {r->size, r->P == 0, r->panel == 0, r->lookahead == 0, r->P, r->Q,
                     r->panel ? r->panel : engine_panel(e), r->lookahead ? r->lookahead : 1,
                     0, r->extra_bytes, r->extra_c};
    if (!r->P)
        grid_default(r->size, &ti.P0, &ti.Q0);
    t->P = ti.P0;
    t->Q = ti.Q0;
    t->nb = ti.nb0;
    t->L = ti.L0;
    t->in = (dd_model_in){ti.P0, ti.Q0, r->M, r->N, r->K, ti.nb0, ti.L0, r->type, NULL, 1, NULL,
                          NULL, 0, 0, slice_moduli(r, e, ti.nb0)};
    machine(r, e, t, &ti); /* collective: every rank */
    int rank, rc = DD_OK;
    MPI_Comm_rank(r->world, &rank);
    if (rank == 0 && (int64_t)ti.P0 * ti.Q0 == r->size)
        rc = decide(r, e, t, &ti, err); /* a wrong --grid is setup_grid's to refuse */
    long long v[5] = {rc, t->P, t->Q, t->nb, t->L};
    MPI_Bcast(v, 5, MPI_LONG_LONG, 0, r->world);
    t->P = (int)v[1];
    t->Q = (int)v[2];
    t->nb = v[3];
    t->L = (int)v[4];
    return rc; /* the caller agrees */
}
