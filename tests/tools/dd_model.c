/* dd_model.c — the performance model (src/model) from the command line,
 * without MPI or a device: one prediction with the auto-tuner, or the
 * projection to many GPUs.
 *
 *   dd-model predict --size M[,N,K] [--ranks R] [--grid PxQ|auto] [--panel NB|auto]
 *            [--lookahead L|auto] [--dtype f64|f32] [--device NAME] [--kernel K]
 *            [--threads T] [--cores C] [--link NAME] [--inter NAME] [--per-node G]
 *            [--mem-gib X]
 *   dd-model project --study strong|weak [--max-gpus G] [--per-node G]
 *            [--link NAME] [--inter NAME]            (CSV on stdout)
 *
 * predict prints the defaults' prediction, the auto choice's, and each
 * panel width's with the grid and lookahead fixed, so that what a setting
 * buys (or cannot buy) is visible.  project: H200 (dgemm_dmma, f64), NVLink
 * inside a node of 8, one 400 Gb/s NIC per GPU between nodes; for each GPU
 * count 1, 2, 4, ..., G and each size, SUMMA with the auto settings and the
 * 2.5-D variant with c = 2, 4, 8 layers (the best that fits); jobs/project
 * plots it. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "grid.h"
#include "kernel.h"
#include "model.h"

typedef struct {
    int64_t M, N, K;
    int ranks, P, Q, L, threads, cores, per_node, max_gpus;
    int64_t nb;
    dd_dtype type;
    const char *device, *kernel, *link, *inter, *study;
    double mem_gib;
} args;

static int parse(int argc, char **argv, args *a)
{
    *a = (args){0, 0, 0, 1, 0, 0, 0, 0, 0, 8, 1024, 0, DD_F64, "H200", NULL, "nccl-nvlink",
                "nic-400g", "strong", 130};
    for (int i = 2; i + 1 < argc; i += 2) {
        const char *o = argv[i], *v = argv[i + 1];
        long long x, y, z;
        if (!strcmp(o, "--size")) {
            int n = sscanf(v, "%lld,%lld,%lld", &x, &y, &z);
            a->M = x;
            a->N = n == 3 ? y : x;
            a->K = n == 3 ? z : x;
        } else if (!strcmp(o, "--grid") && strcmp(v, "auto")) {
            if (sscanf(v, "%lldx%lld", &x, &y) != 2)
                return -1;
            a->P = (int)x;
            a->Q = (int)y;
        } else if (!strcmp(o, "--panel") || !strcmp(o, "--lookahead")) {
            long long n = strcmp(v, "auto") ? atoll(v) : 0;
            *(o[2] == 'p' ? &a->nb : &(int64_t){0}) = n;
            if (o[2] == 'l')
                a->L = (int)n;
        } else if (!strcmp(o, "--ranks") || !strcmp(o, "--threads") || !strcmp(o, "--cores") ||
                   !strcmp(o, "--per-node") || !strcmp(o, "--max-gpus")) {
            int *f = o[2] == 'r' ? &a->ranks : o[2] == 't' ? &a->threads : o[2] == 'c' ? &a->cores
                     : o[2] == 'p' ? &a->per_node : &a->max_gpus;
            *f = atoi(v);
        } else if (!strcmp(o, "--dtype")) {
            a->type = strcmp(v, "f32") ? DD_F64 : DD_F32;
        } else if (!strcmp(o, "--mem-gib")) {
            a->mem_gib = atof(v);
        } else {
            const char **f = !strcmp(o, "--device")   ? &a->device
                             : !strcmp(o, "--kernel") ? &a->kernel
                             : !strcmp(o, "--link")   ? &a->link
                             : !strcmp(o, "--inter")  ? &a->inter
                             : !strcmp(o, "--study")  ? &a->study
                                                      : NULL;
            if (!f && strcmp(o, "--grid"))
                return -1;
            if (f)
                *f = v;
        }
    }
    if (!a->kernel)
        a->kernel = strstr(a->device, "CPU") ? "openblas"
                    : a->type == DD_F64      ? DD_KERNEL_DEFAULT_F64
                                             : DD_KERNEL_DEFAULT_F32;
    return 0;
}

static int model_in(const args *a, dd_model_in *in)
{
    const dd_rate_table *t = model_find_rate(a->device, a->kernel, a->type, a->threads);
    if (!t || !model_find_link(a->link)) {
        fprintf(stderr, "dd-model: no rate table for %s/%s/%s or no link %s\n", a->device,
                a->kernel, dd_dtype_name(a->type), a->link);
        return -1;
    }
    double scale = 1;
    if (a->threads > 0) { /* CPU: the table's threads scaled, cores shared by the node's ranks */
        int rpn = a->per_node > 0 && a->per_node < a->ranks ? a->per_node : a->ranks;
        double want = (double)rpn * a->threads;
        scale = (double)a->threads / (t->threads > 0 ? t->threads : 1) *
                (a->cores > 0 && want > a->cores ? a->cores / want : 1);
    }
    *in = (dd_model_in){1, 1, a->M, a->N, a->K, 2048, 1, a->type, t, scale,
                        model_find_link(a->link), model_find_link(a->inter),
                        a->ranks > a->per_node ? a->per_node : 0, 0, 0};
    return 0;
}

static void show(const char *what, int P, int Q, int64_t nb, int L, const dd_model_out *o)
{
    printf("%-10s grid %4dx%-4d panel %5lld lookahead %d: multiply %10.4g ms  compute %10.4g ms  "
           "exposed %9.4g ms (%5.1f%%)  comm %10.4g ms  %8.4g TFLOP/s  %.2f GiB/rank\n",
           what, P, Q, (long long)nb, L, o->multiply * 1e3, o->compute * 1e3, o->exposed * 1e3,
           100 * o->exposed / o->multiply, o->comm * 1e3, o->tflops,
           (double)o->work_bytes / (1 << 30));
}

static int predict(const args *a)
{
    dd_model_in in;
    dd_err err = {{0}};
    if (model_in(a, &in))
        return 2;
    int64_t nb0 = strstr(a->device, "CPU") ? 512 : 2048;
    dd_tune_in ti = {a->ranks, a->P == 0, a->nb == 0, a->L == 0, a->P, a->Q, a->nb ? a->nb : nb0,
                     a->L ? a->L : 1, (size_t)(a->mem_gib * (1 << 30)), 0, 0};
    if (!a->P)
        grid_default(a->ranks, &ti.P0, &ti.Q0);
    dd_tune_out o;
    if (model_tune(&in, &ti, &o, &err)) {
        fprintf(stderr, "dd-model: %s\n", err.msg);
        return 2;
    }
    printf("%s %s %s, %lld x %lld x %lld on %d ranks, link %s%s%s\n", a->device, a->kernel,
           dd_dtype_name(a->type), (long long)a->M, (long long)a->N, (long long)a->K, a->ranks,
           a->link, in.ranks_per_node ? ", between nodes " : "", in.ranks_per_node ? a->inter : "");
    show("defaults", ti.P0, ti.Q0, ti.nb0, ti.L0, &o.pred0);
    show("auto", o.P, o.Q, o.nb, o.L, &o.pred);
    static const int64_t nbs[] = {256, 512, 1024, 2048, 4096, 8192};
    for (int L = 1; L <= 2; L++)
        for (int i = 0; i < 6; i++) {
            dd_model_in x = in;
            dd_model_out p;
            x.P = o.P;
            x.Q = o.Q;
            x.nb = nbs[i];
            x.L = L;
            if (!model_predict(&x, &p, &err))
                show("", x.P, x.Q, x.nb, x.L, &p);
        }
    /* a lower bound for any grid/panel/lookahead: the busiest broadcast
     * stream's bytes at the link's bandwidth, or the compute */
    double es = (double)dd_elsize(a->type), Mp = (double)grid_block(a->M, o.P, 0).len;
    double Nq = (double)grid_block(a->N, o.Q, 0).len;
    double bytes = ((o.Q > 1 ? Mp * (double)a->K : 0) + (o.P > 1 ? (double)a->K * Nq : 0)) * es;
    printf("bound      every panel's bytes on one stream: %.4g GB at %.4g GB/s = %.4g ms; "
           "compute %.4g ms\n",
           bytes / 1e9, in.intra->beta / 1e9, bytes / in.intra->beta * 1e3, o.pred.compute * 1e3);
    return 0;
}

/* One row of the projection: the best 2-D (auto) and the best 2.5-D that fit. */
static void project_one(const args *a, dd_model_in in, int g, int64_t n, const char *study)
{
    dd_err err = {{0}};
    in.M = in.N = in.K = n;
    in.ranks_per_node = g > a->per_node ? a->per_node : 0;
    size_t lim = (size_t)(a->mem_gib * (1 << 30));
    dd_tune_in ti = {g, 1, 1, 1, 0, 0, 2048, 1, lim, 0, 0};
    grid_default(g, &ti.P0, &ti.Q0);
    dd_tune_out o;
    if (model_tune(&in, &ti, &o, &err))
        return;
    int fits = o.pred.work_bytes <= lim;
    printf("%s,%lld,%d,%d,2d,1,%dx%d,%lld,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.4g,%d\n", study,
           (long long)n, g, (g + a->per_node - 1) / a->per_node, o.P, o.Q, (long long)o.nb, o.L,
           o.pred.multiply, o.pred.compute, o.pred.exposed, o.pred.tflops, o.pred.tflops / g,
           (double)o.pred.work_bytes / (1 << 30), fits);
    dd_model_out best;
    int bc = 0, bP = 0, bQ = 0;
    int64_t bnb = 0;
    for (int c = 2; c <= 8; c *= 2) {
        if (g % c || g / c < 1)
            continue;
        int P, Q;
        grid_default(g / c, &P, &Q);
        for (int64_t nb = 512; nb <= 4096; nb *= 2) {
            dd_model_in x = in;
            dd_model_out p;
            x.P = P;
            x.Q = Q;
            x.nb = nb;
            x.L = 2;
            if (model_predict_25d(&x, c, &p, &err) || p.work_bytes > lim)
                continue;
            if (!bc || p.multiply < best.multiply) {
                best = p;
                bc = c;
                bP = P;
                bQ = Q;
                bnb = nb;
            }
        }
    }
    if (bc)
        printf("%s,%lld,%d,%d,2.5d,%d,%dx%d,%lld,2,%.6g,%.6g,%.6g,%.6g,%.6g,%.4g,1\n", study,
               (long long)n, g, (g + a->per_node - 1) / a->per_node, bc, bP, bQ, (long long)bnb,
               best.multiply, best.compute, best.exposed, best.tflops, best.tflops / g,
               (double)best.work_bytes / (1 << 30));
}

static int project(const args *a)
{
    dd_model_in in;
    if (model_in(a, &in))
        return 2;
    int weak = !strcmp(a->study, "weak");
    printf("study,n,gpus,nodes,variant,layers,grid,panel,lookahead,multiply_s,compute_s,"
           "exposed_s,tflops,tflops_per_gpu,mem_gib_per_gpu,fits\n");
    static const int64_t strong[] = {32768, 65536, 131072, 262144};
    for (int g = 1; g <= a->max_gpus; g *= 2) {
        if (weak) { /* memory per GPU constant: n = 16384·sqrt(g), a multiple of 1024 */
            int64_t n = (int64_t)llround(16384 * sqrt((double)g) / 1024) * 1024;
            project_one(a, in, g, n, "weak");
        } else {
            for (int i = 0; i < 4; i++)
                project_one(a, in, g, strong[i], "strong");
        }
    }
    return 0;
}

int main(int argc, char **argv)
{
    args a;
    if (argc < 2 || parse(argc, argv, &a) ||
        (strcmp(argv[1], "predict") && strcmp(argv[1], "project")) ||
        (!strcmp(argv[1], "predict") && a.M < 1)) {
        fprintf(stderr, "usage: see the head of tests/tools/dd_model.c\n");
        return 2;
    }
    return !strcmp(argv[1], "predict") ? predict(&a) : project(&a);
}
