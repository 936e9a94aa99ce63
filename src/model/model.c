/* model.c — the performance model (model.h): kernel rates, broadcasts,
 * memory, and the pipeline of one multiply. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "grid.h"
#include "model.h"

const dd_rate_table *model_find_rate(const char *device, const char *kernel, dd_dtype t,
                                     int threads)
{
    const dd_rate_table *best = model_find_rate_of(device, kernel, t, threads);
    /* a complex type without a table of its own: its component type's, in
     * real flops (a complex multiply-add's 8 run near the real kernel's rate) */
    if (!best && dd_dtype_complex(t))
        best = model_find_rate_of(device, kernel, dd_dtype_real(t), threads);
    return best;
}

const dd_rate_table *model_find_rate_of(const char *device, const char *kernel, dd_dtype t,
                                        int threads)
{
    const dd_rate_table *best = NULL;
    for (int i = 0; i < dd_model_nrates; i++) {
        const dd_rate_table *r = &dd_model_rates[i];
        if (r->type != t || !device || !strstr(device, r->device) || !kernel ||
            strcmp(kernel, r->kernel))
            continue;
        /* the largest thread count not above `threads`, else the smallest */
        int fits = r->threads <= threads, best_fits = best && best->threads <= threads;
        if (!best || (fits && (!best_fits || r->threads > best->threads)) ||
            (!fits && !best_fits && r->threads < best->threads))
            best = r;
    }
    return best;
}

const dd_link *model_find_link(const char *name)
{
    for (int i = 0; name && i < dd_model_nlinks; i++)
        if (!strcmp(dd_model_links[i].name, name))
            return &dd_model_links[i];
    return NULL;
}

static double dist2(const dd_rate_point *p, const double x[3])
{
    double d0 = log2(p->m) - x[0], d1 = log2(p->n) - x[1], d2 = log2(p->k) - x[2];
    return d0 * d0 + d1 * d1 + d2 * d2;
}

/* log(rate) by inverse squared distance over every point, at x (log2 shape) */
static double idw_log_rate(const dd_rate_table *t, const double x[3])
{
    double num = 0, den = 0;
    for (int i = 0; i < t->npt; i++) {
        double d = dist2(&t->pt[i], x);
        if (d < 1e-18)
            return log(t->pt[i].gflops);
        num += log(t->pt[i].gflops) / d;
        den += 1 / d;
    }
    return num / den;
}

/* The two smallest volumes' slope of log rate against log volume, in [0, 1]. */
static double small_slope(const dd_rate_table *t, double *vmin)
{
    int a = 0, b = -1;
    for (int i = 1; i < t->npt; i++)
        if (t->pt[i].m * t->pt[i].n * t->pt[i].k < t->pt[a].m * t->pt[a].n * t->pt[a].k)
            a = i;
    *vmin = t->pt[a].m * t->pt[a].n * t->pt[a].k;
    for (int i = 0; i < t->npt; i++) {
        double v = t->pt[i].m * t->pt[i].n * t->pt[i].k;
        if (v > *vmin * 1.01 && (b < 0 || v < t->pt[b].m * t->pt[b].n * t->pt[b].k))
            b = i;
    }
    if (b < 0)
        return 0;
    double s = log(t->pt[b].gflops / t->pt[a].gflops) /
               log(t->pt[b].m * t->pt[b].n * t->pt[b].k / *vmin);
    return s < 0 ? 0 : s > 1 ? 1 : s;
}

double model_rate(const dd_rate_table *t, double m, double n, double k)
{
    if (!t || t->npt < 1 || m <= 0 || n <= 0 || k <= 0)
        return 0;
    double x[3] = {log2(m), log2(n), log2(k)}, hi[3] = {0, 0, 0};
    for (int i = 0; i < t->npt; i++) {
        hi[0] = fmax(hi[0], log2(t->pt[i].m));
        hi[1] = fmax(hi[1], log2(t->pt[i].n));
        hi[2] = fmax(hi[2], log2(t->pt[i].k));
    }
    for (int d = 0; d < 3; d++)
        x[d] = fmin(x[d], hi[d]); /* saturating beyond the largest shape measured */
    double vmin, s = small_slope(t, &vmin), v = exp2(x[0] + x[1] + x[2]), f = 1;
    if (v < vmin) { /* smaller than anything measured: scale up, then fall as v^s */
        double up = log2(vmin / v) / 3;
        for (int d = 0; d < 3; d++)
            x[d] += up;
        f = pow(v / vmin, s);
    }
    return exp(idw_log_rate(t, x)) * f * 1e9;
}

double model_bcast(const dd_link *l, int p, double bytes)
{
    if (p <= 1 || !l)
        return 0;
    if (l->algo == DD_BCAST_TREE)
        return ceil(log2((double)p)) * (l->alpha + bytes / l->beta);
    return (p - 1) * l->alpha + bytes / l->beta;
}

static int node_of(int64_t rank, int rpn)
{
    return rpn <= 0 ? 0 : (int)(rank / rpn);
}

int model_row_spans(int P, int Q, int rpn)
{
    for (int p = 0; p < P; p++)
        if (node_of((int64_t)p * Q, rpn) != node_of((int64_t)p * Q + Q - 1, rpn))
            return 1;
    return 0;
}

int model_col_spans(int P, int Q, int rpn)
{
    for (int q = 0; q < Q && P > 1; q++)
        if (node_of(q, rpn) != node_of((int64_t)(P - 1) * Q + q, rpn))
            return 1;
    return 0;
}

size_t model_work_bytes(int P, int Q, int p, int q, int64_t M, int64_t N, int64_t K, int64_t nb,
                        int L, dd_dtype t, size_t *slot_bytes, int *overflow)
{
    size_t es = dd_elsize(t), nslots = (size_t)L + 1, slots = 0;
    uint64_t Mp = (uint64_t)grid_block(M, P, p).len, Nq = (uint64_t)grid_block(N, Q, q).len;
    uint64_t Kq = (uint64_t)grid_block(K, Q, q).len, Kp = (uint64_t)grid_block(K, P, p).len;
    uint64_t w = (uint64_t)(nb < K ? nb : K);
    if (Q > 1)
        slots = dd_mul3(Mp, w, es * nslots, overflow);
    if (P > 1)
        slots = dd_add(slots, dd_mul3(w, Nq, es * nslots, overflow), overflow);
    if (slot_bytes)
        *slot_bytes = slots;
    size_t blocks = dd_add(dd_mul3(Mp, Kq, es, overflow),
                           dd_add(dd_mul3(Kp, Nq, es, overflow), dd_mul3(Mp, Nq, es, overflow),
                                  overflow),
                           overflow);
    return dd_add(slots, blocks, overflow);
}

size_t model_slice_bytes(int P, int Q, int p, int q, int64_t M, int64_t N, int64_t K, int64_t nb,
                         int L, dd_dtype t, int moduli, int *overflow)
{
    if (moduli <= 0 || (int64_t)P * Q <= 1)
        return 0;
    uint64_t es = dd_elsize(t), nm = (uint64_t)moduli, nslots = (uint64_t)L + 1;
    uint64_t Mp = (uint64_t)grid_block(M, P, p).len, Nq = (uint64_t)grid_block(N, Q, q).len;
    uint64_t Kq = (uint64_t)grid_block(K, Q, q).len, Kp = (uint64_t)grid_block(K, P, p).len;
    uint64_t w = (uint64_t)(nb < K ? nb : K), grow = nm > es ? nm - es : 0;
    size_t extra = 0;
    if (Q > 1) /* A's slots grow to blobs; every own panel of A kept sliced */
        extra = dd_add(dd_mul3(Mp, w, grow * nslots, overflow), dd_mul3(Mp, Kq, nm, overflow),
                       overflow);
    else
        extra = dd_mul3(Mp, w, nm, overflow);
    if (P > 1)
        extra = dd_add(extra,
                       dd_add(dd_mul3(w, Nq, grow * nslots, overflow),
                              dd_mul3(Kp, Nq, nm, overflow), overflow),
                       overflow);
    else
        extra = dd_add(extra, dd_mul3(w, Nq, nm, overflow), overflow);
    return extra;
}

/* The pipeline's state: ge[] keeps the last multiplies' ends for the slot
 * rule; dc, dg the last panel's increments, steady how many panels in a
 * row had the same ones (then the rest of a run of equal panels is added
 * in one step: a huge K costs no more than a small one). */
enum { RING = 17 }; /* > DD_LOOKAHEAD_MAX + 1 */
typedef struct {
    double ge[RING], comm_end, gemm_end, dc, dg;
    int64_t t, steady;
} pipe_state;

static void pipe_step(pipe_state *p, int L, double c, double g)
{
    double free_at = p->t >= L + 1 ? p->ge[(p->t - L - 1) % RING] : 0;
    double ce = fmax(p->comm_end, free_at) + c, ge = fmax(p->gemm_end, ce) + g;
    double dc = ce - p->comm_end, dg = ge - p->gemm_end;
    int same = fabs(dc - p->dc) <= 1e-12 * fabs(dc) && fabs(dg - p->dg) <= 1e-12 * fabs(dg);
    p->steady = same ? p->steady + 1 : 0;
    p->dc = dc;
    p->dg = dg;
    p->comm_end = ce;
    p->gemm_end = ge;
    p->ge[p->t % RING] = ge;
    p->t++;
}

/* n more panels exactly like the last, in steady state. */
static void pipe_jump(pipe_state *p, int L, int64_t n)
{
    p->comm_end += (double)n * p->dc;
    p->gemm_end += (double)n * p->dg;
    p->t += n;
    for (int j = 0; j <= L; j++)
        p->ge[(p->t - 1 - j) % RING] = p->gemm_end - j * p->dg;
}

static void pipeline(const dd_model_in *in, const dd_link *row, const dd_link *col,
                     dd_model_out *o)
{
    pipe_state ps;
    memset(&ps, 0, sizeof ps);
    double es = (double)dd_elsize(in->type), scale = in->rate_scale > 0 ? in->rate_scale : 1;
    /* bytes a panel element travels as: the type's, or a sliced panel's */
    double pe = in->slice_moduli > 0 ? (double)in->slice_moduli : es;
    double Mp = (double)grid_block(in->M, in->P, 0).len;
    double Nq = (double)grid_block(in->N, in->Q, 0).len;
    int64_t first = grid_first_width(in->P, in->Q, in->nb);
    double last_w = -1, g = 0, c = 0;
    for (int64_t k0 = 0; k0 < in->K;) {
        dd_panel pn = grid_panel_at(in->K, in->P, in->Q, ps.t == 0 ? first : in->nb, k0);
        double w = (double)pn.w;
        if (w != last_w) { /* same width, same figures: most panels */
            double rate = model_rate(in->rate, Mp, Nq, w) * scale;
            g = Mp > 0 && Nq > 0 ? model_flops(in->type) * Mp * Nq * w / rate : 0;
            c = model_bcast(row, in->Q, Mp * w * pe) + model_bcast(col, in->P, w * Nq * pe);
            last_w = w;
            ps.steady = 0;
        }
        if (ps.t == 0)
            o->first_comm = c;
        pipe_step(&ps, in->L, c, g);
        k0 += pn.w;
        int64_t n = 1;
        if (ps.steady > in->L + 2 && pn.w == in->nb) {
            /* panels of nb until the next block boundary, the last one stepped */
            dd_panel nx = grid_panel_at(in->K, in->P, in->Q, in->K, k0 < in->K ? k0 : 0);
            int64_t run = k0 < in->K ? nx.w / in->nb - 1 : 0;
            if (run > 0) {
                pipe_jump(&ps, in->L, run);
                k0 += run * in->nb;
                n += run;
            }
        }
        o->compute += (double)n * g;
        o->comm += (double)n * c;
    }
    o->npanels = ps.t;
    o->multiply = in->no_overlap ? o->compute + o->comm : ps.gemm_end;
    o->exposed = fmax(0, o->multiply - o->compute);
}

int model_predict(const dd_model_in *in, dd_model_out *o, dd_err *err)
{
    memset(o, 0, sizeof *o);
    if (!in->rate || in->rate->npt < 1)
        return dd_fail(err, DD_EUSAGE, "the model has no kernel-rate table");
    if (in->P < 1 || in->Q < 1 || in->nb < 1 || in->L < 1 || in->L > 16 || in->M < 0 ||
        in->N < 0 || in->K < 0)
        return dd_fail(err, DD_EUSAGE, "the model was given a grid, panel or lookahead out of range");
    int overflow = 0;
    o->work_bytes = model_work_bytes(in->P, in->Q, 0, 0, in->M, in->N, in->K, in->nb, in->L,
                                     in->type, &o->slot_bytes, &overflow);
    o->work_bytes = dd_add(o->work_bytes,
                           model_slice_bytes(in->P, in->Q, 0, 0, in->M, in->N, in->K, in->nb,
                                             in->L, in->type, in->slice_moduli, &overflow),
                           &overflow);
    if (overflow)
        return dd_fail(err, DD_EUSAGE,
                       "the sizes are too large: M=%lld N=%lld K=%lld (%s) need more than 2^64 "
                       "bytes on a rank of the %dx%d grid; give smaller sizes",
                       (long long)in->M, (long long)in->N, (long long)in->K,
                       dd_dtype_name(in->type), in->P, in->Q);
    o->row_spans = model_row_spans(in->P, in->Q, in->ranks_per_node);
    o->col_spans = model_col_spans(in->P, in->Q, in->ranks_per_node);
    const dd_link *inter = in->inter ? in->inter : in->intra;
    pipeline(in, o->row_spans ? inter : in->intra, o->col_spans ? inter : in->intra, o);
    o->tflops = o->multiply > 0 ? model_flops(in->type) * (double)in->M * (double)in->N *
                                      (double)in->K / o->multiply / 1e12
                                : 0;
    return DD_OK;
}

static const char *human(double s, char *b, size_t n)
{
    if (s >= 1)
        snprintf(b, n, "%.3g s", s);
    else if (s >= 1e-3)
        snprintf(b, n, "%.3g ms", s * 1e3);
    else
        snprintf(b, n, "%.3g us", s * 1e6);
    return b;
}

void model_describe(const dd_model_out *o, char *buf, size_t len)
{
    char a[32], b[32], c[32];
    double frac = o->multiply > 0 ? 100 * o->exposed / o->multiply : 0;
    snprintf(buf, len,
             "multiply %s (local multiplies %s, exposed comm %s = %.1f%%), %.4g TFLOP/s, "
             "%.2f GiB per rank (blocks + panel buffers)",
             human(o->multiply, a, sizeof a), human(o->compute, b, sizeof b),
             human(o->exposed, c, sizeof c), frac, o->tflops,
             (double)o->work_bytes / (1024.0 * 1024 * 1024));
}

void model_json(const dd_model_out *o, const char *rates, const char *intra, const char *inter,
                char *buf, size_t len)
{
    snprintf(buf, len,
             "{\"multiply_seconds\":%.6g,\"compute_seconds\":%.6g,\"exposed_comm_seconds\":%.6g,"
             "\"exposed_comm_fraction\":%.6g,\"first_panel_comm_seconds\":%.6g,"
             "\"comm_seconds\":%.6g,\"tflops\":%.6g,\"work_bytes_per_rank\":%zu,\"panels\":%lld,"
             "\"rates\":\"%s\",\"link\":\"%s\",\"inter_node_link\":%s%s%s}",
             o->multiply, o->compute, o->exposed, o->multiply > 0 ? o->exposed / o->multiply : 0,
             o->first_comm, o->comm, o->tflops, o->work_bytes, (long long)o->npanels,
             rates ? rates : "", intra ? intra : "", inter ? "\"" : "", inter ? inter : "null",
             inter ? "\"" : "");
}
