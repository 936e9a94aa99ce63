/* test_model.c — the performance model (src/model) on hand-computed cases:
 * broadcast formulas, rate interpolation (exact points, the log-space
 * midpoint, saturation, the small-shape slope), the pipeline (compute-bound
 * and comm-bound 1x2 grids, the narrow first panel, the steady-state jump
 * against a plain recursion), nodes spanned by rows and columns, the memory
 * figure equal to summa_work_bytes for every rank of many grids, the
 * compiled-in tables, and the auto-tuner on the H200 NVLink table: today's
 * defaults or something predicted at least 10% faster.  The complex types:
 * four times the flops of one element multiply-add (8 against 2), twice
 * the bytes, the component type's table where there is none of their own,
 * c128/c64 rows parsed. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "dd_check.h"
#include "engine.h"
#include "grid.h"
#include "model.h"
#include "summa.h"

#define NEAR(a, b, rel) (fabs((a) - (b)) <= (rel) * fabs(b) + 1e-15)

static void test_bcast(void)
{
    dd_link ring = {"r", 10e-6, 1e9, DD_BCAST_RING}, tree = {"t", 10e-6, 1e9, DD_BCAST_TREE};
    CHECK(model_bcast(&ring, 1, 1e6) == 0, "one rank moves nothing");
    CHECK(NEAR(model_bcast(&ring, 2, 1e6), 1.01e-3, 1e-12), "ring p=2");
    CHECK(NEAR(model_bcast(&ring, 4, 1e6), 1.03e-3, 1e-12), "ring p=4: 3 steps of latency");
    CHECK(NEAR(model_bcast(&tree, 4, 1e6), 2.02e-3, 1e-12), "tree p=4: 2 rounds");
    CHECK(NEAR(model_bcast(&tree, 3, 1e6), 2.02e-3, 1e-12), "tree p=3: 2 rounds");
    CHECK(NEAR(model_bcast(&tree, 5, 1e6), 3.03e-3, 1e-12), "tree p=5: 3 rounds");
}

static const dd_rate_point two_pts[] = {{1024, 1024, 1024, 10}, {4096, 4096, 4096, 40}};
static const dd_rate_table two = {"X", "k", DD_F64, 0, two_pts, 2};
static const dd_rate_point one_pt[] = {{1000, 1000, 1000, 1}}; /* 1 GFLOP/s everywhere */
static const dd_rate_table flat = {"X", "k", DD_F64, 0, one_pt, 1};

static void test_rate(void)
{
    CHECK(NEAR(model_rate(&two, 1024, 1024, 1024), 10e9, 1e-12), "exact point");
    CHECK(NEAR(model_rate(&two, 4096, 4096, 4096), 40e9, 1e-12), "exact point");
    /* equidistant in log space: the geometric mean */
    CHECK(NEAR(model_rate(&two, 2048, 2048, 2048), 20e9, 1e-9), "midpoint %g",
          model_rate(&two, 2048, 2048, 2048));
    CHECK(NEAR(model_rate(&two, 65536, 8192, 1e6), 40e9, 1e-12), "saturates past the largest");
    /* 512^3 is 1/8 of the smallest volume; slope log(4)/log(64) = 1/3: 10 * 8^(-1/3) */
    CHECK(NEAR(model_rate(&two, 512, 512, 512), 5e9, 1e-9), "below the smallest: %g",
          model_rate(&two, 512, 512, 512));
    CHECK(NEAR(model_rate(&flat, 3, 70000, 9), 1e9, 1e-12), "one point: constant");
}

static dd_model_in base(int P, int Q, int64_t n, int64_t nb, int L, const dd_link *l)
{
    dd_model_in in = {P, Q, n, n, n, nb, L, DD_F64, &flat, 1, l, NULL, 0, 0, 0};
    return in;
}

static void test_pipeline(void)
{
    dd_err err = {{0}};
    dd_model_out o;
    /* one rank, 1000^3, nb 250: 4 panels of 2*1000*1000*250 flop at 1 GFLOP/s */
    dd_model_in in = base(1, 1, 1000, 250, 1, NULL);
    CHECK(model_predict(&in, &o, &err) == DD_OK, "%s", err.msg);
    CHECK(o.npanels == 4 && NEAR(o.multiply, 2.0, 1e-12) && o.exposed == 0, "1 rank: %g s",
          o.multiply);
    /* 1x2, n = 1024, nb 256: panels 128, 256, 128 | 256, 256 (narrow first, cut at
     * K/Q = 512); Mp 1024, Nq 512; g = 2*1024*512*w ns, c = 1024*8*w / beta */
    dd_link fast = {"f", 0, 1e9, DD_BCAST_RING};
    in = base(1, 2, 1024, 256, 1, &fast);
    CHECK(model_predict(&in, &o, &err) == DD_OK, "%s", err.msg);
    double sum_g = 1048576e-9 * 1024, c0 = 1024 * 8 * 128 / 1e9;
    CHECK(o.npanels == 5, "5 panels, got %lld", (long long)o.npanels);
    CHECK(NEAR(o.compute, sum_g, 1e-12), "compute %g", o.compute);
    CHECK(NEAR(o.exposed, c0, 1e-9) && NEAR(o.first_comm, c0, 1e-12),
          "compute-bound: only the first panel's broadcast shows, %g", o.exposed);
    /* comm twice the multiply: beta = 8192 / (2 * 1048576e-9); the multiply
     * is every broadcast plus the last panel's multiply */
    dd_link slow = {"s", 0, 8192 / (2 * 1048576e-9), DD_BCAST_RING};
    in.intra = &slow;
    CHECK(model_predict(&in, &o, &err) == DD_OK, "%s", err.msg);
    CHECK(NEAR(o.multiply, 2 * sum_g + 1048576e-9 * 256, 1e-9), "comm-bound: %g", o.multiply);
    CHECK(NEAR(o.comm, 2 * sum_g, 1e-9), "comm %g", o.comm);
    CHECK(NEAR(o.tflops, 2.0 * 1024 * 1024 * 1024 / o.multiply / 1e12, 1e-12), "tflops");
}

/* The recursion of model.h, panel by panel, for the jump's check. */
static double plain(const dd_model_in *in, const dd_link *l)
{
    double ge[4096], ce = 0, g_end = 0, Mp = (double)grid_block(in->M, in->P, 0).len;
    double Nq = (double)grid_block(in->N, in->Q, 0).len;
    dd_panel pn[4096];
    int64_t n = grid_panels(in->K, in->P, in->Q, in->nb, pn);
    for (int64_t t = 0; t < n; t++) {
        double w = (double)pn[t].w, g = 2 * Mp * Nq * w / model_rate(in->rate, Mp, Nq, w);
        double c = model_bcast(l, in->Q, Mp * w * 8) + model_bcast(l, in->P, w * Nq * 8);
        ce = fmax(ce, t >= in->L + 1 ? ge[t - in->L - 1] : 0) + c;
        g_end = fmax(g_end, ce) + g;
        ge[t] = g_end;
    }
    return g_end;
}

static void test_jump(void)
{
    dd_err err = {{0}};
    dd_model_out o;
    dd_link links[] = {{"a", 1e-5, 1e9, DD_BCAST_RING}, {"b", 1e-4, 2e6, DD_BCAST_TREE},
                       {"c", 0, 3.90625e6, DD_BCAST_RING}};
    int grids[][2] = {{1, 1}, {1, 2}, {2, 2}, {2, 3}, {3, 1}};
    for (int l = 0; l < 3; l++)
        for (int gi = 0; gi < 5; gi++)
            for (int L = 1; L <= 4; L++) {
                dd_model_in in = base(grids[gi][0], grids[gi][1], 3000, 16, L, &links[l]);
                in.K = 3000 * 7 + 5;
                CHECK(model_predict(&in, &o, &err) == DD_OK, "%s", err.msg);
                double ref = plain(&in, &links[l]);
                CHECK(NEAR(o.multiply, ref, 1e-9), "link %d grid %dx%d L %d: %.12g vs %.12g", l,
                      grids[gi][0], grids[gi][1], L, o.multiply, ref);
            }
    /* a K of 2^40 in 2^29 panels costs no time: 2^29 panels of 2*64*64*2048 flop */
    dd_model_in in = base(1, 1, 64, 2048, 1, NULL);
    in.K = (int64_t)1 << 40;
    CHECK(model_predict(&in, &o, &err) == DD_OK, "%s", err.msg);
    CHECK(NEAR(o.multiply, 2.0 * 64 * 64 * 1099511627776.0 / 1e9, 1e-9), "huge K: %g",
          o.multiply);
}

static void test_spans(void)
{
    /* 4x4 on nodes of 8: rows stay inside a node, columns span two */
    CHECK(!model_row_spans(4, 4, 8) && model_col_spans(4, 4, 8), "4x4 on 8 per node");
    CHECK(model_row_spans(2, 16, 8) && model_col_spans(2, 16, 8), "2x16 on 8 per node");
    CHECK(!model_row_spans(2, 16, 0) && !model_col_spans(2, 16, 0), "one node");
    CHECK(!model_row_spans(8, 1, 8) && !model_col_spans(8, 1, 8), "8x1 on one node of 8");
}

static void test_memory(void)
{
    dd_engine e;
    memset(&e, 0, sizeof e);
    e.ops = &dd_engine_cpu;
    int64_t sizes[][3] = {{1, 1, 1}, {37, 41, 43}, {1000, 999, 1001}, {16384, 16384, 16384},
                          {5, 3, 700}};
    int64_t nbs[] = {1, 7, 512, 2048, 100000};
    int checked = 0;
    for (int P = 1; P <= 4; P++)
        for (int Q = 1; Q <= 4; Q++)
            for (int si = 0; si < 5; si++)
                for (int ni = 0; ni < 5; ni++)
                    for (int L = 1; L <= 3; L += 2)
                        for (int r = 0; r < P * Q; r++) {
                            dd_summa s;
                            const int64_t *z = sizes[si];
                            summa_init(&s, &e, NULL, grid_make(P, Q, r), DD_F32, z[0], z[1], z[2],
                                       nbs[ni], L, 0);
                            size_t s1 = 0, s2 = 0;
                            int o1 = 0, o2 = 0;
                            size_t w1 = summa_work_bytes(&s, &s1, &o1);
                            size_t w2 = model_work_bytes(P, Q, r / Q, r % Q, z[0], z[1], z[2],
                                                         nbs[ni], L, DD_F32, &s2, &o2);
                            CHECK(w1 == w2 && s1 == s2 && o1 == o2,
                                  "memory %dx%d rank %d: %zu/%zu vs %zu/%zu", P, Q, r, w1, s1, w2,
                                  s2);
                            checked++;
                        }
    CHECK(checked > 1000, "memory cases %d", checked);
}

/* Sliced panels: a panel travels as N bytes an element, so with a link of
 * no latency the broadcasts take N/8 of FP64's; the memory they add
 * (model_slice_bytes) is within 5% of what summa_work_bytes counts with
 * the CPU backend's ozaki2-14 (its blobs: headers, scales, padding). */
static void test_slices(void)
{
    dd_err err = {{0}};
    dd_link fast = {"f", 0, 1e9, DD_BCAST_RING};
    dd_model_in in = base(2, 2, 4096, 512, 1, &fast);
    dd_model_out f, z;
    CHECK(model_predict(&in, &f, &err) == DD_OK, "%s", err.msg);
    in.slice_moduli = 14;
    CHECK(model_predict(&in, &z, &err) == DD_OK, "%s", err.msg);
    CHECK(NEAR(z.comm, 14.0 / 8 * f.comm, 1e-12), "sliced comm %g, FP64 %g", z.comm, f.comm);
    CHECK(NEAR(z.compute, f.compute, 1e-12), "sliced compute %g, FP64 %g", z.compute, f.compute);
    int ov = 0;
    CHECK(z.work_bytes == f.work_bytes + model_slice_bytes(2, 2, 0, 0, 4096, 4096, 4096, 512, 1,
                                                           DD_F64, 14, &ov),
          "sliced memory %zu, FP64 %zu", z.work_bytes, f.work_bytes);
    CHECK(model_slice_bytes(1, 1, 0, 0, 99, 99, 99, 64, 1, DD_F64, 14, &ov) == 0 &&
              model_slice_bytes(2, 2, 0, 0, 99, 99, 99, 64, 1, DD_F64, 0, &ov) == 0,
          "no slices on one rank or without moduli");
    dd_engine e;
    memset(&e, 0, sizeof e);
    dd_engine_cfg cfg = {MPI_COMM_NULL, MPI_COMM_NULL, DD_F64, "ozaki2-14", 1};
    CHECK(dd_engine_cpu.open(&e, &cfg, &err) == DD_OK, "%s", err.msg);
    e.ops = &dd_engine_cpu;
    const int grids[][2] = {{1, 2}, {2, 1}, {2, 2}, {2, 3}, {4, 1}};
    const int64_t nbs[] = {64, 128, 512};
    for (int gi = 0; gi < 5; gi++)
        for (int ni = 0; ni < 3; ni++) {
            int P = grids[gi][0], Q = grids[gi][1];
            dd_summa s;
            summa_init(&s, &e, NULL, grid_make(P, Q, 0), DD_F64, 1000, 999, 1001, nbs[ni], 1, 0);
            summa_use_slices(&s, MPI_COMM_NULL, 1);
            int o1 = 0, o2 = 0;
            size_t w1 = summa_work_bytes(&s, NULL, &o1);
            size_t w2 = model_work_bytes(P, Q, 0, 0, 1000, 999, 1001, nbs[ni], 1, DD_F64, NULL,
                                         &o2) +
                        model_slice_bytes(P, Q, 0, 0, 1000, 999, 1001, nbs[ni], 1, DD_F64, 14,
                                          &o2);
            CHECK(s.slices && !o1 && !o2 && fabs((double)w1 - (double)w2) <= 0.05 * (double)w1,
                  "sliced memory %dx%d panel %lld: summa %zu, model %zu", P, Q,
                  (long long)nbs[ni], w1, w2);
        }
    e.ops->close(&e);
}

static void test_tables(void)
{
    CHECK(dd_model_nrates >= 4 && dd_model_nlinks >= 5, "tables compiled in");
    CHECK(model_find_rate("NVIDIA H200", "dgemm_dmma", DD_F64, 0) != NULL, "H200 f64");
    CHECK(model_find_rate("NVIDIA H200", "sgemm_dmma", DD_F32, 0) != NULL, "H200 f32");
    CHECK(model_find_rate("NVIDIA H200", "sgemm_simt", DD_F32, 0) != NULL, "H200 f32 fallback");
    CHECK(model_find_rate("NVIDIA H200", "dgemm_dmma", DD_F32, 0) == NULL, "no f32 dgemm_dmma");
    const dd_rate_table *c1 = model_find_rate("CPU vm (1 BLAS thread)", "openblas", DD_F64, 1);
    const dd_rate_table *c2 = model_find_rate("CPU vm (2 BLAS threads)", "openblas", DD_F64, 2);
    const dd_rate_table *c8 = model_find_rate("CPU vm (8 BLAS threads)", "openblas", DD_F64, 8);
    CHECK(c1 && c1->threads == 1 && c2 && c2->threads == 2 && c8 && c8->threads == 2,
          "CPU tables by thread count");
    CHECK(model_find_link("nccl-nvlink") && model_find_link("nic-400g") &&
               model_find_link("mpi-shm") && !model_find_link("nope"),
          "links by name");
}

/* Auto on NVLink: the measured-good defaults, or a clear predicted win. */
static void test_tune(void)
{
    dd_err err = {{0}};
    const dd_link *nv = model_find_link("nccl-nvlink");
    struct {
        int ranks;
        int64_t n;
        dd_dtype t;
        const char *kernel;
    } cases[] = {{1, 16384, DD_F64, "dgemm_dmma"}, {2, 16384, DD_F64, "dgemm_dmma"},
                 {2, 32768, DD_F64, "dgemm_dmma"}, {1, 32768, DD_F64, "dgemm_dmma"},
                 {2, 16384, DD_F32, "sgemm_dmma"}, {4, 32768, DD_F64, "dgemm_dmma"},
                 {8, 65536, DD_F64, "dgemm_dmma"}};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        dd_model_in in = {1, 1, cases[i].n, cases[i].n, cases[i].n, 2048, 1, cases[i].t,
                          model_find_rate("NVIDIA H200", cases[i].kernel, cases[i].t, 0), 1, nv,
                          NULL, 0, 0, 0};
        dd_tune_in ti = {cases[i].ranks, 1, 1, 1, 0, 0, 2048, 1, (size_t)130 << 30, 0, 0};
        grid_default(cases[i].ranks, &ti.P0, &ti.Q0);
        dd_tune_out o;
        CHECK(model_tune(&in, &ti, &o, &err) == DD_OK, "%s", err.msg);
        int same = o.P == ti.P0 && o.Q == ti.Q0 && o.nb == 2048 && o.L == 1;
        printf("NVLink %d x H200 n=%lld %s: %dx%d panel %lld lookahead %d, %.2f ms (defaults "
               "%.2f ms, exposed %.2f%%)\n",
               cases[i].ranks, (long long)cases[i].n, dd_dtype_name(cases[i].t), o.P, o.Q,
               (long long)o.nb, o.L, o.pred.multiply * 1e3, o.pred0.multiply * 1e3,
               100 * o.pred0.exposed / o.pred0.multiply);
        CHECK(same || o.pred.multiply <= 0.9 * o.pred0.multiply, "case %zu: a worse choice", i);
        CHECK(o.pred.multiply <= o.pred0.multiply, "case %zu: slower than the defaults", i);
        CHECK(o.pred0.exposed <= 0.01 * o.pred0.multiply || cases[i].ranks > 2,
              "case %zu: NVLink hides the broadcasts (measured <= 1%%)", i);
    }
    /* nothing fits: the defaults stay (the plan refuses them with its message) */
    dd_model_in in = {1, 1, 16384, 16384, 16384, 2048, 1, DD_F64,
                      model_find_rate("NVIDIA H200", "dgemm_dmma", DD_F64, 0), 1, nv, NULL, 0, 0,
                      0};
    dd_tune_in ti = {2, 1, 1, 1, 1, 2, 2048, 1, 1000, 0, 0};
    dd_tune_out o;
    CHECK(model_tune(&in, &ti, &o, &err) == DD_OK && o.P == 1 && o.Q == 2 && o.nb == 2048 &&
               o.L == 1 && !o.fits0,
          "nothing fits");
}

/* Complex: the same shape as FP64 at the same real-flop rate takes 4x the
 * compute and 2x the broadcast bytes; rates found through the real table. */
static void test_complex(void)
{
    dd_err err = {{0}};
    dd_model_out r, z;
    dd_link fast = {"f", 0, 1e9, DD_BCAST_RING};
    dd_model_in in = base(1, 2, 1024, 256, 1, &fast);
    CHECK(model_predict(&in, &r, &err) == DD_OK, "%s", err.msg);
    in.type = DD_C128;
    CHECK(model_predict(&in, &z, &err) == DD_OK, "%s", err.msg);
    CHECK(NEAR(z.compute, 4 * r.compute, 1e-12), "complex compute %g, real %g", z.compute,
          r.compute);
    CHECK(NEAR(z.comm, 2 * r.comm, 1e-12), "complex comm %g, real %g", z.comm, r.comm);
    CHECK(NEAR(z.tflops, 8.0 * 1024 * 1024 * 1024 / z.multiply / 1e12, 1e-12), "complex tflops");
    CHECK(z.work_bytes == 2 * r.work_bytes, "complex memory %zu, real %zu", z.work_bytes,
          r.work_bytes);
    in.type = DD_C64;
    dd_model_out c;
    CHECK(model_predict(&in, &c, &err) == DD_OK && NEAR(c.compute, 4 * r.compute, 1e-12) &&
              NEAR(c.comm, r.comm, 1e-12),
          "c64: compute %g, comm %g", c.compute, c.comm);
    const dd_rate_table *f = model_find_rate("CPU vm (1 BLAS thread)", "openblas", DD_F64, 1);
    CHECK(f && model_find_rate("CPU vm (1 BLAS thread)", "openblas", DD_C128, 1) == f,
          "c128 without a table of its own takes f64's");
    CHECK(!model_find_rate_of("CPU vm (1 BLAS thread)", "openblas", DD_C128, 1),
          "no c128 table compiled in");
    dd_rate_row row;
    char why[128];
    CHECK(model_parse_rate("X,k,c128,1,64,64,64,3.5", &row, why, sizeof why) == 1 &&
              row.type == DD_C128,
          "a c128 row: %s", why);
    CHECK(model_parse_rate("X,k,c64,1,64,64,64,3.5", &row, why, sizeof why) == 1 &&
              row.type == DD_C64,
          "a c64 row: %s", why);
    CHECK(model_parse_rate("X,k,z,1,64,64,64,3.5", &row, why, sizeof why) == -1, "z refused");
}

int main(void)
{
    test_complex();
    test_bcast();
    test_rate();
    test_pipeline();
    test_jump();
    test_spans();
    test_memory();
    test_slices();
    test_tables();
    test_tune();
    if (g_fail)
        fprintf(stderr, "%d model check(s) failed\n", g_fail);
    else
        printf("model: all cases hold\n");
    return g_fail ? 1 : 0;
}
