/* model_tune.c — the settings the model predicts fastest (model.h). */
#include <string.h>

#include "grid.h"
#include "model.h"

static const int64_t panels[] = {128, 256, 512, 1024, 1536, 2048, 3072, 4096, 6144, 8192};
enum { NPANELS = sizeof panels / sizeof panels[0], LOOKAHEAD_MAX_TRIED = 4 };

typedef struct {
    const dd_model_in *base;
    const dd_tune_in *t;
    dd_tune_out *out;
    double best;
    int have;
} search;

static int fits(const dd_tune_in *t, const dd_model_in *in, const dd_model_out *o)
{
    int overflow = 0;
    size_t cblock = dd_mul3((uint64_t)grid_block(in->M, in->P, 0).len,
                            (uint64_t)grid_block(in->N, in->Q, 0).len, dd_elsize(in->type), &overflow);
    size_t need = dd_add(o->work_bytes, dd_add(t->mem_extra, dd_mul3(cblock, (uint64_t)t->extra_c, 1, &overflow), &overflow), &overflow);
    return !t->mem_limit || (!overflow && need <= t->mem_limit);
}

/* One candidate: kept when it fits and is faster (ties within 0.1%: less memory). */
static int consider(search *s, int P, int Q, int64_t nb, int L, dd_err *err)
{
    dd_model_in in = *s->base;
    in.P = P;
    in.Q = Q;
    in.nb = nb;
    in.L = L;
    dd_model_out o;
    int rc = model_predict(&in, &o, err);
    if (rc)
        return rc;
    s->out->candidates++;
    if (!fits(s->t, &in, &o))
        return DD_OK;
    int faster = o.multiply < s->best * (1 - 1e-3);
    int tie = !faster && o.multiply <= s->best * (1 + 1e-3) && o.work_bytes < s->out->pred.work_bytes;
    if (!s->have || faster || tie) {
        s->out->P = P;
        s->out->Q = Q;
        s->out->nb = nb;
        s->out->L = L;
        s->out->pred = o;
        s->best = o.multiply;
        s->have = 1;
    }
    return DD_OK;
}

/* Every panel and lookahead the auto options allow, for one grid. */
static int over_panels(search *s, int P, int Q, dd_err *err)
{
    const dd_tune_in *t = s->t;
    int np = t->panel_auto ? NPANELS : 1, nl = t->lookahead_auto ? LOOKAHEAD_MAX_TRIED : 1;
    for (int i = 0; i < np; i++)
        for (int l = 1; l <= nl; l++) {
            int64_t nb = t->panel_auto ? panels[i] : t->nb0;
            int rc = consider(s, P, Q, nb, t->lookahead_auto ? l : t->L0, err);
            if (rc)
                return rc;
        }
    return DD_OK;
}

int model_tune(const dd_model_in *base, const dd_tune_in *t, dd_tune_out *out, dd_err *err)
{
    memset(out, 0, sizeof *out);
    dd_model_in in0 = *base;
    in0.P = t->P0;
    in0.Q = t->Q0;
    in0.nb = t->nb0;
    in0.L = t->L0;
    int rc = model_predict(&in0, &out->pred0, err);
    if (rc)
        return rc;
    out->fits0 = fits(t, &in0, &out->pred0);
    search s = {base, t, out, 0, 0};
    for (int P = 1; P <= t->ranks && !rc; P++) {
        if (t->grid_auto ? t->ranks % P != 0 : P != t->P0)
            continue;
        rc = over_panels(&s, P, t->grid_auto ? t->ranks / P : t->Q0, err);
    }
    if (rc)
        return rc;
    double d0 = out->pred0.multiply;
    int keep = out->fits0 && (!s.have || s.best > 0.9 * d0 || d0 - s.best < 1e-3);
    if (keep || !s.have) { /* today's settings stand (or nothing fits: the plan refuses) */
        out->P = t->P0;
        out->Q = t->Q0;
        out->nb = t->nb0;
        out->L = t->L0;
        out->pred = out->pred0;
    }
    return DD_OK;
}
